"""Kaggle's labelled test set is reused as is (no new split), exactly as MLE-bench prepares it."""

import shutil

from mle_env.prepare.helpers import PrepareContext, read_csv, write_csv


def prepare(ctx: PrepareContext) -> None:
    shutil.copyfile(ctx.raw_file("train.csv"), ctx.public / "train.csv")
    shutil.copyfile(ctx.raw_file("test_with_solutions.csv"), ctx.private / "test.csv")
    gold = read_csv(ctx.private / "test.csv")[["Insult", "Date", "Comment"]]
    write_csv(gold, ctx.private / "gold_submission.csv")
    write_csv(gold.drop(columns=["Insult"]), ctx.public / "test.csv")
    write_csv(gold.assign(Insult=0), ctx.public / "sample_submission_null.csv")
