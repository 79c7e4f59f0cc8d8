"""The run directory of an evaluation and its results file.

``<out>/config.json`` is what was asked for (agent, options, competitions, seeds, limits, the split of
each competition); ``<out>/results.jsonl`` has one line per episode attempt, appended as each one ends:

    {"competition_id", "competition_version", "split", "seed", "attempt", "agent", "status", "end",
     "grade": GradeReport dict | null, "reward", "steps", "wall_time_s", "hardware", "error",
     "trajectory", "finished_at"}

``status`` is ``ok`` (the episode ran as the agent played it), ``agent_error`` (the agent's code raised;
its submission was graded) or ``infra_error`` (the infrastructure failed: retried up to a limit). ``end``
is how the env ended it: ``submitted``, ``truncated``, ``sandbox_broken`` (the agent's own actions broke
its sandbox: an ``ok`` episode, graded) or ``infra_error``. An episode is finished when it has a record
that is not an infrastructure error; rerunning the same command skips finished episodes and tries the
others again. Every scheduled episode (config.json's competitions x seeds) counts in the reports, those
without a finished record as no medal.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mle_env.errors import MleEnvError
from mle_env.jsonl import read_jsonl

RESULTS = "results.jsonl"
CONFIG = "config.json"


def read_results(out: Path, repair: bool = False) -> list[dict[str, Any]]:
    """Every complete record of ``out/results.jsonl``; a torn last line from a killed run is skipped (and,
    with ``repair``, cut off so that new records start on a line of their own)."""
    return read_jsonl(Path(out) / RESULTS, repair=repair)


class EvaluationError(MleEnvError):
    """Raised when an evaluation cannot run as asked (e.g. its folder holds an incomparable run)."""


def append_result(out: Path, record: dict[str, Any]) -> None:
    """Append one record and flush it to disk."""
    with open(Path(out) / RESULTS, "a", encoding="utf-8") as f:
        f.write(json.dumps(record, default=str) + "\n")
        f.flush()
        os.fsync(f.fileno())


def finished_keys(records: list[dict[str, Any]]) -> set[tuple[str, int]]:
    return {(r["competition_id"], int(r["seed"])) for r in records if r.get("status") != "infra_error"}


# what makes results comparable: a rerun into the same folder must not change these
COMPARABLE = ("agent", "agent_options", "env_options")


def check_comparable(out: Path, config: dict[str, Any]) -> None:
    """Whether a run with ``config`` may go into ``out`` (checked before anything runs).

    Raises:
        EvaluationError: ``out`` holds a run with another agent, agent options or environment options.
    """
    path = Path(out) / CONFIG
    if not path.is_file():
        return
    old = json.loads(path.read_text())
    for key in COMPARABLE:
        if old.get(key) != json.loads(json.dumps(config.get(key), default=str)):
            raise EvaluationError(f"{out} holds a run with {key}={old.get(key)!r}, not {config.get(key)!r}; "
                                  "use another --out folder")


def write_config(out: Path, config: dict[str, Any]) -> None:
    """Record the run's configuration. A rerun into the same folder may add competitions and seeds (and
    change how it runs: workers, Ray) but not what makes episodes comparable.

    Raises:
        EvaluationError: ``out`` holds a run with another agent, agent options or environment options.
    """
    check_comparable(out, config)
    path = Path(out) / CONFIG
    if path.is_file():
        old = json.loads(path.read_text())
        config = {**old, **config,
                  "competitions": sorted(set(old.get("competitions", [])) | set(config["competitions"])),
                  "seeds": max(old.get("seeds", 0), config["seeds"]),
                  "splits": {**old.get("splits", {}), **config.get("splits", {})},
                  "scheduled": _max_merge(old.get("scheduled", {}), config.get("scheduled", {}))}
    Path(out).mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=2, default=str))


def _max_merge(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    """Seeds scheduled per competition over two runs into one folder: the larger of the two."""
    return {c: max(int(a.get(c, 0)), int(b.get(c, 0))) for c in sorted({*a, *b})}


def read_config(out: Path) -> dict[str, Any]:
    path = Path(out) / CONFIG
    return json.loads(path.read_text()) if path.is_file() else {}
