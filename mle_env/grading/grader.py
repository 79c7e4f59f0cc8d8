"""Grading a submission file: validate -> metric -> round to 5 decimals -> leaderboard -> medal.

This runs on the host, never inside a sandbox: it reads the private answers. ``grade`` never raises for
anything the submission does wrong; it raises only for the caller's mistakes (unknown competition,
unprepared data, an unreadable leaderboard the caller named explicitly).

A submission is untrusted, so :meth:`Grader.evaluate` (behind ``validate`` and ``grade``) bounds what one
costs the host: the checks that need no parsing (size, header width) run here, then parsing, alignment and
the metric run in a forked child under a memory and a time limit (:mod:`mle_env.grading.bounded`); a child
that exceeds them makes the submission invalid, with a one-line reason. One evaluation runs at a time per
grader (:attr:`Grader.lock`).
"""

from __future__ import annotations

import functools
import importlib.util
import io
import math
import threading
from pathlib import Path

import pandas as pd

from mle_env.competition.registry import get_spec
from mle_env.competition.spec import CompetitionSpec
from mle_env.errors import GraderError, PrepareError
from mle_env.grading.bounded import ChildFailed, LimitExceeded, Limits, run_bounded
from mle_env.grading.leaderboard import find_leaderboard, missing_leaderboard_note, read_leaderboard
from mle_env.grading.medals import (
    Medal,
    is_above_median,
    medal_for,
    medal_thresholds,
    rank_and_percentile,
    round_score,
)
from mle_env.grading.metrics import InvalidPrediction, Metric, get_metric
from mle_env.grading.report import GradeReport
from mle_env.grading.validation import (
    AlignedSubmission,
    InvalidSubmission,
    check_answers,
    check_file,
    read_answers,
    size_limit,
    target_columns,
    validate_submission,
)
from mle_env.paths import CompetitionPaths


