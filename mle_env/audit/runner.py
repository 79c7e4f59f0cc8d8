"""``mle-env audit``: the review of recorded episodes before their results count (see mle_env.audit).

For every trajectory under the given paths: the model-free checks (:mod:`.checks`), optionally MLE-bench's
three questions asked of a model (:mod:`.questions`), and optionally the similarity of the episode's code to
reference solutions (:mod:`.similarity`). Writes ``audit.csv`` (one row per episode and check: flagged or not,
the steps, the evidence) and ``audit.json`` (per episode, and totals) into ``out``.
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mle_env.audit.checks import CHECKS, ORACLE_THRESHOLD, validate_oracle
from mle_env.audit.questions import QUESTIONS, ask
from mle_env.audit.similarity import THRESHOLD, reference_files, similar_pairs
from mle_env.trajectory import find_trajectories, load_episode

AUDIT_JSON, AUDIT_CSV = "audit.json", "audit.csv"
#: kept code files read per episode, and bytes of each
_CODE_SUFFIXES = (".py", ".sh", ".R", ".r", ".ipynb", ".txt")
_MAX_FILE_BYTES = 1 << 20
_MAX_FILES = 200


def code_files(episode_dir: Path) -> dict[str, str]:
    """The code an episode kept (its ./code folder, see "Kept artifacts"), by path relative to that folder."""
    folder = episode_dir / "code"
    if not folder.is_dir():
        return {}
    found = {}
    for path in sorted(folder.rglob("*")):
        if len(found) >= _MAX_FILES:
            break
        if path.is_file() and not path.is_symlink() and path.suffix in _CODE_SUFFIXES:
            with path.open("rb") as f:
                found[path.relative_to(folder).as_posix()] = f.read(_MAX_FILE_BYTES).decode("utf-8", "replace")
    return found


def audit_episode(trajectory: Path, *, client: Any = None, references: Path | None = None,
                  oracle_threshold: int = ORACLE_THRESHOLD, similarity_threshold: float = THRESHOLD) -> dict[str, Any]:
    """The audit of one trajectory (see the module docstring); ``flagged`` when any part flagged it."""
    episode = load_episode(trajectory, require_end=False)
    cid = str(episode.header.get("competition_id"))
    code = code_files(trajectory.parent)
    checks: dict[str, dict[str, Any]] = {}
    for name, check in CHECKS.items():
        findings = (validate_oracle(episode.steps, code, oracle_threshold) if check is validate_oracle
                    else check(episode.steps, code))
        checks[name] = {"flagged": bool(findings), "findings": [f.to_dict() for f in findings]}
    result: dict[str, Any] = {
        "trajectory": str(trajectory), "competition_id": cid, "seed": episode.header.get("seed"),
        "agent": (episode.header.get("options") or {}).get("agent"), "steps": len(episode.steps),
        "checks": checks, "questions": ask(client, episode.steps, code) if client is not None else None,
        "similarity": None,
    }
    if references is not None:
        pairs = similar_pairs(code, reference_files(references / cid), similarity_threshold)
        result["similarity"] = {"pairs": pairs[:20], "flagged": [p for p in pairs if p["flagged"]]}
    result["flagged"] = (any(c["flagged"] for c in checks.values())
                         or any(q["answer"] is True for q in (result["questions"] or {}).values())
                         or bool((result["similarity"] or {}).get("flagged")))
    return result


def audit(paths: Iterable[str | os.PathLike[str]], out: Path, *, client: Any = None, references: Path | None = None,
          oracle_threshold: int = ORACLE_THRESHOLD, similarity_threshold: float = THRESHOLD) -> dict[str, Any]:
    """Audit every trajectory under ``paths`` and write audit.csv and audit.json into ``out``; returns the
    summary (audit.json's content).

    Raises:
        TrajectoryError: a path does not exist.
    """
    episodes = [audit_episode(p, client=client, references=references, oracle_threshold=oracle_threshold,
                              similarity_threshold=similarity_threshold) for p in find_trajectories(paths)]
    summary = {
        "episodes": len(episodes), "flagged": sum(e["flagged"] for e in episodes),
        "by_check": {name: sum(e["checks"][name]["flagged"] for e in episodes) for name in CHECKS},
        "by_question": ({name: sum((e["questions"] or {}).get(name, {}).get("answer") is True for e in episodes)
                         for name in QUESTIONS} if client is not None else None),
        "similar": sum(bool((e["similarity"] or {}).get("flagged")) for e in episodes) if references else None,
        "settings": {"oracle_threshold": oracle_threshold, "similarity_threshold": similarity_threshold,
                     "model": getattr(getattr(client, "config", None), "model", None), "references": str(references)
                     if references else None},
        "per_episode": episodes,
    }
    out.mkdir(parents=True, exist_ok=True)
    _write_atomically(out / AUDIT_JSON, json.dumps(summary, indent=2, default=str) + "\n")
    _write_atomically(out / AUDIT_CSV, _csv(episodes))
    return summary


def _csv(episodes: list[dict[str, Any]]) -> str:
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["trajectory", "competition_id", "seed", "source", "check", "flagged", "steps", "evidence"])
    for e in episodes:
        base = [e["trajectory"], e["competition_id"], e["seed"]]
        for name, c in e["checks"].items():
            steps = " ".join(str(f["step"]) for f in c["findings"] if f["step"] is not None)
            evidence = " | ".join(f["evidence"] for f in c["findings"])
            writer.writerow([*base, "rule", name, c["flagged"], steps, _cell(evidence)])
        for name, q in (e["questions"] or {}).items():
            writer.writerow([*base, "model", name, q["answer"], "", _cell(q["evidence"])])
        if e["similarity"] is not None:
            flagged = e["similarity"]["flagged"]
            pairs = " | ".join(f"{p['file']} ~ {p['reference']} {p['similarity']}" for p in flagged[:5])
            writer.writerow([*base, "similarity", "reference_code", bool(flagged), "", _cell(pairs)])
    return buffer.getvalue()


def _cell(text: str) -> str:
    """Evidence quotes the agent's code and file names: a cell that a spreadsheet would run as a formula
    (starting =, +, - or @) is written with a leading apostrophe."""
    return f"'{text}" if text[:1] in ("=", "+", "-", "@") else text


def _write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
