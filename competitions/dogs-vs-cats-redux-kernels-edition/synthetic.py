"""Synthetic raw data for dogs-vs-cats-redux-kernels-edition (see mle_env.competition.synthetic)."""

from pathlib import Path

import pandas as pd

from mle_env.competition.synthetic import column_ids, held_out, image_bytes, sorted_member_names, write_csv, write_zip

PUBLIC = frozenset({"sample_submission.csv", "test", "test.zip", "train", "train.zip"})
PRIVATE = frozenset({"answers.csv"})


def generate(raw: Path) -> None:
    names = [f"{animal}.{n}.jpg" for animal in ("cat", "dog") for n in range(16)]
    write_zip(raw / "train.zip", {f"train/{name}": image_bytes("JPEG", (9, 7), seed=n) for n, name in enumerate(names)})
    write_zip(raw / "test.zip", {f"test/{n}.jpg": image_bytes("JPEG", (9, 7)) for n in range(1, 6)})
    write_csv(pd.DataFrame({"id": range(1, 6), "label": 0.5}), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    """The test images are renumbered, so their labels (1 = dog) in answer order identify the split."""
    return column_ids(answers, "label")


def expected_test_ids(raw: Path) -> list[str]:
    return [str(int("dog" in n)) for n in held_out(sorted_member_names(raw / "train.zip", ".jpg"), 0.1)]
