"""Synthetic raw data for petfinder-pawpularity-score (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import binary, hex_ids, split_recipe, write_csv, write_images

PUBLIC = frozenset({"sample_submission.csv", "test", "test.csv", "train", "train.csv"})
PRIVATE = frozenset({"test.csv"})
FLAGS = ["Subject Focus", "Eyes", "Face", "Near", "Action", "Accessory", "Group", "Collage", "Human",
         "Occlusion", "Info", "Blur"]


def generate(raw: Path) -> None:
    rng = np.random.default_rng(21)
    ids = hex_ids(rng, 68, 32)
    train, test = ids[:60], ids[60:]
    frame = pd.DataFrame({"Id": train, **{flag: binary(rng, 60) for flag in FLAGS},
                          "Pawpularity": np.clip(rng.normal(38, 20, 60).round(), 1, 100).astype(int)})
    write_csv(frame, raw / "train.csv")
    write_csv(pd.DataFrame({"Id": test, **{flag: binary(rng, 8) for flag in FLAGS}}), raw / "test.csv")
    write_csv(pd.DataFrame({"Id": test, "Pawpularity": [67.75, 1.0, 100.0, 30.5, 45.25, 10.0, 90.0, 50.0]}),
              raw / "sample_submission.csv")
    write_images(raw / "train", train, "JPEG", (9, 7))
    write_images(raw / "test", test, "JPEG", (9, 7))


ids_from_answers, expected_test_ids = split_recipe("Id", 0.1)
