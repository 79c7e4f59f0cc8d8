"""Reading the JSONL files mle-env appends to (trajectories, results, AIDE journals), and writing lines
that are safe to print.

A writer killed in the middle of a line leaves a torn last line. Readers skip it; with ``repair=True`` the
file is also cut back to its last complete line, so the next append starts on a line of its own instead
of being glued to the torn one (and lost with it).

:func:`dumps_line` writes non-ASCII text as itself but escapes every character a terminal would act on, so
``cat`` of the file never drives the terminal, whatever the strings in it hold.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mle_env.display_text import UNSAFE_CHARACTERS


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


def dumps_line(value: Any, **options: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **options)`` made :func:`print_safe`: valid JSON (one line
    without ``indent``) that ``json.loads`` reads back to the same value and that holds nothing a terminal
    acts on."""
    return print_safe(json.dumps(value, ensure_ascii=False, **options))


def print_safe(json_text: str) -> str:
    """``json_text`` (as ``json.dumps`` writes it) with every character a terminal acts on (C1 controls, DEL,
    the line and paragraph separators, bidi controls, lone surrogates; ``json.dumps`` already escapes C0)
    written as its ``\\uXXXX`` escape. Such characters can only occur inside its strings, so the value it
    encodes is unchanged."""
    return UNSAFE_CHARACTERS.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)
