"""The proposer interface: given an operator and a parent node, write the next solution.

Every solution is a standalone Python program with one contract, whoever writes it: it runs in its own
folder, where ``./data`` holds the competition files; it writes its predictions to
``./submission/submission.csv``; and it prints ``VALIDATION_SCORE: <value>``, the competition's metric
measured on training rows it did not train on. The metric and its direction come from the competition,
never from the proposer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from mle_env.scaffolds.aide.journal import Journal, Node

OPERATORS = ("draft", "improve", "debug")


@dataclass
class SearchContext:
    """What a proposer may use: the task, a preview of the data, the metric, the tree so far."""

    task: str
    data_preview: str
    metric: str
    lower_is_better: bool
    journal: Journal
    node_timeout: float
    profile: dict[str, Any] | None = None
    submission: dict[str, Any] | None = None
    """The competition's submission spec (``info["submission"]``: header, id_column, targets, kind, sample)."""
    domain: str | None = None
    """The competition's domain ("tabular", "text", "image", ...)."""
    time_left: float | None = None
    """Seconds left in the episode when the proposal is asked for."""
    nodes_left: int | None = None
    """Nodes the search may still run, this one included."""


@dataclass
class Proposal:
    """A new solution: the plan in words, the program, and (offline proposer) the pipeline config."""

    plan: str
    code: str
    config: dict[str, Any] | None = None
    llm: list[dict[str, Any]] = field(default_factory=list)
    repairs: dict[str, Any] | None = None
    """Fill-in programs: what the harness changed in the model's part (:func:`mle_env.agents.repairs.record`);
    None when nothing was."""


class Proposer(Protocol):
    needs_profile: bool

    def propose(self, operator: str, parent: Node | None, ctx: SearchContext) -> Proposal: ...
