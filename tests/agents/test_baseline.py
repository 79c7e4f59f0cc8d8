"""The offline baseline medals on detecting-insults (against MLE-bench's real leaderboard) and reaches at
least bronze on every practice competition."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import hand_built_practice

import mle_env
from mle_env.competition.registry import get_spec, select_competitions, task_set
from mle_env.recording import read_trajectory


@pytest.mark.slow
def test_baseline_medals_on_detecting_insults(insults_home: Path, backend: str) -> None:
    env = mle_env.make("detecting-insults-in-social-commentary", sandbox=backend)
    result = mle_env.run_episode(env, mle_env.make_policy("baseline"), seed=0)
    env.close()
    assert result.status == "ok" and result.end == "submitted"
    assert result.grade.valid_submission and result.grade.any_medal, result.grade.to_dict()
    kinds = [r.get("kind") for r in read_trajectory(Path(result.trajectory)) if r["type"] == "step"]
    assert kinds[0] == "shell" and "validate" in kinds and kinds[-1] == "submit"


#: the practice competitions built by hand (the pool made with mle-env new is checked below)
HAND_BUILT = hand_built_practice()
#: the pool's training partition: its held-out partition runs as a whole evaluation below
POOL_TRAIN = [c for c in task_set("practice-train") if get_spec(c).prepare.helper == "table_split"]


@pytest.mark.parametrize("competition", HAND_BUILT)
@pytest.mark.slow
def test_baseline_reaches_bronze_on_practice_competitions(practice_home: Path, competition: str,
                                                          baseline_episode) -> None:
    result = baseline_episode(competition)
    assert result.status == "ok" and result.grade.scored
    assert result.grade.medal >= mle_env.Medal.BRONZE, result.grade.to_dict()


@pytest.mark.slow
def test_an_evaluation_of_the_held_out_practice_set_with_two_seeds(practice_home: Path, tmp_path: Path) -> None:
    """``mle-env eval --agent baseline --competitions practice-eval --seeds 2``: every episode ends graded with
    a valid submission, and the two seeds of a competition are two episodes."""
    import json

    from mle_env.evaluation import EvalConfig, evaluate

    held_out = select_competitions(["practice-eval"])
    config = EvalConfig(agent="baseline", competitions=held_out, seeds=2, out=tmp_path / "run", workers=2,
                        env_options={"sandbox": "local"})
    run = evaluate(config)
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert sorted((r["competition_id"], r["seed"]) for r in records) == [(c, s) for c in sorted(held_out)
                                                                        for s in (0, 1)]
    invalid = [(r["competition_id"], r["seed"], r.get("status")) for r in records
               if r.get("status") != "ok" or not (r.get("grade") or {}).get("valid_submission")]
    assert not invalid, invalid


def _run_baselines_program(competition: str, work: Path) -> str | None:
    """The baseline's own program (mlkit's profile and its first pipeline, as the agent writes and runs
    them) run on the host in ``work`` against the prepared public files, one thread; None when it ran, else
    the failure. Its submission is ``work/submission/submission.csv``."""
    import os
    import shutil
    import subprocess
    import sys

    import mle_env.agents.mlkit as mlkit
    from mle_env.agents.baseline import default_configs
    from mle_env.agents.scripted import program
    from mle_env.grading.grader import Grader
    from mle_env.sandbox.base import SandboxLimits

    spec = get_spec(competition)
    grader = Grader(spec)
    (work / "data").symlink_to(grader.paths.public)
    (work / "code").mkdir()
    (work / "submission").mkdir()
    shutil.copy(mlkit.__file__, work / "code" / "mlkit.py")
    info = {"id_column": spec.submission.id_column, "targets": list(grader.targets), "kind": spec.submission.kind,
            "sample": spec.submission.sample_submission, "header": grader.header, "metric": spec.metric.name,
            "lower_is_better": spec.metric.lower_is_better}
    source = ("import json, sys\nsys.path.insert(0, 'code')\nimport mlkit\n"
              f"print(json.dumps(mlkit.profile({info!r})))\n")
    one_thread = {**os.environ, **SandboxLimits(cpus=1).thread_environment()}
    profiled = subprocess.run([sys.executable, "-c", source], cwd=work, capture_output=True, text=True, env=one_thread)
    if profiled.returncode != 0:
        return "profile: " + profiled.stderr[-2000:]
    profile = json.loads(profiled.stdout.strip().splitlines()[-1])
    (work / "code" / "baseline_0.py").write_text(program(profile, default_configs(profile, 0)[0],
                                                          "submission/submission.csv"))
    ran = subprocess.run([sys.executable, "code/baseline_0.py"], cwd=work, capture_output=True, text=True,
                         env=one_thread)
    return None if ran.returncode == 0 else "program: " + ran.stderr[-2000:]


@pytest.fixture(scope="session")
def pool_programs(practice_session_home: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple]:
    """Each pool training competition's baseline program run once, two at a time (one thread each): the
    competition's (work folder, failure or None)."""
    from concurrent.futures import ThreadPoolExecutor

    root = tmp_path_factory.mktemp("pool-programs")

    def run(competition: str) -> tuple[Path, str | None]:
        work = root / competition
        work.mkdir()
        try:
            return work, _run_baselines_program(competition, work)
        except Exception as e:  # noqa: BLE001 - reported by that competition's test
            return work, f"{type(e).__name__}: {e}"

    with pytest.MonkeyPatch.context() as patch, ThreadPoolExecutor(max_workers=2) as pool:
        patch.setenv("MLE_ENV_HOME", str(practice_session_home))
        return dict(zip(POOL_TRAIN, pool.map(run, POOL_TRAIN), strict=True))


