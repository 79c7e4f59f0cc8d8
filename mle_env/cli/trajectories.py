"""``mle-env export RUN_DIR`` (episodes as chat-format training data) and ``mle-env replay TRAJECTORY``
(re-run a recorded episode and show where its results differ).

``export`` writes JSONL to ``--out`` (replaced whole once complete) or to standard output, and says on
standard error how many episodes it wrote, left out and skipped. ``replay`` prints one row per step and the
differences; its exit status is 0 when the episode reproduced, 1 when something differs (2 for errors).
Both keep the agent's text from driving the terminal: the JSONL escapes control characters
(:func:`mle_env.jsonl.dumps_line`) and the replay's tables print it :func:`~mle_env.display_text.terminal_safe`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from mle_env.display_text import plain_text, terminal_safe

VALUE_WIDTH = 60
ACTION_WIDTH = 50


def add_parser(sub: argparse._SubParsersAction) -> None:
    from mle_env.config import SANDBOXES
    from mle_env.export import DEFAULT_OUTPUT_CHARS, END_STATUSES, FINISHED_STATUSES, FORMATS
    from mle_env.trajectory import MEDALS

    p = sub.add_parser("export", help="write finished episodes as chat-format training data (JSONL)")
    p.add_argument("paths", nargs="+", type=Path, metavar="RUN_DIR",
                   help="a run directory (mle-env run's record dir, mle-env eval's --out), an episode's folder or "
                        "trajectory files")
    p.add_argument("--format", choices=FORMATS, default="openai-chat",
                   help="openai-chat (messages with tool calls) or sharegpt (conversations); default openai-chat")
    p.add_argument("--min-medal", choices=MEDALS[1:], help="keep episodes graded this medal or better")
    p.add_argument("--status", action="append", choices=END_STATUSES, metavar="STATUS",
                   help=f"keep episodes that ended so ({', '.join(END_STATUSES)}); repeat for several "
                        f"(default: those that ended on their own: {', '.join(FINISHED_STATUSES)})")
    p.add_argument("--output-chars", type=int, default=DEFAULT_OUTPUT_CHARS,
                   help=f"characters kept of each result's stdout and stderr (default {DEFAULT_OUTPUT_CHARS})")
    p.add_argument("--out", type=Path, help="the JSONL file to write (default: standard output)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("replay", help="re-run a recorded episode's actions in a fresh sandbox and show what differs")
    p.add_argument("trajectory", type=Path, help="a trajectory .jsonl or an episode's folder")
    p.add_argument("--sandbox", choices=SANDBOXES, help="where to replay (default: the recorded sandbox)")
    p.add_argument("--dev-split", type=float, help="the dev split of an episode whose trajectory did not record it")
    p.add_argument("--exact", action="store_true",
                   help="compare outputs exactly (by default times, dates and durations in them are ignored)")
    p.add_argument("--record-dir", type=Path, help="keep the replay's own episode folder here")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_replay)


def cmd_export(args: argparse.Namespace) -> int:
    from mle_env.errors import MleEnvError
    from mle_env.export import export

    if args.output_chars < 1:
        raise MleEnvError(f"--output-chars must be at least 1; got {args.output_chars}")
    options = dict(format=args.format, min_medal=args.min_medal, status=args.status, output_chars=args.output_chars)
    if args.out is not None:
        result = export(args.paths, out=args.out, **options)
    else:  # a complete file first, so that standard output never gets half an export
        with tempfile.TemporaryDirectory(prefix="mle-env-export-") as tmp:
            result = export(args.paths, out=Path(tmp) / "export.jsonl", **options)
            with open(Path(tmp) / "export.jsonl", encoding="utf-8") as f:
                shutil.copyfileobj(f, sys.stdout)
            sys.stdout.flush()
    where = f" to {args.out}" if args.out is not None else ""
    print(terminal_safe(f"exported {result.written} episodes{where} ({result.filtered} left out by the filters, "
                        f"{len(result.skipped)} files skipped)"), file=sys.stderr)
    return 0


def _cells(recorded: object, replayed: object) -> tuple[str, str]:
    """The two values as table cells; of two texts of several lines, the first line that differs (numbered)."""
    from mle_env.cli.show import clip_lines

    if isinstance(recorded, str) and isinstance(replayed, str) and "\n" in recorded.strip() + replayed.strip():
        before, now = recorded.splitlines(), replayed.splitlines()
        pairs = enumerate(zip(before, now, strict=False))
        at = next((i for i, (a, b) in pairs if a.rstrip() != b.rstrip()), min(len(before), len(now)))
        recorded = f"line {at + 1}: " + (before[at] if at < len(before) else "(no such line)")
        replayed = f"line {at + 1}: " + (now[at] if at < len(now) else "(no such line)")
    out = []
    for value in (recorded, replayed):
        text = value if isinstance(value, str) else json.dumps(value)
        text = clip_lines(text.rstrip("\n"), 6) or "(empty)"
        out.append("\n".join(line if len(line) <= VALUE_WIDTH else line[:VALUE_WIDTH] + "..."
                             for line in text.splitlines()))
    return out[0], out[1]


def cmd_replay(args: argparse.Namespace) -> int:
    from rich.table import Table

    from mle_env.cli.competitions import console
    from mle_env.replay import replay
    from mle_env.trajectory import load_episode

    report = replay(args.trajectory, args.sandbox, dev_split=args.dev_split, exact=args.exact,
                    record_dir=args.record_dir)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, default=str))
        return 0 if report.same else 1
    out = console()
    by_step: dict[int | None, list[str]] = {}
    for d in report.differences:
        by_step.setdefault(d.step, []).append(d.field)
    steps = Table(title=plain_text(f"replay of {report.trajectory} ({report.competition_id}, seed {report.seed}, "
                                   f"{report.sandbox} sandbox)"))
    for column in ("step", "action", "result"):
        steps.add_column(column)
    codes = [str(s["action"].get("code") or "") if isinstance(s.get("action"), dict) else ""
             for s in load_episode(report.trajectory, require_end=False).steps]
    for number, action in enumerate(report.actions, 1):
        fields = by_step.get(number)
        code = codes[number - 1].strip().split("\n", 1)[0] if number <= len(codes) else ""
        code = code if len(code) <= ACTION_WIDTH else code[:ACTION_WIDTH] + "..."
        verdict = (plain_text("differs: " + ", ".join(fields), style="bold red") if fields
                   else plain_text("same", style="green"))
        steps.add_row(str(number), plain_text(f"{action}: {code}" if code else action), verdict)
    out.print(steps)
    if report.differences:
        table = Table(title="differences")
        for column in ("step", "field", "recorded", "replayed"):
            table.add_column(column, overflow="fold")
        for d in report.differences:
            recorded, replayed = _cells(d.recorded, d.replayed)
            table.add_row("end" if d.step is None else str(d.step), plain_text(d.field), plain_text(recorded),
                          plain_text(replayed))
        out.print(table)
    for note in report.notes:
        out.print(plain_text(f"note: {note}", style="yellow"))
    if report.replay_trajectory:
        out.print(plain_text(f"replay trajectory: {report.replay_trajectory}", style="dim"))
    verdict = ("reproduced: no differences" if report.same else
               f"{len(report.differences)} differences (steps {', '.join(map(str, report.differing_steps())) or '-'})")
    out.print(plain_text(f"{report.replayed_steps} of {report.recorded_steps} steps replayed; {verdict}",
                         style="bold green" if report.same else "bold red"))
    return 0 if report.same else 1
