"""Actions: their JSON Schema and the one parser every action goes through.

An action is a dict (or a plain string, which stands for a shell action)::

    {"type": "shell",  "code": "ls -la data", "timeout": 60}   # bash -c code, timeout in seconds (optional)
    {"type": "python", "code": "import pandas as pd",  "timeout": 600}   # the episode's persistent interpreter
    {"type": "validate"}   # is ./submission/submission.csv gradable? answers "valid" or why not; never a score
    {"type": "validate", "path": "code/candidate.csv"}   # the same check of another file (relative path)
    {"type": "score_dev", "path": "code/dev.csv"}   # with a dev split only: the dev score of that file
    {"type": "submit"}     # end the episode; the submission is graded

A malformed action is never an exception out of ``step``: :func:`parse_action` raises
:class:`ActionError` with a one-line reason (at most :data:`MAX_REASON` characters) for anything at all
that is not a valid action, including text that is not valid Unicode (a lone surrogate), a NaN, infinite
or out-of-range timeout and objects that cannot even be printed, and the environment turns it into an
observation.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

MAX_CODE_CHARS = 1_000_000
MAX_TIMEOUT = 10**9  # seconds; any timeout is cut to the time left in the episode anyway
MAX_REASON = 500

_CODE = {"type": "string", "minLength": 1, "maxLength": MAX_CODE_CHARS}
_TIMEOUT = {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_TIMEOUT}


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


ACTION_TYPES = ("shell", "python", "validate", "score_dev", "submit")
# a path inside the working directory: relative, no ".." component
RELATIVE_PATH = {"type": "string", "minLength": 1, "maxLength": 4096,
                 "pattern": r"^(?!/)(?!.*(^|/)\.\.(/|$))[^\x00-\x1f]+$"}

ACTION_SCHEMAS: dict[str, dict[str, Any]] = {
    "shell": _with_code("shell"),
    "python": _with_code("python"),
    "validate": {**_bare("validate"), "properties": {"type": {"const": "validate"}, "path": RELATIVE_PATH}},
    "score_dev": {**_bare("score_dev"), "properties": {"type": {"const": "score_dev"}, "path": RELATIVE_PATH},
                  "required": ["type", "path"]},
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
        reason = " ".join(reason[: 4 * MAX_REASON].split())
        self.reason = reason if len(reason) <= MAX_REASON else reason[: MAX_REASON - 3] + "..."
        super().__init__(self.reason)


@dataclass(frozen=True)
class Action:
    """A parsed action. ``code`` and ``timeout`` are None for validate, score_dev and submit; ``path`` is
    set for score_dev, and for a validate of another file than ./submission/submission.csv."""

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
            keys, text that is not valid Unicode, a timeout that is not a finite number of seconds, ...), with
            a one-line reason. Nothing else: whatever ``action`` is, this raises only ActionError.
    """
    try:
        return _parse(action)
    except ActionError:
        raise
    except Exception as e:  # noqa: BLE001 - e.g. objects whose repr or __eq__ raise, or nesting too deep to check
        raise ActionError(f"the action could not be read ({type(e).__name__}); send a dict like {EXAMPLE}") from None


def describe(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters; never raises (for messages and trajectories)."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - an object whose repr raises (or an int too long to print)
        text = f"<{type(value).__name__} object that cannot be printed>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _text(name: str, value: str) -> str:
    """``value`` as a plain str that is valid Unicode (UTF-8 encodable), or ActionError."""
    try:
        return str.encode(value, "utf-8").decode("utf-8")
    except UnicodeEncodeError as e:
        raise ActionError(f"'{name}' is not valid Unicode text (a lone surrogate at character {e.start}); "
                          "send UTF-8 text") from None


def _parse(action: Any) -> Action:
    if isinstance(action, str):
        action = {"type": "shell", "code": action}
    elif isinstance(action, (bytes, bytearray)):
        raise ActionError(f"an action must be a dict or a string, not {len(action)} bytes of binary data")
    if not isinstance(action, dict):
        raise ActionError(
            f"an action must be a dict like {EXAMPLE} or a shell command string, not {type(action).__name__}"
        )
    kind = action.get("type")
    if type(kind) is not str or kind not in ACTION_SCHEMAS:
        raise ActionError(f"'type' must be one of {', '.join(ACTION_TYPES)}; got {describe(kind)}")
    code = action.get("code")
    if isinstance(code, str):
        if len(code) > MAX_CODE_CHARS:
            raise ActionError(f"'code' has {len(code):,} characters, over the {MAX_CODE_CHARS:,} limit; "
                              "write long programs to a file in ./code and run that")
        code = _text("code", code)
        if "\x00" in code:
            raise ActionError("'code' contains NUL bytes; send text, not binary data")
    path = action.get("path")
    if isinstance(path, str):
        path = _text("path", path)
    timeout = action.get("timeout")
    if isinstance(timeout, float) and not math.isfinite(timeout):
        raise ActionError(f"'timeout' must be a finite number of seconds in (0, {MAX_TIMEOUT}]; got {timeout}")
    errors = sorted(_validators()[kind].iter_errors(action), key=lambda e: list(e.absolute_path))
    if errors:
        error = errors[0]
        where = ".".join(str(p) for p in error.absolute_path)
        message = error.message
        if len(message) > 200:  # it quotes the value: keep the start of the quote and what is wrong with it
            message = f"{message[:60]}...{message[-120:]}"
        if error.validator == "pattern" and where == "path":
            message = "must be a path relative to the working directory, without '..' (e.g. code/candidate.csv)"
        if error.validator == "additionalProperties":
            allowed = ", ".join(ACTION_SCHEMAS[kind]["properties"])
            message = f"{message}; a {kind} action takes only: {allowed}"
        raise ActionError(f"invalid {kind} action: " + (f"'{where}' " if where else "") + message)
    return Action(kind, code, float(timeout) if timeout is not None else None, path)
