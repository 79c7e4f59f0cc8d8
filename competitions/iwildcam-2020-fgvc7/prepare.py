"""Whole camera locations go to train or test, as MLE-bench splits them: ``train_test_split`` (22 %, seed 0)
over the distinct ``location`` values of the training images in order of first appearance, then adjusted:
while the test images are fewer than 22 % of (all images + test images), the last train location moves to
test; then, while they are more, the last test location moves back.

Public: the COCO-style ``iwildcam2020_train_annotations.json`` rewritten with the train images and their
annotations (categories and info kept), ``iwildcam2020_test_information.json`` with the test images (the
raw test file's categories and info), the MegaDetector results as they are, the images in ``train/`` and
``test/`` (hard links of the raw training images where allowed), and ``sample_submission.csv`` (seeded
random categories, as MLE-bench draws them). Private: ``answers.csv``, ``Id`` (image id) and ``Category``
of every annotation of a test image.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from mle_env.prepare.helpers import PrepareContext, copy_files, raw_folder, write_csv
from mle_env.prepare.samples import numpy_randint

TRAIN = "iwildcam2020_train_annotations.json"
TEST = "iwildcam2020_test_information.json"
DETECTIONS = "iwildcam2020_megadetector_results.json"
TEST_SIZE = 0.22


def test_locations(locations: list[Any], counts: dict[Any, int], test_size: float = TEST_SIZE) -> set[Any]:
    """MLE-bench's held-out locations: a split of ``locations`` (distinct, in order of first appearance),
    adjusted on the image ``counts`` per location as the module docstring says."""
    train, test = (list(part) for part in train_test_split(np.array(locations), test_size=test_size, random_state=0))
    total = sum(counts.values())

    def share() -> float:
        held = sum(counts[loc] for loc in test)
        return held / (total + held)

    while share() < test_size:
        test.append(train.pop())
    while share() > test_size:
        train.append(test.pop())
    return set(test)


def _read(path: Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _write(data: dict[str, Any], path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f)  # one line, json.dump's separators, as MLE-bench writes it


def prepare(ctx: PrepareContext) -> None:
    train_json, test_json = _read(ctx.raw_file(TRAIN)), _read(ctx.raw_file(TEST))
    images = train_json["images"]
    locations = [image["location"] for image in images]
    counts = pd.Series(locations).value_counts().to_dict()
    held = test_locations(list(dict.fromkeys(locations)), counts)
    test_images = [image for image in images if image["location"] in held]
    train_images = [image for image in images if image["location"] not in held]
    test_ids = {image["id"] for image in test_images}
    annotations = train_json["annotations"]
    test_annotations = [a for a in annotations if a["image_id"] in test_ids]
    _write({"annotations": [a for a in annotations if a["image_id"] not in test_ids], "images": train_images,
            "categories": train_json["categories"], "info": train_json["info"]}, ctx.public / TRAIN)
    _write({"images": test_images, "categories": test_json["categories"], "info": test_json["info"]},
           ctx.public / TEST)
    answers = pd.DataFrame({"Id": [a["image_id"] for a in test_annotations],
                            "Category": [a["category_id"] for a in test_annotations]})
    write_csv(answers, ctx.private / "answers.csv")
    write_csv(answers.assign(Category=numpy_randint(len(answers), seed=0, low=0, high=676)),
              ctx.public / "sample_submission.csv")
    copy_files([DETECTIONS], ctx.raw, ctx.public, ctx.may_link(ctx.raw))
    source = raw_folder(ctx, "train")
    for part, rows in (("train", train_images), ("test", test_images)):
        names = list(dict.fromkeys(f"{image['id']}.jpg" for image in rows))
        copy_files(names, source, ctx.public / part, ctx.may_link(source))
