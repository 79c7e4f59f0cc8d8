"""Synthetic raw data for spaceship-titanic (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import split_recipe, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test.csv", "train.csv"})
PRIVATE = frozenset({"test.csv"})

_SPENDING = ["RoomService", "FoodCourt", "ShoppingMall", "Spa", "VRDeck"]


def _with_gaps(rng: np.random.Generator, values: list[object]) -> list[object]:
    """About one value in fifteen left empty, as Kaggle's file leaves some cells blank."""
    return [None if rng.random() < 1 / 15 else v for v in values]


def _passengers(rng: np.random.Generator, n: int, first_group: int) -> pd.DataFrame:
    ids, group = [], first_group
    while len(ids) < n:  # travel groups of one to three passengers: gggg_pp
        ids += [f"{group:04d}_{k:02d}" for k in range(1, int(rng.integers(1, 4)) + 1)]
        group += int(rng.integers(1, 4))
    ids = ids[:n]
    cabins = [f"{rng.choice(list('ABCDEFGT'))}/{rng.integers(0, 1900)}/{rng.choice(['P', 'S'])}" for _ in range(n)]
    names = [f"{rng.choice(['Pich', 'Darry', 'Feline', 'Chabih', 'Alraium'])} "
             f"{rng.choice(['Knike', 'Braymon', 'Toddleton', 'Eguing', 'Disivering'])}" for _ in range(n)]
    frame = pd.DataFrame({
        "PassengerId": ids,
        "HomePlanet": _with_gaps(rng, list(rng.choice(["Earth", "Europa", "Mars"], n))),
        "CryoSleep": _with_gaps(rng, [bool(v) for v in rng.integers(0, 2, n)]),
        "Cabin": _with_gaps(rng, cabins),
        "Destination": _with_gaps(rng, list(rng.choice(["TRAPPIST-1e", "55 Cancri e", "PSO J318.5-22"], n))),
        "Age": _with_gaps(rng, [float(v) for v in rng.integers(0, 80, n)]),
        "VIP": _with_gaps(rng, [bool(v) for v in rng.random(n) < 0.05]),
    })
    for column in _SPENDING:
        frame[column] = _with_gaps(rng, [float(v) if rng.random() < 0.4 else 0.0 for v in rng.integers(1, 5000, n)])
    frame["Name"] = _with_gaps(rng, names)
    return frame


def generate(raw: Path) -> None:
    rng = np.random.default_rng(2022)
    train = _passengers(rng, 80, 1)
    train["Transported"] = rng.integers(0, 2, len(train)).astype(bool)
    test = _passengers(rng, 6, 9000)
    write_csv(train, raw / "train.csv")
    write_csv(test, raw / "test.csv")
    write_csv(pd.DataFrame({"PassengerId": test["PassengerId"], "Transported": False}), raw / "sample_submission.csv")


ids_from_answers, expected_test_ids = split_recipe("PassengerId", 0.1)
