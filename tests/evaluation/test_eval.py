"""`mle-env eval` end to end: a local worker pool, resuming a killed run, an injected infrastructure
failure, a real two-node Ray cluster, and MLEEnv under gymnasium's AsyncVectorEnv."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import gymnasium
import pytest
from conftest import hand_built_practice, require

import mle_env
from mle_env.evaluation.results import read_results
from mle_env.evaluation.stats import finished

#: the three practice competitions built by hand (the pool made with mle-env new has its own evaluation test)
HAND_BUILT = hand_built_practice()
PRACTICE_EVAL = ["eval", "--agent", "baseline", "--competitions", *HAND_BUILT, "--seeds", "3", "--workers", "2",
                 "--sandbox", "local"]


def cli(*args: str, home: Path, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "MLE_ENV_HOME": str(home), "COLUMNS": "160"}
    out = subprocess.run([sys.executable, "-m", "mle_env.cli", *args], capture_output=True, text=True, env=env)
    if check:
        assert out.returncode == 0, out.stdout + out.stderr
    return out


def table_of(out: Path) -> dict:
    summary = json.loads((out / "summary.json").read_text())
    return {cid: {t: row[t] for t in ("n", "any_medal", "gold", "silver", "above_median")}
            for cid, row in summary["per_competition"].items()}


@pytest.fixture(scope="module")
def practice_run(practice_session_home: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The baseline over the three hand-built practice competitions, 3 seeds, 2 workers (shared below)."""
    out = tmp_path_factory.mktemp("eval") / "run"
    result = cli(*PRACTICE_EVAL, "--out", str(out), home=practice_session_home)
    return out, result.stdout


@pytest.mark.slow
def test_eval_completes_and_reports_pass_at_k_with_sem(practice_run: tuple[Path, str]) -> None:
    out, stdout = practice_run
    records = read_results(out)
    assert len(finished(records)) == 9 and all(r["status"] == "ok" for r in records)
    assert all(r["hardware"]["kind"] == "local" and r["hardware"]["cpus"] for r in records)
    for text in ("pass@1", "pass@2", "pass@3", "±", "practice", "all"):
        assert text in stdout, text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["leaderboard"]["any_medal"]["all"]["sem"] is not None
    assert summary["pass_at_k"]["any_medal"]["3"]["mean"] is not None
    assert (out / "pass_at_k.png").stat().st_size > 1000
    report = cli("report", str(out), "--json", home=out)
    episodes = json.loads(report.stdout)["episodes"]
    assert (episodes["scheduled"], episodes["ok"], episodes["counted_as_no_medal"]) == (9, 9, 0)
    assert "3 competitions x 3 seeds = 9 episodes scheduled: 9 ok, 0 sandbox_broken, 0 agent_error, 0 infra_error" \
        in " ".join(stdout.split())


@pytest.mark.slow
def test_rerun_skips_finished_episodes(practice_run: tuple[Path, str], practice_session_home: Path) -> None:
    out, _ = practice_run
    before = len(read_results(out))
    result = cli(*PRACTICE_EVAL, "--out", str(out), home=practice_session_home)
    assert "9 already finished" in result.stdout
    assert len(read_results(out)) == before


