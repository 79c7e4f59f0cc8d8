"""pass@k and the leaderboard statistics against values computed by hand."""

import math

import pytest

from mle_env.evaluation.stats import leaderboard, mean_sem, overall_pass_at_k, pass_at_k, per_competition


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 1, 0.4),            # c / n
        (5, 2, 2, 0.7),            # 1 - C(3,2)/C(5,2) = 1 - 3/10
        (5, 2, 3, 0.9),            # 1 - C(3,3)/C(5,3) = 1 - 1/10
        (5, 2, 4, 1.0),            # fewer than 4 failures: every draw of 4 holds a success
        (5, 0, 3, 0.0),
        (3, 3, 1, 1.0),
        (4, 1, 2, 0.5),            # 1 - C(3,2)/C(4,2) = 1 - 3/6
        (2, 1, 3, None),           # fewer episodes than k: undefined, never guessed
        (0, 0, 1, None),
    ],
)
def test_pass_at_k(n: int, c: int, k: int, expected: float | None) -> None:
    result = pass_at_k(n, c, k)
    assert result == pytest.approx(expected) if expected is not None else result is None


def record(cid: str, seed: int, medal: int, status: str = "ok", above: bool = False, split: str = "practice",
           score: float = 0.5) -> dict:
    grade = {"medal_tier": medal, "above_median": above, "score": score, "is_lower_better": False}
    return {"competition_id": cid, "seed": seed, "status": status, "split": split,
            "grade": grade if status != "infra_error" else None}


RECORDS = [
    record("a", 0, 1, above=True), record("a", 1, 3, above=True), record("a", 2, 0),
    record("b", 0, 0), record("b", 1, 2, above=True), record("b", 2, 0, split="practice"),
    record("b", 2, 0, status="infra_error"),  # a failed attempt of an episode that later finished
    record("c", 0, 3, status="infra_error", split="lite"),  # only infrastructure errors: not counted at all
]


def test_infra_errors_are_left_out() -> None:
    table = per_competition(RECORDS)
    assert set(table) == {"a", "b"} and table["b"]["n"] == 3


def test_per_competition_and_overall() -> None:
    table = per_competition(RECORDS)
    a = table["a"]
    assert a["any_medal"]["successes"] == 2 and a["gold"]["successes"] == 1 and a["silver"]["successes"] == 1
    assert a["any_medal"]["pass_at_k"] == {1: pytest.approx(2 / 3), 2: 1.0, 3: 1.0}
    assert a["gold"]["pass_at_k"][2] == pytest.approx(2 / 3)  # 1 - C(2,2)/C(3,2)
    assert a["best_score"] == 0.5
    overall = overall_pass_at_k(table, 4)
    # any medal: a 2/3, b 1/3 -> pass@1 mean 0.5; pass@4 undefined for both
    assert overall["any_medal"][1]["mean"] == pytest.approx(0.5)
    assert overall["any_medal"][4] == {"mean": None, "competitions": 0, "undefined": 2}


def test_leaderboard_mean_and_sem_over_seeds() -> None:
    board = leaderboard(RECORDS)["all"]
    # seed 0: a medal, b none -> 50 %; seed 1: both -> 100 %; seed 2: neither -> 0 %
    assert board["per_seed"] == {0: 50.0, 1: 100.0, 2: 0.0}
    assert board["mean"] == pytest.approx(50.0)
    assert board["sem"] == pytest.approx(50.0 / math.sqrt(3))  # stdev of (50, 100, 0) is 50
    assert board["competitions"] == 2
    single = mean_sem([42.0])
    assert (single.mean, single.sem) == (42.0, None)
