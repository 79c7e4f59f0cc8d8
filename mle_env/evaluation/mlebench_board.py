"""MLE-bench's leaderboard columns, computed as its ``experiments/aggregate_grading_reports.py`` does, and its
grading reports written in the layout its submission process reads.

The columns are Low (= Lite, 22 competitions), Medium (38), High (15) and All (75), each over every
competition of MLE-bench's list (:data:`mle_env.competition.mlebench_ids.COLUMNS`), whether mle-env ran it or
not. For each column:

- Every episode with a record is one of its competition's *reports*: graded ones as graded; one whose
  infrastructure failed after the retries as a report with no submission (MLE-bench grades every run it
  attempted, a missing file included). An episode never run has no report.
- Seeds are built as MLE-bench builds them: the i-th seed takes the i-th report of each competition, the
  reports of a competition in seed order (MLE-bench: in the order its grading reports are read).
  By default only *complete* seeds count: as many seeds as the competition with the fewest reports has, and a
  column with a competition without any report has no number (MLE-bench raises). With ``pad_missing``
  the number of seeds is the largest report count, and each missing report counts as a run without a
  submission (no medal).
- Per seed, each metric is the percentage of the column's competitions (any medal = gold, silver or
  bronze); over seeds, the mean, the standard error of the mean (sample standard deviation / sqrt(n); 0.0
  with one seed, as MLE-bench's scipy call gives) and the 95 % interval mean ± 1.96 SEM.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from mle_env.competition.mlebench_ids import COLUMNS
from mle_env.evaluation.stats import episodes

#: the leaderboard's column labels
LABELS = {"low": "Low (Lite)", "medium": "Medium", "high": "High", "all": "All"}
#: MLE-bench's per-seed metrics, in its order: (name, the report flag it counts)
METRICS = (("submission_exists", "submission_exists"), ("valid_submissions", "valid_submission"),
           ("above_median", "above_median"), ("gold_medal", "gold_medal"), ("silver_medal", "silver_medal"),
           ("bronze_medal", "bronze_medal"), ("any_medal", "any_medal"))
#: the fields of one competition's report in MLE-bench's grading report, in its order
REPORT_FIELDS = ("competition_id", "score", "gold_threshold", "silver_threshold", "bronze_threshold",
                 "median_threshold", "any_medal", "gold_medal", "silver_medal", "bronze_medal", "above_median",
                 "submission_exists", "valid_submission", "is_lower_better", "created_at", "submission_path")


def _report(record: dict[str, Any]) -> dict[str, Any]:
    """One episode as MLE-bench's competition report: its grade's fields, or (no grade: the infrastructure
    failed after the retries) a report of a run that left no submission."""
    grade = record.get("grade") or {}
    report = {name: grade.get(name) for name in REPORT_FIELDS}
    for flag in ("any_medal", "gold_medal", "silver_medal", "bronze_medal", "above_median", "submission_exists",
                 "valid_submission", "is_lower_better"):
        report[flag] = bool(report[flag])
    report["competition_id"] = record["competition_id"]
    report["created_at"] = report["created_at"] or record.get("finished_at") or ""
    report["submission_path"] = report["submission_path"] or ""
    return report


def reports_by_competition(records: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each competition's reports (:func:`_report`), in seed order; episodes never run have none."""
    out: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(episodes(records), key=lambda r: (r["competition_id"], int(r["seed"]))):
        if r.get("status") != "not_run":
            out.setdefault(r["competition_id"], []).append({**_report(r), "seed": int(r["seed"])})
    return out


def _mean_sem(values: list[float]) -> dict[str, float]:
    mean = statistics.fmean(values)
    sem = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return {"mean": mean, "sem": sem, "ci_lower": mean - 1.96 * sem, "ci_upper": mean + 1.96 * sem}