class Grader:
    """Grades submissions for one prepared competition; answers are read once and kept.

    Args:
        spec: the competition.
        home: the cache folder (default ``$MLE_ENV_HOME``).
        leaderboard: a leaderboard CSV to use instead of the one found by the usual search.

    Raises:
        NotPrepared: the competition's data has not been prepared, or it does not match its manifest's
            checksums, or the answers cannot be read (the message gives the command that rebuilds it).
    """

    def __init__(self, spec: CompetitionSpec, home: Path | None = None, leaderboard: Path | None = None) -> None:
        self.spec = spec
        self.paths = CompetitionPaths(spec.id, home)
        #: the prepare manifest, once the prepared files matched its checksums
        self.manifest = self.paths.verify()
        answers_path = self.paths.private / spec.submission.answers
        sample_path = self.paths.public / spec.submission.sample_submission
        try:
            self.answers = read_answers(answers_path, spec.submission)
            sample = sample_header(sample_path)
            self.targets = target_columns(spec.submission, sample)
            check_answers(self.answers, spec.submission, self.targets, spec.metric.answer_columns)
        except (OSError, ValueError) as e:
            # the files match the manifest, so prepare wrote them this way: never the submission's fault
            first = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
            what = f"the answers (private/{spec.submission.answers}) cannot be used: {first}"
            raise self.paths.damaged(what) from None
        self.max_bytes = size_limit(answers_path)
        #: what one evaluation of a submission may cost (memory and time of its child), see ``evaluate``
        self.limits = Limits.from_env()
        #: held while a submission is evaluated: one at a time per grader, so per episode and its forks
        self.lock = threading.Lock()
        self._warm = False
        #: the header a submission should have (the sample submission's, else id + targets)
        self.header = list(sample.columns) if sample is not None else [*spec.submission.id_columns, *self.targets]
        self.metric = load_metric(spec)
        lb_path = find_leaderboard(spec, leaderboard, home)
        self.leaderboard = read_leaderboard(lb_path) if lb_path is not None else None
        self.thresholds = (
            medal_thresholds(self.leaderboard.scores, spec.metric.lower_is_better) if self.leaderboard else None
        )

    def check(self, submission: Path) -> AlignedSubmission:
        """Validate only, in this process and unbounded (for trusted files; an agent's goes through
        :meth:`evaluate`); raises InvalidSubmission with the reason."""
        return validate_submission(Path(submission), self.spec.submission, self.answers, self.targets, self.max_bytes)

    def evaluate(self, submission: Path) -> float:
        """``score(check(submission))`` for an untrusted file, at a bounded cost to the host.

        The checks that read at most the header (:func:`~mle_env.grading.validation.check_file`) run here;
        the rest runs in a forked child that may add ``limits.memory(size, cells)`` bytes of address space (by
        default the most of 1 GiB, 4 times the file, and 512 bytes per cell of a valid submission) and run
        ``limits.time(size)`` seconds (120 s plus 2 s per MiB). Evaluations of one grader wait for each other.

        Raises:
            InvalidSubmission: the submission is malformed, or checking it exceeded a limit.
            GraderError: the metric failed on a well-formed submission, or the check failed unexpectedly.
        """
        path = Path(submission)
        check_file(path, self.spec.submission, self.targets, self.max_bytes)
        size = path.stat().st_size
        memory = self.limits.memory(size, cells=len(self.answers) * len(self.header))
        seconds = self.limits.time(size)
        with self.lock:
            self._warm_up()
            try:
                return run_bounded(lambda: self.score(self.check(path)), memory=memory, seconds=seconds,
                                   passthrough=(InvalidSubmission, GraderError))
            except LimitExceeded as e:
                raise InvalidSubmission(
                    f"the submission ({size / 2**20:.1f} MiB) could not be checked within the grader's limits "
                    f"({e.detail}); write only the id and target columns, one row per test id"
                ) from None
            except ChildFailed as e:
                raise GraderError(f"checking the submission failed ({e})") from None

    def _warm_up(self) -> None:
        """Score the sample submission here once, so that what the metric imports on first use is imported
        in this process and not again in every child (sklearn alone takes about a second)."""
        if self._warm:
            return
        self._warm = True
        sample = self.paths.public / self.spec.submission.sample_submission
        try:
            self.score(self.check(sample))
        except Exception:  # noqa: BLE001 - only an optimisation; a sample that does not score is no error here
            pass

    def score(self, aligned: AlignedSubmission) -> float:
        """The metric on a validated submission, rounded to 5 decimals.

        The metric gets ``[metric] params``, plus ``classes`` (the target column names) when it needs them and
        ``answers`` (the whole answers table, row i matching row i of y_true) when it was registered with
        ``needs_answers``: the way group, mask and identity columns (``[metric] answer_columns``) reach it.

        Raises:
            InvalidSubmission: the metric found a prediction malformed (it raised InvalidPrediction).
            GraderError: the metric raised anything else or returned a non-finite value.
        """
        params = dict(self.spec.metric.params)
        if self.metric.needs_classes:
            params["classes"] = list(aligned.target_columns)
        if self.metric.needs_answers:
            params["answers"] = self.answers
        try:
            value = self.metric(aligned.y_true, aligned.y_pred, **params)
        except InvalidPrediction as e:
            raise InvalidSubmission(str(e)) from None
        except Exception as e:  # noqa: BLE001 - any metric failure is the grader's, reported as such
            raise GraderError(f"metric '{self.metric.name}' failed: {type(e).__name__}: {e}") from e
        if not math.isfinite(value):
            raise GraderError(f"metric '{self.metric.name}' returned {value}")
        return round_score(value)

    def validate(self, submission: Path) -> str:
        """What the agent may learn before the end: "valid", or why not. Never the score."""
        try:
            self.evaluate(submission)
        except InvalidSubmission as e:
            return e.reason
        except GraderError as e:
            return f"the submission is well-formed but the grader failed on it ({e}); this is not your error"
        return "valid"

    def grade(self, submission: Path) -> GradeReport:
        """Grade the file at ``submission`` (see GradeReport for every field)."""
        submission = Path(submission)
        base = dict(
            competition_id=self.spec.id,
            competition_version=self.spec.version,
            submission_path=str(submission),
            is_lower_better=self.spec.metric.lower_is_better,
            **self._threshold_fields(),
        )
        exists = submission.is_file() and submission.suffix.lower() == ".csv"
        if not exists:
            reason = (
                f"there is no submission file at {submission}"
                if not submission.is_file()
                else f"{submission.name} is not a .csv file"
            )
            return GradeReport(status="missing", submission_exists=False, invalid_reason=reason, **base)
        try:
            score = self.evaluate(submission)
        except InvalidSubmission as e:
            return GradeReport(status="invalid", submission_exists=True, invalid_reason=e.reason, **base)
        except GraderError as e:
            return GradeReport(
                status="grader_error", submission_exists=True, valid_submission=True, grader_error=str(e), **base
            )
        extra: dict[str, object] = {}
        if self.thresholds is not None and self.leaderboard is not None:
            rank, percentile = rank_and_percentile(score, self.leaderboard.scores, self.spec.metric.lower_is_better)
            extra = dict(
                medal=medal_for(score, self.thresholds),
                above_median=is_above_median(score, self.thresholds),
                rank=rank,
                percentile=percentile,
            )
        return GradeReport(status="scored", score=score, submission_exists=True, valid_submission=True, **extra, **base)

    def _threshold_fields(self) -> dict[str, object]:
        t = self.thresholds
        if t is None:
            return {"leaderboard_note": missing_leaderboard_note(self.spec)}
        return dict(
            gold_threshold=t.gold,
            silver_threshold=t.silver,
            bronze_threshold=t.bronze,
            median_threshold=t.median,
            leaderboard_teams=t.n_teams,
        )


