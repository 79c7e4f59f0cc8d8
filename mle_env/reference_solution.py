"""One member of a practice competition's reference population, and the subsampling that varies strength."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class ReferenceSolution:
    """One member of the population: a name and ``predict(public_dir) -> submission DataFrame``."""

    name: str
    predict: Callable[[Path], pd.DataFrame]


def subsample(frame: pd.DataFrame, fraction: float, seed: int = 0) -> pd.DataFrame:
    """A seeded random ``fraction`` of the rows (at least 20), used to vary solution strength."""
    n = max(20, int(round(len(frame) * fraction)))
    if n >= len(frame):
        return frame
    return frame.iloc[np.random.default_rng(seed).permutation(len(frame))[:n]]
