"""AIDE with the offline proposer: its tree, its journal, resuming a killed run, and at least the
baseline's score on every practice competition built by hand (on the pool made with mle-env new, AIDE with 4
nodes falls behind the baseline on a few: benchmarks/practice_pool.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import hand_built_practice

import mle_env
from mle_env.scaffolds.aide.config import AideConfig
from mle_env.scaffolds.aide.journal import Journal, Node
from mle_env.scaffolds.aide.search import next_move


def _episode(competition: str, policy, **env_options):
    env = mle_env.make(competition, sandbox="local", **env_options)
    try:
        return mle_env.run_episode(env, policy, seed=0)
    finally:
        env.close()


HAND_BUILT = hand_built_practice()


@pytest.mark.parametrize("competition", HAND_BUILT)
@pytest.mark.slow
def test_aide_offline_equals_or_beats_the_baseline(practice_home: Path, competition: str, tmp_path: Path,
                                                  baseline_episode) -> None:
    baseline = baseline_episode(competition)
    aide = mle_env.make_policy("aide", proposer="offline", max_nodes=6, journal=str(tmp_path / "journal.jsonl"))
    result = _episode(competition, aide, time_limit=1200)
    assert result.status == "ok" and result.grade.scored
    lower = result.grade.is_lower_better
    assert (result.grade.score <= baseline.grade.score) if lower else (result.grade.score >= baseline.grade.score), (
        result.grade.score, baseline.grade.score)
    nodes = aide.journal.nodes
    assert len(nodes) == 6 and [n.operator for n in nodes[:5]] == ["draft"] * 5
    assert all(n.operator in ("improve", "debug") and n.parent is not None for n in nodes[5:])
    best = aide.journal.best(lower)
    assert best is not None and not best.buggy and best.validation == "valid"


@pytest.mark.slow
def test_journal_records_every_node(practice_home: Path, tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    policy = mle_env.make_policy("aide", proposer="offline", max_nodes=3, num_drafts=2, journal=str(path))
    result = _episode("practice-mnist-digits", policy)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records[0]["type"] == "header" and records[0]["competition_id"] == "practice-mnist-digits"
    nodes = [r for r in records if r["type"] == "node"]
    assert [n["id"] for n in nodes] == [0, 1, 2]
    for n in nodes:
        assert n["code"] and n["plan"] and n["exit_code"] == 0 and n["score"] is not None
        assert "VALIDATION_SCORE" in n["output_head"] + n["output_tail"]
        assert n["score_source"].startswith("VALIDATION_SCORE")
    assert nodes[2]["operator"] == "improve" and result.grade.scored


def test_search_policy() -> None:
    import random

    config = AideConfig(num_drafts=2, debug_prob=1.0, max_debug_depth=2)
    journal = Journal(Path("/nonexistent"), {})
    rng = random.Random(0)
    assert next_move(journal, config, rng, False) == ("draft", None)
    journal.nodes += [Node(0, "draft", buggy=False, score=0.5), Node(1, "draft", bug_reason="boom")]
    operator, parent = next_move(journal, config, rng, False)
    assert (operator, parent.id) == ("debug", 1)  # a buggy leaf, with debug_prob 1
    journal.nodes.append(Node(2, "debug", parent=1, bug_reason="still", debug_depth=2))
    operator, parent = next_move(journal, config, rng, False)
    assert (operator, parent.id) == ("improve", 0)  # depth 2 reached: improve the best instead
    journal.nodes.append(Node(3, "improve", parent=0, buggy=False, score=0.7))
    assert next_move(journal, AideConfig(num_drafts=2, debug_prob=0.0), rng, False)[1].id == 3
    assert next_move(journal, AideConfig(num_drafts=2, debug_prob=0.0), rng, True)[1].id == 0
    uct = AideConfig(num_drafts=2, debug_prob=0.0, search="uct", uct_c=10.0)
    assert next_move(journal, uct, rng, False)[1].id == 3  # 0 has a child, 3 none: exploration favours 3


@pytest.mark.slow
def test_killed_run_resumes_from_its_journal(practice_home: Path, tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    code = (
        "import mle_env\n"
        "env = mle_env.make('practice-mnist-digits', sandbox='local')\n"
        f"policy = mle_env.make_policy('aide', proposer='offline', max_nodes=4, journal={str(journal)!r})\n"
        "mle_env.run_episode(env, policy, seed=0)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], env=os.environ.copy(), start_new_session=True)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        if journal.exists() and journal.read_text().count('"type": "node"') >= 2:
            break
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = journal.read_text().count('"type": "node"')
    assert 2 <= done < 4, "the run should be killed midway"
    policy = mle_env.make_policy("aide", proposer="offline", max_nodes=4, journal=str(journal))
    result = _episode("practice-mnist-digits", policy)
    nodes = policy.journal.nodes
    assert [n.id for n in nodes] == list(range(4))  # the first `done` came from the killed run
    assert result.grade.scored and result.grade.any_medal


def test_journal_survives_torn_lines_across_resumes(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = Journal.open(path, {"competition_id": "c"})
    journal.append(Node(0, "draft", buggy=False, score=1.0))
    with open(path, "a") as f:
        f.write('{"type": "node", "id": 1, "oper')  # a run killed while writing node 1
    resumed = Journal.open(path, {"competition_id": "c"})
    assert [n.id for n in resumed.nodes] == [0]
    resumed.append(Node(1, "draft", buggy=False, score=2.0))
    again = Journal.open(path, {"competition_id": "c"})
    assert [n.id for n in again.nodes] == [0, 1]
    with pytest.raises(ValueError, match="belongs to 'c'"):
        Journal.open(path, {"competition_id": "other"})


def test_node_output_is_kept_once_and_long_output_marks_its_cut() -> None:
    from mle_env.scaffolds.aide import prompts
    from mle_env.scaffolds.aide.policy import AidePolicy

    policy = AidePolicy(output_chars=100)
    short = Node(0, "draft")
    policy._record_run(short, {"stdout": "", "stderr": "Traceback\nKeyError: 'x'\n", "exit_code": 1,
                               "timed_out": 0}, 1.0)
    assert short.buggy and short.output.count("KeyError") == 1 and short.output_cut == 0
    assert prompts.debug("context", short, 2000).count("KeyError: 'x'") == 2  # the bug reason and the output
    long = Node(1, "draft")
    stdout = "a" * 150 + "b" * 100 + "VALIDATION_SCORE: 0.5\n"  # 272 characters
    policy._record_run(long, {"stdout": stdout, "stderr": "", "exit_code": 0, "timed_out": 0}, 1.0)
    assert long.output_head == "a" * 100 and long.output_tail.endswith("VALIDATION_SCORE: 0.5\n")
    assert long.output_cut == 72 and "[... 72 characters cut ...]" in long.output
    assert long.output.replace("\n[... 72 characters cut ...]\n", "") == stdout[:100] + stdout[-100:]


def test_promotion_needs_a_paired_fold_gain_beyond_one_standard_error() -> None:
    from mle_env.scaffolds.aide.policy import better

    def node(score: float, folds: list[float], buggy: bool = False) -> Node:
        return Node(0, "draft", buggy=buggy, score=score, fold_scores=folds)

    best = node(0.80, [0.80, 0.81, 0.79])
    # fold gains 0.02, 0.02, 0.01: mean 0.0167 > SE 0.0058 / sqrt(3) = 0.0033
    assert better(node(0.8167, [0.82, 0.83, 0.80]), best, lower_is_better=False)
    # gains 0.05, -0.03, 0.01: mean 0.01 < SE 0.04 / sqrt(3) = 0.023, a lucky node is not promoted
    assert not better(node(0.81, [0.85, 0.78, 0.80]), best, lower_is_better=False)
    # lower is better: the same consistent gains as losses
    assert better(node(0.78, [0.78, 0.79, 0.78]), best, lower_is_better=True)
    assert not better(node(0.8167, [0.82, 0.83, 0.80]), best, lower_is_better=True)
    assert better(node(0.9, []), node(0.8, []), lower_is_better=False)  # no folds: the better score wins
    assert not better(node(0.9, [], buggy=True), None, lower_is_better=False)
    assert better(node(0.1, []), None, lower_is_better=False)
