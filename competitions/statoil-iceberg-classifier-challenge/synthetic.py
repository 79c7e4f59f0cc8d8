"""Synthetic raw data for statoil-iceberg-classifier-challenge (see mle_env.competition.synthetic).

Kaggle ships ``train.json.7z`` and ``test.json.7z`` (each unpacking to ``data/processed/<name>.json``) and
``sample_submission.csv.7z``; a record holds ``id``, ``band_1`` and ``band_2`` (75 x 75 = 5625 dB values
each, flattened), ``inc_angle`` (a number, or the text "na" in training records) and, in training records,
``is_iceberg`` (0/1).
"""

import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.archives import extract_7z, write_7z
from mle_env.competition.synthetic import column_ids, csv_text, held_out, hex_ids

PUBLIC = frozenset({"sample_submission.csv.7z", "test.json.7z", "train.json.7z"})
PRIVATE = frozenset({"sample_submission.csv", "test.csv"})
PIXELS = 75 * 75


def _record(rng: np.random.Generator, record_id: str, labelled: bool) -> dict:
    record = {"id": record_id,
              "band_1": [round(float(v), 6) for v in rng.normal(-20, 5, PIXELS)],
              "band_2": [round(float(v), 6) for v in rng.normal(-26, 4, PIXELS)],
              "inc_angle": "na" if labelled and rng.random() < 0.1 else round(float(rng.uniform(30, 45)), 4)}
    if labelled:
        record["is_iceberg"] = int(rng.integers(0, 2))
    return record


def _write_7z(raw: Path, archive: str, member: str, data: str) -> None:
    with tempfile.TemporaryDirectory() as staging:
        staged = Path(staging) / member
        staged.parent.mkdir(parents=True, exist_ok=True)
        staged.write_text(data, encoding="utf-8")
        write_7z([(staged, member)], raw / archive)


def generate(raw: Path) -> None:
    rng = np.random.default_rng(31)
    ids = hex_ids(rng, 36, 8)
    train = [_record(rng, i, True) for i in ids[:30]]
    test = [_record(rng, i, False) for i in ids[30:]]
    for name, records in (("train", train), ("test", test)):
        _write_7z(raw, f"{name}.json.7z", f"data/processed/{name}.json", json.dumps(records))
    sample = pd.DataFrame({"id": [r["id"] for r in test], "is_iceberg": 0.5})
    _write_7z(raw, "sample_submission.csv.7z", "sample_submission.csv", csv_text(sample))


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "id")


def expected_test_ids(raw: Path) -> list[str]:
    """20 % of the labelled records (scikit-learn's split of the record list, seed 0)."""
    with tempfile.TemporaryDirectory() as unpacked:
        extract_7z(raw / "train.json.7z", Path(unpacked))
        records = json.loads((Path(unpacked) / "data/processed/train.json").read_text(encoding="utf-8"))
    return [r["id"] for r in held_out(records, 0.2)]
