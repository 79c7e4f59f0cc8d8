"""Whole patients go to train or test, as MLE-bench splits them. The public test keeps each test patient's
earliest visit; the answers are a grid of every test patient and every week from the test set's first to
its last visit week, with the measured visits filled in, ``Patient_Week``, ``Confidence`` = 100, and a
``scored`` flag on each patient's three latest measured weeks (the rows MLE-bench's grader scores)."""

import pandas as pd

from mle_env.prepare.helpers import PrepareContext, copy_files, find_raw, raw_folder, read_csv, write_csv
from mle_env.prepare.splits import group_split


def answers_grid(test: pd.DataFrame) -> pd.DataFrame:
    """The answers table of the test visits (see the module docstring)."""
    weeks = range(test["Weeks"].min(), test["Weeks"].max() + 1)
    grid = pd.DataFrame([(p, w) for p in test["Patient"].unique() for w in weeks], columns=["Patient", "Weeks"])
    answers = grid.merge(test, on=["Patient", "Weeks"], how="left")
    answers["Patient_Week"] = answers["Patient"] + "_" + answers["Weeks"].astype(str)
    answers["Confidence"] = 100
    measured = answers.dropna(subset=["FVC"])
    latest = measured.sort_values("Weeks").groupby("Patient").tail(3).index  # the grader's sort and pick
    answers["scored"] = answers.index.isin(latest)
    return answers


def prepare(ctx: PrepareContext) -> None:
    train, test = group_split(read_csv(find_raw(ctx, "train.csv")), "Patient", 0.1, random_state=0,
                              key_order="sorted", row_order="groups")
    write_csv(train, ctx.public / "train.csv")
    write_csv(test.sort_values(by="Weeks").groupby("Patient").first().reset_index(), ctx.public / "test.csv")
    answers = answers_grid(test)
    write_csv(answers, ctx.private / "test.csv")
    write_csv(answers[["Patient_Week"]].assign(FVC=2000, Confidence=100), ctx.public / "sample_submission.csv")
    scans = raw_folder(ctx, "train")
    for part, out in ((train, "train"), (test, "test")):
        copy_files(list(part["Patient"].unique()), scans, ctx.public / out, ctx.may_link(scans))