@pytest.mark.slow
def test_killed_run_resumes_without_redoing_finished_episodes(
    practice_session_home: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    two_seeds = [a if a != "3" else "2" for a in PRACTICE_EVAL]  # --seeds 2: six episodes
    env = {**os.environ, "MLE_ENV_HOME": str(practice_session_home)}
    proc = subprocess.Popen([sys.executable, "-m", "mle_env.cli", *two_seeds, "--out", str(out)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and len(read_results(out)) < 2 and proc.poll() is None:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    first = read_results(out)
    assert 2 <= len(first) < 6, "the run should be killed midway"
    cli(*two_seeds, "--out", str(out), home=practice_session_home)
    records = read_results(out)
    keys = [(r["competition_id"], r["seed"]) for r in records]
    assert len(keys) == len(set(keys)) == 6  # nothing finished was run twice
    assert records[: len(first)] == first


@pytest.mark.slow
def test_injected_infrastructure_failure_is_retried_and_reported_apart(
    practice_session_home: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    result = cli("eval", "--agent", "baseline", "--competitions", "digits", "--seeds", "2", "--sandbox", "local",
                 "--inject-infra-failure", "practice-mnist-digits:1", "--out", str(out), home=practice_session_home)
    records = read_results(out)
    attempts = [(r["seed"], r["attempt"], r["status"]) for r in records]
    assert (1, 0, "infra_error") in attempts and (1, 1, "ok") in attempts
    failed = next(r for r in records if r["status"] == "infra_error")
    assert "injected infrastructure failure" in failed["error"]
    summary = json.loads((out / "summary.json").read_text())
    e = summary["episodes"]
    assert (e["scheduled"], e["ok"], e["infra_error"], e["infra_error_attempts"], e["infra_retried_then_finished"]) \
        == (2, 2, 0, 1, 1)
    assert summary["per_competition"]["practice-mnist-digits"]["n"] == 2  # the retried failure is one episode
    assert "infrastructure reasons" in result.stdout


@pytest.mark.slow
def test_a_rerun_must_match_the_run_it_extends(
    tiny_prepared: str, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mle_env.evaluation import EvalConfig, evaluate
    from mle_env.evaluation.results import EvaluationError

    monkeypatch.setenv("MLE_ENV_COMPETITIONS", str(home.parent / "competitions"))  # for the worker processes
    out = tmp_path / "run"
    evaluate(EvalConfig(agent="baseline", competitions=[tiny_prepared], seeds=1, out=out, workers=1,
                        env_options={"sandbox": "local", "time_limit": 600}))
    assert [r["status"] for r in read_results(out)] == ["ok"]
    with pytest.raises(EvaluationError, match="env_options"):
        evaluate(EvalConfig(agent="baseline", competitions=[tiny_prepared], seeds=1, out=out, workers=1,
                            env_options={"sandbox": "local", "time_limit": 60}))
    with pytest.raises(ValueError, match="takes no option 'colour'"):
        evaluate(EvalConfig(agent="baseline", agent_options={"colour": "red"}, competitions=[tiny_prepared],
                            seeds=1, out=tmp_path / "other"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def ray_cluster() -> Iterator[str]:
    """A real local Ray cluster: a head node and a second node joined to it, stopped afterwards."""
    ray = shutil.which("ray")
    require(ray is not None, "Ray is not installed (pip install 'mle-env[ray]')", "MLE_ENV_REQUIRE_RAY")
    port = _free_port()
    temp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # short: Ray's unix socket paths must fit in 107 bytes
    common = ["--disable-usage-stats", "--temp-dir", temp]
    def start(*args: str) -> None:
        out = subprocess.run([ray, "start", *args, *common], capture_output=True, text=True)
        assert out.returncode == 0, f"ray start {' '.join(args)} failed:\n{out.stdout}{out.stderr}"

    subprocess.run([ray, "stop", "--force"], capture_output=True)
    try:
        start("--head", f"--port={port}", "--num-cpus=2", "--include-dashboard=false")
        start(f"--address=127.0.0.1:{port}", "--num-cpus=1")
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run([ray, "stop", "--force"], capture_output=True)
        shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.slow
def test_ray_cluster_gives_the_same_table(
    practice_run: tuple[Path, str], practice_session_home: Path, ray_cluster: str, tmp_path: Path
) -> None:
    import ray

    local_out, _ = practice_run
    out = tmp_path / "ray-run"
    ray.init(address=ray_cluster, log_to_driver=False)
    try:
        assert len([n for n in ray.nodes() if n["Alive"]]) == 2
    finally:
        ray.shutdown()
    cli(*PRACTICE_EVAL, "--out", str(out), "--ray", ray_cluster, home=practice_session_home)
    assert table_of(out) == table_of(local_out)
    episodes = finished(read_results(out))
    assert len(episodes) == 9 and all(r["hardware"]["host"] and r["hardware"]["cpus"] for r in episodes)


def test_async_vector_env(tiny_prepared: str) -> None:
    """MLEEnv in gymnasium.vector.AsyncVectorEnv: text observations need shared_memory=False."""
    envs = gymnasium.vector.AsyncVectorEnv(
        [lambda: mle_env.make(tiny_prepared, sandbox="local", step_limit=3) for _ in range(2)], shared_memory=False,
    )
    obs, infos = envs.reset(seed=[1, 2])
    assert len(obs["task"]) == 2 and list(infos["competition_id"]) == ["tiny-comp"] * 2
    obs, rewards, terminated, truncated, infos = envs.step(({"type": "shell", "code": "echo one"},
                                                             {"type": "python", "code": "print(2)"}))
    assert list(obs["stdout"]) == ["one\n", "2\n"] and not terminated.any()
    obs, rewards, terminated, truncated, infos = envs.step(({"type": "submit"}, "echo still"))
    assert list(terminated) == [True, False]
    envs.close()
