"""Competition-specific behaviour of champs, osic, stanford-covid-vaccine and hms that the registry-wide test
cannot see: a defect fixed (champs' test structures), the grader's treatment of ln(0) (champs), the rows each
grader scores (osic's last three visits, stanford's keep mask by id) and hms' pairing of repeated eeg_ids."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from grading_helpers import grade, prepare_synthetic

from mle_env.competition.registry import get_spec
from mle_env.competition.synthetic import load_synthetic
from mle_env.grading.metrics import grouped_log_mae
from mle_env.paths import CompetitionPaths

CHAMPS, OSIC = "champs-scalar-coupling", "osic-pulmonary-fibrosis-progression"
COVID, HMS = "stanford-covid-vaccine", "hms-harmful-brain-activity-classification"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache with the four competitions prepared from their synthetic raw data."""
    home, raws = tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("raw")
    return prepare_synthetic((CHAMPS, OSIC, COVID, HMS), home, raws)



def answers(home: Path, cid: str) -> pd.DataFrame:
    return pd.read_csv(CompetitionPaths(cid, home).private / get_spec(cid).submission.answers)


# --- champs ------------------------------------------------------------------------------------------
def test_champs_test_molecules_have_structures_and_nothing_else(home: Path) -> None:
    public = CompetitionPaths(CHAMPS, home).public
    test = set(pd.read_csv(public / "test.csv")["molecule_name"])
    train = set(pd.read_csv(public / "train.csv")["molecule_name"])
    assert test and not test & train
    assert set(pd.read_csv(public / "structures.csv")["molecule_name"]) == train | test
    assert {p.stem for p in (public / "structures").glob("*.xyz")} == train | test
    for name in ("dipole_moments.csv", "mulliken_charges.csv", "scalar_coupling_contributions.csv"):
        assert set(pd.read_csv(public / name)["molecule_name"]) == train, name


def test_champs_exact_type_scores_the_floor_not_minus_infinity(home: Path, tmp_path: Path, shared: Path) -> None:
    truth = answers(home, CHAMPS)
    exact_type = truth["type"].iloc[0]
    sub = truth[["id", "scalar_coupling_constant"]].copy()
    sub.loc[truth["type"] != exact_type, "scalar_coupling_constant"] += 1.0  # MAE 1: ln 1 = 0 for the others
    board = shared / "mlebench-leaderboards" / f"{CHAMPS}.csv"
    report = grade(home, CHAMPS, sub, tmp_path, board)
    n_types = truth["type"].nunique()
    assert report.status == "scored" and report.gold_medal
    assert report.score == pytest.approx(round(math.log(5e-324) / n_types, 5), abs=1e-6)
    # without the floor the metric gives MLE-bench's -inf, which the grader cannot report
    assert grouped_log_mae(np.zeros(2), np.zeros(2), answers=pd.DataFrame({"type": ["a", "b"]})) == -math.inf


# --- osic --------------------------------------------------------------------------------------------
def test_osic_scores_only_each_patients_three_latest_visits(home: Path, tmp_path: Path) -> None:
    truth = answers(home, OSIC)
    measured = truth.dropna(subset=["FVC"])
    latest = measured.groupby("Patient")["Weeks"].nlargest(3).index.get_level_values(1)
    assert sorted(truth.index[truth["scored"]]) == sorted(latest)
    sub = pd.DataFrame({"Patient_Week": truth["Patient_Week"], "FVC": truth["FVC"].fillna(2000), "Confidence": 70})
    best = grade(home, OSIC, sub, tmp_path).score
    sub.loc[~truth["scored"], ["FVC", "Confidence"]] = [99999, 5]  # unscored rows: anything goes
    assert grade(home, OSIC, sub, tmp_path).score == best == round(-math.log(70 * math.sqrt(2)), 5)
    assert grade(home, OSIC, sub.iloc[1:], tmp_path).status == "invalid"  # MLE-bench would score the rest


# --- stanford-covid-vaccine --------------------------------------------------------------------------
def test_covid_keep_mask_follows_the_ids_in_any_row_order(home: Path, tmp_path: Path) -> None:
    truth = answers(home, COVID)
    targets = list(get_spec(COVID).submission.target_columns)
    sub = truth[["id_seqpos", *targets]].copy()
    sub.loc[~truth["keep"], targets] = 50.0  # unscored positions
    sub.loc[truth["keep"], ["deg_pH10", "deg_50C"]] = 50.0  # unscored targets
    assert grade(home, COVID, sub, tmp_path).score == 0.0
    assert grade(home, COVID, sub.iloc[::-1], tmp_path).score == 0.0  # MLE-bench masks by position here


# --- hms ---------------------------------------------------------------------------------------------
def test_hms_repeated_eeg_ids_pair_in_order_of_appearance(home: Path, tmp_path: Path) -> None:
    truth = answers(home, HMS)
    perfect = load_synthetic(HMS).perfect_submission(truth.astype(str))
    repeated = truth.index[truth["eeg_id"].duplicated(keep=False)]
    assert len(repeated) >= 2 and list(pd.read_csv(CompetitionPaths(HMS, home).public / "test.csv").columns) == [
        "spectrogram_id", "eeg_id", "patient_id"]
    assert grade(home, HMS, perfect, tmp_path).score == 0.0
    first, second = repeated[:2]
    swapped = perfect.copy()
    swapped.iloc[[first, second]] = perfect.iloc[[second, first]].to_numpy()
    assert (truth.loc[first, "eeg_id"] == truth.loc[second, "eeg_id"])
    assert grade(home, HMS, swapped, tmp_path).score > 0.0  # the k-th row meets the k-th window
