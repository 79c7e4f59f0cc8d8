"""Installing a competition's leaderboard into the cache (``<home>/<id>/leaderboard.csv``).

Sources: a CSV the user gives (``--leaderboard PATH``; MLE-bench's format is copied as is) or Kaggle's
API (``mle-env prepare ID --leaderboard kaggle``). Leaderboards of Kaggle competitions are never shipped
with mle-env.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
import zipfile
from pathlib import Path

from mle_env.competition.spec import CompetitionSpec
from mle_env.errors import LeaderboardError
from mle_env.grading.leaderboard import read_leaderboard
from mle_env.prepare.sources import kaggle_api, kaggle_error

KAGGLE = "kaggle"


def install_leaderboard(spec: CompetitionSpec, source: Path, target: Path) -> Path:
    """Check ``source`` is a readable leaderboard and copy it to ``target`` atomically.

    ``source`` may be the word ``kaggle`` to download the public leaderboard from Kaggle instead.
    A direction that contradicts the spec (MLE-bench infers it from the first and last rows) is warned
    about, since it usually means the wrong file.
    """
    if str(source) == KAGGLE:
        return _install_from_kaggle(spec, target)
    board = read_leaderboard(source)
    inferred = board.inferred_lower_is_better()
    if inferred is not None and inferred != spec.metric.lower_is_better:
        warnings.warn(
            f"leaderboard {source} is ordered as if {'lower' if inferred else 'higher'} scores were better, "
            f"but {spec.id}'s metric says the opposite; is it the right file?",
            stacklevel=2,
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".leaderboard-")
    os.close(fd)
    shutil.copyfile(source, tmp)
    os.replace(tmp, target)
    return target


def _install_from_kaggle(spec: CompetitionSpec, target: Path) -> Path:
    import pandas as pd

    slug = spec.leaderboard.kaggle_competition or spec.id
    api = kaggle_api(slug)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            api.competition_leaderboard_download(slug, tmp)
        except Exception as e:  # noqa: BLE001 - the client raises many unrelated types
            raise kaggle_error(slug, e) from e
        csvs = list(Path(tmp).glob("*.csv"))
        for archive in Path(tmp).glob("*.zip"):
            with zipfile.ZipFile(archive) as zf:
                zf.extractall(tmp)
            csvs = list(Path(tmp).glob("*.csv"))
        if not csvs:
            raise LeaderboardError(f"Kaggle returned no leaderboard CSV for {slug}")
        frame = pd.read_csv(csvs[0])
        score_col = next((c for c in frame.columns if c.lower() == "score"), None)
        if score_col is None:
            raise LeaderboardError(f"Kaggle's leaderboard for {slug} has no Score column")
        frame = frame.rename(columns={score_col: "score"}).sort_values(
            "score", ascending=spec.metric.lower_is_better, kind="stable"
        )
        out = Path(tmp) / "leaderboard.csv"
        frame.to_csv(out, index=False)
        return install_leaderboard(spec, out, target)
