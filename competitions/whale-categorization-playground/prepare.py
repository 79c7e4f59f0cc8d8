"""Kaggle's labelled whale images split into a new train and test, as MLE-bench splits them.

Whale ids are visited in order of first appearance in train.csv. An id with two or more images sends
two of them, drawn with ``DataFrame.sample(2, random_state=0)``, one to train and one to test; an id with
one image sends it to test with probability 0.1, drawn in turn from one ``numpy.random.default_rng(0)``.
The images not yet placed are then split 90/10 by ``train_test_split(random_state=0)``. Both parts keep
train.csv's row order, and a test image whose whale has no image in the new train is relabelled
``new_whale``.
"""

import numpy as np
import pandas as pd

from mle_env.prepare.helpers import PrepareContext, copy_files, raw_folder, read_csv, split, write_csv

TEST_SIZE = 0.1
NEW_WHALE = "new_whale"
SAMPLE_IDS = "new_whale w_1287fbc w_98baff9 w_7554f44 w_1eafe46"


def assign(frame: pd.DataFrame) -> pd.Series:
    """"train" or "test" for every row of ``frame`` (columns Image, Id), by the recipe of the module docstring."""
    parts = pd.Series("undecided", index=frame.index)
    rng = np.random.default_rng(0)
    groups = frame.groupby("Id", sort=False).groups
    for whale in frame["Id"].unique():
        rows = groups[whale]
        if len(rows) >= 2:
            picked = frame.loc[rows].sample(2, random_state=0).index
            parts[picked[0]], parts[picked[1]] = "train", "test"
        else:
            parts[rows[0]] = rng.choice(["train", "test"], replace=False, p=[1 - TEST_SIZE, TEST_SIZE])
    train, test = split(frame[parts == "undecided"], TEST_SIZE, 0)
    parts[train.index], parts[test.index] = "train", "test"
    return parts


def prepare(ctx: PrepareContext) -> None:
    old = read_csv(ctx.raw_file("train.csv"))
    parts = assign(old)
    train, answers = old[parts == "train"], old[parts == "test"].copy()
    answers.loc[~answers["Id"].isin(set(train["Id"])), "Id"] = NEW_WHALE
    write_csv(train, ctx.public / "train.csv")
    write_csv(answers, ctx.private / "test.csv")
    write_csv(answers.assign(Id=SAMPLE_IDS), ctx.public / "sample_submission.csv")
    images = raw_folder(ctx, "train")
    copy_files(train["Image"], images, ctx.public / "train", ctx.may_link(images))
    copy_files(answers["Image"], images, ctx.public / "test", ctx.may_link(images))
