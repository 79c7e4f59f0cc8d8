"""Synthetic raw data for lmsys-chatbot-arena (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import split_recipe, texts, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test.csv", "train.csv"})
PRIVATE = frozenset({"answers.csv"})
MODELS = ["gpt-4-0613", "claude-2.1", "llama-2-70b-chat", "vicuna-13b"]
WINNERS = ["winner_model_a", "winner_model_b", "winner_tie"]


def generate(raw: Path) -> None:
    """Kaggle's three CSVs; prompts and responses are JSON lists of strings, as Kaggle writes them."""
    rng = np.random.default_rng(37)
    n = 90
    ids = [int(v) for v in rng.choice(4_000_000_000, n + 3, replace=False)]

    def turns(k: int) -> list[str]:
        return [f'["{t}"]'.replace("\n", "\\n").replace('""', '"') for t in texts(rng, k)]

    winner = rng.integers(0, 3, n)
    train = pd.DataFrame({"id": ids[:n], "model_a": rng.choice(MODELS, n), "model_b": rng.choice(MODELS, n),
                          "prompt": turns(n), "response_a": turns(n), "response_b": turns(n),
                          **{w: (winner == k).astype(int) for k, w in enumerate(WINNERS)}})
    test = pd.DataFrame({"id": ids[n:], "prompt": turns(3), "response_a": turns(3), "response_b": turns(3)})
    write_csv(train, raw / "train.csv")
    write_csv(test, raw / "test.csv")
    write_csv(test[["id"]].assign(**dict.fromkeys(WINNERS, 1 / 3)), raw / "sample_submission.csv")


ids_from_answers, expected_test_ids = split_recipe("id", 0.1)
