"""``mle-env show TRAJECTORY|EPISODE_DIR``: an episode as a readable timeline.

One block per step: its number, when it started (seconds after reset), how long it took, the action (its
code clipped to a few lines), the exit code, whether it timed out, stdout and stderr (first and last lines
kept) and the environment's message; then how the episode ended, the grade and, for an episode's folder,
what was kept beside the trajectory. Every string of the trajectory and every file name is made
:func:`~mle_env.display_text.terminal_safe` and printed as plain text (never as rich markup), so output
holding ``[red]``, ``[/x]`` or escape sequences cannot change the display or the terminal.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from mle_env.display_text import plain_text, terminal_safe
from mle_env.formatting import format_score, rank_text, thresholds_text

DEFAULT_LINES = 12
LINE_WIDTH = 200


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("show", help="print an episode (a trajectory or an episode's folder) as a timeline")
    p.add_argument("path", type=Path, help="a trajectory .jsonl or an episode's folder (given the folder of "
                                           "`mle-env eval --out`, lists its episodes and their trajectories)")
    p.add_argument("--lines", type=int, default=DEFAULT_LINES,
                   help=f"lines kept of each output and action (first and last; default {DEFAULT_LINES})")
    p.add_argument("--full", action="store_true", help="print outputs and actions whole")
    p.add_argument("--task", action="store_true", help="print the task text too")
    p.add_argument("--width", type=int, help="width of the display (default: the terminal's)")
    p.set_defaults(func=cmd_show)


def clip_lines(text: str, lines: int | None) -> str:
    """``text`` with at most ``lines`` lines (its first and last ones, the cut marked), each line cut to
    LINE_WIDTH characters; ``None`` keeps everything."""
    if lines is None:
        return text
    rows = text.splitlines()
    rows = [r if len(r) <= LINE_WIDTH else r[:LINE_WIDTH] + f" [... {len(r) - LINE_WIDTH} characters]"
            for r in rows]
    if len(rows) > lines:
        head = max(1, lines // 2)
        tail = max(0, lines - head)
        rows = [*rows[:head], f"[... {len(rows) - head - tail} lines ...]", *(rows[-tail:] if tail else [])]
    return "\n".join(rows)


def _seconds(value: Any) -> str:
    if not isinstance(value, (int, float)):
        return "?"
    if value < 10:
        return f"{value:.2f} s"
    return f"{value:.0f} s" if value < 600 else f"{value / 60:.1f} min" if value < 7200 else f"{value / 3600:.1f} h"


def _action_text(action: Any) -> tuple[str, str]:
    """(a one-line summary of the action, its code or text)."""
    if isinstance(action, dict):
        kind = str(action.get("type", "?"))
        timeout = action.get("timeout")
        extras = [f"timeout {timeout:g} s"] if isinstance(timeout, (int, float)) else []
        if action.get("path"):
            extras.append(f"path {action['path']}")
        return kind + (f" ({', '.join(extras)})" if extras else ""), str(action.get("code") or "")
    return "invalid", str(action)


def _step(record: dict[str, Any], lines: int | None) -> Any:
    from rich.console import Group
    from rich.text import Text

    summary, code = _action_text(record.get("action"))
    exit_code = record.get("exit_code")
    ok = exit_code == 0 and not record.get("timed_out")
    head = Text()
    head.append(f"#{record.get('step', '?')}", style="bold")
    head.append(f"  +{_seconds(record.get('started_at'))}  ", style="dim")
    head.append(summary, style="bold cyan")
    head.append(f"  {_seconds(record.get('duration_s'))}")
    head.append(f"  exit {exit_code}", style="green" if ok else "bold red")
    if record.get("timed_out"):
        head.append("  TIMED OUT", style="bold red")
    time_left, steps_left = record.get("time_left"), record.get("steps_left")
    head.append(f"  (left: {_seconds(time_left)}" + (f", {steps_left} steps)" if isinstance(steps_left, int)
                                                      and steps_left >= 0 else ")"), style="dim")
    parts: list[Any] = [head]
    if code.strip():
        parts.append(Text(_indent(clip_lines(code.rstrip("\n"), lines), "  $ " if summary.startswith("shell")
                                  else "  > "), style="yellow"))
    for key, style in (("stdout", ""), ("stderr", "red")):
        text = record.get(key)
        if isinstance(text, str) and text.strip():
            parts.append(Text(f"  {key}:", style="dim"))
            parts.append(Text(_indent(clip_lines(text.rstrip("\n"), lines), "    "), style=style))
    message = record.get("message")
    if isinstance(message, str) and message.strip():
        parts.append(Text(_indent(message.strip(), "  ! "), style="magenta"))
    policy = record.get("policy")
    repairs = policy.get("repairs") if isinstance(policy, dict) else None
    if isinstance(repairs, dict):  # what the fill-in harness changed in the model's part (agents/repairs.py)
        names = ", ".join(str(r.get("name")) for r in repairs.get("fired", []) if isinstance(r, dict))
        parts.append(Text(f"  harness repairs: {names}", style="cyan"))
        diff = repairs.get("diff")
        if isinstance(diff, str) and diff.strip():
            parts.append(Text(_indent(clip_lines(diff.rstrip("\n"), lines), "    "), style="cyan"))
        policy = {k: v for k, v in policy.items() if k != "repairs"}  # type: ignore[union-attr]
    if isinstance(policy, dict) and policy:
        parts.append(Text("  policy: " + clip_lines(_short_json(policy), 1), style="dim"))
    return Group(*parts)


def _indent(text: str, prefix: str) -> str:
    pad = " " * len(prefix)
    return "\n".join((prefix if n == 0 else pad) + line for n, line in enumerate(text.splitlines()))


def _short_json(value: Any) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= LINE_WIDTH else text[: LINE_WIDTH - 3] + "..."


def _safe(value: Any) -> Any:
    """``value`` (a record, or any nesting of lists and dicts) with every string, keys too, terminal_safe."""
    if isinstance(value, str):
        return terminal_safe(value)
    if isinstance(value, dict):
        return {_safe(k): _safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_safe(v) for v in value]
    return value


def _grade_table(grade: dict[str, Any]) -> Any:
    """The grade as a table of plain-text cells (its reasons quote the agent's column names)."""
    from rich.table import Table

    table = Table(show_header=False, title=plain_text(f"grade: {grade.get('competition_id', '?')}"))
    for label, value in _grade_rows(grade):
        table.add_row(plain_text(label), plain_text(value))
    return table


def _grade_rows(grade: dict[str, Any]) -> list[tuple[str, str]]:
    rows = [("status", str(grade.get("status")))]
    if grade.get("score") is not None:
        direction = "lower" if grade.get("is_lower_better") else "higher"
        rows.append(("score", f"{format_score(grade['score'])} ({direction} is better)"))
    for key, label in (("invalid_reason", "invalid"), ("grader_error", "grader error")):
        if grade.get(key):
            rows.append((label, str(grade[key])))
    if grade.get("gold_threshold") is not None:
        rows.append(("medal", str(grade.get("medal") or "none").upper() if grade.get("any_medal") else "none"))
        rows.append(("thresholds", thresholds_text(grade)))
        if (isinstance(grade.get("rank"), int) and isinstance(grade.get("percentile"), (int, float))
                and isinstance(grade.get("leaderboard_teams"), int)):
            rows.append(("rank", rank_text(grade["rank"], grade["percentile"], grade["leaderboard_teams"])))
    elif grade.get("leaderboard_note"):
        rows.append(("medal", str(grade["leaderboard_note"])))
    return rows


def _kept(folder: Path) -> list[str]:
    """What an episode's folder holds besides the trajectory, one line each."""
    out = []
    for entry in sorted(folder.iterdir()):
        if entry.name.endswith(".jsonl"):
            continue
        if entry.is_dir() and not entry.is_symlink():
            files = [p for p in entry.rglob("*") if p.is_file() and not p.is_symlink()]
            size = sum(p.stat().st_size for p in files)
            out.append(f"{terminal_safe(entry.name)}/  {len(files)} files, {size} bytes"
                       + ("  (capped: see TRUNCATED.txt)" if (entry / "TRUNCATED.txt").is_file() else ""))
        elif entry.is_file():
            out.append(f"{terminal_safe(entry.name)}  {entry.stat().st_size} bytes")
    return out


def render(records: list[dict[str, Any]], *, lines: int | None = DEFAULT_LINES, task: bool = False,
           folder: Path | None = None) -> list[Any]:
    """The renderables of a trajectory's timeline (printed in order by :func:`cmd_show`); every string of
    ``records`` is made terminal_safe first."""
    from rich.rule import Rule
    from rich.text import Text

    records = _safe(records)
    out: list[Any] = []
    header = next((r for r in records if r.get("type") == "header"), None)
    if header is not None:
        title = f"{header.get('competition_id', '?')} (v{header.get('competition_version', '?')})"
        out.append(Rule(Text(title, style="bold")))
        limits = [f"seed {header.get('seed')}", f"sandbox {header.get('sandbox')}",
                  f"time limit {_seconds(header.get('time_limit'))}",
                  f"step limit {header.get('step_limit') if header.get('step_limit') is not None else 'none'}",
                  f"started {header.get('started_at', '?')}"]
        out.append(Text("   ".join(limits), style="dim"))
        if task and isinstance(header.get("task"), str):
            out.append(Text(header["task"].rstrip()))
    else:
        out.append(Text("(no header: not the start of a trajectory)", style="yellow"))
    steps = [r for r in records if r.get("type") == "step"]
    for record in steps:
        out.append(Text(""))
        out.append(_step(record, lines))
    footer = next((r for r in reversed(records) if r.get("type") == "footer"), None)
    out.append(Text(""))
    if footer is None:
        out.append(Rule(Text(f"no end yet: {len(steps)} steps (still running, or its process died)",
                             style="yellow")))
        return out
    reward = footer.get("reward")
    out.append(Rule(Text(f"{footer.get('status')}: {footer.get('steps')} steps in "
                         f"{_seconds(footer.get('elapsed_s'))}, reward {reward:g}" if isinstance(reward, (int, float))
                         else f"{footer.get('status')}", style="bold")))
    grade = footer.get("grade")
    if isinstance(grade, dict):
        out.append(_grade_table(grade))
    else:
        out.append(Text("not graded (an infrastructure error, or the episode was abandoned)", style="yellow"))
    artifacts = footer.get("artifacts")
    if isinstance(artifacts, dict):
        for error in artifacts.get("errors") or []:
            out.append(Text(f"not kept: {error}", style="yellow"))
    if folder is not None:
        kept = _kept(folder)
        if kept:
            listing = "\n".join("  " + k for k in kept)
            out.append(Text(f"kept in {terminal_safe(str(folder))}:\n{listing}", style="dim"))
    return out


RESULTS_NAME = "results.jsonl"  # what `mle-env eval` writes in its --out folder (mle_env.evaluation.results)


def run_results(path: Path) -> Path | None:
    """The results.jsonl of an evaluation's run folder when ``path`` is that folder (or that file), else
    None. An episode's folder, which holds a trajectory, is never taken for a run folder."""
    from mle_env.recording import TRAJECTORY_NAME

    if path.is_dir() and (path / RESULTS_NAME).is_file() and not (path / TRAJECTORY_NAME).is_file():
        return path / RESULTS_NAME
    if path.is_file() and path.name == RESULTS_NAME:
        return path
    return None


def render_run(results: Path) -> list[Any]:
    """A run folder as what to pass instead: one line per recorded episode attempt (how it ended, its
    medal and score, its trajectory), every string terminal_safe and printed as plain text."""
    from mle_env.jsonl import read_jsonl

    records = [r for r in read_jsonl(results) if isinstance(r, dict)]
    folder = results.parent
    out = [plain_text(f"{folder} is the run folder of `mle-env eval` ({len(records)} episode attempts in "
                      f"{RESULTS_NAME}): show one episode with `mle-env show TRAJECTORY` below, or see the "
                      f"tables with `mle-env report {folder}`", style="bold")]
    for r in records:
        grade = r.get("grade") if isinstance(r.get("grade"), dict) else {}
        medal = grade.get("medal") or ("" if not grade else "none")
        score = format_score(grade["score"]) if isinstance(grade.get("score"), (int, float)) else ""
        ended = " ".join(str(x) for x in (r.get("status"), medal, score) if x)
        out.append(plain_text(f"{r.get('competition_id', '?')} seed {r.get('seed', '?')} (attempt "
                              f"{r.get('attempt', 0)}): {ended}"))
        if r.get("trajectory"):
            out.append(plain_text(f"  {r['trajectory']}", style="dim"))
    return out


def cmd_show(args: argparse.Namespace) -> int:
    from rich.console import Console

    from mle_env.errors import MleEnvError
    from mle_env.recording import find_trajectory, read_trajectory

    results = run_results(args.path)
    if results is not None:
        Console(width=args.width, highlight=False, emoji=False).print(*render_run(results), sep="\n")
        return 0
    try:
        path = find_trajectory(args.path)
    except FileNotFoundError as e:
        raise MleEnvError(str(e)) from None
    records = read_trajectory(path)
    if not any(r.get("type") in ("header", "step", "footer") for r in records):
        raise MleEnvError(f"{path} holds no trajectory records: pass an episode's trajectory.jsonl or its folder")
    if args.lines < 1:
        raise MleEnvError(f"--lines must be at least 1; got {args.lines}")
    console = Console(width=args.width, highlight=False, emoji=False)
    folder = path.parent if path.name == "trajectory.jsonl" else None
    for renderable in render(records, lines=None if args.full else args.lines, task=args.task, folder=folder):
        console.print(renderable)
    return 0
