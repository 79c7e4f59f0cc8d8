"""Splits whose unit is not one row: groups of rows that share a key, and entries of a folder.

MLE-bench splits many competitions by a key (a molecule, a patient, a breath, a game) so that no key is in
both parts: scikit-learn ``train_test_split`` runs over the list of distinct keys and every row then follows
its key. Two things vary between competitions and both change which rows land where, so both are explicit:

- ``key_order``: the order of the key list handed to the split. ``"sorted"`` is ``frame.groupby(key)``'s
  order (keys sorted, rows with a missing key dropped, as groupby drops them); ``"appearance"`` is
  ``frame[key].unique()``'s order (first appearance, a missing key kept as a key of its own).
- ``row_order``: ``"groups"`` lists the rows group by group in the split's (shuffled) key order, each group
  in raw order, as ``pd.concat`` of the split groups gives; ``"raw"`` keeps the raw file's row order, as
  ``frame[frame[key].isin(keys)]`` gives.

``random_state`` is always passed explicitly, as each competition's MLE-bench script chooses it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from mle_env.errors import PrepareError
from mle_env.prepare.helpers import split

KeyOrder = Literal["sorted", "appearance"]
RowOrder = Literal["groups", "raw"]


def _groups(frame: pd.DataFrame, key: str | Sequence[str], key_order: KeyOrder) -> dict[Any, np.ndarray]:
    """Row positions of each key, keys in ``key_order``."""
    if key_order not in ("sorted", "appearance"):
        raise PrepareError(f"key_order must be 'sorted' or 'appearance', not {key_order!r}")
    by = key if isinstance(key, str) else list(key)
    missing = [c for c in ([by] if isinstance(by, str) else by) if c not in frame.columns]
    if missing:
        raise PrepareError(f"the table has no key column(s) {missing}; name one of {list(frame.columns)[:8]}")
    sorted_keys = key_order == "sorted"
    keys = frame[by].to_numpy() if isinstance(by, str) else [frame[c].to_numpy() for c in by]
    grouped = pd.Series(np.arange(len(frame))).groupby(keys, sort=sorted_keys, dropna=sorted_keys)
    return {k: g.to_numpy() for k, g in grouped}


def distinct_keys(frame: pd.DataFrame, key: str | Sequence[str], key_order: KeyOrder = "sorted") -> list[Any]:
    """The distinct values of ``key`` (tuples for several columns) in ``key_order`` (see module docstring)."""
    return list(_groups(frame, key, key_order))


def group_split(
    frame: pd.DataFrame,
    key: str | Sequence[str],
    test_size: float | int,
    *,
    random_state: int,
    key_order: KeyOrder = "sorted",
    row_order: RowOrder = "groups",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(train, test) with every distinct ``key`` wholly in one part: ``train_test_split`` over the distinct
    keys in ``key_order`` (``test_size`` counts keys), rows listed in ``row_order`` (module docstring)."""
    if row_order not in ("groups", "raw"):
        raise PrepareError(f"row_order must be 'groups' or 'raw', not {row_order!r}")
    groups = _groups(frame, key, key_order)
    if len(groups) < 2:
        raise PrepareError(f"cannot split by {key!r}: the table has {len(groups)} distinct key(s)")
    train_keys, test_keys = split(list(groups), test_size, random_state)
    parts = []
    for keys in (train_keys, test_keys):
        rows = np.concatenate([groups[_as_key(k)] for k in keys]) if len(keys) else np.array([], dtype=np.int64)
        parts.append(frame.iloc[np.sort(rows) if row_order == "raw" else rows])
    return parts[0], parts[1]


def _as_key(value: Any) -> Any:
    """A key as the groups dict holds it (train_test_split turns a list of tuples into a list of lists)."""
    return tuple(value) if isinstance(value, list) else value


def folder_rows(folder: Path, depth: int = 1, *, kind: Literal["dir", "file", "any"] = "any") -> list[str]:
    """The entries exactly ``depth`` levels below ``folder`` (e.g. 2 for ``<drive>/<phone>``), as sorted
    relative POSIX paths: the rows of a split whose rows are folders or files. :func:`copy_files` (in
    helpers) copies such entries, whole folders included, to public/train and public/test."""
    if not Path(folder).is_dir():
        raise PrepareError(f"{folder} is not a folder; the raw files must hold it")
    entries = Path(folder).glob("/".join(["*"] * depth))
    wanted = {"dir": Path.is_dir, "file": Path.is_file, "any": lambda p: True}[kind]
    return sorted(p.relative_to(folder).as_posix() for p in entries if wanted(p) and not p.name.startswith("."))
