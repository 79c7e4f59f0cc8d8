"""The one validation path every submission goes through before a metric sees it.

:func:`validate_submission` reads a submission CSV, checks it against the competition's
:class:`~mle_env.competition.spec.SubmissionSpec` and the answers, and returns the targets aligned row
by row with the answers. Anything wrong raises :class:`InvalidSubmission` with a one-line reason that
says what to fix; the grader turns it into ``valid_submission=false``. Nothing else escapes: a file
that is missing, huge, binary, not a CSV, empty, or has wrong columns, rows, ids or values is an
invalid submission, never an exception out of ``grade``.

A plainly well-formed file is read typed first (:mod:`~mle_env.grading.typed_read`), which gives the values
the text path would, bit for bit; any other file, and every malformed one, is read as text, chunk by chunk,
so that the reason can name the column, value and rows at fault.
"""

from __future__ import annotations

import csv
import io
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.spec import SubmissionSpec
from mle_env.grading.typed_read import KEY_SEPARATOR, TypedSubmission, read_typed

MAX_SUBMISSION_BYTES_ENV = "MLE_ENV_MAX_SUBMISSION_MB"
_MIN_SIZE_LIMIT = 100 * 2**20
_ROW_SUM_TOLERANCE = 1e-6
_MAX_ROW_MESSAGE = 3
MAX_REASON = 300
_MAX_VALUE_CHARS = 40
#: the longest header row read, in characters; a longer first line is refused unparsed
MAX_HEADER_CHARS = 2**20
#: the CSV is parsed in chunks of at most this many cells and about this many bytes
_CHUNK_CELLS = 2**19
_CHUNK_BYTES = 8 * 2**20


class InvalidSubmission(Exception):
    """A submission the grader cannot score; ``reason`` is one line saying what to fix, at most
    :data:`MAX_REASON` characters (values from the submission are quoted cut to a few dozen)."""

    def __init__(self, reason: str) -> None:
        self.reason = cap_reason(reason)
        super().__init__(self.reason)


