"""Error metrics on numeric predictions (all lower is better, except the log-likelihood)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from mle_env.grading.metrics.registry import answer_column, as_2d, as_float, register_metric, rows_where


@register_metric("rmse", lower_is_better=True)
def rmse(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Root mean squared error over all cells."""
    from sklearn.metrics import mean_squared_error

    return math.sqrt(mean_squared_error(as_float(y_true), as_float(y_pred)))


@register_metric("rmsle", lower_is_better=True)
def rmsle(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Root mean squared logarithmic error, sqrt(mean((log1p(pred) - log1p(true))^2)); values must be > -1."""
    from sklearn.metrics import mean_squared_log_error

    return math.sqrt(mean_squared_log_error(as_float(y_true), as_float(y_pred)))


@register_metric("mean_columnwise_rmsle", lower_is_better=True)
def mean_columnwise_rmsle(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean over target columns of RMSLE."""
    y_true, y_pred = as_2d(y_true), as_2d(y_pred)
    return float(np.mean([rmsle(y_true[:, j], y_pred[:, j]) for j in range(y_true.shape[1])]))


@register_metric("mae", lower_is_better=True, needs_answers=True)
def mae(
    y_true: np.ndarray, y_pred: np.ndarray, *, answers: pd.DataFrame | None = None, mask_column: str | None = None,
    keep_value: Any = 0, round_to_int: bool = False,
) -> float:
    """Mean absolute error over all cells.

    Args:
        answers: the answers table (row i is row i of ``y_true``); read only for ``mask_column``.
        mask_column: score only the rows whose answer in this column equals ``keep_value``
            (ventilator: ``u_out`` = 0, the inspiratory phase).
        round_to_int: round the mean to the nearest integer with Python's ``round`` (ties to even), as
            MLE-bench's predict-volcanic-eruptions grader does.
    """
    y_true, y_pred = as_2d(y_true), as_2d(y_pred)
    if mask_column is not None:
        keep = rows_where(answer_column(answers, mask_column, "mae"), keep_value)
        y_true, y_pred = y_true[keep], y_pred[keep]
    value = float(np.mean(np.abs(y_true.astype(float) - y_pred.astype(float))))
    return float(round(value)) if round_to_int else value


@register_metric("masked_mcrmse", lower_is_better=True, needs_classes=True, needs_answers=True)
def masked_mcrmse(
    y_true: np.ndarray, y_pred: np.ndarray, *, classes: Sequence[str], answers: pd.DataFrame,
    score_columns: Sequence[str] = ("reactivity", "deg_Mg_pH10", "deg_Mg_50C"), mask_column: str | None = "keep",
    keep_value: Any = True,
) -> float:
    """Mean over ``score_columns`` of the RMSE on the rows whose answer ``mask_column`` equals ``keep_value``
    (stanford-covid-vaccine).

    Column j of ``y_true`` and ``y_pred`` is the target ``classes[j]`` (the submission's target columns);
    targets not in ``score_columns`` are required in the submission but not scored.
    """
    y_true, y_pred = as_2d(y_true).astype(float), as_2d(y_pred).astype(float)
    keep = (np.ones(len(y_true), bool) if mask_column is None
            else rows_where(answer_column(answers, mask_column, "masked_mcrmse"), keep_value))
    index = {c: j for j, c in enumerate(classes)}
    missing = [c for c in score_columns if c not in index]
    if missing:
        raise ValueError(f"masked_mcrmse: score column(s) {missing} are not target columns {list(classes)}")
    errors = [math.sqrt(np.mean((y_true[keep, index[c]] - y_pred[keep, index[c]]) ** 2)) for c in score_columns]
    return float(np.mean(errors))


@register_metric("grouped_log_mae", lower_is_better=True, needs_answers=True)
def grouped_log_mae(
    y_true: np.ndarray, y_pred: np.ndarray, *, answers: pd.DataFrame, group_column: str = "type",
    mae_floor: float = 0.0,
) -> float:
    """Mean over the groups of ``answers[group_column]`` of ln(max(MAE within the group, ``mae_floor``)) (champs).

    With the default floor 0 a group predicted exactly gives -inf, as MLE-bench's ``np.log`` does (the grader
    rejects non-finite scores). Kaggle floors at 1e-9; the smallest positive float, 5e-324, changes only the
    exact case (to ln(5e-324) = -744.44), so every finite MLE-bench score is kept.
    """
    frame = pd.DataFrame({
        "group": answer_column(answers, group_column, "grouped_log_mae"),
        "error": np.abs(as_float(y_true) - as_float(y_pred)),
    })
    with np.errstate(divide="ignore"):
        maes = frame.groupby("group", sort=True)["error"].mean().to_numpy()
        return float(np.mean(np.log(np.maximum(maes, mae_floor))))


@register_metric("laplace_log_likelihood", lower_is_better=False, needs_answers=True)
def laplace_log_likelihood(
    y_true: np.ndarray, y_pred: np.ndarray, *, answers: pd.DataFrame | None = None, sigma_floor: float = 70.0,
    error_cap: float = 1000.0, mask_column: str | None = None, keep_value: Any = True,
) -> float:
    """Modified Laplace log-likelihood (osic): mean of -sqrt(2) * d / s - ln(sqrt(2) * s), higher is better.

    ``y_pred`` has two columns, the prediction and its confidence sigma; d = min(|y - prediction|,
    ``error_cap``) and s = max(sigma, ``sigma_floor``), a NaN sigma counting as 0 first. Rows whose
    answer is NaN are not scored, nor, with ``mask_column``, rows whose answer there differs from
    ``keep_value`` (osic scores each patient's last three measured weeks; prepare flags them).
    """
    y, pred = as_float(y_true), as_2d(y_pred).astype(float)
    if pred.shape[1] != 2:
        raise ValueError(f"laplace_log_likelihood needs two prediction columns (value, sigma), got {pred.shape[1]}")
    keep = ~np.isnan(y)
    if mask_column is not None:
        keep &= rows_where(answer_column(answers, mask_column, "laplace_log_likelihood"), keep_value)
    sigma = np.maximum(np.nan_to_num(pred[keep, 1], nan=0.0), sigma_floor)
    delta = np.minimum(np.abs(y[keep] - pred[keep, 0]), error_cap)
    return float(np.mean(-math.sqrt(2) * delta / sigma - np.log(math.sqrt(2) * sigma)))


@register_metric("haversine_p50_p95", lower_is_better=True, needs_answers=True)
def haversine_p50_p95(
    y_true: np.ndarray, y_pred: np.ndarray, *, answers: pd.DataFrame, group_column: str = "tripId",
    radius: float = 6_371_000.0,
) -> float:
    """Mean over the groups of ``answers[group_column]`` of (P50 + P95) / 2 of the haversine distances
    (smartphone-decimeter-2022), in the unit of ``radius`` (metres).

    ``y_true`` and ``y_pred`` have two columns, latitude and longitude in degrees. Percentiles are
    numpy's ``quantile`` with linear interpolation.
    """
    lat1, lng1 = np.deg2rad(as_2d(y_true).astype(float)).T
    lat2, lng2 = np.deg2rad(as_2d(y_pred).astype(float)).T
    a = np.sin((lat2 - lat1) / 2) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin((lng2 - lng1) / 2) ** 2
    distance = pd.Series(2 * radius * np.arcsin(np.sqrt(a)))
    groups = distance.groupby(answer_column(answers, group_column, "haversine_p50_p95"), sort=False)
    per_group = [np.mean(np.quantile(d.to_numpy(), [0.5, 0.95], method="linear")) for _, d in groups]
    return float(np.mean(per_group))


#: rows per slice in mean_angular_error, so its temporaries stay small at icecube's ~13M test events
_ANGLE_CHUNK_ROWS = 1_000_000


@register_metric("mean_angular_error", lower_is_better=True, needs_classes=True)
def mean_angular_error(
    y_true: np.ndarray, y_pred: np.ndarray, *, classes: Sequence[str], azimuth_column: str = "azimuth",
    zenith_column: str = "zenith",
) -> float:
    """Mean angle in radians between the true and predicted directions (icecube-neutrinos-in-deep-ice).

    Each row's direction is given by its azimuth a and zenith z (radians), the unit vector
    (sin z cos a, sin z sin a, cos z); the angle between two such vectors is arccos of their dot product,
    clipped to [-1, 1] against rounding. Column j of ``y_true`` and ``y_pred`` is the target ``classes[j]``;
    the two columns are picked by name. Computed slice by slice, so memory stays bounded for millions of rows.
    """
    index = {c: j for j, c in enumerate(classes)}
    missing = [c for c in (azimuth_column, zenith_column) if c not in index]
    if missing:
        raise ValueError(f"mean_angular_error: column(s) {missing} are not target columns {list(classes)}")
    a, z = index[azimuth_column], index[zenith_column]
    y_true, y_pred = as_2d(y_true), as_2d(y_pred)
    total = 0.0
    for start in range(0, len(y_true), _ANGLE_CHUNK_ROWS):
        truth = y_true[start:start + _ANGLE_CHUNK_ROWS].astype(float)
        pred = y_pred[start:start + _ANGLE_CHUNK_ROWS].astype(float)
        sin_z = np.sin(truth[:, z]) * np.sin(pred[:, z])
        planar = np.cos(truth[:, a]) * np.cos(pred[:, a]) + np.sin(truth[:, a]) * np.sin(pred[:, a])
        dot = sin_z * planar + np.cos(truth[:, z]) * np.cos(pred[:, z])
        total += float(np.sum(np.arccos(np.clip(dot, -1.0, 1.0))))
    return total / len(y_true)


@register_metric("smape", lower_is_better=True)
def smape(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Symmetric mean absolute percentage error in percent, as Kaggle's forecasting competitions define it:
    100 * mean(2 |pred - true| / (|true| + |pred|)), a cell where both are 0 counting 0."""
    actual, forecast = np.ravel(as_float(y_true)), np.ravel(as_float(y_pred))
    denominator = np.abs(actual) + np.abs(forecast)
    ratio = np.divide(2 * np.abs(forecast - actual), denominator, out=np.zeros_like(denominator),
                      where=denominator != 0)
    return float(100 * np.mean(ratio))

