"""Kaggle's labelled test set is reused (no new split), as MLE-bench does.

Every file is read and written back with pandas (not copied), and the answers keep the rows Kaggle
marked -1 (not scored); the metric skips them.
"""

from mle_env.prepare.helpers import PrepareContext, find_raw, read_csv, write_csv

LABELS = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]


def prepare(ctx: PrepareContext) -> None:
    train, test, answers, sample = (read_csv(find_raw(ctx, f"{name}.csv"))
                                    for name in ("train", "test", "test_labels", "sample_submission"))
    write_csv(train, ctx.public / "train.csv")
    write_csv(test, ctx.public / "test.csv")
    write_csv(sample.assign(**{label: 0.5 for label in LABELS}), ctx.public / "sample_submission.csv")
    write_csv(answers, ctx.private / "test.csv")
