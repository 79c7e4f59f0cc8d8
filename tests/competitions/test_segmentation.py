"""The RLE codec and the segmentation metrics against hand-computed numbers, and the quirks of the four
segmentation competitions (tgs, hubmap, contrails, vesuvius) that the registry-wide test cannot see: the
leak hubmap fixes, MLE-bench's empty-prediction IoU (tgs), blank and "-" cells, and the cost of grading
gigapixel masks."""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from grading_helpers import grade, prepare_synthetic

from mle_env.competition.registry import get_spec
from mle_env.grading import rle
from mle_env.grading.metrics import InvalidPrediction, iou_sweep_precision_rle, pixel_fbeta_rle, rle_dice
from mle_env.grading.rle import decode_rle, encode_rle
from mle_env.paths import CompetitionPaths

TGS, HUBMAP = "tgs-salt-identification-challenge", "hubmap-kidney-segmentation"
CONTRAILS, VESUVIUS = "google-research-identify-contrails-reduce-global-warming", "vesuvius-challenge-ink-detection"


# --- the codec ---------------------------------------------------------------------------------------
def test_decode_follows_the_pixel_order() -> None:
    # pixels 1-3 and 10-14 of a 4 x 4 image
    column_major = [[1, 0, 0, 1], [1, 0, 1, 1], [1, 0, 1, 0], [0, 0, 1, 0]]
    row_major = [[1, 1, 1, 0], [0, 0, 0, 0], [0, 1, 1, 1], [1, 1, 0, 0]]
    assert decode_rle("1 3 10 5", (4, 4)).astype(int).tolist() == column_major
    assert decode_rle("1 3 10 5", (4, 4), order="C").astype(int).tolist() == row_major
    assert decode_rle("2 2", (2, 3)).astype(int).tolist() == [[0, 1, 0], [1, 0, 0]]  # height 2, width 3
    assert decode_rle("2 2", (2, 3), "C").astype(int).tolist() == [[0, 1, 1], [0, 0, 0]]


@pytest.mark.parametrize("empty", ["", "-", "  ", " - ", None, float("nan")])
def test_empty_cells_decode_to_the_empty_mask(empty: object) -> None:
    mask = decode_rle(empty, (3, 5))  # type: ignore[arg-type]
    assert mask.shape == (3, 5) and mask.dtype == bool and not mask.any()


@pytest.mark.parametrize("order", ["F", "C"])
def test_encode_and_decode_are_inverse(order: str) -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        shape = tuple(int(v) for v in rng.integers(1, 12, 2))
        mask = rng.random(shape) < rng.random()
        text = encode_rle(mask, order)
        assert (decode_rle(text, shape, order) == mask).all()
    assert encode_rle(np.zeros((3, 3), bool)) == ""
    assert encode_rle(np.ones((2, 2), bool)) == "1 4"
    assert encode_rle(np.array([[1, 0], [1, 1]]), "F") == "1 2 4 1"
    assert encode_rle(np.array([[1, 0], [1, 1]]), "C") == "1 1 3 2"


@pytest.mark.parametrize(("text", "reason"), [
    ("1 2 3", "odd number of tokens (3)"),
    ("0 2", "must be positive, but pair 1 is '0 2'"),
    ("3 0", "must be positive, but pair 1 is '3 0'"),
    ("5 1 -2 1", "must be positive, but pair 2 is '-2 1'"),
    ("5 2 1 2", "must be sorted, but pair 2 starts at 1, before pair 1's 5"),
    ("1 5 3 2", "must not overlap, but pair 2 (start 3) begins inside pair 1, which covers pixels 1-5"),
    ("1 2 1 2", "must not overlap"),
    ("15 2", "ends at pixel 16, past the image's last pixel 15"),
    ("16 1", "past the image's last pixel 15"),
    ("1 99999999999999999999", "whole numbers only"),
    ("1.0 2", "whole numbers only, not '1.0'"),
    ("1 x", "whole numbers only, not 'x'"),
])
def test_malformed_masks_raise_one_clear_line(text: str, reason: str) -> None:
    with pytest.raises(InvalidPrediction, match=None) as info:
        decode_rle(text, (3, 5))
    assert reason in str(info.value) and "\n" not in str(info.value)


def test_touching_runs_are_fine() -> None:
    assert decode_rle("1 2 3 2", (2, 2)).all()


def test_a_column_is_parsed_at_once_and_names_the_bad_row() -> None:
    table = rle.parse_column(["1 2 3 2", "", "-", "5 4"], 16)
    assert table.areas().tolist() == [4, 0, 0, 4]
    other = rle.parse_column(["2 2", "1 16", "", "1 6"], 16)
    assert rle.intersections(table, other).tolist() == [2, 0, 0, 2]
    with pytest.raises(InvalidPrediction, match=r"^image 2: RLE starts must be sorted"):
        rle.parse_column(["1 2", "3 1 1 1"], 16, where=lambda i: f"image {i + 1}")
    with pytest.raises(InvalidPrediction, match=r"^row 1: an RLE mask must be text"):
        rle.parse_column([7], 16)


