"""Kaggle's labelled seedling photos split 86/14 into a new train and test, as MLE-bench splits them.

Kaggle gives no label table, only ``train/<species>/<file>.png``. The rows (file, species) are listed
species folder by species folder in sorted name order, the ``.png`` files of each in sorted order; that
list is then split with a fixed seed. Train photos stay in their species folder; test photos are flat in
``test/``. The answers (file, species) are private; the sample submission names every test file with the
species "Sugar beet".
"""

from pathlib import Path

import pandas as pd

from mle_env.errors import PrepareError
from mle_env.prepare.helpers import PrepareContext, place_files, raw_folder, split, write_csv

SAMPLE_SPECIES = "Sugar beet"


def labelled_files(train: Path) -> pd.DataFrame:
    """One row per training photo: species folders sorted by name, the .png files of each sorted."""
    rows = [(name, species.name)
            for species in sorted((p for p in train.iterdir() if p.is_dir()), key=lambda p: p.name)
            for name in sorted(f.name for f in species.iterdir() if f.name.endswith(".png"))]
    if not rows:
        raise PrepareError(f"{train} holds no <species>/<file>.png; is this the competition's original train folder?")
    return pd.DataFrame(rows, columns=["file", "species"])


def prepare(ctx: PrepareContext) -> None:
    images = raw_folder(ctx, "train")
    train, test = split(labelled_files(images), 0.14, 0)
    write_csv(test, ctx.private / "answers.csv")
    write_csv(test.assign(species=SAMPLE_SPECIES), ctx.public / "sample_submission.csv")
    link = ctx.may_link(images)
    place_files(((images / s / f, ctx.public / "train" / s / f)
                 for f, s in zip(train["file"], train["species"], strict=True)), link)
    place_files(((images / s / f, ctx.public / "test" / f)
                 for f, s in zip(test["file"], test["species"], strict=True)), link)
