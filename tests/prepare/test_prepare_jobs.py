"""`mle-env prepare --jobs N`: competitions prepared side by side in worker processes, with the same results
as one after another, failures reported per competition, and a bad N refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mle_env.cli import main
from mle_env.competition.registry import list_competitions
from mle_env.paths import CompetitionPaths


def _prepare(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict]]:
    code = main(["prepare", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_a_split_prepared_in_parallel_matches_one_at_a_time(home: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    ids = list_competitions("practice")
    code, results = _prepare(capsys, "--split", "practice", "--jobs", "3")
    assert code == 0 and [r["competition_id"] for r in results] == ids
    assert {r["status"] for r in results} == {"prepared"}
    hashes = {cid: json.loads((CompetitionPaths(cid, home).prepared / "manifest.json").read_text())["sha256"]
              for cid in ids}
    for cid in ids:
        CompetitionPaths(cid, home).verify()
    code, again = _prepare(capsys, "--split", "practice", "--jobs", "2")
    assert code == 0 and {r["status"] for r in again} == {"already-prepared"}
    sequential = tmp_path / "one-by-one"  # the same files, prepared one after another
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLE_ENV_HOME", str(sequential))
        code, one = _prepare(capsys, "--split", "practice")
    assert code == 0 and {r["status"] for r in one} == {"prepared"}
    for cid in ids:
        assert json.loads((CompetitionPaths(cid, sequential).prepared / "manifest.json").read_text())["sha256"] == \
            hashes[cid]


def test_a_failure_in_a_worker_is_that_competition_s_line(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """detecting-insults with --source none and no raw files fails alone; the practice ones still prepare."""
    ids = list_competitions("practice")[:2]
    code, results = _prepare(capsys, *ids, "detecting-insults-in-social-commentary", "--source", "none",
                             "--jobs", "2")
    assert code == 1
    by_id = {r["competition_id"]: r for r in results}
    assert by_id["detecting-insults-in-social-commentary"]["status"] == "failed"
    assert "raw" in by_id["detecting-insults-in-social-commentary"]["message"]


def test_jobs_below_one_is_refused(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prepare", "--split", "practice", "--jobs", "0"]) == 2
    err = capsys.readouterr().err
    assert err == "error: --jobs must be 1 or more, not 0\n"
