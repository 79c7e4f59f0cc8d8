"""What a newcomer meets in the first hour of the CLI: output readable at 80 columns and in pipes, help for
every argument, scores and places in words, a run folder given to `show`, one message for everything the
Kaggle source lacks, and nothing left behind by a failed prepare."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mle_env.cli import build_parser, main

RUN_IDS = ("practice-house-prices", "practice-mnist-digits", "aerial-cactus-identification")


def cli(*args: str, columns: int = 80, home: Path | None = None, stdout: int | None = None
        ) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": str(columns)}
    if home is not None:
        env["MLE_ENV_HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "mle_env.cli", *args], env=env, text=True,
                          stdout=subprocess.PIPE if stdout is None else stdout, stderr=subprocess.PIPE)


def write_run(out: Path, ids: tuple[str, ...] = RUN_IDS) -> Path:
    """A run folder as `mle-env eval` leaves it: 3 seeds of each competition, one agent error, no retries."""
    out.mkdir(parents=True)
    records = []
    for n, cid in enumerate(ids):
        for seed in range(3):
            grade = {"score": 0.13563999999999998 + seed / 100, "medal_tier": 3 if n == 0 else seed % 2,
                     "medal": "gold" if n == 0 else ("bronze" if seed % 2 else "none"),
                     "above_median": True, "is_lower_better": False}
            records.append({"competition_id": cid, "seed": seed, "attempt": 0, "agent": "baseline",
                            "status": "agent_error" if (n, seed) == (2, 1) else "ok", "end": "submitted",
                            "split": "practice" if cid.startswith("practice") else "lite", "grade": grade,
                            "trajectory": str(out / "trajectories" / f"{cid}-{seed}" / "trajectory.jsonl")})
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (out / "config.json").write_text(json.dumps({"agent": "baseline", "competitions": list(ids), "seeds": 3,
                                                 "max_infra_retries": 2}))
    return out


# --- reading output ---------------------------------------------------------------------------------
def test_list_at_80_columns_shows_every_value_whole(tmp_path: Path) -> None:
    result = cli("list", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "…" not in result.stdout
    ids = [r["id"] for r in json.loads(cli("list", "--json", home=tmp_path).stdout)]
    lines = result.stdout.splitlines()
    assert all(cid in lines for cid in ids)  # each id whole, on its own line
    assert "auc ↑" in result.stdout and "prepared no" in result.stdout


def test_report_at_80_columns_keeps_ids_and_scores_whole(tmp_path: Path) -> None:
    for ids in (RUN_IDS, ("house-prices", "digits", "cactus")):  # one record per line, and a table
        run = write_run(tmp_path / ids[0], ids)
        result = cli("report", str(run))
        assert result.returncode == 0, result.stderr
        text = result.stdout
        tables = [line for line in text.splitlines() if line.startswith(" ")]  # lines of text are not wrapped
        assert "…" not in text and tables and all(len(line) <= 80 for line in tables), text
        assert all(cid in text for cid in ids)
        assert "0.15564" in text and "0.155639" not in text  # the best score, to 5 decimals
        assert "silver or better" in text and "after 2 retries" not in text  # nothing was retried
        assert "1 agent" in text  # (its column may wrap "error" under it)


def test_report_without_matplotlib_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` raise
    run = write_run(tmp_path / "run")
    assert main(["report", str(run)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "pip install 'mle-env[plots]'" in out and "pass_at_k.png" not in out
    assert not (run / "pass_at_k.png").exists()
    assert json.loads((run / "summary.json").read_text())["plot"]["path"] is None


def test_text_lines_into_a_pipe_are_not_wrapped(tmp_path: Path) -> None:
    result = cli("report", str(write_run(tmp_path / "run")), columns=40)
    headline = result.stdout.splitlines()[0]
    assert headline.startswith("baseline: 3 competitions") and headline.endswith("0 infra_error"), headline


def test_headline_names_retries_only_when_an_episode_still_failed() -> None:
    from mle_env.evaluation.report import headline

    episodes = {"ok": 2, "sandbox_broken": 0, "agent_error": 0, "infra_error": 0, "not_run": 0, "seeds": 1,
                "competitions": 2, "scheduled": 2, "counted_as_no_medal": 0, "max_infra_retries": 2}
    assert "retries" not in headline({"config": {}, "episodes": episodes})
    failed = {**episodes, "ok": 1, "infra_error": 1, "counted_as_no_medal": 1}
    assert "1 infra_error after 2 retries" in headline({"config": {}, "episodes": failed})


def test_scores_and_places_in_words() -> None:
    from mle_env.formatting import format_score, rank_text, thresholds_text

    assert format_score(0.13563999999999998) == "0.13564" and format_score(None) == ""
    assert rank_text(120, 1 / 120, 120) == "place 120: beats 1 of the 120 teams (0.8%), ties 0, behind 119"
    assert rank_text(3, 0.5, 10) == "place 3: beats 5 of the 10 teams (50.0%), ties 3, behind 2"
    grade = {"gold_threshold": 0.9, "silver_threshold": 0.8, "bronze_threshold": 0.7,
             "median_threshold": 0.13563999999999998, "leaderboard_teams": 120}
    assert thresholds_text(grade) == "gold 0.90000  silver 0.80000  bronze 0.70000  median 0.13564  (120 teams)"


def test_prepare_line_names_the_outcome_once() -> None:
    from mle_env.cli.competitions import _prepare_line

    line = _prepare_line({"competition_id": "insults", "status": "prepared", "message": "prepared insults in 0.5 s"})
    assert line.plain == "prepared insults in 0.5 s"
    failed = _prepare_line({"competition_id": "x", "status": "failed", "message": "[red]no[/red]"})
    assert failed.plain == "x: failed  [red]no[/red]"  # never read as markup


# --- commands that mislead or crash ----------------------------------------------------------------
def test_no_arguments_prints_the_help() -> None:
    result = cli()
    assert result.returncode == 0 and "usage: mle-env" in result.stdout and "COMMAND" in result.stdout
    assert "error" not in result.stderr


def _arguments(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _arguments(sub, (*path, name))
        elif not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            yield path, action


def test_every_argument_has_help() -> None:
    missing = [f"{' '.join(path)} {action.option_strings or action.dest}" for path, action in _arguments(build_parser())
               if not action.help]
    assert missing == []


def test_a_command_group_alone_prints_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["image"]) == 0
    assert "build" in capsys.readouterr().out


def test_grade_usage_and_options_name_the_leaderboard_alike(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["grade", "--help"])
    text = capsys.readouterr().out
    assert "--leaderboard CSV" in text and "LEADERBOARD" not in text


def test_play_help_lists_the_prompt_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["play", "--help"])
    text = capsys.readouterr().out
    assert all(command in text for command in (":py", ":validate", ":submit", ":help"))


def test_show_of_a_run_folder_lists_its_episodes(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run")
    result = cli("show", str(run), columns=200)
    assert result.returncode == 0, result.stderr
    assert "no header" not in result.stdout and "no end yet" not in result.stdout
    assert "run folder of `mle-env eval`" in result.stdout and f"mle-env report {run}" in result.stdout
    assert "practice-house-prices seed 0 (attempt 0): ok gold 0.13564" in result.stdout
    assert str(run / "trajectories" / "practice-house-prices-0" / "trajectory.jsonl") in result.stdout


def test_show_of_a_file_that_is_no_trajectory_is_an_error(tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text('{"status": "ok"}\n')
    result = cli("show", str(other))
    assert result.returncode == 2 and "holds no trajectory records" in result.stderr


def into_closed_pipe(*args: str, home: Path) -> subprocess.CompletedProcess:
    """`mle-env ARGS | head -1`, with the reader gone before the first line."""
    read, write = os.pipe()
    os.close(read)
    try:
        return cli(*args, home=home, stdout=write)
    finally:
        os.close(write)


@pytest.mark.parametrize("args", [("list",), ("list", "--json"), ("--help",)])
def test_a_closed_pipe_ends_quietly(args: tuple[str, ...], tmp_path: Path) -> None:
    result = into_closed_pipe(*args, home=tmp_path)
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr, result.stderr
    assert result.returncode in (0, 1)


def test_export_into_a_closed_pipe_ends_quietly(recorded: tuple[Path, str], home: Path) -> None:
    record, _ = recorded
    whole = cli("export", str(record), home=home)
    assert whole.returncode == 0 and len(whole.stdout.splitlines()) == 1, whole.stderr  # one episode to write
    result = into_closed_pipe("export", str(record), home=home)
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr, result.stderr
    assert result.returncode in (0, 1)


@pytest.fixture
def recorded(tiny_prepared: str, home: Path, tmp_path: Path, bwrap_ready: None, monkeypatch: pytest.MonkeyPatch,
             capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    """A finished baseline episode of `mle-env run` with the default sandbox (auto), where no Docker engine
    answers: its record folder and what the command printed."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
    record = tmp_path / "record"
    assert main(["run", tiny_prepared, "--agent", "baseline", "--no-live", "--record-dir", str(record)]) == 0
    return record, capsys.readouterr().out


