"""What ``mle-env view`` shows, read from the paths it is given: the data of every page, each under a key.

A path is one of:

- ``run``: the folder of ``mle-env eval --out`` (``results.jsonl``; see :mod:`mle_env.evaluation.results`);
- ``episodes``: a folder of episode folders (a ``--record-dir`` of ``mle-env run``);
- ``episode``: one episode's folder, or a trajectory file;
- ``journal``: an AIDE journal (``*.aide.jsonl``).

Keys (``[a-z0-9-]``, never a path): ``index`` (the manifest: what was given, and for each run its summary as
``mle-env report`` computes it, without writing it, and its episodes as compact columns), ``e<r>-<i>`` (the
page of episode ``i`` of source ``r``), ``t<r>-<i>`` (the AIDE tree of that episode, or of the journal
given), ``s<r>`` (the text searched in the table: actions and outputs, loaded on first use). Episodes are
read only when their key is asked for, and only files under the given paths are read (a recorded
trajectory path outside them is looked for under the run's ``trajectories/`` folder, else not read).
Nothing here writes a file.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mle_env.errors import MleEnvError
from mle_env.recording import TRAJECTORY_NAME
from mle_env.viewer.clean import script
from mle_env.viewer.episode import episode_data, inside, search_text
from mle_env.viewer.tree import tree_data

RESULTS_NAME = "results.jsonl"
JOURNAL_SUFFIX = ".aide.jsonl"
MEDALS = ("gold", "silver", "bronze", "none")
_KEY = re.compile(r"(index)|([est])(\d{1,4})(?:-(\d{1,9}))?")


class ViewError(MleEnvError):
    """Raised when a path given to ``mle-env view`` is none of what it shows."""


@dataclass
class Source:
    """One path given: its kind, the folder every file read must lie under, and its episodes' trajectories
    (as recorded: resolved on use) with their table rows."""

    kind: str
    path: Path
    root: Path
    trajectories: list[str | None] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] | None = None
    journal: Path | None = None
    _by_path: dict[str, int] | None = None

    def trajectory(self, i: int) -> Path | None:
        """Episode ``i``'s trajectory file under the root: the recorded path when it lies there, else the
        same episode folder under the run's ``trajectories/`` (a run folder moved since), else None."""
        if not 0 <= i < len(self.trajectories) or not self.trajectories[i]:
            return None
        recorded = Path(str(self.trajectories[i]))
        candidates = [recorded if recorded.is_absolute() else self.root / recorded,
                      self.root / "trajectories" / recorded.parent.name / recorded.name,
                      self.root / recorded.parent.name / recorded.name]
        for path in candidates:
            if path.is_file() and inside(path, self.root):
                return path
        return None

    def key_of_trajectory(self, recorded: Any) -> int | None:
        """The episode number of a trajectory path (a fork's parent), when it is one of this source's."""
        if not isinstance(recorded, str) or not recorded:
            return None
        if self._by_path is None:
            self._by_path = {}
            for i in range(len(self.trajectories)):
                path = self.trajectory(i)
                if path is not None:
                    self._by_path[str(path.resolve())] = i
        recorded_path = Path(recorded)
        for candidate in (recorded_path, self.root / "trajectories" / recorded_path.parent.name / recorded_path.name,
                          self.root / recorded_path.parent.name / recorded_path.name):
            try:
                i = self._by_path.get(str(candidate.resolve()))
            except OSError:
                continue
            if i is not None:
                return i
        return None


def _first_record(path: Path) -> dict[str, Any] | None:
    """The JSON object on the first line of ``path`` (read up to 64 KiB), or None."""
    try:
        with open(path, "rb") as f:
            record = json.loads(f.readline(65536))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _looks_like_trajectory(path: Path) -> bool:
    record = _first_record(path)
    return record is not None and record.get("type") == "header"


def _looks_like_journal(path: Path) -> bool:
    record = _first_record(path)
    return record is not None and record.get("type") in ("header", "node") and (
        path.name.endswith(JOURNAL_SUFFIX) or "metric" in record or record.get("type") == "node")


