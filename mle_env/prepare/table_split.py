"""The recipe of competitions made with ``mle-env new``: one labelled table split into train and test.

``[prepare] helper = "table_split"`` with these params (every one written explicitly by ``mle-env new``):

- ``files``: the raw file(s) holding the rows (several are stacked, e.g. a dataset's own train and test);
  ``format``: how to read them (:data:`mle_env.prepare.table_formats.FORMATS`);
- ``target``: the column to predict; ``task``: ``binary`` (the target becomes 1 where it equals
  ``positive``, else 0), ``multiclass`` (labels as text), ``ordinal`` (the position of the label in
  ``labels``, 0-based) or ``regression`` (a number);
- ``answers``: ``value`` (one answer column named as the target) or ``classes`` (one 0/1 column per label in
  ``labels``, for per-class probabilities);
- ``id_column``: the rows' unique id; empty: an ``id`` column numbered after a seeded shuffle, so an id says
  nothing about the row's place in the source (which is often sorted by the target or by time);
- ``drop``: columns removed first (leaks, row names); ``max_rows``: at most this many rows kept, a seeded
  sample (the latest rows for a time split), so that a task stays small enough for an RL rollout;
- ``split``: ``random``, ``stratified`` (by the target), ``group`` (no value of ``group_column`` on both
  sides) or ``time`` (the last ``test_size`` of the rows by ``time_column`` are the test set);
  ``test_size``: the test fraction; ``random_state``: the seed of every random choice;
- ``sample_value``: the value of the sample submission's target cells (for ``classes``: 1/len(labels)).

Writes public/train.csv (id, features, target), public/test.csv (id, features), public/sample_submission.csv
and private/test.csv (id and answer column(s)). Rows whose target is missing are dropped; carriage returns in
text become newlines (pandas writes a bare one unquoted, and a reader then splits the row there).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from mle_env.errors import PrepareError
from mle_env.prepare.table_formats import read_table

Task = Literal["binary", "multiclass", "ordinal", "regression"]
SplitKind = Literal["random", "stratified", "group", "time"]
GENERATED_ID = "id"


def _newlines(value: Any) -> Any:
    return value.replace("\r\n", "\n").replace("\r", "\n") if isinstance(value, str) else value


def encode_target(values: pd.Series, task: str, positive: Any = None, labels: Sequence[Any] = ()) -> pd.Series:
    """The target as the answers hold it: 0/1 for ``binary``, text for ``multiclass``, the label's position
    for ``ordinal``, a float for ``regression``."""
    if task == "binary":
        return (values.astype(str) == str(positive)).astype(int)
    if task == "multiclass":
        return values.astype(str)
    if task == "ordinal":
        position = {str(label): i for i, label in enumerate(labels)}
        coded = values.astype(str).map(position)
        if coded.isna().any():
            unknown = sorted(set(values.astype(str)) - set(position))[:5]
            raise PrepareError(f"ordinal target has labels {unknown} that are not in labels {list(labels)}")
        return coded.astype(int)
    if task == "regression":
        return pd.to_numeric(values, errors="raise").astype(float)
    raise PrepareError(f"unknown task {task!r}; use binary, multiclass, ordinal or regression")


def split_rows(
    frame: pd.DataFrame, kind: str, test_size: float, random_state: int, *, stratify: pd.Series | None = None,
    group_column: str | None = None, time_column: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Row positions (train, test) of ``frame`` for one split ``kind`` (see the module docstring)."""
    from sklearn.model_selection import GroupShuffleSplit, train_test_split

    rows = np.arange(len(frame))
    if kind == "random":
        train, test = train_test_split(rows, test_size=test_size, random_state=random_state)
    elif kind == "stratified":
        train, test = train_test_split(rows, test_size=test_size, random_state=random_state, stratify=stratify)
    elif kind == "group":
        if not group_column:
            raise PrepareError("a group split needs group_column")
        splitter = GroupShuffleSplit(n_splits=1, test_size=test_size, random_state=random_state)
        train, test = next(splitter.split(rows, groups=frame[group_column].astype(str)))
    elif kind == "time":
        if not time_column:
            raise PrepareError("a time split needs time_column")
        order = np.argsort(time_order(frame[time_column]), kind="stable")
        n_test = math.ceil(len(frame) * test_size)
        train, test = np.sort(order[:-n_test]), np.sort(order[-n_test:])
    else:
        raise PrepareError(f"unknown split {kind!r}; use random, stratified, group or time")
    return np.asarray(train), np.asarray(test)


