"""Hidden test-score logging (``log_test_scores=True``), for research on the gap between what an agent can
measure and its test score (as AIRA-dojo logs each node's test score without showing it).

Every file the agent hands to ``validate`` (the action or the in-sandbox endpoint) or ``score_dev``, and
``./submission/submission.csv`` after each step that changed it, is also graded on the test answers, on the
host. Each grade is one line of ``test_scores.jsonl`` in the episode's folder: nowhere the agent can reach,
and never in an observation, an info dict or the trajectory. ``MLEEnv.last_test_score`` holds the latest one
for harness code on the host (AIDE writes it into its journal per node, never into a prompt). The disclosure
says the option was on: results of a run in which anything fed such scores back to the agent are not
leaderboard results.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mle_env.grading.report import GradeReport

LOG_NAME = "test_scores.jsonl"


class TestScoreLog:
    """Grades files on the test answers and appends each grade to ``path`` (one JSON object per line:
    ``step``, ``source`` (validate, endpoint, score_dev or submission), ``file`` (its path in the sandbox),
    ``sha256``, ``valid``, ``score``, ``medal``, ``above_median``, ``invalid_reason``, ``elapsed_s``)."""

    __test__ = False  # not a pytest class, whatever its name

    def __init__(self, path: Path, grade: Callable[[Path], GradeReport], started: float) -> None:
        self.path, self.grade, self.started = path, grade, started
        self.last: dict[str, Any] | None = None
        self._submission_sha: str | None = None

    def log(self, step: int, source: str, file_in_sandbox: str, copied: Path, sha256: str | None = None
            ) -> dict[str, Any]:
        """Grade the host copy ``copied`` of the agent's file (whose digest is ``sha256`` when known) and append
        the grade; returns the record."""
        report = self.grade(copied).to_dict()
        record = {"step": step, "source": source, "file": file_in_sandbox, "sha256": sha256 or _sha256(copied),
                  "valid": report.get("valid_submission"), "score": report.get("score"),
                  "medal": report.get("medal"), "above_median": report.get("above_median"),
                  "invalid_reason": report.get("invalid_reason"),
                  "elapsed_s": round(time.monotonic() - self.started, 3)}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record, default=str) + "\n")
        self.last = record
        return record

    def log_if_changed(self, step: int, file_in_sandbox: str, copied: Path | None) -> None:
        """Log the submission (its host copy; None: there is none) when it differs from the one last seen."""
        sha = _sha256(copied) if copied is not None else None
        if copied is not None and sha != self._submission_sha:
            self.log(step, "submission", file_in_sandbox, copied, sha)
        self._submission_sha = sha


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
