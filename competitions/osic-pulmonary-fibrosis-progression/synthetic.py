"""Synthetic raw data for osic-pulmonary-fibrosis-progression (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import dicom_bytes, held_out, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test", "test.csv", "train", "train.csv"})
PRIVATE = frozenset({"test.csv"})


def _visits(rng: np.random.Generator, patient: str) -> pd.DataFrame:
    weeks = np.sort(rng.choice(np.arange(-5, 60), int(rng.integers(4, 8)), replace=False))
    fvc = (3000 - 8 * weeks + rng.normal(0, 80, len(weeks))).round().astype(int)
    return pd.DataFrame({"Patient": patient, "Weeks": weeks, "FVC": fvc, "Percent": fvc / 38.5,
                         "Age": int(rng.integers(50, 85)), "Sex": rng.choice(["Male", "Female"]),
                         "SmokingStatus": rng.choice(["Ex-smoker", "Never smoked", "Currently smokes"])})


def generate(raw: Path) -> None:
    rng = np.random.default_rng(43)
    patients = [f"ID{int(v):023d}" for v in rng.choice(10**9, 36, replace=False)]
    visits = {p: _visits(rng, p) for p in patients}
    kaggle_test = patients[30:]  # Kaggle's own test patients: one visit each, no later weeks
    write_csv(pd.concat([visits[p] for p in patients[:30]], ignore_index=True), raw / "train.csv")
    write_csv(pd.concat([visits[p].head(1) for p in kaggle_test], ignore_index=True), raw / "test.csv")
    grid = [f"{p}_{w}" for p in kaggle_test for w in range(-12, 134)]
    write_csv(pd.DataFrame({"Patient_Week": grid, "FVC": 2000, "Confidence": 100}), raw / "sample_submission.csv")
    for k, p in enumerate(patients):
        folder = raw / ("test" if p in kaggle_test else "train") / p
        folder.mkdir(parents=True)
        for n in range(1, 3 + k % 2):
            (folder / f"{n}.dcm").write_bytes(dicom_bytes(f"1.2.826.0.1.{k}.{n}"))


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return list(answers["Patient_Week"])


def expected_test_ids(raw: Path) -> list[str]:
    """Held-out patients (of the sorted distinct ids) x every week from their first to their last visit."""
    train = pd.read_csv(raw / "train.csv")
    patients = held_out(sorted(train["Patient"].unique()), 0.1)
    weeks = train.loc[train["Patient"].isin(patients), "Weeks"]
    return [f"{p}_{w}" for p in patients for w in range(weeks.min(), weeks.max() + 1)]


def perfect_submission(answers: pd.DataFrame) -> pd.DataFrame:
    """The true FVC at the sigma floor (70); unmeasured weeks, never scored, get 2000."""
    fvc = answers["FVC"].replace("", "2000")
    return pd.DataFrame({"Patient_Week": answers["Patient_Week"], "FVC": fvc, "Confidence": 70})


def noisy_submission(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """FVC off by up to 1500 ml (some beyond the error cap), confidences on both sides of the floor."""
    fvc = pd.to_numeric(answers["FVC"].replace("", "2000")).to_numpy()
    return pd.DataFrame({"Patient_Week": answers["Patient_Week"], "FVC": fvc + rng.normal(0, 500, len(fvc)),
                         "Confidence": rng.uniform(20, 400, len(fvc))})
