"""Synthetic raw data for plant-seedlings-classification (see mle_env.competition.synthetic)."""

import os
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import column_ids, hex_ids, image_bytes, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test", "train"})
PRIVATE = frozenset({"answers.csv"})
SPECIES = ["Black-grass", "Charlock", "Cleavers", "Common Chickweed", "Common wheat", "Fat Hen",
           "Loose Silky-bent", "Maize", "Scentless Mayweed", "Shepherds Purse", "Small-flowered Cranesbill",
           "Sugar beet"]


def generate(raw: Path) -> None:
    rng = np.random.default_rng(31)
    names = hex_ids(rng, 80, 9)
    counts = rng.integers(3, 9, len(SPECIES))
    start = 0
    for species, count in zip(SPECIES[::-1], counts, strict=True):  # folders created out of name order
        folder = raw / "train" / species
        folder.mkdir(parents=True)
        for k, name in enumerate(names[start:start + count]):
            (folder / f"{name}.png").write_bytes(image_bytes("PNG", (10, 10), seed=start + k))
        start += count
    test = names[start:start + 3]
    (raw / "test").mkdir()
    for k, name in enumerate(test):
        (raw / "test" / f"{name}.png").write_bytes(image_bytes("PNG", (10, 10), seed=200 + k))
    write_csv(pd.DataFrame({"file": [f"{n}.png" for n in test], "species": "Sugar beet"}),
              raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "file")


def expected_test_ids(raw: Path) -> list[str]:
    """MLE-bench's walk (sorted species folders, then each one's sorted .png files), split 86/14."""
    from sklearn.model_selection import train_test_split

    train = raw / "train"
    rows = [{"file": f, "species": s} for s in sorted(os.listdir(train)) if os.path.isdir(train / s)
            for f in sorted(os.listdir(train / s)) if f.endswith(".png")]
    return list(train_test_split(pd.DataFrame(rows), test_size=0.14, random_state=0)[1]["file"])
