"""Synthetic raw data for vinbigdata-chest-xray-abnormalities-detection (see mle_env.competition.synthetic).

Kaggle ships ``train.csv`` (one row per box drawn by a radiologist: ``image_id``, ``class_name``,
``class_id`` 0-14, ``rad_id``, ``x_min``, ``y_min``, ``x_max``, ``y_max``; "No finding" rows, class 14,
have empty coordinates), ``train/<image_id>.dicom``, ``test/<image_id>.dicom`` and ``sample_submission.csv``
(``image_id``, ``PredictionString``).
"""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import dicom_bytes, held_out, hex_ids, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test", "train", "train.csv"})
PRIVATE = frozenset({"answers.csv", "gold_submission.csv"})
CLASSES = ["Aortic enlargement", "Atelectasis", "Calcification", "Cardiomegaly", "Consolidation", "ILD",
           "Infiltration", "Lung Opacity", "Nodule/Mass", "Other lesion", "Pleural effusion", "Pleural thickening",
           "Pneumothorax", "Pulmonary fibrosis", "No finding"]


def _annotations(rng: np.random.Generator, image: str) -> list[dict]:
    """Three radiologists' rows for one image: all "No finding", or boxes of one to three classes (a
    radiologist may draw two boxes of one class)."""
    rads = [f"R{int(r)}" for r in rng.choice(np.arange(1, 18), 3, replace=False)]
    if rng.random() < 0.35:
        return [{"image_id": image, "class_name": CLASSES[14], "class_id": 14, "rad_id": r, "x_min": np.nan,
                 "y_min": np.nan, "x_max": np.nan, "y_max": np.nan} for r in rads]
    rows = []
    for cls in rng.choice(14, int(rng.integers(1, 4)), replace=False):
        x, y = rng.integers(100, 2000, 2)
        w, h = rng.integers(80, 600, 2)
        for rad in rads:
            for _ in range(1 + int(rng.random() < 0.15)):
                dx, dy = rng.integers(-20, 21, 2)
                rows.append({"image_id": image, "class_name": CLASSES[cls], "class_id": int(cls), "rad_id": rad,
                             "x_min": float(x + dx), "y_min": float(y + dy), "x_max": float(x + dx + w),
                             "y_max": float(y + dy + h) + (0.5 if rng.random() < 0.2 else 0.0)})
    return rows


def generate(raw: Path) -> None:
    rng = np.random.default_rng(41)
    ids = hex_ids(rng, 86, 32)
    rows = [row for image in ids[:80] for row in _annotations(rng, image)]
    train = pd.DataFrame(rows).sample(frac=1.0, random_state=0)  # Kaggle's file is not grouped by image
    write_csv(train, raw / "train.csv")
    for k, image in enumerate(ids):
        path = raw / ("train" if k < 80 else "test") / f"{image}.dicom"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(dicom_bytes(f"1.2.826.0.2.{k}"))
    write_csv(pd.DataFrame({"image_id": ids[80:], "PredictionString": "14 1 0 0 1 1"}), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    """The graded answers (gold_submission.csv) hold the test images sorted by id."""
    return list(answers["image_id"])


def expected_test_ids(raw: Path) -> list[str]:
    return sorted(held_out(list(pd.read_csv(raw / "train.csv")["image_id"].unique()), 0.1))


def noisy_submission(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """True boxes with random confidences, jittered (some beyond the IoU threshold), a few dropped or given
    another class, and spurious boxes on some images; an image left without boxes guesses "No finding"."""
    rows = []
    for cell in answers["PredictionString"]:
        tokens = cell.split(" ")
        out = []
        for k in range(0, len(tokens), 6):
            cls, (x1, y1, x2, y2) = int(tokens[k]), (float(v) for v in tokens[k + 2:k + 6])
            conf = round(float(rng.uniform(0.05, 1)), 3)
            roll = rng.random()
            if roll < 0.15:
                continue
            if roll < 0.25:
                cls = (cls + 1) % 15
            shift = float(rng.choice([0.0, 0.1, 0.8])) * (x2 - x1)
            out.append(f"{cls} {conf} {x1 + shift:g} {y1:g} {x2 + shift:g} {y2:g}")
        if rng.random() < 0.4:
            out.append(f"{int(rng.integers(0, 14))} {round(float(rng.uniform(0, 0.6)), 3)} 300 400 700 900")
        rows.append(" ".join(out) or f"14 {round(float(rng.uniform(0, 1)), 3)} 0 0 1 1")
    return pd.DataFrame({"image_id": answers["image_id"], "PredictionString": rows})
