"""mle_env.replay and ``mle-env replay``: a deterministic episode replays with no difference; an edited recording
is reported at the step (and the grade) that was edited; exit statuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import mle_env
from mle_env.cli import main
from mle_env.replay import ReplayError, env_options, normalize, replay
from mle_env.trajectory import TrajectoryError, load_episode

INSULTS = "detecting-insults-in-social-commentary"


def actions(sample: str) -> list[Any]:
    """An episode whose every output is reproducible (times of day aside), with some of everything: a failing
    shell command with stderr, python state carried between cells, a time of day, a malformed action, a
    validation and a submission."""
    return [
        {"type": "shell", "code": "echo hello; echo oops >&2; exit 3"},
        {"type": "python", "code": "x = 6 * 7\nprint(x)"},
        {"type": "shell", "code": "date +%H:%M:%S; wc -l < data/train.csv"},
        {"type": "python", "code": "print(x + 1)"},
        {"type": "frobnicate", "code": "?"},
        {"type": "shell", "code": f"cp data/{sample} submission/submission.csv"},
        {"type": "validate"},
        {"type": "submit"},
    ]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory, insults_session_home: Path) -> Path:
    env = mle_env.make(INSULTS, sandbox="local", home=insults_session_home,
                       record_dir=tmp_path_factory.mktemp("recorded"), step_limit=20)
    try:
        _obs, info = env.reset(seed=7)
        for action in actions(info["submission"]["sample"]):
            _obs, _reward, terminated, truncated, info = env.step(action)
        assert terminated and info["grade"]["valid_submission"]
    finally:
        env.close()
    return Path(info["trajectory"])


def edited(source: Path, folder: Path, step: int, field: str, value: Any, score: float | None = None) -> Path:
    """A copy of ``source`` with step ``step``'s ``field`` set to ``value`` (and the grade's score to ``score``)."""
    lines = []
    for line in source.read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "step" and record["step"] == step:
            record[field] = value
        if record["type"] == "footer" and score is not None:
            record["grade"]["score"] = score
        lines.append(json.dumps(record))
    path = folder / "edited.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow
def test_a_deterministic_episode_replays_without_difference(recorded: Path, insults_home: Path) -> None:
    report = replay(recorded)
    assert report.same, report.differences
    assert report.replayed_steps == report.recorded_steps == 8
    assert report.actions[:2] == ["shell", "python"] and report.actions[-1] == "submit"
    assert report.sandbox == "local" and report.seed == 7 and report.notes == []
    steps = load_episode(recorded).steps
    assert steps[0]["exit_code"] == 3 and steps[3]["stdout"].strip() == "43" and steps[4]["kind"] == "invalid"


@pytest.mark.slow
def test_an_edited_recording_is_reported_where_it_was_edited(recorded: Path, insults_home: Path,
                                                              tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = edited(recorded, tmp_path, 2, "stdout", "41\n", score=0.123)
    report = replay(path)
    assert not report.same and report.differing_steps() == [2]
    by_field = {(d.step, d.field): d for d in report.differences}
    assert set(by_field) == {(2, "stdout"), (None, "grade.score")}
    assert by_field[2, "stdout"].recorded == "41\n" and by_field[2, "stdout"].replayed.strip() == "42"
    assert by_field[None, "grade.score"].recorded == 0.123

    assert main(["replay", str(path), "--json"]) == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["same"] is False and [d["step"] for d in printed["differences"]] == [2, None]
    assert main(["replay", str(recorded.parent)]) == 0  # an episode's folder
    assert "reproduced: no differences" in capsys.readouterr().out


@pytest.mark.slow
def test_a_changed_exit_code_and_a_missing_end(recorded: Path, insults_home: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture) -> None:
    path = edited(recorded, tmp_path, 1, "exit_code", 0)
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:4]))  # header and three steps, no footer
    report = replay(path)
    assert [(d.step, d.field) for d in report.differences] == [(1, "exit_code")]
    assert report.replayed_steps == 3 and any("no footer" in note for note in report.notes)
    assert main(["replay", str(path)]) == 1
    out = capsys.readouterr().out
    assert "differs: exit_code" in out and "1 differences (steps 1)" in out


def test_unusable_trajectories_are_errors(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    not_one = tmp_path / "results.jsonl"
    not_one.write_text('{"competition_id": "x", "status": "ok"}\n')
    with pytest.raises(TrajectoryError, match="not a trajectory"):
        replay(not_one)
    assert main(["replay", str(not_one)]) == 2
    assert "not a trajectory" in capsys.readouterr().err
    assert main(["replay", str(tmp_path / "absent.jsonl")]) == 2


def test_options_come_from_the_header(tmp_path: Path) -> None:
    header = {"type": "header", "format": 1, "competition_id": INSULTS, "task": "t", "seed": 3, "sandbox": "docker",
              "image": "img:1", "time_limit": 600.0, "step_limit": 9, "action_timeout": 30.0,
              "limits": {"cpus": 2.0, "memory": 2**30, "gpus": None, "network": False, "max_output": 500,
                         "disk": None}}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(header) + "\n")
    episode = load_episode(path, require_end=False)
    assert env_options(episode) == {"sandbox": "docker", "image": "img:1", "time_limit": 600.0, "step_limit": 9,
                                    "action_timeout": 30.0, "cpus": 2.0, "memory": 2**30, "gpus": None,
                                    "network": False, "disk": None, "max_output": 500}
    assert env_options(episode, sandbox="local")["sandbox"] == "local" and "image" not in env_options(episode, "local")
    header["task"] = "t\n# Dev set (`score_dev`)\n100 labelled rows were held out"
    path.write_text(json.dumps(header) + "\n")
    with pytest.raises(ReplayError, match="--dev-split"):
        env_options(load_episode(path, require_end=False))
    assert env_options(load_episode(path, require_end=False), dev_split=0.1)["dev_split"] == 0.1


def test_normalize_ignores_times_and_budget_notes() -> None:
    assert normalize("at 13:14:27 took 12.5 s\ndone") == normalize("at 09:01:02 took 0.7 s\ndone")
    assert normalize("2026-12-01T13:14:27Z ok") == normalize("2027-01-02T01:02:03Z ok")
    assert normalize("x\nthe budget ran out; the submission is graded") == normalize("x")
    assert normalize("at 13:14:27", exact=True) != normalize("at 09:01:02", exact=True)
    assert normalize("42") != normalize("43")
