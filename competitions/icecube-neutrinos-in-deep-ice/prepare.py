"""Whole batches go to train or test, as MLE-bench splits them: ``train_test_split`` over the distinct
``batch_id`` of ``train_meta.parquet`` in order of appearance (test_size 0.1, random_state 0), events in raw
order. The batch files are placed unchanged in ``train/`` or ``test/``; ``test_meta.parquet`` drops the two
angles, which go to ``private/test.csv`` (event_id, azimuth, zenith).

The metadata holds one row per event (about 132 million at full size), so it is streamed record batch by
record batch: two passes over the file (the batch ids, then the rows), each holding one record batch at a
time, with the parquet and CSV outputs written as they come. Needs pyarrow.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from mle_env.errors import PrepareError, PrerequisiteError
from mle_env.prepare.helpers import CsvAppender, PrepareContext, copy_files, find_raw, raw_folder, split

ANGLES = ["azimuth", "zenith"]
#: rows per record batch read from the metadata
CHUNK_ROWS = 1_000_000


def _arrow() -> tuple[Any, Any, Any]:
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq
    except ImportError as e:
        raise PrerequisiteError(f"this competition's parquet files need pyarrow ({e}): pip install pyarrow") from e
    return pa, pc, pq


def batch_number(path: Path) -> int:
    """``batch_12.parquet`` -> 12."""
    return int(path.stem.split("_")[-1])


def prepare(ctx: PrepareContext) -> None:
    pa, pc, pq = _arrow()
    # without pre-buffering: with it, pyarrow keeps what it has read until the file is closed
    meta = pq.ParquetFile(find_raw(ctx, "train_meta.parquet"), pre_buffer=False)
    seen: dict[int, None] = {}
    for chunk in meta.iter_batches(batch_size=CHUNK_ROWS, columns=["batch_id"]):
        seen.update(dict.fromkeys(pc.unique(chunk.column(0)).to_pylist()))
    _, test_ids = split(np.array(list(seen), dtype=np.int64), 0.1, random_state=0)
    test_set = pa.array(sorted(int(b) for b in test_ids), type=pa.int64())

    # the source's pandas metadata (its index, its row count) would not describe the parts
    schema = meta.schema_arrow.remove_metadata()
    test_schema = pa.schema([f for f in schema if f.name not in ANGLES])
    with (pq.ParquetWriter(ctx.public / "train_meta.parquet", schema) as train_out,
          pq.ParquetWriter(ctx.public / "test_meta.parquet", test_schema) as test_out,
          CsvAppender(ctx.private / "test.csv") as answers,
          CsvAppender(ctx.public / "sample_submission.csv") as sample):
        for chunk in meta.iter_batches(batch_size=CHUNK_ROWS):
            table = pa.Table.from_batches([chunk]).replace_schema_metadata(None)
            in_test = pc.is_in(pc.cast(table.column("batch_id"), pa.int64()), value_set=test_set)
            train_out.write_table(table.filter(pc.invert(in_test)))
            test = table.filter(in_test)
            test_out.write_table(test.select(test_schema.names))
            truth = test.select(["event_id", *ANGLES]).to_pandas()
            answers.write(truth)
            sample.write(truth.assign(azimuth=1, zenith=1))
    copy_files(["sensor_geometry.csv"], ctx.raw, ctx.public, ctx.may_link(ctx.raw))

    source = raw_folder(ctx, "train")
    files = {batch_number(p): p.name for p in sorted(source.glob("*.parquet"))}
    picked = set(test_set.to_pylist())
    missing = sorted(set(seen) - set(files))
    if missing:
        raise PrepareError(f"train/ holds no file for batch(es) {missing[:5]} of train_meta.parquet")
    link = ctx.may_link(source)
    copy_files([files[b] for b in seen if b not in picked], source, ctx.public / "train", link)
    copy_files([files[b] for b in seen if b in picked], source, ctx.public / "test", link)
