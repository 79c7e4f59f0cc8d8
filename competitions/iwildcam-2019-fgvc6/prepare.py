"""Whole camera locations go to train or test, as MLE-bench splits them: ``train_test_split`` (10 % of the
locations, seed 8) over the distinct ``location`` values of train.csv in order of first appearance; rows keep
the raw order. The images of each part are copied from the raw ``train_images.zip`` into public
``train_images.zip`` / ``test_images.zip`` member by member (never unpacked; stored, JPEGs do not shrink)."""

from __future__ import annotations

import zipfile
from pathlib import Path, PurePosixPath

from mle_env.errors import PrepareError
from mle_env.prepare.helpers import PrepareContext, read_csv, write_csv
from mle_env.prepare.splits import group_split


def copy_members(source: Path, names: list[str], archive: Path) -> None:
    """Write the members of zip ``source`` whose base names are ``names`` into a new flat zip ``archive``."""
    with zipfile.ZipFile(source) as zin:
        members = {PurePosixPath(i.filename).name: i for i in zin.infolist() if not i.is_dir()}
        missing = [n for n in names if n not in members]
        if missing:
            raise PrepareError(f"{source.name} lacks {len(missing)} image(s), e.g. {missing[0]}")
        archive.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as zout:
            for name in names:
                with zin.open(members[name]) as f:
                    zout.writestr(zipfile.ZipInfo(name, members[name].date_time), f.read())


def prepare(ctx: PrepareContext) -> None:
    frame = read_csv(ctx.raw_file("train.csv"))
    train, answers = group_split(frame, "location", 0.1, random_state=8, key_order="appearance", row_order="raw")
    test = answers.drop(columns=["category_id"])
    write_csv(train, ctx.public / "train.csv")
    write_csv(test, ctx.public / "test.csv")
    write_csv(answers, ctx.private / "test.csv")
    write_csv(answers[["id", "category_id"]].set_axis(["Id", "Category"], axis=1), ctx.private / "answers.csv")
    # MLE-bench writes the sample with its index (the raw row numbers): header ",Id,Category"
    sample = test[["id"]].set_axis(["Id"], axis=1).assign(Category=0)
    sample.to_csv(ctx.public / "sample_submission.csv", index=True)
    images = ctx.raw_file("train_images.zip")
    for part, out in ((train, "train_images.zip"), (test, "test_images.zip")):
        copy_members(images, [f"{i}.jpg" for i in part["id"]], ctx.public / out)
