"""Kaggle's medal rules as MLE-bench applies them: every band edge, ties, rounding, strict median."""

import csv
from pathlib import Path

import pytest

from mle_env.grading.medals import (
    Medal,
    is_above_median,
    medal_for,
    medal_positions,
    medal_thresholds,
    rank_and_percentile,
    round_score,
)


@pytest.mark.parametrize(
    ("n", "positions"),
    [
        (1, (1, 1, 1)),  # max(1, int(0.1)) etc.
        (5, (1, 1, 2)),
        (9, (1, 1, 3)),
        (10, (1, 2, 4)),
        (50, (5, 10, 20)),
        (99, (9, 19, 39)),
        (100, (10, 20, 40)),  # second band: gold fixed at 10
        (249, (10, 49, 99)),
        (250, (10, 50, 100)),  # third band: 10 + int(0.5) = 10
        (462, (10, 50, 100)),
        (500, (11, 50, 100)),
        (999, (11, 50, 100)),
        (1000, (12, 50, 100)),  # fourth band
        (1242, (12, 62, 124)),
        (2929, (15, 146, 292)),
    ],
)
def test_positions_per_band(n: int, positions: tuple[int, int, int]) -> None:
    assert medal_positions(n) == positions


def test_zero_teams_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one team"):
        medal_positions(0)


def test_thresholds_sort_best_first_in_both_directions() -> None:
    scores = [float(s) for s in range(1, 11)]  # 10 teams: positions 1 / 2 / 4
    up = medal_thresholds(list(reversed(scores)), lower_is_better=False)
    assert (up.gold, up.silver, up.bronze, up.median) == (10.0, 9.0, 7.0, 5.5)
    down = medal_thresholds(scores, lower_is_better=True)
    assert (down.gold, down.silver, down.bronze, down.median) == (1.0, 2.0, 4.0, 5.5)


def test_ties_win_and_only_the_highest_tier_counts() -> None:
    t = medal_thresholds([10, 9, 8, 7, 6, 5, 4, 3, 2, 1], lower_is_better=False)
    assert medal_for(10.0, t) is Medal.GOLD
    assert medal_for(9.0, t) is Medal.SILVER  # equal to silver threshold
    assert medal_for(8.5, t) is Medal.BRONZE
    assert medal_for(7.0, t) is Medal.BRONZE  # equal to bronze threshold
    assert medal_for(6.99999, t) is Medal.NONE
    low = medal_thresholds([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], lower_is_better=True)
    assert medal_for(1.0, low) is Medal.GOLD
    assert medal_for(4.0, low) is Medal.BRONZE
    assert medal_for(4.00001, low) is Medal.NONE


def test_all_thresholds_equal_means_all_or_nothing() -> None:
    # aerial-cactus: gold = silver = bronze = 1.0
    t = medal_thresholds([1.0] * 200 + [0.99] * 800, lower_is_better=False)
    assert (t.gold, t.silver, t.bronze) == (1.0, 1.0, 1.0)
    assert medal_for(1.0, t) is Medal.GOLD
    assert medal_for(0.99999, t) is Medal.NONE


def test_above_median_is_strict() -> None:
    t = medal_thresholds([4, 3, 2, 1], lower_is_better=False)  # median 2.5
    assert is_above_median(2.50001, t)
    assert not is_above_median(2.5, t)
    low = medal_thresholds([1, 2, 3, 4], lower_is_better=True)
    assert is_above_median(2.49999, low)
    assert not is_above_median(2.5, low)


def test_round_to_five_decimals_before_comparing() -> None:
    t = medal_thresholds([0.9] * 10, lower_is_better=False)
    assert medal_for(round_score(0.899996), t) is Medal.GOLD  # rounds up to 0.9
    assert medal_for(round_score(0.899994), t) is Medal.NONE


def test_rank_and_percentile() -> None:
    board = [0.9, 0.8, 0.8, 0.7]
    assert rank_and_percentile(0.95, board, lower_is_better=False) == (1, 1.0)
    assert rank_and_percentile(0.8, board, lower_is_better=False) == (2, 0.25)  # ties share the better rank
    assert rank_and_percentile(0.1, board, lower_is_better=False) == (5, 0.0)
    assert rank_and_percentile(0.75, board, lower_is_better=True) == (2, 0.75)


def test_thresholds_of_mlebench_leaderboards_match_the_table(shared: Path) -> None:
    """For every real MLE-bench leaderboard, medal_thresholds equals facts/thresholds.tsv."""
    from mle_env.grading.leaderboard import read_leaderboard

    with open(shared / "facts" / "thresholds.tsv", newline="") as f:
        table = {row["id"]: row for row in csv.DictReader(f, delimiter="\t")}
    boards = sorted((shared / "mlebench-leaderboards").glob("*.csv"))
    assert len(boards) >= 80
    for path in boards:
        row = table[path.stem]
        board = read_leaderboard(path)
        lower = row["lower_is_better"] == "true"
        assert board.inferred_lower_is_better() in (lower, None), path.stem
        t = medal_thresholds(board.scores, lower_is_better=lower)
        assert t.n_teams == int(row["n_teams"]), path.stem
        for name in ("gold", "silver", "bronze", "median"):
            assert getattr(t, name) == pytest.approx(float(row[name]), abs=1e-9), (path.stem, name)
