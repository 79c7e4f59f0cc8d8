"""Metrics on predicted probabilities: log losses (plain, multi-class, weighted per label) and KL divergence
(all lower is better)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from mle_env.grading.metrics.registry import LOG_LOSS_EPS, answer_column, as_2d, register_metric, text


@register_metric("log_loss", lower_is_better=True)
def binary_log_loss(y_true: np.ndarray, y_pred: np.ndarray, eps: float = LOG_LOSS_EPS) -> float:
    """Binary log loss of the probability of the positive class, clipped to [eps, 1 - eps] as Kaggle does."""
    y = np.ravel(y_true).astype(float)
    p = np.clip(np.ravel(y_pred).astype(float), eps, 1 - eps)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


@register_metric("multiclass_log_loss", lower_is_better=True, needs_classes=True)
def multiclass_log_loss(
    y_true: np.ndarray, y_pred: np.ndarray, classes: Sequence[str] = (), eps: float = LOG_LOSS_EPS,
    renormalise: bool = True,
) -> float:
    """Multi-class log loss as Kaggle computes it: clip to [eps, 1 - eps], then divide each row by its sum.

    ``y_true`` is either one-hot (same columns as ``y_pred``) or one label per row, matched against
    ``classes`` (the submission's probability column names). MLE-bench's graders call scikit-learn
    (>= 1.5), which clips at the float64 machine epsilon and does not renormalise: ``eps = 2.220446049250313e-16``
    and ``renormalise = false`` reproduce it.
    """
    p = np.clip(as_2d(y_pred).astype(float), eps, 1 - eps)
    if renormalise:
        p = p / p.sum(axis=1, keepdims=True)
    if y_true.ndim == 1 or y_true.shape[1] == 1:
        labels = np.ravel(y_true).astype(str)
        index = {str(c): i for i, c in enumerate(classes)}
        unknown = sorted(set(labels) - set(index))
        if unknown:
            raise ValueError(f"answers hold labels with no submission column: {unknown[:5]}")
        onehot = np.zeros_like(p)
        onehot[np.arange(len(labels)), [index[v] for v in labels]] = 1.0
    else:
        onehot = y_true.astype(float)
    return float(-np.mean(np.sum(onehot * np.log(p), axis=1)))


@register_metric("kl_divergence", lower_is_better=True)
def kl_divergence(y_true: np.ndarray, y_pred: np.ndarray, *, eps: float = LOG_LOSS_EPS) -> float:
    """Mean over rows of KL(y || p) = sum of y * ln(y / p) over the cells where y != 0 (hms).

    ``y_true`` holds non-negative weights per class (votes), each row divided by its sum first (a row
    summing to 0 gives NaN); ``y_pred`` holds probabilities, clipped to [eps, 1 - eps] and not
    renormalised. Cells with y = 0 add 0, as scipy's ``rel_entr`` does.
    """
    y = as_2d(y_true).astype(float)
    y = y / y.sum(axis=1, keepdims=True)
    p = np.clip(as_2d(y_pred).astype(float), eps, 1 - eps)
    nonzero = y != 0  # NaN (a row summing to 0) is nonzero, so the score is NaN as in MLE-bench
    terms = np.zeros_like(y)
    terms[nonzero] = y[nonzero] * np.log(y[nonzero] / p[nonzero])
    return float(np.mean(terms.sum(axis=1)))


@register_metric("weighted_multilabel_log_loss", lower_is_better=True, needs_answers=True)
def weighted_multilabel_log_loss(
    y_true: np.ndarray, y_pred: np.ndarray, *, answers: pd.DataFrame, group_column: str, label_column: str,
    negative_weights: Mapping[str, float], positive_weights: Mapping[str, float], eps: float = LOG_LOSS_EPS,
) -> float:
    """Mean over groups of a weighted binary log loss over the group's rows (rsna-cervical-spine).

    Each row is one (group, label) pair: ``answers[group_column]`` names the group (a study),
    ``answers[label_column]`` the label it predicts (``patient_overall``, ``C1`` ...). A row's loss is the
    binary log loss of its probability, clipped to [eps, 1 - eps]; its weight is
    ``positive_weights[label]`` when the truth is 1, else ``negative_weights[label]``. A group scores
    sum(weight * loss) / sum(weight), and the metric is the mean over groups.
    """
    y = np.ravel(y_true).astype(float)
    p = np.clip(np.ravel(y_pred).astype(float), eps, 1 - eps)
    labels = [text(v) for v in answer_column(answers, label_column, "weighted_multilabel_log_loss")]
    unknown = sorted(set(labels) - (set(negative_weights) & set(positive_weights)))
    if unknown:
        raise ValueError(f"labels {unknown[:5]} have no weight in negative_weights and positive_weights")
    w_neg = np.array([float(negative_weights[v]) for v in labels])
    w_pos = np.array([float(positive_weights[v]) for v in labels])
    weights = y * w_pos + (1 - y) * w_neg
    loss = -(y * np.log(p) + (1 - y) * np.log(1 - p)) * weights
    groups = answer_column(answers, group_column, "weighted_multilabel_log_loss")
    frame = pd.DataFrame({"group": groups, "loss": loss, "weight": weights})
    sums = frame.groupby("group", sort=False)[["loss", "weight"]].sum()
    return float(np.mean(sums["loss"].to_numpy() / sums["weight"].to_numpy()))
