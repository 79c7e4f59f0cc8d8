"""GradeReport: the outcome of grading one submission.

Its JSON keeps MLE-bench's report fields (competition_id, score, gold_threshold, silver_threshold,
bronze_threshold, median_threshold, any_medal, gold_medal, silver_medal, bronze_medal, above_median,
submission_exists, valid_submission, is_lower_better, created_at, submission_path) and adds:

- ``status``: ``scored`` | ``missing`` (no file) | ``invalid`` (the submission is malformed) |
  ``grader_error`` (the metric crashed on a submission that passed validation: not the agent's fault);
- ``medal`` ("none"/"bronze"/"silver"/"gold") and ``medal_tier`` (0-3);
- ``rank`` (1-based place among the leaderboard teams; ties share the better place) and ``percentile``
  (fraction of leaderboard teams beaten, in [0, 1]);
- ``invalid_reason`` (one line) or ``grader_error``; ``leaderboard_teams`` and ``leaderboard_note``
  (why no medal could be computed, when there is no leaderboard); ``competition_version``.

MLE-bench's ``valid_submission`` is true exactly when a score was computed; here it is true when the
submission passed validation, so a grader error shows ``valid_submission=true, score=null``.
Thresholds are null when no leaderboard is available (MLE-bench always has one).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

from mle_env.grading.medals import Medal


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


@dataclass(frozen=True)
class GradeReport:
    """The grade of one submission (see the module docstring for every field)."""

    competition_id: str
    status: str
    score: float | None = None
    gold_threshold: float | None = None
    silver_threshold: float | None = None
    bronze_threshold: float | None = None
    median_threshold: float | None = None
    medal: Medal = Medal.NONE
    above_median: bool = False
    submission_exists: bool = False
    valid_submission: bool = False
    is_lower_better: bool = False
    submission_path: str = ""
    rank: int | None = None
    percentile: float | None = None
    leaderboard_teams: int | None = None
    leaderboard_note: str | None = None
    invalid_reason: str | None = None
    grader_error: str | None = None
    competition_version: int | None = None
    created_at: str = field(default_factory=_now)

    @property
    def any_medal(self) -> bool:
        return self.medal > Medal.NONE

    @property
    def gold_medal(self) -> bool:
        return self.medal == Medal.GOLD

    @property
    def silver_medal(self) -> bool:
        return self.medal == Medal.SILVER

    @property
    def bronze_medal(self) -> bool:
        return self.medal == Medal.BRONZE

    @property
    def scored(self) -> bool:
        return self.status == "scored"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with MLE-bench's field names first, then mle-env's additions."""
        data = asdict(self)
        medal = Medal(data.pop("medal"))
        out: dict[str, Any] = {
            "competition_id": self.competition_id,
            "score": self.score,
            "gold_threshold": self.gold_threshold,
            "silver_threshold": self.silver_threshold,
            "bronze_threshold": self.bronze_threshold,
            "median_threshold": self.median_threshold,
            "any_medal": self.any_medal,
            "gold_medal": self.gold_medal,
            "silver_medal": self.silver_medal,
            "bronze_medal": self.bronze_medal,
            "above_median": self.above_median,
            "submission_exists": self.submission_exists,
            "valid_submission": self.valid_submission,
            "is_lower_better": self.is_lower_better,
            "created_at": self.created_at,
            "submission_path": self.submission_path,
            "medal": medal.name.lower(),
            "medal_tier": int(medal),
        }
        out.update({k: v for k, v in data.items() if k not in out})
        return out

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GradeReport:
        """Rebuild a report from :meth:`to_dict` output (derived fields are recomputed, not trusted)."""
        names = set(cls.__dataclass_fields__)
        kwargs = {k: v for k, v in data.items() if k in names and k != "medal"}
        kwargs["medal"] = Medal(int(data.get("medal_tier", 0)))
        return cls(**kwargs)
