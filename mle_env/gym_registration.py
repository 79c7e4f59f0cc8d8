"""Registers every competition with Gymnasium as ``mle_env/<id>-v<version>``.

Runs when ``mle_env`` is imported, reading only folder names and TOML headers, so that
``gymnasium.make("mle_env/<id>-v0")`` works after ``import mle_env``. The environment itself (and with
it docker, pandas and the grader) is imported only when ``gymnasium.make`` builds one.

``gymnasium.make(id, max_episode_steps=N)`` puts Gymnasium's TimeLimit around the env, which would cut the
episode after N steps without grading it. Every id is therefore registered with one extra wrapper step,
:func:`graded_step_budget`, which Gymnasium applies right after TimeLimit: it gives the env the same N as
its graded step budget (``step_limit``), so the env itself truncates at step N and grades the submission;
TimeLimit's cut then falls on the same step and changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

ENTRY_POINT = "mle_env.env:MLEEnv"
BUDGET_HOOK = "mle_env.gym_registration:graded_step_budget"


def graded_step_budget(env: Any) -> Any:
    """Applied by ``gymnasium.make`` after its TimeLimit wrapper: the TimeLimit's ``max_episode_steps`` becomes
    the env's graded step budget. Returns ``env`` itself (no wrapper is added)."""
    import gymnasium
    from gymnasium.wrappers import TimeLimit

    layer = env
    while isinstance(layer, gymnasium.Wrapper):
        if isinstance(layer, TimeLimit):
            env.unwrapped._apply_max_episode_steps(layer._max_episode_steps)
            break
        layer = layer.env
    return env


def register_gym_ids(ids: Iterable[str] | None = None) -> list[str]:
    """Register the given competition ids (default: all) with Gymnasium; returns the Gymnasium ids."""
    import gymnasium
    from gymnasium.envs.registration import WrapperSpec

    from mle_env.competition.registry import registry

    hook = WrapperSpec(name="GradedStepBudget", entry_point=BUDGET_HOOK, kwargs={})

    reg = registry()
    out = []
    for cid in reg.ids() if ids is None else ids:
        gym_id = f"mle_env/{cid}-v{reg.version(cid)}"
        if gym_id not in gymnasium.registry:
            # nondeterministic: program output and wall-clock budgets differ between runs of the same seed
            gymnasium.register(id=gym_id, entry_point=ENTRY_POINT, kwargs={"competition_id": cid},
                               nondeterministic=True, additional_wrappers=(hook,))
        out.append(gym_id)
    return out
