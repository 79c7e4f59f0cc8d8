"""Trajectories: one JSONL file per episode, appended and flushed record by record.

Records, one JSON object per line:

- ``{"type": "header", ...}``: format version, episode id, competition and its version, seed, sandbox,
  image, limits, budgets, package versions, start time.
- ``{"type": "step", ...}``: step number, the action as sent, what it produced (stdout, stderr, exit
  code, timed out, message), start time, duration in seconds, time and steps left, and anything the
  policy attached with ``env.annotate(...)`` (e.g. LLM token counts) under ``"policy"``.
- ``{"type": "footer", ...}``: how the episode ended (status), the grade report, reward, steps, wall time.

A crash of the process loses at most the record being written. :func:`read_trajectory` reads a file back
and tolerates a torn last line.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from mle_env.jsonl import read_jsonl

FORMAT_VERSION = 1


def _default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return str(value)


class TrajectoryWriter:
    """Appends records to ``path`` (created with its folder); each record is flushed as it is written."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def write(self, record: dict[str, Any]) -> None:
        if self._file.closed:
            return
        self._file.write(json.dumps(record, default=_default, ensure_ascii=False) + "\n")
        self._file.flush()

    def header(self, **fields: Any) -> None:
        self.write({"type": "header", "format": FORMAT_VERSION, "started_at": now(), **fields})

    def step(self, **fields: Any) -> None:
        self.write({"type": "step", **fields})

    def footer(self, **fields: Any) -> None:
        self.write({"type": "footer", "ended_at": now(), **fields})

    def close(self) -> None:
        if not self._file.closed:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()


def now() -> str:
    return datetime.now(timezone.utc).isoformat()


def read_trajectory(path: Path) -> list[dict[str, Any]]:
    """All complete records of a trajectory file (a torn last line from a crash is skipped)."""
    return read_jsonl(path)


def package_versions() -> dict[str, str]:
    """Versions that make a run reproducible: Python, mle-env, gymnasium, numpy, pandas, scikit-learn."""
    import importlib.metadata as metadata
    import platform

    out = {"python": platform.python_version()}
    for name in ("mle-env", "gymnasium", "numpy", "pandas", "scikit-learn", "docker"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out
