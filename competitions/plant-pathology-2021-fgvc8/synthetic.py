"""Synthetic raw data for plant-pathology-2021-fgvc8 (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import hex_ids, split_recipe, write_csv, write_images

PUBLIC = frozenset({"sample_submission.csv", "test_images", "train.csv", "train_images"})
PRIVATE = frozenset({"answers.csv"})
LABELS = ["healthy", "scab", "frog_eye_leaf_spot", "rust", "complex", "powdery_mildew", "scab frog_eye_leaf_spot",
          "frog_eye_leaf_spot complex", "rust frog_eye_leaf_spot", "scab frog_eye_leaf_spot complex"]


def generate(raw: Path) -> None:
    rng = np.random.default_rng(29)
    names = hex_ids(rng, 63, 16)
    train, test = names[:60], names[60:]
    labels = rng.choice(LABELS, 60, p=[0.12] + [0.88 / (len(LABELS) - 1)] * (len(LABELS) - 1))
    write_csv(pd.DataFrame({"image": [f"{n}.jpg" for n in train], "labels": labels}), raw / "train.csv")
    write_csv(pd.DataFrame({"image": [f"{n}.jpg" for n in test], "labels": "healthy"}), raw / "sample_submission.csv")
    write_images(raw / "train_images", train, "JPEG", (8, 6))
    write_images(raw / "test_images", test, "JPEG", (8, 6))


ids_from_answers, expected_test_ids = split_recipe("image", 0.2)
