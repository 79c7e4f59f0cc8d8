"""A typed, all-or-nothing first reading of a plainly well-formed submission, with Arrow's CSV reader.

The text path of :mod:`mle_env.grading.validation` reads every cell as text, so that it can say which cell
of a malformed file is wrong; on a valid file of millions of rows that costs 10-40 times a typed read.
:func:`read_typed` is tried first. It answers only when the file is plainly well-formed: UTF-8 with no
quote character, no lone carriage return, no byte-order mark and no blank line, one line per answer row
(counted before anything is parsed), every row as wide as the header, the
numeric targets finite numbers (no negative zero), and the ids exactly the answers' ids, each once.
Anything else returns None, and the text path reads the file again and words the reason. So this module
gives no verdict of its own: it accepts a subset of what the text path accepts, with the same values
(Arrow and ``pandas.to_numeric`` both round decimal text correctly, bit for bit;
tests/grading/test_typed_read.py checks both on random and hostile text).
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

#: joins the id columns of one row into one key (as the text path's alignment does)
KEY_SEPARATOR = "\x1f"
#: bytes of the file counted at a time
_SCAN_BYTES = 16 * 2**20


@dataclass(frozen=True)
class TypedSubmission:
    """A submission read by :func:`read_typed`.

    Attributes:
        order: row indices into the submission, in the answers' row order; None when the file's rows are
            already in that order (the sample's order, the usual case).
        targets: the target columns in the spec's order, one row per row of the file in its order: float64
            when read as numbers, else ``str`` objects.
    """

    order: np.ndarray | None
    targets: np.ndarray


def read_typed(
    path: Path, header: list[str], id_columns: tuple[str, ...], targets: tuple[str, ...], numeric: bool,
    answer_ids: pd.DataFrame,
) -> TypedSubmission | None:
    """The submission at ``path`` read typed and aligned with ``answer_ids`` (the answers' id columns, as
    text), or None when the file is not plainly well-formed (see the module's docstring).

    ``header`` is the file's header row, already checked to hold the id and target columns and no others
    but the spec's extra ones; those are read as text (so that they are checked as UTF-8) and dropped.
    ``numeric``: read the targets as float64, else as text.
    """
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pa_csv
    except ImportError:  # pragma: no cover - pandas' string columns already need pyarrow here
        return None
    try:
        with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            # counted before anything is parsed: a file of the wrong length costs no table in memory
            if _data_lines(data) != len(answer_ids):
                return None
    except (OSError, ValueError):  # emptied or replaced since it was checked: the text path says what it is
        return None
    column_types = {c: pa.string() for c in header}
    column_types.update(dict.fromkeys(targets, pa.float64() if numeric else pa.string()))
    try:
        table = pa_csv.read_csv(
            str(path),
            parse_options=pa_csv.ParseOptions(quote_char=False, double_quote=False, escape_char=False,
                                              newlines_in_values=False, ignore_empty_lines=True),
            convert_options=pa_csv.ConvertOptions(column_types=column_types, null_values=[],
                                                  strings_can_be_null=False, check_utf8=True),
        )
    except (OSError, pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    if table.column_names != header or table.num_rows != len(answer_ids):
        return None
    aligned, order = _align(table, answer_ids, pa, pc)
    if not aligned:
        return None
    values = np.empty((table.num_rows, len(targets)), dtype=np.float64 if numeric else object)
    for j, name in enumerate(targets):  # chunk by chunk into place: Arrow's columns are not joined first
        at = 0
        for chunk in table[name].chunks:
            values[at:at + len(chunk), j] = chunk.to_numpy(zero_copy_only=False)
            at += len(chunk)
    # non-finite text and "-0" (pandas reads the integer 0) are left to the text path
    if numeric and (not np.isfinite(values).all() or np.signbit(values[values == 0]).any()):
        return None
    return TypedSubmission(order=order, targets=values)


def _data_lines(data: mmap.mmap) -> int | None:
    """The lines after the header, the last one ended or not, or None unless the text is plain: no byte-order
    mark, no quote character, no carriage return but in CRLF line ends (text both readers split into the same
    fields). A blank line counts as a line, so a file with one is left to the text path (which skips it, as
    pandas does)."""
    if data[:3] == b"\xef\xbb\xbf" or data.find(b'"') != -1:
        return None
    view = np.frombuffer(data, dtype=np.uint8)  # no copy; gone when this returns, so the mapping can close
    newlines, returns = 0, data.find(b"\r") != -1
    for at in range(0, len(view), _SCAN_BYTES):
        chunk = view[at:at + _SCAN_BYTES]
        newlines += int(np.count_nonzero(chunk == ord("\n")))
        if returns:
            after = np.flatnonzero(chunk == ord("\r")) + at + 1
            if len(after) and (after[-1] == len(view) or (view[after] != ord("\n")).any()):
                return None
    return newlines - (1 if data[-1:] == b"\n" else 0)


def _align(table, answer_ids: pd.DataFrame, pa, pc) -> tuple[bool, np.ndarray | None]:  # noqa: ANN001 - pyarrow
    """(whether the submission's ids are exactly the answers', each once and none blank, the submission row
    for each answer row: None when it is the same row)."""
    sub_parts, answer_parts = [], []
    for name in answer_ids.columns:
        column = table[name]  # chunked as read: joining the chunks would copy every id
        # empty or whitespace only (Arrow's whitespace is the text path's strip()): the text path words those
        if pc.any(pc.or_(pc.equal(column, ""), pc.utf8_is_space(column))).as_py():
            return False, None
        answers = pa.array(answer_ids[name].astype(str).array)
        sub_parts.append(column)
        answer_parts.append(answers if answers.type == column.type else answers.cast(column.type))
    sub_keys, answer_keys = (parts[0] if len(parts) == 1 else pc.binary_join_element_wise(*parts, KEY_SEPARATOR)
                             for parts in (sub_parts, answer_parts))
    n = len(answer_keys)
    if pc.all(pc.equal(sub_keys, answer_keys)).as_py():  # the sample's order, kept: the usual case
        return True, None
    position = pc.index_in(answer_keys, value_set=sub_keys.combine_chunks())
    if position.null_count:
        return False, None
    order = position.to_numpy().astype(np.int64)
    seen = np.zeros(n, dtype=bool)
    seen[order] = True
    # n answer rows onto n submission rows, each hit: a permutation, so the ids are unique on both sides
    return (True, order) if seen.all() else (False, None)
