"""Synthetic raw data for rsna-breast-cancer-detection (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import dicom_bytes, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test.csv", "test_images", "train.csv", "train_images"})
PRIVATE = frozenset({"answers.csv"})
TEST_COLUMNS = ["site_id", "patient_id", "image_id", "laterality", "view", "age", "implant", "machine_id"]


def _patient(rng: np.random.Generator, patient: int) -> list[dict]:
    """Two views (CC, MLO) of each breast, sometimes a third image; one cancer label per breast."""
    site, age, implant = int(rng.integers(1, 3)), float(rng.integers(35, 85)), int(rng.random() < 0.1)
    age = np.nan if rng.random() < 0.1 else age
    rows = []
    for laterality in ("L", "R"):
        cancer = int(rng.random() < 0.3)
        for view in ["CC", "MLO"] + (["ML"] if rng.random() < 0.2 else []):
            rows.append({"site_id": site, "patient_id": patient, "image_id": int(rng.integers(10**6, 2 * 10**9)),
                         "laterality": laterality, "view": view, "age": age, "cancer": cancer,
                         "biopsy": int(cancer or rng.random() < 0.1), "invasive": int(cancer and rng.random() < 0.6),
                         "BIRADS": np.nan if cancer else float(rng.integers(0, 3)), "implant": implant,
                         "density": rng.choice(["A", "B", "C", "D", ""]), "machine_id": int(rng.choice([21, 29, 49])),
                         "difficult_negative_case": bool(rng.random() < 0.1)})
    return rows


def generate(raw: Path) -> None:
    rng = np.random.default_rng(71)
    patients = [int(p) for p in rng.choice(65_000, 44, replace=False)]
    train = pd.DataFrame([row for p in patients[:40] for row in _patient(rng, p)])
    write_csv(train, raw / "train.csv")
    test = pd.DataFrame([row for p in patients[40:] for row in _patient(rng, p)])[TEST_COLUMNS]
    test["prediction_id"] = test["patient_id"].astype(str) + "_" + test["laterality"]
    write_csv(test, raw / "test.csv")
    write_csv(pd.DataFrame({"prediction_id": test["prediction_id"].unique(), "cancer": 0.021}),
              raw / "sample_submission.csv")
    for folder, frame in (("train_images", train), ("test_images", test)):
        for patient, image in zip(frame["patient_id"], frame["image_id"], strict=True):
            path = raw / folder / str(patient) / f"{image}.dcm"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(dicom_bytes(f"1.2.826.0.1.{patient}.{image}"))


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return list(answers["prediction_id"])


def expected_test_ids(raw: Path) -> list[str]:
    """Breasts (patient_laterality, sorted as text) of the patients a 10 % split (random_state 42) holds out."""
    from sklearn.model_selection import train_test_split

    train = pd.read_csv(raw / "train.csv")
    held = set(train_test_split(train["patient_id"].unique(), test_size=0.1, random_state=42)[1])
    rows = train[train["patient_id"].isin(held)]
    return sorted(set(rows["patient_id"].astype(str) + "_" + rows["laterality"]))
