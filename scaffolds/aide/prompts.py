"""The LLM proposer's prompts (draft, improve, debug), in mle-env's own words.

Written for small local models as much as for large ones: every prompt states the exact paths of the
data and of the submission file, the sample submission's header, a preview of the data, the metric with
its direction (and how to compute it with scikit-learn), the time and nodes left, and the outline every
program must follow. Debug prompts lead with the failure's class, the validator's message and the end of
the traceback. The memory of earlier nodes is cut to the room the model's context window leaves
(:func:`memory_budget`).

In fill-in mode (``template`` given; see :mod:`mle_env.agents.program_template`) the model writes only the
features and the estimator, and sees the program's fixed lines around its part (:data:`SYSTEM_FILL`).
"""

from __future__ import annotations

from typing import Any

from mle_env.agents.program_template import ProgramTemplate, part_of
from mle_env.agents.task_facts import APPROACHES, METRIC_HINTS, approach, submission_facts, without_sections
from mle_env.observation import clip
from mle_env.scaffolds.aide.failures import classify, traceback_tail
from mle_env.scaffolds.aide.journal import Journal, Node

SYSTEM = """You are an expert machine-learning engineer taking part in a competition. You solve it by writing
complete, self-contained Python programs. Each program you write is run on its own, in a folder where
./data holds the competition files (read-only).

Every program must:
1. train a model on the training data, holding out part of it (or using cross-validation) to measure itself;
2. print exactly one line `VALIDATION_SCORE: <number>` with the competition metric on the held-out rows;
3. write predictions for every test row to ./submission/submission.csv in the required format
   (create the ./submission folder if needed).
Use only the Python packages listed in the task. Keep the run time within the limit you are given.
Keep the program short (under 60 lines): select columns with code (train.drop(columns=[...]),
select_dtypes), never by listing many column names.

Answer with a short plan (at most three sentences), then ONE fenced ```python code block with the whole
program, and nothing after the code block."""

SYSTEM_FILL = """You are an expert machine-learning engineer taking part in a competition. You write the middle part
of a Python program; the harness writes the rest: the first lines (imports, reading the data into train,
sub and, when the test rows are a table, test) and the last lines (a 20 % hold-out split, fitting, the
competition's metric printed as VALIDATION_SCORE, the submission file). The program runs in a folder where
./data holds the competition files.

Your part replaces the `name = ...` lines of the program shown in the task:
- X: the features of the training rows, all numeric (a DataFrame, numpy array or sparse matrix);
- X_test: the features of the test rows, in the order of sub, with the same columns as X;
- model: an unfitted scikit-learn estimator (the harness calls fit, predict and predict_proba);
- y, the target of the training rows, when the program does not set it already.
Do not fit the model, print a score or write files: the harness does. Use only the Python packages listed
in the task and only the columns that exist in the data files.

Answer with a short plan (at most three sentences), then ONE fenced ```python code block with your part only
(with the imports it needs), and nothing after the code block."""

# Characters per token of prompts like these (code, English, CSV rows): a safe side estimate.
CHARS_PER_TOKEN = 3.0


def task_brief(task: str, limit: int = 2500) -> str:
    """The competition part of the task text (what the data and the target are), without the sandbox's
    generic instructions, the medal rules and the version history."""
    brief = task.split("\n# Your environment", 1)[0]
    brief = without_sections(brief)
    return clip(brief.strip(), limit)


def skeleton(submission: dict[str, Any] | None, data_preview: str = "") -> str:
    """The outline of a program, with this competition's file and column names filled in (the test rows
    come from ./data/test.csv, or from the test folder when the preview shows one instead)."""
    submission = submission or {}
    sample = submission.get("sample") or "sample_submission.csv"
    id_column = submission.get("id_column")
    targets = submission.get("targets") or ["target"]
    header = submission.get("header") or ([id_column] if id_column else []) + targets
    dtype = f", dtype={{'{id_column}': str}}" if id_column else ""
    if "./data/test.csv" in data_preview or not data_preview:
        test = "test = pd.read_csv('./data/test.csv')  # the rows to predict, in the order of sub\n"
        features = ("# ... build features X and target y from train, and X_test from test with the SAME feature "
                    "columns (sub has no features) ...\n")
    else:
        folder = "./data/test/" if "./data/test/" in data_preview else "./data/"
        key = f"sub['{id_column}']" if id_column else "sub"
        test = f"# the test items are the files in {folder}, one per row of sub (ids in {key})\n"
        features = "# ... build X, y from the training data, and X_test for the rows of sub in their order ...\n"
    return (
        "import os\nimport numpy as np\nimport pandas as pd\nfrom sklearn.model_selection import train_test_split\n"
        "train = pd.read_csv('./data/train.csv')\n" + test +
        f"sub = pd.read_csv('./data/{sample}'{dtype})  # only the output format: ids and columns\n" + features +
        "X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.2, random_state=0)\n"
        "# ... fit the model on X_train, y_train; compute the metric on X_valid, y_valid ...\n"
        "print(f'VALIDATION_SCORE: {score:.6f}')\n"
        "# ... refit on all of X, y; predict X_test ...\n"
        f"sub['{targets[0]}'] = test_predictions\n"
        "os.makedirs('./submission', exist_ok=True)\n"
        f"sub[{header!r}].to_csv('./submission/submission.csv', index=False)"
    )


