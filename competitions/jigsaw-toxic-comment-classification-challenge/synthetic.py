"""Synthetic raw data for jigsaw-toxic-comment-classification-challenge (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import binary, csv_text, hex_ids, texts, unsplit_recipe, write_zip

PUBLIC = frozenset({"sample_submission.csv", "test.csv", "train.csv"})
PRIVATE = frozenset({"test.csv"})
LABELS = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]


def generate(raw: Path) -> None:
    rng = np.random.default_rng(8)
    ids = hex_ids(rng, 60, 16)
    train_ids, test_ids = ids[:40], ids[40:]
    train = pd.DataFrame({"id": train_ids, "comment_text": texts(rng, 40)})
    for label in LABELS:
        train[label] = binary(rng, 40)
    test = pd.DataFrame({"id": test_ids, "comment_text": texts(rng, 20)})
    labels = pd.DataFrame({"id": test_ids})
    for j, label in enumerate(LABELS):  # rows 0-3 are not scored (-1); every label has both classes
        labels[label] = [-1] * 4 + [(i + j) % 2 for i in range(16)]
    sample = pd.DataFrame({"id": test_ids}).assign(**dict.fromkeys(LABELS, 0.5))
    for name, frame in (("train", train), ("test", test), ("test_labels", labels), ("sample_submission", sample)):
        write_zip(raw / f"{name}.csv.zip", {f"{name}.csv": csv_text(frame)})


ids_from_answers, expected_test_ids = unsplit_recipe("test_labels.csv.zip", "id")
