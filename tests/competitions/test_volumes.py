"""What the registry-wide test cannot see for icecube-neutrinos-in-deep-ice and uw-madison-gi-tract-image-segmentation:
their new metrics against hand-computed values (mean_angular_error, dice_hausdorff_3d), icecube's streamed
preparation (the same files whatever the chunk size) and the known issues each records."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from reference_metrics_volumes import dice_hausdorff_3d as reference_dice_hausdorff

from mle_env.competition.registry import get_spec
from mle_env.competition.synthetic import folder_module, load_synthetic
from mle_env.grading.metrics import InvalidPrediction, dice_hausdorff_3d, get_metric, mean_angular_error
from mle_env.grading.metrics import regression as regression_metrics
from mle_env.grading.metrics import volumes as volume_metrics
from mle_env.grading.metrics.volumes import hausdorff_3d
from mle_env.grading.rle import encode_rle
from mle_env.paths import CompetitionPaths
from mle_env.prepare.runner import prepare

ICECUBE = "icecube-neutrinos-in-deep-ice"
ANGLES = ["azimuth", "zenith"]


# --- mean_angular_error ------------------------------------------------------------------------------
def angular(truth: list[tuple[float, float]], pred: list[tuple[float, float]], classes: list[str] = ANGLES) -> float:
    return mean_angular_error(np.array(truth, float), np.array(pred, float), classes=classes)


def test_mean_angular_error_hand_computed() -> None:
    assert get_metric("mean_angular_error").lower_is_better
    assert angular([(1.0, 2.0)], [(1.0, 2.0)]) == pytest.approx(0.0, abs=1e-7)
    assert angular([(0.0, math.pi / 2)], [(math.pi / 2, math.pi / 2)]) == pytest.approx(math.pi / 2)  # x vs y
    assert angular([(0.3, 0.0)], [(2.9, 0.0)]) == pytest.approx(0.0, abs=1e-7)  # the pole: azimuth is moot
    assert angular([(0.3, 1.1)], [(0.3 + math.pi, math.pi - 1.1)]) == pytest.approx(math.pi)  # antipodal
    # 0 and pi/2 away: the mean of the two
    assert angular([(0.0, 0.0), (0.0, 0.0)], [(0.0, 0.0), (0.0, math.pi / 2)]) == pytest.approx(math.pi / 4)
    # angles outside [0, 2pi] and [0, pi] are directions all the same (MLE-bench takes any finite number)
    assert angular([(0.5, 1.0)], [(0.5 + 4 * math.pi, 1.0 - 2 * math.pi)]) == pytest.approx(0.0, abs=1e-7)


def test_mean_angular_error_picks_columns_by_name_and_never_returns_nan() -> None:
    truth, pred = [(0.0, math.pi / 2)], [(math.pi / 2, math.pi / 2)]
    swapped = [(z, a) for a, z in truth], [(z, a) for a, z in pred]
    assert angular(*swapped, classes=["zenith", "azimuth"]) == pytest.approx(math.pi / 2)
    # many equal directions: rounding may push the dot product past 1, which the clip absorbs
    rng = np.random.default_rng(0)
    same = rng.uniform(0, 3, (1000, 2))
    assert 0.0 <= mean_angular_error(same, same.copy(), classes=ANGLES) < 1e-7


def test_mean_angular_error_in_slices_equals_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    truth, pred = rng.uniform(0, 3, (101, 2)), rng.uniform(0, 3, (101, 2))
    whole = mean_angular_error(truth, pred, classes=ANGLES)
    monkeypatch.setattr(regression_metrics, "_ANGLE_CHUNK_ROWS", 7)
    assert mean_angular_error(truth, pred, classes=ANGLES) == pytest.approx(whole, rel=1e-12)


# --- icecube: the streamed preparation ---------------------------------------------------------------
def _prepared_files(home: Path) -> dict[str, bytes]:
    root = CompetitionPaths(ICECUBE, home).public.parent
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name not in ("manifest.json", "description.md")}


def test_icecube_prepare_streams_chunks_to_the_same_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    load_synthetic(ICECUBE).generate(raw)
    prepare(ICECUBE, raw_dir=raw, home=tmp_path / "one", verify=False)
    module = folder_module(ICECUBE, "prepare.py")
    assert module is not None
    monkeypatch.setattr(module, "CHUNK_ROWS", 5)  # many record batches, batches cut across them
    small = _prepared_files(_prepare_with(module, raw, tmp_path / "small"))
    one = _prepared_files(tmp_path / "one")
    assert set(small) == set(one)
    for name in ("private/test.csv", "public/sample_submission.csv"):
        assert small[name] == one[name], name
    public_small = CompetitionPaths(ICECUBE, tmp_path / "small").public
    public_one = CompetitionPaths(ICECUBE, tmp_path / "one").public
    for name in ("train_meta.parquet", "test_meta.parquet"):
        assert pd.read_parquet(public_small / name).equals(pd.read_parquet(public_one / name)), name


def _prepare_with(module: object, raw: Path, home: Path) -> Path:
    """Run the folder's prepare(ctx) directly (with its patched chunk size) into ``home``'s prepared layout."""
    from mle_env.prepare.helpers import PrepareContext

    paths = CompetitionPaths(ICECUBE, home)
    public, private, scratch = paths.public, paths.private, home / "scratch"
    for folder in (public, private, scratch):
        folder.mkdir(parents=True)
    module.prepare(PrepareContext(get_spec(ICECUBE), raw, public, private, scratch, {}, raw_owned=False))
    scratch.rmdir()
    return home


def test_icecube_test_set_is_whole_batches_without_angles(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    load_synthetic(ICECUBE).generate(raw)
    prepare(ICECUBE, raw_dir=raw, home=tmp_path, verify=False)
    public, private = CompetitionPaths(ICECUBE, tmp_path).public, CompetitionPaths(ICECUBE, tmp_path).private
    train, test = pd.read_parquet(public / "train_meta.parquet"), pd.read_parquet(public / "test_meta.parquet")
    assert list(test.columns) == ["batch_id", "event_id", "first_pulse_index", "last_pulse_index"]
    assert not set(train["batch_id"]) & set(test["batch_id"])
    assert {f"batch_{b}.parquet" for b in test["batch_id"]} == {p.name for p in (public / "test").iterdir()}
    assert {f"batch_{b}.parquet" for b in train["batch_id"]} == {p.name for p in (public / "train").iterdir()}
    answers = pd.read_csv(private / "test.csv")
    assert list(answers.columns) == ["event_id", *ANGLES] and list(answers["event_id"]) == list(test["event_id"])
    sample = pd.read_csv(public / "sample_submission.csv")
    assert (sample[ANGLES] == 1).all().all() and list(sample["event_id"]) == list(test["event_id"])


def test_icecube_records_the_checksum_issue() -> None:
    issues = get_spec(ICECUBE).known_issues
    checksum = [i for i in issues if "#58" in (i.reference or "")]
    assert len(checksum) == 1 and checksum[0].fixed and "fastparquet" in checksum[0].summary
    assert not get_spec(ICECUBE).expected_checksums  # no byte checksums of the parquet tables are pinned
    assert [r.module for r in get_spec(ICECUBE).requires] == ["pyarrow"]


# --- dice_hausdorff_3d -------------------------------------------------------------------------------
UW = "uw-madison-gi-tract-image-segmentation"


def dice_hausdorff(rows: list[tuple[str, str, str]], size: tuple[int, int] = (2, 2)) -> float:
    """rows: (id, true RLE, predicted RLE), every image ``size`` = (height, width)."""
    answers = pd.DataFrame({"id": [r[0] for r in rows], "image_height": size[0], "image_width": size[1]})
    truth, predicted = np.array([r[1] for r in rows], object), np.array([r[2] for r in rows], object)
    return dice_hausdorff_3d(truth, predicted, answers=answers)


def test_dice_hausdorff_hand_computed() -> None:
    assert not get_metric("dice_hausdorff_3d").lower_is_better
    # slice 1: the same pixel (Dice 1); slice 2: one predicted pixel (1, 1) where the truth is empty (Dice 0);
    # Hausdorff: voxel (1, 1, 1) is sqrt(3 * (1/2)^2) = sqrt(3)/2 from (0, 0, 0), over sqrt(3): 1/2
    rows = [("c1_day1_slice_0001", "1 1", "1 1"), ("c1_day1_slice_0002", "", "4 1")]
    assert dice_hausdorff(rows) == pytest.approx(0.4 * 0.5 + 0.6 * (1 - 0.5))
    # a volume empty in both masks is left out of both means
    assert dice_hausdorff([*rows, ("c2_day1_slice_0001", "", "")]) == pytest.approx(0.5)
    # equal volumes: Hausdorff 0 even if the rows of a slice split the mask differently (classes are united)
    split = [("c1_day1_slice_0001", "1 2", "1 1"), ("c1_day1_slice_0001", "", "2 1")]
    assert dice_hausdorff(split) == pytest.approx(0.4 * np.mean([2 / 3, 0.0]) + 0.6)
    # only one volume empty: Hausdorff 1
    assert dice_hausdorff([("c1_day1_slice_0001", "1 1", "")]) == pytest.approx(0.0)


def test_dice_hausdorff_caps_a_prediction_ten_times_too_large() -> None:
    truth = np.zeros((1, 4, 4), bool)
    truth[0, 0, 0] = True
    ten, eleven = truth.copy(), truth.copy()
    ten.flat[:10] = True
    eleven.flat[:11] = True
    assert hausdorff_3d(eleven, truth) == 1.0  # 11 > 10 x 1: the worst distance, not computed
    assert 0 < hausdorff_3d(ten, truth) < 1.0
    assert math.isnan(hausdorff_3d(np.zeros_like(truth), np.zeros_like(truth)))
    assert hausdorff_3d(truth, truth.copy()) == 0.0


#: (_POINTS_PER_VOXEL, _WINDOW_VOXELS, _WINDOW_READS_PER_POINT) that force each way of measuring distances
HAUSDORFF_PATHS = {"window, then k-d tree": (0, 4, 10**9), "k-d tree": (0, 0, 0),
                   "window cut short": (0, 4, 1), "distance transform": (10**9, 4, 4)}


@pytest.mark.parametrize("path", list(HAUSDORFF_PATHS))
def test_hausdorff_equals_scipy_directed_hausdorff(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The nearby look, the surface k-d tree and the distance transform give scipy's exact pairwise directed
    Hausdorff."""
    from scipy.spatial.distance import directed_hausdorff

    for name, value in zip(["_POINTS_PER_VOXEL", "_WINDOW_VOXELS", "_WINDOW_READS_PER_POINT"],
                           HAUSDORFF_PATHS[path], strict=True):
        monkeypatch.setattr(volume_metrics, name, value)
    rng = np.random.default_rng(7)
    for shape in [(3, 9, 7), (6, 5, 11), (1, 12, 12), (8, 8, 8)]:
        for density in (0.05, 0.3):
            truth = rng.random(shape) < density
            predicted = (rng.random(shape) < density) | np.roll(truth, 1, axis=int(rng.integers(3)))
            if not truth.any() or predicted.sum() > 10 * truth.sum():
                continue
            a, b = np.argwhere(truth) / np.array(shape), np.argwhere(predicted) / np.array(shape)
            expected = max(directed_hausdorff(a, b)[0], directed_hausdorff(b, a)[0]) / math.sqrt(3)
            assert hausdorff_3d(predicted, truth) == pytest.approx(expected, abs=1e-12), (shape, density)


