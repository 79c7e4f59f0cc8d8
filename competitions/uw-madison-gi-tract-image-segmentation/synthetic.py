"""Synthetic raw data for uw-madison-gi-tract-image-segmentation (see mle_env.competition.synthetic).

Kaggle ships ``train.csv`` (``id`` = ``case<N>_day<M>_slice_<SSSS>``, ``class`` in large_bowel / small_bowel /
stomach, ``segmentation``: column-major RLE, empty where the organ is absent; three rows per slice),
``train/case<N>/case<N>_day<M>/scans/slice_<SSSS>_<width>_<height>_<px>_<px>.png`` and an empty
``sample_submission.csv`` (its test set was hidden). Cases appear out of numeric order, and some cases
have more than four days whose numeric and text orders differ, so both of MLE-bench's orders matter.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import image_bytes, write_csv
from mle_env.grading.rle import decode_rle, encode_rle

PUBLIC = frozenset({"sample_submission.csv", "test", "test.csv", "train", "train.csv"})
PRIVATE = frozenset({"test.csv"})
CLASSES = ["large_bowel", "small_bowel", "stomach"]
#: (case, image (width, height), days): cases 7, 30 and 101 have more than four days
CASES = [(77, (12, 10), [1, 3]), (30, (10, 10), [2, 3, 9, 10, 14]), (123, (14, 12), [20, 22]),
         (7, (12, 10), [0, 5, 11, 2, 30, 4]), (146, (10, 10), [13]), (2, (12, 12), [1, 2, 6]),
         (101, (14, 12), [3, 19, 21, 25, 12]), (41, (10, 10), [7, 8]), (9, (12, 10), [15]),
         (88, (10, 12), [1, 10]), (64, (12, 10), [4, 6, 9]), (19, (14, 12), [18, 19])]


def _blob(rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    mask = np.zeros((height, width), dtype=bool)
    top, left = rng.integers(0, height - 3), rng.integers(0, width - 3)
    mask[top:top + int(rng.integers(2, 5)), left:left + int(rng.integers(2, 6))] = True
    return mask


def generate(raw: Path) -> None:
    rng = np.random.default_rng(91)
    rows = []
    for case, (width, height), days in CASES:
        for day in days:
            scans = raw / "train" / f"case{case}" / f"case{case}_day{day}" / "scans"
            scans.mkdir(parents=True)
            for s in range(1, int(rng.integers(3, 6)) + 1):
                (scans / f"slice_{s:04d}_{width}_{height}_1.50_1.50.png").write_bytes(
                    image_bytes("PNG", (width, height), "L", seed=case * 1000 + day * 10 + s))
                for organ in CLASSES:
                    present = rng.random() < 0.5
                    rows.append({"id": f"case{case}_day{day}_slice_{s:04d}", "class": organ,
                                 "segmentation": encode_rle(_blob(rng, height, width)) if present else ""})
    write_csv(pd.DataFrame(rows), raw / "train.csv")
    write_csv(pd.DataFrame(columns=["id", "class", "predicted"]), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return [f"{i}/{c}" for i, c in zip(answers["id"], answers["class"], strict=True)]


def expected_test_ids(raw: Path) -> list[str]:
    """Whole cases (10 %, random_state 42, in order of appearance), then the days after the fourth (by day
    number) of every training case with more than four days; rows in raw order."""
    from sklearn.model_selection import train_test_split

    train = pd.read_csv(raw / "train.csv", dtype=str, keep_default_na=False)
    case = train["id"].str.split("_").str[0]
    day = train["id"].str.split("_").str[1]
    test_cases = set(train_test_split(list(dict.fromkeys(case)), test_size=0.1, random_state=42)[1])
    late = set()
    for c in dict.fromkeys(case[~case.isin(test_cases)]):
        days = sorted(set(day[case == c]), key=lambda d: int(d[3:]))
        late |= {(c, d) for d in days[4:]}
    keep = [c in test_cases or (c, d) in late for c, d in zip(case, day, strict=True)]
    picked = train[keep]
    return [f"{i}/{c}" for i, c in zip(picked["id"], picked["class"], strict=True)]


def perfect_submission(answers: pd.DataFrame) -> pd.DataFrame:
    return answers[["id", "class", "predicted"]].copy()


def noisy_submission(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Every third mask shifted by a pixel, a few erased, a few empty ones given a small blob; valid RLE."""
    predicted = []
    for n, (text, height, width) in enumerate(zip(answers["predicted"], answers["image_height"],
                                                  answers["image_width"], strict=True)):
        shape = (int(float(height)), int(float(width)))
        mask = decode_rle(text, shape)
        if mask.any() and n % 3 == 0:
            mask = np.roll(mask, int(rng.integers(1, 3)), axis=int(rng.integers(0, 2)))
        elif mask.any() and n % 7 == 1:
            mask[:] = False
        elif not mask.any() and n % 5 == 2:
            mask = _blob(rng, *shape)
        predicted.append(encode_rle(mask))
    return answers[["id", "class"]].assign(predicted=predicted)
