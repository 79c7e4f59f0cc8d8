"""Synthetic raw data for invasive-species-monitoring (see mle_env.competition.synthetic).

Kaggle ships ``train.7z`` (``train/<name>.jpg``), ``train_labels.csv.zip`` (``train_labels.csv``: ``name``, a
plain integer, and ``invasive``, 0/1), ``test.7z`` (``test/<name>.jpg``, unlabelled) and
``sample_submission.csv.zip`` (``name``, ``invasive`` = 0.5); only the first two are used.
"""

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.archives import write_7z
from mle_env.competition.synthetic import binary, csv_text, image_bytes, split_recipe, write_zip

PUBLIC = frozenset({"sample_submission.csv", "test", "train", "train_labels.csv"})
PRIVATE = frozenset({"answers.csv"})
N_TRAIN, N_TEST = 41, 6  # 41 rows: a test share of 0.2 (9 rows) and Kaggle's 0.4 (17) differ


def _images_7z(archive: Path, folder: str, names: list[int], seed: int) -> None:
    """``archive`` holding ``<folder>/<name>.jpg`` for each name: small seeded JPEGs."""
    with tempfile.TemporaryDirectory() as staging:
        pairs = []
        for n, name in enumerate(names):
            staged = Path(staging) / f"{name}.jpg"
            staged.write_bytes(image_bytes("JPEG", (24, 18), seed=seed + n))
            pairs.append((staged, f"{folder}/{name}.jpg"))
        write_7z(pairs, archive)


def generate(raw: Path) -> None:
    rng = np.random.default_rng(61)
    train = list(range(1, N_TRAIN + 1))
    test = list(range(1, N_TEST + 1))  # Kaggle numbers the test photos from 1 as well
    _images_7z(raw / "train.7z", "train", train, 0)
    _images_7z(raw / "test.7z", "test", test, 1000)
    labels = pd.DataFrame({"name": train, "invasive": binary(rng, N_TRAIN)})
    write_zip(raw / "train_labels.csv.zip", {"train_labels.csv": csv_text(labels)})
    sample = pd.DataFrame({"name": test, "invasive": 0.5})
    write_zip(raw / "sample_submission.csv.zip", {"sample_submission.csv": csv_text(sample)})


ids_from_answers, expected_test_ids = split_recipe("name", 0.2, "train_labels.csv.zip")
