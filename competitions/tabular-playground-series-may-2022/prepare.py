"""A fixed 100,000 rows become the test set; ids are renumbered 0, 1, ... through train then test (in split
order), as MLE-bench does, so they no longer reveal the original row."""

from mle_env.prepare.helpers import PrepareContext, read_csv, split, write_csv


def prepare(ctx: PrepareContext) -> None:
    train, test = split(read_csv(ctx.raw_file("train.csv")), ctx.params["test_size"])
    train["id"] = range(len(train))
    test["id"] = range(len(train), len(train) + len(test))
    write_csv(train, ctx.public / "train.csv")
    write_csv(test.drop(columns=["target"]), ctx.public / "test.csv")
    write_csv(test, ctx.private / "test.csv")
    write_csv(test[["id", "target"]], ctx.private / "gold_submission.csv")
    write_csv(test[["id"]].assign(target=0.5), ctx.public / "sample_submission.csv")
