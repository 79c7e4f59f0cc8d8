"""mle-env: ML-engineering competitions as Gymnasium environments, graded exactly as MLE-bench does.

The public surface is small and lazy: ``import mle_env`` loads no docker, ray, torch or pandas (a test
pins this); each name is imported on first use. Importing registers every competition with Gymnasium,
so ``gymnasium.make("mle_env/<id>-v0")`` works afterwards.

    >>> import mle_env
    >>> env = mle_env.make("insults")                      # doctest: +SKIP
    >>> report = mle_env.grade("insults", "submission.csv")  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import Any

from mle_env.version import __version__ as __version__  # re-exported

# name -> (module, attribute); imported on first access (PEP 562)
_LAZY: dict[str, tuple[str, str]] = {
    "make": ("mle_env.env", "make"),
    "MLEEnv": ("mle_env.env", "MLEEnv"),
    "EnvConfig": ("mle_env.config", "EnvConfig"),
    "run_episode": ("mle_env.episode", "run_episode"),
    "EpisodeResult": ("mle_env.episode", "EpisodeResult"),
    "make_policy": ("mle_env.agents", "make_policy"),
    "evaluate": ("mle_env.evaluation.runner", "evaluate"),
    "EvalConfig": ("mle_env.evaluation.runner", "EvalConfig"),
    "grade": ("mle_env.grading.grader", "grade"),
    "GradeReport": ("mle_env.grading.report", "GradeReport"),
    "Medal": ("mle_env.grading.medals", "Medal"),
    "prepare": ("mle_env.prepare.runner", "prepare"),
    "get_spec": ("mle_env.competition.registry", "get_spec"),
    "register_competition": ("mle_env.competition.registry", "register_competition"),
    "list_competitions": ("mle_env.competition.registry", "list_competitions"),
    "CompetitionSpec": ("mle_env.competition.spec", "CompetitionSpec"),
    "to_jsonable": ("mle_env.observation", "to_jsonable"),
}

__all__ = sorted([*_LAZY, "__version__"])


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'mle_env' has no attribute '{name}'") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)


def _register_with_gymnasium() -> None:
    from mle_env.competition.registry import on_competitions_added
    from mle_env.errors import MleEnvError
    from mle_env.gym_registration import register_gym_ids

    on_competitions_added(register_gym_ids)  # competitions registered later get their ids too
    try:
        register_gym_ids()
    except MleEnvError as e:  # a broken user folder must not make the package unimportable
        import warnings

        warnings.warn(f"mle_env: competitions were not registered with Gymnasium: {e}", stacklevel=2)


_register_with_gymnasium()
