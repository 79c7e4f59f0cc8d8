"""What one shell or python action produced: :class:`ExecResult` (the sandbox contract's result type, shared by
the backends and the channel to their workers)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExecResult:
    """What one shell or python action produced.

    Attributes:
        stdout, stderr: the output, decoded as UTF-8 (invalid bytes replaced); cut in the middle with a
            ``[... N bytes of output cut ...]`` marker when longer than the limit.
        exit_code: the program's exit status (python: 0 ok, 1 exception); None when it timed out.
        timed_out: the action hit its timeout and was killed.
        cancelled: the action was stopped by :meth:`Sandbox.cancel` (a person's Ctrl-C) before it ended.
        stdout_bytes, stderr_bytes: how much the program really wrote.
        duration_s: wall time inside the sandbox, in seconds.
        note: what the sandbox did besides running the code (e.g. "the python interpreter was restarted").
    """

    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool
    cancelled: bool = False
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    duration_s: float = 0.0
    note: str = ""
