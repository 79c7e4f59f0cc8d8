"""The pinned child that scores reference solutions: its stderr can be as long as it likes without the
parent and the child waiting for each other, and a failure ends in one error that quotes its end."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from mle_env.errors import MleEnvError
from mle_env.reference import _run_pinned

NOISY_CHILD = """#!/bin/sh
# a megabyte of stderr (far more than a pipe holds) before any stdout
head -c 1048576 /dev/zero | tr '\\000' x >&2
echo first
echo last
exit {code}
"""


def _run_with_deadline(args: list[str], seconds: float) -> list[str] | BaseException:
    outcome: list = []

    def run() -> None:
        try:
            outcome.append(_run_pinned(args, lambda _line: None))
        except BaseException as e:  # noqa: BLE001 - handed to the test
            outcome.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the parent and the child are waiting for each other"
    return outcome[0]


@pytest.mark.parametrize("code", [0, 3])
def test_a_child_that_floods_stderr_neither_hangs_nor_loses_its_output(tmp_path: Path, code: int,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    child = tmp_path / "python"
    child.write_text(NOISY_CHILD.format(code=code))
    child.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(child))
    outcome = _run_with_deadline(["score", "anything"], seconds=60)
    if code == 0:
        assert outcome == ["first", "last"]
    else:
        assert isinstance(outcome, MleEnvError)
        message = str(outcome)
        assert "\n" not in message and message.endswith("x" * 100) and len(message) < 3200
