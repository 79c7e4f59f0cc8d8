"""Reference metrics for the 'volumes' group (icecube, uw-madison), recomputed from their definitions with plain
Python and numpy (conventions: the docstring of reference_metrics.py)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd


def _direction(azimuth: float, zenith: float) -> tuple[float, float, float]:
    return (math.sin(zenith) * math.cos(azimuth), math.sin(zenith) * math.sin(azimuth), math.cos(zenith))


def mean_angular_error(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Mean over rows of the angle between the two unit vectors of (azimuth, zenith), dot clipped to [-1, 1]."""
    a, z = params["azimuth_column"], params["zenith_column"]
    angles = []
    for (a1, z1), (a2, z2) in zip(answers[[a, z]].to_numpy(), submission[[a, z]].to_numpy(), strict=True):
        u, v = _direction(float(a1), float(z1)), _direction(float(a2), float(z2))
        dot = sum(p * q for p, q in zip(u, v, strict=True))
        angles.append(math.acos(min(1.0, max(-1.0, dot))))
    return sum(angles) / len(angles)


def _decode(text: object, height: int, width: int) -> np.ndarray:
    """A column-major RLE cell ("start length" pairs, 1-based; empty or NaN: no pixel) as a (height, width) mask."""
    flat = np.zeros(height * width, dtype=bool)
    tokens = [] if not isinstance(text, str) else text.split()
    for start, length in zip(tokens[0::2], tokens[1::2], strict=True):
        flat[int(start) - 1:int(start) - 1 + int(length)] = True
    return flat.reshape(width, height).T


def _hausdorff(predicted: np.ndarray, truth: np.ndarray, cap: float) -> float:
    """Both empty NaN, equal 0, one empty or a prediction over ``cap`` times the truth 1; else the symmetric
    Hausdorff distance of the voxel coordinates divided by the shape, over sqrt(3) (all pairs, brute force)."""
    if not predicted.any() and not truth.any():
        return math.nan
    if (predicted == truth).all():
        return 0.0
    if not predicted.any() or not truth.any() or predicted.sum() > cap * truth.sum():
        return 1.0
    p = np.argwhere(predicted) / np.array(truth.shape, dtype=float)
    t = np.argwhere(truth) / np.array(truth.shape, dtype=float)
    pairwise = np.sqrt(((p[:, None, :] - t[None, :, :]) ** 2).sum(axis=2))
    return max(pairwise.min(axis=1).max(), pairwise.min(axis=0).max()) / math.sqrt(3)


def dice_hausdorff_3d(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """0.4 x nanmean of per-row Dice (NaN: both empty) + 0.6 x (1 - nanmean of per-volume Hausdorff); a volume is
    the rows whose ids share the part before "_slice_", the rows of one id united, slices in id order."""
    height_col, width_col = params["shape_columns"]
    masks, truths = [], []
    for text, truth, height, width in zip(submission["predicted"], answers["predicted"], answers[height_col],
                                          answers[width_col], strict=True):
        h, w = int(float(height)), int(float(width))
        masks.append(_decode(text, h, w))
        truths.append(_decode(truth, h, w))
    dice = []
    for m, t in zip(masks, truths, strict=True):
        total = m.sum() + t.sum()
        dice.append(math.nan if total == 0 else 2 * (m & t).sum() / total)
    ids = list(answers[params["id_column"]])
    volumes: dict[str, dict[str, list[int]]] = {}
    for i in sorted(range(len(ids)), key=lambda i: ids[i]):
        volumes.setdefault(ids[i].split(params["slice_separator"])[0], {}).setdefault(ids[i], []).append(i)
    distances = []
    for slices in volumes.values():
        stack = [(np.logical_or.reduce([masks[i] for i in rows]), np.logical_or.reduce([truths[i] for i in rows]))
                 for _, rows in sorted(slices.items())]
        distances.append(_hausdorff(np.stack([s[0] for s in stack]), np.stack([s[1] for s in stack]),
                                    params["size_ratio_cap"]))
    return (params["dice_weight"] * float(np.nanmean(dice))
            + params["hausdorff_weight"] * (1 - float(np.nanmean(distances))))


REFERENCES_VOLUMES = {
    "mean_angular_error": mean_angular_error,
    "dice_hausdorff_3d": dice_hausdorff_3d,
}
