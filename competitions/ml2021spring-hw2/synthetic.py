"""Synthetic raw data for ml2021spring-hw2 (see mle_env.competition.synthetic).

Kaggle's zip unpacks to ``timit_11/timit_11/`` holding ``train_11.npy`` (float32 frames, one row per frame),
``train_label_11.npy`` (one label per frame) and ``test_11.npy`` (unlabelled frames). Neither the feature
width nor the label dtype is documented; this data assumes the course's layout: 429 features per row (a
frame with five neighbours on each side, 11 x 39 MFCC values) and labels stored as short numeric strings
(``<U2``, "0" to "38", which the course's sample code turns into integers with ``astype(int)``).
"""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import held_out

PUBLIC = frozenset({"sampleSubmission.csv", "timit_11"})
PRIVATE = frozenset({"answers.csv"})
FOLDER = "timit_11/timit_11"
FEATURES = 11 * 39
CLASSES = 39


def generate(raw: Path) -> None:
    rng = np.random.default_rng(2021)
    folder = raw / FOLDER
    folder.mkdir(parents=True)
    np.save(folder / "train_11.npy", rng.normal(0, 1, (300, FEATURES)).astype(np.float32))
    np.save(folder / "train_label_11.npy", rng.integers(0, CLASSES, 300).astype(str).astype("<U2"))
    np.save(folder / "test_11.npy", rng.normal(0, 1, (110, FEATURES)).astype(np.float32))


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    """Each answer row as "<Id>:<ClassId>" (the ids alone are just 0..n-1, so the labels tell the rows apart)."""
    return [f"{i}:{c}" for i, c in zip(answers["Id"], answers["ClassId"], strict=True)]


def expected_test_ids(raw: Path) -> list[str]:
    """Frame numbers split with Kaggle's test share (test frames over all frames), seed 0, then numbered 0.."""
    train = np.load(raw / FOLDER / "train_label_11.npy")
    kaggle_test = len(np.load(raw / FOLDER / "test_11.npy"))
    rows = held_out(list(range(len(train))), kaggle_test / (len(train) + kaggle_test))
    return [f"{k}:{train[r]}" for k, r in enumerate(rows)]
