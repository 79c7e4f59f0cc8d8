"""pass@k and the leaderboard statistics against values computed by hand; every scheduled episode is in
every denominator."""

import math

import pytest

from mle_env.evaluation.stats import (
    count_outcomes,
    episodes,
    leaderboard,
    mean_sem,
    outcome,
    overall_pass_at_k,
    pass_at_k,
    per_competition,
    scheduled_keys,
)


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
           score: float = 0.5, end: str = "submitted") -> dict:
    grade = {"medal_tier": medal, "above_median": above, "score": score, "is_lower_better": False}
    return {"competition_id": cid, "seed": seed, "status": status, "split": split, "end": end,
            "grade": grade if status != "infra_error" else None}


RECORDS = [
    record("a", 0, 1, above=True), record("a", 1, 3, above=True), record("a", 2, 0),
    record("b", 0, 0), record("b", 1, 2, above=True), record("b", 2, 0, split="practice"),
    record("b", 2, 0, status="infra_error"),  # a failed attempt of an episode that later finished
    record("c", 0, 3, status="infra_error", split="lite"),  # failed after its retries: counted as no medal
]


def test_an_infra_error_after_the_retries_stays_in_the_denominator_as_no_medal() -> None:
    table = per_competition(RECORDS)
    assert set(table) == {"a", "b", "c"} and table["b"]["n"] == 3  # b's retried failure: one episode, finished
    c = table["c"]
    assert c["n"] == 1 and c["infra_errors"] == 1 and c["any_medal"]["successes"] == 0
    assert c["any_medal"]["pass_at_k"] == {1: 0.0}
    assert table["b"]["infra_errors"] == 0  # it was retried and then finished


def test_outcomes_and_not_run_episodes() -> None:
    records = [record("a", 0, 2, end="sandbox_broken"), record("a", 1, 0, status="agent_error"),
               record("a", 2, 1, end="truncated"), record("a", 3, 0, status="infra_error")]
    assert [outcome(r) for r in records] == ["sandbox_broken", "agent_error", "ok", "infra_error"]
    config = {"competitions": ["a", "z"], "seeds": 5, "splits": {"z": "lite"}}
    keys = scheduled_keys(records, config)
    assert len(keys) == 10
    rows = episodes(records, keys, config["splits"])
    assert count_outcomes(rows) == {"ok": 1, "sandbox_broken": 1, "agent_error": 1, "infra_error": 1, "not_run": 6}
    table = per_competition(records, keys, config["splits"])
    # a sandbox the agent broke is graded like any other episode: its silver counts
    assert table["a"]["n"] == 5 and table["a"]["any_medal"]["successes"] == 2 and table["a"]["not_run"] == 1
    assert table["z"] == {**table["z"], "n": 5, "split": "lite", "not_run": 5}
    assert table["z"]["any_medal"]["pass_at_k"][5] == 0.0
    board = leaderboard(records, "any_medal", keys, config["splits"])
    assert board["all"]["episodes"] == 10 and board["all"]["no_grade"] == 7
    assert board["all"]["per_seed"] == {0: 50.0, 1: 0.0, 2: 50.0, 3: 0.0, 4: 0.0}
    assert scheduled_keys(records, {"scheduled": {"a": 2}}) == [("a", 0), ("a", 1), ("a", 2), ("a", 3)]


def test_per_competition_and_overall() -> None:
    table = per_competition(RECORDS)
    a = table["a"]
    assert a["any_medal"]["successes"] == 2 and a["gold"]["successes"] == 1 and a["silver"]["successes"] == 1
    assert a["any_medal"]["pass_at_k"] == {1: pytest.approx(2 / 3), 2: 1.0, 3: 1.0}
    assert a["gold"]["pass_at_k"][2] == pytest.approx(2 / 3)  # 1 - C(2,2)/C(3,2)
    assert a["best_score"] == 0.5
    overall = overall_pass_at_k(table, 4)
    # any medal: a 2/3, b 1/3, c 0/1 -> pass@1 mean 1/3; pass@2 over a and b only; pass@4 undefined for all
    assert overall["any_medal"][1]["mean"] == pytest.approx(1 / 3)
    assert overall["any_medal"][2] == {"mean": pytest.approx((1 + 2 / 3) / 2), "competitions": 2, "undefined": 1}
    assert overall["any_medal"][4] == {"mean": None, "competitions": 0, "undefined": 3}


def test_leaderboard_mean_and_sem_over_seeds() -> None:
    board = leaderboard(RECORDS)["all"]
    # seed 0: a medal, b none, c's infrastructure failed (no medal) -> 1/3; seed 1: both -> 100 %; seed 2: 0 %
    assert board["per_seed"] == {0: pytest.approx(100 / 3), 1: 100.0, 2: 0.0}
    assert board["mean"] == pytest.approx(400 / 9)
    per_seed = [100 / 3, 100.0, 0.0]
    mean = sum(per_seed) / 3
    sd = math.sqrt(sum((v - mean) ** 2 for v in per_seed) / 2)
    assert board["sem"] == pytest.approx(sd / math.sqrt(3))
    assert board["competitions"] == 3 and board["no_grade"] == 1
    assert leaderboard(RECORDS)["lite"]["per_seed"] == {0: 0.0}
    single = mean_sem([42.0])
    assert (single.mean, single.sem) == (42.0, None)
