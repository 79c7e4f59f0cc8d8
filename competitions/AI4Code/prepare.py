"""AI4Code as MLE-bench prepares it: 20,000 training notebooks that share no ancestor with the rest become
the test set.

``train_ancestors.csv`` is shuffled (``sample(frac=1, random_state=0)``); its rows are grouped by
``ancestor_id`` in order of first appearance, and each group in turn goes wholly to the test set while the
test set stays within 20,000 notebooks, else to train (so it is filled exactly when singletons remain).
Public: the notebooks' JSON under ``train/`` and ``test/``, ``train_orders.csv`` (raw order) and
``train_ancestors.csv`` (shuffled order) for train notebooks only, and ``sample_submission.csv``: per test
notebook (in ``train_orders.csv`` order) its cells in the JSON's own key order (code cells in order, then
the markdown cells). Private: ``test_orders.csv``.
"""

import json
import math
from typing import Any

import pandas as pd

from mle_env.errors import PrepareError
from mle_env.prepare.helpers import PrepareContext, place_files, raw_folder, read_csv, write_csv


def _group_key(value: Any, row: int) -> Any:
    """A row's ancestor as MLE-bench's dict sees it: a missing ancestor (NaN never equals itself) is a group
    of its own."""
    return ("missing", row) if isinstance(value, float) and math.isnan(value) else value


def ancestor_split(ancestors: pd.DataFrame, test_size: int) -> tuple[list[str], list[str]]:
    """(train ids, test ids): whole ancestor groups, in first-appearance order, fill the test set greedily."""
    groups: dict[Any, list[str]] = {}
    for row, (notebook, ancestor) in enumerate(zip(ancestors["id"], ancestors["ancestor_id"], strict=True)):
        groups.setdefault(_group_key(ancestor, row), []).append(notebook)
    train: list[str] = []
    test: list[str] = []
    for members in groups.values():
        (test if len(test) + len(members) <= test_size else train).extend(members)
    if len(test) != test_size:
        raise PrepareError(f"the ancestor groups fill only {len(test)} of {test_size} test notebooks")
    return train, test


def prepare(ctx: PrepareContext) -> None:
    ancestors = read_csv(ctx.raw_file("train_ancestors.csv"))
    ancestors = ancestors.sample(frac=1, random_state=ctx.params["random_state"]).reset_index(drop=True)
    train_ids, test_ids = ancestor_split(ancestors, ctx.params["test_size"])
    notebooks = raw_folder(ctx, "train")
    pairs = [(notebooks / f"{i}.json", ctx.public / part / f"{i}.json")
             for part, ids in (("train", train_ids), ("test", test_ids)) for i in ids]
    place_files(pairs, ctx.may_link(notebooks))
    orders = read_csv(ctx.raw_file("train_orders.csv"))
    test_set = set(test_ids)
    write_csv(orders[~orders["id"].isin(test_set)], ctx.public / "train_orders.csv")
    test_orders = orders[orders["id"].isin(test_set)]
    write_csv(test_orders, ctx.private / "test_orders.csv")
    write_csv(ancestors[~ancestors["id"].isin(test_set)], ctx.public / "train_ancestors.csv")
    cells = []
    for notebook in test_orders["id"]:
        with open(ctx.public / "test" / f"{notebook}.json", encoding="utf-8") as f:
            cells.append(" ".join(json.load(f)["cell_type"]))
    sample = pd.DataFrame({"id": test_orders["id"].to_numpy(), "cell_order": cells})
    write_csv(sample, ctx.public / "sample_submission.csv")
