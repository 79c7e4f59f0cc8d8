"""Group splits and folder rows: every key wholly in one part, the same keys as an independent
recomputation of MLE-bench's recipe, and rows in the order each recipe lists them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import train_test_split

from mle_env.errors import PrepareError
from mle_env.prepare.helpers import copy_files
from mle_env.prepare.splits import distinct_keys, folder_rows, group_split


@pytest.fixture
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    keys = rng.choice([f"m{i:02d}" for i in range(30)], 200)
    return pd.DataFrame({"key": keys, "value": np.arange(200)}, index=np.arange(200) * 7)


def test_sorted_keys_groups_order_equals_concat_of_split_groups(frame: pd.DataFrame) -> None:
    """champs / osic: tts over list(frame.groupby(key)), then pd.concat of each part's groups."""
    train_groups, test_groups = train_test_split(list(frame.groupby("key")), test_size=0.1, random_state=0)
    train, test = group_split(frame, "key", 0.1, random_state=0)
    pd.testing.assert_frame_equal(train, pd.concat([g for _, g in train_groups]))
    pd.testing.assert_frame_equal(test, pd.concat([g for _, g in test_groups]))


def test_appearance_keys_raw_order_equals_isin_of_split_uniques(frame: pd.DataFrame) -> None:
    """nfl / hms: tts over frame[key].unique(), rows selected with isin in raw order."""
    uniques = np.asarray(frame["key"].unique(), dtype=object)  # MLE-bench's pandas: an object array
    train_keys, test_keys = train_test_split(uniques, test_size=0.2, random_state=8)
    train, test = group_split(frame, "key", 0.2, random_state=8, key_order="appearance", row_order="raw")
    pd.testing.assert_frame_equal(train, frame[frame["key"].isin(train_keys)])
    pd.testing.assert_frame_equal(test, frame[frame["key"].isin(test_keys)])
    assert not set(train["key"]) & set(test["key"]) and len(train) + len(test) == len(frame)


def test_keys_of_several_columns_and_missing_keys() -> None:
    frame = pd.DataFrame({"a": ["x", "x", "y", None, "y"], "b": [1, 2, 1, 1, 1], "v": range(5)})
    assert distinct_keys(frame, ["a", "b"]) == [("x", 1), ("x", 2), ("y", 1)]
    assert len(distinct_keys(frame, "a", "appearance")) == 3  # x, y and the missing key, as unique() lists them
    assert distinct_keys(frame, "a") == ["x", "y"]  # groupby drops the missing key
    train, test = group_split(frame, ["a", "b"], 1, random_state=0)
    assert len(test) + len(train) == 4 and len(test) in (1, 2)
    with pytest.raises(PrepareError, match="no key column"):
        group_split(frame, "nope", 0.5, random_state=0)
    with pytest.raises(PrepareError, match="key_order"):
        group_split(frame, "a", 0.5, random_state=0, key_order="random")  # type: ignore[arg-type]


def test_folder_rows_are_copied_whole(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    for drive, phone in [("2021-01-01-a", "p1"), ("2021-01-01-a", "p2"), ("2021-02-03-b", "p1")]:
        (raw / drive / phone / "supplemental").mkdir(parents=True)
        (raw / drive / phone / "gnss.csv").write_text(f"{drive}/{phone}")
        (raw / drive / phone / "supplemental" / "imu.csv").write_text("imu")
    rows = folder_rows(raw, 2, kind="dir")
    assert rows == ["2021-01-01-a/p1", "2021-01-01-a/p2", "2021-02-03-b/p1"]
    assert folder_rows(raw, 1) == ["2021-01-01-a", "2021-02-03-b"]
    assert copy_files(rows[:2], raw, tmp_path / "public" / "train", link=False) == 4
    assert (tmp_path / "public" / "train" / "2021-01-01-a" / "p2" / "gnss.csv").read_text() == "2021-01-01-a/p2"
    assert (tmp_path / "public" / "train" / "2021-01-01-a" / "p1" / "supplemental" / "imu.csv").is_file()
    assert not (tmp_path / "public" / "train" / "2021-02-03-b").exists()
