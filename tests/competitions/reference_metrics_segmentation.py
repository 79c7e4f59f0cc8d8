"""Reference segmentation metrics on RLE masks, recomputed from their definitions (see reference_metrics.py).

Plain Python: each RLE text is expanded into the set of pixel indices it covers (1-based "start length"
pairs; the pixel order does not change areas or overlaps, so it is never needed), and the metrics are
counted on those sets. Never calls mle_env or scikit-learn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd


def pixel_set(text: str, n_pixels: int) -> set[int]:
    """The 0-based pixel indices an RLE text covers; "" and "-" are empty. Asserts it is well formed."""
    text = text.strip()
    if text in ("", "-"):
        return set()
    numbers = [int(token) for token in text.split()]
    assert len(numbers) % 2 == 0, "odd number of tokens"
    pixels: set[int] = set()
    previous_start = 0
    for k in range(0, len(numbers), 2):
        start, length = numbers[k], numbers[k + 1]
        assert start >= 1 and length >= 1 and start >= previous_start, "not positive, or unsorted"
        previous_start = start
        for pixel in range(start - 1, start - 1 + length):
            assert pixel not in pixels and pixel < n_pixels, "overlap, or past the image"
            pixels.add(pixel)
    return pixels


def _images(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> list[tuple[set, set, int]]:
    """(true pixels, predicted pixels, image size) per row."""
    rows = []
    for i in range(len(answers)):
        if params.get("shape") is not None:
            height, width = params["shape"]
        else:
            height_col, width_col = params["shape_columns"]
            height, width = int(answers[height_col].iloc[i]), int(answers[width_col].iloc[i])
        size = int(height) * int(width)
        rows.append((pixel_set(str(answers.iloc[i, 0]), size), pixel_set(str(submission.iloc[i, 0]), size), size))
    return rows


def rle_dice(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Dice 2|X & Y| / (|X| + |Y|): per image then averaged, or over all images' pixels pooled."""
    images = _images(answers, submission, params)
    empty = float(params.get("both_empty", 1.0))
    if params.get("mode", "per_image") == "global":
        shared = sum(len(t & p) for t, p, _ in images)
        total = sum(len(t) + len(p) for t, p, _ in images)
        return 2 * shared / total if total else empty
    return sum(2 * len(t & p) / (len(t) + len(p)) if t or p else empty for t, p, _ in images) / len(images)


def iou_sweep_precision_rle(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Per image: 1 if both empty, 0 if only the truth is empty, else the share of thresholds t with IoU > t."""
    thresholds = params.get("thresholds", [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95])
    scores = []
    for truth, prediction, size in _images(answers, submission, params):
        if not truth:
            scores.append(1.0 if not prediction else 0.0)
            continue
        if not prediction and params.get("empty_prediction_iou", "zero") == "truth_fraction":
            iou = len(truth) / size  # the all-background prediction taken as covering the image
        else:
            iou = len(truth & prediction) / len(truth | prediction)
        scores.append(sum(iou > t for t in thresholds) / len(thresholds))
    return sum(scores) / len(scores)


def pixel_fbeta_rle(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Per image F-beta from precision TP/(TP+FP) and recall TP/(TP+FN) (0 when undefined); mean over rows."""
    beta2 = float(params.get("beta", 0.5)) ** 2
    scores = []
    for truth, prediction, _ in _images(answers, submission, params):
        tp = len(truth & prediction)
        if not truth and not prediction:
            scores.append(float(params.get("both_empty", 0.0)))
            continue
        precision = tp / len(prediction) if prediction else 0.0
        recall = tp / len(truth) if truth else 0.0
        denominator = beta2 * precision + recall
        scores.append((1 + beta2) * precision * recall / denominator if denominator else 0.0)
    return sum(scores) / len(scores)


REFERENCES_SEGMENTATION = {
    "rle_dice": rle_dice,
    "iou_sweep_precision_rle": iou_sweep_precision_rle,
    "pixel_fbeta_rle": pixel_fbeta_rle,
}
