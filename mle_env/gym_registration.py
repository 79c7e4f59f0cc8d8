"""Registers every competition with Gymnasium as ``mle_env/<id>-v<version>``.

Runs when ``mle_env`` is imported, reading only folder names and TOML headers, so that
``gymnasium.make("mle_env/<id>-v0")`` works after ``import mle_env``. The environment itself (and with
it docker, pandas and the grader) is imported only when ``gymnasium.make`` builds one.
"""

from __future__ import annotations

from collections.abc import Iterable

ENTRY_POINT = "mle_env.env:MLEEnv"


def register_gym_ids(ids: Iterable[str] | None = None) -> list[str]:
    """Register the given competition ids (default: all) with Gymnasium; returns the Gymnasium ids."""
    import gymnasium

    from mle_env.competition.registry import registry

    reg = registry()
    out = []
    for cid in reg.ids() if ids is None else ids:
        gym_id = f"mle_env/{cid}-v{reg.version(cid)}"
        if gym_id not in gymnasium.registry:
            # nondeterministic: program output and wall-clock budgets differ between runs of the same seed
            gymnasium.register(id=gym_id, entry_point=ENTRY_POINT, kwargs={"competition_id": cid},
                               nondeterministic=True)
        out.append(gym_id)
    return out
