"""10 % of the labelled leaves become the test set; image ids are renamed ``Train_<k>`` / ``Test_<k>`` in
split order (so the old names do not reveal which leaves moved), as MLE-bench does."""

import pandas as pd

from mle_env.prepare.helpers import PrepareContext, place_files, read_csv, renumber, split, write_csv

CLASSES = ["healthy", "multiple_diseases", "rust", "scab"]


def prepare(ctx: PrepareContext) -> None:
    old = read_csv(ctx.raw_file("train.csv"))
    train, answers = split(old, ctx.params["test_size"])
    new_names = {}
    for rows, prefix in ((train, "Train_"), (answers, "Test_")):
        renamed = renumber(rows["image_id"], prefix=prefix)
        new_names.update(zip(rows["image_id"], renamed, strict=True))
        rows["image_id"] = renamed
    images = ctx.raw_file("images")
    place_files(((images / f"{old_id}.jpg", ctx.public / "images" / f"{new_names[old_id]}.jpg")
                 for old_id in old["image_id"]), ctx.may_link(images))
    write_csv(answers, ctx.private / "test.csv")
    write_csv(pd.DataFrame({"image_id": answers["image_id"]}).assign(**dict.fromkeys(CLASSES, 0.25)),
              ctx.public / "sample_submission.csv")
    write_csv(answers[["image_id"]], ctx.public / "test.csv")
    write_csv(train, ctx.public / "train.csv")
