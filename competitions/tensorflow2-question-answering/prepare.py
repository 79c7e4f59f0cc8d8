"""The labelled training JSONL is split as MLE-bench splits it, streamed so memory stays bounded (the raw file
is about 17 GB): every block of 1,000 lines is split on its own with ``train_test_split(test_size=0.1,
random_state=0)``, and each part is written in the order the split returns. ``example_id`` becomes text,
as MLE-bench writes it.

Public: ``simplified-nq-train.jsonl`` (full records), ``simplified-nq-test.jsonl`` (``example_id``,
``question_text``, ``document_text``, ``long_answer_candidates``) and ``sample_submission.csv`` (rows
``<id>_short`` and ``<id>_long``, empty predictions). Private: ``test.jsonl`` (full records),
``gold_submission.csv`` (one right answer per row) and ``answers.csv``, the graded form of the first
annotation of each held-out example: ``valid_answers`` lists every right prediction of a row, separated by
spaces (``start:end`` spans, YES or NO; empty when the right prediction is a blank).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from itertools import islice
from typing import IO, Any

from sklearn.model_selection import train_test_split

from mle_env.prepare.helpers import PrepareContext, find_raw

TRAIN = "simplified-nq-train.jsonl"
TEST = "simplified-nq-test.jsonl"
PUBLIC_KEYS = ("example_id", "question_text", "document_text", "long_answer_candidates")
#: lines split together, as MLE-bench reads the file in pandas chunks of this many records
BLOCK_LINES = 1000


def _blocks(lines: IO[str]) -> Iterator[list[str]]:
    while block := [line for line in islice(lines, BLOCK_LINES) if line.strip()]:
        yield block


def _span(start: int, end: int) -> str:
    return f"{start}:{end}"


def answer_rows(record: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(row id, gold prediction, valid answers) for the short and the long answer of one labelled record."""
    annotation = record["annotations"][0]
    example = record["example_id"]
    short = [_span(s["start_token"], s["end_token"]) for s in annotation["short_answers"]]
    if annotation["yes_no_answer"] != "NONE":
        short.append(annotation["yes_no_answer"])
    gold_short = annotation["yes_no_answer"] if annotation["yes_no_answer"] != "NONE" else (short[0] if short else "")
    long = annotation["long_answer"]
    valid_long = [_span(long["start_token"], long["end_token"])] if long["start_token"] != -1 else []
    return [(f"{example}_short", gold_short, " ".join(short)),
            (f"{example}_long", valid_long[0] if valid_long else "", " ".join(valid_long))]


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":")) + "\n"


def prepare(ctx: PrepareContext) -> None:
    source = find_raw(ctx, TRAIN)
    with (open(source, encoding="utf-8") as lines, open(ctx.public / TRAIN, "w", encoding="utf-8") as train,
          open(ctx.public / TEST, "w", encoding="utf-8") as test, open(ctx.private / "test.jsonl", "w",
                                                                      encoding="utf-8") as held,
          open(ctx.private / "answers.csv", "w", newline="", encoding="utf-8") as answers_file,
          open(ctx.private / "gold_submission.csv", "w", newline="", encoding="utf-8") as gold_file,
          open(ctx.public / "sample_submission.csv", "w", newline="", encoding="utf-8") as sample_file):
        answers, gold, sample = (csv.writer(f, lineterminator="\n") for f in (answers_file, gold_file, sample_file))
        answers.writerow(["example_id", "valid_answers"])
        gold.writerow(["example_id", "PredictionString"])
        sample.writerow(["example_id", "PredictionString"])
        for block in _blocks(lines):
            records = [json.loads(line) for line in block]
            for record in records:
                record["example_id"] = str(record["example_id"])
            train_rows, test_rows = train_test_split(range(len(records)), test_size=0.1, random_state=0)
            train.writelines(_line(records[i]) for i in train_rows)
            for i in test_rows:
                record = records[i]
                held.write(_line(record))
                test.write(_line({key: record[key] for key in PUBLIC_KEYS}))
                for row_id, right, valid in answer_rows(record):
                    answers.writerow([row_id, valid])
                    gold.writerow([row_id, right])
                    sample.writerow([row_id, ""])
