"""Synthetic raw data for kuzushiji-recognition (see mle_env.competition.synthetic).

Kaggle ships ``train.csv`` (``image_id``, ``labels``: "U+XXXX x y width height" groups, empty for a page
without characters), ``train_images.zip`` and ``test_images.zip`` (flat ``<image_id>.jpg`` members),
``unicode_translation.csv`` (``Unicode``, ``char``) and ``sample_submission.csv`` (``image_id``, ``labels``).
"""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import image_bytes, split_recipe, write_csv, write_zip

PUBLIC = frozenset({"sample_submission.csv", "test_images.zip", "train.csv", "train_images.zip",
                    "unicode_translation.csv"})
PRIVATE = frozenset({"gold_submission.csv", "test.csv"})
CODES = ["U+306F", "U+304C", "U+3044", "U+3068", "U+306B", "U+5E74"]


def _labels(rng: np.random.Generator, page: int) -> str:
    if page % 11 == 5:  # a page without characters
        return ""
    groups = []
    for _ in range(int(rng.integers(1, 6))):
        x, y = rng.integers(10, 2000, 2)
        w, h = rng.integers(20, 120, 2)
        groups.append(f"{CODES[rng.integers(len(CODES))]} {x} {y} {w} {h}")
    return " ".join(groups)


def generate(raw: Path) -> None:
    rng = np.random.default_rng(23)
    ids = [f"{book}_{page:05d}_{side}" for book in ("100241706", "200003076", "umgy001") for page in range(7)
           for side in (1, 2)][:40]
    train = pd.DataFrame({"image_id": ids[:36], "labels": [_labels(rng, n) for n in range(36)]})
    write_csv(train, raw / "train.csv")
    write_zip(raw / "train_images.zip", {f"{i}.jpg": image_bytes("JPEG", (12, 16), seed=n)
                                          for n, i in enumerate(ids[:36])})
    write_zip(raw / "test_images.zip", {f"{i}.jpg": image_bytes("JPEG", (12, 16), seed=n)
                                         for n, i in enumerate(ids[36:])})
    write_csv(pd.DataFrame({"Unicode": CODES, "char": ["は", "が", "い", "と", "に", "年"]}),
              raw / "unicode_translation.csv")
    write_csv(pd.DataFrame({"image_id": ids[36:], "labels": "U+003F 1 1 U+FF2F 2 2"}), raw / "sample_submission.csv")


ids_from_answers, expected_test_ids = split_recipe("image_id", 0.1)


def noisy_submission(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Box centres as points, with about a third of the points moved outside their box or given another label,
    and a spurious point on some pages."""
    rows = []
    for labels in answers["labels"]:
        tokens, points = labels.split(), []
        for k in range(0, len(tokens), 5):
            label, (x, y, w, h) = tokens[k], map(int, tokens[k + 1:k + 5])
            px, py = x + w // 2, y + h // 2
            roll = rng.random()
            if roll < 0.15:
                px = x + w + 3
            elif roll < 0.3:
                label = "U+FF1F"
            points.append(f"{label} {px} {py}")
        if rng.random() < 0.3:
            points.append("U+306F 5.5 7.25")
        rows.append(" ".join(points))
    return pd.DataFrame({"image_id": answers["image_id"], "labels": rows})


def perfect_submission(answers: pd.DataFrame) -> pd.DataFrame:
    """Every true box as the point at its centre, with its label."""
    rows = []
    for labels in answers["labels"]:
        tokens = labels.split()
        rows.append(" ".join(f"{tokens[k]} {int(tokens[k + 1]) + int(tokens[k + 3]) / 2} "
                             f"{int(tokens[k + 2]) + int(tokens[k + 4]) / 2}" for k in range(0, len(tokens), 5)))
    return pd.DataFrame({"image_id": answers["image_id"], "labels": rows})
