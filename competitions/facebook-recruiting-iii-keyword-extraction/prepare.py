"""Kaggle's Train.csv (about 6 million questions, 7 GB) split 90/10 into a new train and test, as MLE-bench
splits it, streamed in chunks so that memory stays bounded (:mod:`mle_env.prepare.chunked` gives the same
rows in the same order as the in-memory split).

Public: ``train.csv`` (Id, Title, Body, Tags), ``test.csv`` (without Tags) and ``sample_submission.csv``,
which is the public test table plus ``Tags`` = five popular tags, Title and Body included, as MLE-bench
writes it. Private: ``test.csv``, the held-out rows whole.
"""

from mle_env.prepare import chunked
from mle_env.prepare.helpers import CsvAppender, PrepareContext, find_raw

SAMPLE_TAGS = "javascript c# python php java"


def prepare(ctx: PrepareContext) -> None:
    path = find_raw(ctx, "Train.csv", "Train.zip")
    rows = int(ctx.params.get("chunk_rows", chunked.DEFAULT_CHUNK_ROWS))
    parts = chunked.split_chunks(path, 0.1, 0, scratch=ctx.scratch, chunk_rows=rows)
    with CsvAppender(ctx.public / "train.csv") as train:
        for frame in parts.frames("train"):
            train.write(frame)
    with (CsvAppender(ctx.public / "test.csv") as test, CsvAppender(ctx.private / "test.csv") as answers,
          CsvAppender(ctx.public / "sample_submission.csv") as sample):
        for frame in parts.frames("test"):
            answers.write(frame)
            public = frame.drop(columns=["Tags"])
            test.write(public)
            sample.write(public.assign(Tags=SAMPLE_TAGS))
