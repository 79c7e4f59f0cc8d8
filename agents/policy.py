"""The policy interface every agent and scaffold implements.

A policy sees what the agent would see and answers with an action::

    policy.reset(obs, info)          # once per episode, with reset()'s observation and info
    action = policy.act(obs, info)   # after reset and after every step that did not end the episode

``obs`` is an MLEEnv observation (keys in :mod:`mle_env.observation`); ``info`` is the info of the same
reset/step. Reset's info also describes the task for programs: ``metric`` (name, lower_is_better),
``submission`` (header, id_column, targets, kind, sample), ``domain``. An action is whatever
``env.step`` accepts (:mod:`mle_env.actions`).

A policy that wants something in the trajectory (LLM token counts, its plan) returns it from
:meth:`Policy.annotations`; :func:`mle_env.run_episode` attaches it to the step's record. A policy that
needs the env itself (to fork the episode, as AIDE's ``fork`` option does) defines ``bind_env(env)``:
``run_episode`` calls it with the unwrapped MLEEnv after ``env.reset`` and before ``policy.reset``.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Policy(Protocol):
    """Anything with ``reset(obs, info)`` and ``act(obs, info) -> action``."""

    def reset(self, obs: dict[str, Any], info: dict[str, Any]) -> None: ...

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any] | str: ...


class BasePolicy:
    """Convenience base class: no-op reset, and a queue of annotations for the trajectory."""

    def __init__(self) -> None:
        self._annotations: dict[str, Any] = {}

    def reset(self, obs: dict[str, Any], info: dict[str, Any]) -> None:
        self._annotations = {}

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any] | str:
        raise NotImplementedError

    def annotate(self, **data: Any) -> None:
        """Queue data for the trajectory record of the next step."""
        self._annotations.update(data)

    def annotations(self) -> dict[str, Any]:
        """Data for the trajectory record of the step about to be taken (cleared once read)."""
        data, self._annotations = self._annotations, {}
        return data

    def close(self) -> None:
        """Release what the policy holds (LLM clients, files); called by run_episode at the end."""
