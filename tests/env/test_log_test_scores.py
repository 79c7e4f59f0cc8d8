"""log_test_scores: every validated or dev-scored file, and the submission after each step that changed it, is
graded on the test answers into the episode's host-side test_scores.jsonl; what the agent sees is the same
with the option on and off, and nothing of the log reaches the sandbox or the trajectory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import mle_env

ACTIONS: list[dict[str, Any]] = [
    {"type": "shell", "code": "printf 'id,target\\nnope,1\\n' > submission/submission.csv"},  # changed: invalid
    {"type": "validate"},
    {"type": "shell", "code": "cp data/sample_submission.csv submission/submission.csv"},  # changed: valid
    {"type": "shell", "code": "ls submission"},  # unchanged
    {"type": "validate", "path": "data/sample_submission.csv"},
    {"type": "shell", "code": "./validate_submission.sh submission/submission.csv"},  # the endpoint
    {"type": "python", "code": "import pandas as pd\ns = pd.read_csv('data/sample_submission.csv')\n"
                               "s['target'] = 0.9\ns.to_csv('submission/submission.csv', index=False)"},
    {"type": "score_dev", "path": "data/dev/sample_submission.csv"},  # a valid dev prediction (dev_split set)
    {"type": "submit"},
]
DEV_SPLIT = 0.1
#: what differs between two runs of the same actions whatever the option: clocks and where files go
VARYING = {"elapsed", "action_duration", "trajectory", "episode_dir", "grade", "disclosure", "sandbox_info"}


def play(cid: str, **options: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Path]:
    env = mle_env.make(cid, sandbox="local", dev_split=DEV_SPLIT, **options)
    try:
        obs, info = env.reset(seed=0)
        seen, infos = [obs], [info]
        for action in ACTIONS:
            obs, _, _, _, info = env.step(action)
            seen.append(obs)
            infos.append(info)
        return seen, infos, Path(info["episode_dir"])
    finally:
        env.close()


def comparable(obs: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in obs.items() if k != "time_left"}


@pytest.mark.slow
def test_what_the_agent_sees_is_the_same_with_the_log_on(tiny_prepared: str) -> None:
    off, off_infos, off_dir = play(tiny_prepared)
    on, on_infos, on_dir = play(tiny_prepared, log_test_scores=True)
    assert [comparable(o) for o in on] == [comparable(o) for o in off]
    assert [{k: v for k, v in i.items() if k not in VARYING} for i in on_infos] == \
        [{k: v for k, v in i.items() if k not in VARYING} for i in off_infos]
    assert on_infos[-1]["grade"]["score"] == off_infos[-1]["grade"]["score"]
    assert on_infos[-1]["disclosure"]["test_scores_logged"] is True
    assert off_infos[-1]["disclosure"]["test_scores_logged"] is False
    assert not (off_dir / "test_scores.jsonl").exists()
    log = [json.loads(line) for line in (on_dir / "test_scores.jsonl").read_text().splitlines()]
    assert [(r["step"], r["source"]) for r in log] == [(1, "submission"), (2, "validate"), (3, "submission"),
                                                      (5, "validate"), (6, "endpoint"), (7, "submission"),
                                                      (8, "score_dev")]
    assert [r["valid"] for r in log[:2]] == [False, False] and log[1]["sha256"] == log[0]["sha256"]
    assert all(r["valid"] and isinstance(r["score"], float) for r in log[2:-1]), log
    assert on[8]["action"] == "score_dev" and int(on[8]["exit_code"]) == 0 and on[8]["message"].startswith("dev auc")
    assert log[-1]["file"] == "data/dev/sample_submission.csv" and log[-1]["valid"] is False  # dev ids, not test's
    assert log[3]["file"] == "data/sample_submission.csv" and log[2]["sha256"] == log[3]["sha256"]
    trajectory = (on_dir / "trajectory.jsonl").read_text()
    assert log[-1]["sha256"] not in trajectory and "test_scores" not in trajectory.replace('"test_scores_logged"', "")


def test_the_agent_cannot_find_the_log(tiny_prepared: str) -> None:
    env = mle_env.make(tiny_prepared, sandbox="local", log_test_scores=True)
    try:
        env.reset()
        env.step({"type": "shell", "code": "cp data/sample_submission.csv submission/submission.csv"})
        obs, *_ = env.step({"type": "shell", "code": "find / -name 'test_scores*' 2>/dev/null | head; echo done"})
        assert obs["stdout"] == "done\n"
        assert env.unwrapped.last_test_score["source"] == "submission"  # the host's harness code sees it
    finally:
        env.close()


@pytest.mark.slow
def test_aide_keeps_each_node_s_hidden_test_score_in_its_journal(practice_home: Path, tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    policy = mle_env.make_policy("aide", proposer="offline", max_nodes=2, num_drafts=2, journal=str(journal))
    env = mle_env.make("practice-house-prices", sandbox="local", log_test_scores=True)
    try:
        mle_env.run_episode(env, policy, seed=0)
    finally:
        env.close()
    nodes = [json.loads(line) for line in journal.read_text().splitlines() if '"type": "node"' in line]
    assert len(nodes) == 2 and all(n["test_score"]["valid"] and n["test_score"]["score"] > 0 for n in nodes)
    assert all(n["score"] != n["test_score"]["score"] for n in nodes)  # the CV score is the node's own
