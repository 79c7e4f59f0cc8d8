"""Synthetic raw data for imet-2020-fgvc7 (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import hex_ids, split_recipe, write_csv, write_images

PUBLIC = frozenset({"labels.csv", "sample_submission.csv", "test", "train", "train.csv"})
PRIVATE = frozenset({"answers.csv"})
ATTRIBUTES = 40


def generate(raw: Path) -> None:
    rng = np.random.default_rng(23)
    ids = hex_ids(rng, 66, 32)
    train, test = ids[:60], ids[60:]
    # attributes 0-2 (the sample's guess) are rare, as most of the real ones are
    weights = np.r_[np.full(3, 0.2), np.ones(ATTRIBUTES - 3)]
    attributes = [" ".join(str(a) for a in sorted(rng.choice(ATTRIBUTES, int(rng.integers(1, 5)), replace=False,
                                                            p=weights / weights.sum())))
                  for _ in train]
    write_csv(pd.DataFrame({"id": train, "attribute_ids": attributes}), raw / "train.csv")
    names = [f"{'culture' if a < 10 else 'tag'}::thing {a}" for a in range(ATTRIBUTES)]
    write_csv(pd.DataFrame({"attribute_id": range(ATTRIBUTES), "attribute_name": names}), raw / "labels.csv")
    write_csv(pd.DataFrame({"id": test, "attribute_ids": "0 1 2"}), raw / "sample_submission.csv")
    write_images(raw / "train", train, "PNG", (7, 9))
    write_images(raw / "test", test, "PNG", (7, 9))


ids_from_answers, expected_test_ids = split_recipe("id", 0.15)
