"""Seeded sample values equal what MLE-bench's own calls draw (recomputed here with the global generators)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from mle_env.errors import PrepareError
from mle_env.prepare.samples import random_values


def test_each_draw_equals_mlebench_call() -> None:
    np.random.seed(0)
    assert list(random_values(50, {"draw": "numpy_randint", "seed": 0, "low": 0, "high": 676})) == list(
        np.random.randint(0, 676, size=50))
    assert list(random_values(9, {"draw": "numpy_randint", "seed": 42, "low": 1, "high": 7})) == list(
        np.random.RandomState(42).randint(1, 7, size=9))
    assert list(random_values(5, {"draw": "numpy_uniform", "seed": 0, "low": 1, "high": 100, "decimals": 2})) == list(
        np.random.default_rng(0).uniform(1, 100, 5).round(2))
    random.seed(0)
    expected = [random.choice(["1 3 10 5", "-"]) for _ in range(20)]
    assert random_values(20, {"draw": "python_choice", "seed": 0, "options": ["1 3 10 5", "-"]}) == expected
    random.seed(0)
    expected = [" ".join(str(x) for x in random.sample(range(1, 21), 20)) for _ in range(4)]
    assert random_values(4, {"draw": "python_sample", "seed": 0, "options": list(range(1, 21))}) == expected
    fresh = random_values(3, {"draw": "python_randint_fresh", "seed": 42, "low": 0, "high": 1009})
    assert fresh == [random.Random(42).randint(0, 1009)] * 3


def test_bad_draws_say_what_to_use() -> None:
    with pytest.raises(PrepareError, match="use one of numpy_randint"):
        random_values(3, {"draw": "dice"})
    with pytest.raises(PrepareError, match="numpy_randint"):
        random_values(3, {"draw": "numpy_randint", "seed": 0})
