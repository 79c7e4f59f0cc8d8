"""Run-length encoded (RLE) binary masks, as Kaggle's segmentation competitions write them.

A mask is a text of "start length" pairs separated by whitespace. Starts are 1-based indices into the
image's pixels taken in one order: ``"F"`` (column-major: down the first column, then the next one, the
Kaggle default) or ``"C"`` (row-major: along the first row, then the next one). An empty text, ``"-"``,
None or NaN is the empty mask.

A valid text has an even number of tokens, all decimal integers, every start and length at least 1,
starts in increasing order, no two runs sharing a pixel (touching runs are fine) and no run past the
last pixel. Anything else raises :class:`InvalidPrediction` with one line saying what is wrong.

The metrics work on runs (:func:`parse_column`, :func:`intersections`), never on dense masks, so a
gigapixel image costs memory and time in proportion to its number of runs, not its pixels.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mle_env.grading.metrics.registry import InvalidPrediction

ORDERS = ("F", "C")
EMPTY_TEXTS = ("", "-")

_SPACES = bytes(i for i in range(128) if chr(i).isspace())  # str.split()'s ASCII whitespace, \x1c-\x1f too
_PLAIN = b"0123456789" + _SPACES
_TO_BLANK = bytes.maketrans(_SPACES, b" " * len(_SPACES))
_PLAIN_LIMIT = 10**18  # every number of up to 18 digits is below it, and below int64's maximum
_BATCH_CHARACTERS = 2**25  # of RLE text read at once by _plain_column: its temporaries stay near 100 MiB


def is_empty(value: Any) -> bool:
    """Whether a cell means the empty mask: None, NaN, "" or "-" (surrounding whitespace ignored)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    return isinstance(value, str) and value.strip() in EMPTY_TEXTS


def _numbers(tokens: list[str]) -> np.ndarray:
    """The tokens as int64 (Python's int() rules, as MLE-bench's decoder reads them)."""
    try:
        return np.array(tokens, dtype=np.int64)
    except (ValueError, OverflowError):
        for token in tokens:
            try:
                np.array([token], dtype=np.int64)
            except (ValueError, OverflowError):
                raise InvalidPrediction(f"an RLE mask holds whole numbers only, not {token[:20]!r}") from None
        raise


def _plain_numbers(text: str) -> np.ndarray | None:
    """The tokens of ``text`` as int64 if it is only ASCII digits and whitespace, else None.

    Whenever it returns an array, that is ``np.array(text.split(), dtype=np.int64)``, several times
    faster (no Python object per token). None (a sign, an underscore, a non-ASCII digit, a number of
    10**18 or more...) leaves the text to that slower reading, which knows all of int()'s rules.
    """
    batch = _plain_batch([text], np.array([len(text)], dtype=np.int64))
    return None if batch is None else batch[0]