def test_overlaps_on_runs_equal_those_of_dense_masks() -> None:
    rng = np.random.default_rng(1)
    for _ in range(100):
        shape = tuple(int(v) for v in rng.integers(1, 15, 2))
        a, b = rng.random(shape) < 0.4, rng.random(shape) < 0.6
        n = shape[0] * shape[1]
        assert rle.intersection(rle.parse_runs(encode_rle(a), n), rle.parse_runs(encode_rle(b), n)) == (a & b).sum()


# --- the metrics, by hand ----------------------------------------------------------------------------
def frame(**columns: list) -> pd.DataFrame:
    return pd.DataFrame(columns)


def test_rle_dice_per_image_and_global() -> None:
    truth = np.array(["1 4", "", "", "3 2"], dtype=object)
    pred = np.array(["2 4", "", "1 1", "-"], dtype=object)
    # image 1: |X|=4 |Y|=4 shared 3 -> 0.75; image 2: both empty -> 1; image 3: 0; image 4: 0
    assert rle_dice(truth, pred, shape=[2, 5]) == pytest.approx((0.75 + 1 + 0 + 0) / 4)
    # pooled: 2 * 3 / (6 + 5)
    assert rle_dice(truth, pred, mode="global", both_empty=math.nan, shape=[2, 5]) == pytest.approx(6 / 11)
    assert math.isnan(rle_dice(np.array(["", "-"]), np.array(["", ""]), mode="global", both_empty=math.nan,
                               shape=[2, 2]))
    sizes = frame(encoding=["1 4"], h=["2"], w=["3"])
    assert rle_dice(np.array(["1 4"]), np.array(["1 6"]), answers=sizes, shape_columns=["h", "w"]) == 0.8
    with pytest.raises(InvalidPrediction, match="past the image's last pixel 6"):
        rle_dice(np.array(["1 4"]), np.array(["1 7"]), answers=sizes, shape_columns=["h", "w"])


def test_iou_sweep_precision_by_hand() -> None:
    thresholds = [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95]
    # IoU 3/4 exceeds 0.5 ... 0.7: 5 of 10 thresholds; truth empty and prediction not: 0; both empty: 1
    truth, pred = np.array(["1 4", "", ""], dtype=object), np.array(["1 3", "2 1", ""], dtype=object)
    assert iou_sweep_precision_rle(truth, pred, thresholds=thresholds, shape=[2, 5]) == pytest.approx(1.5 / 3)
    # an empty prediction of a mask covering 6 of 10 pixels: IoU 0 (Kaggle), or 0.6 (MLE-bench: 2 of 10)
    assert iou_sweep_precision_rle(np.array(["1 6"]), np.array([""]), shape=[2, 5]) == 0.0
    assert iou_sweep_precision_rle(np.array(["1 6"]), np.array([""]), shape=[2, 5],
                                   empty_prediction_iou="truth_fraction") == pytest.approx(0.2)
    assert iou_sweep_precision_rle(np.array(["1 10"]), np.array([""]), shape=[2, 5],
                                   empty_prediction_iou="truth_fraction") == 1.0
    # IoU exactly 0.75 does not pass the threshold 0.75 (strictly greater)
    assert iou_sweep_precision_rle(np.array(["1 4"]), np.array(["1 3"]), shape=[2, 5]) == 0.5


def test_pixel_fbeta_by_hand() -> None:
    # truth pixels 1-4, prediction 3-5: TP 2, FP 1, FN 2 -> P 2/3, R 1/2, F0.5 = 1.25 P R / (0.25 P + R) = 0.625
    assert pixel_fbeta_rle(np.array(["1 4"]), np.array(["3 3"]), shape=[3, 3]) == pytest.approx(0.625)
    assert pixel_fbeta_rle(np.array(["1 4"]), np.array(["3 3"]), beta=1.0, shape=[3, 3]) == pytest.approx(4 / 7)
    assert pixel_fbeta_rle(np.array([""]), np.array([""]), shape=[3, 3]) == 0.0  # scikit-learn's 0
    assert pixel_fbeta_rle(np.array(["1 4"]), np.array([""]), shape=[3, 3]) == 0.0
    # row-major and column-major agree on overlaps: the order only sets which pixel a number is
    assert pixel_fbeta_rle(np.array(["2 3"]), np.array(["2 3"]), order="F", shape=[3, 3]) == 1.0


