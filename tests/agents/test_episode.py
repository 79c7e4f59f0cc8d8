"""run_episode: results, crashing agent code, who is accountable for how an episode ended (only the env
can declare an infrastructure error), the CLI's run command, and interactive play."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

import mle_env
from mle_env.agents import make_policy
from mle_env.agents.policy import BasePolicy
from mle_env.errors import SandboxUnavailable


class Crashing(BasePolicy):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def act(self, obs, info):
        self.calls += 1
        if self.calls == 2:
            raise RuntimeError("a bug in the agent")
        return "printf 'id,target\\n' > submission/submission.csv"


def test_crashing_agent_code_is_an_agent_error_and_still_graded(tiny_prepared: str) -> None:
    env = mle_env.make(tiny_prepared, sandbox="local")
    result = mle_env.run_episode(env, Crashing(), seed=3)
    env.close()
    assert result.status == "agent_error" and "a bug in the agent" in result.error
    assert result.end == "submitted" and result.grade.status == "invalid"  # the file it left was graded
    assert result.steps == 2 and result.hardware["kind"] == "local"
    steps = [json.loads(line) for line in Path(result.trajectory).read_text().splitlines()]
    assert "a bug in the agent" in steps[-2]["policy"]["agent_error"]


class CrashingReset(BasePolicy):
    def reset(self, obs, info):
        raise KeyError("missing setting")

    def act(self, obs, info):  # pragma: no cover - never reached
        return "ls"


def test_a_policy_that_crashes_in_reset_is_an_agent_error(tiny_prepared: str) -> None:
    env = mle_env.make(tiny_prepared, sandbox="local")
    result = mle_env.run_episode(env, CrashingReset())
    env.close()
    assert result.status == "agent_error" and "missing setting" in result.error
    assert result.end == "submitted" and result.grade.status == "missing"


class ClaimsInfraError(BasePolicy):
    """Writes a submission, then raises SandboxUnavailable as if the infrastructure had failed."""

    def act(self, obs, info):
        if obs["action"] == "reset":
            return "cp data/sample_submission.csv submission/submission.csv"
        raise SandboxUnavailable("the container is gone (says the policy)")


def test_a_policy_raising_sandbox_unavailable_is_an_agent_error(tiny_prepared: str) -> None:
    env = mle_env.make(tiny_prepared, sandbox="local")
    result = mle_env.run_episode(env, ClaimsInfraError(), seed=0)
    env.close()
    assert result.status == "agent_error" and "says the policy" in result.error
    assert result.end == "submitted" and result.grade.status == "scored"  # graded on what it left


class Writes(BasePolicy):
    def act(self, obs, info):
        return "echo working"


def test_an_infrastructure_failure_the_env_reports_is_an_infra_error(tiny_prepared: str) -> None:
    from mle_env.evaluation.episodes import inject_infra_failure

    env = mle_env.make(tiny_prepared, sandbox="local")

    def on_step(step, *_):
        if step == 1:
            inject_infra_failure(env)

    result = mle_env.run_episode(env, Writes(), seed=0, on_step=on_step)
    env.close()
    assert (result.status, result.end, result.grade, result.steps) == ("infra_error", "infra_error", None, 2)
    assert "injected infrastructure failure" in result.error


class ScriptedEnv:
    """Stands in for MLEEnv: ends the episode at the first step with the given info status."""

    def __init__(self, end: str, truncated: bool = True) -> None:
        self.end, self.is_truncated, self.actions = end, truncated, []
        self.unwrapped = self

    def annotate(self, **data):
        pass

    def reset(self, seed=None, options=None):
        return {"action": "reset", "message": ""}, {"status": "running", "sandbox_info": {"kind": "fake"}}

    def step(self, action):
        self.actions.append(action)
        obs = {"action": "shell", "message": f"ended: {self.end}"}
        return obs, 0.0, not self.is_truncated, self.is_truncated, {"status": self.end, "grade": None}


@pytest.mark.parametrize(("end", "status"), [("sandbox_broken", "ok"), ("infra_error", "infra_error"),
                                              ("truncated", "ok")])
def test_the_env_decides_how_an_episode_ended(end: str, status: str) -> None:
    result = mle_env.run_episode(ScriptedEnv(end), Writes())
    assert (result.status, result.end) == (status, end)
    if end != "truncated":
        assert result.error == f"ended: {end}"
    assert result.to_dict()["end"] == end  # kept in the record, so reports can count it


def test_an_agent_error_stays_the_agents_even_when_the_env_then_fails() -> None:
    env = ScriptedEnv("infra_error")

    class Raises(BasePolicy):
        def act(self, obs, info):
            raise SandboxUnavailable("no, really")

    result = mle_env.run_episode(env, Raises())
    assert env.actions == [{"type": "submit"}]
    assert (result.status, result.end) == ("agent_error", "infra_error") and "no, really" in result.error


class FailsToClose(Writes):
    def close(self):
        raise OSError("cannot clean up")


def test_a_policy_failing_in_close_is_an_agent_error() -> None:
    result = mle_env.run_episode(ScriptedEnv("truncated"), FailsToClose())
    assert result.status == "agent_error" and "cannot clean up" in result.error


def test_unknown_agent_and_option() -> None:
    with pytest.raises(ValueError, match="unknown agent 'nope'; choose one of baseline, react, aide, human"):
        make_policy("nope")
    with pytest.raises(ValueError, match="agent 'baseline' takes no option 'model'; its options: pipeline_timeout"):
        make_policy("baseline", model="gpt")
    with pytest.raises(ValueError, match="unknown aide option"):
        make_policy("aide", colour="red")


def cli_env(home: Path) -> dict[str, str]:
    """The environment a subprocess needs to see the test's own competitions and cache."""
    return {**os.environ, "MLE_ENV_COMPETITIONS": str(home.parent / "competitions"), "COLUMNS": "120"}


