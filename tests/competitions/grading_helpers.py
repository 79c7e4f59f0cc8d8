"""What the competition tests share: preparing competitions from their synthetic raw data, and grading a
submission frame."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mle_env.competition.registry import get_spec
from mle_env.competition.synthetic import load_synthetic
from mle_env.grading.grader import Grader
from mle_env.grading.report import GradeReport
from mle_env.prepare.runner import prepare


def prepare_synthetic(cids: tuple[str, ...] | list[str], home: Path, raws: Path) -> Path:
    """Generate each competition's synthetic raw data under ``raws/<id>`` and prepare it into ``home``."""
    for cid in cids:
        (raws / cid).mkdir(exist_ok=True)
        load_synthetic(cid).generate(raws / cid)
        prepare(cid, raw_dir=raws / cid, home=home, verify=False)
    return home


def grade(home: Path, cid: str, frame: pd.DataFrame, tmp_path: Path, leaderboard: Path | None = None
          ) -> GradeReport:
    """Write ``frame`` as a submission and grade it as an episode would."""
    path = tmp_path / "submission.csv"
    frame.to_csv(path, index=False)
    return Grader(get_spec(cid), home, leaderboard).grade(path)