def open_source(path: Path) -> Source:
    """Read what ``path`` is (see the module docstring); episodes are not read yet.

    Raises:
        ViewError: ``path`` does not exist, or is none of a run, an episode, episodes or a journal.
    """
    path = Path(path)
    if not path.exists():
        raise ViewError(f"no such file or folder: {path}")
    if path.is_dir():
        if (path / RESULTS_NAME).is_file() and not (path / TRAJECTORY_NAME).is_file():
            return _run_source(path)
        if (path / TRAJECTORY_NAME).is_file():
            return _episode_source(path / TRAJECTORY_NAME, root=path)
        folders = sorted(p for p in path.iterdir() if p.is_dir() and (p / TRAJECTORY_NAME).is_file())
        if folders:
            return _episodes_source(path, folders)
        raise ViewError(f"{path} is not a run folder (no {RESULTS_NAME}), an episode's folder (no "
                        f"{TRAJECTORY_NAME}) or a folder of episode folders")
    if path.name == RESULTS_NAME:
        return _run_source(path.parent)
    if path.name.endswith(JOURNAL_SUFFIX) and _looks_like_journal(path):
        return Source("journal", path, path.parent, journal=path)
    if _looks_like_trajectory(path):
        return _episode_source(path, root=path.parent)
    if _looks_like_journal(path):
        return Source("journal", path, path.parent, journal=path)
    raise ViewError(f"{path} is not a trajectory, an AIDE journal or a run's {RESULTS_NAME}")


def _row(record: dict[str, Any], outcome: str) -> dict[str, Any]:
    grade = record.get("grade") if isinstance(record.get("grade"), dict) else {}
    disclosure = record.get("disclosure") if isinstance(record.get("disclosure"), dict) else {}
    llm = disclosure.get("llm") if isinstance(disclosure.get("llm"), dict) else {}
    medal = (str(grade.get("medal") or "none").lower() if grade else "")
    return {"competition": str(record.get("competition_id") or "?"), "split": str(record.get("split") or ""),
            "seed": record.get("seed"), "attempt": record.get("attempt"), "agent": str(record.get("agent") or ""),
            "status": outcome, "medal": medal if medal in MEDALS or not medal else "none",
            "score": grade.get("score"), "percentile": grade.get("percentile"),
            "wall": record.get("wall_time_s"), "cost": llm.get("cost"), "steps": record.get("steps"),
            "end": str(record.get("end") or ""), "error": str(record.get("error") or "")[:300]}


def _run_source(folder: Path) -> Source:
    from mle_env.evaluation.report import disclosure_rows, summary_of
    from mle_env.evaluation.results import read_config, read_results
    from mle_env.evaluation.stats import TIER_LABELS, episodes, outcome, scheduled_keys

    try:
        records = read_results(folder)
        config = read_config(folder)
        rows = episodes(records, scheduled_keys(records, config), config.get("splits") or {})
        summary = summary_of(folder)
    except (KeyError, TypeError, ValueError, AttributeError) as e:  # written by hand, or by another program
        raise ViewError(f"{folder} holds a {RESULTS_NAME} or config.json that `mle-env report` cannot read "
                        f"({type(e).__name__}: {e})") from None
    source = Source("run", folder, folder)
    source.rows = [_row(r, outcome(r)) for r in rows]
    source.trajectories = [r.get("trajectory") if isinstance(r.get("trajectory"), str) else None for r in rows]
    tiers = list(TIER_LABELS)
    splits = summary["leaderboard"]["any_medal"]
    source.summary = {
        "headline": summary["headline"], "agent": config.get("agent"), "episodes": summary["episodes"],
        "tiers": [[t, TIER_LABELS[t]] for t in tiers],
        "leaderboard": [{"split": split, "competitions": splits[split]["competitions"],
                         "cells": [[summary["leaderboard"][t][split]["mean"], summary["leaderboard"][t][split]["sem"]]
                                   for t in tiers]}
                        for split in sorted(splits, key=lambda s: (s == "all", s))],
        "pass_at_k": {t: [[int(k), v["mean"]] for k, v in summary["pass_at_k"][t].items()] for t in tiers},
        "disclosure": [list(r) for r in disclosure_rows(summary["disclosure"])] if summary.get("disclosure") else None,
        "per_competition": {cid: {"n": row["n"], "split": row["split"], "any_medal": row["any_medal"]["successes"],
                                  "gold": row["gold"]["successes"], "mean_score": row["mean_score"],
                                  "best_score": row["best_score"]}
                            for cid, row in summary["per_competition"].items()},
        "lower_is_better": {r["competition_id"]: bool(r["grade"].get("is_lower_better")) for r in records
                            if isinstance(r.get("grade"), dict)},
        "infra_errors": len(summary["infra_errors"]),
    }
    return source


