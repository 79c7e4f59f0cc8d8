"""Synthetic raw data for paddy-disease-classification (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import column_ids, image_bytes, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test_images", "train.csv", "train_images"})
PRIVATE = frozenset({"test.csv"})
LABELS = ["bacterial_leaf_blight", "bacterial_leaf_streak", "bacterial_panicle_blight", "blast", "brown_spot",
          "dead_heart", "downy_mildew", "hispa", "normal", "tungro"]
VARIETIES = ["ADT45", "IR20", "KarnatakaPonni", "Onthanel", "Ponni", "Surya", "Zonal", "AndraPonni",
             "AtchayaPonni", "RR"]


def generate(raw: Path) -> None:
    rng = np.random.default_rng(29)
    ids = [f"{i}.jpg" for i in rng.choice(np.arange(100000, 110999), 64, replace=False)]
    train = pd.DataFrame({"image_id": ids, "label": rng.choice(LABELS, 64), "variety": rng.choice(VARIETIES, 64),
                          "age": rng.choice([45, 50, 55, 60, 65, 70, 72, 75, 80], 64)})
    write_csv(train, raw / "train.csv")
    for k, (image, label) in enumerate(zip(train["image_id"], train["label"], strict=True)):
        (raw / "train_images" / label).mkdir(parents=True, exist_ok=True)
        (raw / "train_images" / label / image).write_bytes(image_bytes("JPEG", (8, 12), seed=k))
    test = [f"{200001 + k}.jpg" for k in range(3)]
    (raw / "test_images").mkdir()
    for k, image in enumerate(test):
        (raw / "test_images" / image).write_bytes(image_bytes("JPEG", (8, 12), seed=100 + k))
    write_csv(pd.DataFrame({"image_id": test, "label": ""}), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "image_id")


def expected_test_ids(raw: Path) -> list[str]:
    """MLE-bench's call as written: three quarters of train.csv kept for training, the rest held out."""
    from sklearn.model_selection import train_test_split

    frame = pd.read_csv(raw / "train.csv")
    return list(train_test_split(frame, train_size=0.75, random_state=0)[1]["image_id"])
