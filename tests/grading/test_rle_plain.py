"""RLE's fast reading of plain cells (ASCII digits and whitespace) against the reading it shortcuts:
every cell, random or hostile, gives the same numbers, the same RunTable or the same error message."""

from __future__ import annotations

import random

import numpy as np
import pytest

from mle_env.grading import rle
from mle_env.grading.metrics import InvalidPrediction

# str.split()'s whitespace, ASCII (\x1c-\x1f included) and not, and characters int() reads or rejects
SEPARATORS = [" ", "  ", "\t", "\n", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0", "\u3000"]
HOSTILE = ["+5", "-5", "-0", "1_000", "1__0", "_1", "\u0663", "\uff15", "\uff11\uff12", "1e3", "0x10", "1.0", "nan",
           "-", "\x00", "a", "9" * 18, "9" * 19, "1" + "0" * 18, "9223372036854775807", "9223372036854775808",
           "0" * 25 + "7", "0" * 30, "1" * 40, "0", "00", "007", "12\u0663"]


def _slow(text: str) -> np.ndarray:
    return np.array(text.split(), dtype=np.int64)


def _cell(rng: random.Random, n_pixels: int) -> str:
    """A cell of mostly sensible runs, some padded with zeros, now and then one hostile token."""
    tokens: list[str] = []
    position = 0
    for _ in range(rng.randrange(6)):
        start = position + rng.randrange(-2, 6)
        length = rng.randrange(-1, 8)
        position = start + max(length, 0)
        tokens += [str(start), str(length)]
    tokens = [("0" * rng.choice([0, 0, 3, 20]) + t) if t.isdigit() else t for t in tokens]
    if rng.random() < 0.3 and tokens:
        tokens[rng.randrange(len(tokens))] = rng.choice(HOSTILE)
    if rng.random() < 0.1:
        tokens.insert(rng.randrange(len(tokens) + 1), rng.choice(HOSTILE))
    if rng.random() < 0.1 and tokens:
        tokens.pop()
    if rng.random() < 0.05:
        tokens = [str(rng.randrange(n_pixels - 2, n_pixels + 3)) for _ in range(2)]
    seps = rng.choice([[" "], SEPARATORS[:11], SEPARATORS])
    text = "".join(rng.choice(seps) + t for t in tokens)
    return rng.choice(["", " ", "\x1c"]) + text.lstrip(" ") + rng.choice(["", "\n", "\x1f"])


def _outcome(column: list[object], n_pixels: object) -> tuple[str, ...]:
    try:
        table = rle.parse_column(column, n_pixels)
    except InvalidPrediction as e:
        return ("error", str(e))
    return ("table", *(repr(a.tolist()) for a in (table.starts, table.ends, table.rows, table.offsets)))


def test_str_split_whitespace_is_the_one_read() -> None:
    ascii_space = {chr(i) for i in range(128) if f"1{chr(i)}2".split() == ["1", "2"]}
    assert ascii_space == set(rle._SPACES.decode())


def test_plain_numbers_equal_int_or_step_aside() -> None:
    rng = random.Random(7)
    cells = [*HOSTILE, "", " ", "\x1c", " \t\n", "1 2", "0001\x1c02\x1f3\x0b4", "999999999999999999 1",
             "1\x002", "1 2\xa03"]
    cells += [_cell(rng, 50) for _ in range(3000)]
    cells += [" ".join(rng.choice(HOSTILE) for _ in range(rng.randrange(1, 5))) for _ in range(500)]
    used = 0
    for cell in cells:
        fast = rle._plain_numbers(cell)
        try:
            slow = _slow(cell)
        except (ValueError, OverflowError):
            assert fast is None, cell
            continue
        if fast is not None:
            used += 1
            assert fast.dtype == np.int64 and fast.tolist() == slow.tolist(), cell
    assert used > 1000  # the fast reading did take the plain cells
    assert rle._plain_numbers("0001\x1c02\x1f3\x0b4\r\n5\x0c6").tolist() == [1, 2, 3, 4, 5, 6]
    assert rle._plain_numbers("999999999999999999 " + "0" * 30 + "12").tolist() == [10**18 - 1, 12]
    for stepped_aside in ("+5", "1_000", "\uff15", "1 2\xa03", "1" + "0" * 18, "9" * 19, "9223372036854775807"):
        assert rle._plain_numbers(stepped_aside) is None


@pytest.mark.parametrize("seed", range(4))
def test_parse_column_is_the_same_without_the_fast_reading(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    columns: list[tuple[list[object], object]] = []
    for _ in range(400):
        n_rows = rng.randrange(5)
        sizes = [rng.randrange(1, 60) for _ in range(n_rows)]
        n_pixels: object = sizes if rng.random() < 0.5 else 50
        size = sizes if isinstance(n_pixels, list) else [50] * n_rows
        column: list[object] = [_cell(rng, s) for s in size]
        if n_rows and rng.random() < 0.1:
            column[rng.randrange(n_rows)] = rng.choice([None, float("nan"), "-", 7, 1.5, " - "])
        columns.append((column, n_pixels))
    batched = [_outcome(column, n_pixels) for column, n_pixels in columns]
    with monkeypatch.context() as m:  # batches of a few characters: cells cut into many batches
        m.setattr(rle, "_BATCH_CHARACTERS", 7)
        assert [_outcome(column, n_pixels) for column, n_pixels in columns] == batched
    monkeypatch.setattr(rle, "_plain_column", lambda values: None)
    fast = [_outcome(column, n_pixels) for column, n_pixels in columns]
    monkeypatch.setattr(rle, "_plain_numbers", lambda text: None)
    slow = [_outcome(column, n_pixels) for column, n_pixels in columns]
    assert batched == fast == slow
    assert sum(o[0] == "table" for o in fast) > 40 and sum(o[0] == "error" for o in fast) > 40


def test_a_column_of_plain_cells_is_read_in_batches() -> None:
    column = ["1 2 5 1", "", "-", None, "3\x1c4", "  ", "0007 1\n9 2"]
    numbers, tokens = rle._plain_column(column)
    assert numbers.tolist() == [1, 2, 5, 1, 3, 4, 7, 1, 9, 2] and tokens.tolist() == [4, 0, 0, 0, 2, 0, 4]
    for stepped_aside in (["1 2", 3], ["1 2", "+1 2"], ["1 2", "9" * 19 + " 1"], ["1 2\xa03 4"]):
        assert rle._plain_column(stepped_aside) is None
