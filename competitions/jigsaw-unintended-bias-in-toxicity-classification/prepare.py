"""Jigsaw Unintended Bias: no split. Kaggle's labelled private test set (test_private_expanded.csv) is the
test set, as in MLE-bench: copied verbatim as the answers, and as id + comment_text into public test.csv;
train.csv is copied unchanged; the sample predicts 0.0 everywhere. Only the two columns the public files
need are read from the test file, so memory stays small whatever the train file's size.
"""

from mle_env.prepare.helpers import PrepareContext, find_raw, place_files, read_csv, write_csv

TEST = "test_private_expanded.csv"


def prepare(ctx: PrepareContext) -> None:
    test_path = find_raw(ctx, TEST)
    test = read_csv(test_path, usecols=["id", "comment_text"])[["id", "comment_text"]]
    place_files([(test_path, ctx.private / "test.csv")], ctx.may_link(test_path))
    train_path = find_raw(ctx, "train.csv")
    place_files([(train_path, ctx.public / "train.csv")], ctx.may_link(train_path))
    write_csv(test, ctx.public / "test.csv")
    write_csv(test[["id"]].assign(prediction=0.0), ctx.public / "sample_submission.csv")
