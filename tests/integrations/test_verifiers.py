"""The verifiers adapter, driven through verifiers' own code: its ``vf-eval`` entry point (``python -m
mle_env.integrations.verifiers``, a subprocess, as a user runs it) against an OpenAI-compatible server, and
its ``Env.run_slot`` in this process for the rollout's edge cases. The scripted model is a small real HTTP
server (``fake_llm``) answering with the tool calls of tests/integrations/insults_script.py; the real-model
test uses the local LLM server. Every episode runs in the local (bubblewrap) sandbox on the prepared insults
competition.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from insults_script import COMPETITION, TOOL_CALLS
from llm_fixture import FakeOpenAI, chat_body, error_body, fake_llm, llm_base_url  # noqa: F401 - fixtures

try:
    import verifiers.v1 as vf
except ImportError as e:
    if os.environ.get("MLE_ENV_REQUIRE_RL") == "1":
        raise
    pytest.skip(f"cannot import verifiers ({e}); pip install 'mle-env[verifiers]'", allow_module_level=True)

from verifiers.v1.env import RunSlot  # noqa: E402

from mle_env.errors import ConfigError, UnknownCompetition  # noqa: E402
from mle_env.integrations.verifiers import (  # noqa: E402
    INFO_KEY,
    MLETasksetConfig,
    MLEVerifiersEnvConfig,
    load_environment,
    main,
)
from mle_env.recording import read_trajectory  # noqa: E402
from mle_env.text_interface import SYSTEM_PROMPT  # noqa: E402

TOOL_NAMES = ["shell", "python", "validate", "submit"]
KEY_VAR = "MLE_ENV_TEST_LLM_KEY"


def tool_call(i: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def script(fake: FakeOpenAI, calls: list[tuple[str, dict[str, Any]]]) -> None:
    """Answer with one tool call per request, in order; any request after the script gets a 400."""
    for i, (name, arguments) in enumerate(calls):
        fake.reply(200, chat_body("", [tool_call(i, name, arguments)]))
    fake.reply(400, error_body("the script has no more replies"))


def run_cli(tmp_path: Path, url: str, model: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m mle_env.integrations.verifiers`` (verifiers' vf-eval), writing its run to tmp_path/runs/run."""
    cmd = [sys.executable, "-m", "mle_env.integrations.verifiers", "--env.taskset.sandbox", "local", *args,
           "-m", model, "--client.base-url", url, "--client.api-key-var", KEY_VAR, "--no-push", "--no-rich",
           "-o", str(tmp_path / "runs"), "--run.name", "run"]
    return subprocess.run(cmd, cwd=REPO, env={**os.environ, KEY_VAR: "sk-test"}, capture_output=True, text=True,
                          timeout=timeout)