def budget(time_left: float | None, nodes_left: int | None, timeout: float) -> str:
    """The budget left, as a prompt's last section ("# Budget ...")."""
    parts = [f"This program may run for at most {timeout:.0f} seconds: choose a model that trains in well under that."]
    if time_left is not None:
        parts.append(f"About {time_left:.0f} seconds are left for the whole search")
    if nodes_left is not None:
        parts.append(f"{nodes_left} program(s) may still be tried" if time_left is None
                     else f"and {nodes_left} program(s) may still be tried")
    text = parts[0] + (" " + " ".join(parts[1:]) + "." if len(parts) > 1 else "")
    if time_left is not None and time_left < 3 * timeout:
        text += " Time is short: prefer a fast, safe change over an ambitious one."
    return f"# Budget\n{text}"


FILL_SUBMISSION = ("The harness writes ./submission/submission.csv from sub and predict(X_test): X_test needs one "
                   "row per row of sub, in the same order.")

def header(task: str, data_preview: str, metric: str, lower_is_better: bool, timeout: float,
           submission: dict[str, Any] | None = None, domain: str | None = None,
           template: ProgramTemplate | None = None) -> str:
    """The context every prompt starts with (see the module docstring). It is the same for every node of
    an episode, so a server that caches prompt prefixes (llama.cpp) reads it once; what changes (the
    budget left, see :func:`budget`) goes at the end of the prompt. With a ``template`` (fill-in mode) the
    program is shown with its fixed lines around the model's part instead of as an outline."""
    direction = "lower is better" if lower_is_better else "higher is better"
    hint = METRIC_HINTS.get(metric, "") if template is None else "The harness computes it on the held-out rows."
    return (
        f"# Task\n{task_brief(task)}\n\n"
        "# Data files (exact paths, relative to the folder the program runs in)\n"
        f"{clip(data_preview.strip(), 3000)}\n\n"
        f"# Submission\n{submission_facts(submission) if template is None else FILL_SUBMISSION}\n\n"
        f"# Metric\n{metric} ({direction}). {hint} Each program may run for at most {timeout:.0f} seconds.\n\n"
        + (f"# Suggested first approach\n{approach(domain, submission)}\n\n" if domain in APPROACHES else "")
        + (f"# Program outline\n```python\n{skeleton(submission, data_preview)}\n```" if template is None else
           f"# The program (the harness writes every line but your part)\n```python\n{template.outline()}\n```")
    )


def memory_budget(n_ctx: int | None, max_tokens: int, fixed_chars: int, cap: int) -> int:
    """Characters the memory of earlier nodes may take: what the context window (``n_ctx`` tokens; None:
    unknown, then ``cap``) leaves after the reply (``max_tokens``) and the rest of the prompt
    (``fixed_chars``), with a margin; never more than ``cap`` nor less than 0."""
    if n_ctx is None:
        return cap
    room = int((n_ctx - max_tokens - 256) * CHARS_PER_TOKEN) - fixed_chars
    return max(0, min(cap, room))


def memory(journal: Journal, limit: int) -> str:
    """A size-capped summary of earlier nodes: what was tried and how it scored (the newest kept)."""
    lines = []
    for node in journal.nodes:
        outcome = (f"validation score {node.score:.5g}" if not node.buggy
                   else f"buggy, {classify(node)}: {node.bug_reason[:120]}")
        plan = " ".join(node.plan.replace("#", " ").replace("*", "").split())  # one line, no markdown
        lines.append(f"- node {node.id} ({node.operator}): {plan[:160]} -> {outcome}")
    text = "\n".join(lines)
    if len(text) <= limit:
        return text
    return text[-limit:].split("\n", 1)[-1] if limit > 0 else ""


CHECKLIST = ("Before answering, check that the program (1) makes X_valid and y_valid with train_test_split, "
             "(2) prints `VALIDATION_SCORE: <number>`, (3) writes ./submission/submission.csv.")
CHECKLIST_FILL = ("Before answering, check that your part defines every name the program leaves as ... ({names}), "
                  "uses only columns that exist in the data files, and turns every text or image into numbers.")


def _checklist(template: ProgramTemplate | None) -> str:
    return CHECKLIST if template is None else CHECKLIST_FILL.format(names=", ".join(template.slots))


def _code(node: Node, template: ProgramTemplate | None) -> str:
    """The node's program as the prompt shows it: the model's part only in fill-in mode."""
    return part_of(node.code) if template is not None else node.code


