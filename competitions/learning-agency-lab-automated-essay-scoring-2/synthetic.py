"""Synthetic raw data for learning-agency-lab-automated-essay-scoring-2 (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import hex_ids, split_recipe, texts, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test.csv", "train.csv"})
PRIVATE = frozenset({"answers.csv"})


def generate(raw: Path) -> None:
    """Kaggle's three CSVs: essays with integer scores 1-6 (every score in the test share too)."""
    rng = np.random.default_rng(23)
    n = 120
    ids = hex_ids(rng, n + 3, 7)
    train = pd.DataFrame({"essay_id": ids[:n], "full_text": texts(rng, n), "score": rng.integers(1, 7, n)})
    test = pd.DataFrame({"essay_id": ids[n:], "full_text": texts(rng, 3)})
    write_csv(train, raw / "train.csv")
    write_csv(test, raw / "test.csv")
    write_csv(test[["essay_id"]].assign(score=3), raw / "sample_submission.csv")


ids_from_answers, expected_test_ids = split_recipe("essay_id", 0.1)
