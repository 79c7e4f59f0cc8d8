"""Segmentation scored in 3-D: per-slice Dice and a Hausdorff distance over each stack of slices (higher is
better).

Answers and predictions are RLE cells (:mod:`mle_env.grading.rle`), one row per (slice, class). A row's
slice is its id, ``<volume><separator><slice number>`` (uw-madison: ``case123_day20_slice_0001``); the
rows of one volume are its slices, stacked in the order of their ids as text. Image sizes come from two
answer columns. A malformed predicted cell raises :class:`InvalidPrediction` naming the row's id.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from mle_env.grading import rle
from mle_env.grading.metrics.registry import answer_column, register_metric

#: a k-d tree costs about this many voxels of distance transform per point it holds or queries
_POINTS_PER_VOXEL = 5


def _volume(runs: rle.RunTable, picked: np.ndarray, layer: np.ndarray, depth: int, height: int,
            width: int) -> np.ndarray:
    """The (depth, height, width) boolean volume whose slice ``k`` is the union of the masks of the rows
    ``r`` with ``layer[r] == k``, for the runs ``picked`` (indices into ``runs``). Masks are column-major: a
    slice's pixel p is at row p % height, column p // height."""
    area = height * width
    shift = layer[runs.rows[picked]] * area - runs.offsets[runs.rows[picked]]
    steps = np.zeros(depth * area + 1, dtype=np.int16)  # +1 where a run starts, -1 past its end
    np.add.at(steps, runs.starts[picked] + shift, 1)
    np.add.at(steps, runs.ends[picked] + shift, -1)
    covered = np.cumsum(steps[:-1], dtype=np.int16) > 0  # a pixel is covered by at most one run per row
    return covered.reshape(depth, width, height).transpose(0, 2, 1)


def _directed(source: np.ndarray, target: np.ndarray, shape: np.ndarray) -> float:
    """max over the voxels of ``source`` of the distance to the nearest voxel of ``target`` (coordinates
    divided by ``shape``; both non-empty), exactly.

    Only voxels outside ``target`` are measured (the others are at 0), and only against the surface of
    ``target`` (its voxels with a face neighbour outside it): the nearest voxel of a set is always on its
    surface, since one step from an inner voxel towards the point is closer. Few such voxels (a good
    prediction): a k-d tree query. Many (a speckled one): scipy's Euclidean distance transform of the
    box, whose cost is bounded by the box's size.
    """
    from scipy.ndimage import binary_erosion, distance_transform_edt, generate_binary_structure
    from scipy.spatial import cKDTree

    outside = source & ~target
    n_outside = int(np.count_nonzero(outside))
    if not n_outside:
        return 0.0
    surface = target & ~binary_erosion(target, generate_binary_structure(3, 1), border_value=1)
    if (n_outside + int(np.count_nonzero(surface))) * _POINTS_PER_VOXEL > target.size:
        return float(distance_transform_edt(~target, sampling=1.0 / shape)[outside].max())
    distances, _ = cKDTree(np.argwhere(surface) / shape).query(np.argwhere(outside) / shape)
    return float(distances.max())


def hausdorff_3d(predicted: np.ndarray, truth: np.ndarray, size_ratio_cap: float = 10.0) -> float:
    """Symmetric Hausdorff distance between two boolean volumes, voxel coordinates divided by the volume's
    shape (so the volume is a unit cube) and the distance by its diagonal sqrt(3).

    NaN when both are empty, 0 when they are equal, 1 when only one is empty or the prediction has more than
    ``size_ratio_cap`` times the true voxels. The value of scipy's ``directed_hausdorff`` on the voxel
    coordinates both ways, computed with a k-d tree on the surfaces (:func:`_directed`) inside the box that
    bounds both volumes, so a good prediction costs a fraction of a second instead of minutes.
    """
    n_pred, n_true = int(predicted.sum()), int(truth.sum())
    if n_pred == 0 and n_true == 0:
        return float("nan")
    if np.array_equal(predicted, truth):
        return 0.0
    if n_pred == 0 or n_true == 0 or n_pred > size_ratio_cap * n_true:
        return 1.0
    shape = np.asarray(truth.shape, dtype=float)
    either = predicted | truth
    box = []
    for axis in range(3):
        present = np.flatnonzero(either.any(axis=tuple(a for a in range(3) if a != axis)))
        box.append(slice(int(present[0]), int(present[-1]) + 1))
    predicted, truth = predicted[tuple(box)], truth[tuple(box)]
    return max(_directed(truth, predicted, shape), _directed(predicted, truth, shape)) / float(np.sqrt(3.0))


