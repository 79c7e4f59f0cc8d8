"""The medical group's competitions (seti-breakthrough-listen, rsna-miccai, rsna-breast-cancer-detection,
rsna-2022-cervical-spine-fracture-detection): their two new metrics against hand-computed numbers, and the
quirks and layouts the registry-wide test cannot see (ids matched as numbers, pF1's clipping, the inverted
10/90 split, one row per breast)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from grading_helpers import grade, prepare_synthetic

from mle_env.competition.registry import get_spec
from mle_env.grading.metrics import get_metric, probabilistic_fbeta, weighted_multilabel_log_loss
from mle_env.paths import CompetitionPaths

SETI, MICCAI = "seti-breakthrough-listen", "rsna-miccai-brain-tumor-radiogenomic-classification"
BREAST, SPINE = "rsna-breast-cancer-detection", "rsna-2022-cervical-spine-fracture-detection"
WEIGHTS = {"negative_weights": {"patient_overall": 7, "C1": 1}, "positive_weights": {"patient_overall": 14, "C1": 2}}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache with the four competitions prepared from their synthetic raw data."""
    home, raws = tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("raw")
    return prepare_synthetic((SETI, MICCAI, BREAST, SPINE), home, raws)



def answers(home: Path, cid: str) -> pd.DataFrame:
    return pd.read_csv(CompetitionPaths(cid, home).private / get_spec(cid).submission.answers, dtype=str)


# --- probabilistic F-beta ----------------------------------------------------------------------------
def test_pfbeta_by_hand() -> None:
    # clipped predictions 0.8, 0.4, 0.2, 1.0: cTP = 1.0, cFP = 1.4, precision 5/12, recall 1/2
    truth, predicted = np.array([1, 0, 1, 0]), np.array([0.8, 0.4, 0.2, 1.5])
    assert probabilistic_fbeta(truth, predicted) == pytest.approx(5 / 11)
    assert probabilistic_fbeta(truth, predicted, beta=2.0) == pytest.approx(25 / 52)  # 5PR / (4P + R)
    assert probabilistic_fbeta(np.array([1, 0]), np.array([1.0, 0.0])) == 1.0
    assert get_metric("probabilistic_fbeta").lower_is_better is False


def test_pfbeta_is_zero_where_undefined() -> None:
    assert probabilistic_fbeta(np.array([1, 0, 1]), np.zeros(3)) == 0.0  # every prediction 0: 0 / 0
    assert probabilistic_fbeta(np.array([1, 0, 1]), np.full(3, -0.5)) == 0.0  # clipped to 0 as well
    assert probabilistic_fbeta(np.array([0, 0]), np.array([0.3, 0.6])) == 0.0  # no positive: no recall
    assert probabilistic_fbeta(np.array([1, 0]), np.array([0.0, 0.7])) == 0.0  # precision 0


# --- weighted multi-label log loss --------------------------------------------------------------------
def test_weighted_multilabel_log_loss_by_hand() -> None:
    table = pd.DataFrame({"study": ["a", "a", "b", "b"], "type": ["patient_overall", "C1", "C1", "patient_overall"]})
    truth, predicted = np.array([1, 0, 1, 0]), np.array([0.9, 0.2, 0.5, 0.1])
    a = (14 * -math.log(0.9) + 1 * -math.log(0.8)) / 15
    b = (2 * math.log(2) + 7 * -math.log(0.9)) / 9
    score = weighted_multilabel_log_loss(truth, predicted, answers=table, group_column="study",
                                         label_column="type", **WEIGHTS)
    assert score == pytest.approx((a + b) / 2)
    assert get_metric("weighted_multilabel_log_loss").lower_is_better is True


def test_weighted_multilabel_log_loss_clips_and_names_unknown_labels() -> None:
    table = pd.DataFrame({"study": ["a", "a"], "type": ["patient_overall", "C1"]})
    certain_miss = weighted_multilabel_log_loss(np.array([1, 0]), np.array([0.0, 0.0]), answers=table,
                                                group_column="study", label_column="type", **WEIGHTS)
    assert certain_miss == pytest.approx(14 * -math.log(1e-15) / 15)
    with pytest.raises(ValueError, match="C9"):
        unknown = pd.DataFrame({"study": ["a"], "type": ["C9"]})
        weighted_multilabel_log_loss(np.array([1]), np.array([0.5]), answers=unknown, group_column="study",
                                     label_column="type", **WEIGHTS)


# --- seti ----------------------------------------------------------------------------------------------
def test_seti_snippets_sit_in_first_character_folders(home: Path) -> None:
    public = CompetitionPaths(SETI, home).public
    test_ids = set(answers(home, SETI)["id"])
    placed = {p.stem: p.parent.name for p in (public / "test").rglob("*.npy")}
    assert set(placed) == test_ids and all(folder == name[0] for name, folder in placed.items())
    assert not test_ids & {p.stem for p in (public / "train").rglob("*.npy")}
    assert np.load(next((public / "train").rglob("*.npy"))).dtype == np.float16
    assert (public / "old_leaky_data" / "train_labels_old.csv").is_file()


