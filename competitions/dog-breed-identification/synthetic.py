"""Synthetic raw data for dog-breed-identification (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.registry import get_spec
from mle_env.competition.synthetic import hex_ids, split_recipe, write_csv, write_images

PUBLIC = frozenset({"labels.csv", "sample_submission.csv", "test", "train"})
PRIVATE = frozenset({"test.csv"})


def generate(raw: Path) -> None:
    rng = np.random.default_rng(5)
    breeds = get_spec("dog-breed-identification").prepare.params["classes"]
    ids = hex_ids(rng, 60, 32)
    train, test = ids[:50], ids[50:]
    write_csv(pd.DataFrame({"id": train, "breed": rng.choice(breeds, 50)}), raw / "labels.csv")
    sample = pd.DataFrame({"id": test, **dict.fromkeys(breeds, 1 / len(breeds))})
    write_csv(sample, raw / "sample_submission.csv")
    for folder, names in (("train", train), ("test", test)):
        write_images(raw / folder, names, "JPEG", (10, 9))


ids_from_answers, expected_test_ids = split_recipe("id", 0.1, "labels.csv")
