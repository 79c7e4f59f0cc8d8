"""The metric registry: every metric by name, with its direction.

A metric is ``fn(y_true, y_pred, **params) -> float``. The grader passes arrays already validated and
aligned row by row with the answers: shape ``(n,)`` for one target column, ``(n, k)`` for several.
Metrics with ``needs_classes=True`` also get ``classes=[...]``, the submission's target column names
(used to one-hot encode label answers against per-class probability columns).

Built on scikit-learn where it has the metric. Competition folders that need a metric the registry lacks
register it from their ``metric.script`` with :func:`register_metric`; new shared metrics belong here.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

# Kaggle clips probabilities to [eps, 1 - eps] before taking logs, so one confident mistake costs a
# large but finite penalty (-log(1e-15) ~= 34.5) instead of infinity.
LOG_LOSS_EPS = 1e-15

MetricFn = Callable[..., float]


@dataclass(frozen=True)
class Metric:
    """A named metric and its direction (``lower_is_better``); ``needs_classes`` see module docstring."""

    name: str
    fn: MetricFn
    lower_is_better: bool
    needs_classes: bool = False
    description: str = ""

    def __call__(self, y_true: np.ndarray, y_pred: np.ndarray, **params: Any) -> float:
        return float(self.fn(y_true, y_pred, **params))


METRICS: dict[str, Metric] = {}


def register_metric(
    name: str, *, lower_is_better: bool, needs_classes: bool = False
) -> Callable[[MetricFn], MetricFn]:
    """Decorator that adds ``fn`` to the registry under ``name`` (re-registering a name replaces it)."""

    def decorate(fn: MetricFn) -> MetricFn:
        doc = (fn.__doc__ or "").strip().splitlines()
        METRICS[name] = Metric(name, fn, lower_is_better, needs_classes, doc[0] if doc else "")
        return fn

    return decorate


def get_metric(name: str) -> Metric:
    """The registered metric called ``name``; raises KeyError with close names if there is none."""
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric '{name}'{suggest(name)}") from None


def suggest(name: str) -> str:
    close = difflib.get_close_matches(name, list(METRICS), n=3)
    return f" (did you mean {', '.join(close)}?)" if close else f" (known: {', '.join(sorted(METRICS))})"


def _as_2d(a: np.ndarray) -> np.ndarray:
    return a.reshape(-1, 1) if a.ndim == 1 else a


# --- classification ----------------------------------------------------------------------------------
@register_metric("auc", lower_is_better=False)
def auc(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Area under the ROC curve (scikit-learn roc_auc_score); several columns are flattened into one."""
    from sklearn.metrics import roc_auc_score

    return roc_auc_score(np.ravel(y_true), np.ravel(y_pred))


@register_metric("mean_columnwise_auc", lower_is_better=False)
def mean_columnwise_auc(y_true: np.ndarray, y_pred: np.ndarray, ignore_label: float | None = None) -> float:
    """Mean over target columns of ROC AUC; rows whose answer equals ``ignore_label`` are left out per column."""
    from sklearn.metrics import roc_auc_score

    y_true, y_pred = _as_2d(y_true), _as_2d(y_pred)
    scores = []
    for j in range(y_true.shape[1]):
        keep = np.ones(len(y_true), bool) if ignore_label is None else y_true[:, j] != ignore_label
        scores.append(roc_auc_score(y_true[keep, j], y_pred[keep, j]))
    return float(np.mean(scores))


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
    p = np.clip(_as_2d(y_pred).astype(float), eps, 1 - eps)
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


