"""Finding and reading the leaderboard a competition's medals are computed against.

A leaderboard is a CSV with a ``score`` column, one row per team. MLE-bench's format
(``scoreNullable,teamId,hasTeamName,submissionDate,score,hasScore``) is read as is; rows without a score
are dropped. Where it comes from, first match wins:

1. a path given explicitly (``mle-env grade --leaderboard``, ``grade(..., leaderboard=)``);
2. ``<home>/<id>/leaderboard.csv``, installed by ``mle-env prepare`` (from Kaggle or ``--leaderboard``);
3. ``$MLE_ENV_LEADERBOARDS/<id>.csv``;
4. the competition folder's own ``leaderboard.csv`` (practice competitions only).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mle_env.competition.spec import CompetitionSpec
from mle_env.errors import LeaderboardError
from mle_env.paths import LEADERBOARDS_ENV, CompetitionPaths


@dataclass(frozen=True)
class Leaderboard:
    """Team scores (as listed) and where they were read from."""

    scores: tuple[float, ...]
    path: Path

    def inferred_lower_is_better(self) -> bool | None:
        """MLE-bench's inference: lower is better when the first row scores below the last (None if equal)."""
        first, last = self.scores[0], self.scores[-1]
        return None if first == last else first < last


def read_leaderboard(path: Path) -> Leaderboard:
    """Read a leaderboard CSV.

    Raises:
        LeaderboardError: the file is missing, is not a CSV, has no ``score`` column or no scores.
    """
    import pandas as pd

    path = Path(path)
    try:
        frame = pd.read_csv(path)
    except FileNotFoundError:
        raise LeaderboardError(f"leaderboard {path} does not exist") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise LeaderboardError(f"leaderboard {path} is not a readable CSV ({e})") from None
    if "score" not in frame.columns:
        raise LeaderboardError(f"leaderboard {path} has no 'score' column (columns: {', '.join(frame.columns)})")
    scores = pd.to_numeric(frame["score"], errors="coerce").dropna()
    if scores.empty:
        raise LeaderboardError(f"leaderboard {path} has no scores")
    return Leaderboard(tuple(float(s) for s in scores), path)


def find_leaderboard(spec: CompetitionSpec, explicit: Path | None = None, home: Path | None = None) -> Path | None:
    """The leaderboard file to use for ``spec`` (see the module docstring for the order), or None."""
    if explicit is not None:
        return Path(explicit)
    installed = CompetitionPaths(spec.id, home).leaderboard
    if installed.is_file():
        return installed
    folder = os.environ.get(LEADERBOARDS_ENV)
    if folder and (Path(folder) / f"{spec.id}.csv").is_file():
        return Path(folder) / f"{spec.id}.csv"
    bundled = spec.bundled_leaderboard
    if bundled is not None and bundled.is_file():
        return bundled
    return None


def missing_leaderboard_note(spec: CompetitionSpec) -> str:
    """The sentence a report carries when no medal can be computed for lack of a leaderboard."""
    return (
        f"no leaderboard for {spec.id}, so no medal can be computed; install one with "
        f"`mle-env prepare {spec.id} --leaderboard PATH` or set {LEADERBOARDS_ENV} to a folder of <id>.csv files"
    )
