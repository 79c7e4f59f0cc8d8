"""Kaggle's medal thresholds, exactly as MLE-bench applies them to every competition.

With N leaderboard teams sorted best first, a threshold is the score at a 1-based position:

==============  ===========================  ======================  ======================
teams N         gold                         silver                  bronze
==============  ===========================  ======================  ======================
1 to 99         max(1, int(0.10 N))          max(1, int(0.20 N))     max(1, int(0.40 N))
100 to 249      10                           max(1, int(0.20 N))     max(1, int(0.40 N))
250 to 999      10 + int(0.002 N)            50                      100
1000 and more   10 + int(0.002 N)            max(1, int(0.05 N))     max(1, int(0.10 N))
==============  ===========================  ======================  ======================

The median threshold is the plain median of all scores. A score equal to a threshold wins it (ties win);
only the highest tier is awarded; "above median" is strict. Scores are rounded to 5 decimals before they
are compared (see :func:`round_score`).
"""

from __future__ import annotations

import enum
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

SCORE_DECIMALS = 5


class Medal(enum.IntEnum):
    """A medal tier; its value is the default reward (0 none, 1 bronze, 2 silver, 3 gold)."""

    NONE = 0
    BRONZE = 1
    SILVER = 2
    GOLD = 3


@dataclass(frozen=True)
class Thresholds:
    """Scores needed for each medal and the leaderboard median, plus the team count they came from."""

    gold: float
    silver: float
    bronze: float
    median: float
    n_teams: int
    lower_is_better: bool


def round_score(score: float) -> float:
    """Round a score to 5 decimals, as MLE-bench does before every comparison."""
    return round(float(score), SCORE_DECIMALS)


def medal_positions(n_teams: int) -> tuple[int, int, int]:
    """1-based leaderboard positions of the gold, silver and bronze thresholds for ``n_teams`` teams."""
    if n_teams < 1:
        raise ValueError(f"a leaderboard needs at least one team, got {n_teams}")
    if n_teams < 100:
        return max(1, int(n_teams * 0.1)), max(1, int(n_teams * 0.2)), max(1, int(n_teams * 0.4))
    if n_teams < 250:
        return 10, max(1, int(n_teams * 0.2)), max(1, int(n_teams * 0.4))
    if n_teams < 1000:
        return 10 + int(n_teams * 0.002), 50, 100
    return 10 + int(n_teams * 0.002), max(1, int(n_teams * 0.05)), max(1, int(n_teams * 0.1))


def medal_thresholds(scores: Sequence[float], lower_is_better: bool) -> Thresholds:
    """Gold, silver, bronze and median thresholds of a leaderboard.

    Args:
        scores: every team's score, in any order (they are sorted best first here).
        lower_is_better: the metric's direction.

    Raises:
        ValueError: ``scores`` is empty.
    """
    ranked = sorted((float(s) for s in scores), reverse=not lower_is_better)
    gold, silver, bronze = (ranked[p - 1] for p in medal_positions(len(ranked)))
    return Thresholds(gold, silver, bronze, float(statistics.median(ranked)), len(ranked), lower_is_better)


def _at_least(score: float, threshold: float, lower_is_better: bool) -> bool:
    return score <= threshold if lower_is_better else score >= threshold


def medal_for(score: float, thresholds: Thresholds) -> Medal:
    """The highest medal ``score`` (already rounded) earns; a tie with a threshold wins it."""
    for medal, threshold in ((Medal.GOLD, thresholds.gold), (Medal.SILVER, thresholds.silver),
                             (Medal.BRONZE, thresholds.bronze)):
        if _at_least(score, threshold, thresholds.lower_is_better):
            return medal
    return Medal.NONE


def is_above_median(score: float, thresholds: Thresholds) -> bool:
    """Strictly better than the leaderboard median."""
    if thresholds.lower_is_better:
        return score < thresholds.median
    return score > thresholds.median


def rank_and_percentile(score: float, scores: Sequence[float], lower_is_better: bool) -> tuple[int, float]:
    """Where ``score`` would place: 1-based rank (ties share the better rank) and the fraction beaten.

    The fraction beaten is the share of leaderboard teams with a strictly worse score.
    """
    better = sum(1 for s in scores if (s < score if lower_is_better else s > score))
    worse = sum(1 for s in scores if (s > score if lower_is_better else s < score))
    return better + 1, worse / len(scores)
