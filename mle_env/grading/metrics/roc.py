"""Metrics built on the ROC curve (all higher is better)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from mle_env.grading.metrics.registry import answer_column, as_2d, as_float, register_metric

JIGSAW_IDENTITIES = (
    "male", "female", "homosexual_gay_or_lesbian", "christian", "jewish", "muslim", "black", "white",
    "psychiatric_or_mental_illness",
)


def _roc_auc(y_true: np.ndarray, y_score: np.ndarray) -> float:
    """scikit-learn's ROC AUC; a ValueError when ``y_true`` holds one class (newer versions return NaN)."""
    from sklearn.metrics import roc_auc_score

    if len(np.unique(y_true)) < 2:
        raise ValueError("ROC AUC is undefined when the answers hold one class only")
    return float(roc_auc_score(y_true, y_score))


@register_metric("auc", lower_is_better=False)
def auc(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Area under the ROC curve (scikit-learn roc_auc_score); several columns are flattened into one."""
    return _roc_auc(np.ravel(y_true), np.ravel(y_pred))


@register_metric("mean_columnwise_auc", lower_is_better=False)
def mean_columnwise_auc(y_true: np.ndarray, y_pred: np.ndarray, ignore_label: float | None = None) -> float:
    """Mean over target columns of ROC AUC; rows whose answer equals ``ignore_label`` are left out per column."""
    y_true, y_pred = as_2d(y_true), as_2d(y_pred)
    scores = []
    for j in range(y_true.shape[1]):
        keep = np.ones(len(y_true), bool) if ignore_label is None else y_true[:, j] != ignore_label
        scores.append(_roc_auc(y_true[keep, j], y_pred[keep, j]))
    return float(np.mean(scores))


@register_metric("weighted_auc_tpr_bands", lower_is_better=False)
def weighted_auc_tpr_bands(
    y_true: np.ndarray, y_pred: np.ndarray, *, edges: Sequence[float] = (0.0, 0.4, 1.0),
    weights: Sequence[float] = (2.0, 1.0),
) -> float:
    """ROC AUC with horizontal TPR bands weighted (alaska2), normalised to [0, 1].

    The ROC curve (scikit-learn ``roc_curve``, label 1 positive) gets a point at each band edge missing
    from its TPR values, its FPR interpolated linearly at the first segment crossing the edge. For the
    band ``[edges[i], edges[i+1]]`` the curve's points with TPR inside it, closed by the point
    (FPR 1, TPR ``edges[i+1]``), are shifted down by ``edges[i]`` and integrated with the trapezoid rule;
    a band with no points adds 0. Score = sum of ``weights[i]`` x band area / sum of band width x weight.
    """
    from sklearn.metrics import auc as trapezoid_area
    from sklearn.metrics import roc_curve

    if len(weights) != len(edges) - 1:
        raise ValueError(f"weighted_auc_tpr_bands needs one weight per band: {len(edges) - 1}, got {len(weights)}")
    fpr, tpr, _ = roc_curve(as_float(y_true), as_float(y_pred), pos_label=1, drop_intermediate=True)
    for edge in edges:
        i = int(np.searchsorted(tpr, edge, side="right"))  # first point with TPR above the edge
        if edge not in tpr and 0 < i < len(tpr):
            x = fpr[i - 1] + (fpr[i] - fpr[i - 1]) * (edge - tpr[i - 1]) / (tpr[i] - tpr[i - 1])
            fpr, tpr = np.insert(fpr, i, x), np.insert(tpr, i, edge)
    total = 0.0
    for low, high, weight in zip(edges[:-1], edges[1:], weights, strict=True):
        band = (tpr >= low) & (tpr <= high)
        if band.any():
            total += weight * trapezoid_area(np.append(fpr[band], 1.0), np.append(tpr[band], high) - low)
    return total / float(np.dot(np.diff(edges), weights))


@register_metric("jigsaw_bias_auc", lower_is_better=False, needs_answers=True)
def jigsaw_bias_auc(
    y_true: np.ndarray, y_pred: np.ndarray, *, answers: pd.DataFrame,
    identity_columns: Sequence[str] = JIGSAW_IDENTITIES, power: float = -5.0,
    weights: Sequence[float] = (0.25, 0.25, 0.25, 0.25), threshold: float = 0.5, binarize_predictions: bool = False,
) -> float:
    """Jigsaw's bias-weighted AUC: ``weights[0]`` x overall AUC + sum over the three bias AUCs of
    ``weights[1..3]`` x their power mean over the identities.

    ``y_true`` (toxicity) and each identity column of ``answers`` are binarised as value >= ``threshold``
    (NaN counts as 0). Per identity: subgroup AUC on rows with it; BPSN AUC on non-toxic rows with it and
    toxic rows without it; BNSP AUC on toxic rows with it and non-toxic rows without it. Power mean =
    (mean of AUC ** ``power``) ** (1 / ``power``). Kaggle scores the raw predictions
    (``binarize_predictions=false``); MLE-bench first binarises them at ``threshold`` too (true).
    A subset holding one class only raises ValueError, as MLE-bench's scikit-learn did.
    """
    toxic = as_float(y_true) >= threshold
    score = as_float(y_pred)
    if binarize_predictions:
        score = (score >= threshold).astype(float)
    bias = []
    for column in identity_columns:
        values = pd.to_numeric(pd.Series(answer_column(answers, column, "jigsaw_bias_auc")), errors="coerce")
        has = values.to_numpy(dtype=float) >= threshold
        subsets = (has, (~toxic & has) | (toxic & ~has), (toxic & has) | (~toxic & ~has))
        bias.append([_roc_auc(toxic[rows], score[rows]) for rows in subsets])
    with np.errstate(divide="ignore"):  # an AUC of 0 makes the power mean 0, as in MLE-bench
        means = np.mean(np.asarray(bias, dtype=float) ** power, axis=0) ** (1 / power)
    return float(weights[0] * _roc_auc(toxic, score) + np.dot(weights[1:], means))
