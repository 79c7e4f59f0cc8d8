"""Synthetic raw data for ranzcr-clip-catheter-line-classification (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.registry import get_spec
from mle_env.competition.synthetic import split_recipe, write_csv, write_images

PUBLIC = frozenset({"sample_submission.csv", "test", "train", "train.csv", "train_annotations.csv"})
PRIVATE = frozenset({"test.csv"})


def _uid(rng: np.random.Generator) -> str:
    return "1.2.826.0.1.3680043.8.498." + str(rng.integers(10**10, 10**11))


def generate(raw: Path) -> None:
    rng = np.random.default_rng(15)
    classes = list(get_spec("ranzcr-clip-catheter-line-classification").submission.target_columns or ())
    n = 100
    uids = list(dict.fromkeys(_uid(rng) for _ in range(n + 10)))
    train_uids, test_uids = uids[:n], uids[n:]
    train = pd.DataFrame({"StudyInstanceUID": train_uids})
    train[classes] = rng.integers(0, 2, (n, len(classes)))
    train["PatientID"] = [f"ec{i % 30:06x}" for i in range(n)]
    write_csv(train, raw / "train.csv")
    rows = [(u, "CVC - Normal", f"[[{i}, {i + 5}], [{i + 1}, {i + 9}]]") for i, u in enumerate(train_uids[::3])]
    write_csv(pd.DataFrame(rows, columns=["StudyInstanceUID", "label", "data"]), raw / "train_annotations.csv")
    write_csv(pd.DataFrame({"StudyInstanceUID": test_uids}).assign(**dict.fromkeys(classes, 0)),
              raw / "sample_submission.csv")
    for folder, names in (("train", train_uids), ("test", test_uids)):
        write_images(raw / folder, names, "JPEG", (8, 8), "L")
    (raw / "train_tfrecords").mkdir()
    (raw / "test_tfrecords").mkdir()


ids_from_answers, expected_test_ids = split_recipe("StudyInstanceUID", 0.1)
