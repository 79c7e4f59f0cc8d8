"""Validating an agent's submission is bounded: a hostile file costs the host little, and only in a child.

The red team's files: 100 MiB of short unique rows (17 s and ~1.1 GiB of host RSS before) and a 9.9 MB
file whose header has 1M columns (60 s and ~1 GiB, the whole CSV parsed before the header was looked at).
Now the header is read alone and an absurd width refused before anything is parsed; the rest is parsed in
chunks, in a forked child with a memory and a time limit, whose failure is an invalid verdict. Timings are
never asserted: memory is, as the growth of this process's peak RSS, and through the child's limit.
"""

from __future__ import annotations

import base64
import os
import resource
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import raw_dir

from mle_env.competition.registry import get_spec
from mle_env.grading import bounded
from mle_env.grading import validation as validation_module
from mle_env.grading.bounded import Limits
from mle_env.grading.grader import Grader
from mle_env.grading.validation import InvalidSubmission
from mle_env.prepare.runner import prepare

MiB = 2**20


@pytest.fixture
def tiny(make_competition: Callable[..., Path], home: Path) -> Grader:
    folder = make_competition()
    prepare("tiny-comp", raw_dir=raw_dir(folder))
    return Grader(get_spec("tiny-comp"))


def good(grader: Grader, path: Path) -> Path:
    answers = grader.answers
    pd.DataFrame({"id": answers["id"], "target": np.linspace(0.1, 0.9, len(answers))}).to_csv(path, index=False)
    return path


def wide(path: Path, columns: int, rows: int = 1) -> Path:
    names = ["id", "target", *(f"c{i}" for i in range(1, columns - 1))]
    path.write_text(",".join(names) + "\n" + (",".join(["0"] * columns) + "\n") * rows)
    return path


def unique_rows(path: Path, size: int) -> Path:
    """Short unique rows (``u<hex>,0``), none a test id, up to just under ``size`` bytes."""
    with path.open("w") as f:
        f.write("id,target\n")
        written, start, block = 10, 0, 100_000
        while written < size - 16 * block:
            text = "".join(f"u{j:x},0\n" for j in range(start, start + block))
            f.write(text)
            written, start = written + len(text), start + block
    return path


def peak_growth(fn: Callable[[], object]) -> tuple[object, float]:
    """``fn()`` and how much this process's peak RSS rose during it, in MiB. The peak is reset first
    (``/proc/self/clear_refs``); where that is refused, growth above an earlier peak is all that shows."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = fn()
    return result, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024


def one_line(reason: str) -> bool:
    return bool(reason) and "\n" not in reason and len(reason) <= validation_module.MAX_REASON


# --- the header is read first ------------------------------------------------------------------------
def test_a_wide_header_is_refused_unparsed_with_a_one_line_reason(
    tiny: Grader, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    forked: list[object] = []
    real = bounded.run_bounded
    monkeypatch.setattr("mle_env.grading.grader.run_bounded", lambda *a, **k: forked.append(1) or real(*a, **k))
    huge = wide(tmp_path / "huge.csv", 1_000_000)  # the red team's file: a 6.9 MB header line
    assert 9e6 < huge.stat().st_size < 11e6
    reason, grown = peak_growth(lambda: tiny.validate(huge))
    assert one_line(reason) and "header row is over 1,048,576 characters" in reason, reason
    assert grown < 200, f"the host process grew by {grown:.0f} MiB"
    within = wide(tmp_path / "within.csv", 120_000, rows=20)  # a header under 1 MiB, still far too wide
    reason, grown = peak_growth(lambda: tiny.validate(within))
    assert reason == ("the header has 120,000 columns but 2 are expected ('id', 'target'); "
                      "write only the id and target columns")
    assert grown < 200, f"the host process grew by {grown:.0f} MiB"
    report = tiny.grade(within)
    assert report.status == "invalid" and report.invalid_reason == reason
    assert not forked, "a refused header must not cost a child"


def test_a_header_a_little_wider_than_expected_is_still_read_for_its_columns(tiny: Grader, tmp_path: Path) -> None:
    assert validation_module.max_columns(2) == 102
    reason = tiny.validate(wide(tmp_path / "w.csv", 102, rows=len(tiny.answers)))
    assert reason.startswith("unexpected column(s) 'c1', 'c2', 'c3'"), reason
    assert tiny.validate(wide(tmp_path / "w.csv", 103)).startswith("the header has 103 columns but 2")


# --- the child's limits ------------------------------------------------------------------------------
def test_a_file_that_needs_more_than_the_childs_memory_is_invalid_and_the_host_goes_on(
    tiny: Grader, tmp_path: Path
) -> None:
    rows = len(tiny.answers)
    heavy = tmp_path / "heavy.csv"  # one row per test id, each id 3 MB: parsing it takes several times that
    heavy.write_text("id,target\n" + "".join(f"{'y' * 3 * MiB}{i},0.5\n" for i in range(rows)))
    tiny.limits = Limits(min_memory=8 * MiB, memory_per_byte=0.0)
    verdict = tiny.validate(heavy)
    assert one_line(verdict), verdict
    assert "could not be checked within the grader's limits (it needed over 8 MiB" in verdict, verdict
    report = tiny.grade(heavy)
    assert report.status == "invalid" and not report.valid_submission and report.invalid_reason == verdict
    assert tiny.validate(good(tiny, tmp_path / "ok.csv")) == "valid"  # the limit bounds that file only
    tiny.limits = Limits()
    assert "are not test ids" in tiny.validate(heavy)  # within the default limits it is simply wrong


def test_a_child_out_of_time_or_killed_gives_an_invalid_verdict_not_an_exception(
    tiny: Grader, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = good(tiny, tmp_path / "s.csv")
    tiny.validate(path)  # warm: the parent scores the sample once, unpatched
    tiny.limits = Limits(seconds=1.0, seconds_per_mib=0.0)
    monkeypatch.setattr(tiny, "score", lambda aligned: time.sleep(60))  # in the child only
    verdict = tiny.validate(path)
    assert one_line(verdict) and "within the grader's limits (it ran for over 1 s)" in verdict, verdict
    monkeypatch.setattr(tiny, "score", lambda aligned: os.kill(os.getpid(), signal.SIGSEGV))
    verdict = tiny.validate(path)
    assert "killed by SIGSEGV" in verdict, verdict
    assert tiny.grade(path).status == "invalid"
    monkeypatch.setattr(tiny, "score", lambda aligned: {}["no such key"])  # a bug, not the agent's doing
    assert "this is not your error" in tiny.validate(path)
    assert tiny.grade(path).status == "grader_error"
    monkeypatch.undo()
    assert tiny.validate(path) == "valid"


@pytest.mark.slow
def test_the_100_mib_file_of_unique_rows_costs_the_host_little(tiny: Grader, tmp_path: Path) -> None:
    path = unique_rows(tmp_path / "unique.csv", tiny.max_bytes - 1024)
    size = path.stat().st_size
    assert size > 99 * MiB
    # the child may add only twice the file's size, and needs no more to count the rows
    tiny.limits = Limits(min_memory=2 * size, memory_per_byte=0.0)
    reason, grown = peak_growth(lambda: tiny.validate(path))
    assert reason.endswith(f"rows but the test set has {len(tiny.answers)}; write one row per test id"), reason
    assert grown < 200, f"the host process grew by {grown:.0f} MiB (the old code: ~1.1 GiB)"


# --- fidelity ----------------------------------------------------------------------------------------
@pytest.mark.slow
def test_verdicts_are_the_in_process_ones_and_do_not_depend_on_the_chunking(
    tiny: Grader, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every case of the validation corpus gets the reason it gets when checked in this process in one
    chunk (as the whole-file read did), also when parsed a few rows at a time."""
    from grading.test_validation import corpus

    (tmp_path / "corpus").mkdir()
    cases = corpus(tiny, tmp_path / "corpus")
    cases["valid"] = (good(tiny, tmp_path / "valid.csv"), "")

    def in_process(path: Path) -> str:
        try:
            tiny.score(tiny.check(path))
        except InvalidSubmission as e:
            return e.reason
        return "valid"

    whole = {name: in_process(path) for name, (path, _) in cases.items()}
    assert whole["valid"] == "valid" and sum(v != "valid" for v in whole.values()) == len(cases) - 1
    for name, (path, _) in cases.items():
        assert tiny.validate(path) == whole[name], name
    monkeypatch.setattr(validation_module, "_CHUNK_BYTES", 16)  # a row or two per chunk
    for name, (path, _) in cases.items():
        assert in_process(path) == whole[name], name


