"""The ``score_dev`` action and the ``dev_improvement`` reward of an episode with a dev split.

``mle_env.make(id, dev_split=f)`` builds the dev split (:mod:`mle_env.prepare.dev`) and mounts its public
data as ``./data``; :class:`DevScorer` grades files against the dev answers on the host, with the
competition's own validation and metric (rounded to 5 decimals), and keeps the best dev score of the
episode. ``score_dev`` answers only the dev score of predictions for the dev ids; the test set is graded
only at the end, as without a dev split.

``reward="dev_improvement"``: each ``score_dev`` step gives ``max(0, improvement of the best dev score) /
scale``, where the best starts at the dev score of ``data/dev/sample_submission.csv`` (a constant
prediction) and ``scale`` is the leaderboard's spread, ``|gold threshold - median|`` (1 without a
leaderboard or when the two coincide): a score climbing from the leaderboard's median to its gold line earns
about 1 in all. Every other step gives 0, the last one too; its info still holds the test-graded
GradeReport (medal, score, percentile).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from mle_env.competition.spec import CompetitionSpec
from mle_env.errors import GraderError
from mle_env.grading.grader import Grader
from mle_env.grading.medals import Thresholds
from mle_env.grading.validation import InvalidSubmission
from mle_env.prepare.dev import DEV_INPUTS, DEV_SAMPLE, ensure_dev_split

NO_DEV_SPLIT = ("this episode has no dev split, so there is nothing to score on: make the env with dev_split=0.1 "
                "(e.g. mle_env.make(id, dev_split=0.1)); validate checks a submission's format")


def leaderboard_spread(thresholds: Thresholds | None) -> float:
    """``|gold - median|`` of the leaderboard, or 1.0 without one (or when it is 0)."""
    if thresholds is None:
        return 1.0
    spread = abs(thresholds.gold - thresholds.median)
    return spread if math.isfinite(spread) and spread > 0 else 1.0


class DevScorer:
    """Scores files on the dev set of one env (see the module docstring).

    Args:
        spec: the competition.
        grader: the env's (test) grader, whose verified manifest keys the dev split and whose leaderboard
            sets the reward's scale.
        fraction: the dev split's ``test_size``, in (0, 1).
        shaping: whether ``score_dev`` steps give the ``dev_improvement`` reward.

    Raises:
        DevSplitUnsupported: the competition has no dev split.
        PrepareError: the dev split cannot be built from the public data.
    """

    def __init__(self, spec: CompetitionSpec, grader: Grader, fraction: float, shaping: bool) -> None:
        self.spec, self.fraction, self.shaping = spec, fraction, shaping
        self.grader = Grader(spec, ensure_dev_split(spec, grader.paths, grader.manifest, fraction))
        self.grader.lock = grader.lock  # one check of the agent's files at a time per episode, dev or test
        self.public: Path = self.grader.paths.public
        self.rows: dict[str, int] = dict(self.grader.manifest["dev"]["rows"])
        self.train_file: str = self.grader.manifest["dev"]["train_file"]
        self.scale = leaderboard_spread(grader.thresholds)
        self.baseline = self._sample_score()
        self.best = self.baseline

    def reset(self) -> None:
        """A new episode: the best dev score is the sample submission's again."""
        self.best = self.baseline

    def _sample_score(self) -> float | None:
        try:
            return self.grader.score(self.grader.check(self.public / DEV_SAMPLE))
        except (InvalidSubmission, GraderError):
            return None

    def _better(self, score: float, than: float | None) -> float:
        if than is None:
            return 0.0
        return max(0.0, than - score if self.spec.metric.lower_is_better else score - than)

    def score(self, copied: Path | str | None, path: str) -> tuple[dict[str, Any], float]:
        """The observation fields of ``score_dev`` for the file copied out of the sandbox (``copied``: its host
        copy, or why it could not be copied, or None when there is no such file), and the step's reward."""
        if copied is None:
            return dict(action="score_dev", exit_code=1, message=f"there is no ./{path}"), 0.0
        if isinstance(copied, str):
            return dict(action="score_dev", exit_code=1, message=f"{path} cannot be scored: {copied}"), 0.0
        try:
            value = self.grader.evaluate(copied)  # the agent's file: parsed in a bounded child
        except InvalidSubmission as e:
            reason = e.reason.replace("test set", "dev set").replace("test id", "dev id")  # the validator's words
            return dict(action="score_dev", exit_code=1, message=f"{path} is not a valid dev prediction: "
                        f"{reason} (it needs one row per id of data/{DEV_INPUTS})"), 0.0
        except GraderError as e:
            return dict(action="score_dev", exit_code=1, message=f"the grader failed on {path} ({e}); this is "
                        "not your error"), 0.0
        gain = self._better(value, self.best)
        if self.best is None or gain > 0:
            self.best = value
        reward = gain / self.scale if self.shaping else 0.0
        direction = "lower" if self.spec.metric.lower_is_better else "higher"
        return dict(action="score_dev", stdout=f"{value:.5f}", message=(
            f"dev {self.spec.metric.name} {value:.5f} ({direction} is better; best this episode "
            f"{self.best:.5f})")), reward

    def task_note(self) -> str:
        """The task text's section on the dev set."""
        sub = self.spec.submission
        return f"""
# Dev set (`score_dev`)
{self.rows['dev']} labelled rows were held out of the training data as a dev set: `./data/{self.train_file}` holds
the other {self.rows['train']} rows, and `./data/{DEV_INPUTS}` the dev rows' `{sub.id_column}` and inputs without
targets (files they name lie with the training rows' files). `./data/{DEV_SAMPLE}` shows the format:
the submission's header, one row per dev `{sub.id_column}`.
- `{{"type": "score_dev", "path": "relative/path.csv"}}`: the {self.spec.metric.name} of that file's dev
  predictions (their answers are never in the sandbox). Only the dev set is scored; the test set stays
  hidden, and `./submission/submission.csv` must still hold the test predictions.
"""


__all__ = ["NO_DEV_SPLIT", "DevScorer", "leaderboard_spread"]