def column(reports: dict[str, list[dict[str, Any]]], ids: Sequence[str], pad_missing: bool = False,
           num_seeds: int = -1) -> dict[str, Any]:
    """One column over the competitions ``ids``: ``seeds`` used, ``per_seed`` metrics (percentages),
    ``metrics`` (mean, sem, ci_lower, ci_upper of each), or ``error`` when no complete seed can be built;
    ``missing``: the competitions without any report. ``num_seeds``: at most this many seeds (-1: all)."""
    counts = {cid: len(reports.get(cid, [])) for cid in ids}
    missing = [cid for cid in ids if not counts[cid]]
    out: dict[str, Any] = {"competitions": len(ids), "with_reports": len(ids) - len(missing), "missing": missing}
    available = max(counts.values(), default=0) if pad_missing else min(counts.values(), default=0)
    if not ids or available == 0:
        why = ("no competition has a report" if pad_missing or len(missing) == len(ids) else
               f"{len(missing)} of its {len(ids)} competitions have no report (--pad-missing counts each as a run "
               "without a submission)")
        return {**out, "seeds": 0, "error": why}
    seeds = available if num_seeds == -1 else min(num_seeds, available)
    per_seed = []
    for i in range(seeds):
        of_seed = [reports[cid][i] if i < counts[cid] else None for cid in ids]  # None: padded, no submission
        per_seed.append({name: 100.0 * sum(bool(r and r[flag]) for r in of_seed) / len(ids)
                         for name, flag in METRICS})
    metrics = {name: _mean_sem([s[name] for s in per_seed]) for name, _ in METRICS}
    return {**out, "seeds": seeds, "per_seed": per_seed, "metrics": metrics}


def board(records: Sequence[dict[str, Any]], pad_missing: bool = False, num_seeds: int = -1,
          columns: dict[str, Sequence[str]] | None = None) -> dict[str, dict[str, Any]]:
    """Every column of MLE-bench's leaderboard (default :data:`COLUMNS`) for the run's records."""
    reports = reports_by_competition(records)
    return {name: column(reports, ids, pad_missing, num_seeds) for name, ids in (columns or COLUMNS).items()}


def cell(col: dict[str, Any], metric: str = "any_medal") -> str:
    """A column's number as the leaderboard prints it: ``mean ± SEM`` (percent); "-" without one."""
    if "error" in col:
        return "-"
    m = col["metrics"][metric]
    return f"{m['mean']:.1f} ± {m['sem']:.1f}"


def write_mlebench_reports(records: Sequence[dict[str, Any]], out_dir: Path, experiment_id: str) -> list[Path]:
    """Write the run's reports as MLE-bench's submission process reads them: one run group per seed,
    ``runs/<run group>/<timestamp>_grading_report.json`` (its ``grade_jsonl`` output: the totals and the
    competition reports), and ``runs/run_group_experiments.csv`` mapping ``experiment_id`` to the run groups.
    Run groups sort in seed order (the order the aggregation reads them). Returns the reports written."""
    reports = reports_by_competition(records)
    by_seed: dict[int, list[dict[str, Any]]] = {}
    for cid in sorted(reports):
        for report in reports[cid]:
            by_seed.setdefault(report["seed"], []).append({k: report[k] for k in REPORT_FIELDS})
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H-%M-%S-GMT")
    runs = Path(out_dir) / "runs"
    written, groups = [], []
    for seed, competition_reports in sorted(by_seed.items()):
        group = f"{stamp}_run-group_{experiment_id}_seed{seed:04d}"
        folder = runs / group
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{stamp}_grading_report.json"
        totals = {flag: sum(r[flag] for r in competition_reports) for flag in
                  ("gold_medal", "silver_medal", "bronze_medal", "above_median", "submission_exists",
                   "valid_submission")}
        summary = {"total_runs": len(competition_reports), "total_runs_with_submissions": totals["submission_exists"],
                   "total_valid_submissions": totals["valid_submission"],
                   "total_medals": totals["gold_medal"] + totals["silver_medal"] + totals["bronze_medal"],
                   "total_gold_medals": totals["gold_medal"], "total_silver_medals": totals["silver_medal"],
                   "total_bronze_medals": totals["bronze_medal"], "total_above_median": totals["above_median"],
                   "competition_reports": competition_reports}
        path.write_text(json.dumps(summary, indent=2))
        written.append(path)
        groups.append(group)
    runs.mkdir(parents=True, exist_ok=True)
    with open(runs / "run_group_experiments.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["experiment_id", "run_group"])
        writer.writerows([experiment_id, group] for group in groups)
    return written
