"""Synthetic raw data for plant-pathology-2020-fgvc7 (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import split_recipe, write_csv, write_images

PUBLIC = frozenset({"images", "sample_submission.csv", "test.csv", "train.csv"})
PRIVATE = frozenset({"test.csv"})
CLASSES = ["healthy", "multiple_diseases", "rust", "scab"]


def generate(raw: Path) -> None:
    rng = np.random.default_rng(13)
    n = 80
    labels = np.eye(4, dtype=int)[rng.integers(0, 4, n)]
    train = pd.DataFrame({"image_id": [f"Train_{i}" for i in range(n)]})
    train[CLASSES] = labels
    write_csv(train, raw / "train.csv")
    write_csv(pd.DataFrame({"image_id": [f"Test_{i}" for i in range(5)]}), raw / "test.csv")
    write_csv(pd.DataFrame({"image_id": [f"Test_{i}" for i in range(5)]}).assign(**dict.fromkeys(CLASSES, 0.25)),
              raw / "sample_submission.csv")
    write_images(raw / "images", [*train["image_id"], *(f"Test_{i}" for i in range(5))], "JPEG", (8, 6))


# The test images are renumbered, so one label column in answer order identifies the split.
ids_from_answers, expected_test_ids = split_recipe("rust", 0.1)
