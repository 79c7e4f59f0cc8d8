"""Kaggle's labelled paddy photos split 75/25 into a new train and test, as MLE-bench splits them.

MLE-bench asks scikit-learn for ``train_size=0.75``; that picks the same rows, in the same order, as
``test_size=0.25`` with the same seed, which is what the shared ``split`` takes.

Train photos stay in their disease's folder (``train_images/<label>/<image_id>``); test photos are flat in
``test_images/``, so their folder does not give the label away. The answers keep all four columns of
train.csv; the public side has no test table (the test ids are the sample submission's and the file names).
"""

from mle_env.errors import PrepareError
from mle_env.prepare.helpers import PrepareContext, place_files, raw_folder, read_csv, split, write_csv

COLUMNS = {"image_id", "label"}


def prepare(ctx: PrepareContext) -> None:
    old = read_csv(ctx.raw_file("train.csv"))
    sample_columns = set(read_csv(ctx.raw_file("sample_submission.csv"), nrows=0).columns)
    if not COLUMNS <= set(old.columns) or sample_columns != COLUMNS:
        raise PrepareError("train.csv or sample_submission.csv lacks image_id / label; are these the original files?")
    train, test = split(old, 0.25, 0)
    write_csv(train, ctx.public / "train.csv")
    write_csv(test, ctx.private / "test.csv")
    write_csv(test[["image_id"]].assign(label=""), ctx.public / "sample_submission.csv")
    images = raw_folder(ctx, "train_images")
    link = ctx.may_link(images)
    place_files(((images / label / image, ctx.public / "train_images" / label / image)
                 for image, label in zip(train["image_id"], train["label"], strict=True)), link)
    place_files(((images / label / image, ctx.public / "test_images" / image)
                 for image, label in zip(test["image_id"], test["label"], strict=True)), link)
