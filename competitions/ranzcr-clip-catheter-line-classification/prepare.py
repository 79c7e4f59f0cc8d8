"""A labelled split (the shared recipe), plus the line annotations of the new training images only."""

from mle_env.prepare.helpers import PrepareContext, read_csv, split_csv, write_csv


def prepare(ctx: PrepareContext) -> None:
    split_csv(ctx, **ctx.params)
    uid = ctx.params["id_column"]
    train_ids = set(read_csv(ctx.public / "train.csv", usecols=[uid])[uid])
    annotations = read_csv(ctx.raw_file("train_annotations.csv"))
    write_csv(annotations[annotations[uid].isin(train_ids)], ctx.public / "train_annotations.csv")