def test_surface_is_the_erosion_border() -> None:
    from scipy.ndimage import binary_erosion, generate_binary_structure

    rng = np.random.default_rng(3)
    for shape in [(1, 1, 1), (1, 5, 4), (4, 6, 5), (7, 3, 9)]:
        target = rng.random(shape) < 0.6
        eroded = binary_erosion(target, generate_binary_structure(3, 1), border_value=1)
        assert np.array_equal(volume_metrics._surface(target), np.flatnonzero(target & ~eroded)), shape


def test_farthest_finds_the_largest_nearest_distance() -> None:
    """Pruning by approximate queries keeps the point whose nearest neighbour is farthest, whatever the slack."""
    from scipy.spatial import cKDTree

    rng = np.random.default_rng(5)
    for n_tree, n_points in [(1, 5), (50, 200), (2000, 3000)]:
        tree = cKDTree(rng.random((n_tree, 3)) ** 2)
        points = rng.random((n_points, 3))
        exact = tree.query(points)[0].max()
        for eps in (0.5, 1.0, 3.0):
            for top in (1, 32):
                assert volume_metrics._farthest(tree, points, eps, top).max() == exact, (n_tree, eps, top)


def test_union_is_the_maximal_runs_of_the_drawn_voxels() -> None:
    """Overlapping and touching pieces (rows of one slice, runs wrapping columns) merge into one run."""
    rng = np.random.default_rng(9)
    for _ in range(200):
        depth, height, width = (int(n) for n in rng.integers(1, 5, 3))
        n = int(rng.integers(0, 12))
        layer, column = rng.integers(0, depth, n), rng.integers(0, width, n)
        top = rng.integers(0, height, n)
        bottom = top + 1 + (rng.integers(0, height, n) % (height - top))
        line = np.zeros(depth * width * height + 2, dtype=bool)  # pixel p at 1 + p, a False at each end
        for z, x, y0, y1 in zip(layer, column, top, bottom, strict=True):
            line[1 + (z * width + x) * height + y0:1 + (z * width + x) * height + y1] = True
        starts, ends = volume_metrics._union(np.stack([layer, column, top, bottom]), height, width)
        assert list(starts) == list(np.flatnonzero(line[1:] & ~line[:-1]))
        assert list(ends) == list(np.flatnonzero(line[:-1] & ~line[1:]))


