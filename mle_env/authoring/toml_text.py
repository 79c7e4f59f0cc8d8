"""A small TOML writer for competition.toml: tables, arrays of tables and inline values, in the order given."""

from __future__ import annotations

import json
import math
from typing import Any


def value(item: Any) -> str:
    """One TOML value: strings, numbers, booleans, lists and inline tables."""
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, int):
        return str(item)
    if isinstance(item, float):
        if math.isinf(item):
            return "inf" if item > 0 else "-inf"
        return repr(item)
    if isinstance(item, str):
        return json.dumps(item, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(item, (list, tuple)):
        return "[" + ", ".join(value(v) for v in item) + "]"
    if isinstance(item, dict):
        return "{ " + ", ".join(f"{key(k)} = {value(v)}" for k, v in item.items()) + " }" if item else "{}"
    raise TypeError(f"no TOML form for {type(item).__name__}")


def key(name: str) -> str:
    """A bare key when it can be one, else a quoted one."""
    return name if name and all(c.isalnum() or c in "-_" for c in name) else json.dumps(name)


def dumps(doc: dict[str, Any], comments: dict[str, str] | None = None) -> str:
    """``doc`` as TOML text. Plain values first, then each table (``[name]``; nested dicts become
    ``[name.sub]``) and each list of dicts (``[[name]]``); ``comments`` puts a ``#`` line above a table."""
    comments = comments or {}
    lines: list[str] = []
    _table(doc, [], lines, comments)
    return "\n".join(lines).strip() + "\n"


def _is_table(item: Any) -> bool:
    """Inside a table, a dict gets its own ``[a.b]`` header when it is big (more than 3 keys) or holds dicts;
    a small flat one stays inline (``params = { average = "macro" }``)."""
    return isinstance(item, dict) and (len(item) > 3 or any(isinstance(v, dict) for v in item.values()))


def _table(doc: dict[str, Any], path: list[str], lines: list[str], comments: dict[str, str]) -> None:
    nested = {k: v for k, v in doc.items() if isinstance(v, dict) and (path == [] or _is_table(v))}
    arrays = {k: v for k, v in doc.items() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)}
    for name, item in doc.items():
        if name not in nested and name not in arrays:
            lines.append(f"{key(name)} = {value(item)}")
    for name, item in nested.items():
        full = [*path, name]
        lines.append("")
        if ".".join(full) in comments:
            lines += [f"# {line}" for line in comments[".".join(full)].splitlines()]
        lines.append("[" + ".".join(key(p) for p in full) + "]")
        _table(item, full, lines, comments)
    for name, items in arrays.items():
        full = [*path, name]
        for item in items:
            lines.append("")
            lines.append("[[" + ".".join(key(p) for p in full) + "]]")
            _table(item, full, lines, comments)
