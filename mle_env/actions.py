"""Actions: their JSON Schema and the one parser every action goes through.

An action is a dict (or a plain string, which stands for a shell action)::

    {"type": "shell",  "code": "ls -la data", "timeout": 60}   # bash -c code, timeout in seconds (optional)
    {"type": "python", "code": "import pandas as pd",  "timeout": 600}   # the episode's persistent interpreter
    {"type": "validate"}   # is ./submission/submission.csv gradable? answers "valid" or why not; never a score
    {"type": "validate", "path": "code/candidate.csv"}   # the same check of another file (relative path)
    {"type": "submit"}     # end the episode; the submission is graded

A malformed action is never an exception out of ``step``: :func:`parse_action` raises
:class:`ActionError` with a one-line reason and the environment turns it into an observation.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

MAX_CODE_CHARS = 1_000_000

_CODE = {"type": "string", "minLength": 1, "maxLength": MAX_CODE_CHARS}
_TIMEOUT = {"type": "number", "exclusiveMinimum": 0}


def _with_code(kind: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"type": {"const": kind}, "code": _CODE, "timeout": _TIMEOUT},
        "required": ["type", "code"],
        "additionalProperties": False,
    }


def _bare(kind: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"type": {"const": kind}}, "required": ["type"],
            "additionalProperties": False}


ACTION_TYPES = ("shell", "python", "validate", "submit")
# a path inside the working directory: relative, no ".." component
RELATIVE_PATH = {"type": "string", "minLength": 1, "maxLength": 4096,
                 "pattern": r"^(?!/)(?!.*(^|/)\.\.(/|$))[^\x00-\x1f]+$"}

ACTION_SCHEMAS: dict[str, dict[str, Any]] = {
    "shell": _with_code("shell"),
    "python": _with_code("python"),
    "validate": {**_bare("validate"), "properties": {"type": {"const": "validate"}, "path": RELATIVE_PATH}},
    "submit": _bare("submit"),
}
ACTION_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "mle-env action",
    "oneOf": list(ACTION_SCHEMAS.values()),
}

EXAMPLE = '{"type": "shell", "code": "ls data"}'


class ActionError(ValueError):
    """A malformed action; ``reason`` is one line saying what is wrong."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True)
class Action:
    """A parsed action. ``code`` and ``timeout`` are None for validate and submit; ``path`` is set only
    for a validate of another file than ./submission/submission.csv."""

    type: str
    code: str | None = None
    timeout: float | None = None
    path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        for key in ("code", "timeout", "path"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


@functools.cache
def _validators() -> dict[str, Any]:
    import jsonschema

    return {kind: jsonschema.Draft202012Validator(schema) for kind, schema in ACTION_SCHEMAS.items()}


def parse_action(action: Any) -> Action:
    """Validate ``action`` against the schema and return it parsed.

    Raises:
        ActionError: the action is malformed (wrong type, missing code, huge code, binary data, unknown
            keys, ...), with a one-line reason.
    """
    if isinstance(action, str):
        action = {"type": "shell", "code": action}
    elif isinstance(action, (bytes, bytearray)):
        raise ActionError(f"an action must be a dict or a string, not {len(action)} bytes of binary data")
    if not isinstance(action, dict):
        raise ActionError(
            f"an action must be a dict like {EXAMPLE} or a shell command string, not {type(action).__name__}"
        )
    kind = action.get("type")
    if not isinstance(kind, str) or kind not in ACTION_SCHEMAS:
        raise ActionError(f"'type' must be one of {', '.join(ACTION_TYPES)}; got {kind!r}")
    code = action.get("code")
    if isinstance(code, str):
        if len(code) > MAX_CODE_CHARS:
            raise ActionError(f"'code' has {len(code):,} characters, over the {MAX_CODE_CHARS:,} limit; "
                              "write long programs to a file in ./code and run that")
        if "\x00" in code:
            raise ActionError("'code' contains NUL bytes; send text, not binary data")
    errors = sorted(_validators()[kind].iter_errors(action), key=lambda e: list(e.absolute_path))
    if errors:
        error = errors[0]
        where = ".".join(str(p) for p in error.absolute_path)
        message = error.message
        if error.validator == "pattern" and where == "path":
            message = "must be a path relative to the working directory, without '..' (e.g. code/candidate.csv)"
        if error.validator == "additionalProperties":
            allowed = ", ".join(ACTION_SCHEMAS[kind]["properties"])
            message = f"{message}; a {kind} action takes only: {allowed}"
        raise ActionError(f"invalid {kind} action: " + (f"'{where}' " if where else "") + message)
    timeout = action.get("timeout")
    return Action(kind, code, float(timeout) if timeout is not None else None, action.get("path"))
