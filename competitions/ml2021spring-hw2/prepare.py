"""Kaggle's labelled frames (``timit_11/timit_11/train_11.npy`` and ``train_label_11.npy``) split into a new
train and test, as MLE-bench splits them: scikit-learn's split of the row numbers 0..n-1 (seed 0), with the
test fraction Kaggle's own test set had (its frame count over all frames, unrounded; only the length of
``test_11.npy`` is read, its frames are not used).

Both parts keep the split's shuffled order. The held-out frames are published as ``test_11.npy`` (Kaggle's
test file name) at the same nested path; the answers give each of them, by row number, its label. Arrays are
read memory-mapped and written a block of rows at a time, so memory stays small whatever the data's size.
"""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.errors import PrepareError
from mle_env.prepare.helpers import PrepareContext, split, write_csv

FOLDER = "timit_11/timit_11"
#: frame counts of Kaggle's files, and the split sizes MLE-bench's recipe gives them
KAGGLE_FRAMES = {"train": 1_229_932, "test": 451_552}
KAGGLE_SPLIT = (899_641, 330_291)
BLOCK_ROWS = 65_536


def _take(source: np.ndarray, rows: np.ndarray, target: Path) -> None:
    """``source[rows]`` saved as an .npy file at ``target`` (the bytes np.save writes), block by block."""
    target.parent.mkdir(parents=True, exist_ok=True)
    out = np.lib.format.open_memmap(target, mode="w+", dtype=source.dtype, shape=(len(rows), *source.shape[1:]))
    for start in range(0, len(rows), BLOCK_ROWS):
        out[start:start + BLOCK_ROWS] = source[rows[start:start + BLOCK_ROWS]]
    out.flush()
    del out


def prepare(ctx: PrepareContext) -> None:
    # np.load without allow_pickle, as MLE-bench loads them: object arrays are refused
    features = np.load(ctx.raw_file(f"{FOLDER}/train_11.npy"), mmap_mode="r")
    labels = np.load(ctx.raw_file(f"{FOLDER}/train_label_11.npy"), mmap_mode="r")
    kaggle_test = len(np.load(ctx.raw_file(f"{FOLDER}/test_11.npy"), mmap_mode="r"))
    n = len(features)
    if len(labels) != n:
        raise PrepareError(f"train_11.npy has {n} frames but train_label_11.npy has {len(labels)} labels")
    train_rows, test_rows = split(np.arange(n), kaggle_test / (n + kaggle_test), ctx.params["random_state"])
    if (n, kaggle_test) == (KAGGLE_FRAMES["train"], KAGGLE_FRAMES["test"]):
        assert (len(train_rows), len(test_rows)) == KAGGLE_SPLIT, (len(train_rows), len(test_rows))

    public = ctx.public / FOLDER
    _take(features, train_rows, public / "train_11.npy")
    _take(labels, train_rows, public / "train_label_11.npy")
    _take(features, test_rows, public / "test_11.npy")

    ids = np.arange(len(test_rows))
    write_csv(pd.DataFrame({"Id": ids, "ClassId": np.asarray(labels[test_rows])}), ctx.private / "answers.csv")
    write_csv(pd.DataFrame({"Id": ids, "ClassId": 0}), ctx.public / "sampleSubmission.csv")
