"""Replaying a recorded episode (``mle-env replay``): are its results reproducible?

:func:`replay` reads a trajectory, starts a fresh episode of the same competition with the options its
header recorded (seed, reset options, time and step limits, action timeout, sandbox and its limits, image;
``reward`` and ``dev_split`` when recorded), sends the recorded actions one by one and compares what each
one produced with what was recorded:

- per step: the observation's kind, exit code, whether it timed out, stdout, stderr and message;
- at the end: how the episode ended (its status, and whether it ended at the same step) and the grade
  (status, medal, score, validity).

What is expected to change between two runs is not compared: the time and steps left, the durations,
the environment's notes on the budget ("the budget ran out"), and, unless ``exact=True``, times of day,
dates and durations written in outputs (``12.3 s``, ``13:14:27``, ``2026-12-01T13:14:27``). A malformed
action is recorded as a description only, so its step is replayed as another malformed action and only its
kind and exit code are compared. A fork's trajectory is replayed from the start of its parent: the fork's
interpreter restart is not reproduced (the report says so).

The replayed episode writes its own trajectory into ``record_dir`` (default: a temporary folder, removed).
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mle_env.config import DEFAULT_ARTIFACTS_BYTES
from mle_env.errors import MleEnvError
from mle_env.trajectory import Episode, load_episode

#: compared per step; a malformed action's step compares only the first two
STEP_FIELDS = ("kind", "exit_code", "timed_out", "stdout", "stderr", "message")
GRADE_FIELDS = ("status", "medal", "valid_submission", "score")
_BUDGET_NOTES = ("the budget ran out; the submission is graded",)
_TIMING = [
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"), "<datetime>"),
    (re.compile(r"\b\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?\b"), "<time>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|secs|seconds?|min|mins|minutes?|h|hours?)\b"), "<duration>"),
]
_INVALID = {"type": "(a malformed action, replayed)"}
_DEV_SECTION = "\n# Dev set (`score_dev`)"


class ReplayError(MleEnvError):
    """The trajectory cannot be replayed as recorded (an option it needs was not recorded)."""


@dataclass(frozen=True)
class Difference:
    """One thing that came out differently: at ``step`` (None: the episode's end or grade), ``field`` was
    ``recorded`` then and is ``replayed`` now."""

    step: int | None
    field: str
    recorded: Any
    replayed: Any


@dataclass
class ReplayReport:
    """What :func:`replay` found.

    Attributes:
        trajectory: the file replayed.
        competition_id, seed, sandbox: the replayed episode's.
        recorded_steps: steps in the recording; replayed_steps: steps sent again.
        actions: each replayed step's action type, in order.
        differences: everything that differs (empty when the episode reproduced).
        notes: what could not be compared as recorded (a fork, a recording without an end).
        replay_trajectory: the replay's own trajectory (None when it went to a temporary folder).
    """

    trajectory: Path
    competition_id: str
    seed: int | None
    sandbox: str
    recorded_steps: int
    replayed_steps: int = 0
    actions: list[str] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    replay_trajectory: str | None = None

    @property
    def same(self) -> bool:
        """True when nothing differs."""
        return not self.differences

    def differing_steps(self) -> list[int]:
        """The steps with a difference, in order."""
        return sorted({d.step for d in self.differences if d.step is not None})

    def to_dict(self) -> dict[str, Any]:
        return {"trajectory": str(self.trajectory), "competition_id": self.competition_id, "seed": self.seed,
                "sandbox": self.sandbox, "recorded_steps": self.recorded_steps, "replayed_steps": self.replayed_steps,
                "same": self.same, "differences": [d.__dict__ for d in self.differences], "notes": self.notes,
                "replay_trajectory": self.replay_trajectory}


def normalize(text: str, exact: bool = False) -> str:
    """``text`` as compared: the environment's budget notes dropped, trailing blanks ignored and, unless
    ``exact``, times of day, dates and durations replaced by placeholders."""
    lines = [line for line in text.splitlines() if line.strip() not in _BUDGET_NOTES]
    out = "\n".join(line.rstrip() for line in lines).strip("\n")
    if not exact:
        for pattern, placeholder in _TIMING:
            out = pattern.sub(placeholder, out)
    return out


def env_options(episode: Episode, sandbox: str | None = None, dev_split: float | None = None) -> dict[str, Any]:
    """The ``MLEEnv`` options that rebuild the recorded episode (``sandbox`` and ``dev_split`` override the
    recorded ones).

    Raises:
        ReplayError: the episode had a dev split whose fraction the trajectory does not hold.
    """
    header = episode.header
    limits = header.get("limits") if isinstance(header.get("limits"), dict) else {}
    options: dict[str, Any] = {
        "sandbox": sandbox or header.get("sandbox") or "auto",
        "time_limit": header.get("time_limit"), "step_limit": header.get("step_limit"),
        "action_timeout": header.get("action_timeout") or 1800.0,
        "cpus": limits.get("cpus"), "memory": limits.get("memory", "4g"), "gpus": limits.get("gpus"),
        "network": bool(limits.get("network", False)), "disk": limits.get("disk", "auto"),
    }
    if isinstance(limits.get("max_output"), int):
        options["max_output"] = limits["max_output"]
    if options["sandbox"] == "docker" and isinstance(header.get("image"), str):
        options["image"] = header["image"]
    if isinstance(header.get("reward"), str):
        options["reward"] = header["reward"]
    split = dev_split if dev_split is not None else header.get("dev_split")
    if split is None and _DEV_SECTION in str(header.get("task")):
        raise ReplayError(f"{episode.path} was recorded with a dev split whose fraction the trajectory does not "
                          "hold: pass dev_split= (mle-env replay --dev-split F)")
    if split is not None:
        options["dev_split"] = float(split)
    return options


def _same_value(recorded: Any, replayed: Any) -> bool:
    if isinstance(recorded, float) and isinstance(replayed, float):
        return math.isclose(recorded, replayed, rel_tol=1e-9, abs_tol=1e-12)
    return bool(recorded == replayed)


def _step_differences(number: int, record: dict[str, Any], obs: dict[str, Any], exact: bool) -> list[Difference]:
    replayed = {"kind": str(obs["action"]), "exit_code": int(obs["exit_code"]),
                "timed_out": bool(int(obs["timed_out"])), "stdout": str(obs["stdout"]), "stderr": str(obs["stderr"]),
                "message": str(obs["message"])}
    fields = STEP_FIELDS[:2] if record["kind"] == "invalid" else STEP_FIELDS
    out = []
    for name in fields:
        before, now = record.get(name), replayed[name]
        if isinstance(before, str):
            if normalize(before, exact) != normalize(now, exact):
                out.append(Difference(number, name, before, now))
        elif before != now:
            out.append(Difference(number, name, before, now))
    return out


def _end_differences(episode: Episode, status: str, grade: dict[str, Any] | None) -> list[Difference]:
    footer = episode.footer
    if footer is None:
        return []
    recorded = episode.status
    abandoned = ("reset", "closed", "running")
    if recorded != status and not (recorded in abandoned and status in abandoned):
        return [Difference(None, "status", recorded, status)]
    before = episode.grade
    if (before is None) != (grade is None):
        return [Difference(None, "grade", "graded" if before else "not graded", "graded" if grade else "not graded")]
    if before is None or grade is None:
        return []
    return [Difference(None, f"grade.{name}", before.get(name), grade.get(name)) for name in GRADE_FIELDS
            if not _same_value(before.get(name), grade.get(name))]


def replay(
    trajectory: str | os.PathLike[str],
    sandbox: str | None = None,
    *,
    dev_split: float | None = None,
    exact: bool = False,
    home: str | os.PathLike[str] | None = None,
    record_dir: str | os.PathLike[str] | None = None,
    on_step: Callable[[int, list[Difference]], None] | None = None,
) -> ReplayReport:
    """Re-run a recorded episode's actions in a fresh episode and report what differs (see the module
    docstring).

    Args:
        trajectory: a trajectory file or an episode's folder.
        sandbox: the sandbox to replay in (default: the recorded one).
        dev_split: the dev split fraction, for a trajectory recorded with one that did not record it.
        exact: compare outputs exactly (by default times, dates and durations in outputs are ignored).
        home: the MLE_ENV_HOME with the prepared competition (default: ``$MLE_ENV_HOME``).
        record_dir: where the replay's own episode folder goes (default: a temporary folder, removed).
        on_step: called after each replayed step with its number and its differences.

    Raises:
        TrajectoryError: the file is not a trajectory, or is malformed.
        ReplayError: an option the replay needs was not recorded.
        ConfigError, NotPrepared, UnknownCompetition, SandboxUnavailable: as ``mle_env.make`` and ``reset``.
    """
    from mle_env.env import MLEEnv

    episode = load_episode(trajectory, require_end=False)
    header = episode.header
    options = env_options(episode, sandbox, dev_split)
    report = ReplayReport(trajectory=episode.path, competition_id=header["competition_id"], seed=header.get("seed"),
                          sandbox=options["sandbox"], recorded_steps=len(episode.steps))
    if isinstance(header.get("fork"), dict):
        report.notes.append(f"a fork of step {header['fork'].get('step')}: its python interpreter restarted there, "
                            "the replay's does not")
    if episode.footer is None:
        report.notes.append("the recording has no footer (the episode never ended): its end is not compared")
    with tempfile.TemporaryDirectory(prefix="mle-env-replay-") as tmp:
        env = MLEEnv(header["competition_id"], **options, home=home, record_dir=record_dir or tmp,
                     artifacts_max_bytes=0 if record_dir is None else DEFAULT_ARTIFACTS_BYTES)
        report.sandbox = env.sandbox_kind
        status, grade, done = "running", None, False
        try:
            reset_options = header.get("options") if isinstance(header.get("options"), dict) else None
            _obs, info = env.reset(seed=header.get("seed"), options=reset_options)
            if record_dir is not None:
                report.replay_trajectory = info.get("trajectory")
            for record in episode.steps:
                number = record["step"]
                if done:
                    report.differences.append(Difference(number, "step", "ran", f"not run: the replay ended "
                                                         f"({status}) after step {report.replayed_steps}"))
                    break
                action = record["action"] if record["kind"] != "invalid" else _INVALID
                obs, _reward, terminated, truncated, info = env.step(action)
                report.replayed_steps += 1
                report.actions.append(record["kind"] if record["kind"] == "invalid" else str(action["type"]))
                found = _step_differences(number, record, obs, exact)
                report.differences.extend(found)
                if on_step is not None:
                    on_step(number, found)
                if terminated or truncated:
                    done, status, grade = True, str(info.get("status")), info.get("grade")
        finally:
            env.close()
    report.differences.extend(_end_differences(episode, status, grade))
    return report