# --- one at a time -----------------------------------------------------------------------------------
def test_one_grader_runs_one_validation_at_a_time(
    tiny: Grader, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = good(tiny, tmp_path / "s.csv")
    tiny.validate(path)  # warm
    log = tmp_path / "log"
    real_score = tiny.score

    def logged(aligned: object) -> float:  # runs in the children: they append to one file
        with log.open("a") as f:
            f.write("start\n")
        time.sleep(0.3)
        with log.open("a") as f:
            f.write("end\n")
        return real_score(aligned)  # type: ignore[arg-type]

    monkeypatch.setattr(tiny, "score", logged)
    threads = [threading.Thread(target=tiny.validate, args=(path,)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert log.read_text().split() == ["start", "end"] * 3


# --- through the endpoint and the env ----------------------------------------------------------------
def test_the_endpoint_answers_a_hostile_upload_with_a_verdict(tiny: Grader, tmp_path: Path) -> None:
    from mle_env.sandbox.endpoint import INVALID_PREFIX, ValidationEndpoint

    endpoint = ValidationEndpoint(tiny.validate, tiny.max_bytes)
    data = wide(tmp_path / "w.csv", 120_000).read_bytes()
    try:
        for start in range(0, len(data), MiB):
            chunk = base64.b64encode(data[start:start + MiB]).decode()
            assert endpoint({"event": "validate", "vid": 1, "chunk": chunk}) is None
        reply = endpoint({"event": "validate", "vid": 1, "end": True})
    finally:
        endpoint.close()
    assert reply is not None and reply["result"].startswith(INVALID_PREFIX + "the header has 120,000 columns")


def test_a_hostile_file_in_the_sandbox_is_validated_and_the_episode_goes_on(open_env) -> None:
    from hostile import python, still_works

    env = open_env()
    python(env, "import os\nos.makedirs('submission', exist_ok=True)\n"
                "names = ['id', 'target'] + [f'c{i}' for i in range(1, 999_999)]\n"
                "open('submission/submission.csv', 'w').write(','.join(names) + '\\n')")
    obs, _, terminated, truncated, _ = env.step({"type": "validate"})
    assert not (terminated or truncated)
    assert "header row is over" in obs["message"], obs["message"]
    still_works(env)
