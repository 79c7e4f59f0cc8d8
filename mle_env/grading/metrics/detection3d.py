"""3-D object detection: Lyft's per-sample mAP over IoU thresholds (higher is better).

Boxes are "confidence x y z width length height yaw class" groups (the 9-token prediction strings of
:mod:`.detection`'s parser, the label last); a box's footprint is a rectangle rotated by yaw about the
vertical axis, and IoU is the footprints' intersection area (shapely) times the overlap of the height
ranges, over the union of the volumes.
"""

from __future__ import annotations

from itertools import chain

import numpy as np

from mle_env.grading.metrics.detection import _groups, _segments, _starts
from mle_env.grading.metrics.registry import InvalidPrediction, register_metric, text

#: Kaggle's thresholds for this competition
LYFT_IOU_THRESHOLDS = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)


def _samples(cells: np.ndarray, what: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each cell's boxes as (class names, (boxes, 8) floats: confidence x y z width length height yaw); an
    empty cell has none. A cell that does not parse, a value that is not finite or a size that is not
    positive raises :class:`InvalidPrediction` naming its row."""
    out = []
    for row, cell in enumerate(np.ravel(cells), 1):
        value = text(cell)
        if not value.strip():
            out.append((np.array([], dtype=object), np.zeros((0, 8))))
            continue
        try:
            labels, values = _groups(value, 9, label_at=8)
        except ValueError:
            raise InvalidPrediction(f"row {row}: the {what} must be 'confidence x y z width length height yaw class' "
                                    "groups of numbers and a class name, separated by single spaces") from None
        if not np.isfinite(values).all():
            raise InvalidPrediction(f"row {row}: the {what} holds a value that is not a finite number")
        if (values[:, 4:7] <= 0).any():
            raise InvalidPrediction(f"row {row}: the {what} has a box whose width, length or height is not positive")
        out.append((labels, values))
    return out


def _footprints(boxes: np.ndarray) -> np.ndarray:
    """Shapely polygons of the boxes' ground rectangles; cos and sin of yaw as the rotation matrix of the
    unit quaternion (cos yaw/2, 0, 0, sin yaw/2) gives them, as the reference grader computes them."""
    import shapely

    x, y, width, length, yaw = boxes[:, 1], boxes[:, 2], boxes[:, 4], boxes[:, 5], boxes[:, 7]
    w, z = np.cos(yaw / 2), np.sin(yaw / 2)
    cos, sin = w * w - z * z, z * w + w * z
    along_x, along_y, across_x, across_y = length / 2 * cos, length / 2 * sin, width / 2 * sin, width / 2 * cos
    corners = np.stack([
        np.stack([x + along_x + across_x, y + along_y - across_y], axis=-1),
        np.stack([x + along_x - across_x, y + along_y + across_y], axis=-1),
        np.stack([x - along_x - across_x, y - along_y + across_y], axis=-1),
        np.stack([x - along_x + across_x, y - along_y - across_y], axis=-1),
    ], axis=1)
    return shapely.polygons(np.concatenate([corners, corners[:, :1]], axis=1))


def _boxes(cells: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The boxes of all cells end to end: (row of each box, class names, (boxes, 8) floats: confidence x y z
    width length height yaw). Read in one pass over every token; a column with any malformed cell is read
    again row by row (:func:`_samples`), which raises :class:`InvalidPrediction` naming the first bad row."""
    texts = [text(cell) for cell in np.ravel(cells)]
    tokens = [value.split(" ") if value.strip() else [] for value in texts]
    counts = np.fromiter(map(len, tokens), np.int64, len(tokens))
    try:
        if (counts % 9).any():
            raise ValueError("not groups of 9 tokens")
        table = np.array(list(chain.from_iterable(tokens)), dtype=object).reshape(-1, 9)
        values = table[:, :8].astype(float)  # float() of each token, as the row-by-row reading takes them
        if not np.isfinite(values).all() or (values[:, 4:7] <= 0).any():
            raise ValueError("a value out of range")
    except ValueError:
        _samples(cells, what)
        raise AssertionError("unreachable: the one-pass and the row-by-row readings disagree") from None
    return np.repeat(np.arange(len(texts)), counts // 9), table[:, 8].astype(str), values


def _pair_ious(predicted: np.ndarray, true: np.ndarray) -> np.ndarray:
    """3-D IoU of box ``predicted[k]`` with box ``true[k]`` for every k, clipped to [0, 1].

    Only pairs whose height ranges overlap and whose footprints' circumscribed circles meet are handed to
    shapely; for the others the intersection is empty, so their IoU is 0, as shapely would make it.
    """
    import shapely

    low = np.maximum(predicted[:, 3] - predicted[:, 6] / 2, true[:, 3] - true[:, 6] / 2)
    high = np.minimum(predicted[:, 3] + predicted[:, 6] / 2, true[:, 3] + true[:, 6] / 2)
    height = np.maximum(high - low, 0.0)
    reach = (np.hypot(predicted[:, 4], predicted[:, 5]) + np.hypot(true[:, 4], true[:, 5])) / 2
    near = np.hypot(predicted[:, 1] - true[:, 1], predicted[:, 2] - true[:, 2]) <= reach * (1 + 1e-9) + 1e-9
    candidates = np.flatnonzero((height > 0) & near)
    area = np.zeros(len(predicted))
    if len(candidates):
        footprints = shapely.intersection(_footprints(predicted[candidates]), _footprints(true[candidates]))
        area[candidates] = shapely.area(footprints)
    inter = area * height
    volume_p, volume_t = np.prod(predicted[:, 4:7], axis=1), np.prod(true[:, 4:7], axis=1)
    return np.clip(inter / (volume_p + volume_t - inter), 0, 1)


def _envelope_areas(hits: np.ndarray, group: np.ndarray, n_true: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lyft's all-point interpolated AP of each group of ranked predictions, at every threshold: ``hits``
    (predictions, thresholds) is 1 for a hit, in rank order; ``group`` the non-decreasing group index;
    ``n_true`` the true boxes per group. Returns (groups, thresholds) APs and the groups they are for. Per
    group, as Lyft's script computes it: the recall and precision curve padded with (0, 0) in front and
    (1, 0) behind, the precision envelope (the maximum of the precisions at and after each point) summed
    over the steps where recall changes, in order."""
    import pandas as pd

    groups, per_group = np.unique(group, return_counts=True)
    owner, rank = _segments(per_group)
    cumulative = np.cumsum(hits, axis=0)
    found = cumulative - (cumulative - hits)[_starts(per_group)][owner]
    # the curve of group k fills positions start[k] .. start[k] + per_group[k] + 1, its two pads included
    length = per_group + 2
    start = _starts(length)
    curve_owner = np.repeat(np.arange(len(groups)), length)
    shape = (int(length.sum()), hits.shape[1])
    curve_recall, curve_precision = np.zeros(shape), np.zeros(shape)
    curve_recall[start + length - 1] = 1.0
    inner = start[owner] + rank + 1
    curve_recall[inner] = found / n_true[groups][owner][:, None]
    curve_precision[inner] = found / (rank + 1.0)[:, None]
    envelope = pd.DataFrame(curve_precision[::-1]).groupby(curve_owner[::-1]).cummax().to_numpy()[::-1]
    gain = np.zeros_like(curve_recall)
    gain[1:] = curve_recall[1:] - curve_recall[:-1]
    gain[start] = 0.0  # a group's first point has no step before it
    # summed one term after another, group by group; a point where recall stays adds an exact 0
    return np.add.reduceat(gain * envelope, start, axis=0), groups


@register_metric("lyft_3d_map", lower_is_better=False)
def lyft_3d_map(y_true: np.ndarray, y_pred: np.ndarray, iou_thresholds: list[float] | None = None) -> float:
    """Mean over samples (rows) and IoU thresholds of the sample's mAP (Lyft 3-D object detection).

    Cells hold "confidence x y z width length height yaw class" groups separated by single spaces (the
    answers' confidences are ignored); an empty cell has no boxes. Per sample and threshold, each class of
    the sample's true boxes gets Lyft's AP: its predictions in decreasing confidence (ties in written order)
    each find the true box of that class with the highest IoU (the first of equals); above the threshold and
    not yet taken, it is a hit, else a miss; AP is the all-point interpolated area under the precision
    envelope. Predicted classes absent from the sample's truth are ignored; a class without predictions
    scores 0. Thresholds default to 0.5, 0.55, ..., 0.95. A cell that is not such groups of finite numbers
    with positive sizes raises :class:`InvalidPrediction`; an answers row without a box, ValueError. Needs
    ``shapely``. All samples are computed at once: the cost is that of the box pairs, not of the rows.
    """
    thresholds = np.array(iou_thresholds if iou_thresholds is not None else LYFT_IOU_THRESHOLDS, dtype=float)
    t_sample, t_label, t_box = _boxes(y_true, "answer")
    p_sample, p_label, p_box = _boxes(y_pred, "prediction")
    n_samples = len(np.ravel(y_true))
    if len(np.unique(t_sample)) < n_samples:
        raise ValueError("an answers row has no true box: its mAP is undefined")

    # a group: one sample's true boxes of one class, in written order, and its predictions of that class
    names, codes = np.unique(np.concatenate([t_label, p_label]), return_inverse=True)
    t_key = t_sample * len(names) + codes[:len(t_label)]
    p_key = p_sample * len(names) + codes[len(t_label):]
    group_keys, t_group, n_true = np.unique(t_key, return_inverse=True, return_counts=True)
    t_order = np.argsort(t_group, kind="stable")
    t_box, t_start = t_box[t_order], _starts(n_true)
    p_group = np.minimum(np.searchsorted(group_keys, p_key), len(group_keys) - 1)
    scored = np.flatnonzero(group_keys[p_group] == p_key)
    ranked = scored[np.lexsort((-p_box[scored, 0], p_group[scored]))]  # stable: ties keep written order
    p_group, p_box = p_group[ranked], p_box[ranked]

    aps = np.zeros((len(group_keys), len(thresholds)))
    if len(ranked):
        # every prediction against every true box of its group
        pair_pred, within = _segments(n_true[p_group])
        pair_true = t_start[p_group][pair_pred] + within
        ious = _pair_ious(p_box[pair_pred], t_box[pair_true])
        first_pair = _starts(n_true[p_group])
        best_iou = np.maximum.reduceat(ious, first_pair)
        at_best = np.where(ious == best_iou[pair_pred], np.arange(len(ious)), len(ious))
        best_true = pair_true[np.minimum.reduceat(at_best, first_pair)]
        hits = np.zeros((len(ranked), len(thresholds)))
        for j, threshold in enumerate(thresholds):
            over = np.flatnonzero(best_iou > threshold)
            _, first = np.unique(best_true[over], return_index=True)  # the first claim on a true box hits
            hits[over[first], j] = 1.0
        areas, groups = _envelope_areas(hits, p_group, n_true)
        aps[groups] = areas

    group_sample = group_keys // len(names)
    classes = np.bincount(group_sample, minlength=n_samples)
    maps = np.stack([np.bincount(group_sample, weights=aps[:, j], minlength=n_samples) / classes
                     for j in range(len(thresholds))], axis=1)
    return float(np.mean(maps))
