"""Synthetic raw data for new-york-city-taxi-fare-prediction (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import split_recipe, write_csv

PUBLIC = frozenset({"GCP-Coupons-Instructions.rtf", "labels.csv", "sample_submission.csv", "test.csv"})
PRIVATE = frozenset({"test.csv"})


def generate(raw: Path) -> None:
    rng = np.random.default_rng(11)
    n = 9914 + 60
    seconds = np.sort(rng.choice(200_000_000, n, replace=False)) + 1_230_000_000
    stamps = pd.to_datetime(seconds, unit="s").strftime("%Y-%m-%d %H:%M:%S")
    frame = pd.DataFrame({
        "key": [f"{s}.{i:07d}" for i, s in enumerate(stamps)],
        "fare_amount": (rng.gamma(2.0, 5.0, n) + 2.5).round(2),
        "pickup_datetime": [f"{s} UTC" for s in stamps],
        "pickup_longitude": (-73.98 + rng.normal(0, 0.03, n)).round(6),
        "pickup_latitude": (40.75 + rng.normal(0, 0.03, n)).round(6),
        "dropoff_longitude": (-73.98 + rng.normal(0, 0.03, n)).round(6),
        "dropoff_latitude": (40.75 + rng.normal(0, 0.03, n)).round(6),
        "passenger_count": rng.integers(1, 7, n),
    })
    frame.loc[3, ["pickup_longitude", "pickup_latitude"]] = 0.0  # the real data has zero coordinates too
    write_csv(frame, raw / "train.csv")
    test = frame.head(5).drop(columns=["fare_amount"])
    test["key"] = [f"2015-01-27 13:08:24.000000{i}" for i in range(5)]
    write_csv(test, raw / "test.csv")
    write_csv(pd.DataFrame({"key": test["key"], "fare_amount": 11.35}), raw / "sample_submission.csv")
    (raw / "GCP-Coupons-Instructions.rtf").write_text("{\\rtf1\\ansi Coupons for cloud credits.}\n")


ids_from_answers, expected_test_ids = split_recipe("key", 9914)
