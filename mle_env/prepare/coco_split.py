"""Per-category splits of COCO-style image metadata (the herbarium competitions and iNaturalist 2019).

Their raw labels are one JSON file with parallel ``annotations`` and ``images`` lists (the k-th annotation
labels the k-th image) and dataset-wide keys (``categories``, ``info``, ``licenses`` ...). MLE-bench splits
each category on its own, so every category with enough images is in both parts:

- categories are taken in order of first appearance (``category_order="appearance"``, a Python dict's
  order) or sorted by id (``"sorted"``);
- ``small="last"``: a category with one image stays in train; one with 2-4 images sends its last
  ``max(1, int(n * test_size))`` images to test; from 5 images on, scikit-learn
  ``train_test_split(items, test_size, random_state)`` picks them. ``small="split"``: every category is
  split by ``train_test_split``, and a category that leaves either part empty stops the preparation
  (herbarium 2022's recipe);
- train lists the categories in that order, each in its split's order; test is the same flattened list
  shuffled with ``random.Random(shuffle_seed)``, so neighbouring test images do not share a category.

Each competition's prepare.py writes its own layout from the :class:`CocoSplit`: renamed ids and file
names, metadata written with :func:`write_metadata`, images placed with :func:`place_images` (hard links
into public/ when the raw folder is mle-env's own, never copies of 100+ GB of images), and answers.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from mle_env.errors import PrepareError
from mle_env.prepare.helpers import PrepareContext, place_files, write_csv
from mle_env.prepare.tables import split

SmallRule = Literal["last", "split"]
CategoryOrder = Literal["appearance", "sorted"]


@dataclass(frozen=True)
class Item:
    """One labelled image: its annotation and image records (the raw dicts; copy before changing them)."""

    annotation: dict[str, Any]
    image: dict[str, Any]

    @property
    def category(self) -> Any:
        return self.annotation["category_id"]


@dataclass(frozen=True)
class CocoSplit:
    """``train``: the train items, category by category; ``test``: the test items, shuffled."""

    train: list[Item]
    test: list[Item]


def read_metadata(path: Path, encoding: str = "utf-8") -> dict[str, Any]:
    """The metadata JSON at ``path``, decoded with ``encoding`` (herbarium 2020's is read as latin-1, as
    MLE-bench reads it, which changes how non-ASCII names are written back)."""
    if not path.is_file():
        raise PrepareError(f"raw metadata {path} is missing; the raw folder must hold the competition's files")
    with open(path, encoding=encoding) as f:
        return json.load(f)


def write_metadata(data: Any, path: Path) -> None:
    """JSON with a 4-space indent, sorted keys and ASCII escapes, as MLE-bench writes every metadata file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=4, sort_keys=True)


def by_category(
    metadata: dict[str, Any], image_key: str = "id", category_order: CategoryOrder = "appearance"
) -> dict[Any, list[Item]]:
    """The metadata's items grouped by ``category_id``, each group in raw order, groups in ``category_order``.
    ``image_key`` is the image record's id field, which each annotation's ``image_id`` must equal."""
    for key in ("annotations", "images"):
        if not isinstance(metadata.get(key), list):
            raise PrepareError(f"the metadata has no '{key}' list; is this the competition's original file?")
    annotations, images = metadata["annotations"], metadata["images"]
    if len(annotations) != len(images):
        raise PrepareError(f"the metadata has {len(annotations)} annotations but {len(images)} images")
    groups: dict[Any, list[Item]] = {}
    for annotation, image in zip(annotations, images, strict=True):
        if annotation["image_id"] != image[image_key]:
            raise PrepareError(
                f"annotation and image records are not aligned: image_id {annotation['image_id']!r} "
                f"beside image {image[image_key]!r}"
            )
        groups.setdefault(annotation["category_id"], []).append(Item(annotation, image))
    if category_order == "sorted":
        return {k: groups[k] for k in sorted(groups)}
    if category_order != "appearance":
        raise PrepareError(f"category_order must be 'appearance' or 'sorted', not {category_order!r}")
    return groups


def split_category(items: list[Item], test_size: float, random_state: int, small: SmallRule) -> tuple[list, list]:
    """(train, test) of one category's items by the ``small`` rule (module docstring)."""
    n = len(items)
    if small == "last" and n < 5:
        if n == 1:
            return items, []
        held = max(1, int(n * test_size))
        return items[:-held], items[-held:]
    if small not in ("last", "split"):
        raise PrepareError(f"small must be 'last' or 'split', not {small!r}")
    try:
        train, test = split(items, test_size, random_state)
    except ValueError as e:  # too few images to split
        raise PrepareError(f"category {items[0].category!r} ({n} image(s)) cannot be split: {e}") from None
    if small == "split" and not (train and test):
        raise PrepareError(f"category {items[0].category!r} ({n} image(s)) leaves train or test empty")
    return list(train), list(test)


