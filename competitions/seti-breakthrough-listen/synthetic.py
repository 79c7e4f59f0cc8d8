"""Synthetic raw data for seti-breakthrough-listen (see mle_env.competition.synthetic)."""

import io
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import binary, hex_ids, split_recipe, write_csv

PUBLIC = frozenset({"old_leaky_data", "sample_submission.csv", "test", "train", "train_labels.csv"})
PRIVATE = frozenset({"test.csv"})


def npy_bytes(rng: np.random.Generator) -> bytes:
    """A tiny cadence snippet: float16, six scans of 4 x 4 (Kaggle's are 6 x 273 x 256)."""
    out = io.BytesIO()
    np.save(out, rng.normal(0, 1, (6, 4, 4)).astype(np.float16))
    return out.getvalue()


def _snippets(folder: Path, ids: list[str], rng: np.random.Generator) -> None:
    for snippet in ids:
        path = folder / snippet[0] / f"{snippet}.npy"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(npy_bytes(rng))


def generate(raw: Path) -> None:
    rng = np.random.default_rng(61)
    ids = hex_ids(rng, 116, 15)
    train, test, old = ids[:100], ids[100:106], ids[106:]
    write_csv(pd.DataFrame({"id": train, "target": binary(rng, 100)}), raw / "train_labels.csv")
    write_csv(pd.DataFrame({"id": test, "target": 0.5}), raw / "sample_submission.csv")
    _snippets(raw / "train", train, rng)
    _snippets(raw / "test", test, rng)
    write_csv(pd.DataFrame({"id": old, "target": binary(rng, 10)}), raw / "old_leaky_data" / "train_labels_old.csv")
    _snippets(raw / "old_leaky_data" / "train_old", old, rng)


ids_from_answers, expected_test_ids = split_recipe("id", 0.1, "train_labels.csv")