def test_run_names_the_sandbox_that_auto_chose(recorded: tuple[Path, str]) -> None:
    _, out = recorded
    [line] = [line for line in out.splitlines() if line.startswith("sandbox:")]
    assert line.startswith("sandbox: local (no Docker engine answers"), line
    assert "isolated local sandbox (bubblewrap)" in " ".join(out.split())


def test_eval_into_another_agents_out_is_refused_first(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run")  # the baseline's, with finished episodes of practice-house-prices
    before = (run / "results.jsonl").read_text()
    result = cli("eval", "--agent", "react", "--competitions", "practice-house-prices", "--seeds", "3",
                 "--sandbox", "local", "--out", str(run), home=tmp_path / "home")
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "agent='baseline'" in output and "use another --out folder" in output, output
    assert "already finished" not in output and "scheduled" not in output, output
    assert (run / "results.jsonl").read_text() == before


# --- Kaggle and the cache ---------------------------------------------------------------------------
def test_kaggle_says_everything_it_lacks_at_once_and_leaves_nothing(
        make_competition: Callable[..., Path], home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    make_competition()
    for var in ("KAGGLE_USERNAME", "KAGGLE_KEY", "KAGGLE_API_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KAGGLE_CONFIG_DIR", str(tmp_path / "no-kaggle"))
    monkeypatch.setitem(sys.modules, "kaggle", None)  # the thin fake: the kaggle package is not installed
    assert main(["prepare", "tiny", "--source", "kaggle"]) == 1
    failed = [line for line in capsys.readouterr().out.splitlines() if "failed" in line]
    assert len(failed) == 1, failed  # one line
    for text in ("pip install 'mle-env[kaggle]'", "KAGGLE_USERNAME and KAGGLE_KEY",
                 "https://www.kaggle.com/competitions/tiny-comp/rules", "--raw-dir FOLDER"):
        assert text in failed[0], text
    assert not (home / "tiny-comp").exists()  # no folder holding only .lock


FAKE_KAGGLE = """
class ApiException(Exception):
    def __init__(self, status, reason):
        super().__init__(f"({status})\\nReason: {reason}")
        self.status, self.reason = status, reason


class KaggleApi:
    def authenticate(self):
        pass

    def competition_download_files(self, competition, path=None, quiet=False):
        raise ApiException(403, "Forbidden")
"""


def test_kaggle_refusing_the_rules_is_one_message_and_leaves_nothing(tmp_path: Path) -> None:
    """The thin fake stands in for Kaggle's servers: the package imports, the credentials are set, and the
    download answers 403 as Kaggle does until the account accepts the competition's rules."""
    package = tmp_path / "site" / "kaggle"
    (package / "api").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "api" / "__init__.py").write_text("")
    (package / "api" / "kaggle_api_extended.py").write_text(FAKE_KAGGLE)
    home = tmp_path / "home"
    env = {**os.environ, "COLUMNS": "80", "MLE_ENV_HOME": str(home), "KAGGLE_USERNAME": "someone",
           "KAGGLE_KEY": "0123abcd", "KAGGLE_CONFIG_DIR": str(tmp_path / "no-kaggle"),
           "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-m", "mle_env.cli", "prepare", "aerial-cactus"], env=env, text=True,
                            capture_output=True)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    failed = [line for line in output.splitlines() if "failed" in line]
    assert len(failed) == 1, output  # one message
    assert "https://www.kaggle.com/competitions/aerial-cactus-identification/rules" in failed[0]
    assert "--raw-dir FOLDER" in failed[0]
    assert "not installed" not in failed[0] and "no Kaggle credentials" not in failed[0]  # those were fine
    assert not (home / "aerial-cactus-identification").exists()  # no folder, no .lock, no downloads/


