"""Segmentation metrics on run-length encoded masks (all higher is better).

Answers and predictions are RLE cells (:mod:`mle_env.grading.rle`), one image per row. Every image's
size comes from the parameters: ``shape = [height, width]`` for all rows, or ``shape_columns =
[height column, width column]`` naming answer columns. A malformed predicted cell raises
:class:`InvalidPrediction` naming the row's id (the answers' first column). The masks are never drawn:
areas and overlaps are computed on the runs, so a gigapixel image costs what its text costs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from mle_env.grading import rle
from mle_env.grading.metrics.registry import InvalidPrediction, answer_column, register_metric


def _pixels(answers: pd.DataFrame | None, n_rows: int, shape: Sequence[int] | None,
            shape_columns: Sequence[str] | None, metric: str) -> np.ndarray:
    """Pixels per image (int64, one per row) from ``shape`` or the answers' ``shape_columns``."""
    if (shape is None) == (shape_columns is None):
        raise ValueError(f"metric '{metric}' needs exactly one of shape=[height, width] and shape_columns")
    if shape is not None:
        height, width = (int(v) for v in shape)
        return np.full(n_rows, height * width, dtype=np.int64)
    height_col, width_col = shape_columns
    heights = answer_column(answers, height_col, metric).astype(np.int64)
    widths = answer_column(answers, width_col, metric).astype(np.int64)
    return heights * widths


def _runs(y_true: np.ndarray, y_pred: np.ndarray, answers: pd.DataFrame | None, shape: Sequence[int] | None,
          shape_columns: Sequence[str] | None, order: str, metric: str) -> tuple[rle.RunTable, rle.RunTable]:
    """The answers' and the predictions' runs, the predictions checked with errors naming the row's id."""
    if order not in rle.ORDERS:
        raise ValueError(f"metric '{metric}': order must be 'F' or 'C', not {order!r}")
    truths, predictions = np.ravel(y_true), np.ravel(y_pred)
    pixels = _pixels(answers, len(truths), shape, shape_columns, metric)

    def where(i: int) -> str:
        if answers is not None and len(answers.columns):
            return f"the mask for {answers.columns[0]} {answers.iloc[i, 0]!r}"
        return f"row {i + 1}"

    try:
        truth = rle.parse_column(truths, pixels, where)
    except InvalidPrediction as e:  # the answers' fault, not the submission's: a grader error
        raise ValueError(f"the answers hold a malformed RLE mask (damaged prepared data?): {e}") from None
    return truth, rle.parse_column(predictions, pixels, where)


@register_metric("rle_dice", lower_is_better=False, needs_answers=True)
def rle_dice(
    y_true: np.ndarray, y_pred: np.ndarray, *, answers: pd.DataFrame | None = None, mode: str = "per_image",
    both_empty: float = 1.0, order: str = "F", shape: Sequence[int] | None = None,
    shape_columns: Sequence[str] | None = None,
) -> float:
    """Dice 2|X n Y| / (|X| + |Y|) between predicted and true RLE masks (hubmap, contrails).

    ``mode="per_image"``: the mean over images of each image's Dice, an image with both masks empty
    scoring ``both_empty`` (hubmap: 1). ``mode="global"``: one Dice over the pixels of all images pooled,
    ``both_empty`` when no image has a pixel in either mask (contrails: NaN, which the grader rejects).
    """
    if mode not in ("per_image", "global"):
        raise ValueError(f"rle_dice: mode must be 'per_image' or 'global', not {mode!r}")
    truth, prediction = _runs(y_true, y_pred, answers, shape, shape_columns, order, "rle_dice")
    overlap = rle.intersections(truth, prediction)
    total = truth.areas() + prediction.areas()
    if mode == "global":
        return float(2 * overlap.sum() / total.sum()) if total.sum() else float(both_empty)
    scores = np.full(len(total), float(both_empty))
    nonempty = total > 0
    scores[nonempty] = 2 * overlap[nonempty] / total[nonempty]
    return float(scores.mean())


@register_metric("iou_sweep_precision_rle", lower_is_better=False, needs_answers=True)
def iou_sweep_precision_rle(
    y_true: np.ndarray, y_pred: np.ndarray, *, answers: pd.DataFrame | None = None,
    thresholds: Sequence[float] = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95),
    empty_prediction_iou: str = "zero", order: str = "F", shape: Sequence[int] | None = None,
    shape_columns: Sequence[str] | None = None,
) -> float:
    """Mean over images of the fraction of ``thresholds`` t with IoU > t, each mask one object (tgs).

    An image whose true mask is empty scores 1 if the prediction is empty too, else 0. Otherwise the
    IoU of the two masks is compared with every threshold. ``empty_prediction_iou`` is the IoU given to
    an empty prediction of a non-empty truth: ``"zero"`` (Kaggle's definition) or ``"truth_fraction"``
    (the true mask's share of the image: MLE-bench's histogram-based grader counts every pixel of an
    all-background prediction as predicted object).
    """
    if empty_prediction_iou not in ("zero", "truth_fraction"):
        raise ValueError(f"iou_sweep_precision_rle: empty_prediction_iou must be 'zero' or 'truth_fraction', "
                         f"not {empty_prediction_iou!r}")
    truth, prediction = _runs(y_true, y_pred, answers, shape, shape_columns, order, "iou_sweep_precision_rle")
    overlap = rle.intersections(truth, prediction)
    true_area, pred_area = truth.areas(), prediction.areas()
    union = true_area + pred_area - overlap
    iou = np.divide(overlap, union, out=np.zeros(len(union)), where=union > 0)
    if empty_prediction_iou == "truth_fraction":
        missed = (pred_area == 0) & (true_area > 0)
        iou[missed] = true_area[missed] / np.diff(truth.offsets)[missed]
    hits = (iou[:, None] > np.asarray(thresholds, dtype=float)[None, :]).mean(axis=1)
    scores = np.where(true_area == 0, (pred_area == 0).astype(float), hits)
    return float(scores.mean())


@register_metric("pixel_fbeta_rle", lower_is_better=False, needs_answers=True)
def pixel_fbeta_rle(
    y_true: np.ndarray, y_pred: np.ndarray, *, answers: pd.DataFrame | None = None, beta: float = 0.5,
    both_empty: float = 0.0, order: str = "C", shape: Sequence[int] | None = None,
    shape_columns: Sequence[str] | None = None,
) -> float:
    """Mean over rows of the pixel F-beta of each row's predicted mask against its true mask (vesuvius).

    F = (1 + b^2) TP / ((1 + b^2) TP + b^2 FN + FP) over the pixels of the image; 0 when TP = 0 and a
    mask is non-empty, ``both_empty`` when both masks are empty (scikit-learn's fbeta_score gives 0).
    """
    truth, prediction = _runs(y_true, y_pred, answers, shape, shape_columns, order, "pixel_fbeta_rle")
    tp = rle.intersections(truth, prediction).astype(float)
    fn = truth.areas() - tp
    fp = prediction.areas() - tp
    b2 = float(beta) ** 2
    denominator = (1 + b2) * tp + b2 * fn + fp
    scores = np.full(len(tp), float(both_empty))
    nonempty = denominator > 0
    scores[nonempty] = (1 + b2) * tp[nonempty] / denominator[nonempty]
    return float(scores.mean())
