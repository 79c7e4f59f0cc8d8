"""Synthetic raw data for denoising-dirty-documents (see mle_env.competition.synthetic)."""

from pathlib import Path

import pandas as pd

from mle_env.competition.synthetic import held_out, image_bytes, sorted_member_names, write_zip

PUBLIC = frozenset({"sampleSubmission.csv", "test", "train", "train_cleaned"})
PRIVATE = frozenset({"answers.csv"})


def generate(raw: Path) -> None:
    stems = [2, 3, 5, 8, 11, 14, 17, 20, 101, 104]
    write_zip(raw / "train.zip", {f"train/{s}.png": image_bytes("PNG", (7, 5), "L", seed=s) for s in stems})
    write_zip(raw / "train_cleaned.zip",
              {f"train_cleaned/{s}.png": image_bytes("PNG", (7, 5), "L", seed=100 + s) for s in stems})
    write_zip(raw / "test.zip", {"test/1.png": image_bytes("PNG", (7, 5), "L")})
    write_zip(raw / "sampleSubmission.csv.zip", {"sampleSubmission.csv": "id,value\n1_1_1,1\n"})


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    """One answer row per pixel: the first pixel of each test scan."""
    return [i for i in answers["id"] if i.endswith("_1_1")]


def expected_test_ids(raw: Path) -> list[str]:
    """The first pixel of each scan a 20 % split of the training scans holds out, scans in name order."""
    return [f"{Path(n).stem}_1_1" for n in sorted(held_out(sorted_member_names(raw / "train.zip", ".png"), 0.2))]
