"""Synthetic raw data for spooky-author-identification (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import csv_text, split_recipe, texts, write_zip

PUBLIC = frozenset({"sample_submission.csv", "test.csv", "train.csv"})
PRIVATE = frozenset({"test.csv"})


def generate(raw: Path) -> None:
    rng = np.random.default_rng(17)
    train = pd.DataFrame({"id": [f"id{i:05d}" for i in rng.choice(30000, 60, replace=False)],
                          "text": texts(rng, 60), "author": rng.choice(["EAP", "HPL", "MWS"], 60)})
    test = pd.DataFrame({"id": ["id90001", "id90002"], "text": texts(rng, 2)})
    sample = test[["id"]].assign(EAP=0.403493538995863, HPL=0.287808366106543, MWS=0.308698094897594)
    for name, frame in (("train", train), ("test", test), ("sample_submission", sample)):
        write_zip(raw / f"{name}.zip", {f"{name}.csv": csv_text(frame)})


ids_from_answers, expected_test_ids = split_recipe("id", 0.1, "train.zip")
