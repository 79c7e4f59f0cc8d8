"""Whole plays go to train or test, as MLE-bench splits them: ``train_test_split`` (10 %, seed 0) over the
distinct ``game_play`` values of train_labels.csv in order of first appearance; the labels, helmet boxes,
player tracking and video metadata of each play follow it (rows in raw order), and its three videos
(All29, Endzone, Sideline) are copied to public/train/ or public/test/. The large CSVs are streamed."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mle_env.prepare.chunked import partition_csv
from mle_env.prepare.helpers import PrepareContext, copy_files, find_raw, raw_folder, read_csv, split, write_csv

TABLES = ("baseline_helmets", "player_tracking", "video_metadata")
VIEWS = ("All29", "Endzone", "Sideline")


def prepare(ctx: PrepareContext) -> None:
    labels = find_raw(ctx, "train_labels.csv")
    # an object array, as MLE-bench's pandas gives: pandas 3 with pyarrow installed returns an Arrow array,
    # which scikit-learn cannot index
    plays = np.asarray(read_csv(labels, usecols=["game_play"])["game_play"].unique(), dtype=object)
    train_plays, test_plays = (set(p) for p in split(plays, 0.1, random_state=0))

    def part(chunk: pd.DataFrame):
        return chunk["game_play"].map(lambda p: 0 if p in train_plays else (1 if p in test_plays else -1))

    partition_csv(labels, [ctx.public / "train_labels.csv", ctx.private / "test.csv"], part)
    for table in TABLES:
        partition_csv(find_raw(ctx, f"train_{table}.csv"),
                      [ctx.public / f"train_{table}.csv", ctx.public / f"test_{table}.csv"], part)
    answers = read_csv(ctx.private / "test.csv", usecols=["contact_id"])
    write_csv(pd.DataFrame({"contact_id": answers["contact_id"], "contact": 0}), ctx.public / "sample_submission.csv")
    videos = raw_folder(ctx, "train")
    for chosen, out in ((train_plays, "train"), (test_plays, "test")):
        names = [f"{play}_{view}.mp4" for view in VIEWS for play in sorted(chosen)]
        copy_files(names, videos, ctx.public / out, ctx.may_link(videos))
