"""Reference leaderboards for practice competitions.

A practice competition has no human leaderboard, so it ships one built from a documented population of
reference solutions of varied strength (its folder's ``reference.py``: ``solutions() ->
list[ReferenceSolution]``). Each solution reads the prepared public files and returns a submission; every
submission is graded on the private answers and the scores become ``leaderboard.csv`` in MLE-bench's
format (plus a ``teamName`` column naming the solution), best first. All solutions are seeded, so a
rebuild gives the same file:

    mle-env reference-leaderboard practice-house-prices
"""

from __future__ import annotations

import importlib.util
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.registry import get_spec
from mle_env.errors import MleEnvError
from mle_env.grading.grader import Grader
from mle_env.prepare.runner import prepare

SUBMISSION_DATE = "2026-11-30 00:00:00"  # fixed so that rebuilds are byte-identical


@dataclass(frozen=True)
class ReferenceSolution:
    """One member of the population: a name and ``predict(public_dir) -> submission DataFrame``."""

    name: str
    predict: Callable[[Path], pd.DataFrame]


def subsample(frame: pd.DataFrame, fraction: float, seed: int = 0) -> pd.DataFrame:
    """A seeded random ``fraction`` of the rows (at least 20), used to vary solution strength."""
    n = max(20, int(round(len(frame) * fraction)))
    if n >= len(frame):
        return frame
    return frame.iloc[np.random.default_rng(seed).permutation(len(frame))[:n]]


def load_solutions(competition: str) -> list[ReferenceSolution]:
    """The population from the competition folder's reference.py."""
    spec = get_spec(competition)
    path = spec.folder / "reference.py"
    if not path.is_file():
        raise MleEnvError(f"{spec.id} has no reference.py; only practice competitions have reference solutions")
    module_spec = importlib.util.spec_from_file_location(f"mle_env_reference_{spec.id.replace('-', '_')}", path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return list(module.solutions())


def build_reference_leaderboard(
    competition: str, out: Path | None = None, log: Callable[[str], None] | None = None
) -> Path:
    """Run every reference solution, grade it, and write the leaderboard (default: the folder's
    leaderboard.csv). Returns the path written."""
    say = log or (lambda _line: None)
    spec = get_spec(competition)
    prepare(spec.id)
    grader = Grader(spec)
    public = grader.paths.public
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for index, solution in enumerate(load_solutions(spec.id)):
            started = time.monotonic()
            path = Path(tmp) / f"{index}.csv"
            solution.predict(public).to_csv(path, index=False)
            score = grader.score(grader.check(path))
            rows.append({"teamName": solution.name, "score": score})
            say(f"{solution.name}: {score:.5f} ({time.monotonic() - started:.1f} s)")
    board = pd.DataFrame(rows).sort_values(
        "score", ascending=spec.metric.lower_is_better, kind="stable"
    ).reset_index(drop=True)
    board.insert(0, "scoreNullable", board["score"])
    board.insert(1, "teamId", np.arange(1, len(board) + 1))
    board.insert(2, "hasTeamName", True)
    board.insert(3, "submissionDate", SUBMISSION_DATE)
    board["hasScore"] = True
    board = board[["scoreNullable", "teamId", "hasTeamName", "submissionDate", "score", "hasScore", "teamName"]]
    target = out or spec.folder / "leaderboard.csv"
    board.to_csv(target, index=False)
    return target