def parse_runs(value: Any, n_pixels: int) -> tuple[np.ndarray, np.ndarray]:
    """Validated runs of an RLE cell in an image of ``n_pixels``: 0-based ``(starts, ends)``, ends exclusive.

    Both are sorted int64 arrays; runs never share a pixel. Raises :class:`InvalidPrediction` for a
    malformed text (see the module docstring), or a cell that is not text.
    """
    if is_empty(value):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if not isinstance(value, str):
        raise InvalidPrediction(f"an RLE mask must be text, not {type(value).__name__} {value!r}")
    tokens = value.split()
    if len(tokens) % 2:
        raise InvalidPrediction(
            f"an RLE mask needs 'start length' pairs, but it has an odd number of tokens ({len(tokens)})")
    numbers = _numbers(tokens)
    starts, lengths = numbers[0::2], numbers[1::2]
    if (starts <= 0).any() or (lengths <= 0).any():
        pair = int(np.argmax((starts <= 0) | (lengths <= 0)))
        raise InvalidPrediction(f"RLE starts and lengths must be positive, but pair {pair + 1} is "
                                f"'{starts[pair]} {lengths[pair]}'")
    if len(starts) > 1:
        step = np.diff(starts)
        if (step < 0).any():
            pair = int(np.argmax(step < 0)) + 1
            raise InvalidPrediction(f"RLE starts must be sorted, but pair {pair + 1} starts at {starts[pair]}, "
                                    f"before pair {pair}'s {starts[pair - 1]}")
    if (starts > n_pixels).any() or (lengths > n_pixels).any():
        raise InvalidPrediction(f"an RLE run goes past the image's last pixel {n_pixels}")
    starts = starts - 1
    ends = starts + lengths
    if len(starts) > 1:
        clash = starts[1:] < ends[:-1]
        if clash.any():
            pair = int(np.argmax(clash)) + 1
            raise InvalidPrediction(f"RLE runs must not overlap, but pair {pair + 1} (start {starts[pair] + 1}) begins "
                                    f"inside pair {pair}, which covers pixels {starts[pair - 1] + 1}-{ends[pair - 1]}")
    if len(ends) and ends[-1] > n_pixels:
        raise InvalidPrediction(f"an RLE run ends at pixel {ends[-1]}, past the image's last pixel {n_pixels}")
    return starts, ends


@dataclass(frozen=True)
class RunTable:
    """The runs of a column of RLE cells, one image per row, laid end to end.

    Row ``i``'s pixels are ``offsets[i] .. offsets[i + 1] - 1``; ``starts``/``ends`` (exclusive) are
    positions on that common line, sorted and disjoint, and ``rows`` says which row each run is in.
    """

    starts: np.ndarray
    ends: np.ndarray
    rows: np.ndarray
    offsets: np.ndarray

    @property
    def n_rows(self) -> int:
        return len(self.offsets) - 1

    def areas(self) -> np.ndarray:
        """Pixels in each row's mask (int64)."""
        return np.bincount(self.rows, weights=self.ends - self.starts, minlength=self.n_rows).astype(np.int64)