def test_a_prepare_after_a_failed_one_still_works(make_competition: Callable[..., Path], home: Path,
                                                  monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from conftest import raw_dir

    from mle_env.errors import PrepareError
    from mle_env.prepare.runner import prepare

    folder = make_competition()
    monkeypatch.setenv("KAGGLE_CONFIG_DIR", str(tmp_path / "no-kaggle"))
    for var in ("KAGGLE_USERNAME", "KAGGLE_KEY", "KAGGLE_API_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(PrepareError):
        prepare("tiny", source="kaggle")
    assert not (home / "tiny-comp").exists()
    assert prepare("tiny", raw_dir=raw_dir(folder)).status == "prepared"
    assert (home / "tiny-comp" / ".lock").is_file() and (home / "tiny-comp" / "prepared").is_dir()


# --- export -----------------------------------------------------------------------------------------
def test_export_names_the_agent_of_a_run_and_leaves_out_interrupted_episodes(
        tiny_prepared: str, home: Path, tmp_path: Path, bwrap_ready: None) -> None:
    from mle_env.export import export

    record = tmp_path / "record"
    assert main(["run", tiny_prepared, "--agent", "baseline", "--sandbox", "local", "--no-live",
                 "--record-dir", str(record)]) == 0
    trajectory = next(record.rglob("trajectory.jsonl"))
    lines = trajectory.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["options"] == {"agent": "baseline"}  # what `mle-env run` records for an export
    header["options"] = {"agent": "human"}  # as `mle-env play` records it
    footer = json.loads(lines[-1])
    footer["status"] = "closed"  # play interrupted
    played = tmp_path / "played" / "trajectory.jsonl"
    played.parent.mkdir()
    played.write_text("\n".join([json.dumps(header), *lines[1:-1], json.dumps(footer)]) + "\n")
    assert export(tmp_path / "played").written == 0  # interrupted: only when asked for
    [example] = export(tmp_path / "played", status="closed").examples
    assert example["metadata"]["agent"] == "human"
    assert export(record).examples[0]["metadata"]["agent"] == "baseline"
