"""What ``mle-env new`` infers from a table, and what it refuses (each in one line that says what to do).

- The task: a target with two values is ``binary``; a numeric target with more than ``MAX_CLASSES``
  values, or with fractions, or given a regression metric, is ``regression``; anything else is
  ``multiclass`` (``ordinal`` when the metric is QWK).
- The metric, when none is given: AUC (binary), accuracy (multiclass), QWK (ordinal), RMSE (regression).
- Refusals: a metric that does not fit the target; an id column that repeats or has gaps; a column that
  predicts the target almost perfectly on its own (a leak: the column equals the target or is a function
  of it); a test set too small for the metric to be stable.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from mle_env.errors import ConfigError

MAX_CLASSES = 50
#: a single column whose cross-validated score (accuracy, or R^2) reaches this leaks the target
LEAK_SCORE = 0.99
MIN_TEST_ROWS = 100
#: the rarest class of a binary target, and each class for per-class metrics, needs this many test rows
MIN_TEST_PER_CLASS = 10
LEAK_SAMPLE_ROWS = 5000

@dataclass(frozen=True)
class MetricChoice:
    """A metric ``mle-env new`` offers: the registered metric, the tasks it fits, its direction, every
    parameter written explicitly, and the answers' layout (``value`` or per-class ``classes``)."""

    registered: str
    tasks: tuple[str, ...]
    lower_is_better: bool
    params: dict[str, Any]
    answers: str = "value"


CLASSES = ("binary", "multiclass", "ordinal")
METRICS: dict[str, MetricChoice] = {
    "auc": MetricChoice("auc", ("binary",), False, {}),
    "log_loss": MetricChoice("log_loss", ("binary",), True, {"eps": 1e-15}),
    "accuracy": MetricChoice("accuracy", CLASSES, False, {}),
    "macro_f1": MetricChoice("f1", CLASSES, False, {"average": "macro", "pos_label": 1}),
    "multiclass_log_loss": MetricChoice("multiclass_log_loss", CLASSES, True, {"eps": 1e-15, "renormalise": True},
                                        "classes"),
    "qwk": MetricChoice("quadratic_weighted_kappa", ("ordinal",), False, {}),
    "rmse": MetricChoice("rmse", ("regression",), True, {}),
    "rmsle": MetricChoice("rmsle", ("regression",), True, {}),
    "mae": MetricChoice("mae", ("regression",), True, {"round_to_int": False}),
    "smape": MetricChoice("smape", ("regression",), True, {}),
}
ALIASES = {"quadratic_weighted_kappa": "qwk", "binary_log_loss": "log_loss", "logloss": "multiclass_log_loss",
           "f1": "macro_f1", "roc_auc": "auc"}
DEFAULT_METRIC = {"binary": "auc", "multiclass": "accuracy", "ordinal": "qwk", "regression": "rmse"}


@dataclass(frozen=True)
class Target:
    """What the target is: the task, its labels (classification, in order), the positive label (binary)."""

    task: str
    labels: tuple[Any, ...] = ()
    positive: Any = None


def metric_name(given: str | None) -> str | None:
    """The canonical name of ``--metric`` (None when not given); unknown names are refused."""
    if given is None:
        return None
    name = ALIASES.get(given.lower(), given.lower())
    if name not in METRICS:
        raise ConfigError(f"--metric {given} is not one mle-env new supports; use one of "
                          f"{', '.join(sorted(METRICS))}")
    return name


def infer_target(values: pd.Series, metric: str | None, positive: str | None = None,
                 order: tuple[str, ...] | None = None) -> Target:
    """The task of ``values`` (see the module docstring); a metric that does not fit it is refused. ``order``:
    the classes from lowest to highest, for QWK on a text target (numbers and ordered categories have one)."""
    values = values.dropna()
    distinct = values.unique()
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    fractional = numeric and not np.allclose(values, np.round(values))
    if len(distinct) < 2:
        raise ConfigError(f"target {values.name!r} has {len(distinct)} distinct value(s); there is nothing to predict")
    wants_number = metric is not None and METRICS[metric].tasks == ("regression",)
    if numeric and (fractional or len(distinct) > MAX_CLASSES or wants_number):  # counts and years may be either
        task = "regression"
    elif len(distinct) == 2 and metric != "qwk":
        task = "binary"
    elif len(distinct) <= MAX_CLASSES:
        task = "ordinal" if metric == "qwk" else "multiclass"
    else:
        raise ConfigError(f"target {values.name!r} is text with {len(distinct)} distinct values; "
                          f"a class target has at most {MAX_CLASSES}")
    if metric is not None and task not in METRICS[metric].tasks:
        raise ConfigError(f"--metric {metric} does not fit target {values.name!r}, which is {task} "
                          f"({len(distinct)} distinct values); use {DEFAULT_METRIC[task]}"
                          + (" or pass an ordered integer target" if metric == "qwk" else ""))
    if metric == "rmsle" and (values < 0).any():
        raise ConfigError(f"--metric rmsle needs a target >= 0, and {values.name!r} has negative values; use rmse")
    if task == "regression":
        return Target(task)
    labels = _ordered_labels(values)
    if task == "ordinal" and order:
        unknown = sorted(set(map(str, labels)) - set(order))
        if unknown:
            raise ConfigError(f"--labels leaves out {', '.join(unknown[:5])}; list every class of {values.name!r}")
        labels = [label for label in order if label in set(map(str, labels))]
    elif task == "ordinal" and not _has_order(values):
        raise ConfigError(f"qwk needs the order of {values.name!r}'s classes ({', '.join(map(str, labels[:8]))}): "
                          "pass --labels LOWEST,...,HIGHEST")
    if task == "binary":
        chosen = positive if positive is not None else str(values.astype(str).value_counts().idxmin())
        if chosen not in [str(v) for v in labels]:
            raise ConfigError(f"--positive {chosen} is not a value of {values.name!r}; it has "
                              f"{', '.join(map(str, labels))}")
        return Target(task, tuple(str(v) for v in labels), chosen)
    return Target(task, tuple(str(v) for v in labels))


