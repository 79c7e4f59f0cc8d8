"""Synthetic raw data for rsna-miccai-brain-tumor-radiogenomic-classification (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import binary, dicom_bytes, held_out, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test", "train", "train_labels.csv"})
PRIVATE = frozenset({"test.csv"})
SERIES = ("FLAIR", "T1w", "T1wCE", "T2w")


def _case(folder: Path, case: str) -> None:
    """Four MRI series of two or three slices each (Kaggle's have hundreds)."""
    for k, series in enumerate(SERIES):
        (folder / case / series).mkdir(parents=True)
        for n in range(1, 2 + (int(case) + k) % 2 + 1):
            (folder / case / series / f"Image-{n}.dcm").write_bytes(dicom_bytes(f"1.2.826.0.1.{int(case)}.{k}.{n}"))


def generate(raw: Path) -> None:
    rng = np.random.default_rng(67)
    numbers = np.sort(rng.choice(1000, 66, replace=False))
    cases = [f"{int(n):05d}" for n in numbers]  # ids with leading zeros, as Kaggle writes them
    train, test = cases[:60], cases[60:]
    write_csv(pd.DataFrame({"BraTS21ID": train, "MGMT_value": binary(rng, 60)}), raw / "train_labels.csv")
    write_csv(pd.DataFrame({"BraTS21ID": test, "MGMT_value": 0.5}), raw / "sample_submission.csv")
    for folder, ids in (("train", train), ("test", test)):
        for case in ids:
            _case(raw / folder, case)


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return list(answers["BraTS21ID"])


def expected_test_ids(raw: Path) -> list[str]:
    """A plain 10 % split of the labelled cases, ids kept as written (leading zeros)."""
    labels = pd.read_csv(raw / "train_labels.csv", dtype={"BraTS21ID": str})
    return list(held_out(labels, 0.1)["BraTS21ID"])
