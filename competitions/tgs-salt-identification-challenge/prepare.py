"""Kaggle's 4,000 labelled images split 75/25 (``train_test_split(test_size=0.25, random_state=0)`` over
``train.csv``, empty masks as ""), as MLE-bench splits them. Public: the new ``train.csv`` sorted by id,
train images with their masks, test images, and ``depths.csv`` cut to the train ids; private/test.csv holds
the test ids with their masks, sorted by id."""

from mle_env.prepare.helpers import PrepareContext, copy_files, find_raw, raw_folder, read_csv, split, write_csv


def prepare(ctx: PrepareContext) -> None:
    data = raw_folder(ctx, "competition_data")
    labelled = read_csv(data / "train.csv", dtype={"id": str}).fillna("")
    train, test = split(labelled, 0.25, random_state=0)
    train, test = train.sort_values("id"), test.sort_values("id")
    write_csv(train, ctx.public / "train.csv")
    write_csv(test, ctx.private / "test.csv")
    write_csv(test[["id"]].assign(rle_mask="1 1"), ctx.public / "sample_submission.csv")
    link = ctx.may_link(data)
    names = [f"{i}.png" for i in train["id"]]
    copy_files(names, data / "train" / "images", ctx.public / "train" / "images", link)
    copy_files(names, data / "train" / "masks", ctx.public / "train" / "masks", link)
    copy_files([f"{i}.png" for i in test["id"]], data / "train" / "images", ctx.public / "test" / "images", link)
    depths = read_csv(find_raw(ctx, "depths.csv"), dtype={"id": str})
    write_csv(depths[depths["id"].isin(set(train["id"]))].sort_values("id"), ctx.public / "depths.csv")
