"""Synthetic raw data for tabular-playground-series-may-2022 (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import binary, split_recipe, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test.csv", "train.csv"})
PRIVATE = frozenset({"gold_submission.csv", "test.csv"})


def _frame(rng: np.random.Generator, n: int, start: int) -> pd.DataFrame:
    columns: dict[str, np.ndarray] = {"id": np.arange(start, start + n)}
    for i in range(31):
        if i == 27:
            columns[f"f_{i:02d}"] = rng.integers(65, 75, (n, 10), dtype=np.uint8).view("S10").ravel().astype(str)
        elif 7 <= i <= 18 or i in (29, 30):
            columns[f"f_{i:02d}"] = rng.integers(0, 12, n)
        else:
            columns[f"f_{i:02d}"] = rng.normal(size=n).round(6)
    return pd.DataFrame(columns)


def generate(raw: Path) -> None:
    rng = np.random.default_rng(19)
    n = 100_000 + 60
    write_csv(_frame(rng, n, 0).assign(target=binary(rng, n)), raw / "train.csv")
    write_csv(_frame(rng, 5, 900000), raw / "test.csv")
    write_csv(pd.DataFrame({"id": range(900000, 900005), "target": 0.5}), raw / "sample_submission.csv")


# The ids are renumbered, so the random string feature f_27 in answer order identifies the split.
ids_from_answers, expected_test_ids = split_recipe("f_27", 100_000)
