"""Synthetic raw data for ventilator-pressure-prediction (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import held_out, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test.csv", "train.csv"})
PRIVATE = frozenset({"test.csv"})
STEPS = 6  # Kaggle's breaths have 80 time steps


def _breaths(rng: np.random.Generator, breath_ids: list[int], first_id: int) -> pd.DataFrame:
    n = len(breath_ids) * STEPS
    u_out = np.tile((np.arange(STEPS) >= STEPS // 2).astype(int), len(breath_ids))
    return pd.DataFrame({
        "id": range(first_id, first_id + n), "breath_id": np.repeat(breath_ids, STEPS),
        "R": np.repeat(rng.choice([5, 20, 50], len(breath_ids)), STEPS),
        "C": np.repeat(rng.choice([10, 20, 50], len(breath_ids)), STEPS),
        "time_step": np.tile(np.arange(STEPS) * 0.0336, len(breath_ids)) + rng.random(n) * 1e-3,
        "u_in": rng.random(n) * 30, "u_out": u_out, "pressure": 5 + rng.random(n) * 30,
    })


def generate(raw: Path) -> None:
    rng = np.random.default_rng(29)
    ids = sorted(int(v) for v in rng.choice(200, 30, replace=False) + 1)
    train = _breaths(rng, [ids[i] for i in rng.permutation(30)], 1)  # raw rows are not in breath_id order
    test = _breaths(rng, [1000, 1003], 1).drop(columns=["pressure"])
    write_csv(train, raw / "train.csv")
    write_csv(test, raw / "test.csv")
    write_csv(test[["id"]].assign(pressure=0), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    """``<breath_id>/<id>`` of each answer row."""
    return [f"{b}/{i}" for b, i in zip(answers["breath_id"], answers["id"], strict=True)]


def expected_test_ids(raw: Path) -> list[str]:
    """The held-out breaths (of the sorted distinct breath ids), rows breath by breath, ids from 1."""
    train = pd.read_csv(raw / "train.csv")
    breaths = [b for b in held_out(sorted(train["breath_id"].unique()), 0.1) for _ in range(STEPS)]
    return [f"{b}/{n}" for n, b in enumerate(breaths, start=1)]
