"""Object-detection metrics on prediction strings (all higher is better)."""

from __future__ import annotations

import numpy as np

from mle_env.grading.metrics.registry import InvalidPrediction, register_metric, text


def _groups(cell: str, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Split "label v1 ... label v1 ..." on single spaces into labels and a (groups, width - 1) float array."""
    tokens = cell.split(" ")
    if len(tokens) % width:
        raise ValueError(f"{len(tokens)} tokens do not form groups of {width}")
    labels = np.array(tokens[0::width], dtype=object)
    values = np.array([tokens[i::width] for i in range(1, width)], dtype=float).T.reshape(len(labels), width - 1)
    return labels, values


def _page_counts(truth: str, prediction: str) -> tuple[int, int, int]:
    """(TP, FP, FN) of one page: each true box in order takes the first unused prediction with its label
    and the point strictly inside it."""
    if not truth:
        return 0, (len(prediction.split(" ")) // 3 if prediction else 0), 0
    if not prediction:
        return 0, 0, len(truth.split(" ")) // 5
    truth_labels, boxes = _groups(truth, 5)
    labels, points = _groups(prediction, 3)
    unused = np.ones(len(labels), dtype=bool)
    tp = 0
    for label, (x, y, width, height) in zip(truth_labels, boxes, strict=True):
        match = ((x < points[:, 0]) & (points[:, 0] < x + width) & (y < points[:, 1]) & (points[:, 1] < y + height)
                 & (labels == label) & unused)
        if match.any():
            tp += 1
            unused[np.argmax(match)] = False
    return tp, int(unused.sum()), len(truth_labels) - tp


@register_metric("point_in_box_f1", lower_is_better=False)
def point_in_box_f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """F1 of predicted character centres against true boxes, TP/FP/FN pooled over pages (kuzushiji).

    Answers hold "label x y width height" groups, predictions "label x y" groups, single-space separated;
    an empty (or NaN) cell is a page with none. A point matches a box with the same label when
    x < px < x + width and y < py < y + height; each true box, in order, takes the first unused matching
    prediction (TP) or counts a FN; predictions left unused are FP. F1 = 2PR / (P + R), and 0 when
    precision or recall is 0 or undefined. A prediction that is not "label x y" groups with numeric x and y
    raises :class:`InvalidPrediction`.
    """
    truths, predictions = [text(t) for t in np.ravel(y_true)], [text(p) for p in np.ravel(y_pred)]
    for row, prediction in enumerate(predictions, 1):
        if prediction:
            try:
                _groups(prediction, 3)
            except ValueError:
                message = f"row {row}: the prediction must be 'label x y' groups with numeric x and y"
                raise InvalidPrediction(message) from None
    tp = fp = fn = 0
    for truth, prediction in zip(truths, predictions, strict=True):
        page = _page_counts(truth, prediction)
        tp, fp, fn = tp + page[0], fp + page[1], fn + page[2]
    if tp == 0:
        return 0.0
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    return 2 * precision * recall / (precision + recall)
