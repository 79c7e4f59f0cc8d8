"""Kaggle's labelled records (``train.json``, packed in ``train.json.7z``) split 80/20 as MLE-bench does; the
test records keep only the fields of Kaggle's own test records, and every public file is a 7z archive again,
as Kaggle ships them."""

import json
from pathlib import Path
from typing import Any

import pandas as pd

from mle_env.archives import write_7z
from mle_env.prepare.helpers import PrepareContext, find_raw, split, write_csv


def _dump_7z(records: list[dict[str, Any]], member: str, staging: Path, archive: Path) -> None:
    """``records`` as compact JSON (json.dump's defaults, as MLE-bench writes) in a 7z holding ``member``."""
    staged = staging / member
    staged.parent.mkdir(parents=True, exist_ok=True)
    with open(staged, "w", encoding="utf-8") as f:
        json.dump(records, f)
    write_7z([(staged, member)], archive)
    staged.unlink()


def prepare(ctx: PrepareContext) -> None:
    train_records, test_records = (json.loads(find_raw(ctx, name).read_text(encoding="utf-8"))
                                   for name in ("train.json", "test.json"))
    test_fields = list(test_records[0])
    train, test = split(train_records, ctx.params["test_size"], ctx.params["random_state"])
    staging = ctx.scratch / "statoil"
    _dump_7z(train, "train.json", staging, ctx.public / "train.json.7z")
    _dump_7z([{key: record[key] for key in test_fields} for record in test], "test.json", staging,
             ctx.public / "test.json.7z")
    answers = pd.DataFrame({"id": [r["id"] for r in test], "is_iceberg": [int(r["is_iceberg"]) for r in test]})
    write_csv(answers, ctx.private / "test.csv")
    write_csv(answers.assign(is_iceberg=0.5), ctx.private / "sample_submission.csv")
    sample = ctx.private / "sample_submission.csv"
    write_7z([(sample, "sample_submission.csv")], ctx.public / "sample_submission.csv.7z")