def _random_rows(rng: np.random.Generator) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Answers (id, height, width) and true and predicted RLE columns for a few volumes of random sizes: one
    to three rows (classes, which may overlap) per slice, rows shuffled; predictions the truth itself, the
    truth split between the slice's rows, shifted, thinned, emptied or elsewhere."""
    rows = []
    for v in range(int(rng.integers(1, 5))):
        height, width, depth = (int(n) for n in rng.integers(1, 12, 3))
        for s in rng.choice(np.arange(1, 40), size=depth, replace=False):
            masks = [rng.random((height, width)) < rng.choice([0.0, 0.1, 0.5]) for _ in range(rng.integers(1, 4))]
            kind = int(rng.integers(6))
            for k, truth in enumerate(masks):
                if kind == 0:
                    predicted = truth
                elif kind == 1:  # the slice's union in the first row: the same volume, other runs
                    predicted = np.logical_or.reduce(masks) if k == 0 else np.zeros_like(truth)
                elif kind == 2:
                    predicted = np.roll(truth, int(rng.integers(-2, 3)), axis=int(rng.integers(2)))
                elif kind == 3:
                    predicted = truth & (rng.random(truth.shape) < 0.7)
                else:
                    predicted = rng.random(truth.shape) < (0.0 if kind == 4 else 0.05)
                rows.append((f"c{v}_day{v}_slice_{s:04d}", encode_rle(truth), encode_rle(predicted), height, width))
    rows = [rows[i] for i in rng.permutation(len(rows))]
    answers = pd.DataFrame({"id": [r[0] for r in rows], "image_height": [f"{r[3]}.0" for r in rows],
                            "image_width": [f"{r[4]}.0" for r in rows]})
    return answers, np.array([r[1] for r in rows], object), np.array([r[2] for r in rows], object)


