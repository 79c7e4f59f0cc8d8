"""Whole images go to train or test, as MLE-bench splits them: the distinct ``image_id`` values of
``train.csv`` (in order of appearance) split 90/10 (scikit-learn, random_state 0); every annotation of a
training image stays in the public ``train.csv`` and each image's DICOM file is copied to ``train/`` or
``test/``. ``private/answers.csv`` keeps the first annotation of each (test image, class), missing
coordinates as 0 and "No finding" boxes as 0 0 1 1; ``private/gold_submission.csv`` writes those boxes as
one prediction string per image ("class 1.0 x_min y_min x_max y_max" groups), which the grader reads."""

import pandas as pd

from mle_env.prepare.helpers import PrepareContext, copy_files, find_raw, raw_folder, read_csv, split, write_csv

NO_FINDING = 14


def prepare(ctx: PrepareContext) -> None:
    annotations = read_csv(find_raw(ctx, "train.csv"))
    train_ids, test_ids = split(list(annotations["image_id"].unique()), 0.1, random_state=0)
    write_csv(annotations[annotations["image_id"].isin(train_ids)], ctx.public / "train.csv")
    write_csv(pd.DataFrame({"image_id": test_ids, "PredictionString": "14 1 0 0 1 1"}),
              ctx.public / "sample_submission.csv")

    test = annotations[annotations["image_id"].isin(test_ids)]
    answers = test.groupby(by=["image_id", "class_id"]).first().reset_index().fillna(0)
    answers.loc[answers["class_id"] == NO_FINDING, ["x_max", "y_max"]] = 1.0
    write_csv(answers, ctx.private / "answers.csv")
    groups = [f"{c} 1.0 {x1} {y1} {x2} {y2}" for c, x1, y1, x2, y2 in
              answers[["class_id", "x_min", "y_min", "x_max", "y_max"]].astype(object).itertuples(index=False)]
    gold = pd.DataFrame({"image_id": answers["image_id"], "PredictionString": groups})
    write_csv(gold.groupby("image_id")["PredictionString"].agg(" ".join).reset_index(),
              ctx.private / "gold_submission.csv")

    images = raw_folder(ctx, "train")
    for ids, out in ((train_ids, "train"), (test_ids, "test")):
        copy_files([f"{i}.dicom" for i in ids], images, ctx.public / out, ctx.may_link(images))