def _has_order(values: pd.Series) -> bool:
    """Numbers and ordered categories carry an order; text does not."""
    ordered = isinstance(values.dtype, pd.CategoricalDtype) and values.dtype.ordered
    return ordered or (pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values))


def _ordered_labels(values: pd.Series) -> list[Any]:
    """The labels in their natural order: an ordered categorical's, else numeric, else alphabetical."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        present = set(values.astype(str))
        return [c for c in values.cat.categories.astype(str) if c in present]
    if pd.api.types.is_numeric_dtype(values):
        return [int(v) if float(v).is_integer() else v for v in sorted(values.unique())]
    return sorted(values.astype(str).unique())


def check_id(frame: pd.DataFrame, id_column: str | None) -> None:
    """An id column must exist, name every row once and have no gaps."""
    if id_column is None:
        return
    if id_column not in frame.columns:
        raise ConfigError(f"--id {id_column} is not a column; the table has {', '.join(frame.columns[:20])}")
    ids = frame[id_column]
    if ids.isna().any():
        raise ConfigError(f"--id {id_column} is empty in {int(ids.isna().sum())} rows; leave --id out to number rows")
    if not ids.is_unique:
        repeated = ids[ids.duplicated()].iloc[0]
        raise ConfigError(f"--id {id_column} is not unique ({int(ids.duplicated().sum())} repeats, e.g. "
                          f"{repeated!r}); leave --id out to number the rows, or pick a unique column")


def check_test_size(frame: pd.DataFrame, target: pd.Series, test_size: float, info: Target, answers: str,
                    stratified: bool = False) -> None:
    """The test set must be big enough for the metric: MIN_TEST_ROWS rows, MIN_TEST_PER_CLASS of the rarest
    class for a binary target and of every class for per-class answers; a stratified split needs two rows
    of every class."""
    if not 0 < test_size < 1:
        raise ConfigError(f"--test-size must be a fraction between 0 and 1; got {test_size}")
    n_test = math.ceil(len(frame) * test_size)
    if n_test < MIN_TEST_ROWS:
        raise ConfigError(f"the test set would have {n_test} rows; the metric needs at least {MIN_TEST_ROWS} to be "
                          f"stable: raise --test-size or bring more rows ({len(frame)} now)")
    if info.task == "regression":
        return
    if stratified:
        sizes = target.astype(str).value_counts()
        if sizes.min() < 2:
            raise ConfigError(f"class {sizes.idxmin()!r} has {sizes.min()} row; a stratified split needs 2 per "
                              "class: merge rare classes, or pass --split-kind random")
    counts = target.astype(str).value_counts() * test_size
    rare = counts.idxmin()
    if (info.task == "binary" or answers == "classes") and counts.min() < MIN_TEST_PER_CLASS:
        raise ConfigError(f"class {rare!r} would have about {counts.min():.0f} test rows; the metric needs "
                          f"{MIN_TEST_PER_CLASS} per class: raise --test-size, or merge rare classes")


def find_leak(
    frame: pd.DataFrame, target: str, info: Target, skip: set[str], seed: int = 0
) -> tuple[str, float] | None:
    """The first column that predicts the target on its own with a cross-validated score >= LEAK_SCORE
    (a one-column decision tree's accuracy for classes, its R^2 for numbers, or for a numeric column and
    target the absolute Spearman correlation), and that score; None when no column does."""
    from sklearn.model_selection import cross_val_score
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    sample = frame.dropna(subset=[target])
    if len(sample) > LEAK_SAMPLE_ROWS:
        sample = sample.sample(n=LEAK_SAMPLE_ROWS, random_state=seed)
    y = sample[target].astype(str) if info.task != "regression" else sample[target].astype(float)
    if info.task != "regression" and y.value_counts(normalize=True).max() >= LEAK_SCORE:
        return None  # one class is nearly everything: any column scores high; the test-size check speaks
    for name in sample.columns:
        if name == target or name in skip:
            continue
        column = sample[name]
        if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
            x = column.astype(float).fillna(-1e12).to_numpy().reshape(-1, 1)
        else:
            x = pd.factorize(column.astype(str))[0].reshape(-1, 1).astype(float)
        if info.task == "regression" and pd.api.types.is_numeric_dtype(column):
            rank = abs(float(pd.Series(x[:, 0]).corr(y.reset_index(drop=True), method="spearman")))
            if rank >= LEAK_SCORE:  # a monotone function of the target, however unevenly spread
                return name, rank
        if info.task == "regression":
            model, scoring = DecisionTreeRegressor(min_samples_leaf=2, random_state=seed), "r2"
        else:
            model, scoring = DecisionTreeClassifier(min_samples_leaf=2, random_state=seed), "accuracy"
        with warnings.catch_warnings():  # classes rarer than the folds: the scores stay meaningful
            warnings.simplefilter("ignore", UserWarning)
            score = float(np.mean(cross_val_score(model, x, y, cv=3, scoring=scoring)))
        if score >= LEAK_SCORE:
            return name, score
    return None