@register_metric("dice_hausdorff_3d", lower_is_better=False, needs_answers=True)
def dice_hausdorff_3d(
    y_true: np.ndarray, y_pred: np.ndarray, *, answers: pd.DataFrame, id_column: str = "id",
    shape_columns: Sequence[str] = ("image_height", "image_width"), slice_separator: str = "_slice_",
    order: str = "F", dice_weight: float = 0.4, hausdorff_weight: float = 0.6, size_ratio_cap: float = 10.0,
) -> float:
    """``dice_weight`` x mean Dice + ``hausdorff_weight`` x (1 - mean Hausdorff) (uw-madison).

    Dice is per row (one slice and class): 2|X n Y| / (|X| + |Y|), NaN when both masks are empty. The
    Hausdorff distance (:func:`hausdorff_3d`) is per volume: the rows whose ids share the text before
    ``slice_separator``, the classes of a slice united, the slices stacked in the order of their ids. Both
    means skip NaN. Image (height, width) per row: the answer columns ``shape_columns``.
    """
    if order != "F":
        raise ValueError(f"dice_hausdorff_3d reads column-major RLE (order 'F'), not {order!r}")
    height_col, width_col = shape_columns
    heights = answer_column(answers, height_col, "dice_hausdorff_3d").astype(float).astype(np.int64)
    widths = answer_column(answers, width_col, "dice_hausdorff_3d").astype(float).astype(np.int64)
    ids = [str(v) for v in answer_column(answers, id_column, "dice_hausdorff_3d")]
    pixels = heights * widths
    truth = rle.parse_column(np.ravel(y_true), pixels,
                             lambda i: f"the answers' mask for {id_column} {ids[i]!r} (damaged prepared data)")
    predicted = rle.parse_column(np.ravel(y_pred), pixels, lambda i: f"the mask for {id_column} {ids[i]!r}")

    overlap, total = rle.intersections(truth, predicted), truth.areas() + predicted.areas()
    dice = np.divide(2.0 * overlap, total, out=np.full(len(total), np.nan), where=total > 0)

    # a volume: the rows whose ids share the text before the separator, its slices their ids in text order
    members: dict[str, list[str]] = {}
    for slice_id in sorted(set(ids)):
        members.setdefault(slice_id.split(slice_separator)[0], []).append(slice_id)
    volume_of, layer_of = {}, {}
    for v, slice_ids in enumerate(members.values()):
        for k, slice_id in enumerate(slice_ids):
            volume_of[slice_id], layer_of[slice_id] = v, k
    row_volume = np.array([volume_of[i] for i in ids], dtype=np.int64)
    layer = np.array([layer_of[i] for i in ids], dtype=np.int64)
    by_volume = np.argsort(row_volume, kind="stable")
    row_starts = np.searchsorted(row_volume[by_volume], np.arange(len(members) + 1))
    distances = []
    for v, (name, slice_ids) in enumerate(members.items()):
        rows = by_volume[row_starts[v]:row_starts[v + 1]]
        height, width = int(heights[rows[0]]), int(widths[rows[0]])
        if (heights[rows] != height).any() or (widths[rows] != width).any():
            raise ValueError(f"dice_hausdorff_3d: the slices of volume {name!r} differ in size")
        volumes = [_volume(runs, np.flatnonzero(row_volume[runs.rows] == v), layer, len(slice_ids), height, width)
                   for runs in (predicted, truth)]
        distances.append(hausdorff_3d(*volumes, size_ratio_cap))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all NaN: the mean is NaN, which the grader rejects
        mean_dice, mean_distance = np.nanmean(dice), np.nanmean(np.asarray(distances, dtype=float))
    return float(dice_weight * mean_dice + hausdorff_weight * (1.0 - mean_distance))
