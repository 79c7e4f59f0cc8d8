"""Synthetic raw data for icecube-neutrinos-in-deep-ice (see mle_env.competition.synthetic); needs pyarrow.

Kaggle's layout: ``train_meta.parquet`` (one row per event: batch_id, event_id, first/last_pulse_index,
azimuth, zenith), ``train/batch_<n>.parquet`` (one row per pulse, event_id as the index), the hidden test's
stand-ins ``test_meta.parquet``, ``test/batch_661.parquet`` and ``sample_submission.parquet``, and
``sensor_geometry.csv``. Batches appear in the metadata out of numeric order, so the split's order of
appearance matters.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import held_out, write_csv

PUBLIC = frozenset({"sample_submission.csv", "sensor_geometry.csv", "test", "test_meta.parquet", "train",
                    "train_meta.parquet"})
PRIVATE = frozenset({"test.csv"})
N_BATCHES, N_SENSORS = 24, 12


def _batch(rng: np.random.Generator, batch: int, first_event: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One batch: its metadata rows and its pulses (event_id as the index, as Kaggle stores it)."""
    events, pulses, start = [], [], 0
    for k in range(int(rng.integers(3, 7))):
        event, n = first_event + 7 * k + int(rng.integers(0, 5)), int(rng.integers(2, 6))
        events.append({"batch_id": batch, "event_id": event, "first_pulse_index": start,
                       "last_pulse_index": start + n - 1, "azimuth": rng.uniform(0, 2 * np.pi),
                       "zenith": rng.uniform(0, np.pi)})
        pulses.append(pd.DataFrame({
            "event_id": np.full(n, event, dtype=np.int64), "sensor_id": rng.integers(0, N_SENSORS, n).astype(np.int16),
            "time": np.sort(rng.integers(5000, 20000, n)).astype(np.int64),
            "charge": rng.gamma(2.0, 0.6, n).round(3).astype(np.float32), "auxiliary": rng.random(n) < 0.3}))
        start += n
    return pd.DataFrame(events), pd.concat(pulses).set_index("event_id")


def generate(raw: Path) -> None:
    rng = np.random.default_rng(58)
    order = [*range(5, N_BATCHES + 1), *range(1, 5)]  # the metadata's batches, not in numeric order
    metas, first_event = [], 24
    (raw / "train").mkdir(parents=True)
    for batch in order:
        meta, pulses = _batch(rng, batch, first_event)
        first_event = int(meta["event_id"].max()) + 11
        metas.append(meta)
        pulses.to_parquet(raw / "train" / f"batch_{batch}.parquet", engine="pyarrow")
    pd.concat(metas, ignore_index=True).to_parquet(raw / "train_meta.parquet", engine="pyarrow", index=False)
    meta, pulses = _batch(rng, 661, 2_000_000)
    (raw / "test").mkdir()
    pulses.to_parquet(raw / "test" / "batch_661.parquet", engine="pyarrow")
    meta.drop(columns=["azimuth", "zenith"]).to_parquet(raw / "test_meta.parquet", engine="pyarrow", index=False)
    meta[["event_id"]].assign(azimuth=1.0, zenith=1.0).to_parquet(raw / "sample_submission.parquet",
                                                                  engine="pyarrow", index=False)
    sensors = np.arange(N_SENSORS)
    write_csv(pd.DataFrame({"sensor_id": sensors, "x": (rng.normal(0, 300, N_SENSORS)).round(2),
                            "y": (rng.normal(0, 300, N_SENSORS)).round(2),
                            "z": (rng.uniform(-500, 500, N_SENSORS)).round(2)}), raw / "sensor_geometry.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return list(answers["event_id"])


def expected_test_ids(raw: Path) -> list[str]:
    """The events of the held-out batches (distinct batch ids in order of appearance), in raw order."""
    meta = pd.read_parquet(raw / "train_meta.parquet")
    picked = set(held_out(meta["batch_id"].unique(), 0.1))
    return [str(v) for v in meta.loc[meta["batch_id"].isin(picked), "event_id"]]
