"""The data of one episode's page: its header and task, every step (action, outputs, the policy's LLM calls
and the harness's repairs), how it ended and its grade, and what its folder kept (code files, the first
rows of the submission, the hidden test scores). Read with the reading code of ``mle-env show``."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from mle_env.cli.show import _action_text, _grade_rows, _kept
from mle_env.recording import TRAJECTORY_NAME, read_trajectory

#: what is read of the episode's folder at most
MAX_CODE_FILES, MAX_CODE_BYTES = 50, 200_000
SUBMISSION_ROWS, SUBMISSION_BYTES = 20, 64_000
CODE_SUFFIXES = (".py", ".sh", ".r", ".R", ".txt", ".md", ".json", ".yaml", ".yml", ".toml", ".cfg", ".log")


def inside(path: Path, root: Path) -> bool:
    """Whether ``path``, its links resolved, is ``root`` or lies under it."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False


def _regular(path: Path, root: Path) -> bool:
    return path.is_file() and not path.is_symlink() and inside(path, root)


def _read(path: Path, limit: int) -> tuple[str, bool]:
    """At most ``limit`` bytes of ``path`` as text, and whether there was more."""
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    return data[:limit].decode("utf-8", "replace"), len(data) > limit


def _llm_calls(policy: dict[str, Any]) -> list[dict[str, Any]]:
    calls = policy.get("llm")
    calls = calls if isinstance(calls, list) else [calls] if isinstance(calls, dict) else []
    keep = ("model", "prompt_tokens", "completion_tokens", "cost", "latency_s", "duration_s", "finish_reason")
    return [{k: c.get(k) for k in keep if c.get(k) is not None} for c in calls if isinstance(c, dict)]


def step_data(record: dict[str, Any]) -> dict[str, Any]:
    """One step record as the page shows it."""
    summary, code = _action_text(record.get("action"))
    action = record.get("action")
    policy = record.get("policy") if isinstance(record.get("policy"), dict) else {}
    repairs = policy.get("repairs") if isinstance(policy.get("repairs"), dict) else None
    other = {k: v for k, v in policy.items() if k not in ("llm", "repairs")}
    return {
        "step": record.get("step"), "started_at": record.get("started_at"), "kind": record.get("kind"),
        "type": action.get("type") if isinstance(action, dict) else "invalid", "summary": summary, "code": code,
        "exit_code": record.get("exit_code"), "timed_out": bool(record.get("timed_out")),
        "duration_s": record.get("duration_s"), "stdout": record.get("stdout") or "",
        "stderr": record.get("stderr") or "", "message": record.get("message") or "",
        "time_left": record.get("time_left"), "steps_left": record.get("steps_left"),
        "llm": _llm_calls(policy),
        "repairs": {"fired": [str(r.get("name")) for r in repairs.get("fired") or [] if isinstance(r, dict)],
                    "diff": str(repairs.get("diff") or "")} if repairs else None,
        "policy": json.dumps(other, default=str, ensure_ascii=False)[:4000] if other else "",
    }


def episode_data(path: Path, root: Path, fork_key: Any = None) -> dict[str, Any]:
    """The page data of the trajectory at ``path``; files of its folder are read only when that folder lies
    under ``root``. ``fork_key(parent_trajectory)`` gives the key of a fork's parent, or None."""
    records = [r for r in read_trajectory(path) if isinstance(r, dict)]
    header = next((r for r in records if r.get("type") == "header"), None) or {}
    footer = next((r for r in reversed(records) if r.get("type") == "footer"), None)
    steps = [step_data(r) for r in records if r.get("type") == "step"]
    grade = footer.get("grade") if footer and isinstance(footer.get("grade"), dict) else None
    fork = header.get("fork") if isinstance(header.get("fork"), dict) else None
    data: dict[str, Any] = {
        "kind": "episode", "path": str(path),
        "header": {k: header.get(k) for k in ("competition_id", "competition_version", "seed", "sandbox", "image",
                                               "time_limit", "step_limit", "started_at", "episode_id", "task_text")
                   if header.get(k) is not None},
        "task": header.get("task") if isinstance(header.get("task"), str) else "",
        "steps": steps,
        "end": None if footer is None else {k: footer.get(k) for k in ("status", "steps", "elapsed_s", "reward",
                                                                        "ended_at", "error") if k in footer},
        "grade": None if grade is None else [list(row) for row in _grade_rows(grade)],
        "fork": None if fork is None else {
            "parent_episode": fork.get("parent_episode"), "step": fork.get("step"),
            "parent_key": fork_key(fork.get("parent_trajectory")) if fork_key else None},
        "kept": [], "code": [], "submission": None, "test_scores": [], "not_kept": [],
    }
    artifacts = footer.get("artifacts") if footer else None
    if isinstance(artifacts, dict):
        data["not_kept"] = [str(e) for e in artifacts.get("errors") or []]
    folder = path.parent
    if path.name == TRAJECTORY_NAME and inside(folder, root):
        data.update(_folder_data(folder, root))
    return data


def _folder_data(folder: Path, root: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"kept": _kept(folder), "code": [], "submission": None, "test_scores": []}
    code = folder / "code"
    if code.is_dir() and not code.is_symlink() and inside(code, root):
        for file in sorted(code.rglob("*")):
            if len(out["code"]) >= MAX_CODE_FILES:
                break
            if file.suffix in CODE_SUFFIXES and _regular(file, root):
                text, cut = _read(file, MAX_CODE_BYTES)
                out["code"].append({"path": file.relative_to(code).as_posix(), "text": text, "cut": cut,
                                    "bytes": file.stat().st_size})
    submission = folder / "submission.csv"
    if _regular(submission, root):
        text, cut = _read(submission, SUBMISSION_BYTES)
        lines = text.splitlines()
        rows = list(csv.reader(io.StringIO("\n".join(lines[:SUBMISSION_ROWS + 1]))))
        out["submission"] = {"header": rows[0] if rows else [], "rows": rows[1:SUBMISSION_ROWS + 1],
                             "bytes": submission.stat().st_size}
    scores = folder / "test_scores.jsonl"
    if _regular(scores, root):
        text, _ = _read(scores, 1_000_000)
        for line in text.splitlines()[:500]:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                out["test_scores"].append({k: record.get(k) for k in ("step", "source", "file", "valid", "score",
                                                                       "medal", "elapsed_s")})
    return out


def search_text(path: Path, limit: int = 20_000) -> str:
    """The actions, outputs and messages of a trajectory as one lower-case text (for the table's search)."""
    parts: list[str] = []
    size = 0
    for record in read_trajectory(path):
        if not isinstance(record, dict) or record.get("type") != "step":
            continue
        _, code = _action_text(record.get("action"))
        for text in (code, record.get("stdout"), record.get("stderr"), record.get("message")):
            if isinstance(text, str) and text:
                parts.append(text[: limit - size])
                size += len(parts[-1])
        if size >= limit:
            break
    return "\n".join(parts).lower()
