"""Synthetic raw data for tweet-sentiment-extraction (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import hex_ids, split_recipe, texts, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test.csv", "train.csv"})
PRIVATE = frozenset({"test.csv"})
SENTIMENTS = ["negative", "neutral", "positive"]


def generate(raw: Path) -> None:
    """Kaggle's three CSVs; each selected_text is a run of words of its text (leading spaces kept, as in
    Kaggle's tweets)."""
    rng = np.random.default_rng(31)
    n = 80
    tweets = [f" {t} extra words {k}" if k % 3 else t for k, t in enumerate(texts(rng, n))]
    selected = []
    for tweet in tweets:
        words = tweet.split()
        start = int(rng.integers(len(words)))
        selected.append(" ".join(words[start:start + int(rng.integers(1, 4))]))
    ids = hex_ids(rng, n + 4, 10)
    train = pd.DataFrame({"textID": ids[:n], "text": tweets, "selected_text": selected,
                          "sentiment": rng.choice(SENTIMENTS, n)})
    test = pd.DataFrame({"textID": ids[n:], "text": texts(rng, 4), "sentiment": rng.choice(SENTIMENTS, 4)})
    write_csv(train, raw / "train.csv")
    write_csv(test, raw / "test.csv")
    write_csv(test[["textID"]].assign(selected_text=""), raw / "sample_submission.csv")


ids_from_answers, expected_test_ids = split_recipe("textID", 0.1)
