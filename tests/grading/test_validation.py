"""Every malformed submission becomes valid_submission=false with a one-line reason, never an exception.

The corpus below has one entry per way a submission can be wrong; each names a phrase the reason must
contain, so the message says what is wrong rather than just "invalid".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import raw_dir

from mle_env.competition.registry import get_spec
from mle_env.grading.grader import Grader
from mle_env.grading.validation import MAX_REASON, InvalidSubmission, cap_reason, validate_submission
from mle_env.prepare.runner import prepare


@pytest.fixture
def tiny(make_competition: Callable[..., Path], home: Path) -> Grader:
    folder = make_competition()
    prepare("tiny-comp", raw_dir=raw_dir(folder))
    return Grader(get_spec("tiny-comp"))


def good_frame(grader: Grader) -> pd.DataFrame:
    answers = grader.answers
    return pd.DataFrame({"id": answers["id"], "target": np.linspace(0.1, 0.9, len(answers))})


def write(path: Path, content: str | bytes) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def csv_text(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False)


def corpus(g: Grader, tmp: Path) -> dict[str, tuple[Path, str]]:
    """name -> (submission path, phrase the reason must contain)."""
    good = good_frame(g)
    ids = list(good["id"])
    cases: dict[str, tuple[Path, str]] = {}

    def add(name: str, content: str | bytes, phrase: str, filename: str = "submission.csv") -> None:
        folder = tmp / name
        folder.mkdir()
        cases[name] = (write(folder / filename, content), phrase)

    add("empty-file", b"", "empty")
    add("binary-junk", bytes(range(256)) * 8, "binary")
    add("latin-1", "id,target\n\xe9t\xe9,0.5\n".encode("latin-1"), "UTF-8")
    add("header-only", "id,target\n", f"has 0 rows but the test set has {len(ids)}")
    add("blank-line", "\n", "no columns")
    add("missing-target", csv_text(good[["id"]]), "missing 1 column(s): 'target'")
    add("missing-id", csv_text(good[["target"]]), "missing 1 column(s): 'id'")
    add("wrong-case", csv_text(good.rename(columns={"target": "Target"})), "case-sensitive")
    add("extra-column", csv_text(good.assign(note="x")), "unexpected column(s) 'note'")
    add("repeated-header", "id,target,target\n" + "".join(f"{i},0.5,0.5\n" for i in ids), "repeats column(s) 'target'")
    add("too-few-rows", csv_text(good.iloc[:-1]), "rows but the test set has")
    add("too-many-rows", csv_text(pd.concat([good, good.iloc[:1].assign(id="extra")])), "rows but the test set has")
    add("duplicate-id", csv_text(good.assign(id=[ids[0]] + ids[:-1])), "duplicate id(s)")
    add("unknown-id", csv_text(good.assign(id=["nope"] + ids[1:])), "not test ids")
    add("empty-id", csv_text(good.assign(id=[""] + ids[1:])), "empty id")
    add("nan-value", csv_text(good.assign(target=[np.nan] + list(good["target"][1:]))), "empty cell")
    def first_cell(text: str) -> str:
        return csv_text(good.astype({"target": str}).assign(target=[text] + list(good["target"][1:].astype(str))))

    add("nan-text", first_cell("NaN"), "holds NaN")
    add("infinity", first_cell("inf"), "infinity")
    add("non-numeric", first_cell("high"), "must be numeric but holds 'high'")
    add("probability-above-one", csv_text(good.assign(target=[1.5] + list(good["target"][1:]))), "outside [0, 1]")
    add("negative-probability", csv_text(good.assign(target=[-0.1] + list(good["target"][1:]))), "outside [0, 1]")
    add("ragged-row", "id,target\n" + "".join(f"{i},0.5\n" for i in ids[:-1]) + f"{ids[-1]},0.5,9\n",
        "not a well-formed CSV")
    add("unterminated-quote", 'id,target\n"' + ids[0] + ',0.5\n', "")
    add("json-not-csv", '{"id": ["a"], "target": [0.5]}', "missing")
    add("semicolons", csv_text(good).replace(",", ";"), "missing")
    add("not-csv-suffix", csv_text(good), "not a .csv file", filename="submission.txt")
    # values the reason quotes are cut: a 10 MB cell, id or column name is never echoed whole
    add("10mb-cell", first_cell("x" * 10_000_000), "must be numeric but holds 'xxxx")
    add("10mb-id", csv_text(good.assign(id=["y" * 10_000_000] + ids[1:])), "(10,000,000 characters)")
    add("10mb-column", csv_text(good.assign(**{"z" * 10_000_000: 1})), "header row is over 1,048,576 characters")
    add("100k-column", csv_text(good.assign(**{"z" * 100_000: 1})), "unexpected column(s) 'zzzz")
    add("100k-missing-column", csv_text(good[["id"]].assign(**{"T" * 100_000: 1})), "missing 1 column(s)")
    add("many-repeated-columns", ",".join(["id", "target"] + [f"c{i}" for i in range(50)] * 2) + "\n",
        "repeats column(s)")
    # a header far wider than the sample's is refused before the file is parsed
    add("wide-header", ",".join(["id", "target"] + [f"c{i}" for i in range(5000)] * 2) + "\n",
        "the header has 10,002 columns but 2 are expected ('id', 'target')")
    # a 3 GB sparse file: the size is checked before anything is read
    big = tmp / "multi-gb"
    big.mkdir()
    with open(big / "submission.csv", "wb") as f:
        f.truncate(3 * 2**30)
    cases["multi-gb"] = (big / "submission.csv", "over the")
    link = tmp / "symlink"
    link.mkdir()
    (link / "submission.csv").symlink_to(cases["missing-target"][0])
    cases["symlink"] = (link / "submission.csv", "symbolic link")
    missing = tmp / "missing"
    missing.mkdir()
    cases["missing-file"] = (missing / "submission.csv", "no submission file")
    directory = tmp / "directory" / "submission.csv"
    directory.mkdir(parents=True)
    cases["directory"] = (directory, "no submission file")
    return cases


def test_corpus_has_at_least_25_cases(tiny: Grader, tmp_path: Path) -> None:
    assert len(corpus(tiny, tmp_path)) >= 25


@pytest.mark.slow
def test_every_malformed_submission_is_invalid_with_a_reason(tiny: Grader, tmp_path: Path) -> None:
    for name, (path, phrase) in corpus(tiny, tmp_path).items():
        report = tiny.grade(path)
        assert report.score is None, name
        assert report.status in ("invalid", "missing"), (name, report.status)
        assert not report.valid_submission, name
        assert report.invalid_reason and "\n" not in report.invalid_reason, name
        assert len(report.invalid_reason) <= MAX_REASON, (name, len(report.invalid_reason))
        assert phrase in report.invalid_reason, (name, report.invalid_reason)
        assert report.gold_threshold is not None, name  # thresholds are reported all the same
        assert tiny.validate(path) != "valid", name


def test_valid_submission_in_any_row_order_scores_the_same(tiny: Grader, tmp_path: Path) -> None:
    good = good_frame(tiny)
    a = write(tmp_path / "a.csv", csv_text(good))
    b = write(tmp_path / "b.csv", csv_text(good.iloc[::-1]))
    ra, rb = tiny.grade(a), tiny.grade(b)
    assert ra.status == rb.status == "scored"
    assert ra.score == rb.score
    assert tiny.validate(a) == "valid"


def test_validate_never_reveals_the_score(tiny: Grader, tmp_path: Path) -> None:
    path = write(tmp_path / "s.csv", csv_text(good_frame(tiny)))
    message = tiny.validate(path)
    assert message == "valid"
    assert str(tiny.grade(path).score) not in message


def _spec(**changes: object):
    base = get_spec("tiny-comp").submission
    return dataclasses.replace(base, **changes)


def test_value_kinds(tiny: Grader, tmp_path: Path) -> None:
    answers = tiny.answers
    ids = list(answers["id"])
    n = len(ids)

    def check(spec, values) -> str:
        path = write(tmp_path / "k.csv", csv_text(pd.DataFrame({"id": ids, "target": values})))
        try:
            validate_submission(path, spec, answers, ("target",), 10**9)
        except InvalidSubmission as e:
            return e.reason
        return "valid"

    integer = _spec(kind="integer", allowed_values=(0, 1))
    assert check(integer, [0, 1] * (n // 2)) == "valid"
    assert "whole numbers" in check(integer, [0.5] * n)
    assert "not one of" in check(integer, [2] * n)
    label = _spec(kind="label", allowed_values=("cat", "dog"))
    assert check(label, ["cat"] * n) == "valid"
    assert "not an allowed label" in check(label, ["cow"] * n)
    number = _spec(kind="number", value_range=(0.0, float("inf")))
    assert "outside [0, inf]" in check(number, [-1.0] * n)
    assert check(_spec(kind="text"), ["anything"] * n) == "valid"


def test_rows_must_sum_to_one_for_class_probabilities(tiny: Grader, tmp_path: Path) -> None:
    answers = tiny.answers.assign(a=1, b=0)
    spec = _spec(rows_sum_to_one=True, answer_columns=("a", "b"))
    ids = list(answers["id"])
    ok = write(tmp_path / "ok.csv", csv_text(pd.DataFrame({"id": ids, "a": 0.25, "b": 0.75})))
    validate_submission(ok, spec, answers, ("a", "b"), 10**9)
    bad = write(tmp_path / "bad.csv", csv_text(pd.DataFrame({"id": ids, "a": 0.5, "b": 0.6})))
    with pytest.raises(InvalidSubmission, match="sum to 1"):
        validate_submission(bad, spec, answers, ("a", "b"), 10**9)


def test_numeric_ids_written_as_floats_still_match(tmp_path: Path) -> None:
    answers = pd.DataFrame({"id": ["1", "2", "3"], "target": [0, 1, 1]})
    spec = dataclasses.replace(_bare_spec(), id_column="id")
    path = write(tmp_path / "s.csv", "id,target\n3.0,0.9\n1.0,0.1\n2.0,0.8\n")
    aligned = validate_submission(path, spec, answers, ("target",), 10**9)
    assert list(aligned.y_pred) == [0.1, 0.8, 0.9]


def test_repeated_ids_are_matched_in_order(tmp_path: Path) -> None:
    answers = pd.DataFrame({"id": ["x", "y", "x"], "target": [0, 1, 1]})
    spec = dataclasses.replace(_bare_spec(), unique_ids=False)
    path = write(tmp_path / "s.csv", "id,target\ny,0.2\nx,0.1\nx,0.9\n")
    aligned = validate_submission(path, spec, answers, ("target",), 10**9)
    assert list(aligned.y_pred) == [0.1, 0.2, 0.9]


def _bare_spec():
    from mle_env.competition.spec import SubmissionSpec

    return SubmissionSpec(id_column="id", kind="probability", answers="test.csv", sample_submission="s.csv")


def test_metric_crash_is_a_grader_error_not_an_invalid_submission(
    make_competition: Callable[..., Path], home: Path, tmp_path: Path
) -> None:
    script = '''
        from mle_env.grading.metrics import register_metric

        @register_metric("explodes", lower_is_better=False)
        def explodes(y_true, y_pred):
            """Always fails."""
            raise ZeroDivisionError("boom")
    '''
    folder = make_competition("boom-comp", aliases=("boom",), metric="explodes", metric_script=script)
    prepare("boom-comp", raw_dir=raw_dir(folder))
    grader = Grader(get_spec("boom-comp"))
    path = write(tmp_path / "s.csv", csv_text(good_frame(grader)))
    report = grader.grade(path)
    assert report.status == "grader_error"
    assert report.valid_submission and report.score is None
    assert "ZeroDivisionError: boom" in report.grader_error
    assert "not your error" in grader.validate(path)


def test_no_leaderboard_still_scores_and_says_why_no_medal(
    make_competition: Callable[..., Path], home: Path, tmp_path: Path
) -> None:
    folder = make_competition("bare-comp", aliases=("bare",))
    (folder / "leaderboard.csv").unlink()
    prepare("bare-comp", raw_dir=raw_dir(folder))
    grader = Grader(get_spec("bare-comp"))
    report = grader.grade(write(tmp_path / "s.csv", csv_text(good_frame(grader))))
    assert report.status == "scored" and report.score is not None
    assert report.gold_threshold is None and not report.any_medal
    assert "no medal can be computed" in report.leaderboard_note


def test_reasons_are_one_line_and_capped() -> None:
    reason = InvalidSubmission("column 'x' holds " + "y" * 1_000_000 + "\n and more").reason
    assert len(reason) == MAX_REASON and reason.endswith("...") and "\n" not in reason
    assert cap_reason("short\n  reason") == "short reason"