@register_metric("accuracy", lower_is_better=False)
def accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Fraction of rows (of all cells, for several columns) predicted exactly."""
    return float(np.mean(_normalise_labels(y_true) == _normalise_labels(y_pred)))


def _normalise_labels(a: np.ndarray) -> np.ndarray:
    """Compare labels as text, but treat 3 and 3.0 as the same label."""
    flat = np.ravel(a)
    if flat.dtype.kind in "if":
        as_float = flat.astype(float)
        if np.all(np.isfinite(as_float)) and np.all(as_float == np.round(as_float)):
            return as_float.astype(np.int64).astype(str)
    return flat.astype(str)


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
        yt, yp = _normalise_labels(yt), _normalise_labels(yp)
    return f1_score(yt, yp, average=average, pos_label=pos_label)


@register_metric("map_at_k", lower_is_better=False)
def map_at_k(y_true: np.ndarray, y_pred: np.ndarray, k: int = 5) -> float:
    """Mean average precision at k; cells hold space-separated items (answers: the relevant ones)."""
    total = 0.0
    for actual_cell, predicted_cell in zip(np.ravel(y_true), np.ravel(y_pred), strict=True):
        actual = set(str(actual_cell).split())
        predicted = _dedupe(str(predicted_cell).split())[:k]
        if not actual:
            continue
        hits, score = 0, 0.0
        for i, item in enumerate(predicted):
            if item in actual:
                hits += 1
                score += hits / (i + 1)
        total += score / min(len(actual), k)
    return total / len(np.ravel(y_true))


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


# --- regression --------------------------------------------------------------------------------------
@register_metric("rmse", lower_is_better=True)
def rmse(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Root mean squared error over all cells."""
    from sklearn.metrics import mean_squared_error

    return math.sqrt(mean_squared_error(np.ravel(y_true).astype(float), np.ravel(y_pred).astype(float)))


@register_metric("rmsle", lower_is_better=True)
def rmsle(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Root mean squared logarithmic error, sqrt(mean((log1p(pred) - log1p(true))^2)); values must be > -1."""
    from sklearn.metrics import mean_squared_log_error

    return math.sqrt(mean_squared_log_error(np.ravel(y_true).astype(float), np.ravel(y_pred).astype(float)))


@register_metric("mean_columnwise_rmsle", lower_is_better=True)
def mean_columnwise_rmsle(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean over target columns of RMSLE."""
    y_true, y_pred = _as_2d(y_true), _as_2d(y_pred)
    return float(np.mean([rmsle(y_true[:, j], y_pred[:, j]) for j in range(y_true.shape[1])]))


@register_metric("mae", lower_is_better=True)
def mae(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean absolute error over all cells."""
    from sklearn.metrics import mean_absolute_error

    return mean_absolute_error(np.ravel(y_true).astype(float), np.ravel(y_pred).astype(float))


@register_metric("mean_columnwise_spearman", lower_is_better=False)
def mean_columnwise_spearman(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean over target columns of Spearman's rank correlation (a constant column counts as 0)."""
    from scipy.stats import spearmanr

    y_true, y_pred = _as_2d(y_true), _as_2d(y_pred)
    scores = []
    for j in range(y_true.shape[1]):
        rho = spearmanr(y_true[:, j], y_pred[:, j]).statistic
        scores.append(0.0 if np.isnan(rho) else float(rho))
    return float(np.mean(scores))


# --- text --------------------------------------------------------------------------------------------
def _jaccard(a: str, b: str) -> float:
    left, right = set(a.lower().split()), set(b.lower().split())
    if not left and not right:
        return 0.5  # Kaggle's convention for two empty strings
    common = len(left & right)
    return common / (len(left) + len(right) - common)


@register_metric("word_jaccard", lower_is_better=False)
def word_jaccard(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean word-level Jaccard similarity (lower-cased, split on whitespace)."""
    pairs = zip(np.ravel(y_true), np.ravel(y_pred), strict=True)
    return float(np.mean([_jaccard(_text(t), _text(p)) for t, p in pairs]))


def _text(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def levenshtein_distance(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions each cost 1)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


@register_metric("levenshtein", lower_is_better=True)
def mean_levenshtein(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean Levenshtein (edit) distance between answer and prediction strings."""
    pairs = zip(np.ravel(y_true), np.ravel(y_pred), strict=True)
    return float(np.mean([levenshtein_distance(_text(t), _text(p)) for t, p in pairs]))
