"""Synthetic raw data for leaf-classification (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.registry import get_spec
from mle_env.competition.synthetic import csv_text, image_bytes, split_recipe, write_zip

PUBLIC = frozenset({"images", "sample_submission.csv", "test.csv", "train.csv"})
PRIVATE = frozenset({"test.csv"})


def generate(raw: Path) -> None:
    rng = np.random.default_rng(9)
    species = get_spec("leaf-classification").prepare.params["classes"]
    features = [f"{kind}{i}" for kind in ("margin", "shape", "texture") for i in range(1, 65)]
    ids = rng.permutation(np.arange(1, 61))
    train_ids, test_ids = np.sort(ids[:50]), np.sort(ids[50:])
    train = pd.DataFrame({"id": train_ids, "species": rng.choice(species, 50),
                          **dict(zip(features, rng.random((len(features), 50)).round(6), strict=True))})
    test = pd.DataFrame({"id": test_ids, **dict(zip(features, rng.random((len(features), 10)).round(6), strict=True))})
    sample = pd.DataFrame({"id": test_ids, **dict.fromkeys(species, 1 / 99)})
    for name, frame in (("train", train), ("test", test), ("sample_submission", sample)):
        write_zip(raw / f"{name}.csv.zip", {f"{name}.csv": csv_text(frame)})
    write_zip(raw / "images.zip", {f"images/{i}.jpg": image_bytes("JPEG", (10, 8), "L", seed=int(i)) for i in ids})


ids_from_answers, expected_test_ids = split_recipe("id", 0.1, "train.csv.zip")
