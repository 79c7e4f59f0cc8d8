"""Synthetic raw data for aerial-cactus-identification (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import binary, hex_ids, image_bytes, split_recipe, write_csv, write_zip

PUBLIC = frozenset({"sample_submission.csv", "test.zip", "train.csv", "train.zip"})
PRIVATE = frozenset({"test.csv"})


def generate(raw: Path) -> None:
    rng = np.random.default_rng(1)
    ids = [f"{h}.jpg" for h in hex_ids(rng, 57, 32)]
    train, test = ids[:47], ids[47:]  # 47 rows: a test share of 0.19 and of 0.2 give different test sizes
    write_csv(pd.DataFrame({"id": train, "has_cactus": binary(rng, 47)}), raw / "train.csv")
    write_zip(raw / "train.zip", {f"train/{i}": image_bytes("JPEG", (32, 32), seed=n) for n, i in enumerate(train)})
    write_zip(raw / "test.zip", {f"test/{i}": image_bytes("JPEG", (32, 32)) for i in test})
    write_csv(pd.DataFrame({"id": test, "has_cactus": 0.5}), raw / "sample_submission.csv")


ids_from_answers, expected_test_ids = split_recipe("id", 0.19)
