"""Reports of an evaluation, rebuilt from results.jsonl and config.json alone (``mle-env report DIR``).

Writes ``summary.json`` (the headline, how every scheduled episode ended, per competition, pass@k per tier,
the leaderboard numbers, infrastructure errors, and ``plot``: the plot's path, or why there is none) and
``pass_at_k.png`` (pass@k against k, one line per tier; needs matplotlib, the ``plots`` extra), and renders
rich tables that stay readable at 80 columns. Tiers are named as in
:data:`~mle_env.evaluation.stats.TIER_LABELS` everywhere ("silver or better", not "silver"). Every scheduled
episode is in every denominator: those that failed for infrastructure reasons after the retries, or have not
run, count as no medal and are shown apart.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from mle_env.competition.mlebench_ids import COLUMNS
from mle_env.disclosure import summarize_disclosures
from mle_env.evaluation.mlebench_board import LABELS, board, cell
from mle_env.evaluation.results import read_config, read_results
from mle_env.evaluation.stats import (
    NO_GRADE,
    TIER_LABELS,
    TIERS,
    count_outcomes,
    episodes,
    leaderboard,
    outcome,
    overall_pass_at_k,
    per_competition,
    scheduled_keys,
)


def summarize(out: Path, pad_missing: bool = False) -> dict[str, Any]:
    """The summary of the run in ``out`` (also written to ``out/summary.json``, with the pass@k plot beside
    it). ``mlebench``: MLE-bench's leaderboard columns when the run has any of its competitions (see
    :mod:`~mle_env.evaluation.mlebench_board`; ``pad_missing`` as its option), else None."""
    out = Path(out)
    summary = summary_of(out, pad_missing)
    summary["plot"] = plot_or_reason(summary, out / "pass_at_k.png")
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    return summary


def summary_of(out: Path, pad_missing: bool = False) -> dict[str, Any]:
    """What :func:`summarize` writes, but the plot, computed without writing anything (``mle-env view``
    reads runs it must not change)."""
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
    per_cid = Counter(r["competition_id"] for r in rows)
    seeds = sorted({per_cid[cid] for cid in table})
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
        "disclosure": summarize_disclosures([r.get("disclosure") for r in records
                                             if r.get("status") in ("ok", "agent_error")]),
    }
    summary["disclosure"]["audit"] = audit_verdicts(out)
    ours = any(r["competition_id"] in COLUMNS["all"] for r in records)
    summary["mlebench"] = {"pad_missing": pad_missing, "columns": board(records, pad_missing)} if ours else None
    summary["headline"] = headline(summary)
    return summary


#: what to install for the pass@k plot (pyproject.toml's ``plots`` extra)
PLOTS_HINT = "pip install 'mle-env[plots]'"


def plot_or_reason(summary: dict[str, Any], path: Path) -> dict[str, str | None]:
    """Draw the pass@k plot at ``path``; returns ``{"path": ..., "note": None}``, or ``{"path": None,
    "note": why not}`` (no matplotlib, or nothing to plot) so that no report names a file it did not write."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return {"path": None, "note": f"no pass@k plot: it needs matplotlib ({PLOTS_HINT})"}
    written = plot(summary, path)
    if written is None:
        return {"path": None, "note": "no pass@k plot: no episode has a grade yet"}
    return {"path": str(written), "note": None}


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
    failed_after = f" after {retries} retries" if retries and e["infra_error"] else ""  # only when retried
    parts = [f"{e['ok']} ok", f"{e['sandbox_broken']} sandbox_broken", f"{e['agent_error']} agent_error",
             f"{e['infra_error']} infra_error{failed_after}"]
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
    ks: set[int] = set()
    for n, tier in enumerate(TIERS):
        points = [(int(k), v["mean"]) for k, v in curves[tier].items() if v["mean"] is not None]
        if points:
            ks.update(p[0] for p in points)
            # equal curves (all at 100 %, say) would hide each other: each tier is shifted a little along k,
            # which is whole, and has its own marker and dash, so every one stays visible at its true value
            shift = (n - (len(TIERS) - 1) / 2) * 0.06
            ax.plot([p[0] + shift for p in points], [100 * p[1] for p in points], marker=_MARKERS[n],
                    linestyle=_DASHES[n], markersize=6, label=TIER_LABELS[tier])
    ax.set_xticks(sorted(ks))
    ax.set_xlabel("k (episodes per competition; tiers drawn side by side)")
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


