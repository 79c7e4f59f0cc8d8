"""AIDE keeps ./submission filled: a node whose program wrote a valid file but printed no score is copied
there while nothing better exists, and a scored node still replaces it. Real episodes (local sandbox) with
a proposer that returns fixed programs, so no LLM is needed."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import mle_env
from mle_env.recording import read_trajectory
from mle_env.scaffolds.aide.journal import Node
from mle_env.scaffolds.aide.proposer import Proposal, SearchContext

COPY_SAMPLE = "import os, shutil\nos.makedirs('submission', exist_ok=True)\n" \
              "shutil.copy('data/sample_submission.csv', 'submission/submission.csv')\n"
BROKEN = "import pandas as pd\npd.read_csv('data/no_such_file.csv')\n"


class FixedProposer:
    """Proposes the given programs in turn (the last one again when they run out)."""

    needs_profile = False

    def __init__(self, *programs: str) -> None:
        self.programs = list(programs)
        self.contexts: list[SearchContext] = []

    def propose(self, operator: str, parent: Node | None, ctx: SearchContext) -> Proposal:
        self.contexts.append(dataclasses.replace(ctx))  # the policy updates its context in place
        code = self.programs.pop(0) if len(self.programs) > 1 else self.programs[0]
        return Proposal(plan=f"{operator} plan", code=code)


def _nodes(journal: Path) -> list[dict]:
    return [json.loads(line) for line in journal.read_text().splitlines() if '"type": "node"' in line]


def test_a_valid_file_without_a_score_is_the_fallback_submission(practice_home: Path, tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    proposer = FixedProposer(BROKEN, COPY_SAMPLE, BROKEN)
    policy = mle_env.make_policy("aide", custom_proposer=proposer, max_nodes=3, num_drafts=3, journal=str(journal))
    env = mle_env.make("practice-house-prices", sandbox="local", time_limit=600)
    result = mle_env.run_episode(env, policy, seed=0)
    env.close()
    nodes = _nodes(journal)
    assert [n["failure"] for n in nodes] == ["wrong_path", "no_score", "wrong_path"]
    assert nodes[1]["validation"] == "valid" and all(n["buggy"] for n in nodes)
    assert result.grade is not None and result.grade.valid_submission  # graded on node 1's file
    # the proposer is told the submission format and the budget left, node by node
    assert proposer.contexts[0].submission["header"] == ["Id", "SalePrice"]
    assert proposer.contexts[0].nodes_left == 3 and proposer.contexts[2].nodes_left == 1
    assert proposer.contexts[2].time_left < proposer.contexts[0].time_left
    assert "./data/train.csv: 1164 rows, 81 columns" in proposer.contexts[0].data_preview


def test_a_scored_node_replaces_the_fallback(practice_home: Path, tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    scored = ("import pandas as pd\nsub = pd.read_csv('data/sample_submission.csv')\nsub['SalePrice'] = 170000.0\n"
              "sub.to_csv('submission/submission.csv', index=False)\nprint('VALIDATION_SCORE: 0.4')\n")
    policy = mle_env.make_policy("aide", custom_proposer=FixedProposer(COPY_SAMPLE, scored), max_nodes=2,
                                 num_drafts=2, journal=str(journal))
    env = mle_env.make("practice-house-prices", sandbox="local", time_limit=600)
    result = mle_env.run_episode(env, policy, seed=0)
    env.close()
    nodes = _nodes(journal)
    assert [n["failure"] for n in nodes] == ["no_score", "ok"] and nodes[1]["promoted"] and not nodes[0]["promoted"]
    assert result.grade is not None and result.grade.valid_submission
    copies = [s["action"]["code"] for s in read_trajectory(Path(result.trajectory))
              if s["type"] == "step" and "submission/.candidate.csv" in s["action"].get("code", "")]
    assert len(copies) == 2 and copies[0].startswith("cp code/node_0/") and copies[1].startswith("cp code/node_1/")


def test_no_new_node_when_the_time_left_would_go_to_the_llm(tmp_path: Path) -> None:
    from mle_env.scaffolds.aide.journal import Journal
    from mle_env.scaffolds.aide.policy import AidePolicy

    policy = AidePolicy(reserve=30)
    policy.journal = Journal(tmp_path / "j.jsonl", {})
    obs = {"steps_left": -1, "time_left": 120.0}
    assert policy._room_for_a_node(obs)  # no LLM call yet: 120 s > 30 + 10
    policy.journal.nodes.append(Node(0, "draft", llm=[{"latency_s": 100.0}]))
    assert not policy._room_for_a_node(obs)  # the next proposal would take about 100 s of the 120
    assert policy._room_for_a_node({"steps_left": -1, "time_left": 150.0})


class SlowProposer(FixedProposer):
    """Takes ``seconds`` to propose, as an LLM does."""

    def __init__(self, seconds: float, *programs: str) -> None:
        super().__init__(*programs)
        self.seconds = seconds

    def propose(self, operator: str, parent: Node | None, ctx: SearchContext) -> Proposal:
        import time

        time.sleep(self.seconds)
        return super().propose(operator, parent, ctx)


@pytest.mark.slow
def test_a_slow_proposal_leaves_the_node_its_whole_run_time(practice_home: Path, tmp_path: Path) -> None:
    """The proposal's time comes out of the episode's time left, not out of the node's own cap (a first
    draft of a local model takes longer than node_timeout: its program used to get 5 s)."""
    policy = mle_env.make_policy("aide", custom_proposer=SlowProposer(3.0, COPY_SAMPLE), max_nodes=1, num_drafts=1,
                                 node_timeout=8, journal=str(tmp_path / "journal.jsonl"))
    env = mle_env.make("practice-house-prices", sandbox="local", time_limit=600)
    result = mle_env.run_episode(env, policy, seed=0)
    env.close()
    runs = [s["action"] for s in read_trajectory(Path(result.trajectory))
            if s["type"] == "step" and "solution.py" in s["action"].get("code", "")]
    assert [run["timeout"] for run in runs] == [8]
