"""How mle-env writes numbers and tables (the CLI, eval reports): scores to MLE-bench's 5 decimals,
leaderboard places in words, and tables that stay readable at 80 columns (or give way to one record per
line)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: MLE-bench rounds every score to 5 decimals before comparing it (mle_env.grading.medals.round_score)
SCORE_DECIMALS = 5


def format_score(value: float | None) -> str:
    """A score or threshold as MLE-bench compares it: rounded to 5 decimals ("" for None)."""
    if value is None:
        return ""
    return f"{round(float(value), SCORE_DECIMALS):.{SCORE_DECIMALS}f}"


def rank_text(rank: int, percentile: float, teams: int) -> str:
    """Where a score places among a leaderboard's ``teams``: how many it beats, ties and trails.

    ``rank`` is 1-based (ties share the better place) and ``percentile`` the share of teams with a strictly
    worse score, as in a GradeReport. "place 120 ... beats 1 of the 120 teams" reads as what it is: ahead of
    one team, not last.
    """
    beaten = round(percentile * teams)
    behind = rank - 1
    ties = max(0, teams - beaten - behind)
    return (f"place {rank}: beats {beaten} of the {teams} teams ({percentile:.1%}), ties {ties}, "
            f"behind {behind}")


def thresholds_text(grade: dict[str, Any]) -> str:
    """The medal thresholds and median of a grade report's dict, each a score to 5 decimals."""
    parts = [f"{name} {format_score(grade.get(f'{name}_threshold'))}" for name in ("gold", "silver", "bronze")]
    parts.append(f"median {format_score(grade.get('median_threshold'))}")
    teams = grade.get("leaderboard_teams")
    return "  ".join(parts) + (f"  ({teams} teams)" if teams is not None else "")


def fits(console: Any, renderable: Any, whole: Iterable[str] = ()) -> bool:
    """Whether ``renderable`` (a rich table) prints within ``console``'s width whole: no cell cut to "…"
    (rich's mark for text it had no room for), no line wider than the console (it would be cropped), and
    each of the ``whole`` texts (ids, say) on one line rather than folded over several."""
    import io

    from rich.cells import cell_len
    from rich.console import Console

    probe = Console(width=console.width, file=io.StringIO(), color_system=None, emoji=False, highlight=False)
    text = "".join(segment.text for segment in probe.render(renderable, probe.options))
    return ("…" not in text and all(cell_len(line) <= console.width for line in text.splitlines())
            and all(w in text for w in whole))