_MARKERS = ("o", "s", "^", "D")
_DASHES = ("-", "--", "-.", ":")


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def render(summary: dict[str, Any], console: Any) -> None:
    """Rich tables: MLE-bench's leaderboard format, pass@k per tier, and one row per competition. Each fits
    80 columns: short cells that wrap at spaces, and the rare counts of failures in one column."""
    from rich.markup import escape


    console.print(f"[bold]{escape(summary.get('headline') or headline(summary))}[/bold]")
    one_seed = False
    lb = _table("Medals per seed and split, over the scheduled episodes: mean ± SEM over seeds")
    lb.add_column("split")
    for tier in TIERS:
        lb.add_column(TIER_LABELS[tier])
    lb.add_column("competitions")
    splits = summary["leaderboard"]["any_medal"]
    for split in sorted(splits, key=lambda s: (s == "all", s)):
        cells = []
        for tier in TIERS:
            row = summary["leaderboard"][tier][split]
            mean = "n/a" if row["mean"] is None else f"{row['mean']:.1f}%"
            one_seed = one_seed or row["sem"] is None
            cells.append(mean + (f" ± {row['sem']:.1f}" if row["sem"] is not None else ""))
        lb.add_row(escape(split), *cells, str(splits[split]["competitions"]))
    if one_seed:
        lb.caption = "no ± SEM: one seed"
    console.print(lb)
    if summary.get("mlebench"):
        _print_mlebench(summary["mlebench"], console)

    pk = _table("pass@k, mean over competitions (every scheduled episode counts; n/a: fewer than k)")
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
        pk.add_row(TIER_LABELS[tier], *cells)
    console.print(pk)

    _print_per_competition(summary["per_competition"], console)
    e = summary["episodes"]
    if summary["infra_errors"]:
        console.print(f"[yellow]{e['infra_error_attempts']} attempt(s) failed for infrastructure reasons: "
                      f"{e['infra_retried_then_finished']} were retried and the episode then finished; "
                      f"{e['infra_error']} episode(s) still failed after the retries and count as no medal[/yellow]")
    if e["not_run"]:
        console.print(f"[yellow]{e['not_run']} scheduled episode(s) have not run (the run was interrupted?): they "
                      "count as no medal; rerun the same command to run them[/yellow]")
    if summary.get("disclosure"):
        _print_disclosure(summary["disclosure"], console)


def disclosure_rows(d: dict[str, Any]) -> list[tuple[str, str]]:
    """The disclosure of a run as (what, value) lines, in the order of openai/mle-bench#138."""
    def listed(key: str) -> str:
        return ", ".join(d.get(key) or []) or "-"

    memory = ", ".join(f"{int(v) / 2**30:g} GiB" for v in d.get("memory_bytes") or []) or "no limit"
    wall = d.get("wall_time_s")
    llm = d.get("llm")
    cost = llm and llm.get("cost")
    return [
        ("episodes", f"{d['episodes']}" + (f" ({d['episodes_without']} without one)" if d["episodes_without"] else "")),
        ("CPU", f"{listed('cpu_model')}; limit {listed('cpus')} cores" if d.get("cpu_model") else "-"),
        ("memory", memory), ("GPUs", listed("gpus")),
        ("sandbox", f"{listed('sandbox')} (image {listed('image')})" if d.get("image") else listed("sandbox")),
        ("network", listed("network")), ("time limit (s)", listed("time_limit_s")),
        ("wall time (s)", f"mean {wall['mean']:.0f}, max {wall['max']:.0f}" if wall else "-"),
        ("steps (mean)", f"{d['steps_mean']:.1f}" if d.get("steps_mean") is not None else "-"),
        ("test-set feedback", listed("test_set_feedback")),
        ("validate calls", str(d["validate_calls"])),
        ("score_dev calls", f"{d['score_dev_calls']} (dev split {listed('dev_split')})"),
        ("task text", listed("task_text")),
        ("hidden test scores logged", listed("test_scores_logged")
         + ("; not leaderboard results if anything fed them back" if "True" in (d.get("test_scores_logged") or [])
            else "")),
        ("LLM", f"{llm['calls']} calls, {llm['prompt_tokens']:,} tokens in, {llm['completion_tokens']:,} out"
                + (f", ${cost:.4f}" if isinstance(cost, (int, float)) else ", cost unknown") if llm else "none"),
        ("versions", f"mle-env {listed('mle_env_version')}; competitions {listed('competition_versions')}"),
        ("audit", "not run (mle-env audit RUN_DIR)" if not d.get("audit") else
         f"{d['audit']['flagged']} of {d['audit']['episodes']} episodes flagged"
         + "".join(f"; {name} {n}" for name, n in (d["audit"].get("by_check") or {}).items() if n)),
    ]