@pytest.mark.parametrize("path", list(HAUSDORFF_PATHS))
def test_dice_hausdorff_equals_the_reference_on_random_volumes(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every shortcut (identical runs, the box, the nearby look, the pruned k-d tree queries) against the
    reference's dense volumes and all-pairs distances, and against drawing every volume."""
    for name, value in zip(["_POINTS_PER_VOXEL", "_WINDOW_VOXELS", "_WINDOW_READS_PER_POINT"],
                           HAUSDORFF_PATHS[path], strict=True):
        monkeypatch.setattr(volume_metrics, name, value)
    params = {"id_column": "id", "shape_columns": ("image_height", "image_width"), "slice_separator": "_slice_",
              "dice_weight": 0.4, "hausdorff_weight": 0.6, "size_ratio_cap": 10.0}
    rng = np.random.default_rng(11)
    for _ in range(40):
        answers, truth, predicted = _random_rows(rng)
        score = dice_hausdorff_3d(truth, predicted, answers=answers)
        expected = reference_dice_hausdorff(answers.assign(predicted=truth), pd.DataFrame({"predicted": predicted}),
                                            params)
        assert score == pytest.approx(expected, abs=1e-12, nan_ok=True)
        with monkeypatch.context() as m:
            m.setattr(volume_metrics, "_rows_differ", lambda a, b: np.ones(a.n_rows, dtype=bool))
            assert dice_hausdorff_3d(truth, predicted, answers=answers) == pytest.approx(score, abs=1e-15, nan_ok=True)


def test_dice_hausdorff_draws_runs_that_wrap_to_the_next_column() -> None:
    # 3 x 3 images, pixels numbered down the columns. Slice 1: true pixels 3-7 (row 2 of column 0, column 1,
    # row 0 of column 2); predicted: the same pixels, in two rows. Slice 2: one predicted pixel, (row 0,
    # column 0), sqrt((1/2)^2 + (1/3)^2) from the nearest true voxel (slice 1, row 0, column 1)
    rows = [("c1_slice_1", "3 5", "3 1 7 1"), ("c1_slice_1", "", "4 3"), ("c1_slice_2", "", "1 1")]
    distance = math.sqrt(1 / 4 + 1 / 9) / math.sqrt(3)
    assert dice_hausdorff(rows, size=(3, 3)) == pytest.approx(0.4 * (4 / 7) / 3 + 0.6 * (1 - distance), abs=1e-12)


def test_dice_hausdorff_rejects_malformed_rle_naming_the_row() -> None:
    rows = [("c1_day1_slice_0001", "1 1", "3 1 1 1")]  # starts out of order
    with pytest.raises(InvalidPrediction, match="c1_day1_slice_0001"):
        dice_hausdorff(rows)


# --- uw-madison: the split and the row matching ------------------------------------------------------
@pytest.fixture(scope="module")
def uw_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home, raw = tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("raw")
    load_synthetic(UW).generate(raw)
    prepare(UW, raw_dir=raw, home=home, verify=False)
    return home


def test_uw_late_days_of_training_cases_go_to_test(uw_home: Path) -> None:
    public, private = CompetitionPaths(UW, uw_home).public, CompetitionPaths(UW, uw_home).private
    answers = pd.read_csv(private / "test.csv", dtype=str, keep_default_na=False)
    train = pd.read_csv(public / "train.csv", dtype=str, keep_default_na=False)
    test_days = set(answers["id"].str.rsplit("_slice_", n=1).str[0])
    train_days = set(train["id"].str.rsplit("_slice_", n=1).str[0])
    # case30 (days 2, 3, 9, 10, 14) stays in train with its first four days by number; 14 is tested, not 9
    assert {"case30_day2", "case30_day3", "case30_day9", "case30_day10"} <= train_days
    assert "case30_day14" in test_days
    assert {f"{c}/{c}_{d}" for c, d in (s.split("_") for s in test_days)} == {
        str(p.relative_to(public / "test")) for p in (public / "test").glob("*/*")}
    assert {f"{c}/{c}_{d}" for c, d in (s.split("_") for s in train_days)} == {
        str(p.relative_to(public / "train")) for p in (public / "train").glob("*/*")}
    assert list(answers.columns) == ["id", "class", "predicted", "image_width", "image_height"]
    assert answers["image_width"].str.endswith(".0").all()  # floats, as MLE-bench writes them


def test_uw_rows_are_matched_by_id_and_class_in_any_order(uw_home: Path, tmp_path: Path) -> None:
    """MLE-bench pairs rows by position (a recorded quirk); here any order scores as the answers' order."""
    from mle_env.grading.grader import Grader

    answers = pd.read_csv(CompetitionPaths(UW, uw_home).private / "test.csv", dtype=str, keep_default_na=False)
    noisy = load_synthetic(UW).noisy_submission(answers, np.random.default_rng(0))
    grader = Grader(get_spec(UW), uw_home)
    noisy.to_csv(tmp_path / "in_order.csv", index=False)
    noisy.iloc[::-1].to_csv(tmp_path / "reversed.csv", index=False)
    in_order, reversed_ = grader.grade(tmp_path / "in_order.csv"), grader.grade(tmp_path / "reversed.csv")
    assert in_order.status == "scored" and 0 < in_order.score < 1
    assert reversed_.score == in_order.score
    assert any("by position" in i.summary and i.fixed for i in get_spec(UW).known_issues)
    bad = noisy.assign(predicted=["5 1 2 1"] + list(noisy["predicted"].iloc[1:]))  # starts out of order
    bad.to_csv(tmp_path / "bad.csv", index=False)
    report = grader.grade(tmp_path / "bad.csv")
    assert report.status == "invalid" and answers["id"].iloc[0] in report.invalid_reason
