"""Synthetic raw data for cassava-leaf-disease-classification (see mle_env.competition.synthetic)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import column_ids, held_out, image_bytes, siim_tfrecord, write_csv

PUBLIC = frozenset({"label_num_to_disease_map.json", "sample_submission.csv", "test_images", "test_tfrecords",
                    "train.csv", "train_images", "train_tfrecords"})
PRIVATE = frozenset({"test.csv"})
DISEASES = {"0": "Cassava Bacterial Blight (CBB)", "1": "Cassava Brown Streak Disease (CBSD)",
            "2": "Cassava Green Mottle (CGM)", "3": "Cassava Mosaic Disease (CMD)", "4": "Healthy"}
KAGGLE_TEST_IMAGE = "2216849948.jpg"


def _shard(path: Path, names: list[str], labels: list[int] | None) -> None:
    tfrecord = siim_tfrecord()
    records = []
    for k, name in enumerate(names):
        features: dict = {"image": image_bytes("JPEG", (8, 8), seed=k), "image_name": name.encode()}
        if labels is not None:
            features["target"] = [int(labels[k])]
        records.append(tfrecord.encode_example(features))
    tfrecord.write_records(path, records)


def generate(raw: Path) -> None:
    rng = np.random.default_rng(37)
    sizes = rng.integers(3, 6, 16)
    names = [f"{n}.jpg" for n in 10**8 + rng.choice(4 * 10**9, int(sizes.sum()), replace=False)]
    labels = rng.choice(5, len(names), p=[0.1, 0.2, 0.2, 0.42, 0.08])
    start = 0
    for number, size in enumerate(sizes):
        part = slice(start, start + size)
        _shard(raw / "train_tfrecords" / f"ld_train{number:02d}-{size}.tfrec", names[part], list(labels[part]))
        start += size
    train = pd.DataFrame({"image_id": names, "label": labels}).sort_values("image_id")
    write_csv(train, raw / "train.csv")
    for folder, images in (("train_images", names), ("test_images", [KAGGLE_TEST_IMAGE])):
        (raw / folder).mkdir(parents=True, exist_ok=True)
        for k, name in enumerate(images):
            (raw / folder / name).write_bytes(image_bytes("JPEG", (8, 8), seed=k))
    _shard(raw / "test_tfrecords" / "ld_test00-1.tfrec", [KAGGLE_TEST_IMAGE], None)
    (raw / "label_num_to_disease_map.json").write_text(json.dumps(DISEASES))
    write_csv(pd.DataFrame({"image_id": [KAGGLE_TEST_IMAGE], "label": [4]}), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "image_id")


def expected_test_ids(raw: Path) -> list[str]:
    """train.csv's rows (in its order) whose image is in the 10 % of the sorted shard files held out."""
    shards = sorted((raw / "train_tfrecords").glob("*.tfrec"))
    held = {name for shard in held_out(shards, 0.1) for name in siim_tfrecord().shard_strings(shard, "image_name")}
    return [name for name in pd.read_csv(raw / "train.csv", dtype=str)["image_id"] if name in held]