def audit_verdicts(out: Path) -> dict[str, Any] | None:
    """The totals of ``mle-env audit`` when it has run on this run folder (its audit.json), else None."""
    try:
        audit = json.loads((out / "audit.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(audit, dict):
        return None
    return {k: audit.get(k) for k in ("episodes", "flagged", "by_check", "by_question", "similar")}


def _print_disclosure(d: dict[str, Any], console: Any) -> None:
    from rich.markup import escape

    table = _table("Disclosure (what the results rest on)")
    table.add_column("")
    table.add_column("", overflow="fold")
    for what, value in disclosure_rows(d):
        table.add_row(what, escape(value))
    console.print(table)


_COMPETITION_TIERS = ("any_medal", "gold", "above_median")


def _print_mlebench(mlebench: dict[str, Any], console: Any) -> None:
    """MLE-bench's own table: each column over all of its competitions, complete seeds only (or padded)."""
    columns = mlebench["columns"]
    padded = mlebench.get("pad_missing")
    table = _table("MLE-bench's leaderboard: % of each column's competitions, mean ± SEM over "
                   + ("seeds, missing reports as failures" if padded else "complete seeds"))
    table.add_column("")
    for name in columns:
        table.add_column(LABELS.get(name, name))
    for metric, label in (("any_medal", "any medal %"), ("gold_medal", "gold %"), ("valid_submissions", "valid %")):
        table.add_row(label, *(cell(col, metric) for col in columns.values()))
    table.add_row("seeds", *(str(col["seeds"]) for col in columns.values()))
    table.add_row("with reports", *(f"{col['with_reports']}/{col['competitions']}" for col in columns.values()))
    short = [f"{LABELS.get(n, n)}: {len(c['missing'])} of {c['competitions']}" for n, c in columns.items()
             if c["missing"]]
    if short:
        table.caption = ("no report for " + "; ".join(short)
                         + ("" if padded else " (`mle-env report --pad-missing` counts them as failures)"))
    console.print(table)


def _print_per_competition(table: dict[str, dict[str, Any]], console: Any) -> None:
    """One row per competition; at a width too narrow for that, one line per competition."""
    from rich.markup import escape

    from mle_env.formatting import fits, format_score

    title = "Per competition (n: scheduled episodes; x/n: episodes reaching the tier)"
    comp = _table(title)
    comp.add_column("competition", no_wrap=True)  # other columns wrap first
    comp.add_column("split")
    comp.add_column("n", justify="right")
    for tier in _COMPETITION_TIERS:
        comp.add_column(TIER_LABELS[tier], justify="right")
    comp.add_column("best score", justify="right")
    comp.add_column("failures", overflow="fold")
    for cid, row in table.items():
        n = row["n"]
        comp.add_row(escape(cid), escape(str(row["split"])), str(n),
                     *(f"{row[tier]['successes']}/{n}" for tier in _COMPETITION_TIERS),
                     format_score(row["best_score"]), _problems(row))
    if fits(console, comp, whole=table):  # a folded id is as unreadable as a cut one
        console.print(comp)
        return
    console.print(f"[italic]{escape(title)}[/italic]")
    for cid, row in table.items():
        n = row["n"]
        tiers = ", ".join(f"{TIER_LABELS[tier]} {row[tier]['successes']}/{n}" for tier in _COMPETITION_TIERS)
        best = f", best score {format_score(row['best_score'])}" if row["best_score"] is not None else ""
        problems = f"; {_problems(row)}" if _problems(row) else ""
        console.print(f"[bold]{escape(cid)}[/bold] {escape(str(row['split']))}, n {n}: {tiers}{best}{problems}")


def _table(title: str) -> Any:
    """A table of light borders whose adjacent cell paddings share one space (room for 8 columns in 80)."""
    from rich import box
    from rich.table import Table

    return Table(title=title, box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False)


def _problems(row: dict[str, Any]) -> str:
    """The competition's episodes that ended badly, as "1 agent error, 2 infra errors" ("" when none)."""
    counts = {"agent error": row["agent_errors"], "sandbox broken": row.get("sandbox_broken", 0),
              "infra error": row.get("infra_errors", 0), "not run": row.get("not_run", 0)}
    return ", ".join(f"{n} {what}" + ("s" if n > 1 and what.endswith("error") else "")
                     for what, n in counts.items() if n)
