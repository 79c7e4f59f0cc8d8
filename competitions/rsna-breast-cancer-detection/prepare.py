"""Whole patients go to train or test: scikit-learn's split (random_state 42) of the distinct patient ids in
order of appearance, each image row following its patient, both parts in the raw file's row order.

Public: ``train.csv`` (every column), ``test.csv`` (the metadata columns Kaggle's test file has, plus
``prediction_id`` = ``<patient_id>_<laterality>``), each image as ``{train,test}_images/<patient>/<image>.dcm``,
and a sample submission with the training cancer rate. Private: ``answers.csv``, one row per breast
(``prediction_id`` sorted as text, ``cancer`` of its first image)."""

import pandas as pd

from mle_env.prepare.helpers import PrepareContext, find_raw, place_files, raw_folder, read_csv, split, write_csv

TEST_COLUMNS = ["site_id", "patient_id", "image_id", "laterality", "view", "age", "implant", "machine_id"]


def prepare(ctx: PrepareContext) -> None:
    images = read_csv(find_raw(ctx, "train.csv"))
    _, test_patients = split(images["patient_id"].unique(), 0.1, random_state=42)
    held = images["patient_id"].isin(set(test_patients))
    train, test = images[~held], images[held]
    write_csv(train, ctx.public / "train.csv")
    public_test = test[TEST_COLUMNS].assign(
        prediction_id=test["patient_id"].astype(str) + "_" + test["laterality"])
    write_csv(public_test, ctx.public / "test.csv")
    per_breast = pd.DataFrame({"prediction_id": public_test["prediction_id"], "cancer": test["cancer"]})
    answers = per_breast.groupby("prediction_id").first().reset_index()
    write_csv(answers, ctx.private / "answers.csv")
    write_csv(answers.assign(cancer=train["cancer"].mean()), ctx.public / "sample_submission.csv")
    source = raw_folder(ctx, "train_images")
    for part, out in ((train, "train_images"), (test, "test_images")):
        names = [f"{p}/{i}.dcm" for p, i in zip(part["patient_id"], part["image_id"], strict=True)]
        place_files(((source / n, ctx.public / out / n) for n in names), ctx.may_link(source))
