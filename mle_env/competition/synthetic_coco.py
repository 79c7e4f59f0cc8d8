"""Synthetic COCO-style image metadata for the herbarium and iNaturalist synthetic.py modules, and MLE-bench's
per-category test set recomputed from it (independently of :mod:`mle_env.prepare.coco_split`).

:func:`labelled_items` draws images of a few categories of chosen sizes (1, 2, 3, 4, 5 and more images:
every case of the small-category rule) in a seeded interleaved order, so the order of first appearance
differs from sorted order. :func:`test_items` recomputes which items MLE-bench puts in the test set, in its
shuffled order.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

#: category id -> number of images (ids chosen so that "<id // 100>/<id % 100>" folders differ in width)
SIZES = {15504: 7, 3: 1, 220: 2, 1: 4, 46: 5, 9021: 3, 12: 12, 7: 6}


def labelled_items(seed: int, sizes: dict[int, int] = SIZES) -> list[tuple[int, int]]:
    """(category id, image number) pairs, every category's images interleaved in a seeded order; the image
    numbers count from 0 in that order."""
    rng = np.random.default_rng(seed)
    categories = [c for c, n in sizes.items() for _ in range(n)]
    order = rng.permutation(len(categories))
    return [(categories[k], n) for n, k in enumerate(order)]


def test_items(metadata: dict[str, Any], image_key: str, test_size: float, small_rule: bool) -> list[tuple[dict, dict]]:
    """The (annotation, image) pairs MLE-bench's recipe holds out, in its shuffled order: per category in
    order of first appearance, 1 image -> none, 2-4 -> the last max(1, int(n * test_size)) (``small_rule``),
    else scikit-learn's train_test_split(test_size, random_state=0); then random.Random(0).shuffle."""
    from sklearn.model_selection import train_test_split

    groups: dict[Any, list[tuple[dict, dict]]] = {}
    for annotation, image in zip(metadata["annotations"], metadata["images"], strict=True):
        assert annotation["image_id"] == image[image_key]
        groups.setdefault(annotation["category_id"], []).append((annotation, image))
    held: list[tuple[dict, dict]] = []
    for pairs in groups.values():
        if small_rule and len(pairs) == 1:
            continue
        if small_rule and len(pairs) < 5:
            held += pairs[len(pairs) - max(1, int(len(pairs) * test_size)):]
        else:
            held += train_test_split(pairs, test_size=test_size, random_state=0)[1]
    random.Random(0).shuffle(held)
    return held


NAMES = ["Acosmium lentiscifolium", "Bauhinia forficata", "Cássia fistula", "Eugenia uniflora", "Inga edulis",
         "Mimosa pudica", "Piper nigrum", "Tabebuia rosea"]


def herbarium_raw(raw: Path, root: str, extra_key: str, seed: int) -> None:
    """Herbarium 2020's (``root="nybg2020"``, ``extra_key="regions"``) or 2021's (``root=""``,
    ``"institutions"``) raw layout: ``<root>/train/metadata.json`` (annotations, categories, images, info,
    licenses and ``extra_key``; UTF-8 with a non-ASCII species name), ``<root>/train/images/<category // 100,
    3 digits>/<category % 100, 2 digits>/<image id>.jpg``, ``<root>/test/metadata.json`` and
    ``<root>/test/images/<n // 1000, 3 digits>/<n>.jpg`` (Kaggle's unlabelled test set) and
    ``sample_submission.csv`` (Id, Predicted)."""
    from mle_env.competition.synthetic import image_bytes, write_csv

    base = raw / root
    items = labelled_items(seed)
    image_ids = [100000 + 37 * n for _, n in items]
    annotations, images = [], []
    for (category, n), image_id in zip(items, image_ids, strict=True):
        name = f"images/{category // 100:03d}/{category % 100:02d}/{image_id}.jpg"
        annotations.append({"category_id": category, "id": image_id, "image_id": image_id,
                            extra_key[:-1] + "_id": n % 3})
        images.append({"file_name": name, "height": 1000, "id": image_id, "license": 0, "width": 661})
        (base / "train" / name).parent.mkdir(parents=True, exist_ok=True)
        (base / "train" / name).write_bytes(image_bytes("JPEG", (6, 9), seed=n))
    categories = [{"family": "Fabaceae", "genus": NAMES[k].split()[0], "id": c, "name": NAMES[k]}
                  for k, c in enumerate(sorted(SIZES))]
    info = {"contributor": "Synthetic Herbarium", "date_created": "2020-02-15", "version": "1.0", "year": 2020}
    licenses = [{"id": 0, "name": "Public Domain Dedication", "url": "http://creativecommons.org/publicdomain/zero/1.0/"}]
    extra = [{"id": k, "name": f"Region {k}"} for k in range(3)]
    train = {"annotations": annotations, "categories": categories, "images": images, "info": info,
             "licenses": licenses, extra_key: extra}
    _dump(train, base / "train" / "metadata.json")
    test_images = []
    for n in range(4):
        name = f"images/000/{n}.jpg"
        (base / "test" / name).parent.mkdir(parents=True, exist_ok=True)
        (base / "test" / name).write_bytes(image_bytes("JPEG", (6, 9), seed=50 + n))
        test_images.append({"file_name": name, "height": 1000, "id": n, "license": 0, "width": 661})
    _dump({"images": test_images, "info": info, "licenses": licenses}, base / "test" / "metadata.json")
    write_csv(pd.DataFrame({"Id": range(4), "Predicted": 0}), raw / "sample_submission.csv")


def _dump(data: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
