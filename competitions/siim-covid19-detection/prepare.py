"""Whole studies go to train or test, as MLE-bench splits them: ``train_study_level.csv`` rows split 90/10
(scikit-learn, random_state 0), each image following its study; both public tables sorted by id, and each
study's folder of DICOM series copied to ``train/`` or ``test/``. The answers (``private/test.csv``) hold
one row per test study, "<class> 1 0 0 1 1" with the study's class, then one per test image, its raw
``label`` string; the sample submission guesses "negative 1 0 0 1 1" and "none 1 0 0 1 1"."""

import pandas as pd

from mle_env.prepare.helpers import PrepareContext, copy_files, find_raw, raw_folder, read_csv, split, write_csv

#: the study table's four class columns, in their raw order, as the submission names them
STUDY_CLASSES = ["negative", "typical", "indeterminate", "atypical"]


def prepare(ctx: PrepareContext) -> None:
    studies = read_csv(find_raw(ctx, "train_study_level.csv"))
    train_studies, test_studies = (part.sort_values(by="id") for part in split(studies, 0.1, random_state=0))
    write_csv(train_studies, ctx.public / "train_study_level.csv")
    images = read_csv(find_raw(ctx, "train_image_level.csv"))
    study_of = images["StudyInstanceUID"] + "_study"
    train_images = images[study_of.isin(train_studies["id"])].sort_values(by="id")
    test_images = images[study_of.isin(test_studies["id"])].sort_values(by="id")
    write_csv(train_images, ctx.public / "train_image_level.csv")

    classes = test_studies.iloc[:, 1:].to_numpy().argmax(axis=1)  # the first of tied maxima, as pandas' argmax
    answers = pd.concat([
        pd.DataFrame({"id": test_studies["id"],
                      "PredictionString": [f"{STUDY_CLASSES[c]} 1 0 0 1 1" for c in classes]}),
        pd.DataFrame({"id": test_images["id"], "PredictionString": test_images["label"]}),
    ], ignore_index=True)
    write_csv(answers, ctx.private / "test.csv")
    guesses = ["negative 1 0 0 1 1"] * len(test_studies) + ["none 1 0 0 1 1"] * len(test_images)
    write_csv(pd.DataFrame({"id": answers["id"], "PredictionString": guesses}), ctx.public / "sample_submission.csv")

    scans = raw_folder(ctx, "train")
    for part, out in ((train_studies, "train"), (test_studies, "test")):
        copy_files([s.removesuffix("_study") for s in part["id"]], scans, ctx.public / out, ctx.may_link(scans))