def cap_reason(reason: str, limit: int = MAX_REASON) -> str:
    """``reason`` on one line (whitespace runs collapsed), cut to ``limit`` characters with "..."."""
    text = " ".join(str(reason)[: 4 * limit].split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _show(value: object, limit: int = _MAX_VALUE_CHARS) -> str:
    """A value from the submission as the reason quotes it: its repr, cut to ``limit`` characters."""
    text = repr(value) if not isinstance(value, str) or len(value) <= 4 * limit else repr(value[: 4 * limit])
    if len(text) <= limit:
        return text
    size = f" ({len(value):,} characters)" if isinstance(value, str) else ""
    return text[: limit - 3] + "..." + size


@dataclass(frozen=True)
class AlignedSubmission:
    """Targets of a valid submission, in the answers' row order."""

    y_true: np.ndarray
    y_pred: np.ndarray
    target_columns: tuple[str, ...]


def size_limit(answers_path: Path) -> int:
    """Largest submission accepted, in bytes: ``$MLE_ENV_MAX_SUBMISSION_MB`` MiB if set, else the larger
    of 100 MiB and 20 times the answers file."""
    value = os.environ.get(MAX_SUBMISSION_BYTES_ENV)
    if value:
        return int(float(value) * 2**20)
    return max(_MIN_SIZE_LIMIT, 20 * answers_path.stat().st_size)


def read_answers(path: Path, spec: SubmissionSpec) -> pd.DataFrame:
    """Read the answers file; ids (and text targets) are kept as text, so '007' and '7' stay different
    and a literal 'NA' stays the string 'NA'."""
    if spec.kind == "text":
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    return pd.read_csv(path, dtype=dict.fromkeys(spec.id_columns, str), keep_default_na=False, na_values=[""])


def check_answers(
    answers: pd.DataFrame, spec: SubmissionSpec, targets: tuple[str, ...], metric_columns: tuple[str, ...] = ()
) -> None:
    """Check that the answers have the id column(s), the answer columns, the columns the metric reads
    (``metric_columns``) and at least one row.

    Raises:
        ValueError: what is missing (the grader reports it as damaged prepared data).
    """
    needed = [*spec.id_columns, *(spec.answer_columns or targets), *metric_columns]
    missing = [c for c in needed if c not in answers.columns]
    if missing:
        raise ValueError(f"no column(s) {', '.join(map(repr, missing[:_MAX_ROW_MESSAGE]))}")
    if answers.empty:
        raise ValueError("no rows")


def target_columns(spec: SubmissionSpec, sample_submission: pd.DataFrame | None) -> tuple[str, ...]:
    """The columns a submission must fill: the spec's list, or the sample submission's other columns."""
    if spec.target_columns is not None:
        return spec.target_columns
    if sample_submission is None:
        raise ValueError("the spec lists no target_columns and there is no sample submission to read them from")
    skip = {*spec.id_columns, *spec.extra_columns}
    return tuple(c for c in sample_submission.columns if c not in skip)


def validate_submission(
    path: Path, spec: SubmissionSpec, answers: pd.DataFrame, targets: tuple[str, ...], max_bytes: int
) -> AlignedSubmission:
    """Check the submission at ``path`` and align it with ``answers``.

    Raises:
        InvalidSubmission: with a one-line reason, for every way a submission can be malformed.
    """
    header = check_file(path, spec, targets, max_bytes)
    ids = list(spec.id_columns)
    typed = _read_typed(Path(path), header, spec, targets, answers[ids])
    order: np.ndarray | None
    if typed is not None:
        order = typed.order
        predictions = _check_typed_targets(typed.targets, targets, spec)
    else:
        frame = _read_csv(Path(path), spec, targets, len(answers), len(header))
        order = _align_ids(frame[ids], answers[ids], spec.unique_ids, spec.allow_extra_ids)
        predictions = _convert_targets(frame.loc[:, list(targets)], spec).to_numpy()
    if spec.rows_sum_to_one:
        _check_rows_sum_to_one(predictions)
    # np.take gathers rows several times faster than fancy indexing; rows already in order are not copied
    y_pred = predictions if order is None else np.take(predictions, order, axis=0)
    answer_cols = list(spec.answer_columns or targets)
    y_true = answers.loc[:, answer_cols].to_numpy()
    if y_pred.shape[1] == 1:
        y_pred = y_pred[:, 0]
    if y_true.shape[1] == 1:
        y_true = y_true[:, 0]
    return AlignedSubmission(y_true=y_true, y_pred=y_pred, target_columns=targets)


# --- reading -----------------------------------------------------------------------------------------
def max_columns(expected: int) -> int:
    """The widest header read further, for ``expected`` columns: max(2 x expected, expected + 100)."""
    return max(2 * expected, expected + 100)


def check_file(path: Path, spec: SubmissionSpec, targets: tuple[str, ...], max_bytes: int) -> list[str]:
    """The checks that need no parsing: the file is a regular, non-empty ``.csv`` of at most ``max_bytes``
    bytes, not binary, and its header row (at most :data:`MAX_HEADER_CHARS` characters, read alone) is UTF-8,
    has no repeated column and at most :func:`max_columns` columns. Reads at most about 1 MiB of the file.

    Returns:
        The header row's fields.

    Raises:
        InvalidSubmission: with a one-line reason.
    """
    path = Path(path)
    if path.is_symlink():
        raise InvalidSubmission(f"{path.name} is a symbolic link; write a regular CSV file")
    if not path.is_file():
        raise InvalidSubmission(f"there is no submission file at {path}")
    if path.suffix.lower() != ".csv":
        raise InvalidSubmission(f"{path.name} is not a .csv file; write the submission as CSV")
    size = path.stat().st_size
    if size > max_bytes:
        raise InvalidSubmission(
            f"the submission is {size / 2**20:.1f} MiB, over the {max_bytes / 2**20:.0f} MiB limit; "
            "write only the id and target columns"
        )
    if size == 0:
        raise InvalidSubmission("the submission file is empty; write a header row and one row per test id")
    with path.open("rb") as f:
        head = f.read(8192)
    if b"\x00" in head:
        raise InvalidSubmission("the submission is binary, not a CSV text file")
    header = _header(path)
    expected = list(dict.fromkeys([*spec.id_columns, *targets, *spec.extra_columns]))
    if len(header) > max_columns(len(expected)):
        raise InvalidSubmission(
            f"the header has {len(header):,} columns but {len(expected)} are expected "
            f"({', '.join(map(_show, expected[:4]))}{' ...' if len(expected) > 4 else ''}); "
            "write only the id and target columns"
        )
    duplicated = sorted(c for c, n in Counter(header).items() if n > 1)
    if duplicated:
        raise InvalidSubmission(f"the header repeats column(s) {', '.join(map(_show, duplicated[:_MAX_ROW_MESSAGE]))}")
    return header


def _header(path: Path) -> list[str]:
    try:
        with path.open(encoding="utf-8", newline="") as f:
            first = f.readline(MAX_HEADER_CHARS + 1)
    except UnicodeDecodeError:
        raise InvalidSubmission("the submission is not UTF-8 text; save it as a UTF-8 CSV") from None
    if len(first) > MAX_HEADER_CHARS:
        raise InvalidSubmission(
            f"the header row is over {MAX_HEADER_CHARS:,} characters long; write only the id and target columns"
        )
    try:
        return next(csv.reader(io.StringIO(first)), [])
    except csv.Error as e:
        raise InvalidSubmission(f"the header row is not valid CSV ({e})") from None


def _read_csv(path: Path, spec: SubmissionSpec, targets: tuple[str, ...], rows: int, width: int) -> pd.DataFrame:
    """The submission as text (every column ``str``), checked for its columns and, unless ids beyond the
    test set are allowed, for having exactly ``rows`` rows.

    Parsed in chunks (:func:`_chunk_rows`; ``width``: the header's field count), which are kept only while
    the frame can still be valid: rows beyond ``rows``, or any rows after a column problem, are counted and
    dropped, so a huge file costs one chunk of memory. The whole file is still parsed, so the reason is the
    one a whole read gives: a parse error anywhere first, then the columns, then the count. (Only a file
    both not UTF-8 and malformed may be told the one before the other in another order: pandas meets them
    chunk by chunk either way.)
    """
    try:
        kept, total, columns = _parse_chunks(path, spec, targets, rows, width)
    except UnicodeDecodeError:
        raise InvalidSubmission("the submission is not UTF-8 text; save it as a UTF-8 CSV") from None
    except pd.errors.EmptyDataError:
        raise InvalidSubmission("the submission has no columns; write a header row and one row per test id") from None
    except (pd.errors.ParserError, csv.Error, ValueError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if "out of memory" in first:  # the tokenizer's allocation failed: a limit, not a malformed file
            raise MemoryError(first) from None
        raise InvalidSubmission(f"the submission is not a well-formed CSV ({first})") from None
    _check_columns(columns, spec, targets)
    if total != rows and not spec.allow_extra_ids:
        raise InvalidSubmission(
            f"the submission has {total} rows but the test set has {rows}; write one row per test id"
        )
    return kept[0] if len(kept) == 1 else pd.concat(kept)


def _parse_chunks(
    path: Path, spec: SubmissionSpec, targets: tuple[str, ...], rows: int, width: int
) -> tuple[list[pd.DataFrame], int, list[str]]:
    """(the chunks kept, the number of data rows, the columns), as :func:`_read_csv` describes."""
    kept: list[pd.DataFrame] = []
    total, columns, keep = 0, None, True
    reader = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8",
                         chunksize=_chunk_rows(path, width))
    with reader:
        for chunk in reader:
            if columns is None:
                columns = list(chunk.columns)
                keep = _columns_problem(columns, spec, targets) is None
            total += len(chunk)
            keep = keep and (spec.allow_extra_ids or total <= rows)
            if keep:
                kept.append(chunk)
            else:
                kept.clear()
    if columns is None:  # no chunk at all: the frame a whole read gives, with its columns and no rows
        empty = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8", nrows=0)
        kept, columns = [empty], list(empty.columns)
    return kept, total, columns


def _read_typed(
    path: Path, header: list[str], spec: SubmissionSpec, targets: tuple[str, ...], answer_ids: pd.DataFrame
) -> TypedSubmission | None:
    """The typed first reading (:mod:`~mle_env.grading.typed_read`), where it can apply: the header holds the
    right columns, and the ids are the answers' exactly once each (no extra ids allowed, no repeats)."""
    if not spec.unique_ids or spec.allow_extra_ids or _columns_problem(header, spec, targets) is not None:
        return None
    return read_typed(path, header, spec.id_columns, targets, spec.kind not in ("text", "label"), answer_ids)


# --- columns and ids ---------------------------------------------------------------------------------
def _chunk_rows(path: Path, width: int) -> int:
    """Rows per chunk: about :data:`_CHUNK_BYTES` bytes by the row length of the file's first MiB, and at
    most :data:`_CHUNK_CELLS` cells of ``width`` columns (a file of under 8 MiB is usually one chunk)."""
    with path.open("rb") as f:
        sample = f.read(2**20)
    row_bytes = len(sample) / max(1, sample.count(b"\n"))
    return max(1, min(int(_CHUNK_BYTES / row_bytes), _CHUNK_CELLS // max(1, width)))


def _check_columns(present: list[str], spec: SubmissionSpec, targets: tuple[str, ...]) -> None:
    problem = _columns_problem(present, spec, targets)
    if problem is not None:
        raise InvalidSubmission(problem)


def _columns_problem(present: list[str], spec: SubmissionSpec, targets: tuple[str, ...]) -> str | None:
    """Why the columns ``present`` are not the submission's, or None when they are."""
    required = [*spec.id_columns, *targets]
    missing = [c for c in required if c not in present]
    if missing:
        hint = ""
        lower = {c.lower(): c for c in present}
        near = [f"{_show(lower[m.lower()])} for {_show(m)}" for m in missing if m.lower() in lower]
        if near:
            hint = f" (found {', '.join(near)}: column names are case-sensitive)"
        shown = ", ".join(map(_show, missing[:_MAX_ROW_MESSAGE])) + (" ..." if len(missing) > _MAX_ROW_MESSAGE else "")
        return f"missing {len(missing)} column(s): {shown}{hint}; the sample submission shows the expected header"
    allowed = set(required) | set(spec.extra_columns)
    extra = [c for c in present if c not in allowed]
    if extra:
        return (
            f"unexpected column(s) {', '.join(map(_show, extra[:_MAX_ROW_MESSAGE]))}; keep only "
            f"{', '.join(map(_show, required[:4]))}{' ...' if len(required) > 4 else ''}"
        )
    return None


def _canonical_number(value: str) -> str | None:
    try:
        number = float(value)
    except ValueError:
        return None
    if not np.isfinite(number):
        return None
    return str(int(number)) if number.is_integer() else repr(number)


def _canonical_ids(ids: pd.Series) -> pd.Series | None:
    """Ids written as numbers, canonicalised (so '7.0' matches '7'); None if any id is not a number."""
    converted = ids.map(_canonical_number)
    return None if converted.isna().any() else converted


def _same_ids(have: pd.Series, want: pd.Series, superset: bool) -> bool:
    """Whether the submission's ids are the answers' (as a multiset; a superset of them with ``superset``)."""
    if superset:
        return bool(_isin(want, have).all())
    if len(have) != len(want):
        return False
    if have.is_unique and want.is_unique:  # the usual case, twice as fast as counting
        return bool(_isin(want, have).all())
    have_n, want_n = have.value_counts(sort=False), want.value_counts(sort=False)
    return len(have_n) == len(want_n) and bool(have_n.reindex(want_n.index).eq(want_n).all())


def _isin(values: pd.Series, pool: pd.Series) -> np.ndarray:
    """``values.isin(pool)`` as a bool array. Two Arrow-backed string columns are compared in Arrow: pandas'
    isin would first make a Python string of every value of ``pool`` (several times the column's bytes)."""
    if isinstance(values.dtype, pd.StringDtype) and isinstance(pool.dtype, pd.StringDtype) \
            and values.dtype.storage == pool.dtype.storage == "pyarrow":
        import pyarrow as pa  # there, since the columns are stored in it
        import pyarrow.compute as pc

        left, right = pa.array(values.array), pa.array(pool.array)
        if left.type != right.type:
            right = right.cast(left.type)
        return np.asarray(pc.is_in(left, value_set=right).fill_null(False), dtype=bool)
    return values.isin(pool).to_numpy()


def _keys(submitted: pd.DataFrame, expected: pd.DataFrame, superset: bool) -> tuple[pd.Series, pd.Series, bool]:
    """One text key per row (the id columns joined), for the submission and the answers, and whether they
    are known to be the same multiset already. A column whose ids are numbers on both sides is canonicalised
    (so '7.0' matches '7') when only that makes them match."""
    sub_parts, ans_parts, same = [], [], True
    for column in expected.columns:
        have = submitted[column].astype(str).reset_index(drop=True)
        want = expected[column].astype(str).reset_index(drop=True)
        empty = have.index[have.str.strip() == ""]
        if len(empty):
            which = "" if len(expected.columns) == 1 else f" ({_show(column)})"
            raise InvalidSubmission(f"{len(empty)} row(s) have an empty id{which} (first at data row {empty[0] + 1})")
        column_same = _same_ids(have, want, superset)
        if not column_same:
            left, right = _canonical_ids(have), _canonical_ids(want)
            if left is not None and right is not None and _same_ids(left, right, superset):
                have, want, column_same = left, right, True
        same = same and column_same
        sub_parts.append(have)
        ans_parts.append(want)
    # the columns each matching does not make their combinations match
    return _joined(sub_parts), _joined(ans_parts), same and len(expected.columns) == 1 and not superset


def _joined(parts: list[pd.Series]) -> pd.Series:
    return parts[0].str.cat(parts[1:], sep=KEY_SEPARATOR) if len(parts) > 1 else parts[0]


def _show_key(key: str) -> str:
    return _show(key.replace(KEY_SEPARATOR, ", ")) if KEY_SEPARATOR in key else _show(key)


def _align_ids(submitted: pd.DataFrame, expected: pd.DataFrame, unique: bool, superset: bool = False) -> np.ndarray:
    """Row indices into the submission, in the answers' order; raises on missing/duplicate/unknown ids.

    The id is the tuple of the id columns. With ``superset``, submission rows whose id is not a test id
    are ignored. Repeated ids (``unique`` false) pair the k-th occurrence in the submission with the k-th
    in the answers, in order of appearance.
    """
    keys, expected_keys, same = _keys(submitted, expected, superset)
    rows = np.arange(len(keys))
    if same and unique and expected_keys.is_unique:  # nothing missing, unknown or repeated: just reorder
        position = pd.Series(rows, index=keys.to_numpy())
        return position.loc[expected_keys.to_numpy()].to_numpy()
    if superset:  # keep only the rows whose id is a test id; their positions map back to the submission
        keep = _isin(keys, expected_keys)
        rows, keys = rows[keep], keys[keep].reset_index(drop=True)
    if unique:
        dupes = keys[keys.duplicated()]
        if len(dupes):
            raise InvalidSubmission(
                f"{len(dupes)} duplicate id(s), e.g. {_show_key(dupes.iloc[0])}; write each test id exactly once"
            )
    # counted with pandas (hashing in C): a Counter over 100k pandas strings costs half a second
    have, want = keys.value_counts(sort=False), expected_keys.value_counts(sort=False)
    extra = have - want.reindex(have.index, fill_value=0)  # by id, in order of first appearance
    short = want - have.reindex(want.index, fill_value=0)
    unknown, missing = extra[extra > 0], short[short > 0]
    if len(unknown) or len(missing):
        parts = []
        if len(missing):
            parts.append(f"{int(missing.sum())} test id(s) are missing, e.g. {_show_key(missing.index[0])}")
        if len(unknown):
            parts.append(f"{int(unknown.sum())} id(s) are not test ids, e.g. {_show_key(unknown.index[0])}")
        raise InvalidSubmission("; ".join(parts) + "; take the ids from the sample submission")
    if unique:
        position = pd.Series(np.arange(len(keys)), index=keys.to_numpy())
        return rows[position.loc[expected_keys.to_numpy()].to_numpy()]
    # repeated ids: pair the k-th occurrence in the submission with the k-th in the answers
    sub_order = np.argsort(keys.to_numpy(), kind="stable")
    ans_order = np.argsort(expected_keys.to_numpy(), kind="stable")
    order = np.empty(len(expected_keys), dtype=np.int64)
    order[ans_order] = sub_order
    return rows[order]


# --- values ------------------------------------------------------------------------------------------
def _first_rows(mask: np.ndarray) -> str:
    rows = np.flatnonzero(mask)[:_MAX_ROW_MESSAGE] + 1
    return ", ".join(str(r) for r in rows) + (" ..." if mask.sum() > _MAX_ROW_MESSAGE else "")


def _convert_targets(frame: pd.DataFrame, spec: SubmissionSpec) -> pd.DataFrame:
    if spec.kind == "text":
        return frame
    if spec.kind == "label":
        for col in frame.columns:
            _check_labels(col, frame[col].to_numpy(), spec)
        return frame
    out = {}
    for col in frame.columns:
        raw = frame[col]
        empty = (raw.str.strip() == "").to_numpy()
        if empty.any():
            raise InvalidSubmission(
                f"column '{col}' has {int(empty.sum())} empty cell(s) (data rows {_first_rows(empty)})"
            )
        values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
        nan_text = raw.str.strip().str.lower().isin(["nan", "-nan", "+nan"]).to_numpy()
        not_number = np.isnan(values) & ~nan_text
        if not_number.any():
            raise InvalidSubmission(
                f"column {_show(col)} must be numeric but holds {_show(raw.to_numpy()[not_number][0])} "
                f"(data rows {_first_rows(not_number)})"
            )
        if nan_text.any():
            raise InvalidSubmission(
                f"column '{col}' holds NaN (data rows {_first_rows(nan_text)}); every cell needs a number"
            )
        infinite = np.isinf(values)
        if infinite.any():
            raise InvalidSubmission(f"column '{col}' holds infinity (data rows {_first_rows(infinite)})")
        _check_range(col, values, spec)
        out[col] = values
    return pd.DataFrame(out, index=frame.index)


def _check_typed_targets(values: np.ndarray, targets: tuple[str, ...], spec: SubmissionSpec) -> np.ndarray:
    """``values`` (rows, ``targets``) after the checks of :func:`_convert_targets` that a typed reading still
    needs: labels allowed, numbers in range (they are finite numbers already)."""
    for j, col in enumerate(targets):
        if spec.kind == "label":
            _check_labels(col, values[:, j], spec)
        elif spec.kind != "text":
            _check_range(col, values[:, j], spec)
    return values


def _check_labels(col: str, values: np.ndarray, spec: SubmissionSpec) -> None:
    allowed = {str(v) for v in spec.allowed_values or ()}
    bad = ~pd.Series(values).isin(allowed).to_numpy()
    if bad.any():
        raise InvalidSubmission(
            f"column {_show(col)}: {_show(values[bad][0])} is not an allowed label (data rows {_first_rows(bad)}); "
            f"allowed: {', '.join(sorted(allowed)[:8])}{' ...' if len(allowed) > 8 else ''}"
        )


def _check_range(col: str, values: np.ndarray, spec: SubmissionSpec) -> None:
    low, high = spec.value_range if spec.value_range is not None else (-np.inf, np.inf)
    if spec.kind == "probability":
        low, high = max(low, 0.0), min(high, 1.0)
    outside = (values < low) | (values > high)
    if outside.any():
        what = "probabilities" if spec.kind == "probability" else "values"
        raise InvalidSubmission(
            f"column '{col}' holds {values[outside][0]:g}, outside [{low:g}, {high:g}] "
            f"(data rows {_first_rows(outside)}); {what} must lie in that range"
        )
    if spec.kind == "integer":
        fractional = values != np.round(values)
        if fractional.any():
            raise InvalidSubmission(
                f"column '{col}' must hold whole numbers but holds {values[fractional][0]:g} "
                f"(data rows {_first_rows(fractional)})"
            )
    if spec.allowed_values is not None:
        allowed = np.asarray([float(v) for v in spec.allowed_values])
        bad = ~np.isin(values, allowed)
        if bad.any():
            raise InvalidSubmission(
                f"column '{col}' holds {values[bad][0]:g}, which is not one of "
                f"{', '.join(f'{v:g}' for v in allowed[:8])} (data rows {_first_rows(bad)})"
            )


def _check_rows_sum_to_one(predictions: np.ndarray) -> None:
    sums = predictions.sum(axis=1)
    off = ~np.isclose(sums, 1.0, atol=_ROW_SUM_TOLERANCE)
    if off.any():
        raise InvalidSubmission(
            f"class probabilities must sum to 1 in every row, but data row {int(np.flatnonzero(off)[0]) + 1} "
            f"sums to {sums[off][0]:.6g}"
        )
