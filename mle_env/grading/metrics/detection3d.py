"""3-D object detection: Lyft's per-sample mAP over IoU thresholds (higher is better).

Boxes are "confidence x y z width length height yaw class" groups (the 9-token prediction strings of
:mod:`.detection`'s parser, the label last); a box's footprint is a rectangle rotated by yaw about the
vertical axis, and IoU is the footprints' intersection area (shapely) times the overlap of the height
ranges, over the union of the volumes.
"""

from __future__ import annotations

import numpy as np

from mle_env.grading.metrics.detection import _groups
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


def _ious(predicted: np.ndarray, true: np.ndarray) -> np.ndarray:
    """(predictions, truths) matrix of 3-D IoU, clipped to [0, 1]."""
    import shapely

    area = shapely.area(shapely.intersection(_footprints(predicted)[:, None], _footprints(true)[None, :]))
    low = np.maximum(predicted[:, None, 3] - predicted[:, None, 6] / 2, true[None, :, 3] - true[None, :, 6] / 2)
    high = np.minimum(predicted[:, None, 3] + predicted[:, None, 6] / 2, true[None, :, 3] + true[None, :, 6] / 2)
    inter = area * np.maximum(high - low, 0.0)
    volume_p, volume_t = np.prod(predicted[:, 4:7], axis=1), np.prod(true[:, 4:7], axis=1)
    return np.clip(inter / (volume_p[:, None] + volume_t[None, :] - inter), 0, 1)


def _voc_ap(tp: np.ndarray, n_true: int) -> float:
    """All-point interpolated AP of predictions ranked by confidence (``tp``: 1 for a hit), as Lyft's script
    computes it: recall 0 and 1 padded with precision 0, the precision envelope summed over recall steps."""
    hits, misses = np.cumsum(tp), np.cumsum(1 - tp)
    recall = np.concatenate(([0.0], hits / n_true, [1.0]))
    precision = np.concatenate(([0.0], hits / np.maximum(hits + misses, np.finfo(np.float64).eps), [0.0]))
    precision = np.maximum.accumulate(precision[::-1])[::-1]
    steps = np.flatnonzero(recall[1:] != recall[:-1])
    return float(np.sum((recall[steps + 1] - recall[steps]) * precision[steps + 1]))


def _sample_maps(truth: tuple[np.ndarray, np.ndarray], prediction: tuple[np.ndarray, np.ndarray],
                 thresholds: np.ndarray) -> np.ndarray:
    """One sample's mAP at each threshold: the mean over the classes of its true boxes of each class's AP."""
    classes = sorted({str(c) for c in truth[0]})
    if not classes:
        raise ValueError("an answers row has no true box: its mAP is undefined")
    aps = np.zeros((len(classes), len(thresholds)))
    for k, cls in enumerate(classes):
        true = truth[1][truth[0] == cls]
        mine = prediction[1][prediction[0] == cls]
        if not len(mine):
            continue
        mine = mine[np.argsort(-mine[:, 0], kind="stable")]
        ious = _ious(mine, true)
        best, best_iou = np.argmax(ious, axis=1), np.max(ious, axis=1)
        for j, threshold in enumerate(thresholds):
            taken = np.zeros(len(true), dtype=bool)
            tp = np.zeros(len(mine))
            for i in np.flatnonzero(best_iou > threshold):
                if not taken[best[i]]:
                    taken[best[i]] = True
                    tp[i] = 1.0
            aps[k, j] = _voc_ap(tp, len(true))
    return aps.mean(axis=0)


@register_metric("lyft_3d_map", lower_is_better=False)
def lyft_3d_map(y_true: np.ndarray, y_pred: np.ndarray, iou_thresholds: list[float] | None = None) -> float:
    """Mean over samples (rows) and IoU thresholds of the sample's mAP (Lyft 3-D object detection).

    Cells hold "confidence x y z width length height yaw class" groups separated by single spaces (the
    answers' confidences are ignored); an empty cell has no boxes. Per sample and threshold, each class of
    the sample's true boxes gets Lyft's AP: its predictions in decreasing confidence (ties in written order)
    each find the true box of that class with the highest IoU; above the threshold and not yet taken, it is a
    hit, else a miss; AP is the all-point interpolated area under the precision envelope. Predicted classes
    absent from the sample's truth are ignored; a class without predictions scores 0. Thresholds default to
    0.5, 0.55, ..., 0.95. A cell that is not such groups of finite numbers with positive sizes raises
    :class:`InvalidPrediction`. Needs ``shapely``.
    """
    thresholds = np.array(iou_thresholds if iou_thresholds is not None else LYFT_IOU_THRESHOLDS, dtype=float)
    truths, predictions = _samples(y_true, "answer"), _samples(y_pred, "prediction")
    maps = [_sample_maps(t, p, thresholds) for t, p in zip(truths, predictions, strict=True)]
    return float(np.mean(maps))
