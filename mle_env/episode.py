"""Running one episode of a policy: :func:`run_episode` and its result.

``run_episode`` steps until the episode ends. Who is accountable for how it ended is decided by the
environment, never by the policy:

- A policy that raises anything (a bug in agent code, or an exception it met while reaching into the
  sandbox, ``SandboxUnavailable`` included) does not lose the episode and cannot excuse it: the submission
  present at that moment is graded (by sending ``submit``) and the status is ``agent_error``.
- An episode the agent's own actions broke ends with the env's info status ``sandbox_broken``: it is the
  agent's result (status ``ok``, graded on the submission present, ``end == "sandbox_broken"``).
- Only the env's info status ``infra_error`` (a fault the host can show is not the agent's: engine
  unreachable, container removed or killed from outside) gives status ``infra_error``: no grade, and
  evaluations retry it.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mle_env.grading.report import GradeReport

StepCallback = Callable[[int, dict[str, Any], float, bool, bool, dict[str, Any]], None]

# how an episode can end (the env's last info status); "" when it never got a last step
ENDS = ("submitted", "truncated", "sandbox_broken", "infra_error")


@dataclass
class EpisodeResult:
    """How an episode went.

    Attributes:
        status: ``ok`` (it ended as the agent played it: submitted, out of budget, or its sandbox broken by
            its own actions), ``agent_error`` (the policy raised; graded on the submission present) or
            ``infra_error`` (the env reported an infrastructure fault; not graded).
        grade: the GradeReport (None after an infra error).
        reward: the terminal reward.
        steps: steps taken. wall_time_s: seconds from reset to the end.
        end: the env's last info status: ``submitted``, ``truncated``, ``sandbox_broken`` or ``infra_error``.
        trajectory: the trajectory file.
        error: what went wrong: the policy's traceback (agent_error), the env's message (infra_error, or an
            ``ok`` episode that ended ``sandbox_broken``).
        hardware: the sandbox's CPUs, memory and GPUs.
        disclosure: what the episode discloses (:mod:`mle_env.disclosure`; None after an infrastructure error
            that ended it before the env could write one).
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
    disclosure: dict[str, Any] | None = None

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
        policy: anything with ``reset(obs, info)`` and ``act(obs, info)`` (and optionally ``close()`` and
            ``annotations()``).
        seed: passed to ``env.reset``.
        on_step: called after every step with (step, obs, reward, terminated, truncated, info).
        options: passed to ``env.reset``.

    Raises:
        SandboxUnavailable, PrerequisiteError: the sandbox could not even be started (from ``env.reset``).
        Anything ``env.step`` raises: that is a bug of the env, not the agent's doing, so it is not hidden.
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
                first = False
                if hasattr(policy, "bind_env"):  # a policy that forks the episode (see mle_env.agents.policy)
                    policy.bind_env(env.unwrapped)
                policy.reset(obs, info)
            action = policy.act(obs, info)
            notes = policy.annotations() if hasattr(policy, "annotations") else {}
        except Exception:  # noqa: BLE001 - whatever the policy raises is its own error; the episode is graded
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
    end = info.get("status", "")
    if end in ("infra_error", "sandbox_broken") and error is None:
        error = str(obs.get("message") or end)
    if end == "infra_error" and status == "ok":  # only the env can say the infrastructure failed
        status = "infra_error"
    if hasattr(policy, "close"):
        try:
            policy.close()
        except Exception:  # noqa: BLE001 - a policy that fails to clean up is still the policy's error
            if status == "ok":
                status, error = "agent_error", traceback.format_exc(limit=8)
    grade_dict = info.get("grade")
    return EpisodeResult(
        status=status, grade=GradeReport.from_dict(grade_dict) if grade_dict else None, reward=float(reward),
        steps=steps, wall_time_s=time.monotonic() - started, end=end, trajectory=trajectory,
        error=error, hardware=hardware, disclosure=info.get("disclosure"),
    )