@pytest.mark.parametrize("competition", POOL_TRAIN)
@pytest.mark.slow
def test_the_baselines_program_makes_a_valid_submission_on_the_pool(practice_home: Path, competition: str,
                                                                     pool_programs) -> None:
    """The baseline's own program, run on the host against the prepared public files: its submission is
    valid. The held-out partition runs as whole episodes above; these take seconds each instead of an
    episode's minute, and run two at a time."""
    from mle_env.grading.grader import Grader

    work, failure = pool_programs[competition]
    assert failure is None, failure
    assert Grader(get_spec(competition)).validate(work / "submission" / "submission.csv") == "valid"


def _validation_scores(trajectory: str) -> list[str]:
    import re

    text = " ".join(r.get("stdout") or "" for r in read_trajectory(Path(trajectory)) if r["type"] == "step")
    return re.findall(r"VALIDATION_SCORE: (\S+)", text)


@pytest.mark.slow
def test_the_episode_seed_changes_the_baselines_folds_and_model_seeds(make_competition, home: Path,
                                                                      tmp_path: Path) -> None:
    """Issue 11: `--seeds 2` gave two identical baseline episodes. The seed an evaluation gives an episode
    reaches the baseline (as its ``seed`` option, in the worker's own code path), which uses it for its
    validation split and its models' random_state: two seeds differ, the same seed repeats exactly."""
    from conftest import raw_dir

    from mle_env.evaluation import EvalConfig
    from mle_env.evaluation.episodes import run_task
    from mle_env.prepare.runner import prepare

    tiny_prepared = "tiny-comp"
    prepare(tiny_prepared, raw_dir=raw_dir(make_competition(rows=400)))  # enough rows for the trees to split
    config = EvalConfig(agent="baseline", competitions=[tiny_prepared], seeds=2, out=tmp_path / "run",
                        env_options={"sandbox": "local"})
    scores = {}
    for key, seed in (("a", 0), ("b", 1), ("c", 0)):
        record = run_task(config.task(tiny_prepared, seed, 0))
        assert record["status"] == "ok", record["error"]
        scores[key] = _validation_scores(record["trajectory"])
        assert scores[key], record["trajectory"]
    assert scores["a"] == scores["c"]
    assert scores["a"] != scores["b"]


def test_the_baseline_takes_its_seed_from_the_option_then_resets_info() -> None:
    from mle_env.agents.baseline import BaselinePolicy, default_configs

    assert BaselinePolicy().episode_seed({}) == 0
    assert BaselinePolicy().episode_seed({"seed": 7}) == 7
    assert BaselinePolicy(seed=3).episode_seed({"seed": 7}) == 3
    assert all(c["params"]["seed"] == 5 for c in default_configs({"data_type": "tabular"}, 5))
    assert all("seed" not in c["params"] for c in default_configs({"data_type": "text"}))  # aide's drafts unchanged
