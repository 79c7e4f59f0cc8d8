"""Synthetic raw data for whale-categorization-playground (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import held_out, hex_ids, write_csv, write_images

PUBLIC = frozenset({"sample_submission.csv", "test", "train", "train.csv"})
PRIVATE = frozenset({"test.csv"})


def generate(raw: Path) -> None:
    rng = np.random.default_rng(41)
    whales = [f"w_{h}" for h in hex_ids(rng, 40, 7)]
    # a dozen new_whale flukes, whales with 2-5 images, and a few seen once
    ids = ["new_whale"] * 12 + [w for w in whales[:25] for _ in range(int(rng.integers(2, 6)))] + whales[25:]
    rng.shuffle(ids)
    images = hex_ids(rng, len(ids) + 4, 8)
    train, test = images[:len(ids)], images[len(ids):]
    write_csv(pd.DataFrame({"Image": [f"{i}.jpg" for i in train], "Id": ids}), raw / "train.csv")
    write_csv(pd.DataFrame({"Image": [f"{i}.jpg" for i in test],
                            "Id": "new_whale w_1287fbc w_98baff9 w_7554f44 w_1eafe46"}), raw / "sample_submission.csv")
    write_images(raw / "train", train, "JPEG", (12, 6))
    write_images(raw / "test", test, "JPEG", (12, 6))


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return [f"{image} {whale}" for image, whale in zip(answers["Image"], answers["Id"], strict=True)]


def expected_test_ids(raw: Path) -> list[str]:
    """Each test image with its label: per whale in first-appearance order, two images of a whale with several
    (pandas' sample of 2 = the first two of RandomState(0)'s permutation) go one each way, a lone image goes
    to test when the next draw of default_rng(0) is >= 0.9; the rest is split 90/10; a test whale missing from
    train becomes new_whale."""
    frame = pd.read_csv(raw / "train.csv")
    rng, part = np.random.default_rng(0), {}
    for whale in dict.fromkeys(frame["Id"]):
        rows = list(frame.index[frame["Id"] == whale])
        if len(rows) > 1:
            first, second = np.random.RandomState(0).permutation(len(rows))[:2]
            part[rows[first]], part[rows[second]] = "train", "test"
        else:
            part[rows[0]] = "test" if rng.random() >= 0.9 else "train"
    rest = [i for i in frame.index if i not in part]
    part |= dict.fromkeys(rest, "train") | dict.fromkeys(held_out(rest, 0.1), "test")
    seen = {frame.at[i, "Id"] for i in frame.index if part[i] == "train"}
    return [f"{frame.at[i, 'Image']} {frame.at[i, 'Id'] if frame.at[i, 'Id'] in seen else 'new_whale'}"
            for i in frame.index if part[i] == "test"]