def _episodes_source(folder: Path, episode_folders: list[Path]) -> Source:
    from mle_env.recording import read_trajectory

    source = Source("episodes", folder, folder)
    for episode in episode_folders:
        records = [r for r in read_trajectory(episode / TRAJECTORY_NAME) if isinstance(r, dict)]
        header = next((r for r in records if r.get("type") == "header"), {})
        footer = next((r for r in reversed(records) if r.get("type") == "footer"), None) or {}
        options = header.get("options") if isinstance(header.get("options"), dict) else {}
        status = str(footer.get("status") or "running")
        record = {"competition_id": header.get("competition_id"), "seed": header.get("seed"),
                  "agent": options.get("agent") or "", "grade": footer.get("grade"), "steps": footer.get("steps"),
                  "wall_time_s": footer.get("elapsed_s"), "end": status,
                  "disclosure": footer.get("disclosure")}
        row = _row(record, "ok" if footer else "running")
        row["status"] = status if footer else "running"
        source.rows.append(row)
        source.trajectories.append(str(episode / TRAJECTORY_NAME))
    return source


def _episode_source(path: Path, root: Path) -> Source:
    return Source("episode", path, root, trajectories=[str(path)])


def _round(value: Any, digits: int) -> float | None:
    """``value`` to ``digits`` significant digits (the table shows fewer; the data file stays small)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(f"{value:.{digits}g}")


def columns(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The table as arrays per column; text columns as a list of values and one code per row."""
    out: dict[str, Any] = {"n": len(rows)}
    for name in ("competition", "split", "agent", "status", "medal", "end"):
        values: dict[str, int] = {}
        codes = [values.setdefault(r.get(name) or "", len(values)) for r in rows]
        out[name] = {"values": list(values), "codes": codes}
    for name in ("seed", "attempt", "steps"):
        out[name] = [r.get(name) if isinstance(r.get(name), (int, float)) else None for r in rows]
    for name, digits in (("score", 6), ("percentile", 4), ("wall", 4), ("cost", 3)):  # significant digits
        out[name] = [_round(r.get(name), digits) for r in rows]
    out["error"] = [r.get("error") or "" for r in rows] if any(r.get("error") for r in rows) else None
    return out


def _with_trajectories(cols: dict[str, Any], source: Source) -> dict[str, Any]:
    """``cols`` and ``trajectory``: 1 for a row whose episode has a recorded trajectory (its page may open)."""
    return {**cols, "trajectory": [1 if t else 0 for t in source.trajectories]}