def time_order(values: pd.Series) -> pd.Series:
    """Values to sort rows by time: numbers as they are, anything else parsed as a date."""
    if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_datetime64_any_dtype(values):
        return values
    parsed = pd.to_datetime(values.astype(str), errors="coerce", format="mixed")
    if parsed.isna().mean() > 0.01:
        raise PrepareError(f"time column {values.name!r} is neither numbers nor dates")
    return parsed


def table_split(
    ctx: Any,
    *,
    files: Sequence[str],
    format: str,
    target: str,
    task: Task,
    answers: Literal["value", "classes"],
    id_column: str,
    split: SplitKind,
    test_size: float,
    random_state: int,
    sample_value: Any,
    positive: Any = None,
    labels: Sequence[Any] = (),
    drop: Sequence[str] = (),
    max_rows: int = 0,
    group_column: str = "",
    time_column: str = "",
) -> None:
    """Prepare one labelled table as described in the module docstring."""
    frame = pd.concat([read_table(ctx.raw_file(name), format) for name in files], ignore_index=True)
    missing = [c for c in [target, id_column, group_column, time_column, *drop] if c and c not in frame.columns]
    if missing:
        raise PrepareError(f"the table lacks column(s) {missing}; is it the file competition.toml names?")
    frame = frame.drop(columns=list(drop)).dropna(subset=[target]).reset_index(drop=True)
    for name in frame.columns:  # a bare carriage return, written unquoted in a CSV, splits its row when read
        if frame[name].dtype == "object":
            frame[name] = frame[name].map(_newlines)
    frame[target] = encode_target(frame[target], task, positive, labels)
    if max_rows and len(frame) > max_rows:
        if split == "time":
            frame = frame.iloc[np.sort(np.argsort(time_order(frame[time_column]), kind="stable")[-max_rows:])]
        else:
            frame = frame.sample(n=max_rows, random_state=random_state).sort_index()
        frame = frame.reset_index(drop=True)
    if not id_column:
        order = np.random.default_rng(random_state).permutation(len(frame))
        frame = frame.iloc[order].reset_index(drop=True)
        frame.insert(0, GENERATED_ID, np.arange(len(frame)))
        id_column = GENERATED_ID
    elif not frame[id_column].is_unique:
        raise PrepareError(f"id column {id_column!r} repeats values; it must name each row once")
    stratify = frame[target] if split == "stratified" else None
    train_rows, test_rows = split_rows(frame, split, test_size, random_state, stratify=stratify,
                                       group_column=group_column or None, time_column=time_column or None)
    train, test = frame.iloc[train_rows], frame.iloc[test_rows]
    if split != "time":  # ids in shuffled order already; keep a stable, id-sorted listing
        train, test = train.sort_values(id_column, kind="stable"), test.sort_values(id_column, kind="stable")
    train.to_csv(ctx.public / "train.csv", index=False)
    test.drop(columns=[target]).to_csv(ctx.public / "test.csv", index=False)
    if answers == "classes":
        names = [str(label) for label in labels]
        coded = test[target].astype(str)
        answer = pd.DataFrame({id_column: test[id_column].to_numpy(),
                               **{name: (coded == name).astype(int).to_numpy() for name in names}})
        sample = pd.DataFrame({id_column: test[id_column].to_numpy(), **{name: 1 / len(names) for name in names}})
    else:
        answer = test[[id_column, target]]
        sample = pd.DataFrame({id_column: test[id_column].to_numpy(), target: sample_value})
    answer.to_csv(ctx.private / "test.csv", index=False)
    sample.to_csv(ctx.public / "sample_submission.csv", index=False)
