"""20 % of the noisy training scans become the test set; their clean versions become per-pixel answers.

The split is over the scans' file names in sorted order, as MLE-bench does. Answers list every pixel of
every test scan (scans sorted by name, pixels row by row) as ``<stem>_<row>_<column>`` (1-based) with the
clean intensity in [0, 1].
"""

import numpy as np
import pandas as pd

from mle_env.prepare.helpers import PrepareContext, copy_files, pillow, raw_folder, split, write_csv


def _pixels(image, stem: str) -> pd.DataFrame:  # noqa: ANN001 - a PIL image
    values = np.asarray(image.convert("L")) / 255.0
    rows, cols = np.indices(values.shape)
    ids = [f"{stem}_{r}_{c}" for r, c in zip(rows.ravel() + 1, cols.ravel() + 1, strict=True)]
    return pd.DataFrame({"id": ids, "value": values.ravel()})


def prepare(ctx: PrepareContext) -> None:
    image = pillow()
    noisy, clean = raw_folder(ctx, "train"), raw_folder(ctx, "train_cleaned")
    names = sorted(p.name for p in noisy.glob("*.png"))
    train, test = split(names, ctx.params["test_size"])
    copy_files(train, noisy, ctx.public / "train", ctx.may_link(noisy))
    copy_files(test, noisy, ctx.public / "test", ctx.may_link(noisy))
    copy_files(train, clean, ctx.public / "train_cleaned", ctx.may_link(clean))
    answers = pd.concat([_pixels(image.open(clean / name), name.removesuffix(".png")) for name in sorted(test)])
    write_csv(answers, ctx.private / "answers.csv")
    write_csv(answers.assign(value=1), ctx.public / "sampleSubmission.csv")
