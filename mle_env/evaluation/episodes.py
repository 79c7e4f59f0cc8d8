"""One evaluation episode, as run by a worker process or a Ray task: prepare what is missing, run the
agent, and return the record for results.jsonl. Never raises: every outcome becomes a record.

Whose fault an outcome is decides what the evaluation does with it:

- ``ok`` / ``agent_error``: the episode ran (see :func:`mle_env.run_episode`; a sandbox the agent broke
  is ``ok`` with ``end == "sandbox_broken"``). It is the agent's result.
- ``infra_error``: the sandbox failed for reasons that are not the agent's: ``SandboxUnavailable`` (or the
  env's info status ``infra_error``) or a ``PrerequisiteError`` while the episode's sandbox started or ran
  (engine unreachable, image missing, no GPU runtime). The evaluation retries it.
- ``error`` (:data:`FATAL`): anything else: our own bug, or the caller's or the setup's mistake met on this
  worker (``NotPrepared``, ``PrepareError``, ``ConfigError``, ``UnknownCompetition``, an unknown agent
  option, a missing optional dependency). Retrying cannot fix it, so the evaluation stops with it.
"""

from __future__ import annotations

import os
import platform
import time
import traceback
from typing import Any

from mle_env.disclosure import gpu_model
from mle_env.errors import MleEnvError, PrerequisiteError, SandboxError, SandboxUnavailable
from mle_env.recording import now

FATAL = "error"  # the status of a record that stops the evaluation (it is never written to results.jsonl)
INFRA_FAILURES = (SandboxError, PrerequisiteError)  # while the episode's sandbox starts or runs


def inject_infra_failure(env: Any) -> None:
    """Fault injection (``--inject-infra-failure``): from now on the episode's sandbox reports itself
    unavailable, as it does when its engine goes away, whatever the backend."""
    sandbox = env.unwrapped._sandbox
    if sandbox is None:
        return

    def unavailable(*_args: Any, **_kwargs: Any) -> Any:
        raise SandboxUnavailable("injected infrastructure failure (--inject-infra-failure): the sandbox is gone")

    sandbox.exec = unavailable
    sandbox.copy_out = unavailable


def describe_error(e: BaseException) -> str:
    """One line for our own errors (their messages say what to do), a traceback for anything else."""
    if isinstance(e, MleEnvError):
        return f"{type(e).__name__}: {e}"
    return "".join(traceback.format_exception(type(e), e, e.__traceback__, limit=8)).rstrip()


def failed_task_record(task: dict[str, Any], error: str, status: str = "infra_error") -> dict[str, Any]:
    """The record of a task whose worker (process or Ray task) died (``infra_error``) or that could not run
    at all (:data:`~mle_env.evaluation.episodes.FATAL`)."""
    return {"competition_id": task["competition_id"], "split": task.get("split"), "seed": task["seed"],
            "attempt": task["attempt"], "agent": task["agent"], "status": status,
            "end": "infra_error" if status == "infra_error" else "", "grade": None, "reward": 0.0, "steps": 0,
            "error": error}


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """Run one episode described by ``task`` (see runner.py) and return its results.jsonl record."""
    if task.get("data_dir"):
        os.environ["MLE_ENV_HOME"] = task["data_dir"]
    started = time.monotonic()
    record: dict[str, Any] = {
        "competition_id": task["competition_id"], "competition_version": None, "split": task.get("split"),
        "seed": task["seed"], "attempt": task["attempt"], "agent": task["agent"], "status": FATAL, "end": "",
        "grade": None, "reward": 0.0, "steps": 0, "wall_time_s": 0.0, "error": None, "trajectory": None,
        "hardware": {"host": platform.node(), "gpu_model": gpu_model()},
    }
    env = None
    in_episode = False
    try:
        from mle_env.agents import make_policy
        from mle_env.competition.registry import get_spec
        from mle_env.env import make
        from mle_env.episode import run_episode
        from mle_env.prepare.runner import prepare

        spec = get_spec(task["competition_id"])
        record.update(competition_id=spec.id, competition_version=spec.version, split=spec.split)
        prepare(spec.id)  # idempotent and locked: a no-op where the data is there, safe when tasks race
        env = make(spec.id, **task["env_options"])
        factory = task.get("policy_factory")
        if factory:
            policy = factory(**task["agent_options"])
        else:  # a bundled name, module:Class or file.py:Class, resolved here in the worker
            from mle_env.agents import with_episode_seed

            spec = task.get("agent_spec") or task["agent"]
            policy = make_policy(spec, **with_episode_seed(spec, task["agent_options"], task["seed"]))
        failing = bool(task.get("inject_infra_failure"))

        def on_step(step: int, *_: Any) -> None:
            if failing and step == 1:
                inject_infra_failure(env)

        in_episode = True
        result = run_episode(env, policy, seed=task["seed"], on_step=on_step)
        record.update(status=result.status, end=result.end, grade=result.grade.to_dict() if result.grade else None,
                      reward=result.reward, steps=result.steps, error=result.error, trajectory=result.trajectory,
                      disclosure=result.disclosure)
        record["hardware"].update(result.hardware)
    except Exception as e:  # noqa: BLE001 - every outcome must leave a record; FATAL ones stop the evaluation
        if in_episode and isinstance(e, INFRA_FAILURES):
            record.update(status="infra_error", end="infra_error")
        else:
            record.update(status=FATAL, error_type=type(e).__name__)
        record["error"] = describe_error(e)
    finally:
        if env is not None:
            try:
                env.close()
            except Exception as e:  # noqa: BLE001 - the episode's record stands; the failure to clean up is noted
                record["close_error"] = describe_error(e)
    record["wall_time_s"] = time.monotonic() - started
    record["finished_at"] = now()
    return record
