"""A random train/test split of a CSV too large to hold in memory, equal to the in-memory split.

``train_test_split(frame, ...)`` depends only on the number of rows: it permutes ``range(n)``. So the split
is computed on row numbers and the rows are streamed, in three passes over bounded pieces:

1. read the CSV in chunks to count the rows (after ``exclude``) and to learn each column's type over the
   whole file (a column that is integer in one chunk and has a blank in another is float, as pandas infers
   it when reading the whole file);
2. split ``range(n)`` exactly as the in-memory split does, then read the chunks again (with those types) and
   append each row, tagged with its rank in its part's output order, to the bucket of ranks it falls in
   (pickled frames in scratch: types survive unchanged);
3. yield each part bucket by bucket, sorted by rank.

Peak memory is a few chunks plus about 20 bytes per row while the split is drawn (5 bytes per row after:
the part and rank of every row), whatever the width of the rows.
Output order is the split's (shuffled) order, or the raw order with ``keep_order``. The values equal the
in-memory split's for every column whose type pandas infers the same way chunk by chunk; a column mixing
numbers and text in different parts of the file is read as text, so such cells keep their raw spelling.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mle_env.prepare.progress import progress
from mle_env.prepare.tables import CsvAppender, read_csv, split

DEFAULT_CHUNK_ROWS = 200_000
#: split_csv streams a raw CSV larger than this (unless told otherwise with chunk_rows)
STREAM_ABOVE_BYTES = 256 * 2**20


@dataclass(frozen=True)
class ChunkedSplit:
    """The two parts of a streamed split; iterate each once with :meth:`frames`."""

    folder: Path
    columns: tuple[str, ...]
    sizes: dict[str, int]
    buckets: dict[str, int]

    def frames(self, part: str) -> Iterator[pd.DataFrame]:
        """The rows of ``part`` ("train" or "test") in output order, one bucket at a time (at least one frame,
        possibly empty, so a writer always writes a header)."""
        if self.buckets[part] == 0:
            yield pd.DataFrame(columns=list(self.columns))
        for b in range(self.buckets[part]):
            path = self.folder / f"{part}-{b}.pkl"
            pieces = []
            with open(path, "rb") as f:
                while True:
                    try:
                        pieces.append(pickle.load(f))
                    except EOFError:
                        break
            path.unlink()
            frame = pd.concat(pieces)
            yield frame.sort_values("__rank__", kind="stable").drop(columns="__rank__").reset_index(drop=True)


def _chunks(path: Path, chunk_rows: int, exclude: str | None, **kwargs: Any) -> Iterator[pd.DataFrame]:
    with read_csv(path, chunksize=chunk_rows, **kwargs) as reader:
        for chunk in reader:
            yield chunk.drop(chunk.query(exclude).index) if exclude else chunk


def _unified_dtypes(seen: dict[str, set[str]]) -> dict[str, Any]:
    """The type to force on each column whose inferred type differs between chunks."""
    forced: dict[str, Any] = {}
    for column, kinds in seen.items():
        if len(kinds) < 2:
            continue
        numeric = all(np.dtype(k).kind in "iuf" for k in kinds)
        forced[column] = "float64" if numeric else str
    return forced


def split_chunks(
    path: Path, test_size: float | int, random_state: int, *, scratch: Path, chunk_rows: int = DEFAULT_CHUNK_ROWS,
    keep_order: bool = False, exclude: str | None = None,
) -> ChunkedSplit:
    """Split the CSV at ``path`` as ``train_test_split(read_csv(path), test_size, random_state)`` does
    (see the module docstring); ``exclude`` is a pandas query whose rows are removed first."""
    seen: dict[str, set[str]] = {}
    n = 0
    with progress(f"scanning {path.name} (rows)", None) as advance:
        for chunk in _chunks(path, chunk_rows, exclude):
            n += len(chunk)
            for column, dtype in chunk.dtypes.items():
                seen.setdefault(str(column), set()).add(str(dtype))
            advance(len(chunk))
    columns = tuple(seen) or tuple(read_csv(path, nrows=0).columns)
    index_type = np.int32 if n < 2**31 else np.int64  # row numbers only: half the memory of int64
    train_rows, test_rows = split(np.arange(n, dtype=index_type), test_size, random_state)
    part = np.zeros(n, dtype=np.int8)
    part[test_rows] = 1
    rank = np.empty(n, dtype=index_type)
    for rows in (train_rows, test_rows):
        rank[np.sort(rows) if keep_order else rows] = np.arange(len(rows))
    del train_rows, test_rows
    folder = scratch / f"chunked-{path.name}"
    folder.mkdir(parents=True, exist_ok=True)
    names = ("train", "test")
    sizes = {name: int((part == p).sum()) for p, name in enumerate(names)}
    start = 0
    with progress(f"splitting {path.name}", n) as advance:
        for chunk in _chunks(path, chunk_rows, exclude, dtype=_unified_dtypes(seen)):
            rows = np.arange(start, start + len(chunk))
            start += len(chunk)
            chunk = chunk.reset_index(drop=True).assign(__rank__=rank[rows])
            for p, name in enumerate(names):
                mine = chunk[part[rows] == p]
                for b, piece in mine.groupby(mine["__rank__"].to_numpy() // chunk_rows, sort=True):
                    with open(folder / f"{name}-{b}.pkl", "ab") as f:
                        pickle.dump(piece, f, protocol=pickle.HIGHEST_PROTOCOL)
            advance(len(chunk))
    buckets = {name: -(-sizes[name] // chunk_rows) for name in names}
    return ChunkedSplit(folder, columns, sizes, buckets)


def partition_csv(
    path: Path, outputs: list[Path], assign: Any, *, chunk_rows: int = DEFAULT_CHUNK_ROWS, **read_kwargs: Any
) -> list[int]:
    """Stream the CSV at ``path`` into the CSVs ``outputs`` without holding it in memory: ``assign(chunk)``
    gives, per row of a chunk, the index of its output (-1 drops the row). Rows keep the raw order; every
    output gets the header, even with no row; column types are unified over the whole file first (pass 1,
    as in :func:`split_chunks`), so the written cells equal a filter of the whole file read at once (e.g.
    ``frame[frame[key].isin(keys)]``). Returns the number of rows written to each output."""

    seen: dict[str, set[str]] = {}
    for chunk in _chunks(path, chunk_rows, None, **read_kwargs):
        for column, dtype in chunk.dtypes.items():
            seen.setdefault(str(column), set()).add(str(dtype))
    header = pd.DataFrame(columns=list(seen) or list(read_csv(path, nrows=0, **read_kwargs).columns))
    counts = [0] * len(outputs)
    writers = [CsvAppender(out) for out in outputs]
    try:
        with progress(f"partitioning {path.name}", None) as advance:
            for chunk in _chunks(path, chunk_rows, None, dtype=_unified_dtypes(seen), **read_kwargs):
                where = np.asarray(assign(chunk))
                for k, writer in enumerate(writers):
                    mine = chunk[where == k]
                    if len(mine) or writer.file is None:
                        writer.write(mine)
                    counts[k] += len(mine)
                advance(len(chunk))
        for writer in writers:
            if writer.file is None:
                writer.write(header)
    finally:
        for writer in writers:
            writer.__exit__()
    return counts
