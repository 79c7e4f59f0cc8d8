"""Bring your own agent (issue 11): `--agent module:Class` and `--agent path/to/file.py:Class` wherever a
bundled agent's name goes, resolved with one-line errors, and evaluated with pass@k in spawned workers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mle_env.agents import AgentError, absolute_spec, make_policy, with_episode_seed

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = "examples/my_agent.py:MyPolicy"


def test_a_file_spec_and_a_module_spec_build_the_users_class(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    policy = make_policy(EXAMPLE, max_text_features=10)
    assert type(policy).__name__ == "MyPolicy" and policy.max_text_features == 10
    (tmp_path / "their_agents.py").write_text("class Mine:\n    def reset(self, obs, info): pass\n"
                                              "    def act(self, obs, info): return {'type': 'submit'}\n")
    monkeypatch.chdir(tmp_path)  # `mle-env` is a console script: the current directory is tried for modules
    assert type(make_policy("their_agents:Mine")).__name__ == "Mine"
    assert absolute_spec("their_agents.py:Mine") == f"{tmp_path / 'their_agents.py'}:Mine"
    assert absolute_spec("baseline") == "baseline" and absolute_spec("a.b:C") == "a.b:C"


@pytest.mark.parametrize(("spec", "says"), [
    ("examples/nope.py:MyPolicy", "no such file"),
    ("examples/my_agent.py:Nope", "has no 'Nope'; it defines MyPolicy"),
    ("examples/my_agent.py", "name the policy class too"),
    ("no_such_module_anywhere:X", "no module named 'no_such_module_anywhere'"),
    ("json:JSONDecoder", "is not a policy: it has no reset and no act method"),
    ("nope", "unknown agent 'nope'"),
])
def test_a_bad_spec_is_one_clear_line(spec: str, says: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    with pytest.raises(AgentError) as e:
        make_policy(spec)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_an_unknown_option_of_a_users_policy_lists_its_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    with pytest.raises(AgentError, match="takes no option 'colour'; its options: seed, max_text_features"):
        make_policy(EXAMPLE, colour="red")


def test_the_episode_seed_goes_to_policies_that_take_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    assert with_episode_seed(EXAMPLE, {}, 2) == {"seed": 2}
    assert with_episode_seed(EXAMPLE, {"seed": 9}, 2) == {"seed": 9}  # the user's own option wins
    assert with_episode_seed("aide", {}, 2) == {}  # aide has its own seed option semantics


@pytest.mark.slow
def test_eval_of_a_policy_in_a_users_file_reports_pass_at_k(practice_session_home: Path, tmp_path: Path) -> None:
    """The issue's own command, from the repository root with a relative path, in 2 spawned workers."""
    out = tmp_path / "run"
    env = {**os.environ, "MLE_ENV_HOME": str(practice_session_home), "COLUMNS": "160"}
    result = subprocess.run(
        [sys.executable, "-m", "mle_env.cli", "eval", "--agent", EXAMPLE, "--competitions",
         "practice-fine-food-reviews", "practice-house-prices", "practice-mnist-digits", "--seeds", "3",
         "--workers", "2", "--sandbox", "local", "--out", str(out)],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    for text in ("pass@1", "pass@3", "9 episodes scheduled: 9 ok"):
        assert text in " ".join(result.stdout.split()), text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["pass_at_k"]["any_medal"]["3"]["mean"] is not None
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert {r["agent"] for r in records} == {EXAMPLE} and all(r["grade"]["valid_submission"] for r in records)
    assert any(r["grade"]["any_medal"] for r in records)  # it trains a real model where it can
