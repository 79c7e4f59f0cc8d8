"""Reference detection metrics (siim_map, coco_map), recomputed from their definitions in plain Python and
numpy, never calling mle_env.grading, scikit-learn or pycocotools (conventions: reference_metrics.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd


def _parse(cell: str, any_space: bool) -> list[tuple[str, float, list[float]]]:
    """"label conf x1 y1 x2 y2 ..." -> [(label, conf, [x1, y1, x2, y2]), ...]; "" -> []."""
    tokens = cell.split() if any_space else (cell.split(" ") if cell.strip() else [])
    assert len(tokens) % 6 == 0, cell
    return [(tokens[k], float(tokens[k + 1]), [float(v) for v in tokens[k + 2:k + 6]])
            for k in range(0, len(tokens), 6)]


def _corner_iou(a: list[float], b: list[float]) -> float:
    """IoU of two [x_min, y_min, x_max, y_max] boxes; 0 when the union is not positive."""
    inter = max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _average_precision(truth: list[int], scores: list[float]) -> float:
    """Sum over distinct score thresholds (high to low) of precision x the recall gained there."""
    total = sum(truth)
    ap, tp, seen, recall = 0.0, 0, 0, 0.0
    for threshold in sorted(set(scores), reverse=True):
        at = [t for t, s in zip(truth, scores, strict=True) if s == threshold]
        tp, seen = tp + sum(at), seen + len(at)
        ap += (tp / total - recall) * (tp / seen)
        recall = tp / total
    return ap


def siim_map(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Per class of the answers: pairs (1, conf) for a prediction matched greedily (by confidence) to the
    unmatched true box of highest IoU > threshold, (0, conf) unmatched, (1, 0) per missed box, (0, 0) for a row
    with neither; AP of the pooled pairs; mean over classes."""
    threshold = params["iou_threshold"]
    truths = [_parse(c, True) for c in answers.iloc[:, 0]]
    predictions = [_parse(c, True) for c in submission.iloc[:, 0]]
    aps = []
    for cls in sorted({label for row in truths for label, _, _ in row}):
        pairs: list[tuple[int, float]] = []
        for truth, prediction in zip(truths, predictions, strict=True):
            boxes = [box for label, _, box in truth if label == cls]
            used = [False] * len(boxes)
            mine = sorted((p for p in prediction if p[0] == cls), key=lambda p: -p[1])  # stable
            row: list[tuple[int, float]] = []
            for _, conf, box in mine:
                best, best_iou = -1, max(threshold, 0.0)
                for j, other in enumerate(boxes):
                    iou = _corner_iou(box, other)
                    if not used[j] and iou > best_iou:
                        best, best_iou = j, iou
                if best >= 0:
                    used[best] = True
                row.append((int(best >= 0), conf))
            row += [(1, 0.0)] * used.count(False)
            pairs += row or [(0, 0.0)]
        aps.append(_average_precision([t for t, _ in pairs], [s for _, s in pairs]))
    return float(np.mean(aps)) if aps else 0.0


def _coco_iou(a: list[float], b: list[float]) -> float:
    """IoU of two [x, y, width, height] boxes."""
    w = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    h = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    return w * h / (a[2] * a[3] + b[2] * b[3] - w * h)


