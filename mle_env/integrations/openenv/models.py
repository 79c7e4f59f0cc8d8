"""The typed messages of mle-env's OpenEnv server: one action, one observation and the session's state, as
OpenEnv's pydantic models (``openenv.core.env_server.types``).

- :class:`MLEAction`: an mle-env action (:mod:`mle_env.actions`): ``type`` (shell, python, validate, submit,
  score_dev) with ``code``, ``timeout`` and ``path`` where that type takes them.
- :class:`MLEObservation`: every key of an MLEEnv observation (:mod:`mle_env.observation`) as plain JSON
  values, plus ``reward``/``done`` (OpenEnv's), ``terminated``/``truncated`` (Gymnasium's), ``status`` (the
  env's ``info["status"]``), ``prompt`` (the observation as a model reads it,
  :func:`mle_env.text_interface.render_observation`), ``info`` (the env's info, JSON-able) and ``grade``
  (the GradeReport dict on the last step, else None).
- :class:`MLEState`: the session's episode id, competition, step count and status.
"""

from __future__ import annotations

from typing import Any, Literal

from openenv.core.env_server.types import Action, Observation, State
from pydantic import ConfigDict, Field

ActionType = Literal["shell", "python", "validate", "submit", "score_dev"]
#: the keys of an MLEEnv observation, in its order
OBSERVATION_KEYS = ("task", "files", "action", "stdout", "stderr", "exit_code", "timed_out", "message",
                    "time_left", "steps_left")


class MLEAction(Action):
    """One action of an episode; the server hands it to ``MLEEnv.step``, which checks which fields go with
    which type (shell and python need ``code``; score_dev needs ``path``) and answers a wrong combination with
    a malformed-action observation."""

    type: ActionType = Field(description="shell, python, validate, submit or score_dev")
    code: str | None = Field(default=None, description="shell: a bash command; python: code for the "
                                                       "episode's persistent interpreter")
    timeout: float | None = Field(default=None, gt=0, description="seconds this shell/python action may run")
    path: str | None = Field(default=None, description="validate/score_dev: a file relative to the working "
                                                       "directory")

    def to_env_action(self) -> dict[str, Any]:
        """The action as ``MLEEnv.step`` takes it: ``type`` and the fields that are set."""
        return self.model_dump(include={"type", "code", "timeout", "path"}, exclude_none=True)


class MLEObservation(Observation):
    """What a reset or a step returns (see the module docstring); newer servers' extra fields are ignored."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    task: str = ""
    files: str = ""
    action: str = ""
    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    timed_out: int = 0
    message: str = ""
    time_left: float = 0.0
    steps_left: int = -1
    terminated: bool = False
    truncated: bool = False
    status: str = "running"
    prompt: str = ""
    info: dict[str, Any] = Field(default_factory=dict)
    grade: dict[str, Any] | None = None

    def env_observation(self) -> dict[str, Any]:
        """The MLEEnv observation keys as a plain dict (for :mod:`mle_env.text_interface` and policies)."""
        return {key: getattr(self, key) for key in OBSERVATION_KEYS}


class MLEState(State):
    """The session's episode: ``episode_id``, ``step_count`` (OpenEnv's), ``competition`` (its id, None before
    the first reset), ``status`` (``idle`` before it, then ``info["status"]``) and where it is recorded."""

    competition: str | None = None
    status: str = "idle"
    sandbox: str | None = None
    episode_dir: str | None = None
