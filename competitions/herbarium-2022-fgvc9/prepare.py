"""Herbarium 2022: ``train_metadata.json`` and ``train_images/`` split per category with
:func:`mle_env.prepare.coco_split.coco_split` (every category split by ``train_test_split``; each must keep
images on both sides), as MLE-bench splits them.

Every image is renamed so that ids have no gaps: the k-th train image of category c becomes
``<c, 5 digits>__<k, 3 digits>`` (k from 1) in ``train_images/<c // 100, 3 digits>/<c % 100, 2 digits>/``,
and the n-th image of the shuffled test list becomes ``n`` in ``test_images/<n // 1000, 3 digits>/
test-<n, 6 digits>.jpg``. Public: ``train_metadata.json`` (every key, the train items), the bare list of
test image records ``test_metadata.json``, both image folders (hard links to the raw images where mle-env
owns them) and ``sample_submission.csv`` (``Predicted`` = ``sample_value``); private: ``answers.csv``.
"""

from __future__ import annotations

from typing import Any

from mle_env.prepare.coco_split import (
    answers_frame,
    coco_split,
    place_images,
    read_metadata,
    renamed,
    with_items,
    write_metadata,
)
from mle_env.prepare.helpers import PrepareContext, write_csv


def prepare(ctx: PrepareContext) -> None:
    p: dict[str, Any] = ctx.params
    metadata = read_metadata(ctx.raw_file("train_metadata.json"))
    parts = coco_split(metadata, test_size=p["test_size"], image_key="image_id", random_state=p["random_state"],
                       shuffle_seed=p["shuffle_seed"], small="split")
    images = ctx.raw / "train_images"
    train, seen = [], {}
    for item in parts.train:
        c = item.category
        seen[c] = seen.get(c, 0) + 1
        new_id = f"{c:05d}__{seen[c]:03d}"
        train.append(renamed(item, "image_id", new_id, f"{c // 100:03d}/{c % 100:02d}/{new_id}.jpg"))
    test = [renamed(item, "image_id", str(n), f"{n // 1000:03d}/test-{n:06d}.jpg") for n, item in enumerate(parts.test)]
    write_metadata(with_items(metadata, train), ctx.public / "train_metadata.json")
    write_metadata([image for _, image in test], ctx.public / "test_metadata.json")
    for items, records, folder in ((parts.train, train, "train_images"), (parts.test, test, "test_images")):
        place_images(ctx, ((images / item.image["file_name"], ctx.public / folder / image["file_name"])
                           for item, (_, image) in zip(items, records, strict=True)), images)
    ids = [image["image_id"] for _, image in test]
    write_csv(answers_frame(ids, (item.category for item in parts.test)), ctx.private / "answers.csv")
    write_csv(answers_frame(ids, [p["sample_value"]] * len(ids)), ctx.public / "sample_submission.csv")
