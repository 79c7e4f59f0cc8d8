"""One evaluation episode, as run by a worker process or a Ray task: prepare what is missing, run the
agent, and return the record for results.jsonl. Never raises: every failure becomes a record."""

from __future__ import annotations

import os
import platform
import signal
import subprocess
import time
import traceback
from typing import Any

from mle_env.errors import MleEnvError
from mle_env.recording import now


def gpu_model() -> str | None:
    """The host's GPU model from nvidia-smi, or None where there is none."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    names = [line.strip() for line in out.stdout.splitlines() if line.strip()]
    return ", ".join(sorted(set(names))) or None


def _kill_sandbox(env: Any) -> None:
    """Fault injection: make the sandbox die the way a crashed container or killed worker would."""
    sandbox = env.unwrapped._sandbox
    if sandbox is None:
        return
    if getattr(sandbox, "container", None) is not None:
        sandbox.container.kill()
    elif getattr(sandbox, "process", None) is not None:
        os.killpg(sandbox.process.pid, signal.SIGKILL)


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """Run one episode described by ``task`` (see runner.py) and return its results.jsonl record."""
    if task.get("data_dir"):
        os.environ["MLE_ENV_HOME"] = task["data_dir"]
    import mle_env
    from mle_env.competition.registry import get_spec
    from mle_env.prepare.runner import prepare

    started = time.monotonic()
    spec = get_spec(task["competition_id"])
    record: dict[str, Any] = {
        "competition_id": spec.id, "competition_version": spec.version, "split": spec.split,
        "seed": task["seed"], "attempt": task["attempt"], "agent": task["agent"], "status": "infra_error",
        "grade": None, "reward": 0.0, "steps": 0, "wall_time_s": 0.0, "error": None, "trajectory": None,
        "hardware": {"host": platform.node(), "gpu_model": gpu_model()},
    }
    env = None
    try:
        prepare(spec.id)  # idempotent and locked: a no-op where the data is there, safe when tasks race
        env = mle_env.make(spec.id, **task["env_options"])
        policy = mle_env.make_policy(task["agent"], **task["agent_options"])
        inject = task.get("inject_infra_failure", False)

        def on_step(step: int, *_: Any) -> None:
            if inject and step == 1:
                _kill_sandbox(env)

        result = mle_env.run_episode(env, policy, seed=task["seed"], on_step=on_step)
        record.update(status=result.status, grade=result.grade.to_dict() if result.grade else None,
                      reward=result.reward, steps=result.steps, error=result.error, trajectory=result.trajectory)
        record["hardware"].update(result.hardware)
    except MleEnvError as e:  # the sandbox died, or this node cannot prepare or grade: not the agent's fault
        record["error"] = f"{type(e).__name__}: {e}"
    except Exception:  # noqa: BLE001 - a bug outside the agent must still leave a record
        record["error"] = traceback.format_exc(limit=6)
    finally:
        if env is not None:
            env.close()
    record["wall_time_s"] = time.monotonic() - started
    record["finished_at"] = now()
    return record
