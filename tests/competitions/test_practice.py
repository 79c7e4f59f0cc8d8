"""Practice competitions: real data from PyPI, a fixed split, and a reference leaderboard that the
documented population of reference solutions reproduces."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from mle_env.competition.registry import get_spec, list_competitions
from mle_env.grading.grader import Grader
from mle_env.grading.leaderboard import read_leaderboard
from mle_env.reference import SCORE_LIBRARIES, load_solutions, recorded_versions, reference_scores, versions_note

PRACTICE = list_competitions("practice")


@pytest.fixture
def grader_for(practice_home: Path):
    return lambda cid: Grader(get_spec(cid))


def test_there_are_tabular_image_and_text_practice_competitions() -> None:
    assert {get_spec(c).domain for c in PRACTICE} >= {"tabular", "image", "text"}


@pytest.mark.parametrize("cid", PRACTICE)
def test_prepared_data_has_no_answers_in_public(cid: str, grader_for) -> None:
    grader = grader_for(cid)
    spec = grader.spec
    public, private = grader.paths.public, grader.paths.private
    answers = pd.read_csv(private / spec.submission.answers, dtype={spec.submission.id_column: str})
    sample = pd.read_csv(public / spec.submission.sample_submission, dtype={spec.submission.id_column: str})
    assert list(sample[spec.submission.id_column]) == list(answers[spec.submission.id_column])
    if (public / "test.csv").is_file():
        test = pd.read_csv(public / "test.csv")
        assert not set(spec.submission.target_columns) & set(test.columns)
    train = pd.read_csv(public / "train.csv", dtype={spec.submission.id_column: str})
    assert set(train[spec.submission.id_column]).isdisjoint(answers[spec.submission.id_column])
    assert grader.validate(public / spec.submission.sample_submission) == "valid"


@pytest.mark.parametrize("cid", PRACTICE)
def test_leaderboard_format_and_band(cid: str, grader_for) -> None:
    spec = get_spec(cid)
    frame = pd.read_csv(spec.bundled_leaderboard)
    assert list(frame.columns[:6]) == ["scoreNullable", "teamId", "hasTeamName", "submissionDate", "score", "hasScore"]
    assert frame["teamName"].is_unique
    board = read_leaderboard(spec.bundled_leaderboard)
    assert board.inferred_lower_is_better() == spec.metric.lower_is_better
    assert 100 <= len(board.scores) < 250  # Kaggle's 100-249 band: gold = top 10
    t = grader_for(cid).thresholds
    assert t.gold != t.bronze, "thresholds must separate strong and weak solutions"


@pytest.mark.parametrize("cid", PRACTICE)
def test_leaderboard_records_the_library_versions_it_was_built_with(cid: str) -> None:
    built = recorded_versions(cid)
    assert built is not None, f"no reference-versions.json beside it: rebuild with mle-env reference-leaderboard {cid}"
    assert {"python", *SCORE_LIBRARIES} <= set(built)


@pytest.mark.parametrize("cid", PRACTICE)
@pytest.mark.slow
def test_reference_solutions_reproduce_the_leaderboard(cid: str, grader_for) -> None:
    """Depends on the library versions: the shipped scores are those of the versions in
    reference-versions.json, which requirements.lock pins; a failure says which differ. The solutions
    run as the leaderboard's did, pinned to code paths that do not depend on the CPU (numpy's baseline
    SIMD code, OpenBLAS's Nehalem kernels, one thread: mle_env.reference.pinned_variables)."""
    grader = grader_for(cid)
    shipped = pd.read_csv(grader.spec.bundled_leaderboard).set_index("teamName")["score"]
    solutions = load_solutions(cid)
    assert len(solutions) == len(shipped)
    names = [s.name for s in solutions[::23]]  # a spread of members, weak to strong
    scores = reference_scores(cid, names)
    assert sorted(scores) == sorted(names)
    wrong = {n: (scores[n], shipped[n]) for n in names if scores[n] != pytest.approx(shipped[n], abs=1e-5)}
    assert not wrong, ", ".join(f"{n}: {got:.5f}, shipped {want:.5f}" for n, (got, want) in wrong.items()) + (
        f"; {versions_note(cid)}")
