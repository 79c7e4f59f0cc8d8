"""The LLM proposer's prompts (draft, improve, debug), in mle-env's own words."""

from __future__ import annotations

from mle_env.observation import clip
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

Answer with a short plan (a few sentences) followed by ONE fenced ```python code block with the whole program."""


def memory(journal: Journal, limit: int) -> str:
    """A size-capped summary of earlier nodes: what was tried and how it scored."""
    lines = []
    for node in journal.nodes:
        outcome = f"validation score {node.score:.5g}" if not node.buggy else f"buggy ({node.bug_reason[:120]})"
        lines.append(f"- node {node.id} ({node.operator}): {node.plan[:200].strip()} -> {outcome}")
    text = "\n".join(lines)
    return text[-limit:] if len(text) > limit else text


def header(task: str, data_preview: str, metric: str, lower_is_better: bool, timeout: float) -> str:
    direction = "lower is better" if lower_is_better else "higher is better"
    return (
        f"# Task\n{clip(task, 6000)}\n\n# Data preview\n{clip(data_preview, 3000)}\n\n"
        f"# Metric\n{metric} ({direction}). Each program may run for at most {timeout:.0f} seconds."
    )


def draft(context: str, past: str) -> str:
    return (f"{context}\n\n# Earlier attempts\n{past or '(none yet)'}\n\n# Instructions\n"
            "Write a new, simple but solid first solution, different from the earlier attempts.")


def improve(context: str, past: str, node: Node, output_chars: int) -> str:
    return (f"{context}\n\n# Earlier attempts\n{past}\n\n# The program to improve (validation score {node.score})\n"
            f"```python\n{node.code}\n```\n\n# Its output\n{clip(node.output, output_chars)}\n\n"
            "# Instructions\nPropose ONE specific change that should improve the validation score (better "
            "features, model, hyperparameters or validation), explain it in the plan, and write the whole "
            "improved program.")


def debug(context: str, node: Node, output_chars: int) -> str:
    problem = node.bug_reason + (f"\nThe validator said: {node.validation}" if node.validation else "")
    output = clip(node.output, output_chars)
    return (f"{context}\n\n# The program that failed\n```python\n{node.code}\n```\n\n"
            f"# What went wrong\n{problem}\n\n# Its output\n{output}"
            "\n\n# Instructions\nFind the bug, explain the fix in the plan, and write the whole corrected program.")
