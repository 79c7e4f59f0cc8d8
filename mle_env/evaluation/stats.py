"""Statistics over repeated episodes: unbiased pass@k and the MLE-bench leaderboard numbers.

Tiers are cumulative: ``gold``, ``silver`` (silver or better), ``any_medal`` (bronze or better) and
``above_median``. Episodes that ended in an infrastructure error are not in any denominator: a dead
container is not a failed attempt.

- pass@k of one competition with n finished episodes, c of them successful, is the unbiased estimate
  1 - C(n - c, k) / C(n, k) (Chen et al., 2021). It is undefined (None) when n < k: never guessed.
- The leaderboard number (MLE-bench's headline) is, per seed, the share of competitions whose episode of
  that seed won a medal; reported as mean ± standard error of the mean over seeds (SEM undefined with one
  seed), per split and over all competitions.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

TIERS = ("any_medal", "gold", "silver", "above_median")


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Unbiased pass@k: the chance that at least one of k episodes drawn from the n finished ones succeeded."""
    if k < 1 or n < k:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def success(record: dict[str, Any], tier: str) -> bool:
    """Whether a finished episode reached ``tier`` (cumulative tiers, see the module docstring)."""
    grade = record.get("grade") or {}
    medal = grade.get("medal_tier", 0) or 0
    if tier == "gold":
        return medal >= 3
    if tier == "silver":
        return medal >= 2
    if tier == "any_medal":
        return medal >= 1
    if tier == "above_median":
        return bool(grade.get("above_median"))
    raise ValueError(f"unknown tier {tier!r}; use one of {', '.join(TIERS)}")


def finished(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per (competition, seed): the last that is not an infrastructure error."""
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for r in records:
        if r.get("status") != "infra_error":
            out[(r["competition_id"], int(r["seed"]))] = r
    return list(out.values())


@dataclass(frozen=True)
class MeanSem:
    mean: float | None
    sem: float | None
    n: int

    def to_dict(self) -> dict[str, Any]:
        return {"mean": self.mean, "sem": self.sem, "n": self.n}


def mean_sem(values: Sequence[float]) -> MeanSem:
    """Mean and standard error of the mean (sample standard deviation / sqrt(n); None for n < 2)."""
    if not values:
        return MeanSem(None, None, 0)
    mean = statistics.fmean(values)
    sem = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else None
    return MeanSem(mean, sem, len(values))


def per_competition(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """For each competition: episode counts, successes per tier, pass@k for every k <= n, scores."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in finished(records):
        groups.setdefault(r["competition_id"], []).append(r)
    table = {}
    for cid, episodes in sorted(groups.items()):
        n = len(episodes)
        graded = [e["grade"] for e in episodes if (e.get("grade") or {}).get("score") is not None]
        scores = [g["score"] for g in graded]
        lower = bool(graded and graded[0].get("is_lower_better"))
        row: dict[str, Any] = {
            "n": n, "split": episodes[0].get("split"), "scores": scores,
            "best_score": (min if lower else max)(scores) if scores else None,
            "mean_score": statistics.fmean(scores) if scores else None,
            "agent_errors": sum(e["status"] == "agent_error" for e in episodes),
        }
        for tier in TIERS:
            c = sum(success(e, tier) for e in episodes)
            row[tier] = {"successes": c, "pass_at_k": {k: pass_at_k(n, c, k) for k in range(1, n + 1)}}
        table[cid] = row
    return table


def overall_pass_at_k(table: dict[str, dict[str, Any]], max_k: int) -> dict[str, dict[int, dict[str, Any]]]:
    """Mean pass@k over competitions, per tier and k, over the competitions where it is defined."""
    out: dict[str, dict[int, dict[str, Any]]] = {}
    for tier in TIERS:
        out[tier] = {}
        for k in range(1, max_k + 1):
            values = [row[tier]["pass_at_k"][k] for row in table.values() if row[tier]["pass_at_k"].get(k) is not None]
            undefined = len(table) - len(values)
            out[tier][k] = {"mean": statistics.fmean(values) if values else None, "competitions": len(values),
                            "undefined": undefined}
    return out


def leaderboard(records: Sequence[dict[str, Any]], tier: str = "any_medal") -> dict[str, dict[str, Any]]:
    """MLE-bench's headline per split and over all: the share of competitions reaching ``tier`` per seed,
    as mean ± SEM over seeds."""
    done = finished(records)
    groups: dict[str, list[dict[str, Any]]] = {"all": done}
    for r in done:
        groups.setdefault(r.get("split") or "unknown", []).append(r)
    out = {}
    for name, rows in sorted(groups.items()):
        seeds = sorted({int(r["seed"]) for r in rows})
        per_seed = []
        for seed in seeds:
            of_seed = [r for r in rows if int(r["seed"]) == seed]
            per_seed.append(100.0 * sum(success(r, tier) for r in of_seed) / len(of_seed))
        stat = mean_sem(per_seed)
        out[name] = {**stat.to_dict(), "competitions": len({r["competition_id"] for r in rows}),
                     "per_seed": dict(zip(seeds, per_seed, strict=True))}
    return out
