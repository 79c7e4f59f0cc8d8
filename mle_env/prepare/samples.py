"""Sample-submission values drawn at random, exactly as MLE-bench's scripts draw them.

A few MLE-bench competitions fill their sample submission with seeded random values; reproducing the same
generator, seed and call gives the same file (and so the same checksum). Each draw is one named function,
and ``split_csv``'s ``sample_random`` parameter names them in competition.toml::

    sample_random = { score = { draw = "numpy_randint", seed = 42, low = 1, high = 7 } }

========================  ==============================================================  ====================
draw                      MLE-bench's call                                                used by
========================  ==============================================================  ====================
``numpy_randint``         ``np.random.RandomState(seed).randint(low, high, size=n)`` (=   LAL essay scoring,
                          ``np.random.seed(seed)`` then ``np.random.randint``; high       iwildcam-2020
                          exclusive)
``numpy_uniform``         ``np.random.default_rng(seed).uniform(low, high, n)``, rounded  petfinder
                          to ``decimals`` when given
``python_choice``         ``random.seed(seed)``, then ``random.choice(options)`` per row   contrails
``python_sample``         ``random.seed(seed)``, then ``" ".join(random.sample(options,    multi-modal gesture
                          k))`` per row (k defaults to all: a permutation)
``python_randint_fresh``  ``random.Random(seed).randint(low, high)`` per row, a fresh      inaturalist-2019
                          generator each time (so every row gets the same value)
========================  ==============================================================  ====================

The functions never touch the global ``random`` / ``np.random`` state.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mle_env.errors import PrepareError


def numpy_randint(n: int, *, seed: int, low: int, high: int) -> np.ndarray:
    """Integers in [low, high) from NumPy's legacy generator seeded with ``seed``."""
    return np.random.RandomState(seed).randint(low, high, size=n)


def numpy_uniform(n: int, *, seed: int, low: float, high: float, decimals: int | None = None) -> np.ndarray:
    """Floats in [low, high) from ``np.random.default_rng(seed)``, rounded to ``decimals`` when given."""
    values = np.random.default_rng(seed).uniform(low, high, n)
    return values.round(decimals) if decimals is not None else values


def python_choice(n: int, *, seed: int, options: Sequence[Any]) -> list[Any]:
    """One ``random.choice(options)`` per row from ``random.Random(seed)``."""
    rng = random.Random(seed)
    return [rng.choice(list(options)) for _ in range(n)]


def python_sample(n: int, *, seed: int, options: Sequence[Any], k: int | None = None) -> list[str]:
    """Per row, ``k`` distinct options (default: all, a permutation) from ``random.Random(seed)``, joined by spaces."""
    rng, pool = random.Random(seed), list(options)
    return [" ".join(str(v) for v in rng.sample(pool, len(pool) if k is None else k)) for _ in range(n)]


def python_randint_fresh(n: int, *, seed: int, low: int, high: int) -> list[int]:
    """``random.Random(seed).randint(low, high)`` (high inclusive) with a fresh generator for every row."""
    return [random.Random(seed).randint(low, high) for _ in range(n)]


DRAWS: dict[str, Callable[..., Any]] = {
    "numpy_randint": numpy_randint,
    "numpy_uniform": numpy_uniform,
    "python_choice": python_choice,
    "python_sample": python_sample,
    "python_randint_fresh": python_randint_fresh,
}


def random_values(n: int, spec: dict[str, Any]) -> Any:
    """``n`` values drawn as ``spec`` says: ``{"draw": <a DRAWS name>, **its keyword arguments}``."""
    args = dict(spec)
    name = args.pop("draw", None)
    if name not in DRAWS:
        raise PrepareError(f"sample_random draw {name!r} is unknown; use one of {', '.join(DRAWS)}")
    try:
        return DRAWS[name](n, **args)
    except TypeError as e:
        raise PrepareError(f"sample_random draw '{name}': {e}; see mle_env.prepare.samples") from None