@pytest.mark.slow
def test_cli_run_json(tiny_prepared: str, home: Path) -> None:
    out = subprocess.run(["mle-env", "run", tiny_prepared, "--agent", "baseline", "--sandbox", "local", "--json"],
                         capture_output=True, text=True, env=cli_env(home))
    result = json.loads(out.stdout)
    assert out.returncode == 0, out.stderr
    assert result["status"] == "ok" and result["grade"]["valid_submission"]
    assert result["grade"]["competition_id"] == "tiny-comp"


@pytest.mark.slow
def test_play_end_to_end_through_a_terminal(tiny_prepared: str, home: Path) -> None:
    child = pexpect.spawn(sys.executable, ["-m", "mle_env.cli", "play", tiny_prepared, "--sandbox", "local"],
                          encoding="utf-8", timeout=60, env=cli_env(home))
    child.expect("mle-env> ")
    child.sendline("ls data")
    child.expect("sample_submission.csv")
    child.expect("mle-env> ")
    child.sendline(":help")
    child.expect(":validate")
    child.expect("mle-env> ")
    child.sendline(":py")
    child.expect(r"\.\.\. ")
    child.sendline("import pandas as pd")
    child.expect(r"\.\.\. ")
    child.sendline("s = pd.read_csv('data/sample_submission.csv'); s.to_csv('submission/submission.csv', index=False)")
    child.expect(r"\.\.\. ")
    child.sendline(":end")
    child.expect("mle-env> ")
    child.sendline(":py len(s)")
    child.expect(r"\b10\b")
    child.expect("mle-env> ")
    child.sendline(":validate")
    child.expect("valid")
    child.expect("mle-env> ")
    child.sendline(":submit")
    child.expect("scored")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_play_ctrl_d_submits(tiny_prepared: str, home: Path) -> None:
    child = pexpect.spawn(sys.executable, ["-m", "mle_env.cli", "play", tiny_prepared, "--sandbox", "local"],
                          encoding="utf-8", timeout=60, env=cli_env(home))
    child.expect("mle-env> ")
    child.sendeof()
    child.expect("submitting")
    child.expect("missing")
    child.expect(pexpect.EOF)


def play(tiny_prepared: str, home: Path) -> pexpect.spawn:
    child = pexpect.spawn(sys.executable, ["-m", "mle_env.cli", "play", tiny_prepared, "--sandbox", "local"],
                          encoding="utf-8", timeout=60, env=cli_env(home))
    child.expect("mle-env> ")
    return child


def interrupt_after_start(child: pexpect.spawn, line: str) -> float:
    """Type ``line`` (an action that runs for 100 s), then Ctrl-C once it has started; returns when."""
    child.sendline(line)
    time.sleep(2)
    child.sendintr()
    return time.monotonic()


@pytest.mark.slow
def test_play_ctrl_c_cancels_the_action_and_a_second_ends_the_episode_graded(tiny_prepared: str,
                                                                              home: Path) -> None:
    child = play(tiny_prepared, home)
    began = interrupt_after_start(child, "sleep 100; echo never")
    child.expect("cancelling the action")
    child.expect(r"cancelled \(Ctrl-C\)")
    child.expect(r"\[exit 130")
    child.expect("mle-env> ")
    assert time.monotonic() - began < 30  # back at the prompt long before the action's 100 s
    child.sendline(":py x = 41")
    child.expect("mle-env> ")
    interrupt_after_start(child, ":py import time; time.sleep(100)")
    child.expect("KeyboardInterrupt")
    child.expect("mle-env> ")
    child.sendline(":py x + 1")  # the interpreter kept its state
    child.expect(r"\b42\b")
    child.expect("mle-env> ")
    child.sendline("cp data/sample_submission.csv submission/submission.csv")
    child.expect("mle-env> ")
    child.sendintr()  # a lone Ctrl-C at the prompt only warns
    child.expect("Ctrl-C again, or Ctrl-D, ends the episode")
    child.expect("mle-env> ")
    child.sendintr()
    child.expect("second Ctrl-C: submitting")
    child.expect("scored")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    [trajectory] = (home / "trajectories").rglob("trajectory.jsonl")
    footer = json.loads(trajectory.read_text().splitlines()[-1])
    assert footer["status"] == "submitted"


@pytest.mark.slow
def test_play_two_ctrl_c_during_an_action_end_the_episode_graded(tiny_prepared: str, home: Path) -> None:
    child = play(tiny_prepared, home)
    interrupt_after_start(child, "sleep 100")
    time.sleep(0.3)
    child.sendintr()
    child.expect(r"ends, graded|second Ctrl-C")  # the second came during the action, or at the next prompt
    child.expect("submitting")
    child.expect("missing")  # graded: no submission was written
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
