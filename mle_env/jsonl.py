"""Reading the JSONL files mle-env appends to (trajectories, results, AIDE journals).

A writer killed in the middle of a line leaves a torn last line. Readers skip it; with ``repair=True`` the
file is also cut back to its last complete line, so the next append starts on a line of its own instead
of being glued to the torn one (and lost with it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def read_jsonl(path: Path, repair: bool = False) -> list[dict[str, Any]]:
    """Every complete record of ``path`` ([] when it does not exist); lines that are not JSON objects are
    skipped."""
    path = Path(path)
    if not path.is_file():
        return []
    data = path.read_bytes()
    complete, _, torn = data.rpartition(b"\n")
    if torn and repair:
        with open(path, "r+b") as f:
            f.truncate(len(data) - len(torn))
            os.fsync(f.fileno())
    records = []
    for line in (complete + b"\n" if complete else b"").splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            records.append(value)
    return records
