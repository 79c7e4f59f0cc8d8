"""10 % of the labelled photos become the test set, renamed so their names no longer tell the label.

As MLE-bench does: the photos are split in sorted name order; training photos are renamed
``cat.<k>.jpg`` / ``dog.<k>.jpg`` (k counting per animal in split order) and test photos ``<i>.jpg``
(i = 1, 2, ... in split order). Both sets are published as folders and as flat zips.
"""

import pandas as pd

from mle_env.prepare.helpers import (
    PrepareContext,
    place_files,
    raw_folder,
    sample_submission,
    split,
    write_csv,
    zip_files,
)


def prepare(ctx: PrepareContext) -> None:
    photos = raw_folder(ctx, "train")
    train, test = split(sorted(p.name for p in photos.glob("*.jpg")), ctx.params["test_size"])
    counters = {"cat": 0, "dog": 0}
    train_names = []
    for name in train:
        animal = "cat" if "cat" in name else "dog"
        train_names.append(f"{animal}.{counters[animal]}.jpg")
        counters[animal] += 1
    test_names = [f"{i}.jpg" for i in range(1, len(test) + 1)]
    for part, old, new in (("train", train, train_names), ("test", test, test_names)):
        place_files(((photos / o, ctx.public / part / n) for o, n in zip(old, new, strict=True)), ctx.may_link(photos))
        zip_files(((ctx.public / part / n, n) for n in new), ctx.public / f"{part}.zip")
    ids = pd.Series(range(1, len(test) + 1))
    write_csv(pd.DataFrame({"id": ids, "label": [int("dog" in name) for name in test]}), ctx.private / "answers.csv")
    write_csv(sample_submission(ids, "id", {"label": 0.5}), ctx.public / "sample_submission.csv")