# --- rsna-miccai -------------------------------------------------------------------------------------
def test_miccai_ids_keep_their_zeros_and_match_as_numbers(home: Path, tmp_path: Path) -> None:
    truth = answers(home, MICCAI)
    assert all(len(i) == 5 for i in truth["BraTS21ID"])  # written as in train_labels.csv
    assert {p.name for p in (CompetitionPaths(MICCAI, home).public / "test").iterdir()} == set(truth["BraTS21ID"])
    perfect = truth[["BraTS21ID", "MGMT_value"]]
    for ids in (truth["BraTS21ID"], truth["BraTS21ID"].astype(int).astype(str), truth["BraTS21ID"].astype(float)):
        # MLE-bench reads the ids as numbers, so '00012', '12' and '12.0' all name case 00012
        assert grade(home, MICCAI, perfect.assign(BraTS21ID=ids.to_numpy()), tmp_path).score == 1.0


# --- rsna-breast-cancer-detection ----------------------------------------------------------------------
def test_breast_answers_have_one_row_per_breast(home: Path) -> None:
    public = CompetitionPaths(BREAST, home).public
    test = pd.read_csv(public / "test.csv")
    assert list(test.columns) == ["site_id", "patient_id", "image_id", "laterality", "view", "age", "implant",
                                  "machine_id", "prediction_id"]
    truth = answers(home, BREAST)
    assert list(truth["prediction_id"]) == sorted(set(test["prediction_id"]))
    assert {f"{p}/{i}.dcm" for p, i in zip(test["patient_id"], test["image_id"], strict=True)} == {
        str(p.relative_to(public / "test_images")) for p in (public / "test_images").rglob("*.dcm")}
    train = pd.read_csv(public / "train.csv")
    sample = pd.read_csv(public / "sample_submission.csv")
    assert sample["cancer"].unique().tolist() == [train["cancer"].mean()]


def test_breast_predictions_are_clipped_and_all_negative_scores_zero(home: Path, tmp_path: Path) -> None:
    truth = answers(home, BREAST)
    labels = truth["cancer"].astype(float)
    stretched = truth.assign(cancer=labels * 3 - 1)  # -1 and 2, clipped to 0 and 1: a perfect score
    assert grade(home, BREAST, stretched, tmp_path).score == 1.0
    # MLE-bench divides Python integers by zero here and calls the submission invalid (a known issue)
    report = grade(home, BREAST, truth.assign(cancer=-0.5), tmp_path)
    assert report.status == "scored" and report.score == 0.0
    assert any("divides by zero" in issue.summary for issue in get_spec(BREAST).known_issues)


# --- rsna-2022-cervical-spine-fracture-detection -------------------------------------------------------
def test_spine_keeps_ten_percent_for_training_and_tests_the_rest(home: Path) -> None:
    public = CompetitionPaths(SPINE, home).public
    train = pd.read_csv(public / "train.csv")
    truth = answers(home, SPINE)
    studies = truth["StudyInstanceUID"].unique()
    assert len(train) == 6 and len(studies) == 54  # 10 % of the 60 synthetic studies train, 90 % test
    assert len(truth) == 8 * len(studies) and list(truth["prediction_type"].unique()) == [
        "patient_overall", "C1", "C2", "C3", "C4", "C5", "C6", "C7"]
    assert (truth["row_id"] == truth["StudyInstanceUID"] + "_" + truth["prediction_type"]).all()
    assert {p.name for p in (public / "test_images").iterdir()} == set(studies)
    boxed = set(pd.read_csv(public / "train_bounding_boxes.csv")["StudyInstanceUID"])
    masks = {p.stem for p in (public / "segmentations").glob("*.nii")}
    assert len(boxed) == 2 and len(masks) == 2 and (boxed | masks) <= set(train["StudyInstanceUID"])


def test_spine_patient_overall_weighs_more_than_a_vertebra(home: Path, tmp_path: Path) -> None:
    truth = answers(home, SPINE)
    perfect = truth[["row_id", "fractured"]].astype({"fractured": float})
    one_study = truth["StudyInstanceUID"] == truth["StudyInstanceUID"].iloc[0]
    wrong = {}
    for kind in ("patient_overall", "C3"):
        row = one_study & (truth["prediction_type"] == kind)
        wrong[kind] = grade(home, SPINE, perfect.assign(fractured=np.where(row, 0.5, perfect["fractured"])),
                            tmp_path).score
    assert 0 < wrong["C3"] < wrong["patient_overall"]
