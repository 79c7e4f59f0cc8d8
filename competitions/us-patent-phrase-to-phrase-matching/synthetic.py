"""Synthetic raw data for us-patent-phrase-to-phrase-matching (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import hex_ids, split_recipe, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test.csv", "train.csv"})
PRIVATE = frozenset({"test.csv"})
PHRASES = ["abatement", "acid absorption", "adjust gas flow", "ünïcödé layer", "wet, \"dry\" process", "bolt"]
CONTEXTS = ["A47", "B01", "C08", "F16", "H01"]


def generate(raw: Path) -> None:
    """Kaggle's three CSVs: anchor/target phrase pairs in a CPC context, scored 0, 0.25, ..., 1."""
    rng = np.random.default_rng(29)
    n = 90
    ids = hex_ids(rng, n + 3, 16)
    train = pd.DataFrame({"id": ids[:n], "anchor": rng.choice(PHRASES, n),
                          "target": [f"{p} {k}" for k, p in enumerate(rng.choice(PHRASES, n))],
                          "context": rng.choice(CONTEXTS, n), "score": rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], n)})
    test = train.head(3).drop(columns=["score"]).assign(id=ids[n:])
    write_csv(train, raw / "train.csv")
    write_csv(test, raw / "test.csv")
    write_csv(test[["id"]].assign(score=0), raw / "sample_submission.csv")


ids_from_answers, expected_test_ids = split_recipe("id", 0.1)
