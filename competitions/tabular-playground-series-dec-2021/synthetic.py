"""Synthetic raw data for tabular-playground-series-dec-2021 (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import split_recipe, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test.csv", "train.csv"})
PRIVATE = frozenset({"test.csv"})


def _cover_frame(rng: np.random.Generator, n: int, start: int) -> pd.DataFrame:
    columns = ["Elevation", "Aspect", "Slope", "Horizontal_Distance_To_Hydrology", "Vertical_Distance_To_Hydrology",
               "Horizontal_Distance_To_Roadways", "Hillshade_9am", "Hillshade_Noon", "Hillshade_3pm",
               "Horizontal_Distance_To_Fire_Points"]
    columns += [f"Wilderness_Area{i}" for i in range(1, 5)] + [f"Soil_Type{i}" for i in range(1, 41)]
    values = np.hstack([rng.integers(-50, 4000, (n, 10)), rng.integers(0, 2, (n, 44))])
    return pd.DataFrame({"Id": range(start, start + n), **dict(zip(columns, values.T, strict=True))})


def generate(raw: Path) -> None:
    rng = np.random.default_rng(18)
    write_csv(_cover_frame(rng, 60, 0).assign(Cover_Type=rng.integers(1, 8, 60)), raw / "train.csv")
    write_csv(_cover_frame(rng, 5, 4000000), raw / "test.csv")
    write_csv(pd.DataFrame({"Id": range(4000000, 4000005), "Cover_Type": 2}), raw / "sample_submission.csv")


ids_from_answers, expected_test_ids = split_recipe("Id", 0.1)
