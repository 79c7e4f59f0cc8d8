"""Google QUEST: 10 % of Kaggle's labelled question-answer pairs become the test set, as MLE-bench splits them.

``question_type_spelling`` is non-zero in only a handful of rows, and Spearman's rho is undefined on a
constant column; so when the test part holds a single value of it, the contents of the first test row
and of the first train row (in split order) whose value is not 0 are exchanged, as MLE-bench does. Public
test.csv keeps the 11 non-target columns; the answers are qa_id plus the 30 targets; the sample fills every
target column with evenly spaced values from 0 to 1. The 30 targets are the spec's target_columns.
"""

import numpy as np

from mle_env.errors import PrepareError
from mle_env.prepare.helpers import PrepareContext, find_raw, read_csv, split, write_csv


def swap_if_constant(train, test, column: str) -> None:
    """Exchange, in place, the first test row with the first train row whose ``column`` is not 0, when
    ``column`` holds a single value in ``test`` (the rows keep their positions and index labels)."""
    if test[column].nunique() != 1:
        return
    donors = train.index[train[column] != 0]
    if not len(donors):
        raise PrepareError(f"{column} is constant in the test split and 0 in every train row")
    held = test.iloc[0].copy()
    test.iloc[0] = train.loc[donors[0]].copy()
    train.loc[donors[0]] = held


def prepare(ctx: PrepareContext) -> None:
    targets = list(ctx.spec.submission.target_columns or ())
    train, test = split(read_csv(find_raw(ctx, "train.csv")), 0.1, random_state=0)
    swap_if_constant(train, test, "question_type_spelling")
    answers = test[["qa_id", *targets]]
    sample = answers.copy()
    sample[targets] = np.tile(np.linspace(0, 1, len(sample))[:, None], (1, len(targets)))
    write_csv(train, ctx.public / "train.csv")
    write_csv(test.drop(columns=targets), ctx.public / "test.csv")
    write_csv(answers, ctx.private / "test.csv")
    write_csv(sample, ctx.public / "sample_submission.csv")
