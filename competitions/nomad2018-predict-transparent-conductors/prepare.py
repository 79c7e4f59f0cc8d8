"""10 % of the labelled materials become the test set; each part's ids are renumbered 1, 2, ... in split
order, as MLE-bench does, and each material's geometry file follows it to its new id."""

from mle_env.prepare.helpers import (
    PrepareContext,
    find_raw,
    place_files,
    raw_folder,
    read_csv,
    sample_submission,
    split,
    write_csv,
)

TARGETS = ["formation_energy_ev_natom", "bandgap_energy_ev"]
SAMPLE = {"formation_energy_ev_natom": 0.1779, "bandgap_energy_ev": 1.8892}


def prepare(ctx: PrepareContext) -> None:
    train, test = split(read_csv(find_raw(ctx, "train.csv")), ctx.params["test_size"])
    geometry = raw_folder(ctx, "train")
    link = ctx.may_link(geometry)
    for part, rows in (("train", train), ("test", test)):
        new_ids = range(1, len(rows) + 1)
        place_files(((geometry / str(old) / "geometry.xyz", ctx.public / part / str(new) / "geometry.xyz")
                     for old, new in zip(rows["id"], new_ids, strict=True)), link)
        rows["id"] = new_ids
    write_csv(train, ctx.public / "train.csv")
    write_csv(test.drop(columns=TARGETS), ctx.public / "test.csv")
    write_csv(test, ctx.private / "test.csv")
    write_csv(sample_submission(test["id"], "id", SAMPLE), ctx.public / "sample_submission.csv")
