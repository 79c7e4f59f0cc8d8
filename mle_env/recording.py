"""Trajectories: one JSONL file per episode, appended and flushed record by record.

Records, one JSON object per line:

- ``{"type": "header", ...}``: format version, episode id, competition and its version, seed, sandbox,
  image, limits, budgets, package versions, start time.
- ``{"type": "step", ...}``: step number, the action as sent, what it produced (stdout, stderr, exit
  code, timed out, message), start time, duration in seconds, time and steps left, and anything the
  policy attached with ``env.annotate(...)`` (e.g. LLM token counts) under ``"policy"``.
- ``{"type": "footer", ...}``: how the episode ended (status), the grade report, reward, steps, wall time,
  and ``artifacts``: what was kept beside the trajectory in the episode's folder (and what could not be).

A crash of the process loses at most the record being written. :func:`read_trajectory` reads a file back
and tolerates a torn last line. Whatever a record holds (text that is not valid Unicode, objects whose
repr raises, cycles, numbers too long to print), writing it never raises: such values are written as
JSON escapes or as a short description.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from mle_env.jsonl import dumps_line, read_jsonl

FORMAT_VERSION = 1
#: the trajectory's name inside an episode's folder (see "Kept artifacts" in mle_env/env.py)
TRAJECTORY_NAME = "trajectory.jsonl"


_MAX_DEPTH = 32
_MAX_INT_DIGITS = 4000  # below Python's limit on printing ints


def _default(value: Any) -> Any:
    try:
        if hasattr(value, "item"):
            return value.item()
        if hasattr(value, "to_dict"):
            return value.to_dict()
        return str(value)
    except Exception:  # noqa: BLE001 - an object that cannot even be printed is still recorded as what it is
        return _opaque(value)


def _opaque(value: Any) -> str:
    return f"<{type(value).__name__} object that cannot be printed>"


def _plain(value: Any, depth: int = 0) -> Any:
    """``value`` turned into plain JSON data that ``json.dumps`` cannot fail on (cycles and deep nesting cut,
    keys made strings, unprintable objects described)."""
    if depth > _MAX_DEPTH:
        return "<nested too deep>"
    if value is None or isinstance(value, (bool, float, str)):
        return value
    if isinstance(value, int):
        return value if value.bit_length() < _MAX_INT_DIGITS * 3 else f"<int of {value.bit_length()} bits>"
    if isinstance(value, dict):
        return {_key(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v, depth + 1) for v in value]
    return _plain(_default(value), depth + 1) if depth < _MAX_DEPTH else _opaque(value)


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    try:
        return str(key)
    except Exception:  # noqa: BLE001
        return _opaque(key)


def dumps(record: dict[str, Any]) -> str:
    """One JSON line for ``record``, holding no character a terminal acts on (``cat`` of a trajectory is
    safe); never raises for what the record holds."""
    try:
        return dumps_line(record, default=_default)
    except (TypeError, ValueError, RecursionError):  # odd keys, a cycle, an int too long, nesting too deep
        return dumps_line(_plain(record), default=_opaque)


class TrajectoryWriter:
    """Appends records to ``path`` (created with its folder); each record is flushed as it is written."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # a lone surrogate (not encodable as UTF-8) is written as its JSON escape, e.g. \ud800
        self._file = open(self.path, "a", encoding="utf-8", errors="backslashreplace")  # noqa: SIM115 - closed in close()

    def write(self, record: dict[str, Any]) -> None:
        if self._file.closed:
            return
        self._file.write(dumps(record) + "\n")
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


def find_trajectory(path: str | os.PathLike[str]) -> Path:
    """The trajectory file of ``path``: the file itself, or the ``trajectory.jsonl`` of an episode's folder
    (or that folder's only ``.jsonl`` file, for folders written by hand).

    Raises:
        FileNotFoundError: there is no such file, or the folder holds no trajectory.
    """
    path = Path(path)
    if path.is_file():
        return path
    if path.is_dir():
        if (path / TRAJECTORY_NAME).is_file():
            return path / TRAJECTORY_NAME
        candidates = [p for p in path.glob("*.jsonl") if p.is_file() and not p.name.endswith(".aide.jsonl")]
        if len(candidates) == 1:
            return candidates[0]
        raise FileNotFoundError(f"{path} holds no {TRAJECTORY_NAME}" + (
            f" and {len(candidates)} other .jsonl files; name one" if candidates else ""))
    raise FileNotFoundError(f"no such file or folder: {path}")


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