def draft(context: str, past: str, template: ProgramTemplate | None = None) -> str:
    fill = template is not None
    follow = ("Write your part of the program" if fill else "Follow the program outline")
    return (f"{context}\n\n# Earlier attempts\n{past or '(none yet)'}\n\n# Instructions\n"
            f"Write a new, simple but solid first solution, different from the earlier attempts. {follow} and use "
            f"the exact file and column names above. {_checklist(template)}")


def improve(context: str, past: str, node: Node, output_chars: int, template: ProgramTemplate | None = None) -> str:
    fill = template is not None
    what = "Your part of the program to improve" if fill else "The program to improve"
    write = ("write your whole improved part." if fill else "write the whole improved program. Keep the "
             "VALIDATION_SCORE line and the submission file exactly as they are.")
    return (f"{context}\n\n# Earlier attempts\n{past}\n\n# {what} (validation score {node.score})\n"
            f"```python\n{_code(node, template)}\n```\n\n# Its output\n{clip(node.output, output_chars)}\n\n"
            "# Instructions\nPropose ONE specific change that should improve the validation score (better "
            f"features, model or hyperparameters), explain it in the plan, and {write}")


FIX_HINTS = {
    "syntax": "The program is not valid Python: check the line the error names (quotes, brackets, indentation).",
    "wrong_path": "A file path is wrong: read only the exact paths listed under 'Data files', and write "
                  "./submission/submission.csv.",
    "wrong_columns": "A column name is wrong: use only the columns listed under 'Data files', and the "
                     "submission header exactly as given.",
    "timeout": "The program was too slow: use fewer rows, fewer features, or a faster model.",
    "no_score": "The program must print one line `VALIDATION_SCORE: <number>` (the metric on held-out rows).",
    "invalid_submission": "The submission file was rejected: follow the 'Submission' rules exactly.",
    "crash": "Read the error at the end of the traceback and fix its cause.",
}

# Fill-in mode: the harness prints the score and writes the file, so the hints speak of the model's part.
FIX_HINTS_FILL = {
    **FIX_HINTS,
    "wrong_path": "A file path is wrong: read only the exact paths listed under 'Data files'.",
    "wrong_columns": "A column name is wrong: use only the columns listed under 'Data files' (test has no target "
                     "column), and make X and X_test with the same columns.",
    "timeout": "The program was too slow: use fewer features or a faster model (keep every training row: y has "
               "one value per row of train).",
    "no_score": "The harness's lines did not run to the end: your part must define every name it leaves as ... "
                "and must not stop the program.",
    "invalid_submission": "The submission was rejected: X_test must have one row per row of sub, in its order.",
}


def code_please(template: ProgramTemplate | None, lacking: tuple[str, ...] = ("code",)) -> str:
    """The follow-up to a reply that had no code (``lacking`` == ("code",)) or whose part does not define
    the names in ``lacking``."""
    if template is None:
        return "Your reply has no code. Answer with the whole program as ONE fenced ```python code block."
    return template.request(() if lacking == ("code",) else lacking)


def debug(context: str, node: Node, output_chars: int, template: ProgramTemplate | None = None) -> str:
    """The prompt to fix ``node``: its code, what went wrong (class, reason, the validator's message), a
    hint for that class and the end of its output (the traceback's tail when there is one)."""
    fill = template is not None
    hints = FIX_HINTS_FILL if fill else FIX_HINTS
    kind = classify(node)
    hint = hints.get(kind, "")
    target = template.target if template is not None else ""
    if kind == "wrong_columns" and target and f"['{target}'] not found" in node.output:  # the 1.5B model's habit
        hint += (f" test has no '{target}' column (it is what you predict): drop '{target}' from train only, "
                 "never from test.")
    if "got an unexpected keyword argument" in node.output:  # the 1.5B model's n_estimators for HistGradientBoosting*
        hint += (" Pass only parameters the estimator has: HistGradientBoostingRegressor/Classifier take max_iter, "
                 "learning_rate, max_depth (not n_estimators).")
    cut_off = bool(node.llm) and node.llm[-1].get("finish_reason") == "length"
    problem = ("The reply was cut off at the token limit, so the program is incomplete: write a much shorter "
               "one.\n" if cut_off else "") + node.bug_reason
    if node.validation and node.validation != "valid":
        problem += f"\nThe validator said: {node.validation}"
    output = node.output
    tail = traceback_tail(output) if "Traceback (most recent call last)" in output else clip(output, output_chars)
    what = "Your part of the program that failed" if fill else "The program that failed"
    write = "your whole corrected part" if fill else "the whole corrected program"
    return (f"{context}\n\n# {what}\n```python\n{_code(node, template)}\n```\n\n"
            f"# What went wrong ({kind})\n{problem}\n{hint}\n\n# The end of its output\n"
            f"{clip(tail, output_chars)}"
            "\n\n# Instructions\nFind the bug, explain the fix in one or two sentences, and write "
            f"{write}. {_checklist(template)}")
