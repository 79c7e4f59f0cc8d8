"""The disclosure every episode writes (trajectory footer, grade.json, the last info, results.jsonl) and the
one `mle-env report` prints for a run: hardware, budget, sandbox, network, test-set feedback, validate and
score_dev calls, LLM use and versions."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import mle_env
from mle_env.disclosure import Feedback, summarize_disclosures

LLM_CALL = {"prompt_tokens": 120, "completion_tokens": 30, "cost": 0.002, "model": "m", "latency_s": 1.0}


def test_an_episode_discloses_what_it_used(tiny_prepared: str, home: Path) -> None:
    env = mle_env.make(tiny_prepared, sandbox="local", cpus=1, memory="1g", dev_split=0.25)
    obs, info = env.reset(seed=0)
    env.step({"type": "shell", "code": "cp data/sample_submission.csv submission/submission.csv"})
    env.step({"type": "validate"})
    env.step({"type": "shell", "code": "./validate_submission.sh submission/submission.csv"})  # the endpoint
    env.unwrapped.annotate(llm=[LLM_CALL, LLM_CALL])
    env.step({"type": "score_dev", "path": "data/dev/sample_submission.csv"})
    env.unwrapped.annotate(llm=LLM_CALL)
    *_, info = env.step({"type": "submit"})
    env.close()
    d = info["disclosure"]
    assert d["competition"] == {"id": "tiny-comp", "version": 0} and d["mle_env_version"] == mle_env.__version__
    assert d["hardware"]["cpus"] == 1 and d["hardware"]["memory_bytes"] == 2**30 and d["hardware"]["gpu_count"] == 0
    assert d["hardware"]["host_cpus"] >= 1 and d["sandbox"] == "local" and d["network"] is False
    assert d["steps"] == 5 and d["wall_time_s"] > 0 and d["time_limit_s"] > 0
    assert d["test_set_feedback"] == "none"
    assert d["validate_calls"] == 2 and d["score_dev_calls"] == 1 and d["dev_split"] == 0.25
    assert d["llm"] == {"calls": 3, "prompt_tokens": 360, "completion_tokens": 90, "cost": pytest.approx(0.006)}
    footer = json.loads(Path(info["trajectory"]).read_text().splitlines()[-1])
    assert footer["disclosure"] == json.loads(json.dumps(d))
    grade = json.loads((Path(info["episode_dir"]) / "grade.json").read_text())
    assert grade["disclosure"] == footer["disclosure"] and grade["score"] is not None


def test_a_fork_discloses_its_parent_s_calls_too(open_env: Callable[..., Any]) -> None:
    env = open_env()
    env.step({"type": "validate"})
    env.unwrapped.annotate(llm=LLM_CALL)
    env.step({"type": "shell", "code": "true"})
    fork = env.unwrapped.fork()
    try:
        fork.step({"type": "validate"})
        *_, info = fork.step({"type": "submit"})
    finally:
        fork.close()
    assert info["disclosure"]["validate_calls"] == 2 and info["disclosure"]["llm"]["calls"] == 1
    *_, info = env.step({"type": "submit"})
    assert info["disclosure"]["validate_calls"] == 1  # the parent's own, unchanged by its fork


def test_feedback_ignores_what_is_not_an_llm_record() -> None:
    feedback = Feedback()
    feedback.count_llm({"llm": ["text", {"prompt_tokens": -5, "completion_tokens": "9"}], "other": 1})
    feedback.count_llm({"react": {"source": "x"}})
    assert feedback.llm == {"calls": 1, "prompt_tokens": 0, "completion_tokens": 0, "cost": None}


def test_a_run_s_disclosure_sums_its_episodes(tmp_path: Path) -> None:
    from rich.console import Console

    from mle_env.evaluation.report import disclosure_rows, render, summarize

    one = {"mle_env_version": "0.1.0", "competition": {"id": "a", "version": 0},
           "hardware": {"cpu_model": "Test CPU", "host_cpus": 2, "cpus": 2.0, "memory_bytes": 2**32, "gpus": []},
           "sandbox": "docker", "image": "mle-env-agent:cpu", "network": False, "time_limit_s": 600.0,
           "wall_time_s": 100.0, "steps": 4, "test_set_feedback": "none", "validate_calls": 3,
           "score_dev_calls": 0, "dev_split": None, "task_text": "original",
           "llm": {"calls": 2, "prompt_tokens": 10, "completion_tokens": 5, "cost": None}}
    two = {**one, "wall_time_s": 300.0, "steps": 6, "validate_calls": 1, "llm": None}
    records = [{"competition_id": "a", "seed": s, "attempt": 0, "agent": "x", "status": "ok", "end": "submitted",
                "split": "practice", "grade": {"score": 0.5, "medal_tier": 0, "above_median": False},
                "disclosure": d} for s, d in enumerate((one, two))]
    records.append({**records[0], "seed": 2, "status": "infra_error", "disclosure": None})
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (tmp_path / "config.json").write_text(json.dumps({"agent": "x", "competitions": ["a"], "seeds": 2}))
    summary = summarize(tmp_path)
    d = summary["disclosure"]
    assert d["episodes"] == 2 and d["validate_calls"] == 4 and d["wall_time_s"] == {"mean": 200.0, "max": 300.0}
    assert d["llm"] == {"calls": 2, "prompt_tokens": 10, "completion_tokens": 5, "cost": None}
    assert d["cpu_model"] == ["Test CPU"] and d["gpus"] == ["none"] and d["network"] == ["False"]
    assert json.loads((tmp_path / "summary.json").read_text())["disclosure"] == d
    rows = dict(disclosure_rows(d))
    assert rows["LLM"] == "2 calls, 10 tokens in, 5 out, cost unknown" and rows["memory"] == "4 GiB"
    console = Console(width=80, record=True, color_system=None)
    render(summary, console)
    text = console.export_text()
    assert "Disclosure" in text and "test-set feedback" in text and "mean 200, max 300" in text


def test_summaries_skip_missing_disclosures() -> None:
    assert summarize_disclosures([None, None])["episodes"] == 0
    assert summarize_disclosures([])["llm"] is None
