"""Terminal rewards computed from the grade report (non-terminal steps always give 0).

- ``"medal"`` (default): the medal tier, 0 none, 1 bronze, 2 silver, 3 gold.
- ``"any_medal"``: 1 for bronze or better, else 0.
- ``"above_median"``: 1 when strictly better than the leaderboard median, else 0.
- ``"percentile"``: the fraction of leaderboard teams beaten, in [0, 1].
- ``"dev_improvement"``: with ``dev_split`` only, a shaped reward: each ``score_dev`` step gives the
  improvement of the episode's best dev score, scaled to the leaderboard's spread (:mod:`mle_env.devset`);
  the terminal step gives 0 (its info still holds the test-graded medal).
- a callable ``GradeReport -> float``: anything else.

A missing, invalid or ungraded submission (or a competition without a leaderboard) gives 0 for the named
rewards.
"""

from __future__ import annotations

from collections.abc import Callable

from mle_env.grading.report import GradeReport

RewardFn = Callable[[GradeReport], float]

REWARDS: dict[str, RewardFn] = {
    "medal": lambda report: float(int(report.medal)),
    "any_medal": lambda report: float(report.any_medal),
    "above_median": lambda report: float(report.above_median),
    "percentile": lambda report: float(report.percentile or 0.0),
    "dev_improvement": lambda report: 0.0,  # its rewards come on score_dev steps
}
#: rewards given on score_dev steps, which need ``dev_split``
SHAPED_REWARDS = ("dev_improvement",)


def resolve_reward(reward: str | RewardFn) -> RewardFn:
    """The reward function named (or given) by ``reward``.

    Raises:
        ValueError: an unknown name (the message lists the known ones).
    """
    if callable(reward):
        return reward
    try:
        return REWARDS[reward]
    except KeyError:
        raise ValueError(f"unknown reward {reward!r}; use one of {', '.join(REWARDS)} or a callable") from None
