"""modeldata's official split: a review is "great" when its star rating was 5, else "other"."""

import pandas as pd

from mle_env.prepare.helpers import PrepareContext, write_csv


def _load(ctx: PrepareContext, name: str, prefix: str) -> pd.DataFrame:
    raw = pd.read_pickle(ctx.raw_file(name), compression="xz")
    return pd.DataFrame({
        "id": [f"{prefix}{n:04d}" for n in raw["rownames"]],
        "product": raw["product"].to_numpy(),
        "review": raw["review"].to_numpy(),
        "great": (raw["score"] == "great").astype(int).to_numpy(),
    })


def prepare(ctx: PrepareContext) -> None:
    train = _load(ctx, "training_data.pkl.xz", "train_")
    test = _load(ctx, "testing_data.pkl.xz", "test_")
    write_csv(train, ctx.public / "train.csv")
    write_csv(test.drop(columns=["great"]), ctx.public / "test.csv")
    write_csv(test[["id", "great"]], ctx.private / "test.csv")
    write_csv(test[["id"]].assign(great=0.5), ctx.public / "sample_submission.csv")
