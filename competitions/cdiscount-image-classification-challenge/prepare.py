"""A plain 10 % split of the products of ``train.bson``, as MLE-bench makes it, streamed record by record (the
raw file is about 58 GB; it is read twice and never held in memory).

The first pass reads each product's ``_id`` and ``category_id`` in file order; ``train_test_split(test_size=0.1,
random_state=0)`` picks the test products. The second pass writes each record, in raw order, to public
``train.bson`` (its bytes unchanged) or ``test.bson`` (re-encoded without ``category_id``; the original
``_id`` is kept), and the first 100 train records again to ``train_example.bson``. ``category_names.csv`` is
published as it is; ``private/answers.csv`` holds ``_id`` and ``category_id`` of the test products sorted by
``_id``; the sample submission guesses category 1000010653 everywhere. Needs pymongo's ``bson`` module.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from mle_env.errors import PrepareError, PrerequisiteError
from mle_env.prepare.helpers import PrepareContext, copy_files, write_csv

SAMPLE_CATEGORY = 1000010653
EXAMPLE_RECORDS = 100


def bson_module() -> Any:
    """pymongo's ``bson`` module, or a PrerequisiteError saying how to install it."""
    try:
        import bson
    except ImportError as e:
        raise PrerequisiteError(f"preparing this competition reads BSON with pymongo's bson module ({e}): "
                                "pip install pymongo") from e
    if not hasattr(bson, "decode_file_iter"):  # the unrelated PyPI package named bson shadows pymongo's
        raise PrerequisiteError("the bson module here is not pymongo's: pip uninstall bson, then pip install pymongo")
    return bson


def records(path: Path) -> Iterator[bytes]:
    """The encoded documents of a BSON file, one at a time (each begins with its int32 length)."""
    with open(path, "rb") as f:
        while head := f.read(4):
            size = struct.unpack("<i", head)[0] if len(head) == 4 else 0
            body = f.read(size - 4) if size > 4 else b""
            if len(body) != size - 4 or size <= 4:
                raise PrepareError(f"{path.name} ends in the middle of a document (or is not BSON); download it again")
            yield head + body


def prepare(ctx: PrepareContext) -> None:
    bson = bson_module()
    source = ctx.raw_file("train.bson")
    ids, categories = array("q"), array("q")  # 16 bytes per product: about 110 MB for Kaggle's 7 million
    for doc in map(bson.decode, records(source)):
        ids.append(doc["_id"])
        categories.append(doc["category_id"])
    products = pd.DataFrame({"_id": np.frombuffer(ids, dtype=np.int64),
                             "category_id": np.frombuffer(categories, dtype=np.int64)})
    _, answers = train_test_split(products, test_size=0.1, random_state=0)
    held = np.zeros(len(products), dtype=bool)
    held[answers.index.to_numpy()] = True  # by position: the second pass meets the records in the same order
    answers = answers.sort_values("_id")
    write_csv(answers, ctx.private / "answers.csv")
    write_csv(answers[["_id"]].assign(category_id=SAMPLE_CATEGORY), ctx.public / "sample_submission.csv")
    examples = 0
    with (open(ctx.public / "train.bson", "wb") as train, open(ctx.public / "test.bson", "wb") as test,
          open(ctx.public / "train_example.bson", "wb") as example):
        for position, raw in enumerate(records(source)):
            if held[position]:
                doc = bson.decode(raw)
                del doc["category_id"]
                test.write(bson.encode(doc))
                continue
            train.write(raw)
            if examples < EXAMPLE_RECORDS:
                example.write(raw)
                examples += 1
    copy_files(["category_names.csv"], ctx.raw, ctx.public, ctx.may_link(ctx.raw))
