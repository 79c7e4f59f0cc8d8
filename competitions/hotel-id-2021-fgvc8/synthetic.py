"""Synthetic raw data for hotel-id-2021-fgvc8 (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import column_ids, held_out, hex_ids, image_bytes, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test_images", "train.csv", "train_images"})
PRIVATE = frozenset({"test.csv"})
DUPLICATED = "ce27d36c9147cc19.jpg"


def generate(raw: Path) -> None:
    rng = np.random.default_rng(43)
    hotels = {int(h): int(c) for h, c in zip(rng.choice(np.arange(100, 99999), 12, replace=False),
                                             rng.choice([0, 1, 5, 87], 12), strict=True)}
    images = [f"{h}.jpg" for h in hex_ids(rng, 58, 16)] + [DUPLICATED, DUPLICATED]
    hotel_ids = list(rng.choice(list(hotels), 60))
    stamps = [f"2018-0{1 + i % 9}-1{i % 10} 1{i % 10}:0{i % 6}:3{i % 10}" for i in range(60)]
    train = pd.DataFrame({"image": images, "chain": [hotels[h] for h in hotel_ids], "hotel_id": hotel_ids,
                          "timestamp": stamps}).sample(frac=1.0, random_state=1)
    write_csv(train, raw / "train.csv")
    for k, (image, chain) in enumerate(zip(train["image"], train["chain"], strict=True)):
        (raw / "train_images" / str(chain)).mkdir(parents=True, exist_ok=True)
        (raw / "train_images" / str(chain) / image).write_bytes(image_bytes("JPEG", (10, 8), seed=k))
    test = ["a0b1c2d3e4f50617.jpg", "b1c2d3e4f5061728.jpg"]
    (raw / "test_images").mkdir()
    for k, image in enumerate(test):
        (raw / "test_images" / image).write_bytes(image_bytes("JPEG", (10, 8), seed=k))
    write_csv(pd.DataFrame({"image": test, "hotel_id": "36363 53586 18807 64314 60181"}), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "image")


def expected_test_ids(raw: Path) -> list[str]:
    """train.csv without the twice-listed image, split 90/10."""
    frame = pd.read_csv(raw / "train.csv")
    return list(held_out(frame[frame["image"] != DUPLICATED], 0.1)["image"])
