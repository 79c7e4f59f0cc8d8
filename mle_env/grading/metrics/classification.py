"""Metrics on predicted labels and label sets, and the probabilistic F-beta (all higher is better)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mle_env.grading.metrics.registry import label_codes, register_metric, text


@register_metric("accuracy", lower_is_better=False)
def accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Fraction of rows (of all cells, for several columns) predicted exactly."""
    truth, predicted = label_codes(y_true, y_pred)
    return float(np.mean(truth == predicted))


@register_metric("quadratic_weighted_kappa", lower_is_better=False)
def quadratic_weighted_kappa(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Cohen's kappa with quadratic weights (scikit-learn cohen_kappa_score)."""
    from sklearn.metrics import cohen_kappa_score

    return cohen_kappa_score(np.ravel(y_true).astype(int), np.ravel(y_pred).astype(int), weights="quadratic")


@register_metric("f1", lower_is_better=False)
def f1(y_true: np.ndarray, y_pred: np.ndarray, average: str = "binary", pos_label: Any = 1) -> float:
    """F1 score (scikit-learn f1_score) with the given ``average`` (binary, micro, macro, weighted)."""
    from sklearn.metrics import f1_score

    yt, yp = np.ravel(y_true), np.ravel(y_pred)
    if average != "binary":
        yt, yp = label_codes(yt, yp)
    return f1_score(yt, yp, average=average, pos_label=pos_label)


@register_metric("mcc", lower_is_better=False)
def mcc(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Matthews correlation coefficient (scikit-learn matthews_corrcoef) of the labels, in [-1, 1].

    Labels compare as text with 1 and 1.0 the same; a constant truth or prediction gives 0.
    """
    from sklearn.metrics import matthews_corrcoef

    return matthews_corrcoef(*label_codes(y_true, y_pred))


@register_metric("multilabel_micro_f1", lower_is_better=False)
def multilabel_micro_f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Micro-averaged F1 over (row, label) cells of whitespace-separated label sets.

    As MLE-bench's scikit-learn MultiLabelBinarizer + ``f1_score(average="micro")``: the vocabulary is
    the set of labels in the answers; predicted labels outside it are ignored; a label repeated in one
    cell counts once; an empty or NaN cell is the empty set. Score = 2 TP / (2 TP + FP + FN), and 0 when
    that is 0 / 0 (no label anywhere).
    """
    truths = [set(text(t).split()) for t in np.ravel(y_true)]
    vocabulary = set().union(*truths)
    tp = fp = fn = 0
    for truth, cell in zip(truths, np.ravel(y_pred), strict=True):
        predicted = set(text(cell).split()) & vocabulary
        hits = len(truth & predicted)
        tp, fp, fn = tp + hits, fp + len(predicted) - hits, fn + len(truth) - hits
    denominator = 2 * tp + fp + fn
    return 2 * tp / denominator if denominator else 0.0


@register_metric("probabilistic_fbeta", lower_is_better=False)
def probabilistic_fbeta(y_true: np.ndarray, y_pred: np.ndarray, beta: float = 1.0) -> float:
    """Probabilistic F-beta: the F-beta score of soft counts of true and false positives (rsna-breast).

    Predictions are clipped to [0, 1]; cTP is their sum over the rows whose truth is positive (non-zero),
    cFP their sum over the other rows. Precision is cTP / (cTP + cFP), recall cTP / (number of positive
    rows), and the score (1 + beta^2) P R / (beta^2 P + R). It is 0 when precision or recall is 0 or
    undefined (no positive row, or every prediction 0), as in Kaggle's reference code.
    """
    positive = np.ravel(y_true).astype(float) != 0
    p = np.clip(np.ravel(y_pred).astype(float), 0.0, 1.0)
    ctp, cfp, n_positive = float(p[positive].sum()), float(p[~positive].sum()), int(positive.sum())
    if n_positive == 0 or ctp + cfp == 0:
        return 0.0
    precision, recall = ctp / (ctp + cfp), ctp / n_positive
    if precision <= 0 or recall <= 0:
        return 0.0
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall)


@register_metric("classification_error", lower_is_better=True)
def classification_error(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Top-1 classification error, 1 - accuracy, on integer labels (lower is better; 0 is perfect).

    A predicted cell may list several labels separated by whitespace (a top-k answer); only its first token
    counts, and it must be an integer (as MLE-bench's ``int(cell.split()[0])``). An empty cell or a first
    token that is not an integer (``3.0``, ``cat``) makes the submission invalid.
    """
    from mle_env.grading.metrics.registry import InvalidPrediction

    truth = [int(float(v)) if isinstance(v, (float, np.floating)) else int(v) for v in np.ravel(y_true)]
    predicted, bad = [], []
    for cell in np.ravel(y_pred):
        tokens = text(cell).split()
        try:
            predicted.append(int(tokens[0]))
        except (IndexError, ValueError):
            bad.append(text(cell))
    if bad:
        raise InvalidPrediction(
            f"{len(bad)} predicted cell(s) do not start with an integer label, e.g. {bad[0][:40]!r}; "
            "write a category id (optionally followed by more, space-separated) in every row"
        )
    return sum(t != p for t, p in zip(truth, predicted, strict=True)) / len(truth)
