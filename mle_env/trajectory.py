"""Reading recorded episodes: a trajectory file (JSONL: header, one record per step, footer) as one
checked :class:`Episode`, and finding the trajectories under a run directory. Used by ``mle-env export``
and ``mle-env replay``; :class:`mle_env.recording.TrajectoryWriter` writes the files.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mle_env.errors import MleEnvError
from mle_env.recording import FORMAT_VERSION, TRAJECTORY_NAME, find_trajectory

MEDALS = ("none", "bronze", "silver", "gold")
_STEP_FIELDS: dict[str, type | tuple[type, ...]] = {
    "kind": str, "stdout": str, "stderr": str, "message": str, "exit_code": int, "timed_out": bool,
    "time_left": (int, float), "steps_left": int,
}


class TrajectoryError(MleEnvError):
    """A trajectory file that cannot be used whole: malformed, or an episode that never ended."""


# --- reading an episode ---------------------------------------------------------------------------------
@dataclass
class Episode:
    """One trajectory file read whole: its header, its step records in order, and its footer (None when the
    episode never ended)."""

    path: Path
    header: dict[str, Any]
    steps: list[dict[str, Any]]
    footer: dict[str, Any] | None

    @property
    def grade(self) -> dict[str, Any] | None:
        grade = (self.footer or {}).get("grade")
        return grade if isinstance(grade, dict) else None

    @property
    def medal(self) -> str | None:
        """``none`` ... ``gold``; None when the episode was not graded."""
        grade = self.grade
        if grade is None:
            return None
        medal = str(grade.get("medal") or "none").lower()
        return medal if medal in MEDALS else "none"

    @property
    def status(self) -> str:
        """The footer's status (``running`` when there is no footer)."""
        return str((self.footer or {}).get("status") or "running")


def load_episode(path: str | os.PathLike[str], require_end: bool = True) -> Episode:
    """Read and check a trajectory file (or an episode's folder).

    Args:
        path: the ``.jsonl`` file, or an episode's folder (:func:`~mle_env.recording.find_trajectory`).
        require_end: a trajectory without a footer (still running, or its process died) is an error.

    Raises:
        TrajectoryError: the file cannot be read, is not a trajectory, is malformed (a line that is not JSON
            before the last one, no header, a newer format, step records missing fields or out of order,
            records after the footer), or has no footer while ``require_end``.
    """
    path = Path(path)
    if path.is_dir():
        try:
            path = find_trajectory(path)
        except FileNotFoundError as e:
            raise TrajectoryError(str(e)) from None
    try:
        data = path.read_bytes()
    except OSError as e:
        raise TrajectoryError(f"{path}: cannot read it ({e.strerror or e})") from None
    lines = data.split(b"\n")
    records: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            if number == len(lines):  # a torn last line: the writer died in the middle of it
                break
            raise TrajectoryError(f"{path}: line {number} is not JSON") from None
        if not isinstance(record, dict):
            raise TrajectoryError(f"{path}: line {number} is not a JSON object")
        records.append(record)
    return _episode(path, records, require_end)


def _episode(path: Path, records: list[dict[str, Any]], require_end: bool) -> Episode:
    if not records or records[0].get("type") != "header" or "format" not in records[0]:
        raise TrajectoryError(f"{path}: not a trajectory (its first record is not an mle-env header)")
    header = records[0]
    version = header.get("format")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise TrajectoryError(f"{path}: trajectory format {version!r} is not one this mle-env reads "
                              f"(up to {FORMAT_VERSION}); upgrade mle-env")
    for key in ("competition_id", "task"):
        if not isinstance(header.get(key), str):
            raise TrajectoryError(f"{path}: the header has no {key}")
    steps: list[dict[str, Any]] = []
    footer = None
    for record in records[1:]:
        kind = record.get("type")
        if footer is not None and kind in ("step", "footer"):
            raise TrajectoryError(f"{path}: a {kind} record follows the footer")
        if kind == "step":
            _check_step(path, record, len(steps) + 1)
            steps.append(record)
        elif kind == "footer":
            footer = record
    if footer is None and require_end:
        raise TrajectoryError(f"{path}: no footer after step {len(steps)}: the episode is still running, or its "
                              "process died")
    return Episode(path, header, steps, footer)


def _check_step(path: Path, record: dict[str, Any], expected: int) -> None:
    if record.get("step") != expected:
        raise TrajectoryError(f"{path}: step record {record.get('step')!r} where step {expected} was expected")
    for key, kind in _STEP_FIELDS.items():
        value = record.get(key)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise TrajectoryError(f"{path}: step {expected} has no valid {key!r}")
    action = record.get("action")
    if record["kind"] != "invalid" and not (isinstance(action, dict) and isinstance(action.get("type"), str)):
        raise TrajectoryError(f"{path}: step {expected} has no valid 'action'")


def find_trajectories(sources: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The trajectory files of ``sources`` (files are taken as they are; folders are searched recursively
    for ``.jsonl`` files that start with an mle-env trajectory header), sorted by path.

    Raises:
        ExportError: a source does not exist.
    """
    items = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    found: list[Path] = []
    for item in items:
        path = Path(item)
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found.extend(p for p in sorted(path.rglob("*.jsonl"))
                         if p.is_file() and not p.name.endswith(".aide.jsonl") and _starts_as_trajectory(p))
        else:
            raise TrajectoryError(f"no such file or folder: {path}")
    return sorted(dict.fromkeys(found))


def _starts_as_trajectory(path: Path) -> bool:
    """Whether the file's first line is (or begins as) a trajectory header; results.jsonl, AIDE journals and
    exports are not."""
    try:
        with open(path, "rb") as f:
            first = f.readline(4096)
    except OSError:
        return path.name == TRAJECTORY_NAME  # unreadable: reported when it is read
    if path.name == TRAJECTORY_NAME:
        return True  # reported as malformed when it is not one
    return first.startswith(b'{"type": "header", "format":')
