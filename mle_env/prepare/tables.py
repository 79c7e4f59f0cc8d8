"""The pieces every prepare recipe shares for tables: reading a CSV as MLE-bench does, writing one frame by
frame, and the seeded train/test split (the shared helpers and the chunked, larger-than-memory recipes both
build on them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd


def read_csv(path: Path, **kwargs: Any) -> pd.DataFrame:
    """pandas.read_csv with MLE-bench's float_precision="round_trip", so floats survive a rewrite unchanged
    (pandas 3 parses that way by default and deprecates the option)."""
    if int(pd.__version__.split(".")[0]) < 3:
        kwargs.setdefault("float_precision", "round_trip")
    return pd.read_csv(path, **kwargs)


def split(items: Any, test_size: float | int, random_state: int = 0) -> tuple[Any, Any]:
    """scikit-learn ``train_test_split(items, test_size=..., random_state=...)``: (train, test)."""
    from sklearn.model_selection import train_test_split

    train, test = train_test_split(items, test_size=test_size, random_state=random_state)
    return train, test


class CsvAppender:
    """Writes a CSV frame by frame: the header with the first frame, rows only after it (no index). Nothing
    is written (not even a file) when no frame comes; a context manager, so the file is closed on errors."""

    def __init__(self, path: Path, **kwargs: Any) -> None:
        self.path, self.kwargs, self.file = path, kwargs, None

    def write(self, frame: pd.DataFrame) -> None:
        """Append ``frame`` (its header too when it is the first)."""
        if self.file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.file = open(self.path, "w", newline="", encoding="utf-8")
            frame.to_csv(self.file, index=False, **self.kwargs)
        else:
            frame.to_csv(self.file, index=False, header=False, **self.kwargs)

    def __enter__(self) -> CsvAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.file is not None:
            self.file.close()
