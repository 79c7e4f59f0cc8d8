"""Ids beyond one unique column: superset submissions, composite keys, repeated ids matched in order of
appearance, and answer columns reaching a metric that asks for the answers table."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import raw_dir

from mle_env.competition.registry import get_spec, register_competition
from mle_env.competition.spec import SubmissionSpec
from mle_env.grading.grader import Grader
from mle_env.grading.metrics import METRICS, InvalidPrediction, Metric
from mle_env.grading.validation import InvalidSubmission, validate_submission
from mle_env.prepare.runner import prepare


def spec(**options: object) -> SubmissionSpec:
    return SubmissionSpec(**{"id_column": "id", "kind": "number", "answers": "a.csv", "sample_submission": "s.csv",
                             **options})


def aligned(tmp_path: Path, sub: SubmissionSpec, answers: pd.DataFrame, submission: pd.DataFrame) -> np.ndarray:
    path = tmp_path / "submission.csv"
    submission.to_csv(path, index=False)
    return validate_submission(path, sub, answers.astype(str), ("y",), 10**7).y_pred


def test_superset_ids_are_ignored_but_every_test_id_is_needed(tmp_path: Path) -> None:
    answers = pd.DataFrame({"id": ["c", "a", "b"], "y": [3, 1, 2]})
    extra = pd.DataFrame({"id": ["x", "a", "b", "y", "c", "z"], "y": [9, 1.5, 2.5, 9, 3.5, 9]})
    assert list(aligned(tmp_path, spec(allow_extra_ids=True), answers, extra)) == [3.5, 1.5, 2.5]
    with pytest.raises(InvalidSubmission, match="rows but the test set has 3"):
        aligned(tmp_path, spec(), answers, extra)
    with pytest.raises(InvalidSubmission, match="1 test id.s. are missing, e.g. 'c'"):
        aligned(tmp_path, spec(allow_extra_ids=True), answers, extra[extra["id"] != "c"])
    with pytest.raises(InvalidSubmission, match="duplicate id"):
        aligned(tmp_path, spec(allow_extra_ids=True), answers, pd.concat([extra, extra.iloc[[1]]]))


def test_composite_keys_match_on_every_column(tmp_path: Path) -> None:
    sub = spec(id_columns=("id", "class"))
    answers = pd.DataFrame({"id": ["s1", "s1", "s2", "s2"], "class": ["bowel", "stomach", "bowel", "stomach"],
                            "y": [1, 2, 3, 4]})
    shuffled = answers.iloc[[3, 0, 2, 1]].assign(y=lambda f: f["y"] * 10)
    assert list(aligned(tmp_path, sub, answers, shuffled)) == [10, 20, 30, 40]
    with pytest.raises(InvalidSubmission, match="missing 1 column.s.: 'class'"):
        aligned(tmp_path, sub, answers, shuffled.drop(columns="class"))
    wrong = shuffled.assign(**{"class": ["liver", "bowel", "bowel", "stomach"]})
    reason = "missing, e.g. 's2, stomach'; 1 id.s. are not test ids, e.g. 's2, liver'"
    with pytest.raises(InvalidSubmission, match=reason):
        aligned(tmp_path, sub, answers, wrong)
    with pytest.raises(InvalidSubmission, match=r"empty id \('class'\)"):
        aligned(tmp_path, sub, answers, shuffled.assign(**{"class": ["", "bowel", "bowel", "stomach"]}))


def test_repeated_ids_pair_in_order_of_appearance(tmp_path: Path) -> None:
    """hms eeg_id / smartphone tripId: the k-th row of an id in the submission is the k-th in the answers."""
    answers = pd.DataFrame({"id": ["t2", "t1", "t2", "t1", "t2"], "y": [0, 0, 0, 0, 0]})
    submission = pd.DataFrame({"id": ["t1", "t1", "t2", "t2", "t2"], "y": [11, 12, 21, 22, 23]})
    assert list(aligned(tmp_path, spec(unique_ids=False), answers, submission)) == [21, 11, 22, 12, 23]
    composite = spec(id_columns=("id", "k"), unique_ids=False)
    answers2 = answers.assign(k="a")
    assert list(aligned(tmp_path, composite, answers2, submission.assign(k="a"))) == [21, 11, 22, 12, 23]


@pytest.fixture
def grouped(make_competition: Callable[..., Path], home: Path, monkeypatch: pytest.MonkeyPatch) -> Grader:
    """tiny-comp whose metric reads answer column ``x`` (a group/mask column that is no target)."""
    seen: dict[str, object] = {}

    def masked_error(y_true: np.ndarray, y_pred: np.ndarray, *, answers: pd.DataFrame, mask_column: str) -> float:
        if np.any(y_pred < 0):
            raise InvalidPrediction("predictions must not be negative")
        seen.update(answers=answers, y_true=y_true)
        keep = answers[mask_column].to_numpy() > 0
        return float(np.abs(y_true - y_pred)[keep].mean())

    monkeypatch.setitem(METRICS, "tiny_masked_error", Metric("tiny_masked_error", masked_error, True,
                                                             needs_answers=True))
    folder = make_competition(register=False, kind="number")
    toml = (folder / "competition.toml").read_text()
    toml = toml.replace('name = "auc"', 'name = "tiny_masked_error"\nanswer_columns = ["x"]\n'
                        'params = { mask_column = "x" }').replace('answers_keep = "targets"', 'answers_keep = "all"')
    (folder / "competition.toml").write_text(toml)
    register_competition(folder)
    prepare("tiny-comp", raw_dir=raw_dir(folder))
    grader = Grader(get_spec("tiny-comp"))
    grader.seen = seen  # type: ignore[attr-defined]
    return grader


def test_answer_columns_reach_the_metric_aligned_with_y_true(grouped: Grader, tmp_path: Path) -> None:
    answers = grouped.answers
    submission = answers[["id"]].assign(target=0.25).iloc[::-1]
    path = tmp_path / "submission.csv"
    submission.to_csv(path, index=False)
    report = grouped.grade(path)
    keep = answers["x"].to_numpy() > 0
    expected = np.abs(answers["target"].to_numpy() - 0.25)[keep].mean()
    assert report.status == "scored" and report.score == pytest.approx(round(expected, 5))
    assert np.array_equal(grouped.seen["y_true"], answers["target"].to_numpy())  # type: ignore[attr-defined]
    submission.assign(target=-1.0).to_csv(path, index=False)
    report = grouped.grade(path)
    assert report.status == "invalid" and report.invalid_reason == "predictions must not be negative"
    assert grouped.validate(path) == "predictions must not be negative"


def test_missing_metric_answer_column_is_damaged_data(grouped: Grader) -> None:
    from mle_env.errors import NotPrepared

    answers = grouped.paths.private / "test.csv"
    answers.chmod(0o644)
    pd.read_csv(answers).drop(columns="x").to_csv(answers, index=False)
    with pytest.raises(NotPrepared):
        Grader(get_spec("tiny-comp"))


def test_spec_reads_composite_ids_extra_ids_and_metric_answer_columns(make_competition: Callable[..., Path]) -> None:
    from mle_env.competition.spec import load_spec

    folder = make_competition(register=False)
    toml = (folder / "competition.toml").read_text()
    toml = toml.replace('id_column = "id"\ntarget_columns', 'id_column = ["id", "x"]\nallow_extra_ids = true\n'
                        'target_columns', 1).replace('lower_is_better = false', 'lower_is_better = false\n'
                                                     'answer_columns = ["x"]', 1)
    (folder / "competition.toml").write_text(toml)
    loaded = load_spec(folder)
    assert loaded.submission.id_columns == ("id", "x") and loaded.submission.id_column == "id"
    assert loaded.submission.allow_extra_ids and loaded.metric.answer_columns == ("x",)
    assert SubmissionSpec(id_column="id", kind="text", answers="a", sample_submission="s").id_columns == ("id",)
