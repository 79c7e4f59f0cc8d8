"""`mle-env list | info | prepare | grade`, run as a user would (a real subprocess for the entry point)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from conftest import raw_dir

from mle_env.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_entry_point_is_installed() -> None:
    out = subprocess.run(["mle-env", "--version"], capture_output=True, text=True, check=True).stdout
    assert out.startswith("mle-env ")


def test_list_json_and_table(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    code, out, _ = run(capsys, "list", "--json")
    rows = {r["id"]: r for r in json.loads(out)}
    assert code == 0
    assert rows["detecting-insults-in-social-commentary"]["split"] == "lite"
    assert rows["detecting-insults-in-social-commentary"]["prepared"] is False
    code, out, _ = run(capsys, "list", "--split", "practice")
    assert code == 0 and "practice-house-prices" in out and "detecting-insults" not in out


def test_info(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    code, out, _ = run(capsys, "info", "insults", "--json")
    info = json.loads(out)
    assert info["id"] == "detecting-insults-in-social-commentary"
    assert info["gym_id"] == "mle_env/detecting-insults-in-social-commentary-v0"
    assert {k["kind"] for k in info["known_issues"]} >= {"source"}
    code, out, _ = run(capsys, "info", "house-prices")
    assert code == 0 and "rmsle" in out


def test_unknown_competition_is_one_line_with_a_suggestion(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    code, _, err = run(capsys, "info", "insultz")
    assert code == 2
    assert err.strip().count("\n") == 0 and "Did you mean: 'insults'" in err


def test_prepare_and_grade(capsys: pytest.CaptureFixture[str], make_competition: Callable[..., Path], home: Path,
                           tmp_path: Path) -> None:
    folder = make_competition()
    code, out, _ = run(capsys, "prepare", "tiny", "--raw-dir", str(raw_dir(folder)), "--json")
    assert code == 0 and json.loads(out)[0]["status"] == "prepared"
    answers = pd.read_csv(home / "tiny-comp" / "prepared" / "private" / "test.csv")
    submission = tmp_path / "s.csv"
    answers.assign(target=answers["target"].astype(float)).to_csv(submission, index=False)
    code, out, _ = run(capsys, "grade", "tiny", str(submission), "--json")
    report = json.loads(out)
    assert code == 0 and report["score"] == 1.0 and report["gold_medal"] and report["rank"] == 1
    code, out, _ = run(capsys, "grade", "tiny", str(submission))
    assert "GOLD" in out and "1.00000" in out
    bad = tmp_path / "bad.csv"
    bad.write_text("id,target\n")
    code, out, _ = run(capsys, "grade", "tiny", str(bad))
    assert code == 1 and "invalid" in out and "0 rows" in out


def test_grade_exit_codes(capsys: pytest.CaptureFixture[str], make_competition: Callable[..., Path], home: Path,
                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """0 scored, 1 invalid or missing, 2 usage or grader error; reasons stay short even for a 10 MB cell."""
    from mle_env.grading.metrics import registry

    monkeypatch.setattr(registry, "METRICS", dict(registry.METRICS))  # the crashing metric below is not kept
    folder = make_competition()
    run(capsys, "prepare", "tiny", "--raw-dir", str(raw_dir(folder)))
    answers = pd.read_csv(home / "tiny-comp" / "prepared" / "private" / "test.csv")
    good = tmp_path / "good.csv"
    answers.assign(target=0.5).to_csv(good, index=False)
    assert run(capsys, "grade", "tiny", str(good), "--json")[0] == 0
    code, out, _ = run(capsys, "grade", "tiny", str(tmp_path / "absent.csv"), "--json")
    assert code == 1 and json.loads(out)["status"] == "missing"
    huge = tmp_path / "huge.csv"
    huge.write_text("id,target\n" + f"{answers['id'][0]},{'x' * 10_000_000}\n"
                    + "".join(f"{i},0.5\n" for i in answers["id"][1:]))
    code, out, _ = run(capsys, "grade", "tiny", str(huge), "--json")
    report = json.loads(out)
    assert code == 1 and report["status"] == "invalid"
    assert "must be numeric" in report["invalid_reason"] and "10,000,000 characters" in report["invalid_reason"]
    assert len(report["invalid_reason"]) <= 300
    code, _, err = run(capsys, "grade", "no-such-competition", str(good))
    assert code == 2 and err.startswith("error: ")
    with pytest.raises(SystemExit) as exited:  # argparse: a missing argument
        main(["grade", "tiny"])
    assert exited.value.code == 2
    capsys.readouterr()
    script = '''
        from mle_env.grading.metrics import register_metric

        @register_metric("explodes-cli", lower_is_better=False)
        def explodes(y_true, y_pred):
            """Always fails."""
            raise ZeroDivisionError("boom")
    '''
    boom = make_competition("boom-comp", aliases=("boom",), metric="explodes-cli", metric_script=script)
    run(capsys, "prepare", "boom", "--raw-dir", str(raw_dir(boom)))
    code, out, _ = run(capsys, "grade", "boom", str(good), "--json")
    assert code == 2 and json.loads(out)["status"] == "grader_error"


@pytest.mark.parametrize(("argv", "phrase"), [
    (["--time-limit", "0"], "time_limit must be a number of seconds in (0,"),
    (["--time-limit", "nan"], "time_limit must be a number of seconds"),
    (["--step-limit", "-3"], "step_limit must be a whole number of steps from 1"),
    (["--memory", "lots"], "memory must be a size in bytes"),
    (["--disk", "0"], "disk must be a size in bytes"),
    (["--cpus", "-1"], "cpus must be a number of cores"),
    (["--gpus", "1", "--sandbox", "unisolated"], "cannot be used with sandbox='unisolated'"),
    (["--artifacts-max-bytes", "-5"], "artifacts_max_bytes must be a size in bytes"),
])
def test_run_rejects_bad_env_options_in_one_line(capsys: pytest.CaptureFixture[str], home: Path, argv: list[str],
                                                 phrase: str) -> None:
    code, out, err = run(capsys, "run", "house-prices", "--agent", "baseline", *argv)
    assert code == 2 and err.startswith("error: ") and phrase in err
    assert err.strip().count("\n") == 0  # one line, and it came before anything ran (nothing is prepared here)


def test_env_options_from_the_command_line_reach_make_as_given() -> None:
    from mle_env.cli import build_parser
    from mle_env.cli.episodes import env_options

    args = build_parser().parse_args(["run", "house-prices", "--artifacts-max-bytes", "200m", "--image", "mine:1",
                                      "--disk", "20g", "--dev-split", "0.2"])
    assert env_options(args) == {"sandbox": "auto", "action_timeout": 1800.0, "memory": "4g", "disk": "20g",
                                 "reward": "medal", "artifacts_max_bytes": "200m", "image": "mine:1",
                                 "dev_split": 0.2}


def test_prepare_split_reports_each_failure_and_goes_on(
    capsys: pytest.CaptureFixture[str], make_competition: Callable[..., Path], home: Path,
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    make_competition("first-comp", aliases=("first",))
    make_competition("second-comp", aliases=("second",))
    for var in ("KAGGLE_USERNAME", "KAGGLE_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KAGGLE_CONFIG_DIR", str(tmp_path / "none"))
    code, out, _ = run(capsys, "prepare", "first", "second", "--json")
    results = json.loads(out)
    assert code == 1
    assert [r["status"] for r in results] == ["failed", "failed"]
    assert all("KAGGLE_USERNAME" in r["message"] for r in results)


def test_prepare_dry_run(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    code, out, _ = run(capsys, "prepare", "--split", "lite", "--dry-run", "--json")
    results = json.loads(out)
    assert code == 0 and all(r["status"] == "dry-run" for r in results)
    assert not home.exists()


def test_grade_a_jsonl_of_submissions_like_mlebench(
    capsys: pytest.CaptureFixture[str], make_competition: Callable[..., Path], home: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 11: `mle-env grade` takes MLE-bench's JSONL of (competition_id, submission_path) pairs."""
    folder = make_competition()
    run(capsys, "prepare", "tiny", "--raw-dir", str(raw_dir(folder)))
    answers = pd.read_csv(home / "tiny-comp" / "prepared" / "private" / "test.csv")
    subs = tmp_path / "subs"
    subs.mkdir()
    answers.assign(target=answers["target"].astype(float)).to_csv(subs / "perfect.csv", index=False)
    answers.assign(target=0.5).to_csv(subs / "flat.csv", index=False)
    (subs / "bad.csv").write_text("id,target\n")

    def write(name: str, *entries: dict | str) -> Path:
        path = subs / name
        path.write_text("\n".join(e if isinstance(e, str) else json.dumps(e) for e in entries) + "\n")
        return path

    monkeypatch.chdir(tmp_path)  # relative paths: from the current folder, else from the JSONL's folder
    good = write("good.jsonl", {"competition_id": "tiny-comp", "submission_path": str(subs / "perfect.csv")},
                 "", {"competition_id": "tiny", "submission_path": "flat.csv"})
    report = tmp_path / "out" / "report.jsonl"
    code, out, _ = run(capsys, "grade", str(good), "--output", str(report))
    assert code == 0 and "grade: 2 submissions" in out and "GOLD" in out and "2 scored" in out
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    assert [r["competition_id"] for r in lines] == ["tiny-comp", "tiny-comp"]
    assert lines[0]["score"] == 1.0 and lines[0]["gold_medal"] is True and lines[1]["score"] == 0.5
    assert {"any_medal", "above_median", "submission_exists", "valid_submission", "is_lower_better"} <= set(lines[0])

    mixed = write("mixed.jsonl", {"competition_id": "tiny", "submission_path": "perfect.csv"},
                  {"competition_id": "tiny", "submission_path": "bad.csv"},
                  {"competition_id": "tiny", "submission_path": "absent.csv"})
    code, out, _ = run(capsys, "grade", "--submissions", str(mixed), "--json")
    assert code == 1 and [r["status"] for r in json.loads(out)] == ["scored", "invalid", "missing"]

    unknown = write("unknown.jsonl", {"competition_id": "tiny", "submission_path": "perfect.csv"},
                    {"competition_id": "no-such-comp", "submission_path": "perfect.csv"})
    code, out, _ = run(capsys, "grade", str(unknown), "--output", str(report))
    assert code == 2 and "no-such-comp" in out and "1 grader_error" in out
    written = [json.loads(line) for line in report.read_text().splitlines()]
    assert [r["status"] for r in written] == ["scored", "grader_error"]
    assert "Unknown competition 'no-such-comp'" in written[1]["grader_error"]

    for entries, phrase in [
        (({"competition_id": "tiny", "submission_path": "perfect.csv"}, "{not json"), "line 2: not valid JSON"),
        (('["tiny", "perfect.csv"]',), "line 1: expected a JSON object"),
        (({"competition_id": "tiny"},), "line 1: 'submission_path' is missing"),
        (({"competition": "tiny", "submission_path": "perfect.csv"},), "line 1: 'competition_id' is missing"),
    ]:
        code, out, err = run(capsys, "grade", str(write("broken.jsonl", *entries)))
        assert code == 2 and err.startswith("error: ") and phrase in err and err.strip().count("\n") == 0, err
        assert out == ""  # nothing graded before the whole file was read
    code, _, err = run(capsys, "grade", str(subs / "absent.jsonl"))
    assert code == 2 and "cannot read" in err
    for argv in (["grade", str(good), "--leaderboard", "x.csv"], ["grade", "tiny", "s.csv", "--output", "r.jsonl"],
                 ["grade", "tiny", "--submissions", str(good)]):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2
    capsys.readouterr()