def coco_map(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """COCO's bbox AP, area "all": per category and image the top max_detections predictions by score each
    take the unmatched true box of highest IoU >= t (the last of equals); per category, predictions of all
    images by score (stable, image order), 101-point interpolated precision of the monotone envelope; mean over
    thresholds and categories."""
    as_xywh, cap = params["boxes_as_xywh"], params["max_detections"]

    def boxes(cell: str) -> list[tuple[int, float, list[float], float]]:
        out = []
        for label, conf, (x1, y1, x2, y2) in _parse(cell, False):
            box = [x1, y1, x2, y2] if as_xywh else [x1, y1, x2 - x1, y2 - y1]
            out.append((int(float(label)), conf, box, (x2 - x1) * (y2 - y1)))
        return out

    truths = [boxes(c) for c in answers.iloc[:, 0]]
    predictions = [boxes(c) for c in submission.iloc[:, 0]]
    categories = sorted({c for row in truths for c, _, _, _ in row})
    recall_points = np.linspace(0, 1, 101)
    values = []
    for t in params["iou_thresholds"]:
        t = min(t, 1 - 1e-10)
        for cat in categories:
            scored: list[tuple[float, bool, bool]] = []  # (score, true positive, ignored)
            n_true = 0
            for truth, prediction in zip(truths, predictions, strict=True):
                gts = [b for c, _, b, _ in truth if c == cat]
                n_true += len(gts)
                dts = sorted((p for p in prediction if p[0] == cat), key=lambda p: -p[1])[:cap]
                used = [False] * len(gts)
                for _, score, box, area in dts:
                    best, best_iou = -1, t
                    for j, g in enumerate(gts):
                        iou = _coco_iou(box, g)
                        if not used[j] and iou >= best_iou:
                            best, best_iou = j, iou
                    if best >= 0:
                        used[best] = True
                    scored.append((score, best >= 0, best < 0 and not 0 <= area <= 1e10))
            scored = sorted((s for s in scored if not s[2]), key=lambda s: -s[0])
            tp = np.cumsum([s[1] for s in scored], dtype=float)
            fp = np.cumsum([not s[1] for s in scored], dtype=float)
            recall = tp / n_true
            precision = list(tp / (tp + fp + np.spacing(1)))
            for i in range(len(precision) - 1, 0, -1):
                precision[i - 1] = max(precision[i - 1], precision[i])
            curve = []
            for r in recall_points:
                k = int(np.searchsorted(recall, r, side="left"))
                curve.append(precision[k] if k < len(precision) else 0.0)
            values.append(float(np.mean(curve)))
    return float(np.mean(values))


def _rectangle(x: float, y: float, width: float, length: float, yaw: float) -> list[tuple[float, float]]:
    """Corners (counter-clockwise) of a width x length footprint centred at (x, y), its length along yaw."""
    c, s = np.cos(yaw), np.sin(yaw)
    return [(x + dl * c - dw * s, y + dl * s + dw * c)
            for dl, dw in ((length / 2, -width / 2), (length / 2, width / 2), (-length / 2, width / 2),
                           (-length / 2, -width / 2))]


def _clip(subject: list[tuple[float, float]], clip: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Sutherland-Hodgman: the part of convex polygon ``subject`` inside convex counter-clockwise ``clip``."""
    def inside(p: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> bool:
        return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) >= 0

    Point = tuple[float, float]

    def cross_point(p: Point, q: Point, a: Point, b: Point) -> Point:  # where lines pq and ab cross
        d = (p[0] - q[0]) * (a[1] - b[1]) - (p[1] - q[1]) * (a[0] - b[0])
        t = ((p[0] - a[0]) * (a[1] - b[1]) - (p[1] - a[1]) * (a[0] - b[0])) / d
        return (p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1]))

    out = subject
    for a, b in zip(clip, clip[1:] + clip[:1], strict=True):
        points, out = out, []
        for p, q in zip(points, points[1:] + points[:1], strict=True):
            if inside(q, a, b):
                if not inside(p, a, b):
                    out.append(cross_point(p, q, a, b))
                out.append(q)
            elif inside(p, a, b):
                out.append(cross_point(p, q, a, b))
        if not out:
            break
    return out


def _area(polygon: list[tuple[float, float]]) -> float:
    """Shoelace area."""
    return abs(sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(polygon, polygon[1:] + polygon[:1],
                                                                    strict=True))) / 2 if polygon else 0.0


def _iou_3d(a: list[float], b: list[float]) -> float:
    """3-D IoU of two (x, y, z, width, length, height, yaw) boxes: footprint overlap x height overlap."""
    base = _area(_clip(_rectangle(a[0], a[1], a[3], a[4], a[6]), _rectangle(b[0], b[1], b[3], b[4], b[6])))
    height = max(0.0, min(a[2] + a[5] / 2, b[2] + b[5] / 2) - max(a[2] - a[5] / 2, b[2] - b[5] / 2))
    inter = base * height
    return min(max(inter / (a[3] * a[4] * a[5] + b[3] * b[4] * b[5] - inter), 0.0), 1.0)


def _voc_ap(hits: list[int], n_true: int) -> float:
    """Area under the precision envelope: sum over ranks where recall grows of the gain x the best precision
    at that recall or beyond."""
    precision, recall, found = [], [], 0
    for k, hit in enumerate(hits, 1):
        found += hit
        precision.append(found / k)
        recall.append(found / n_true)
    ap, previous = 0.0, 0.0
    for k, r in enumerate(recall):
        if r > previous:
            ap += (r - previous) * max(precision[k:])
            previous = r
    return ap


def lyft_3d_map(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Per sample and threshold, per class of the sample's truth: predictions by confidence (stable) hit if
    their best-IoU true box of the class is above the threshold and not yet hit; VOC all-point AP; mean over
    classes, then over samples and thresholds."""
    def boxes(cell: str) -> list[tuple[str, float, list[float]]]:
        t = cell.split(" ") if cell.strip() else []
        return [(t[k + 8], float(t[k]), [float(v) for v in t[k + 1:k + 8]]) for k in range(0, len(t), 9)]

    values = []
    for truth_cell, prediction_cell in zip(answers.iloc[:, 0], submission.iloc[:, 0], strict=True):
        truth, prediction = boxes(truth_cell), boxes(prediction_cell)
        for threshold in params["iou_thresholds"]:
            aps = []
            for cls in sorted({c for c, _, _ in truth}):
                gts = [b for c, _, b in truth if c == cls]
                mine = sorted((p for p in prediction if p[0] == cls), key=lambda p: -p[1])
                taken, hits = [False] * len(gts), []
                for _, _, box in mine:
                    ious = [_iou_3d(box, g) for g in gts]
                    j = ious.index(max(ious))
                    hits.append(int(ious[j] > threshold and not taken[j]))
                    taken[j] = taken[j] or ious[j] > threshold
                aps.append(_voc_ap(hits, len(gts)))
            values.append(float(np.mean(aps)))
    return float(np.mean(values))


REFERENCES_DETECTION = {"siim_map": siim_map, "coco_map": coco_map, "lyft_3d_map": lyft_3d_map}