def sample_header(path: Path) -> pd.DataFrame | None:
    """The sample submission's columns (a frame with no rows), or None when there is no such file; a sample
    packed as 7z (statoil's ``sample_submission.csv.7z``) is read from its one member."""
    from mle_env.archives import is_7z, read_7z_member

    if not path.is_file():
        return None
    if is_7z(path):
        try:
            member = read_7z_member(path)
        except PrepareError as e:  # a damaged archive: reported with the other unusable prepared files
            raise ValueError(str(e)) from None
        return pd.read_csv(io.BytesIO(member), nrows=0)
    return pd.read_csv(path, nrows=0)


def load_metric(spec: CompetitionSpec) -> Metric:
    """The spec's metric; a folder's metric script is imported first so it can register it."""
    if spec.metric.script:
        _import_script(spec.folder / spec.metric.script)
    return get_metric(spec.metric.name)


@functools.cache
def _import_script(path: Path) -> None:
    module_spec = importlib.util.spec_from_file_location(f"mle_env_metric_{path.parent.name.replace('-', '_')}", path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)


def grade(
    competition_id: str, submission_path: str | Path, *, leaderboard: str | Path | None = None,
    home: str | Path | None = None,
) -> GradeReport:
    """Grade ``submission_path`` for a prepared competition, exactly as MLE-bench does.

    Args:
        competition_id: an id or alias.
        submission_path: the CSV to grade.
        leaderboard: a leaderboard CSV to compare against instead of the installed one.
        home: the cache folder (default ``$MLE_ENV_HOME`` or ``~/.cache/mle-env``).

    Returns:
        A GradeReport; a malformed submission gives ``status="invalid"`` with ``invalid_reason``.

    Raises:
        UnknownCompetition: no competition has that id or alias.
        NotPrepared: the competition's data is not prepared.
    """
    spec = get_spec(competition_id)
    grader = Grader(
        spec, Path(home) if home is not None else None, Path(leaderboard) if leaderboard is not None else None
    )
    return grader.grade(Path(submission_path))


__all__ = ["Grader", "GradeReport", "Medal", "grade", "load_metric"]
