"""Every change the fill-in harness (:mod:`mle_env.agents.program_template`) makes to what a model wrote, in
one place, each with a name by which it is switched off and recorded.

Two kinds:

- ``assembly``: the model's part is rewritten before it runs (statements taken out, names swapped, arguments
  added). The trajectory step that runs the program records which fired and a diff of the part as the model
  wrote it against the part as it ran (``repairs`` in the step's agent data, see :func:`record`).
- ``run``: the fixed lines after the part change the part's values as the program runs (X split, a column
  dropped, the estimator swapped). Each prints one line, ``harness repair NAME: what it did``, which the
  trajectory keeps in the step's stdout and the agents list with :func:`fired_at_run`.

The fill-in harness's own work (reading the data, TF-IDF for raw text, one-hot text columns, the hold-out
split, the metric, the refit, the submission file) is the program's fixed lines, not a repair: the model is
shown them in its outline. Whole programs (``program=whole``, the agents' default) get no repair at all.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Repair:
    name: str
    when: str
    """``assembly`` (the part is rewritten before it runs) or ``run`` (the fixed lines change its values)."""
    what: str


REPAIRS: dict[str, Repair] = {r.name: r for r in (
    Repair("copied_fixed_line", "assembly",
           "a statement that copies one of the program's fixed lines is taken out (it would run twice)"),
    Repair("unfilled_outline_line", "assembly", "an outline line copied without being filled in (`X = ...`) is "
                                                "taken out"),
    Repair("harness_work", "assembly",
           "statements doing the harness's work (the hold-out split's names, fitting or predicting with `model`, "
           "printing the score, writing files, filling `sub`) are taken out, with the statements that then use "
           "what they defined"),
    Repair("cut_reply", "assembly", "a reply cut off at the token limit loses its unfinished last lines"),
    Repair("swapped_tables", "assembly",
           "`X = <expression of test only>` reads train instead, and `X_test = <expression of train only>` test"),
    Repair("tolerant_test_drop", "assembly", "`test.drop(...)` or `X_test.drop(...)` without `errors` gets "
                                             "`errors='ignore'` (test has no target column to drop)"),
    Repair("one_column_join", "assembly", "`.agg(' '.join, axis=1)` after one column (a Series) is taken out"),
    Repair("after_parent", "assembly",
           "a part that changes its parent's part but leaves out names the parent defines runs after the "
           "parent's part, less the parent's lines it makes redundant"),
    Repair("default_model", "assembly", "a part that defines every name but `model` gets the harness's default "
                                        "estimator"),
    Repair("split_train_and_test_rows", "run", "an X holding train's rows then test's is split into X and X_test"),
    Repair("target_column_dropped", "run", "the target column is dropped from X and X_test"),
    Repair("sparse_model_swapped", "run", "HistGradientBoosting given sparse (TF-IDF) features is replaced by "
                                          "LogisticRegression or Ridge"),
)}

ALL = frozenset(REPAIRS)
RUN_LINE = "harness repair"
"""How a run-time repair announces itself in the program's stdout: ``harness repair NAME: what it did``."""
_RUN_LINE = re.compile(rf"(?m)^{RUN_LINE} ([a-z_]+):")


def parse_repairs(value: Any) -> frozenset[str]:
    """The repairs an agent's ``repairs`` option switches on: ``"all"`` (default), ``"none"``, or names
    separated by commas (a list works too). Raises ValueError, in one line, for an unknown name."""
    if value is None or value == "all":
        return ALL
    if value == "none" or value == "":
        return frozenset()
    names = [n.strip() for n in (value.split(",") if isinstance(value, str) else value) if str(n).strip()]
    unknown = [n for n in names if n not in REPAIRS]
    if unknown:
        raise ValueError(f"unknown repair {', '.join(map(repr, unknown))}: use 'all', 'none' or names from "
                         f"{', '.join(REPAIRS)}")
    return frozenset(names)


def fired_at_run(stdout: str) -> list[str]:
    """The run-time repairs a program's output says fired, in order, each once."""
    return list(dict.fromkeys(name for name in _RUN_LINE.findall(stdout or "") if name in REPAIRS))


def record(written: str, ran: str, fired: tuple[str, ...], max_chars: int = 6000) -> dict[str, Any]:
    """What the trajectory keeps of an assembly: the repairs that fired (with what each does) and a unified
    diff of the part as the model ``written`` against the part as it ``ran`` (cut to ``max_chars``)."""
    diff = "".join(difflib.unified_diff(f"{written.strip()}\n".splitlines(keepends=True),
                                        f"{ran.strip()}\n".splitlines(keepends=True), "model", "ran", n=1))
    if len(diff) > max_chars:
        diff = diff[:max_chars] + f"\n[... {len(diff) - max_chars} characters cut ...]\n"
    return {"fired": [{"name": n, "what": REPAIRS[n].what} for n in fired], "diff": diff}
