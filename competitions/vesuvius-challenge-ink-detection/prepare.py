"""MLE-bench's fixed split of Kaggle's three labelled fragments: fragments 1 and 2 are copied whole to
``train/1`` and ``train/2``; fragment 3 becomes the one test fragment ``test/a`` without its labels
(``inklabels.png``, ``inklabels_rle.csv``) and its infrared photograph ``ir.png``. Private:
``inklabels_rle.csv`` (``Id`` "a", the row-major RLE ``Predicted``, and the fragment's ``width`` and
``height`` read from ``ir.png``) and ``gold_submission.csv``."""

from mle_env.prepare.helpers import PrepareContext, pillow, place_files, read_csv, write_csv

HELD_BACK = {"inklabels.png", "inklabels_rle.csv", "ir.png"}


def prepare(ctx: PrepareContext) -> None:
    source = ctx.raw_file("train")
    link = ctx.may_link(source)
    place_files([(source / n, ctx.public / "train" / n) for n in ("1", "2")], link)
    labels = read_csv(source / "3" / "inklabels_rle.csv")
    if len(labels) != 1:
        raise ValueError(f"fragment 3's inklabels_rle.csv has {len(labels)} rows, expected 1")
    with pillow().open(source / "3" / "ir.png") as image:
        width, height = image.size
    labels = labels.assign(width=width, height=height, Id="a")
    write_csv(labels, ctx.private / "inklabels_rle.csv")
    write_csv(labels.drop(columns=["width", "height"]), ctx.private / "gold_submission.csv")
    files = sorted(p for p in (source / "3").rglob("*") if p.is_file() and p.name not in HELD_BACK)
    place_files([(p, ctx.public / "test" / "a" / p.relative_to(source / "3")) for p in files], link)
    write_csv(labels[["Id"]].assign(Predicted="1 1 5 1"), ctx.public / "sample_submission.csv")
