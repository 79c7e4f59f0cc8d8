"""Synthetic raw data for chaii-hindi-and-tamil-question-answering (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import hex_ids, split_recipe, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test.csv", "train.csv"})
PRIVATE = frozenset({"test.csv"})
CONTEXTS = {"hindi": "भारत की राजधानी नई दिल्ली है, और \"गंगा\" एक नदी है।\nदूसरी पंक्ति",
            "tamil": "தமிழ்நாட்டின் தலைநகரம் சென்னை ஆகும், 1947 இல்"}


def generate(raw: Path) -> None:
    """Kaggle's three CSVs: each answer is a run of space-separated words of its context, found at answer_start."""
    rng = np.random.default_rng(41)
    n = 60
    rows = []
    for k, language in enumerate(rng.choice(list(CONTEXTS), n)):
        context = f"{CONTEXTS[language]} {k}"
        words = context.split(" ")
        start = int(rng.integers(len(words) - 1))
        answer = " ".join(words[start:start + int(rng.integers(1, 3))])
        rows.append({"context": context, "question": f"प्रश्न {k}?", "answer_text": answer,
                     "answer_start": context.index(answer), "language": language})
    ids = hex_ids(rng, n + 2, 9)
    train = pd.DataFrame(rows).assign(id=ids[:n])[["id", "context", "question", "answer_text", "answer_start",
                                                    "language"]]
    test = train.head(2)[["context", "question", "language"]].assign(id=ids[n:])[["id", "context", "question",
                                                                                   "language"]]
    write_csv(train, raw / "train.csv")
    write_csv(test, raw / "test.csv")
    write_csv(test[["id"]].assign(PredictionString=""), raw / "sample_submission.csv")


ids_from_answers, expected_test_ids = split_recipe("id", 0.1)
