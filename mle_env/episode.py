"""Running one episode of a policy: :func:`run_episode` and its result.

``run_episode`` steps until the episode ends. A policy that raises (a bug in agent code) does not lose
the episode: the submission present at that moment is graded (by sending ``submit``) and the result's
status is ``agent_error``. An infrastructure failure (the sandbox died) gives status ``infra_error`` and
no grade: it is not the agent's fault, and evaluations retry it.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mle_env.errors import SandboxUnavailable
from mle_env.grading.report import GradeReport

StepCallback = Callable[[int, dict[str, Any], float, bool, bool, dict[str, Any]], None]


@dataclass
class EpisodeResult:
    """How an episode went.

    Attributes:
        status: ``ok`` (submitted or ran out of budget), ``agent_error`` (the policy raised) or
            ``infra_error`` (the sandbox failed).
        grade: the GradeReport (None after an infra error).
        reward: the terminal reward.
        steps: steps taken. wall_time_s: seconds from reset to the end.
        end: ``submitted``, ``truncated`` or ``infra_error`` (the env's last info status).
        trajectory: the trajectory file. error: what went wrong, for agent_error and infra_error.
        hardware: the sandbox's CPUs, memory and GPUs.
    """

    status: str
    grade: GradeReport | None
    reward: float
    steps: int
    wall_time_s: float
    end: str = ""
    trajectory: str | None = None
    error: str | None = None
    hardware: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["grade"] = self.grade.to_dict() if self.grade is not None else None
        return out


def run_episode(
    env: Any, policy: Any, seed: int | None = None, on_step: StepCallback | None = None,
    options: dict[str, Any] | None = None,
) -> EpisodeResult:
    """Reset ``env``, let ``policy`` act until the episode ends, and return what happened.

    Args:
        env: an MLEEnv (possibly wrapped).
        policy: anything with ``reset(obs, info)`` and ``act(obs, info)``.
        seed: passed to ``env.reset``.
        on_step: called after every step with (step, obs, reward, terminated, truncated, info).
        options: passed to ``env.reset``.

    Raises:
        SandboxUnavailable, PrerequisiteError: the sandbox could not even be started.
    """
    started = time.monotonic()
    obs, info = env.reset(seed=seed, options=options)
    hardware = {k: info.get("sandbox_info", {}).get(k) for k in ("kind", "cpus", "memory_bytes", "gpus")}
    trajectory = info.get("trajectory")
    steps, reward, error, status = 0, 0.0, None, "ok"
    terminated = truncated = False
    first = True
    while not (terminated or truncated):
        try:
            if first:
                policy.reset(obs, info)
                first = False
            action = policy.act(obs, info)
            notes = policy.annotations() if hasattr(policy, "annotations") else {}
        except SandboxUnavailable as e:  # a policy that reaches into the sandbox may see it die
            error, status = str(e), "infra_error"
            break
        except Exception:  # noqa: BLE001 - any bug in agent code is recorded, and the episode still graded
            error, status = traceback.format_exc(limit=8), "agent_error"
            action, notes = {"type": "submit"}, {"agent_error": traceback.format_exc(limit=3)}
        if notes:
            env.unwrapped.annotate(**notes)
        obs, reward, terminated, truncated, info = env.step(action)
        steps += 1
        if on_step is not None:
            on_step(steps, obs, reward, terminated, truncated, info)
        if status == "agent_error":
            break
    if info.get("status") == "infra_error":
        status, error = "infra_error", error or obs.get("message")
    if status == "infra_error" and not (terminated or truncated):
        env.close()
    grade_dict = info.get("grade")
    if hasattr(policy, "close"):
        policy.close()
    return EpisodeResult(
        status=status, grade=GradeReport.from_dict(grade_dict) if grade_dict else None, reward=float(reward),
        steps=steps, wall_time_s=time.monotonic() - started, end=info.get("status", ""), trajectory=trajectory,
        error=error, hardware=hardware,
    )
