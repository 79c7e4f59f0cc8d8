"""The training set is the small part: 10 % of the studies, drawn with Python's ``random.Random(0)`` so that
10 % of the studies with bounding boxes, of those with segmentations and of those with both stay in it
(first the overlap, then segmentation-only, then box-only studies, then any others to reach 10 %); the
other 90 % are the test set, each study melted into eight rows (``patient_overall``, ``C1`` ... ``C7``)."""

import random

import pandas as pd

from mle_env.prepare.helpers import PrepareContext, copy_files, find_raw, raw_folder, read_csv, write_csv

TRAIN_RATIO = 0.1


def pick_training_studies(studies: list[str], boxed: list[str], segmented: list[str]) -> tuple[list[str], ...]:
    """(training studies, their boxed studies, their segmented studies), drawn as described above;
    ``boxed`` and ``segmented`` are sorted."""
    rng = random.Random(0)
    segmented_set = set(segmented)
    overlap = [s for s in boxed if s in segmented_set]
    chosen = rng.sample(overlap, round(len(overlap) * TRAIN_RATIO))
    boxes, segmentations, train = list(chosen), list(chosen), list(chosen)
    overlap_set = set(overlap)
    more = rng.sample([s for s in segmented if s not in overlap_set], round(len(segmented) * TRAIN_RATIO) - len(chosen))
    segmentations += more
    train += more
    more = rng.sample([s for s in boxed if s not in overlap_set], round(len(boxed) * TRAIN_RATIO) - len(chosen))
    boxes += more
    train += more
    taken = set(train)
    train += rng.sample([s for s in studies if s not in taken], round(len(studies) * TRAIN_RATIO) - len(train))
    return train, boxes, segmentations


def prepare(ctx: PrepareContext) -> None:
    studies = read_csv(find_raw(ctx, "train.csv"))
    bboxes = read_csv(find_raw(ctx, "train_bounding_boxes.csv"))
    masks = raw_folder(ctx, "segmentations")
    segmented = sorted(p.stem for p in masks.glob("*.nii"))
    train_ids, box_ids, mask_ids = pick_training_studies(
        list(studies["StudyInstanceUID"]), sorted(bboxes["StudyInstanceUID"].unique()), segmented)
    in_train = studies["StudyInstanceUID"].isin(set(train_ids))
    train, test = studies[in_train], studies[~in_train]
    write_csv(train, ctx.public / "train.csv")
    write_csv(bboxes[bboxes["StudyInstanceUID"].isin(set(box_ids))], ctx.public / "train_bounding_boxes.csv")
    answers = test.melt(id_vars="StudyInstanceUID", var_name="prediction_type", value_name="fractured")
    answers["row_id"] = answers["StudyInstanceUID"] + "_" + answers["prediction_type"]
    write_csv(answers, ctx.private / "answers.csv")
    write_csv(answers[["row_id"]].assign(fractured=0.5), ctx.public / "sample_submission.csv")
    write_csv(answers.drop(columns=["fractured"]), ctx.public / "test.csv")
    copy_files([f"{s}.nii" for s in mask_ids], masks, ctx.public / "segmentations", ctx.may_link(masks))
    images = raw_folder(ctx, "train_images")
    for part, out in ((train, "train_images"), (test, "test_images")):
        copy_files(list(pd.unique(part["StudyInstanceUID"])), images, ctx.public / out, ctx.may_link(images))
