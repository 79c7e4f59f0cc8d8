"""Synthetic raw data for siim-isic-melanoma-classification (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import column_ids, dicom_bytes, image_bytes, siim_tfrecord, write_csv

PUBLIC = frozenset({"jpeg", "sample_submission.csv", "test", "test.csv", "tfrecords", "train", "train.csv"})
PRIVATE = frozenset({"test.csv"})
SITES = ["torso", "lower extremity", "upper extremity", "head/neck", ""]
#: the training shards MLE-bench's recipe turns into the test set
TEST_SHARDS = ("train00-2071.tfrec", "train06-2071.tfrec")


def generate(raw: Path) -> None:
    rng = np.random.default_rng(16)
    tfrecord = siim_tfrecord()
    shards, per_shard = 16, 3
    n = shards * per_shard
    names = [f"ISIC_{i:07d}" for i in rng.choice(10**7, n, replace=False)]
    target = np.array([i % 2 if i // per_shard in (0, 6) else int(rng.random() < 0.2) for i in range(n)])
    train = pd.DataFrame({
        "image_name": names,
        "patient_id": [f"IP_{i % 12:07d}" for i in range(n)],
        "sex": rng.choice(["male", "female", ""], n),
        "age_approx": rng.choice([35.0, 45.0, 60.0, np.nan], n),
        "anatom_site_general_challenge": rng.choice(SITES, n),
        "diagnosis": np.where(target == 1, "melanoma", "unknown"),
        "benign_malignant": np.where(target == 1, "malignant", "benign"),
        "target": target,
    })
    order = rng.permutation(n)  # the CSV lists images in another order than the shards
    write_csv(train.iloc[order], raw / "train.csv")
    test_names = [f"ISIC_9{i:06d}" for i in range(4)]
    test = pd.DataFrame({"image_name": test_names, "patient_id": "IP_9999999", "sex": "male", "age_approx": 50.0,
                         "anatom_site_general_challenge": "torso"})
    write_csv(test, raw / "test.csv")
    write_csv(pd.DataFrame({"image_name": test_names, "target": 0}), raw / "sample_submission.csv")
    jpeg = image_bytes("JPEG", (8, 8))
    for folder, image_names in (("train", names), ("test", test_names)):
        for sub, suffix, data in ((Path(folder), ".dcm", None), (Path("jpeg") / folder, ".jpg", jpeg)):
            (raw / sub).mkdir(parents=True, exist_ok=True)
            for name in image_names:
                (raw / sub / f"{name}{suffix}").write_bytes(data if data is not None else dicom_bytes(name))
    (raw / "tfrecords").mkdir()
    for s in range(shards):
        rows = train.iloc[s * per_shard:(s + 1) * per_shard]
        records = [tfrecord.encode_example({
            "image": jpeg, "image_name": r.image_name.encode(), "patient_id": [s], "sex": [1],
            "age_approx": [45], "anatom_site_general_challenge": [2], "diagnosis": [int(r.target) * 3],
            "target": [int(r.target)]}) for r in rows.itertuples()]
        tfrecord.write_records(raw / "tfrecords" / f"train{s:02d}-2071.tfrec", records)
    tfrecord.write_records(raw / "tfrecords" / "test00-687.tfrec",
                           [tfrecord.encode_example({"image": jpeg, "image_name": n.encode()}) for n in test_names])


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "image_name")


def expected_test_ids(raw: Path) -> list[str]:
    """The images of two training shards, in train.csv's order."""
    tfrecord = siim_tfrecord()
    names = {n.decode() for shard in TEST_SHARDS
             for r in tfrecord.read_records(raw / "tfrecords" / shard) for n in tfrecord.feature_bytes(r, "image_name")}
    return [n for n in pd.read_csv(raw / "train.csv")["image_name"] if n in names]
