"""Why a node is buggy, as one of a few classes (used by the journal, the debug prompt and the benchmark).

Classes, checked in this order:

- ``no_code``: the proposer's reply held no program;
- ``timeout``: the program was stopped at its time limit;
- ``syntax``: Python could not parse it (SyntaxError, IndentationError, TabError);
- ``wrong_path``: it read or wrote a file that is not there (FileNotFoundError, "No such file"), or left
  no submission file where the validator looks;
- ``wrong_columns``: it used a column the data does not have (KeyError, "not in index", unknown feature
  names), or wrote a submission whose header is not the sample submission's;
- ``crash``: any other non-zero exit;
- ``no_score``: it ran, but printed no ``VALIDATION_SCORE: <value>`` line;
- ``invalid_submission``: the validator rejected its submission for another reason (rows, values);
- ``ok``: not buggy.
"""

from __future__ import annotations

import re
from typing import Any

CLASSES = ("ok", "no_code", "timeout", "syntax", "wrong_path", "wrong_columns", "crash", "no_score",
           "invalid_submission")

_SYNTAX = re.compile(r"\b(SyntaxError|IndentationError|TabError)\b")
_PATH = re.compile(r"\b(FileNotFoundError|No such file or directory|NotADirectoryError|IsADirectoryError)\b")
_COLUMNS = re.compile(
    r"\bKeyError\b|not in index|None of \[.*\] are in the|columns are missing|feature names? (?:should|seen)|"
    r"Feature names unseen|Columns must be same length|has no attribute '(?!\w*\()\w+'.*DataFrame|"
    r"'DataFrame' object has no attribute", re.S)
_VALIDATOR_PATH = re.compile(r"there is no (submission file|\S*submission\.csv)|not a \.csv file", re.I)
_VALIDATOR_COLUMNS = re.compile(r"missing \d+ column|unexpected column|header", re.I)


def _get(node: Any, name: str, default: Any = None) -> Any:
    return node.get(name, default) if isinstance(node, dict) else getattr(node, name, default)


def _output(node: Any) -> str:
    head, tail = str(_get(node, "output_head", "") or ""), str(_get(node, "output_tail", "") or "")
    return head + "\n" + tail


def classify(node: Any) -> str:
    """The failure class of a journal node (a :class:`~mle_env.scaffolds.aide.journal.Node` or its JSON
    dict); ``"ok"`` for a node that is not buggy. See the module docstring for the classes."""
    if not _get(node, "buggy", True):
        return "ok"
    if not str(_get(node, "code", "") or "").strip():
        return "no_code"
    if _get(node, "timed_out", False):
        return "timeout"
    exit_code = _get(node, "exit_code")
    output = _output(node)
    if exit_code not in (0, None):
        return classify_error(output)
    validation = str(_get(node, "validation", "") or "")
    if validation and validation != "valid":
        return classify_validation(validation)
    if _get(node, "score") is None and exit_code == 0:
        return "no_score"
    return "crash"


def classify_validation(message: str) -> str:
    """The class of a validator's rejection: ``wrong_path`` (no file where it looks), ``wrong_columns``
    (the header) or ``invalid_submission``."""
    if _VALIDATOR_PATH.search(message):
        return "wrong_path"
    return "wrong_columns" if _VALIDATOR_COLUMNS.search(message) else "invalid_submission"


def classify_error(output: str) -> str:
    """The class of a failed run from its output (stdout and stderr): ``syntax``, ``wrong_path``,
    ``wrong_columns`` or ``crash``. The traceback's last exception decides, when there is one."""
    last = _last_exception(output)
    for text in ((last, output) if last else (output,)):
        if _SYNTAX.search(text):
            return "syntax"
        if _PATH.search(text):
            return "wrong_path"
        if _COLUMNS.search(text):
            return "wrong_columns"
    return "crash"


def _last_exception(output: str) -> str:
    """The last line of the output that names an exception (``SomeError: ...``), or ""."""
    lines = [line for line in output.splitlines() if re.match(r"^\s*[\w.]+(Error|Exception|Interrupt)\b", line)]
    return lines[-1] if lines else ""


def traceback_tail(output: str, lines: int = 25) -> str:
    """The end of the last Python traceback in ``output`` (at most ``lines`` lines), else its last lines."""
    at = output.rfind("Traceback (most recent call last)")
    text = output[at:] if at >= 0 else output
    return "\n".join(text.rstrip().splitlines()[-lines:])


def counts(nodes: list[Any]) -> dict[str, int]:
    """How many of ``nodes`` fall in each class (classes that never occur are left out)."""
    out: dict[str, int] = {}
    for node in nodes:
        name = classify(node)
        out[name] = out.get(name, 0) + 1
    return out
