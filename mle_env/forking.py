"""Forking a running episode: :class:`Forkable`, the part of ``MLEEnv`` that holds ``fork`` (MLEEnv inherits
it, so this module needs nothing of mle_env.env; see "Forking" in :mod:`mle_env.env` for what is carried).

The fork is a shallow copy of the env (the same competition, grader, limits, reward and options) with a
sandbox of its own, started from a snapshot of the parent's (:meth:`mle_env.sandbox.base.Sandbox.fork`), its
own episode folder and a trajectory that begins with the parent's header (naming the parent and the step)
and the parent's step records so far.
"""

from __future__ import annotations

import copy
import time
import uuid
from typing import TYPE_CHECKING, Any, TypeVar

from gymnasium.error import ResetNeeded

from mle_env.artifacts import ArtifactKeeper
from mle_env.errors import SandboxBroken
from mle_env.recording import TRAJECTORY_NAME, TrajectoryWriter, read_trajectory
from mle_env.sandbox.endpoint import ValidationEndpoint
from mle_env.test_score_log import LOG_NAME as TEST_SCORES_NAME
from mle_env.test_score_log import TestScoreLog

if TYPE_CHECKING:
    from mle_env.sandbox import Sandbox

Env = TypeVar("Env", bound="Forkable")

#: header fields that are the parent's own, not the fork's
_OWN_FIELDS = ("type", "format", "started_at", "episode_id", "sandbox_info", "fork")


class Forkable:
    """Gives the episode (``MLEEnv``) its :meth:`fork`; it reads the env's episode state (sandbox, trajectory
    writer, clocks) and writes the fork's."""

    def fork(self: Env, replay_python: bool = False) -> Env:
        """A new, independent episode in this one's exact state (see "Forking" in :mod:`mle_env.env`).

        Args:
            replay_python: re-run this episode's python cells in the fork's fresh interpreter.

        Raises:
            ResetNeeded: the episode has ended (or never started).
            SandboxUnavailable: the sandbox could not be snapshotted or the fork's could not start.
        """
        return _fork(self, replay_python)


def _fork(parent: Env, replay_python: bool) -> Env:
    if parent._done or parent._sandbox is None or parent._writer is None:
        raise ResetNeeded("only a running episode can be forked: this one has ended (or never started); fork it "
                          "before its last step, or call reset()")
    elapsed = time.monotonic() - parent._started
    records = read_trajectory(parent._writer.path)
    header = next(r for r in records if r.get("type") == "header")
    steps = [r for r in records if r.get("type") == "step"]
    sandbox = parent._sandbox.fork()  # the snapshot; raises SandboxUnavailable
    if sandbox.serves_endpoint:
        sandbox.endpoint = ValidationEndpoint(parent.grader.validate, parent.grader.max_bytes)
    info = sandbox.start()  # cleans up after itself (the snapshot too) when it fails
    try:
        return _finish(parent, sandbox, info.to_dict(), header, steps, elapsed, replay_python)
    except BaseException:
        sandbox.close()
        raise


def _finish(parent: Env, sandbox: Sandbox, info: dict[str, Any], header: dict[str, Any],
            steps: list[dict[str, Any]], elapsed: float, replay_python: bool) -> Env:
    """The fork around its started sandbox: the env, its replayed cells, its trajectory, its first observation."""
    child = copy.copy(parent)
    child._own_sandbox(sandbox)  # closed with the fork, or by its finalizer if the fork is dropped unclosed
    child._np_random = copy.deepcopy(parent._np_random)
    child._annotations, child._last_obs = {}, None
    endpoint = parent._sandbox.endpoint
    child._feedback = parent._feedback.copy(endpoint.answered if endpoint is not None else 0)
    child._sandbox_info = info
    child.dev = copy.copy(parent.dev)  # the best dev score so far is carried, and then the fork's own
    child._started = time.monotonic() - elapsed  # the snapshot's time is charged to neither clock
    failures = _replay(child, sandbox, steps) if replay_python else None
    note = _note(header.get("episode_id"), parent._steps, failures, getattr(sandbox, "fork_skipped", []))
    episode_id = uuid.uuid4().hex
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    child._episode_dir = parent.record_dir / f"{parent.competition.id}-{stamp}-{episode_id[:8]}"
    child._writer = TrajectoryWriter(child._episode_dir / TRAJECTORY_NAME)
    child._artifacts = ArtifactKeeper(child._episode_dir, parent.config.artifacts_max_bytes,
                                      parent.config.artifacts_max_files)
    child._test_log = (TestScoreLog(child._episode_dir / TEST_SCORES_NAME, parent.grader.grade, child._started)
                       if parent._test_log is not None else None)
    if sandbox.endpoint is not None:  # the fork's uploads are the fork's (its hidden test-score log)
        sandbox.endpoint.validate = child.endpoint_validator()
    fork = {"parent_episode": header.get("episode_id"), "parent_trajectory": str(parent._writer.path),
            "step": parent._steps, "elapsed_s": elapsed, "replay_python": replay_python,
            "replay_failures": failures}
    child._writer.header(**{k: v for k, v in header.items() if k not in _OWN_FIELDS}, episode_id=episode_id,
                         sandbox_info=info, fork=fork)
    for record in steps:
        child._writer.write(record)
    child._fork_note = note
    obs = child._observe("fork", message=note)
    child.fork_info = {"observation": obs, **fork, "message": note, "trajectory": str(child._writer.path),
                       "episode_dir": str(child._episode_dir), "sandbox_info": info}
    return child


def _replay(child: Forkable, sandbox: Sandbox, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Re-run the parent's python cells in order in the fork's fresh interpreter; the cells that failed."""
    failures: list[dict[str, Any]] = []
    for record in steps:
        action = record.get("action")
        if record.get("kind") != "python" or not isinstance(action, dict) or action.get("type") != "python":
            continue
        timeout = min(action.get("timeout") or child.action_timeout, max(child._time_left(), 0.001))
        try:
            result = sandbox.exec("python", action.get("code") or "", timeout)
        except SandboxBroken as e:
            failures.append({"step": record.get("step"), "error": f"the sandbox broke: {e}"})
            break
        if result.timed_out or result.exit_code != 0:
            last = (result.stderr.strip().splitlines() or [""])[-1][:300]
            failures.append({"step": record.get("step"),
                             "error": "timed out" if result.timed_out else f"exit code {result.exit_code}: {last}"})
    return failures


def _note(parent: str | None, step: int, failures: list[dict[str, Any]] | None, skipped: list[str]) -> str:
    text = (f"forked from episode {parent} after step {step}: its files (the workspace, /tmp, the home folder) "
            "and the budget it spent are carried; the python interpreter is a fresh one (variables, imports and "
            "models in memory are gone) and no background process was carried")
    if failures is not None:
        text += "; the parent's python cells were re-run in order" + (
            ", all without error" if not failures else
            f", {len(failures)} failed: " + "; ".join(f"step {f['step']} ({f['error']})" for f in failures[:10]))
    if skipped:
        text += f"; {len(skipped)} entries could not be copied (pipes, sockets, unreadable files): " + ", ".join(
            skipped[:10])
    return text
