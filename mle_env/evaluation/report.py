"""Reports of an evaluation, rebuilt from results.jsonl alone (``mle-env report DIR``).

Writes ``summary.json`` (per competition, pass@k per tier, the leaderboard numbers, infrastructure
errors) and ``pass_at_k.png`` (pass@k against k, one line per tier), and renders rich tables.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mle_env.evaluation.results import read_config, read_results
from mle_env.evaluation.stats import TIERS, finished, leaderboard, overall_pass_at_k, per_competition


def summarize(out: Path) -> dict[str, Any]:
    """The summary of the run in ``out`` (also written to ``out/summary.json``)."""
    out = Path(out)
    records = read_results(out)
    done = finished(records)
    table = per_competition(records)
    max_k = max((row["n"] for row in table.values()), default=0)
    infra = [r for r in records if r.get("status") == "infra_error"]
    summary = {
        "config": read_config(out),
        "episodes": {"finished": len(done), "ok": sum(r["status"] == "ok" for r in done),
                     "agent_error": sum(r["status"] == "agent_error" for r in done),
                     "infra_error_attempts": len(infra)},
        "leaderboard": {tier: leaderboard(records, tier) for tier in TIERS},
        "pass_at_k": overall_pass_at_k(table, max_k),
        "per_competition": table,
        "infra_errors": [{k: r.get(k) for k in ("competition_id", "seed", "attempt", "error")} for r in infra],
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    plot(summary, out / "pass_at_k.png")
    return summary


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
    from rich.table import Table

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

    pk = Table(title="pass@k, mean over competitions (n/a: fewer than k finished episodes)")
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

    comp = Table(title="Per competition")
    for col in ("competition", "split", "n", "any medal", "gold", "above median", "best score", "agent errors"):
        comp.add_column(col)
    for cid, row in summary["per_competition"].items():
        best = row["best_score"]
        comp.add_row(cid, str(row["split"]), str(row["n"]), f"{row['any_medal']['successes']}/{row['n']}",
                     f"{row['gold']['successes']}/{row['n']}", f"{row['above_median']['successes']}/{row['n']}",
                     "" if best is None else f"{best:.5g}", str(row["agent_errors"]))
    console.print(comp)
    infra = summary["infra_errors"]
    if infra:
        console.print(f"[yellow]{len(infra)} attempt(s) failed for infrastructure reasons "
                      "(retried; not counted against the agent)[/yellow]")
