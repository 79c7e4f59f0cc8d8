"""A labelled split whose test share equals Kaggle's: unlabelled test tiles / (labelled + test tiles)."""

from mle_env.prepare.helpers import PrepareContext, find_raw, read_csv, split_csv


def prepare(ctx: PrepareContext) -> None:
    labelled = len(read_csv(find_raw(ctx, ctx.params["file"]), usecols=[ctx.params["id_column"]]))
    hidden = sum(1 for _ in ctx.raw_file("test").glob("*.tif"))
    split_csv(ctx, test_size=hidden / (labelled + hidden), **ctx.params)
