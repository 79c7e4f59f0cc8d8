"""Honest accounting in evaluations: every scheduled episode stays in the denominator, only the
infrastructure's own failures are retried, and our bugs and the caller's mistakes stop the evaluation
loudly, before the first episode where they can be seen.

The policies are module-level classes so that the spawned worker processes can unpickle them."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from mle_env.agents.policy import BasePolicy
from mle_env.errors import ConfigError, NotPrepared, PrerequisiteError, UnknownCompetition
from mle_env.evaluation import EvalConfig, EvaluationAborted, evaluate, summarize
from mle_env.evaluation.report import render
from mle_env.evaluation.results import read_results
from mle_env.evaluation.stats import episodes, outcome, scheduled_keys


class SubmitsSample(BasePolicy):
    """Copies the sample submission and submits: a quick, always valid episode."""

    def act(self, obs, info):
        if obs["action"] == "reset":
            return "cp data/sample_submission.csv submission/submission.csv"
        return {"type": "submit"}


class KillsPython(BasePolicy):
    """What LLM agents are seen doing to stop a stuck run: `pkill -f python` (which kills the sandbox's own
    worker and interpreter), then submit."""

    def act(self, obs, info):
        return "pkill -f python" if obs["action"] == "reset" else {"type": "submit"}


class NeedsAnExtraOnTheWorkers(SubmitsSample):
    """Builds in the driver, but not in the workers: like a dependency present here and missing on a node."""

    def __init__(self) -> None:
        super().__init__()
        if os.environ.get("DRIVER_PID") != str(os.getpid()):
            import not_installed_anywhere  # noqa: F401


@pytest.fixture
def workers_see(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker processes see the test's own competitions."""
    monkeypatch.setenv("MLE_ENV_COMPETITIONS", str(home.parent / "competitions"))


def config(out: Path, competition: str = "tiny-comp", **kwargs) -> EvalConfig:
    options = dict(agent="submits-sample", policy_factory=SubmitsSample, competitions=[competition], seeds=2,
                   out=out, env_options={"sandbox": "local"})
    return EvalConfig(**{**options, **kwargs})


def rendered(summary: dict) -> str:
    console = Console(file=io.StringIO(), width=200)
    render(summary, console)
    return console.file.getvalue()


@pytest.mark.slow
def test_an_infra_failure_is_retried_then_the_episode_counts(tiny_prepared: str, workers_see: None,
                                                             tmp_path: Path) -> None:
    out = tmp_path / "run"
    evaluate(config(out, inject_infra_failures=[f"{tiny_prepared}:1"]))
    attempts = [(r["seed"], r["attempt"], r["status"]) for r in read_results(out)]
    assert sorted(attempts) == [(0, 0, "ok"), (1, 0, "infra_error"), (1, 1, "ok")]
    failed = next(r for r in read_results(out) if r["status"] == "infra_error")
    assert "injected infrastructure failure" in failed["error"] and failed["end"] == "infra_error"
    summary = summarize(out)
    e = summary["episodes"]
    assert (e["scheduled"], e["ok"], e["infra_error"], e["infra_error_attempts"], e["infra_retried_then_finished"]) \
        == (2, 2, 0, 1, 1)
    assert summary["per_competition"][tiny_prepared]["n"] == 2
    assert "1 attempt(s) failed for infrastructure reasons: 1 were retried" in rendered(summary)


