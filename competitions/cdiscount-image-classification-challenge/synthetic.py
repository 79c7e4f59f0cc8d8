"""Synthetic raw data for cdiscount-image-classification-challenge (see mle_env.competition.synthetic);
BSON is written with pymongo's ``bson`` module."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import column_ids, held_out, image_bytes, write_csv

PUBLIC = frozenset({"category_names.csv", "sample_submission.csv", "test.bson", "train.bson", "train_example.bson"})
PRIVATE = frozenset({"answers.csv"})
CATEGORIES = [1000010653, 1000010667, 1000004079, 1000004141, 1000015539, 1000018290]


def _products(rng: np.random.Generator, ids: list[int], labelled: bool) -> list[dict]:
    from bson.binary import Binary

    products = []
    for i in ids:
        doc: dict = {"_id": i}
        if labelled:
            doc["category_id"] = int(rng.choice(CATEGORIES))
        doc["imgs"] = [{"picture": Binary(image_bytes("JPEG", (6, 6), seed=i * 4 + k))}
                       for k in range(int(rng.integers(1, 5)))]
        products.append(doc)
    return products


def _write_bson(path: Path, docs: list[dict]) -> None:
    import bson

    path.write_bytes(b"".join(bson.encode(doc) for doc in docs))


def generate(raw: Path) -> None:
    rng = np.random.default_rng(17)
    train_ids = sorted(int(i) for i in rng.choice(np.arange(3000), 130, replace=False))
    train = _products(rng, train_ids, True)
    test = _products(rng, [10, 14, 21], False)
    _write_bson(raw / "train.bson", train)
    _write_bson(raw / "train_example.bson", train[:100])
    _write_bson(raw / "test.bson", test)
    names = pd.DataFrame({"category_id": CATEGORIES, "category_level1": "ABONNEMENT / SERVICES",
                          "category_level2": "CARTE PREPAYEE", "category_level3": [f"CARTE {n}" for n in range(6)]})
    write_csv(names, raw / "category_names.csv")
    write_csv(pd.DataFrame({"_id": [10, 14, 21], "category_id": 1000010653}), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "_id")


def expected_test_ids(raw: Path) -> list[str]:
    """A plain 10 % split (seed 0) of the products in file order; the held-out ids, sorted as numbers."""
    import bson

    with open(raw / "train.bson", "rb") as f:
        ids = [doc["_id"] for doc in bson.decode_file_iter(f)]
    return [str(i) for i in sorted(held_out(ids, 0.1))]
