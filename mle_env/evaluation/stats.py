"""Statistics over repeated episodes: unbiased pass@k and the MLE-bench leaderboard numbers.

Tiers are cumulative: ``gold``, ``silver`` (silver or better), ``any_medal`` (bronze or better) and
``above_median``.

Every scheduled episode (each competition x seed asked for) is in every denominator. An episode's
outcome (:func:`outcome`) is ``ok``, ``sandbox_broken`` (the agent broke its own sandbox; graded on what
it left), ``agent_error`` (its code raised; graded), ``infra_error`` (its infrastructure still failed
after the retries) or ``not_run`` (no attempt recorded yet: the run was interrupted). The last two have
no grade and count as no medal, as MLE-bench pads incomplete seeds with failures; reports show how many
there are, so that a medal rate never rises by dropping episodes.

- pass@k of one competition with n scheduled episodes, c of them successful, is the unbiased estimate
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
#: how reports, tables and plots name each tier (one vocabulary: the tiers are cumulative)
TIER_LABELS = {"any_medal": "any medal", "gold": "gold", "silver": "silver or better", "above_median": "above median"}


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Unbiased pass@k: the chance that at least one of k episodes drawn from the n finished ones succeeded."""
    if k < 1 or n < k:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


OUTCOMES = ("ok", "sandbox_broken", "agent_error", "infra_error", "not_run")
NO_GRADE = ("infra_error", "not_run")  # outcomes counted as no medal because nothing was graded

Key = tuple[str, int]


def success(record: dict[str, Any], tier: str) -> bool:
    """Whether an episode reached ``tier`` (cumulative tiers, see the module docstring); an episode
    without a grade (infrastructure failure, not run) never does."""
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


def outcome(record: dict[str, Any]) -> str:
    """How an episode ended, one of :data:`OUTCOMES`."""
    status = record.get("status")
    if status in NO_GRADE or status == "agent_error":
        return str(status)
    if record.get("end") == "sandbox_broken":
        return "sandbox_broken"
    return "ok"


def finished(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per (competition, seed) that finished: the last that is not an infrastructure error."""
    out: dict[Key, dict[str, Any]] = {}
    for r in records:
        if r.get("status") != "infra_error":
            out[(r["competition_id"], int(r["seed"]))] = r
    return list(out.values())


def scheduled_keys(records: Iterable[dict[str, Any]], config: dict[str, Any] | None = None) -> list[Key]:
    """Every scheduled (competition, seed): those config.json lists (``scheduled``: seeds per competition,
    else ``competitions`` x ``seeds``) and any that has a record."""
    config = config or {}
    keys: set[Key] = set()
    per_competition = config.get("scheduled") or {c: config.get("seeds", 0) for c in config.get("competitions", [])}
    for cid, seeds in per_competition.items():
        keys.update((cid, s) for s in range(int(seeds)))
    keys.update((r["competition_id"], int(r["seed"])) for r in records)
    return sorted(keys)


def episodes(records: Sequence[dict[str, Any]], scheduled: Iterable[Key] | None = None,
             splits: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """One record per scheduled episode (default: every episode with a record): its finished record, else
    its last infrastructure-error record (it failed after the retries), else a ``not_run`` placeholder.
    The last two have no grade: they count as no medal."""
    last: dict[Key, dict[str, Any]] = {}
    done: dict[Key, dict[str, Any]] = {}
    split_of = dict(splits or {})
    for r in records:
        key = (r["competition_id"], int(r["seed"]))
        last[key] = r
        if r.get("status") != "infra_error":
            done[key] = r
        if r.get("split"):
            split_of.setdefault(r["competition_id"], r["split"])
    keys = sorted(set(scheduled) if scheduled is not None else set(last))
    out = []
    for cid, seed in keys:
        record = done.get((cid, seed)) or last.get((cid, seed))
        if record is None:
            record = {"competition_id": cid, "seed": seed, "status": "not_run", "end": "", "grade": None}
        if not record.get("split"):
            record = {**record, "split": split_of.get(cid)}
        out.append(record)
    return out


def count_outcomes(rows: Iterable[dict[str, Any]]) -> dict[str, int]:
    counts = dict.fromkeys(OUTCOMES, 0)
    for r in rows:
        counts[outcome(r)] += 1
    return counts


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


def per_competition(records: Sequence[dict[str, Any]], scheduled: Iterable[Key] | None = None,
                    splits: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """For each competition: scheduled episodes (n), how they ended, successes per tier, pass@k for every
    k <= n (episodes without a grade count as failures), scores."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in episodes(records, scheduled, splits):
        groups.setdefault(r["competition_id"], []).append(r)
    table = {}
    for cid, rows in sorted(groups.items()):
        n = len(rows)
        graded = [e["grade"] for e in rows if (e.get("grade") or {}).get("score") is not None]
        scores = [g["score"] for g in graded]
        lower = bool(graded and graded[0].get("is_lower_better"))
        counts = count_outcomes(rows)
        row: dict[str, Any] = {
            "n": n, "split": rows[0].get("split"), "scores": scores,
            "best_score": (min if lower else max)(scores) if scores else None,
            "mean_score": statistics.fmean(scores) if scores else None,
            "outcomes": counts, "agent_errors": counts["agent_error"], "sandbox_broken": counts["sandbox_broken"],
            "infra_errors": counts["infra_error"], "not_run": counts["not_run"],
        }
        for tier in TIERS:
            c = sum(success(e, tier) for e in rows)
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


def leaderboard(records: Sequence[dict[str, Any]], tier: str = "any_medal", scheduled: Iterable[Key] | None = None,
                splits: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """MLE-bench's headline per split and over all: the share of scheduled competitions reaching ``tier``
    per seed (episodes without a grade count as failures), as mean ± SEM over seeds."""
    rows_all = episodes(records, scheduled, splits)
    groups: dict[str, list[dict[str, Any]]] = {"all": rows_all}
    for r in rows_all:
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
                     "episodes": len(rows), "no_grade": sum(outcome(r) in NO_GRADE for r in rows),
                     "per_seed": dict(zip(seeds, per_seed, strict=True))}
    return out