def test_gigapixel_masks_are_graded_from_their_runs(tmp_path: Path) -> None:
    """Hubmap's images hold about 1e9 pixels: 5e9 here would take gigabytes as dense masks; the runs take
    a fraction of a second, a few times what reading the answers and the submission from CSV costs."""
    rng = np.random.default_rng(2)
    n_runs, shape = 200_000, (50_000, 100_000)
    starts = np.sort(rng.choice(5 * 10**9 // 1000, n_runs, replace=False)) * 1000 + 1
    truth = " ".join(f"{s} {n}" for s, n in zip(starts, rng.integers(1, 900, n_runs), strict=True))
    pred = " ".join(f"{s + 50} {n}" for s, n in zip(starts, rng.integers(1, 900, n_runs), strict=True))
    truths, preds = np.array([truth, truth], dtype=object), np.array([pred, truth], dtype=object)
    pd.DataFrame({"id": ["a", "b"], "encoding": truths}).to_csv(tmp_path / "answers.csv", index=False)
    pd.DataFrame({"id": ["a", "b"], "predicted": preds}).to_csv(tmp_path / "submission.csv", index=False)
    began = time.perf_counter()
    for name in ("answers.csv", "submission.csv"):
        pd.read_csv(tmp_path / name, dtype=str)
    reading = time.perf_counter() - began
    began = time.perf_counter()
    score = rle_dice(truths, preds, shape=list(shape))
    grading = time.perf_counter() - began
    assert 0.5 < score < 1 and grading < max(6 * reading, 0.5)


# --- the competitions ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home, raws = tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("raw")
    return prepare_synthetic((TGS, HUBMAP, CONTRAILS, VESUVIUS), home, raws)


def answers_of(home: Path, cid: str) -> pd.DataFrame:
    return pd.read_csv(CompetitionPaths(cid, home).private / get_spec(cid).submission.answers, dtype=str,
                       keep_default_na=False)



def test_hubmap_test_polygons_are_not_published(home: Path) -> None:
    public, ids = CompetitionPaths(HUBMAP, home).public, list(answers_of(home, HUBMAP)["id"])
    assert sorted(p.name for p in (public / "test").iterdir()) == sorted(
        [f"{i}.tiff" for i in ids] + [f"{i}-anatomical-structure.json" for i in ids] + ["sample_submission.csv"])
    train_ids = pd.read_csv(public / "train.csv")["id"]
    assert len(train_ids) == 12 and all((public / "train" / f"{i}.json").is_file() for i in train_ids)
    issue = next(i for i in get_spec(HUBMAP).known_issues if i.kind == "label-leak")
    assert issue.fixed and "<id>.json" in issue.summary


def test_tgs_empty_predictions_score_as_mlebench_does(home: Path, tmp_path: Path) -> None:
    truth = answers_of(home, TGS)
    areas = np.array([decode_rle(t, (101, 101)).sum() for t in truth["rle_mask"]]) / 101**2
    thresholds = np.arange(0.5, 1.0, 0.05)
    expected = np.mean([1.0 if a == 0 else float(np.mean(a > thresholds)) for a in areas])
    assert (areas > 0.5).any()  # the quirk matters: some image is mostly salt
    report = grade(home, TGS, truth.assign(rle_mask=""), tmp_path)
    assert report.score == pytest.approx(round(expected, 5)) and report.score > (areas == 0).mean()


def test_contrails_blank_cells_are_empty_masks(home: Path, tmp_path: Path) -> None:
    truth = answers_of(home, CONTRAILS)[["record_id", "encoded_pixels"]]
    dashes = truth.assign(encoded_pixels=["-" if i % 2 else t for i, t in enumerate(truth["encoded_pixels"])])
    blanks = dashes.assign(encoded_pixels=dashes["encoded_pixels"].replace("-", ""))
    scored = [grade(home, CONTRAILS, f, tmp_path) for f in (dashes, blanks)]
    assert scored[0].status == scored[1].status == "scored" and scored[0].score == scored[1].score < 1


def test_vesuvius_empty_prediction_scores_zero_and_runs_are_row_major(home: Path, tmp_path: Path) -> None:
    truth = answers_of(home, VESUVIUS)
    assert grade(home, VESUVIUS, truth[["Id"]].assign(Predicted=""), tmp_path).score == 0.0
    height, width = int(truth["height"][0]), int(truth["width"][0])
    mask = decode_rle(truth["Predicted"][0], (height, width), order="C")
    transposed = encode_rle(mask, order="F")  # the same pixels numbered down the columns: wrong here
    assert grade(home, VESUVIUS, truth[["Id"]].assign(Predicted=encode_rle(mask, "C")), tmp_path).score == 1.0
    assert grade(home, VESUVIUS, truth[["Id"]].assign(Predicted=transposed), tmp_path).score < 1.0


def test_malformed_rle_is_invalid_with_the_row_named(home: Path, tmp_path: Path) -> None:
    truth = answers_of(home, HUBMAP)
    bad = pd.DataFrame({"id": truth["id"], "predicted": truth["encoding"]})
    bad.loc[1, "predicted"] = "7 2 3 2"
    report = grade(home, HUBMAP, bad, tmp_path)
    assert report.status == "invalid"
    assert f"the mask for id '{truth['id'][1]}': RLE starts must be sorted" in report.invalid_reason


def test_malformed_answers_are_the_grader_s_fault_not_the_submission_s() -> None:
    with pytest.raises(ValueError, match="the answers hold a malformed RLE mask") as info:
        rle_dice(np.array(["3 1 1 1"]), np.array(["1 1"]), shape=[2, 2])
    assert not isinstance(info.value, InvalidPrediction)
