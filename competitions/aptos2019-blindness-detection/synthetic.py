"""Synthetic raw data for aptos2019-blindness-detection (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import hex_ids, split_recipe, write_csv, write_images

PUBLIC = frozenset({"sample_submission.csv", "test.csv", "test_images", "train.csv", "train_images"})
PRIVATE = frozenset({"test.csv"})


def generate(raw: Path) -> None:
    rng = np.random.default_rng(2)
    ids = hex_ids(rng, 50, 12)
    train, test = ids[:40], ids[40:]
    write_csv(pd.DataFrame({"id_code": train, "diagnosis": rng.integers(0, 5, 40)}), raw / "train.csv")
    write_csv(pd.DataFrame({"id_code": test}), raw / "test.csv")
    write_csv(pd.DataFrame({"id_code": test, "diagnosis": 0}), raw / "sample_submission.csv")
    for folder, names in (("train_images", train), ("test_images", test)):
        write_images(raw / folder, names, "PNG", (12, 10))


ids_from_answers, expected_test_ids = split_recipe("id_code", 0.1)