def coco_split(
    metadata: dict[str, Any],
    *,
    test_size: float,
    image_key: str = "id",
    random_state: int = 0,
    shuffle_seed: int = 0,
    small: SmallRule = "last",
    category_order: CategoryOrder = "appearance",
) -> CocoSplit:
    """Split ``metadata`` per category as the module docstring describes."""
    train: list[Item] = []
    test: list[Item] = []
    for items in by_category(metadata, image_key, category_order).values():
        part_train, part_test = split_category(items, test_size, random_state, small)
        train += part_train
        test += part_test
    random.Random(shuffle_seed).shuffle(test)
    return CocoSplit(train, test)


def with_items(metadata: dict[str, Any], items: Iterable[tuple[dict[str, Any], dict[str, Any]]],
               keep: Iterable[str] | None = None) -> dict[str, Any]:
    """A copy of ``metadata`` whose ``annotations`` and ``images`` are those of ``items`` ((annotation,
    image) pairs); with ``keep``, only those other keys are kept (a missing one stops the preparation)."""
    pairs = list(items)
    out = {k: v for k, v in metadata.items() if k not in ("annotations", "images")}
    if keep is not None:
        wanted = list(keep)
        missing = [k for k in wanted if k not in out]
        if missing:
            raise PrepareError(f"the metadata lacks key(s) {missing}; is this the competition's original file?")
        out = {k: out[k] for k in wanted}
    out["annotations"] = [a for a, _ in pairs]
    out["images"] = [i for _, i in pairs]
    return out


def place_images(ctx: PrepareContext, pairs: Iterable[tuple[Path, Path]], source_root: Path) -> int:
    """Place raw image files at their public paths: hard links when ``source_root`` may be linked (mle-env's
    own raw cache), else copies (see :func:`~mle_env.prepare.helpers.place_files`); returns the count."""
    return place_files(pairs, ctx.may_link(source_root))


def answers_frame(ids: Iterable[Any], labels: Iterable[Any], columns: tuple[str, str] = ("Id", "Predicted")
                  ) -> pd.DataFrame:
    """The answers table: one row per test image, its id and its category."""
    return pd.DataFrame({columns[0]: list(ids), columns[1]: list(labels)})


def renamed(item: Item, image_key: str, new_id: str, file_name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Copies of ``item``'s annotation and image records with the image id ``new_id`` and ``file_name``."""
    return {**item.annotation, "image_id": new_id}, {**item.image, image_key: new_id, "file_name": file_name}


def herbarium_folders(
    ctx: PrepareContext,
    *,
    root: str = "",
    encoding: str = "utf-8",
    test_size: float = 0.2,
    random_state: int = 0,
    shuffle_seed: int = 0,
    test_keys: Iterable[str] = ("info", "licenses"),
    sample_value: Any = 0,
) -> None:
    """Herbarium 2020 and 2021: ``<root>/train/metadata.json`` and ``<root>/train/images/...`` split per
    category (``small="last"``, appearance order).

    Public: ``<root>/train/metadata.json`` (the train items; every other key kept) with the train images
    at their raw paths, ``<root>/test/metadata.json`` (the test ``images`` and ``test_keys`` only) with each
    test image renamed by its position ``n`` in the shuffled test list (id ``"n"``, file
    ``images/<n // 1000, 3 digits>/<n>.jpg``), and ``sample_submission.csv`` (``Id``, ``Predicted`` =
    ``sample_value``). Private: ``answers.csv`` (``Id``, ``Predicted`` = the category id).
    """
    raw_train, out = ctx.raw / root / "train", ctx.public / root
    metadata = read_metadata(raw_train / "metadata.json", encoding)
    parts = coco_split(metadata, test_size=test_size, random_state=random_state, shuffle_seed=shuffle_seed)
    train = with_items(metadata, ((i.annotation, i.image) for i in parts.train))
    write_metadata(train, out / "train" / "metadata.json")
    place_images(ctx, ((raw_train / i.image["file_name"], out / "train" / i.image["file_name"]) for i in parts.train),
                 raw_train)
    test = [renamed(item, "id", str(n), f"images/{n // 1000:03d}/{n}.jpg") for n, item in enumerate(parts.test)]
    public_test = with_items(metadata, test, keep=test_keys)
    del public_test["annotations"]
    write_metadata(public_test, out / "test" / "metadata.json")
    place_images(ctx, ((raw_train / item.image["file_name"], out / "test" / image["file_name"])
                       for item, (_, image) in zip(parts.test, test, strict=True)), raw_train)
    ids = [image["id"] for _, image in test]
    write_csv(answers_frame(ids, (item.category for item in parts.test)), ctx.private / "answers.csv")
    write_csv(answers_frame(ids, [sample_value] * len(ids)), ctx.public / "sample_submission.csv")
