"""The offline baseline medals on detecting-insults (against MLE-bench's real leaderboard) and reaches at
least bronze on every practice competition."""

from __future__ import annotations

from pathlib import Path

import pytest

import mle_env
from mle_env.competition.registry import list_competitions
from mle_env.recording import read_trajectory


def test_baseline_medals_on_detecting_insults(insults_home: Path, backend: str) -> None:
    env = mle_env.make("detecting-insults-in-social-commentary", sandbox=backend)
    result = mle_env.run_episode(env, mle_env.make_policy("baseline"), seed=0)
    env.close()
    assert result.status == "ok" and result.end == "submitted"
    assert result.grade.valid_submission and result.grade.any_medal, result.grade.to_dict()
    kinds = [r.get("kind") for r in read_trajectory(Path(result.trajectory)) if r["type"] == "step"]
    assert kinds[0] == "shell" and "validate" in kinds and kinds[-1] == "submit"


@pytest.mark.parametrize("competition", list_competitions("practice"))
def test_baseline_reaches_bronze_on_practice_competitions(practice_home: Path, competition: str) -> None:
    env = mle_env.make(competition, sandbox="local")
    result = mle_env.run_episode(env, mle_env.make_policy("baseline"), seed=0)
    env.close()
    assert result.status == "ok" and result.grade.scored
    assert result.grade.medal >= mle_env.Medal.BRONZE, result.grade.to_dict()
