"""No split: Kaggle's files are published as they are, and the test clips' labels, released after the
competition on Zenodo (``FSDKaggle2019.meta.zip``, the ``url`` source), become the answers, as in MLE-bench.

Public: every raw file but the Zenodo archive (hard links where allowed). Private: ``test.csv``, the rows of
``test_post_competition.csv`` marked ``Private`` (in that file's order) as one 0/1 column per class, in the
sample submission's class order; labels outside that vocabulary are dropped. The Private clips must be
exactly the sample submission's.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import PurePosixPath

import pandas as pd

from mle_env.errors import PrepareError
from mle_env.prepare.helpers import PrepareContext, copy_files, read_csv, write_csv

META = "FSDKaggle2019.meta.zip"
LABELS = "test_post_competition.csv"


def test_labels(archive: zipfile.ZipFile) -> pd.DataFrame:
    """The post-competition test labels (``fname``, ``labels``, ``usage``, ...) from the Zenodo archive."""
    members = [n for n in archive.namelist() if PurePosixPath(n).name == LABELS]
    if not members:
        raise PrepareError(f"{META} holds no {LABELS}; is it the archive from Zenodo record 3612637?")
    return pd.read_csv(io.BytesIO(archive.read(members[0])), dtype={"fname": str, "labels": str},
                       keep_default_na=False)


def prepare(ctx: PrepareContext) -> None:
    # every raw file but the Zenodo archive (and mle-env's own markers, such as the cache's .complete)
    names = sorted(p.name for p in ctx.raw.iterdir()
                   if "FSDKaggle2019.meta" not in p.name and not p.name.startswith("."))
    copy_files(names, ctx.raw, ctx.public, ctx.may_link(ctx.raw))
    classes = list(read_csv(ctx.raw_file("sample_submission.csv"), nrows=0).columns[1:])
    with zipfile.ZipFile(ctx.raw_file(META)) as archive:
        private = test_labels(archive).query("usage == 'Private'")
    tags = [set(cell.split(",")) for cell in private["labels"]]
    answers = pd.DataFrame({"fname": private["fname"].to_numpy(),
                            **{c: [int(c in row) for row in tags] for c in classes}})
    sample = read_csv(ctx.raw_file("sample_submission.csv"), usecols=["fname"], dtype=str)
    if sorted(sample["fname"]) != sorted(answers["fname"]):
        raise PrepareError(f"the Private clips of {LABELS} ({len(answers)}) are not the sample submission's "
                           f"({len(sample)}); is {META} the archive from Zenodo record 3612637?")
    write_csv(answers, ctx.private / "test.csv")