@pytest.mark.slow
def test_an_infra_failure_past_the_retries_counts_as_no_medal_and_is_reported_apart(
    tiny_prepared: str, workers_see: None, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    evaluate(config(out, max_infra_retries=2, inject_infra_failures=[f"{tiny_prepared}:1:5"]))
    records = read_results(out)
    assert [(r["attempt"], r["status"]) for r in records if r["seed"] == 1] == [(0, "infra_error"), (1, "infra_error"),
                                                                                (2, "infra_error")]
    summary = summarize(out)
    e = summary["episodes"]
    assert (e["scheduled"], e["ok"], e["infra_error"], e["counted_as_no_medal"], e["infra_error_attempts"]) == \
        (2, 1, 1, 1, 3)
    row = summary["per_competition"][tiny_prepared]
    assert row["n"] == 2 and row["infra_errors"] == 1  # in the denominator: 2 episodes, not 1
    ok = next(r for r in records if r["seed"] == 0)
    medal = int((ok["grade"]["medal_tier"] or 0) >= 1)
    assert row["any_medal"]["successes"] == medal and row["any_medal"]["pass_at_k"][1] == pytest.approx(medal / 2)
    assert summary["leaderboard"]["any_medal"]["all"]["per_seed"] == {0: 100.0 * medal, 1: 0.0}
    text = rendered(summary)
    assert "2 episodes scheduled: 1 ok, 0 sandbox_broken, 0 agent_error, 1 infra_error after 2 retries" in text
    assert "1 episode(s) still failed after the retries and count as no medal" in text
    # a rerun tries the failed episode again (its attempts go on counting), and then it finishes
    evaluate(config(out, max_infra_retries=2))
    assert [(r["attempt"], r["status"]) for r in read_results(out) if r["seed"] == 1][-1] == (3, "ok")
    assert summarize(out)["episodes"]["infra_error"] == 0


@pytest.mark.parametrize(("change", "error", "message"), [
    (dict(env_options={"sandbox": "local", "time_limit": 0}), ConfigError, "time_limit must be"),
    (dict(env_options={"sandbox": "local", "colour": "red"}), ConfigError, "unknown env option 'colour'"),
    (dict(env_options={"sandbox": "nowhere"}), ConfigError, "sandbox must be one of"),
    (dict(seeds=0), ConfigError, "seeds must be"),
    (dict(max_infra_retries=-1), ConfigError, "max_infra_retries must be"),
    (dict(policy_factory=None, agent="baseline", agent_options={"colour": "red"}), ValueError,
     "takes no option 'colour'"),
    (dict(competitions=["no-such-competition"]), UnknownCompetition, "no-such-competition"),
])
def test_bad_options_stop_the_evaluation_before_the_first_episode(
    tiny_prepared: str, workers_see: None, tmp_path: Path, change: dict, error: type, message: str
) -> None:
    out = tmp_path / "run"
    with pytest.raises(error, match=message):
        evaluate(config(out, **change))
    assert read_results(out) == [] and not (out / "config.json").exists()


def test_unprepared_data_stops_the_evaluation_before_the_first_episode(
    make_competition: Callable[..., Path], home: Path, workers_see: None, tmp_path: Path
) -> None:
    make_competition()  # registered, never prepared, and its only source (Kaggle) cannot be reached here
    out = tmp_path / "run"
    with pytest.raises(NotPrepared, match=r"(?s)tiny-comp is not prepared.*`mle-env prepare tiny-comp`"):
        evaluate(config(out))
    assert read_results(out) == []


def test_the_cli_says_what_to_run_and_exits_2(make_competition: Callable[..., Path], home: Path,
                                              tmp_path: Path) -> None:
    make_competition()
    env = {**os.environ, "MLE_ENV_COMPETITIONS": str(home.parent / "competitions"), "MLE_ENV_HOME": str(home)}
    out = subprocess.run([sys.executable, "-m", "mle_env.cli", "eval", "--agent", "baseline", "--competitions",
                          "tiny-comp", "--sandbox", "local", "--out", str(tmp_path / "run")],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "error: tiny-comp is not prepared" in out.stderr and "`mle-env prepare tiny-comp`" in out.stderr
    assert "1 competitions x 1 seeds = 1 episodes scheduled" in out.stdout


def test_an_error_in_a_worker_that_is_not_the_infrastructures_stops_the_evaluation(
    tiny_prepared: str, workers_see: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRIVER_PID", str(os.getpid()))
    out = tmp_path / "run"
    with pytest.raises(EvaluationAborted, match="(?s)not an infrastructure failure.*not_installed_anywhere"):
        evaluate(config(out, policy_factory=NeedsAnExtraOnTheWorkers, seeds=3))
    assert read_results(out) == []  # never retried, never recorded as an infrastructure error


@pytest.mark.docker
def test_a_missing_image_stops_the_evaluation_before_the_first_episode(
    tiny_prepared: str, workers_see: None, docker_engine: None, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    with pytest.raises(PrerequisiteError, match="cannot start here.*no-such-image"):
        evaluate(config(out, env_options={"sandbox": "docker", "image": "no-such-image:0"}))
    assert read_results(out) == []


# Sandboxes that contain an agent's processes: the only ones in which a policy may kill its own. Never
# "unisolated": there `pkill -f python` would kill this host's Python processes, pytest included.
CONTAINING = [pytest.param("docker", marks=pytest.mark.docker), "local"]


@pytest.fixture(params=CONTAINING)
def containing_sandbox(request: pytest.FixtureRequest) -> str:
    assert request.param != "unisolated"
    request.getfixturevalue("docker_engine" if request.param == "docker" else "bwrap_ready")
    return request.param


def test_a_policy_that_kills_its_sandbox_scores_no_medal_in_every_episode(
    tiny_prepared: str, workers_see: None, containing_sandbox: str, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    seeds = 3
    evaluate(config(out, agent="kills-python", policy_factory=KillsPython, seeds=seeds, max_infra_retries=1,
                    env_options={"sandbox": containing_sandbox}))
    records = read_results(out)
    summary = summarize(out)
    rows = episodes(records, scheduled_keys(records, summary["config"]))
    assert len(rows) == seeds  # none dropped
    assert all(not (r.get("grade") or {}).get("medal_tier") for r in rows)
    # whether the sandbox withstood it or broke, it is the agent's result: never an infrastructure error
    assert {outcome(r) for r in rows} <= {"ok", "sandbox_broken"}, [(r["status"], r["end"], r["error"]) for r in rows]
    assert all(r["status"] != "infra_error" for r in records) and len(records) == seeds  # nothing retried
    e = summary["episodes"]
    assert e["scheduled"] == seeds and e["ok"] + e["sandbox_broken"] == seeds
    row = summary["per_competition"][tiny_prepared]
    assert row["n"] == seeds and all(row[t]["successes"] == 0 for t in ("any_medal", "gold", "above_median"))
    assert summary["leaderboard"]["any_medal"]["all"]["mean"] == 0.0
    assert summary["pass_at_k"]["any_medal"][seeds]["mean"] == 0.0
