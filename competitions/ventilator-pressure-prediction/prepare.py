"""Whole breaths (``breath_id``) go to train or test, as MLE-bench splits them; ``id`` is renumbered from 1
in each part and the CSVs are written with floats as ``%.10g``, as MLE-bench writes them."""

from mle_env.prepare.helpers import PrepareContext, find_raw, read_csv, write_csv
from mle_env.prepare.splits import group_split

DTYPES = {"id": "int32", "breath_id": "int32", "R": "int8", "C": "int8", "time_step": "float64",
          "u_in": "float64", "u_out": "int8", "pressure": "float64"}
FLOATS = {"float_format": "%.10g"}


def prepare(ctx: PrepareContext) -> None:
    raw = read_csv(find_raw(ctx, "train.csv"), dtype=DTYPES)
    train, test = group_split(raw, "breath_id", 0.1, random_state=0, key_order="sorted", row_order="groups")
    train, test = (part.assign(id=range(1, len(part) + 1)) for part in (train, test))
    write_csv(train, ctx.public / "train.csv", **FLOATS)
    write_csv(test.drop(columns=["pressure"]), ctx.public / "test.csv", **FLOATS)
    write_csv(test[["id"]].assign(pressure=0), ctx.public / "sample_submission.csv", **FLOATS)
    write_csv(test, ctx.private / "test.csv", **FLOATS)
