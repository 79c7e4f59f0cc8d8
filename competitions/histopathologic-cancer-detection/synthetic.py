"""Synthetic raw data for histopathologic-cancer-detection (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import binary, column_ids, held_out, hex_ids, write_csv, write_images

PUBLIC = frozenset({"sample_submission.csv", "test", "train", "train_labels.csv"})
PRIVATE = frozenset({"answers.csv"})


def generate(raw: Path) -> None:
    rng = np.random.default_rng(7)
    ids = hex_ids(rng, 50, 40)
    train, test = ids[:40], ids[40:]
    write_csv(pd.DataFrame({"id": train, "label": binary(rng, 40)}), raw / "train_labels.csv")
    write_csv(pd.DataFrame({"id": test, "label": 0}), raw / "sample_submission.csv")
    for folder, names in (("train", train), ("test", test)):
        write_images(raw / folder, names, "TIFF", (8, 8))


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "id")


def expected_test_ids(raw: Path) -> list[str]:
    """As many labelled tiles as Kaggle's unlabelled test has, kept in the raw file's order."""
    labels = pd.read_csv(raw / "train_labels.csv")
    hidden = len(list((raw / "test").glob("*.tif")))
    test_ids = set(held_out(labels["id"], hidden / (len(labels) + hidden)))
    return [i for i in labels["id"] if i in test_ids]
