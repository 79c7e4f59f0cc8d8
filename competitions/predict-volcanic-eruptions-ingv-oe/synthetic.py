"""Synthetic raw data for predict-volcanic-eruptions-ingv-oe (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import split_recipe, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test", "train", "train.csv"})
PRIVATE = frozenset({"test.csv"})
SENSORS = [f"sensor_{k}" for k in range(1, 11)]


def _segment(rng: np.random.Generator) -> pd.DataFrame:
    """Five time steps of ten sensors; one sensor failed (an empty column), as happens in Kaggle's files."""
    frame = pd.DataFrame(rng.integers(-900, 900, (5, 10)).astype(float), columns=SENSORS)
    frame[SENSORS[int(rng.integers(10))]] = np.nan
    return frame


def generate(raw: Path) -> None:
    rng = np.random.default_rng(31)
    train_ids = [int(v) for v in rng.choice(2_000_000_000, 40, replace=False)]
    test_ids = [int(v) for v in rng.choice(2_000_000_000, 3, replace=False)]
    write_csv(pd.DataFrame({"segment_id": train_ids, "time_to_eruption": rng.integers(6000, 49_000_000, 40)}),
              raw / "train.csv")
    write_csv(pd.DataFrame({"segment_id": test_ids, "time_to_eruption": 0}), raw / "sample_submission.csv")
    for folder, ids in (("train", train_ids), ("test", test_ids)):
        for segment in ids:
            write_csv(_segment(rng), raw / folder / f"{segment}.csv")


ids_from_answers, expected_test_ids = split_recipe("segment_id", 0.1)
