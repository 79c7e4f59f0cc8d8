"""Correlation coefficients between answers and predictions (all higher is better, in [-1, 1])."""

from __future__ import annotations

import numpy as np

from mle_env.grading.metrics.registry import as_2d, as_float, register_metric


@register_metric("pearson", lower_is_better=False)
def pearson(y_true: np.ndarray, y_pred: np.ndarray, constant_score: float | None = None) -> float:
    """Pearson's correlation coefficient r (scipy ``pearsonr``) over all cells.

    r is undefined (scipy gives NaN) when either side is constant; ``constant_score`` is the score given
    then instead (None keeps NaN, which the grader reports as a grader error).
    """
    from scipy.stats import pearsonr

    y_true, y_pred = as_float(y_true), as_float(y_pred)
    if constant_score is not None and (np.ptp(y_true) == 0 or np.ptp(y_pred) == 0):
        return float(constant_score)
    return float(pearsonr(y_true, y_pred).statistic)


@register_metric("mean_columnwise_spearman", lower_is_better=False)
def mean_columnwise_spearman(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean over target columns of Spearman's rank correlation (a constant column counts as 0)."""
    from scipy.stats import spearmanr

    y_true, y_pred = as_2d(y_true), as_2d(y_pred)
    scores = []
    for j in range(y_true.shape[1]):
        rho = spearmanr(y_true[:, j], y_pred[:, j]).statistic
        scores.append(0.0 if np.isnan(rho) else float(rho))
    return float(np.mean(scores))
