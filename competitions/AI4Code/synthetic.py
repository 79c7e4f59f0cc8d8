"""Synthetic raw data for AI4Code (see mle_env.competition.synthetic).

Kaggle ships ``train/<id>.json`` (a notebook: ``{"cell_type": {cell: "code" | "markdown"}, "source": {cell:
text}}``, code cells in their true order, then the markdown cells shuffled), ``train_orders.csv`` (``id``,
``cell_order``: the true order, space-separated), ``train_ancestors.csv`` (``id``, ``ancestor_id``,
``parent_id``, empty when unknown), ``test/`` (a few notebooks) and ``sample_submission.csv``. MLE-bench's
test set has exactly 20,000 notebooks, so the synthetic training set is slightly larger.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import column_ids, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test", "train", "train_ancestors.csv", "train_orders.csv"})
PRIVATE = frozenset({"test_orders.csv"})
N_NOTEBOOKS = 20_060


def _hex(rng: np.random.Generator, n: int, digits: int) -> list[str]:
    values: dict[int, None] = {}
    while len(values) < n:
        values.update(dict.fromkeys(int(v) for v in rng.integers(0, 16**digits, n)))
    return [f"{v:0{digits}x}" for v in list(values)[:n]]


def _notebook(rng: np.random.Generator, cells: list[str]) -> tuple[dict, str]:
    """The notebook JSON (code in order, markdown shuffled after it) and its true order."""
    kinds = ["code" if rng.random() < 0.6 else "markdown" for _ in cells]
    code = [c for c, k in zip(cells, kinds, strict=True) if k == "code"]
    markdown = [c for c, k in zip(cells, kinds, strict=True) if k == "markdown"]
    shown = code + [markdown[k] for k in rng.permutation(len(markdown))]
    kind = dict(zip(cells, kinds, strict=True))
    source = {c: ("import numpy as np\nx = np.arange(3)" if kind[c] == "code" else "# Load the data, \"quickly\"")
              for c in shown}
    return {"cell_type": {c: kind[c] for c in shown}, "source": source}, " ".join(cells)


def _write(raw: Path, folder: str, ids: list[str], rng: np.random.Generator) -> list[str]:
    (raw / folder).mkdir()
    orders = []
    for notebook in ids:
        data, order = _notebook(rng, _hex(rng, int(rng.integers(1, 6)), 8))
        (raw / folder / f"{notebook}.json").write_text(json.dumps(data))
        orders.append(order)
    return orders


def generate(raw: Path) -> None:
    rng = np.random.default_rng(2022)
    ids = _hex(rng, N_NOTEBOOKS + 3, 14)
    train, test = ids[:N_NOTEBOOKS], ids[N_NOTEBOOKS:]
    write_csv(pd.DataFrame({"id": train, "cell_order": _write(raw, "train", train, rng)}), raw / "train_orders.csv")
    sizes = rng.choice([1, 1, 1, 2, 3], N_NOTEBOOKS)
    ancestors, parents, start = [], [], 0
    while start < N_NOTEBOOKS:  # forks of one original share its ancestor
        group = train[start:start + int(sizes[start])]
        ancestors += [group[0][:8]] * len(group)
        parents += [None] + group[:-1]
        start += len(group)
    write_csv(pd.DataFrame({"id": train, "ancestor_id": ancestors, "parent_id": parents}), raw / "train_ancestors.csv")
    orders = _write(raw, "test", test, rng)
    write_csv(pd.DataFrame({"id": test, "cell_order": orders}), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "id")


def expected_test_ids(raw: Path) -> list[str]:
    """Shuffle the ancestry rows (pandas, seed 0), take ancestor groups by first appearance while they fit in
    20,000, and list the chosen notebooks in train_orders.csv order."""
    shuffled = pd.read_csv(raw / "train_ancestors.csv").sample(frac=1, random_state=0)
    chosen: set[str] = set()
    for _, group in shuffled.groupby("ancestor_id", sort=False):
        if len(chosen) + len(group) <= 20_000:
            chosen.update(group["id"])
    return [i for i in pd.read_csv(raw / "train_orders.csv")["id"] if i in chosen]


def noisy_submission(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """The true orders, with the cells of about a third of the notebooks shuffled."""
    orders = []
    for order in answers["cell_order"]:
        cells = order.split()
        orders.append(" ".join(cells[k] for k in rng.permutation(len(cells))) if rng.random() < 0.3 else order)
    return pd.DataFrame({"id": answers["id"], "cell_order": orders})
