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


def _checked_members(cid: str) -> list[str]:
    solutions = load_solutions(cid)
    if get_spec(cid).prepare.helper == "table_split":  # the shared population: a linear and a boosted member
        return [solutions[21].name, solutions[101].name]
    return [s.name for s in solutions[::23]]  # a spread of members, weak to strong


@pytest.fixture(scope="session")
def reproduced(practice_session_home: Path) -> dict[str, dict[str, float] | BaseException]:
    """The checked members of every practice competition scored once, two competitions at a time: each
    scoring runs in its own child pinned to one thread, so two share 2 cores without oversubscribing."""
    from concurrent.futures import ThreadPoolExecutor

    def score(cid: str) -> dict[str, float] | BaseException:
        try:
            return reference_scores(cid, _checked_members(cid))
        except Exception as e:  # noqa: BLE001 - reported by that competition's test
            return e

    with pytest.MonkeyPatch.context() as patch, ThreadPoolExecutor(max_workers=2) as pool:
        patch.setenv("MLE_ENV_HOME", str(practice_session_home))
        return dict(zip(PRACTICE, pool.map(score, PRACTICE), strict=True))


@pytest.mark.parametrize("cid", PRACTICE)
@pytest.mark.slow
def test_reference_solutions_reproduce_the_leaderboard(cid: str, grader_for, reproduced) -> None:
    """Depends on the library versions: the shipped scores are those of the versions in
    reference-versions.json, which requirements.lock pins; a failure says which differ. The solutions
    run as the leaderboard's did, pinned to code paths that do not depend on the CPU (numpy's baseline
    SIMD code, OpenBLAS's Nehalem kernels, one thread: mle_env.reference.pinned_variables)."""
    grader = grader_for(cid)
    shipped = pd.read_csv(grader.spec.bundled_leaderboard).set_index("teamName")["score"]
    assert len(load_solutions(cid)) == len(shipped)
    names = _checked_members(cid)
    scores = reproduced[cid]
    if isinstance(scores, BaseException):
        raise scores
    assert sorted(scores) == sorted(names)
    wrong = {n: (scores[n], shipped[n]) for n in names if scores[n] != pytest.approx(shipped[n], abs=1e-5)}
    assert not wrong, ", ".join(f"{n}: {got:.5f}, shipped {want:.5f}" for n, (got, want) in wrong.items()) + (
        f"; {versions_note(cid)}")


# --- the pool (issue 30): made with mle-env new, partitioned, in sets ---------------------------------
MADE_WITH_NEW = [c for c in PRACTICE if get_spec(c).prepare.helper == "table_split"]


def test_the_pool_holds_fifty_competitions_made_with_mle_env_new() -> None:
    assert len(MADE_WITH_NEW) >= 50 and len(PRACTICE) >= 53
    assert {"practice-house-prices", "practice-fine-food-reviews", "practice-mnist-digits"} <= set(PRACTICE)


def test_the_pool_spans_domains_and_metrics() -> None:
    specs = [get_spec(c) for c in PRACTICE]
    assert {s.domain for s in specs} >= {"tabular", "text", "image", "time-series"}
    assert {s.metric.name for s in specs} >= {"auc", "log_loss", "accuracy", "f1", "multiclass_log_loss",
                                              "quadratic_weighted_kappa", "rmse", "rmsle", "mae", "smape"}
    splits = {s.prepare.params["split"] for s in specs if s.prepare.helper == "table_split"}
    assert splits >= {"stratified", "random", "time"}


def test_every_practice_competition_has_a_licence_a_partition_and_a_finished_description() -> None:
    for cid in PRACTICE:
        spec = get_spec(cid)
        assert spec.license and spec.partition in ("train", "eval"), cid
        for name in ("description.md", "description_obfuscated.md"):
            assert "TODO" not in (spec.folder / name).read_text(encoding="utf-8"), f"{cid}'s {name} is unfinished"


def test_the_partition_and_the_domain_sets_split_the_pool() -> None:
    from mle_env.competition.registry import select_competitions, task_set, task_sets

    train, held_out = select_competitions(["practice-train"]), select_competitions(["practice-eval"])
    assert set(train).isdisjoint(held_out) and sorted(train + held_out) == sorted(PRACTICE)
    assert 8 <= len(held_out) <= len(PRACTICE) // 2
    for domain in ("tabular", "text", "image", "time-series"):
        members = task_set(f"practice-{domain}")
        assert members and all(get_spec(c).domain == domain for c in members)
    assert len(task_set("all")) == 75 and task_sets()["practice"] == len(PRACTICE)
    assert select_competitions(["practice-eval", held_out[0]]) == held_out  # no repeats


@pytest.mark.parametrize("cid", PRACTICE)
def test_a_perfect_submission_scores_best_and_reaches_gold(cid: str, grader_for, tmp_path: Path) -> None:
    grader = grader_for(cid)
    spec = grader.spec
    answers = pd.read_csv(grader.paths.private / spec.submission.answers,
                          dtype={spec.submission.id_column: str})
    columns = [spec.submission.id_column, *grader.targets]
    path = tmp_path / "perfect.csv"
    answers[columns].to_csv(path, index=False)
    report = grader.grade(path)
    board = read_leaderboard(spec.bundled_leaderboard)
    best = min(board.scores) if spec.metric.lower_is_better else max(board.scores)
    assert report.gold_medal, report.to_dict()
    assert (report.score <= best) if spec.metric.lower_is_better else (report.score >= best)
