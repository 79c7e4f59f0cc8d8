"""Synthetic raw data for billion-word-imputation (see mle_env.competition.synthetic).

Kaggle ships ``train_v2.txt.zip`` (``train_v2.txt``: one tokenised English sentence per line, punctuation
separated by spaces) and ``test_v2.txt.zip`` (``test_v2.txt``: the CSV ``"id","sentence"`` of its own test
sentences, each missing one word).
"""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import write_zip

PUBLIC = frozenset({"test_v2.txt.zip", "train_v2.txt.zip"})
PRIVATE = frozenset({"sample_submission.csv", "test.csv"})
WORDS = ["market", "yesterday", "government", "\"quoted\"", "shares", "ministers", "announced", "people",
         "between", "children", "economic", "because", "percent", "company", "officials", "thousands", "there's",
         "Müller", "café", ",", "should", "against"]


def _sentence(rng: np.random.Generator, n: int) -> str:
    if n % 37 == 0:
        return "Thanks ."  # two words: never a test sentence
    words = [WORDS[k] for k in rng.integers(0, len(WORDS), int(rng.integers(3, 14)))]
    return "The " + " ".join(words) + " ."


def generate(raw: Path) -> None:
    rng = np.random.default_rng(5)
    lines = [_sentence(rng, n) for n in range(4000)]
    write_zip(raw / "train_v2.txt.zip", {"train_v2.txt": "".join(f"{line}\n" for line in lines)})
    test = "".join(f'{i},"{s.replace(chr(34), chr(34) * 2)}"\n' for i, s in enumerate(lines[:5]))
    write_zip(raw / "test_v2.txt.zip", {"test_v2.txt": '"id","sentence"\n' + test})


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    """The test set as its original sentences, in id order (the ids themselves are just 0..n-1)."""
    return list(answers.sort_values("id", key=lambda c: c.astype(int))["sentence"])


def expected_test_ids(raw: Path) -> list[str]:
    """The lines MLE-bench's single RandomState(0) pass puts in the test set: a uniform draw per line,
    <= 0.01 and more than two words, then one randint to pick the removed word."""
    import zipfile

    rng = np.random.RandomState(0)
    picked = []
    with zipfile.ZipFile(raw / "train_v2.txt.zip") as zf:
        text = zf.read("train_v2.txt").decode("utf-8")
    for line in text.splitlines():
        if rng.uniform() <= 0.01 and len(line.split()) > 2:
            picked.append(line.strip())
            rng.randint(1, len(line.split()) - 1)
    return picked