def parse_column(
    values: Any, n_pixels: Any, where: Callable[[int], str] = lambda i: f"row {i + 1}"
) -> RunTable:
    """Parse a column of RLE cells, row ``i`` an image of ``n_pixels[i]`` pixels (or one size for all).

    All rows are validated and converted at once (a few numpy passes over every token), about the cost
    of reading the text. A malformed cell raises :class:`InvalidPrediction` "<where(i)>: <reason>" for the
    first bad row ``i``.
    """
    values = list(np.ravel(np.asarray(values, dtype=object)))
    n_rows = len(values)
    sizes = np.broadcast_to(np.asarray(n_pixels, dtype=np.int64), (n_rows,))
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    plain = _plain_column(values)
    if plain is not None:  # every cell plain digits and whitespace (or empty): read a batch of cells at once
        numbers, tokens = plain
        odd = np.flatnonzero(tokens % 2)
        if len(odd):
            _raise_for_row(values[int(odd[0])], int(sizes[odd[0]]), where(int(odd[0])))
        numbers, counts = numbers.reshape(-1, 2), tokens // 2
    else:
        cells: list[np.ndarray | list[str]] = []
        for i, value in enumerate(values):
            cell = _read_cell(value)
            if cell is None or len(cell) % 2:
                _raise_for_row(value, int(sizes[i]), where(i))
            cells.append(cell)
        counts = np.fromiter((len(cell) // 2 for cell in cells), np.int64, n_rows)
        try:  # row by row: faster than one list of every token
            parts = [np.array(cell, dtype=np.int64) if isinstance(cell, list) else cell for cell in cells]
            numbers = (np.concatenate(parts) if parts else np.zeros(0, np.int64)).reshape(-1, 2)
        except (ValueError, OverflowError):
            numbers = None
    rows = np.repeat(np.arange(n_rows, dtype=np.int64), counts)
    if numbers is not None:
        starts, lengths = numbers[:, 0], numbers[:, 1]
        limit = sizes[rows]
        bad = (starts <= 0) | (lengths <= 0) | (starts > limit) | (lengths > limit)
        ends = starts - 1 + lengths
        same = rows[1:] == rows[:-1]
        bad[1:] |= same & (starts[1:] - 1 < ends[:-1])  # unsorted or overlapping
        bad |= ends > limit
        if not bad.any():
            base = offsets[rows]
            return RunTable(starts - 1 + base, ends + base, rows, offsets)
        first = int(rows[np.argmax(bad)])
    else:
        first = next(i for i, cell in enumerate(cells) if isinstance(cell, list) and _is_bad_numbers(cell))
    _raise_for_row(values[first], int(sizes[first]), where(first))
    raise AssertionError("unreachable: the vectorised check and parse_runs disagree")


def _plain_column(values: list[Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """The numbers of all the cells (int64, end to end) and each cell's number of tokens, if every cell is
    empty (:func:`is_empty`) or text of ASCII digits and whitespace only, every number under 10**18; else
    None. What :func:`_plain_numbers` gives cell by cell, without its cost per cell (uw-madison: 35,000
    cells). Cells are read in batches of about ``_BATCH_CHARACTERS``, a newline between two cells."""
    texts: list[str] = []
    for value in values:
        if is_empty(value):
            texts.append("")
        elif isinstance(value, str):
            texts.append(value)
        else:
            return None
    lengths = np.fromiter(map(len, texts), np.int64, len(texts))
    ends = np.cumsum(lengths + 1)
    cuts = np.unique(np.searchsorted(ends, np.arange(_BATCH_CHARACTERS, int(ends[-1]) if len(ends) else 0,
                                                         _BATCH_CHARACTERS), side="right"))
    numbers, tokens = [], []
    for first, stop in zip([0, *cuts], [*cuts, len(texts)], strict=True):
        if first == stop:
            continue
        batch = _plain_batch(texts[first:stop], lengths[first:stop])
        if batch is None:
            return None
        numbers.append(batch[0])
        tokens.append(batch[1])
    if not tokens:
        return np.zeros(0, np.int64), np.zeros(len(texts), np.int64)
    return np.concatenate(numbers), np.concatenate(tokens)


def _plain_batch(texts: list[str], lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_plain_column` for one batch of text cells of these ``lengths``, read as one text, a newline
    between two cells. numpy's separator matching knows C's whitespace, not \\x1c-\\x1f, so all of
    str.split()'s whitespace is made a space first."""
    joined = "\n".join(texts)
    if not joined.isascii():
        return None
    raw = joined.encode("ascii")
    if raw.translate(None, _PLAIN):
        return None
    blanked = raw.translate(_TO_BLANK)
    digit = np.frombuffer(blanked, np.uint8) != ord(" ")
    token_starts = np.flatnonzero(digit[1:] > digit[:-1]) + 1
    if len(digit) and digit[0]:
        token_starts = np.concatenate(([0], token_starts))
    cell_starts = np.cumsum(lengths + 1) - lengths - 1
    tokens = np.diff(np.searchsorted(token_starts, np.append(cell_starts, len(raw))))
    if not len(token_starts):
        return np.zeros(0, np.int64), tokens
    numbers = np.fromstring(blanked, dtype=np.int64, sep=" ")
    # a number past int64 reads as int64's maximum (strtol saturates): the limit sends the column the slow way
    if len(numbers) != len(token_starts) or (numbers >= _PLAIN_LIMIT).any():
        return None
    return numbers, tokens


def _read_cell(value: Any) -> np.ndarray | list[str] | None:
    """A cell's numbers (int64) if plainly written, else its tokens (``[]`` if empty); None if not text."""
    if is_empty(value):
        return []
    if not isinstance(value, str):
        return None
    numbers = _plain_numbers(value)
    return value.split() if numbers is None else numbers


def _is_bad_numbers(tokens: list[str]) -> bool:
    try:
        np.array(tokens, dtype=np.int64)
    except (ValueError, OverflowError):
        return True
    return False


def _raise_for_row(value: Any, n_pixels: int, where: str) -> None:
    try:
        parse_runs(value, n_pixels)
    except InvalidPrediction as e:
        raise InvalidPrediction(f"{where}: {e}") from None


def intersections(a: RunTable, b: RunTable) -> np.ndarray:
    """Pixels each row's masks in ``a`` and ``b`` share (the two tables on the same rows and sizes)."""
    overlap = _overlap(a.starts, a.ends, b.starts, b.ends)
    return np.bincount(a.rows, weights=overlap, minlength=a.n_rows).astype(np.int64)


def _check(shape: tuple[int, int], order: str) -> int:
    if order not in ORDERS:
        raise ValueError(f"order must be 'F' (column-major) or 'C' (row-major), not {order!r}")
    height, width = (int(v) for v in shape)
    if height < 0 or width < 0:
        raise ValueError(f"an image shape is (height, width) >= 0, not {shape}")
    return height * width


def decode_rle(text: str, shape: tuple[int, int], order: str = "F") -> np.ndarray:
    """The boolean mask of ``shape`` = (height, width) that ``text`` encodes in pixel order ``order``.

    Raises :class:`InvalidPrediction` for a malformed text. Costs one byte per pixel (plus the mask).
    """
    n_pixels = _check(shape, order)
    starts, ends = parse_runs(text, n_pixels)
    steps = np.zeros(n_pixels + 1, dtype=np.int8)
    steps[starts] += 1
    steps[ends] -= 1  # a run may end where the next starts: the two assignments add up to 0 there
    np.cumsum(steps, out=steps)
    return steps[:n_pixels].view(bool).reshape(tuple(int(v) for v in shape), order=order).copy()


def encode_rle(mask: np.ndarray, order: str = "F") -> str:
    """The RLE text of a 2-D mask (nonzero = in the mask) in pixel order ``order``; "" for an empty mask."""
    mask = np.asarray(mask)
    if mask.ndim != 2:
        raise ValueError(f"encode_rle needs a 2-D mask, not shape {mask.shape}")
    _check(mask.shape, order)
    flat = np.ravel(mask, order=order).astype(bool)
    edges = np.flatnonzero(np.diff(np.concatenate(([False], flat, [False])).view(np.int8)))
    starts, ends = edges[0::2], edges[1::2]
    pairs = np.empty(2 * len(starts), dtype=np.int64)
    pairs[0::2], pairs[1::2] = starts + 1, ends - starts
    return " ".join(map(str, pairs.tolist()))


def area(runs: tuple[np.ndarray, np.ndarray]) -> int:
    """Number of pixels the runs cover."""
    starts, ends = runs
    return int((ends - starts).sum())


def intersection(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> int:
    """Number of pixels two run lists (from :func:`parse_runs`, same pixel order) share."""
    return int(_overlap(a[0], a[1], b[0], b[1]).sum())


def _overlap(a_starts: np.ndarray, a_ends: np.ndarray, b_starts: np.ndarray, b_ends: np.ndarray) -> np.ndarray:
    """For each run of ``a``, the pixels it shares with the runs of ``b`` (both sorted and disjoint).

    With ``cover(x)`` = pixels of ``b`` before position ``x``, that is ``cover(end) - cover(start)``: one
    binary search per run, O((n + m) log m), no pixel array.
    """
    if not len(a_starts) or not len(b_starts):
        return np.zeros(len(a_starts), np.int64)
    lengths = b_ends - b_starts
    before = np.concatenate(([0], np.cumsum(lengths)[:-1]))

    def cover(x: np.ndarray) -> np.ndarray:
        k = np.searchsorted(b_starts, x, side="right") - 1
        inside = k >= 0
        k = np.maximum(k, 0)
        return np.where(inside, before[k] + np.minimum(x - b_starts[k], lengths[k]), 0)

    return cover(a_ends) - cover(a_starts)
