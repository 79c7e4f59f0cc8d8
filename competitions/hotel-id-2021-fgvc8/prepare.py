"""Kaggle's labelled hotel images split 90/10 into a new train and test, as MLE-bench splits them, after
dropping both rows of ``ce27d36c9147cc19.jpg`` (listed twice, so it could land on both sides).

Train images stay in their chain's folder (``train_images/<chain>/<image>``); test images are flat in
``test_images/``, so their chain is not given away by the path. No public test table: the test images
are the files in test_images/ and the ids of the sample submission.
"""

from mle_env.prepare.helpers import PrepareContext, place_files, raw_folder, read_csv, split, write_csv

DUPLICATED_IMAGE = "ce27d36c9147cc19.jpg"
SAMPLE_HOTELS = "36363 53586 18807 64314 60181"


def prepare(ctx: PrepareContext) -> None:
    old = read_csv(ctx.raw_file("train.csv"))
    train, test = split(old[old["image"] != DUPLICATED_IMAGE], 0.1, 0)
    write_csv(train, ctx.public / "train.csv")
    write_csv(test, ctx.private / "test.csv")
    write_csv(test[["image"]].assign(hotel_id=SAMPLE_HOTELS), ctx.public / "sample_submission.csv")
    images = raw_folder(ctx, "train_images")
    link = ctx.may_link(images)
    place_files(((images / str(c) / i, ctx.public / "train_images" / str(c) / i)
                 for i, c in zip(train["image"], train["chain"], strict=True)), link)
    place_files(((images / str(c) / i, ctx.public / "test_images" / i)
                 for i, c in zip(test["image"], test["chain"], strict=True)), link)
