"""MLE-bench's split: as many of Kaggle's training records as there are validation records go to the test
set (``train_test_split(train_metadata, test_size=len(validation_metadata), random_state=0)``). Public:
``train/<record>/`` (nine band files and both mask files), ``test/<record>/`` (the bands only), Kaggle's
``validation/`` and ``validation_metadata.json`` unchanged, and the new ``train_metadata.json``. Private:
``answers.csv`` with each test record's column-major RLE mask ("-" when empty) and its height and width."""

import json

import numpy as np
import pandas as pd

from mle_env.grading.rle import encode_rle
from mle_env.prepare.helpers import PrepareContext, copy_files, place_files, split, write_csv
from mle_env.prepare.samples import python_choice

BANDS = [f"band_{b:02d}.npy" for b in range(8, 17)]
MASKS = ["human_individual_masks.npy", "human_pixel_masks.npy"]


def _answer(folder, record_id: str) -> dict:
    mask = np.load(folder / "human_pixel_masks.npy")
    height, width = np.load(folder / "band_08.npy", mmap_mode="r").shape[:2]
    rle = encode_rle(mask.reshape(mask.shape[0], mask.shape[1]) == 1)
    return {"record_id": record_id, "encoded_pixels": rle or "-", "height": height, "width": width}


def prepare(ctx: PrepareContext) -> None:
    train_metadata = json.loads(ctx.raw_file("train_metadata.json").read_text())
    validation_metadata = json.loads(ctx.raw_file("validation_metadata.json").read_text())
    train, test = split(train_metadata, len(validation_metadata), random_state=0)
    source = ctx.raw_file("train")
    link = ctx.may_link(source)
    answers = pd.DataFrame([_answer(source / r["record_id"], r["record_id"]) for r in test])
    for records, out, names in ((train, "train", BANDS + MASKS), (test, "test", BANDS)):
        for record in records:
            copy_files(names, source / record["record_id"], ctx.public / out / record["record_id"], link)
    validation = ctx.raw_file("validation")
    place_files([(validation, ctx.public / "validation")], ctx.may_link(validation))
    copy_files(["validation_metadata.json"], ctx.raw, ctx.public, ctx.may_link(ctx.raw))
    (ctx.public / "train_metadata.json").write_text(json.dumps(train))
    write_csv(answers, ctx.private / "answers.csv")
    sample = answers.assign(encoded_pixels=python_choice(len(answers), seed=0, options=["1 3 10 5", "-"]))
    write_csv(sample, ctx.public / "sample_submission.csv")
