"""Synthetic raw data for google-research-identify-contrails-reduce-global-warming (see
mle_env.competition.synthetic).

Kaggle ships ``train/<record_id>/`` and ``validation/<record_id>/`` (``band_08.npy`` .. ``band_16.npy``:
height x width x 8 time steps of float32 brightness temperatures; ``human_pixel_masks.npy``: height x width x 1
int32 0/1; train only: ``human_individual_masks.npy``, height x width x 1 x annotators), ``test/<record_id>/``
(bands only), ``train_metadata.json`` and ``validation_metadata.json`` (lists of records with ``record_id`` and
projection fields) and ``sample_submission.csv``. Images here are 32 x 32 instead of 256 x 256.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import held_out, write_csv
from mle_env.grading.rle import decode_rle, encode_rle

PUBLIC = frozenset({"sample_submission.csv", "test", "train", "train_metadata.json", "validation",
                    "validation_metadata.json"})
PRIVATE = frozenset({"answers.csv"})
SIZE = 32


def _record(folder: Path, rng: np.random.Generator, n: int, individual: bool) -> dict:
    folder.mkdir(parents=True)
    for band in range(8, 17):
        np.save(folder / f"band_{band:02d}.npy", rng.normal(260, 10, (SIZE, SIZE, 8)).astype(np.float32))
    mask = np.zeros((SIZE, SIZE, 1), dtype=np.int32)
    if n % 3:  # a third of the records have no contrail
        row, col = rng.integers(0, SIZE - 8, 2)
        mask[row:row + int(rng.integers(2, 8)), col:col + int(rng.integers(3, 8)), 0] = 1
    np.save(folder / "human_pixel_masks.npy", mask)
    if individual:
        np.save(folder / "human_individual_masks.npy", np.repeat(mask[..., None], 3, axis=3))
    return {"record_id": folder.name, "projection_wkt": "PROJCS[\"synthetic\"]", "row_min": float(n),
            "row_size": 2000.0, "col_min": -float(n), "col_size": 2000.0, "timestamp": 1.6e9 + n}


def generate(raw: Path) -> None:
    rng = np.random.default_rng(31)
    ids = [str(v) for v in rng.choice(10**18, 17, replace=False) + 10**18]
    train = [_record(raw / "train" / i, rng, n, True) for n, i in enumerate(ids[:12])]
    validation = [_record(raw / "validation" / i, rng, n, False) for n, i in enumerate(ids[12:15])]
    for i in ids[15:]:
        (raw / "test" / i).mkdir(parents=True)
        for band in range(8, 17):
            np.save(raw / "test" / i / f"band_{band:02d}.npy", np.zeros((SIZE, SIZE, 8), np.float32))
    (raw / "train_metadata.json").write_text(json.dumps(train))
    (raw / "validation_metadata.json").write_text(json.dumps(validation))
    write_csv(pd.DataFrame({"record_id": ids[15:], "encoded_pixels": "-"}), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return list(answers["record_id"])


def expected_test_ids(raw: Path) -> list[str]:
    """As many training records as there are validation records, split off in metadata order."""
    train = json.loads((raw / "train_metadata.json").read_text())
    size = len(json.loads((raw / "validation_metadata.json").read_text()))
    return [r["record_id"] for r in held_out(train, size)]


def noisy_submission(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Each true mask shifted by a pixel or two, with a small false contrail on some records."""
    rows = []
    for text, height, width in zip(answers["encoded_pixels"], answers["height"], answers["width"], strict=True):
        mask = np.roll(decode_rle(text, (int(height), int(width))), tuple(rng.integers(-2, 3, 2)), axis=(0, 1))
        if rng.random() < 0.5:
            mask[:3, :4] = True
        rows.append(encode_rle(mask) or "-")
    return pd.DataFrame({"record_id": answers["record_id"], "encoded_pixels": rows})
