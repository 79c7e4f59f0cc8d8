"""The solution tree and its journal.

Each node is one solution: a plan, its code, the operator that produced it (draft, improve or debug) and
its parent, and what happened when it ran (exit code, run time, output head and tail, the validation
score it printed, whether the validator accepted its submission, and the failure class). A node is
*buggy* when its program failed or timed out, printed no validation score, or wrote a submission the validator rejects.

The journal is a JSONL file: a header line, then one line per node, appended and flushed as each node
finishes, so a killed run can resume from it (:meth:`Journal.open`).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mle_env.jsonl import read_jsonl


@dataclass
class Node:
    """One solution in the tree (see the module docstring)."""

    id: int
    operator: str
    parent: int | None = None
    plan: str = ""
    code: str = ""
    config: dict[str, Any] | None = None
    exit_code: int | None = None
    timed_out: bool = False
    run_time_s: float = 0.0
    output_head: str = ""
    output_tail: str = ""
    output_cut: int = 0
    score: float | None = None
    fold_scores: list[float] = field(default_factory=list)
    score_source: str = ""
    buggy: bool = True
    bug_reason: str = ""
    failure: str = ""
    """The failure class (scaffolds/aide/failures.py): "ok", "syntax", "wrong_path", ... ("" before it ran)."""
    validation: str = ""
    debug_depth: int = 0
    promoted: bool = False
    llm: list[dict[str, Any]] = field(default_factory=list)
    repairs: dict[str, Any] | None = None
    """Fill-in programs: the repairs (:mod:`mle_env.agents.repairs`) that changed the model's part before it
    ran (``fired``, with a ``diff`` of the part as written against the part as run) and those the program
    announced as it ran (``at_run``); None when none fired."""
    test_score: dict[str, Any] | None = None
    """The node's submission graded on the test answers (score, medal, valid) when the env logs hidden test
    scores (``log_test_scores``): for research on the validation-test gap; the search never reads it."""
    created_at: float = field(default_factory=time.time)

    @property
    def output(self) -> str:
        """The program's output as kept: its head, then (when it was long) the tail, with the cut marked."""
        cut = f"\n[... {self.output_cut} characters cut ...]\n" if self.output_cut else ""
        return self.output_head + cut + self.output_tail

    @property
    def submission_path(self) -> str:
        """Where this node's program writes its submission, relative to the sandbox's working directory."""
        return f"code/node_{self.id}/submission/submission.csv"


class Journal:
    """The nodes of one search, persisted to ``path`` as they finish."""

    def __init__(self, path: Path, header: dict[str, Any], nodes: list[Node] | None = None) -> None:
        self.path = Path(path)
        self.header = header
        self.nodes: list[Node] = nodes or []

    @classmethod
    def open(cls, path: Path, header: dict[str, Any]) -> Journal:
        """Resume the journal at ``path`` if it holds this competition's nodes, else start a new one.

        Raises:
            ValueError: the journal belongs to another competition.
        """
        path = Path(path)
        records = read_jsonl(path, repair=True)  # a killed run may have left a torn last line
        if records:
            old = next((r for r in records if r.get("type") == "header"), {})
            if old.get("competition_id") != header.get("competition_id"):
                raise ValueError(f"journal {path} belongs to {old.get('competition_id')!r}, "
                                 f"not {header.get('competition_id')!r}")
            nodes = [Node(**{k: v for k, v in r.items() if k != "type"}) for r in records if r.get("type") == "node"]
            return cls(path, old, nodes)
        path.parent.mkdir(parents=True, exist_ok=True)
        journal = cls(path, header)
        journal._write({"type": "header", **header})
        return journal

    def _write(self, record: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, default=str) + "\n")
            f.flush()

    def append(self, node: Node) -> None:
        self.nodes.append(node)
        self._write({"type": "node", **asdict(node)})

    def next_id(self) -> int:
        return max((n.id for n in self.nodes), default=-1) + 1

    def children(self, node: Node) -> list[Node]:
        return [n for n in self.nodes if n.parent == node.id]

    def good(self) -> list[Node]:
        return [n for n in self.nodes if not n.buggy and n.score is not None]

    def best(self, lower_is_better: bool) -> Node | None:
        """The incumbent: the last node promoted to ./submission, else the good node with the best
        validation score (the direction comes from the competition)."""
        promoted = [n for n in self.nodes if n.promoted]
        if promoted:
            return promoted[-1]
        good = self.good()
        if not good:
            return None
        return (min if lower_is_better else max)(good, key=lambda n: n.score)

    def buggy_leaves(self, max_debug_depth: int) -> list[Node]:
        return [n for n in self.nodes if n.buggy and not self.children(n) and n.debug_depth < max_debug_depth]