def vf_eval(tmp_path: Path, url: str, model: str, *args: str, timeout: float = 300) -> dict[str, Any]:
    """Run the CLI once; returns the one trace of its run."""
    done = run_cli(tmp_path, url, model, *args, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    episodes = [json.loads(line) for line in (tmp_path / "runs" / "run" / "traces.jsonl").read_text().splitlines()]
    assert len(episodes) == 1 and len(episodes[0]["traces"]) == 1, episodes
    return episodes[0]["traces"][0]


def records(path: str | Path) -> dict[str, Any]:
    """An episode's trajectory as {"header", "steps", "footer"} (the footer is written when the env ends or is
    closed)."""
    lines = read_trajectory(Path(path))
    return {"header": lines[0], "steps": [r for r in lines if r["type"] == "step"],
            "footer": next((r for r in lines if r["type"] == "footer"), None)}


def footer(summary: dict[str, Any]) -> dict[str, Any]:
    return records(summary["trajectory"])["footer"]


# --- through vf-eval -------------------------------------------------------------------------------------
@pytest.mark.slow
def test_vf_eval_scripted_policy_medals_on_insults(insults_home: Path, bwrap_ready: None,
                                                   fake_llm: FakeOpenAI, tmp_path: Path) -> None:  # noqa: F811
    script(fake_llm, TOOL_CALLS)
    trace = vf_eval(tmp_path, fake_llm.url, "fake-model", "--env.taskset.max-turns", "8")

    summary = trace["info"][INFO_KEY]
    grade = summary["grade"]
    assert trace["ok"] and not trace["errors"], trace["errors"]
    assert summary["end"] == "submitted" and summary["steps"] == len(TOOL_CALLS)
    assert grade["competition_id"] == COMPETITION and grade["valid_submission"] and grade["any_medal"], grade
    # the rubric's reward is the episode's (the medal tier), with the grade's metrics beside it
    assert trace["rewards"]["episode_reward"]["score"] == summary["reward"] == grade["medal_tier"] >= 1
    assert trace["metrics"] == {"medal_tier": grade["medal_tier"], "valid_submission": 1.0, "submitted": 1.0,
                                "steps": float(len(TOOL_CALLS))}
    assert footer(summary)["status"] == "submitted" and footer(summary)["grade"]["medal"] == grade["medal"]

    # what the model saw: the system prompt and the task, the four tools, and each result as a tool message
    assert len(fake_llm.requests) == len(TOOL_CALLS)  # submit ended it: no request after the script
    first, second = fake_llm.requests[0], fake_llm.requests[1]
    assert [t["function"]["name"] for t in first["tools"]] == TOOL_NAMES
    assert first["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert first["messages"][1]["role"] == "user" and "# Files" in first["messages"][1]["content"]
    result = second["messages"][-1]
    assert result["role"] == "tool" and result["tool_call_id"] == "call_0"
    assert result["content"].startswith("shell: exit code 0") and "train.csv" in result["content"]
    assert "budget left:" in result["content"] and "7 steps" in result["content"]
    # the trace is one conversation: each request extended the previous one
    nodes = trace["nodes"]
    assert [n.get("parent") for n in nodes] == [None, *range(len(nodes) - 1)]
    assert [n["message"]["role"] for n in nodes] == ["system", "user", *["assistant", "tool"] * 3, "assistant"]


@pytest.mark.llm
@pytest.mark.slow
def test_vf_eval_real_llm_reaches_a_graded_end(insults_home: Path, bwrap_ready: None, llm_base_url: str,  # noqa: F811
                                               tmp_path: Path) -> None:
    with urllib.request.urlopen(f"{llm_base_url}/models", timeout=30) as response:
        model = json.load(response)["data"][0]["id"]
    trace = vf_eval(tmp_path, llm_base_url, model, "--env.taskset.max-turns", "2", "--env.taskset.make-options",
                    json.dumps({"time_limit": 600, "action_timeout": 120}), "--sampling.max-tokens", "256",
                    timeout=540)

    summary = trace["info"][INFO_KEY]
    assert trace["ok"] and not trace["errors"], trace["errors"]
    assert summary["end"] in ("submitted", "truncated", "no_action") and 1 <= summary["steps"] <= 2, summary
    assert summary["grade"]["status"] in ("scored", "missing", "invalid"), summary["grade"]
    assert trace["rewards"]["episode_reward"]["score"] == summary["reward"] == summary["grade"]["medal_tier"]
    assert footer(summary)["status"] in ("submitted", "truncated")
    assert trace["num_output_tokens"] > 0  # the model's turns went through verifiers' interception


def test_vf_eval_reports_a_bad_option_before_any_rollout(insults_home: Path, fake_llm: FakeOpenAI,  # noqa: F811
                                                        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["vf-eval"])  # vf-eval rewrites sys.argv for its parser
    with pytest.raises(SystemExit) as exit_:
        main(["--env.taskset.competitions", '["insluts"]', "-m", "fake-model", "--client.base-url", fake_llm.url,
              "--no-push", "--no-rich", "-o", str(tmp_path)])
    assert exit_.value.code != 0
    shown = " ".join(capsys.readouterr().err.replace("\u2502", " ").split())  # verifiers draws a box around it
    assert "Unknown competition 'insluts'. Did you mean: 'insults'?" in shown
    assert not fake_llm.requests and not list(tmp_path.iterdir())


@pytest.mark.slow
def test_vf_eval_says_in_one_line_that_the_data_is_not_prepared(home: Path, fake_llm: FakeOpenAI,  # noqa: F811
                                                               tmp_path: Path) -> None:
    done = run_cli(tmp_path, fake_llm.url, "fake-model")
    assert done.returncode != 0 and not fake_llm.requests
    assert done.stderr.strip().splitlines()[-1] == (
        f"mle-env: '{COMPETITION}' is not prepared (no {home / COMPETITION / 'prepared' / 'manifest.json'}); "
        f"run `mle-env prepare {COMPETITION}` first")


# --- load-time validation --------------------------------------------------------------------------------
@pytest.mark.parametrize("options, error, text", [
    ({"competitions": ["no-such-competition"]}, UnknownCompetition, "no-such-competition"),
    ({"seeds": [1, 1]}, ConfigError, "seeds must be distinct"),
    ({"seeds": ["0"]}, ConfigError, "seeds must be one or more ints"),
    ({"max_turns": 0}, ConfigError, "max_turns must be a positive int"),
    ({"reward": "gold"}, ConfigError, "reward must be one of"),
    ({"sandbox": "dockr"}, ConfigError, "sandbox must be one of"),
    ({"memory": "lots"}, ConfigError, "memory must be a size"),
    ({"time_limt": 60}, ConfigError, "did you mean 'time_limit'"),
    ({"max_episode_steps": 3}, ConfigError, "max_turns is the step budget"),
])
def test_load_environment_rejects_a_bad_option_in_one_line(insults_home: Path, options: dict[str, Any],
                                                           error: type[Exception], text: str) -> None:
    with pytest.raises(error) as raised:
        load_environment(**{"sandbox": "local", **options})
    assert text in str(raised.value) and "\n" not in str(raised.value)


def test_load_environment_rows_and_defaults(insults_home: Path) -> None:
    env = load_environment(["insults"], seeds=[3, 5], sandbox="local", max_turns=7, time_limit=90)
    rows = [task.data for task in env.taskset]
    assert [(r.competition, r.seed) for r in rows] == [(COMPETITION, 3), (COMPETITION, 5)]
    assert rows[0].env_options() == {"time_limit": 90, "sandbox": "local", "reward": "medal", "max_episode_steps": 7}
    assert rows[0].system_prompt == SYSTEM_PROMPT
    assert env.config.agent.runtime.type == "subprocess"  # the agent's code runs in mle-env's own sandbox
    assert [type(h).__name__ for h in env._harnesses.values()] == ["MLEHarness"]


def test_load_environment_takes_a_set_of_practice_competitions(practice_home: Path) -> None:
    from mle_env.competition.registry import task_set

    env = load_environment("practice-eval", seeds=[0], sandbox="local")
    assert [task.data.competition for task in env.taskset] == task_set("practice-eval")


# --- rollouts in this process: the edge cases ------------------------------------------------------------
def model_context(fake: FakeOpenAI) -> vf.ModelContext:
    return vf.ModelContext(model="fake-model", client=vf.EvalClientConfig(base_url=fake.url, api_key_var=KEY_VAR),
                           sampling=vf.SamplingConfig())


def run_rollout(fake: FakeOpenAI, tmp_path: Path, *, agent: dict[str, Any] | None = None,
                cancel_after_s: float | None = None, seed: int = 0, **taskset: Any) -> vf.Trace | None:
    """One rollout through the env's own ``run_slot``; the trace, or None when it was cancelled."""
    options = {"sandbox": "local", "seeds": [seed], "make_options": {"record_dir": str(tmp_path / "episodes")},
               **taskset}
    config = MLEVerifiersEnvConfig(taskset=MLETasksetConfig(**options),
                                   agent=vf.AgentConfig(runtime=vf.SubprocessConfig(), **(agent or {})))
    env = vf.load_environment(config)
    ctx = model_context(fake)

    async def go() -> vf.Trace | None:
        async with env.serving():
            rollout = asyncio.ensure_future(env.run_slot(RunSlot(next(iter(env.taskset))), ctx))
            if cancel_after_s is None:
                return (await rollout).traces[0]
            while not fake.requests:
                await asyncio.sleep(0.05)
            await asyncio.sleep(cancel_after_s)  # the first action is running in the sandbox by now
            rollout.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await rollout
            return None

    return asyncio.run(go())


def episode_folder(tmp_path: Path) -> Path:
    folders = list((tmp_path / "episodes").iterdir())
    assert len(folders) == 1, folders
    return folders[0]


def test_concurrent_rollouts_each_run_their_own_episode(insults_home: Path, bwrap_ready: None,
                                                        fake_llm: FakeOpenAI, tmp_path: Path) -> None:  # noqa: F811
    # the first request (either rollout's) gets the shell call, every later one submit (the last reply repeats)
    fake_llm.reply(200, chat_body("", [tool_call(0, "shell", {"code": "sleep 1; echo mine > logs/me.txt"})]))
    fake_llm.reply(200, chat_body("", [tool_call(1, "submit", {})]))
    env = load_environment(["insults"], seeds=[0, 1], sandbox="local", record_dir=str(tmp_path / "episodes"))

    async def both() -> list[Any]:
        async with env.serving():
            return await asyncio.gather(*(env.run_slot(RunSlot(task), model_context(fake_llm)) for task in env.taskset))

    traces = [episode.traces[0] for episode in asyncio.run(both())]
    assert sorted(t.info[INFO_KEY]["seed"] for t in traces) == [0, 1]
    folders = {Path(t.info[INFO_KEY]["episode_dir"]) for t in traces}
    assert len(folders) == 2 and folders == set((tmp_path / "episodes").iterdir())
    kept = [records(folder / "trajectory.jsonl") for folder in folders]
    assert [r["footer"]["status"] for r in kept] == ["submitted", "submitted"]
    assert sorted(len(r["steps"]) for r in kept) == [1, 2]  # the shell ran in one episode's sandbox only
    assert sorted((folder / "logs" / "me.txt").is_file() for folder in folders) == [False, True]


@pytest.mark.slow
def test_a_refused_turn_grades_the_submission_present(insults_home: Path, bwrap_ready: None,
                                                      fake_llm: FakeOpenAI, tmp_path: Path) -> None:  # noqa: F811
    script(fake_llm, TOOL_CALLS)  # verifiers' own max_turns refuses the third turn (validate)
    trace = run_rollout(fake_llm, tmp_path, agent={"max_turns": 2}, max_turns=None)

    summary = trace.info[INFO_KEY]
    assert trace.stop_condition == "max_turns" and trace.ok
    # the model trained and wrote a submission in its two turns; it was graded by sending submit
    assert summary["end"] == "turn_refused" and summary["status"] == "submitted" and summary["steps"] == 3
    assert summary["grade"]["any_medal"] and trace.reward == summary["reward"] == summary["grade"]["medal_tier"]
    assert trace.metrics["submitted"] == 0.0


def test_a_reply_without_an_action_ends_the_rollout_graded(insults_home: Path, bwrap_ready: None,
                                                          fake_llm: FakeOpenAI, tmp_path: Path) -> None:  # noqa: F811
    fake_llm.reply(200, chat_body('```bash\necho hi > logs/x.txt\n```'))  # a text action: still one step
    fake_llm.reply(200, chat_body("I think I am done here."))
    trace = run_rollout(fake_llm, tmp_path, max_turns=5)

    summary = trace.info[INFO_KEY]
    assert summary["end"] == "no_action" and summary["steps"] == 2  # the text action, then submit
    assert summary["grade"]["status"] == "missing" and trace.reward == 0.0 and trace.ok
    # a text action's result comes back as a user message
    result = fake_llm.requests[1]["messages"][-1]
    assert result["role"] == "user" and result["content"].startswith("shell: exit code 0")
    assert (episode_folder(tmp_path) / "logs" / "x.txt").read_text() == "hi\n"


def test_unusable_calls_cost_a_step_and_say_why(insults_home: Path, bwrap_ready: None,
                                                fake_llm: FakeOpenAI, tmp_path: Path) -> None:  # noqa: F811
    fake_llm.reply(200, chat_body("", [tool_call(0, "python", {"code": 42})]))
    fake_llm.reply(200, chat_body("", [tool_call(1, "shell", {"code": "echo one"}),
                                       tool_call(2, "shell", {"code": "echo two"})]))
    fake_llm.reply(400, error_body("no more"))
    trace = run_rollout(fake_llm, tmp_path, max_turns=2)

    bad = fake_llm.requests[1]["messages"][-1]
    assert bad["tool_call_id"] == "call_0" and bad["content"].startswith("invalid: exit code 1")
    assert "malformed action" in bad["content"]
    # the second reply is graded on its budget's end; only its first call ran, and the other was answered
    summary = trace.info[INFO_KEY]
    assert summary["end"] == "truncated" and summary["steps"] == 2 and len(fake_llm.requests) == 2
    assert trace.stop_condition == "agent_completed"
    steps = records(summary["trajectory"])["steps"]
    assert steps[-1]["stdout"] == "one\n"


def test_a_failed_model_call_fails_the_rollout_ungraded_and_closes_the_env(
        insults_home: Path, bwrap_ready: None, fake_llm: FakeOpenAI, tmp_path: Path) -> None:  # noqa: F811
    fake_llm.reply(400, error_body("model not found"))
    trace = run_rollout(fake_llm, tmp_path)

    assert not trace.ok and "model not found" in trace.errors[-1].message
    assert INFO_KEY not in trace.info and trace.rewards.get("episode_reward") is None
    assert records(episode_folder(tmp_path) / "trajectory.jsonl")["footer"]["status"] == "closed"


@pytest.mark.slow
def test_a_cancelled_rollout_closes_the_env(insults_home: Path, bwrap_ready: None, fake_llm: FakeOpenAI,  # noqa: F811
                                            tmp_path: Path) -> None:
    fake_llm.reply(200, chat_body("", [tool_call(0, "shell", {"code": "sleep 3; echo slept"})]))
    assert run_rollout(fake_llm, tmp_path, cancel_after_s=1.0, seed=7) is None

    # the env was closed after the action still running had finished
    record = records(episode_folder(tmp_path) / "trajectory.jsonl")
    assert record["header"]["seed"] == 7
    assert record["footer"]["status"] == "closed" and record["steps"][0]["stdout"] == "slept\n"
