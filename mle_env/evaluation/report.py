"""Reports of an evaluation, rebuilt from results.jsonl and config.json alone (``mle-env report DIR``).

Writes ``summary.json`` (the headline, how every scheduled episode ended, per competition, pass@k per
tier, the leaderboard numbers, infrastructure errors) and ``pass_at_k.png`` (pass@k against k, one line
per tier), and renders rich tables. Every scheduled episode is in every denominator: those that failed
for infrastructure reasons after the retries, or have not run, count as no medal and are shown apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mle_env.evaluation.results import read_config, read_results
from mle_env.evaluation.stats import (
    NO_GRADE,
    TIERS,
    count_outcomes,
    episodes,
    leaderboard,
    outcome,
    overall_pass_at_k,
    per_competition,
    scheduled_keys,
)


def summarize(out: Path) -> dict[str, Any]:
    """The summary of the run in ``out`` (also written to ``out/summary.json``)."""
    out = Path(out)
    records = read_results(out)
    config = read_config(out)
    scheduled = scheduled_keys(records, config)
    splits = config.get("splits") or {}
    rows = episodes(records, scheduled, splits)
    table = per_competition(records, scheduled, splits)
    max_k = max((row["n"] for row in table.values()), default=0)
    counts = count_outcomes(rows)
    finished = {(r["competition_id"], int(r["seed"])) for r in rows if outcome(r) not in NO_GRADE}
    infra = [r for r in records if r.get("status") == "infra_error"]
    seeds = sorted({sum(1 for r in rows if r["competition_id"] == cid) for cid in table})
    summary = {
        "config": config,
        "episodes": {
            "scheduled": len(rows), "competitions": len(table), "seeds": seeds[-1] if len(seeds) == 1 else seeds,
            **counts, "counted_as_no_medal": sum(counts[o] for o in NO_GRADE),
            "infra_error_attempts": len(infra),
            "infra_retried_then_finished": sum((r["competition_id"], int(r["seed"])) in finished for r in infra),
            "max_infra_retries": config.get("max_infra_retries"),
        },
        "leaderboard": {tier: leaderboard(records, tier, scheduled, splits) for tier in TIERS},
        "pass_at_k": overall_pass_at_k(table, max_k),
        "per_competition": table,
        "infra_errors": [{**{k: r.get(k) for k in ("competition_id", "seed", "attempt", "error")},
                          "episode_finished": (r["competition_id"], int(r["seed"])) in finished} for r in infra],
    }
    summary["headline"] = headline(summary)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    plot(summary, out / "pass_at_k.png")
    return summary


def headline(summary: dict[str, Any]) -> str:
    """One line: what was scheduled and how every scheduled episode ended."""
    e = summary["episodes"]
    agent = summary["config"].get("agent", "")
    seeds = e["seeds"]
    if isinstance(seeds, list):
        shape = f"{e['competitions']} competitions ({min(seeds, default=0)}-{max(seeds, default=0)} seeds each)"
    else:
        shape = f"{e['competitions']} competitions x {seeds} seeds"
    retries = e.get("max_infra_retries")
    parts = [f"{e['ok']} ok", f"{e['sandbox_broken']} sandbox_broken", f"{e['agent_error']} agent_error",
             f"{e['infra_error']} infra_error" + (f" after {retries} retries" if retries is not None else "")]
    if e["not_run"]:
        parts.append(f"{e['not_run']} not run")
    text = f"{agent + ': ' if agent else ''}{shape} = {e['scheduled']} episodes scheduled: {', '.join(parts)}"
    if e["counted_as_no_medal"]:
        text += f"; the {e['counted_as_no_medal']} without a grade count as no medal"
    return text


def plot(summary: dict[str, Any], path: Path) -> Path | None:
    """pass@k against k for each tier (skipped, returning None, without matplotlib or data)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    curves = summary["pass_at_k"]
    if not any(curves[t] for t in TIERS):
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
    labels = {"any_medal": "any medal", "gold": "gold", "silver": "silver or better", "above_median": "above median"}
    ks: set[int] = set()
    for n, tier in enumerate(TIERS):
        points = [(int(k), v["mean"]) for k, v in curves[tier].items() if v["mean"] is not None]
        if points:
            ks.update(p[0] for p in points)
            ax.plot([p[0] for p in points], [100 * p[1] for p in points], marker="o", markersize=8 - 1.5 * n,
                    label=labels[tier])
    ax.set_xticks(sorted(ks))
    ax.set_xlabel("k (episodes per competition)")
    ax.set_ylabel("pass@k (%), mean over competitions")
    ax.set_ylim(-3, 103)
    ax.grid(alpha=0.3)
    ax.legend()
    agent = summary["config"].get("agent", "")
    ax.set_title(f"{agent}: pass@k per tier")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def render(summary: dict[str, Any], console: Any) -> None:
    """Rich tables: MLE-bench's leaderboard format, pass@k per tier, and one row per competition."""
    from rich.markup import escape
    from rich.table import Table

    from mle_env.display_text import markup_safe

    console.print(f"[bold]{escape(summary.get('headline') or headline(summary))}[/bold]")
    lb = Table(title="Medals per seed (MLE-bench's leaderboard format): mean ± SEM over seeds")
    lb.add_column("split")
    for tier in TIERS:
        lb.add_column(tier.replace("_", " "))
    lb.add_column("competitions")
    splits = summary["leaderboard"]["any_medal"]
    for split in sorted(splits, key=lambda s: (s == "all", s)):
        cells = []
        for tier in TIERS:
            row = summary["leaderboard"][tier][split]
            mean = "n/a" if row["mean"] is None else f"{row['mean']:.1f}%"
            cells.append(mean + (f" ± {row['sem']:.1f}" if row["sem"] is not None else " (1 seed, no SEM)"))
        lb.add_row(split, *cells, str(splits[split]["competitions"]))
    console.print(lb)

    pk = Table(title="pass@k, mean over competitions (every scheduled episode counts; n/a: fewer than k)")
    pk.add_column("tier")
    ks = sorted({int(k) for tier in TIERS for k in summary["pass_at_k"][tier]})
    for k in ks:
        pk.add_column(f"pass@{k}")
    for tier in TIERS:
        cells = []
        for k in ks:
            v = summary["pass_at_k"][tier].get(k) or summary["pass_at_k"][tier].get(str(k)) or {}
            cell = _pct(v.get("mean"))
            if v.get("undefined"):
                cell += f" ({v['undefined']} n/a)"
            cells.append(cell)
        pk.add_row(tier.replace("_", " "), *cells)
    console.print(pk)

    comp = Table(title="Per competition (n: scheduled episodes)")
    for col in ("competition", "split", "n", "any medal", "gold", "above median", "best score", "agent errors",
                "sandbox broken", "infra errors", "not run"):
        comp.add_column(col)
    for cid, row in summary["per_competition"].items():
        best = row["best_score"]
        comp.add_row(markup_safe(cid), str(row["split"]), str(row["n"]), f"{row['any_medal']['successes']}/{row['n']}",
                     f"{row['gold']['successes']}/{row['n']}", f"{row['above_median']['successes']}/{row['n']}",
                     "" if best is None else f"{best:.5g}", str(row["agent_errors"]), str(row.get("sandbox_broken", 0)),
                     str(row.get("infra_errors", 0)), str(row.get("not_run", 0)))
    console.print(comp)
    e = summary["episodes"]
    if summary["infra_errors"]:
        console.print(f"[yellow]{e['infra_error_attempts']} attempt(s) failed for infrastructure reasons: "
                      f"{e['infra_retried_then_finished']} were retried and the episode then finished; "
                      f"{e['infra_error']} episode(s) still failed after the retries and count as no medal[/yellow]")
    if e["not_run"]:
        console.print(f"[yellow]{e['not_run']} scheduled episode(s) have not run (the run was interrupted?): they "
                      "count as no medal; rerun the same command to run them[/yellow]")
