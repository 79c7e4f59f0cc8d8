"""The chunked parse gives the verdicts a whole-file read gives: the same reason for every malformed file
(parse errors anywhere before columns before the row count), the same aligned values for a valid one."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mle_env.competition.spec import SubmissionSpec
from mle_env.grading import validation
from mle_env.grading.validation import InvalidSubmission, validate_submission

ANSWERS = pd.DataFrame({"id": ["a", "b", "c", "7"], "y": ["0.1", "0.2", "0.3", "0.4"]})
SPEC = SubmissionSpec(id_column="id", kind="number", answers="a.csv", sample_submission="s.csv")
PIECES = ["a", "b", "c", "7", "7.0", "0.5", "x", ",", ",", "\n", "\n", "\r\n", '"', " ", "", "NA", "1e3", "nan"]


def verdict(path: Path, chunk_bytes: int, monkeypatch: pytest.MonkeyPatch, spec: SubmissionSpec = SPEC) -> object:
    monkeypatch.setattr(validation, "_CHUNK_BYTES", chunk_bytes)
    try:
        return validate_submission(path, spec, ANSWERS, ("y",), 10**6).y_pred.tolist()
    except InvalidSubmission as e:
        return e.reason


@pytest.mark.parametrize("allow_extra_ids", [False, True])
def test_random_csvs_get_the_same_verdict_whole_or_a_row_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, allow_extra_ids: bool
) -> None:
    spec = SubmissionSpec(id_column="id", kind="number", answers="a.csv", sample_submission="s.csv",
                          allow_extra_ids=allow_extra_ids)
    rnd = random.Random(0)
    path = tmp_path / "s.csv"
    kinds = set()
    for _ in range(200):
        rows = [f"{rnd.choice(['a', 'b', 'c', '7', 'x'])},{rnd.random():.2f}" for _ in range(rnd.randint(0, 6))]
        noise = "".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 4)))
        position = rnd.randint(0, len(rows))
        path.write_text("id,y\n" + "\n".join(rows[:position] + [noise] + rows[position:]) + "\n")
        whole = verdict(path, 2**30, monkeypatch, spec)
        assert verdict(path, 1, monkeypatch, spec) == whole, path.read_text()
        kinds.add(whole.split(" ")[0] if isinstance(whole, str) else "valid")
    assert {"valid", "the"} <= kinds and len(kinds) >= 4, kinds  # the corpus reaches several reasons


def test_a_parse_error_after_the_rows_run_out_still_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.csv"
    path.write_text("id,y\n" + "".join(f"u{i},0.5\n" for i in range(50)) + "z,1,2\n")
    for chunk in (1, 2**30):
        assert "not a well-formed CSV (Error tokenizing data. C error: Expected 2 fields in line 52, saw 3)" in \
            verdict(path, chunk, monkeypatch)
    path.write_text("id,q\n" + "".join(f"u{i},0.5\n" for i in range(50)))
    assert verdict(path, 1, monkeypatch).startswith("missing 1 column(s): 'y'")
    path.write_text("id,y\n" + "".join(f"u{i},0.5\n" for i in range(50)))
    assert verdict(path, 1, monkeypatch).startswith("the submission has 50 rows but the test set has 4")


def test_rows_per_chunk_follow_the_row_length_and_the_width(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text("id,y\n" + "a,0.5\n" * 1000)
    assert validation._chunk_rows(path, 2) == validation._CHUNK_CELLS // 2  # short rows: by cells
    path.write_text("id,y\n" + f"{'y' * 2**20},0.5\n" * 3)  # rows of a MiB: a few per chunk
    assert validation._chunk_rows(path, 2) <= 8
    path.write_text("id,y\n" + "a,0.5\n" * 10)
    assert validation._chunk_rows(path, 10_000) == validation._CHUNK_CELLS // 10_000


def test_a_valid_file_in_many_chunks_aligns_as_in_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.csv"
    path.write_text("id,y\n7,4\nc,3\nb,2\na,1\n")
    assert verdict(path, 1, monkeypatch) == verdict(path, 2**30, monkeypatch) == [1.0, 2.0, 3.0, 4.0]
    assert np.array_equal(verdict(path, 1, monkeypatch), [1, 2, 3, 4])