class ViewIndex:
    """The data of every page for the paths given (see the module docstring)."""

    def __init__(self, paths: list[Path]) -> None:
        if not paths:
            raise ViewError("give a run folder, an episode's folder, a trajectory or an AIDE journal")
        self.sources = [open_source(Path(p)) for p in paths]
        self._manifest: dict[str, Any] | None = None

    def manifest(self) -> dict[str, Any]:
        """The ``index`` data: the sources, each run's summary and table, and the page to open first."""
        if self._manifest is not None:
            return self._manifest
        runs = []
        for r, source in enumerate(self.sources):
            summary = source.summary and {k: v for k, v in source.summary.items()
                                          if k not in ("per_competition", "lower_is_better")}  # for compare()
            runs.append({"kind": source.kind, "path": str(source.path), "name": source.path.name,
                         "summary": summary,
                         "columns": _with_trajectories(columns(source.rows), source) if source.rows else None,
                         "search_key": f"s{r}" if source.rows else None,
                         "episode_key": f"e{r}-0" if source.kind == "episode" else None,
                         "tree_key": f"t{r}-0" if source.kind == "journal" else None})
        first = runs[0]
        start = (f"#/episode/{first['episode_key']}" if first["episode_key"] else
                 f"#/tree/{first['tree_key']}" if first["tree_key"] else "#/")
        compare = self.compare() if len(self.sources) == 2 and all(s.kind == "run" for s in self.sources) else None
        self._manifest = {"format": 1, "runs": runs, "start": start, "compare": compare}
        return self._manifest

    def compare(self) -> dict[str, Any]:
        """Per competition of two runs: episodes, medals (any), mean and best score in each, and the deltas."""
        a, b = (s.summary or {} for s in self.sources)
        table_a, table_b = a.get("per_competition", {}), b.get("per_competition", {})
        lower = {**a.get("lower_is_better", {}), **b.get("lower_is_better", {})}
        rows = []
        for cid in sorted({*table_a, *table_b}):
            ra, rb = table_a.get(cid), table_b.get(cid)

            def rate(row: dict[str, Any] | None) -> float | None:
                return row["any_medal"] / row["n"] if row and row["n"] else None

            ma, mb = rate(ra), rate(rb)
            sa, sb = (ra or {}).get("mean_score"), (rb or {}).get("mean_score")
            delta = sb - sa if isinstance(sa, (int, float)) and isinstance(sb, (int, float)) else None
            rows.append({"competition": cid, "split": (ra or rb or {}).get("split"),
                         "n": [(ra or {}).get("n"), (rb or {}).get("n")], "medal_rate": [ma, mb],
                         "medal_delta": mb - ma if ma is not None and mb is not None else None,
                         "mean_score": [sa, sb], "score_delta": delta, "lower_is_better": lower.get(cid),
                         "better": None if delta is None or delta == 0 else (delta < 0) == bool(lower.get(cid))})
        return {"names": [str(s.path) for s in self.sources], "rows": rows}

    def source(self, r: int) -> Source | None:
        return self.sources[r] if 0 <= r < len(self.sources) else None

    def data(self, key: str) -> Any:
        """The data of ``key``, or None when there is none (an unknown key, a file gone or outside)."""
        match = _KEY.fullmatch(key)
        if match is None:
            return None
        if match.group(1):
            return self.manifest()
        kind, r, i = match.group(2), int(match.group(3)), match.group(4)
        source = self.source(r)
        if source is None:
            return None
        if kind == "s":
            return self._search(r, source) if i is None else None
        if i is None:
            return None
        i = int(i)
        if kind == "t" and source.kind == "journal":
            return tree_data(source.journal) if i == 0 and source.journal else None
        trajectory = source.trajectory(i)
        if trajectory is None:
            return None
        if kind == "e":
            data = episode_data(trajectory, source.root, lambda p: self._fork_key(r, source, p))
            data["key"] = key
            data["row"] = source.rows[i] if i < len(source.rows) else None
            journal = trajectory.with_suffix(JOURNAL_SUFFIX)
            data["tree_key"] = f"t{r}-{i}" if journal.is_file() and inside(journal, source.root) else None
            return data
        journal = trajectory.with_suffix(JOURNAL_SUFFIX)
        if not (journal.is_file() and inside(journal, source.root)):
            return None
        return tree_data(journal, episode_key=f"e{r}-{i}")

    def _fork_key(self, r: int, source: Source, recorded: Any) -> str | None:
        i = source.key_of_trajectory(recorded)
        return None if i is None else f"e{r}-{i}"

    def _search(self, r: int, source: Source) -> dict[str, Any]:
        texts = []
        for i in range(len(source.trajectories)):
            path = source.trajectory(i)
            try:
                texts.append(search_text(path) if path is not None else "")
            except OSError:
                texts.append("")
        return {"texts": texts}

    def script(self, key: str) -> bytes | None:
        """The data file of ``key`` (see :func:`mle_env.viewer.clean.script`), or None."""
        try:
            data = self.data(key)
        except (OSError, ValueError, UnicodeError):
            return None
        return None if data is None else script(key, data)

    def keys(self) -> list[str]:
        """Every key with data (for the bundle): the manifest, then each source's search, episodes and trees."""
        out = ["index"]
        for r, source in enumerate(self.sources):
            if source.rows:
                out.append(f"s{r}")
            if source.kind == "journal":
                out.append(f"t{r}-0")
            for i in range(len(source.trajectories)):
                out.append(f"e{r}-{i}")
                path = source.trajectory(i)
                if path is not None and os.path.isfile(path.with_suffix(JOURNAL_SUFFIX)):
                    out.append(f"t{r}-{i}")
        return out
