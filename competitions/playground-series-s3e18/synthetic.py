"""Synthetic raw data for playground-series-s3e18 (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import split_recipe, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test.csv", "train.csv"})
PRIVATE = frozenset({"test.csv"})

#: the 31 molecular descriptors of Kaggle's files, in their order
FEATURES = ["BertzCT", "Chi1", "Chi1n", "Chi1v", "Chi2n", "Chi2v", "Chi3v", "Chi4n", "EState_VSA1", "EState_VSA2",
            "ExactMolWt", "FpDensityMorgan1", "FpDensityMorgan2", "FpDensityMorgan3", "HallKierAlpha",
            "HeavyAtomMolWt", "Kappa3", "MaxAbsEStateIndex", "MinEStateIndex", "NumHeteroatoms", "PEOE_VSA10",
            "PEOE_VSA14", "PEOE_VSA6", "PEOE_VSA7", "PEOE_VSA8", "SMR_VSA10", "SMR_VSA5", "SlogP_VSA3",
            "VSA_EState9", "fr_COO", "fr_COO2"]
TARGETS = [f"EC{i}" for i in range(1, 7)]


def _molecules(rng: np.random.Generator, n: int, start: int) -> pd.DataFrame:
    values = rng.gamma(2.0, 20.0, (n, len(FEATURES))).round(6)
    frame = pd.DataFrame({"id": range(start, start + n), **dict(zip(FEATURES, values.T, strict=True))})
    frame["HallKierAlpha"] = (-frame["HallKierAlpha"] / 40).round(2)  # negative in the real file
    for column in ("NumHeteroatoms", "fr_COO", "fr_COO2"):  # counts
        frame[column] = rng.integers(0, 12 if column == "NumHeteroatoms" else 3, n)
    return frame


def generate(raw: Path) -> None:
    rng = np.random.default_rng(318)
    train = _molecules(rng, 150, 0)
    for target, share in zip(TARGETS, (0.67, 0.8, 0.3, 0.25, 0.13, 0.15), strict=True):
        train[target] = (rng.random(len(train)) < share).astype(int)
    test = _molecules(rng, 5, 14838)
    write_csv(train, raw / "train.csv")
    write_csv(test, raw / "test.csv")
    write_csv(test[["id"]].assign(EC1=0.5, EC2=0.5), raw / "sample_submission.csv")


ids_from_answers, expected_test_ids = split_recipe("id", 0.1)
