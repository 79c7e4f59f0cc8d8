"""Synthetic raw data for iwildcam-2019-fgvc6 (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import column_ids, image_bytes, write_csv, write_zip

PUBLIC = frozenset({"sample_submission.csv", "test.csv", "test_images.zip", "train.csv", "train_images.zip"})
PRIVATE = frozenset({"answers.csv", "test.csv"})


def _images(rng: np.random.Generator, n: int, locations: list[int], labelled: bool) -> pd.DataFrame:
    ids = [f"{rng.integers(16**8):08x}-{rng.integers(16**4):04x}-{i:04d}" for i in range(n)]
    frame = pd.DataFrame({
        "date_captured": [f"2012-0{1 + i % 9}-1{i % 10} 0{i % 10}:15:00" for i in range(n)],
        "file_name": [f"{i}.jpg" for i in ids], "frame_num": rng.integers(1, 4, n), "id": ids,
        "location": rng.choice(locations, n), "rights_holder": rng.choice(["Justin Brown", "Erin Boydston"], n),
        "seq_id": [f"seq{i // 3:04d}" for i in range(n)], "seq_num_frames": 3, "width": 1024, "height": 747})
    if labelled:
        frame.insert(0, "category_id", rng.choice([0, 1, 3, 8, 10, 11, 13], n))
    return frame


def generate(raw: Path) -> None:
    rng = np.random.default_rng(19)
    train = _images(rng, 60, [33, 115, 96, 88, 43, 20, 7, 150, 21, 45, 100, 61], True)
    test = _images(rng, 6, [200, 201], False)
    for frame, name in ((train, "train"), (test, "test")):
        write_csv(frame, raw / f"{name}.csv")
        write_zip(raw / f"{name}_images.zip",
                  {f"{i}.jpg": image_bytes("JPEG", seed=n) for n, i in enumerate(frame["id"])})
    write_csv(pd.DataFrame({"Id": test["id"], "Predicted": 0}), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "Id")


def expected_test_ids(raw: Path) -> list[str]:
    """10 % of the locations (first-appearance order, seed 8); their images in raw order."""
    from sklearn.model_selection import train_test_split

    train = pd.read_csv(raw / "train.csv", dtype=str)
    test_locations = set(train_test_split(list(dict.fromkeys(train["location"])), test_size=0.1,
                                          random_state=8)[1])
    return list(train.loc[train["location"].isin(test_locations), "id"])
