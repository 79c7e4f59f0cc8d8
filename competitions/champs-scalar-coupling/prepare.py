"""Whole molecules go to train or test, as MLE-bench splits them; the per-molecule files are filtered to
the training molecules, except the structures, which keep the test molecules too (known issue: MLE-bench
PR #70). The large per-molecule CSVs are filtered in chunks."""

from collections.abc import Collection

from mle_env.prepare.helpers import (
    CsvAppender,
    PrepareContext,
    copy_files,
    find_raw,
    raw_folder,
    read_csv,
    write_csv,
)
from mle_env.prepare.splits import group_split

TARGET = "scalar_coupling_constant"
#: per-molecule files published for the training molecules only (as on Kaggle)
TRAIN_ONLY = ("dipole_moments.csv", "magnetic_shielding_tensors.csv", "mulliken_charges.csv",
              "potential_energy.csv", "scalar_coupling_contributions.csv")
CHUNK_ROWS = 500_000


def filter_molecules(ctx: PrepareContext, name: str, molecules: Collection[str]) -> None:
    """Copy the rows of raw ``name`` whose ``molecule_name`` is in ``molecules`` to public/, in raw order."""
    keep = set(molecules)
    with CsvAppender(ctx.public / name) as out:
        for chunk in read_csv(find_raw(ctx, name), chunksize=CHUNK_ROWS):
            out.write(chunk[chunk["molecule_name"].isin(keep)])


def prepare(ctx: PrepareContext) -> None:
    train, answers = group_split(read_csv(find_raw(ctx, "train.csv")), "molecule_name", 0.1, random_state=0,
                                 key_order="sorted", row_order="groups")
    write_csv(train, ctx.public / "train.csv")
    write_csv(answers.drop(columns=[TARGET]), ctx.public / "test.csv")
    write_csv(answers[["id"]].assign(**{TARGET: 0}), ctx.public / "sample_submission.csv")
    write_csv(answers, ctx.private / "answers.csv")
    train_molecules = list(train["molecule_name"].unique())
    with_structures = train_molecules + list(answers["molecule_name"].unique())
    for name in TRAIN_ONLY:
        filter_molecules(ctx, name, train_molecules)
    filter_molecules(ctx, "structures.csv", with_structures)
    structures = raw_folder(ctx, "structures")
    copy_files([f"{m}.xyz" for m in with_structures], structures, ctx.public / "structures", ctx.may_link(structures))
