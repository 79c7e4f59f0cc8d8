"""``mle-env eval`` (an agent over many competitions and seeds) and ``mle-env report DIR``."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from mle_env.cli.competitions import console
from mle_env.cli.episodes import add_agent_arguments, add_env_arguments, agent_options, env_options
from mle_env.display_text import markup_safe, terminal_safe


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="run an agent over competitions x seeds and report pass@k")
    p.add_argument("--competitions", nargs="+", required=True, metavar="NAME",
                   help="ids, aliases, splits (lite, medium, high, dev, practice) or @FILE with one id per line")
    p.add_argument("--seeds", type=int, default=1, help="episodes per competition (seeds 0..K-1)")
    p.add_argument("--workers", type=int, default=1, help="episodes at a time in the local pool")
    p.add_argument("--out", type=Path, required=True, help="the run directory (rerun to resume)")
    p.add_argument("--ray", dest="ray_address", metavar="ADDRESS", help="run on this Ray cluster instead")
    p.add_argument("--cpus-per-episode", type=float, default=1.0, help="Ray: CPUs each episode declares")
    p.add_argument("--gpus-per-episode", type=float, default=0.0, help="Ray: GPUs each episode declares")
    p.add_argument("--data-dir", help="a data folder shared by all workers (their MLE_ENV_HOME)")
    p.add_argument("--max-infra-retries", type=int, default=2,
                   help="retries of an episode whose infrastructure failed (default 2); one still failing after "
                        "them counts as no medal")
    p.add_argument("--inject-infra-failure", action="append", default=[], metavar="COMPETITION:SEED[:N]",
                   help="testing aid: the sandbox of this episode's first attempt (first N attempts) fails as if "
                        "its engine went away")
    add_env_arguments(p)
    add_agent_arguments(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("report", help="rebuild summary.json, tables and plots from a run's results.jsonl")
    p.add_argument("out", type=Path, metavar="RUN_DIR",
                   help="the run directory of `mle-env eval` (its --out): the folder holding results.jsonl")
    p.add_argument("--json", action="store_true", help="print summary.json instead of tables")
    p.add_argument("--pad-missing", action="store_true",
                   help="MLE-bench's columns: count a competition's missing reports as runs without a submission "
                        "(default: complete seeds only, as MLE-bench aggregates)")
    p.add_argument("--mlebench-format", type=Path, metavar="DIR",
                   help="also write the run's grading reports as MLE-bench's submission process reads them: "
                        "DIR/runs/<run group per seed>/<timestamp>_grading_report.json and "
                        "DIR/runs/run_group_experiments.csv")
    p.add_argument("--experiment-id", help="the experiment id of those run groups (default: the run's agent)")
    p.set_defaults(func=cmd_report)


def cmd_eval(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from mle_env.competition.registry import select_competitions
    from mle_env.evaluation import EvalConfig, evaluate
    from mle_env.evaluation.results import check_comparable
    from mle_env.evaluation.runner import check_config, episodes_to_run

    config = EvalConfig(
        agent=args.agent, agent_options=agent_options(args), competitions=select_competitions(args.competitions),
        seeds=args.seeds, out=args.out, workers=args.workers, env_options=env_options(args),
        ray_address=args.ray_address,
        cpus_per_episode=args.cpus_per_episode, gpus_per_episode=args.gpus_per_episode, data_dir=args.data_dir,
        max_infra_retries=args.max_infra_retries, inject_infra_failures=args.inject_infra_failure,
    )
    check_config(config)  # a bad option or another agent's --out is refused before any count is printed
    check_comparable(config.out, config.to_json())
    out = console()
    todo = len(episodes_to_run(config))
    total = len(config.competitions) * config.seeds
    out.print(markup_safe(f"{args.agent}: {len(config.competitions)} competitions x {config.seeds} seeds = {total} "
                          f"episodes scheduled; {total - todo} already finished in {args.out}; checking the setup "
                          "before the first one"))
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=out) as progress:
        bar = progress.add_task("episodes", total=todo)

        def on_result(record: dict, done: int, _total: int) -> None:
            grade = record.get("grade") or {}
            tag = record["status"] if record["status"] != "ok" else grade.get("medal", "")
            if record.get("end") == "sandbox_broken":
                tag = f"sandbox_broken {tag}"
            reason = ""
            if record["status"] != "ok" and record.get("error"):  # why, in one line (never a blank reason)
                reason = f": {record['error'].strip().splitlines()[-1][:200]}"
            progress.print(markup_safe(f"{record['competition_id']} seed {record['seed']} "
                                       f"(attempt {record['attempt']}): {tag} {grade.get('score', '')}{reason}"))
            progress.update(bar, completed=done)

        evaluate(config, progress=on_result)
    return show_report(args.out, as_json=False)


def show_report(path: Path, as_json: bool, pad_missing: bool = False) -> int:
    import json

    from mle_env.evaluation.report import render, summarize

    summary = summarize(path, pad_missing)
    if as_json:
        print(json.dumps(summary, indent=2, default=str))
    else:
        out = console()
        render(summary, out)
        plot = summary.get("plot") or {}
        where = f"plot: {plot['path']}" if plot.get("path") else plot.get("note") or "no plot"
        out.print(markup_safe(f"summary: {Path(path) / 'summary.json'}; {where}"))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    if not (args.out / "results.jsonl").is_file():
        print(terminal_safe(f"error: {args.out} has no results.jsonl: pass the --out folder of `mle-env eval`"),
              file=sys.stderr)
        return 2
    if args.mlebench_format is not None:
        from mle_env.evaluation.mlebench_board import write_mlebench_reports
        from mle_env.evaluation.results import read_config, read_results

        agent = re.sub(r"[^A-Za-z0-9._-]+", "-", str(read_config(args.out).get("agent") or "")).strip("-.")[:100]
        experiment = args.experiment_id or agent or "mle-env"
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", experiment):
            print(terminal_safe(f"error: experiment id {experiment!r} is not a name of letters, digits, '.', '_' and "
                                "'-': pass --experiment-id NAME"), file=sys.stderr)
            return 2
        written = write_mlebench_reports(read_results(args.out), args.mlebench_format, experiment)
        print(terminal_safe(f"wrote {len(written)} grading report(s) (one run group per seed) under "
                            f"{args.mlebench_format / 'runs'}"), file=sys.stderr)
    return show_report(args.out, args.json, args.pad_missing)
