"""MLE-bench's leaderboard columns against numbers computed by hand on small synthetic runs, its complete-seed
and --pad-missing rules, and the grading reports written in its layout, read back as its aggregation reads
them."""

from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from mle_env.cli import main
from mle_env.competition.mlebench_ids import COLUMNS, HIGH, LOW, MEDIUM
from mle_env.evaluation.mlebench_board import (
    REPORT_FIELDS,
    board,
    column,
    reports_by_competition,
    write_mlebench_reports,
)

TIERS = {0: None, 1: "bronze", 2: "silver", 3: "gold"}


def record(cid: str, seed: int, medal: int = 0, status: str = "ok", valid: bool = True) -> dict[str, Any]:
    """One results.jsonl record; ``medal``: 0 none, 1 bronze, 2 silver, 3 gold."""
    grade = {"competition_id": cid, "score": 0.5, "gold_threshold": 0.9, "silver_threshold": 0.8,
             "bronze_threshold": 0.7, "median_threshold": 0.6, "any_medal": medal > 0,
             "gold_medal": medal == 3, "silver_medal": medal == 2, "bronze_medal": medal == 1,
             "above_median": medal > 0, "submission_exists": True, "valid_submission": valid,
             "is_lower_better": False, "created_at": "2026-12-02T00:00:00+00:00",
             "submission_path": f"/runs/{cid}/{seed}/submission.csv", "medal": TIERS[medal] or "none",
             "medal_tier": medal, "rank": 3}
    return {"competition_id": cid, "seed": seed, "status": status, "split": "lite", "end": "submitted",
            "grade": grade if status != "infra_error" else None}


def test_the_lists_are_mlebench_s_75_and_hold_every_registered_one(tmp_path: Path) -> None:
    assert (len(LOW), len(MEDIUM), len(HIGH), len(COLUMNS["all"])) == (22, 38, 15, 75)
    assert len(set(COLUMNS["all"])) == 75
    shared = Path(__file__).resolve().parents[3] / "shared" / "facts" / "competitions.tsv"
    rows = list(csv.DictReader(shared.open(), delimiter="\t"))
    assert {s: sorted(r["id"] for r in rows if r["split"] == s) for s in ("low", "medium", "high")} == \
        {"low": sorted(LOW), "medium": sorted(MEDIUM), "high": sorted(HIGH)}
    from mle_env.competition.registry import list_competitions

    for split, ids in (("lite", LOW), ("medium", MEDIUM), ("high", HIGH)):
        assert set(list_competitions(split)) <= set(ids), split


def test_columns_against_hand_computed_numbers() -> None:
    """Low, 2 seeds: gold on 11 of 22, then bronze on 5 of 22: 50 % and 22.727 %: mean 36.364, SEM
    |50 - 22.727| / 2 = 13.636. Medium and High have no report: no number unless padded. All, padded: 11 and
    5 of 75: 14.667 % and 6.667 %, mean 10.667, SEM 4.0."""
    records = [record(cid, 0, 3 if i < 11 else 0) for i, cid in enumerate(LOW)]
    records += [record(cid, 1, 1 if i < 5 else 0) for i, cid in enumerate(LOW)]
    cols = board(records)
    low = cols["low"]
    assert low["seeds"] == 2 and low["missing"] == []
    assert [s["any_medal"] for s in low["per_seed"]] == pytest.approx([50.0, 100 * 5 / 22])
    assert low["metrics"]["any_medal"]["mean"] == pytest.approx(36.363636, abs=1e-5)
    assert low["metrics"]["any_medal"]["sem"] == pytest.approx(13.636364, abs=1e-5)
    assert low["metrics"]["any_medal"]["ci_lower"] == pytest.approx(36.363636 - 1.96 * 13.636364, abs=1e-4)
    assert low["metrics"]["gold_medal"]["mean"] == pytest.approx(25.0)  # 50 % then 0 %
    assert low["metrics"]["bronze_medal"]["mean"] == pytest.approx(100 * 5 / 22 / 2)
    assert low["metrics"]["valid_submissions"]["mean"] == 100.0
    for name in ("medium", "high", "all"):
        assert cols[name]["seeds"] == 0 and "error" in cols[name]
    assert cols["all"]["error"].startswith("53 of its 75 competitions have no report")
    assert cols["medium"]["error"] == "no competition has a report"
    padded = board(records, pad_missing=True)
    assert "error" in padded["medium"]  # MLE-bench: no report anywhere, no seed to form
    every = padded["all"]
    assert every["seeds"] == 2 and len(every["missing"]) == 53
    assert every["metrics"]["any_medal"]["mean"] == pytest.approx(100 * 8 / 75)
    assert every["metrics"]["any_medal"]["sem"] == pytest.approx(4.0)
    assert board(records, num_seeds=1)["low"]["metrics"]["any_medal"] == \
        {"mean": 50.0, "sem": 0.0, "ci_lower": 50.0, "ci_upper": 50.0}  # one seed: SEM 0.0, as MLE-bench's


def test_complete_seeds_by_default_and_padding_as_the_option() -> None:
    """a: seeds 0, 1, 2 (medals on 0 and 2); b: seeds 0 and 2 (seed 1 never ran; medal on 2); c: an
    infrastructure failure on seed 0 (a report without a submission), then seed 1 with a medal.
    Complete seeds: min(3, 2, 2) = 2; b's second report (seed 2) is its second seed's, as MLE-bench aligns by
    order. Seed 1: a yes, b no, c no; seed 2: a no, b yes, c yes -> 33.3 % and 66.7 %. Padded: 3 seeds, the
    third has a's seed 2 only -> 33.3 %."""
    records = [record("a", 0, 3), record("a", 1, 0), record("a", 2, 2), record("b", 0, 0), record("b", 2, 1),
               record("c", 0, 3, status="infra_error"), record("c", 1, 3)]
    reports = reports_by_competition(records)
    assert [r["seed"] for r in reports["b"]] == [0, 2] and reports["c"][0]["submission_exists"] is False
    plain = column(reports, ["a", "b", "c"])
    assert plain["seeds"] == 2
    assert [s["any_medal"] for s in plain["per_seed"]] == pytest.approx([100 / 3, 200 / 3])
    assert [s["submission_exists"] for s in plain["per_seed"]] == pytest.approx([200 / 3, 100.0])
    padded = column(reports, ["a", "b", "c"], pad_missing=True)
    assert padded["seeds"] == 3 and padded["per_seed"][2]["any_medal"] == pytest.approx(100 / 3)
    assert padded["per_seed"][2]["submission_exists"] == pytest.approx(100 / 3)
    assert column(reports, ["a", "b", "c", "d"])["missing"] == ["d"]
    assert "error" in column(reports, ["a", "d"]) and column(reports, ["a", "d"], pad_missing=True)["seeds"] == 3


def _as_mlebench_aggregates(paths: list[Path], ids: list[str], pad_missing: bool) -> list[float]:
    """An independent reading of the written reports the way MLE-bench's aggregation reads them: sorted
    report paths, each report's competitions sorted by id, seed i = the i-th report of each competition."""
    by_cid: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(paths):
        for report in sorted(json.loads(path.read_text())["competition_reports"], key=lambda r: r["competition_id"]):
            by_cid.setdefault(report["competition_id"], []).append(report)
    counts = [len(by_cid.get(cid, [])) for cid in ids]
    seeds = max(counts) if pad_missing else min(counts)
    out = []
    for i in range(seeds):
        medals = sum(1 for cid in ids if i < len(by_cid.get(cid, [])) and (
            by_cid[cid][i]["gold_medal"] or by_cid[cid][i]["silver_medal"] or by_cid[cid][i]["bronze_medal"]))
        out.append(medals / len(ids) * 100)
    return out


def test_reports_in_mlebench_s_layout_read_back_to_the_same_numbers(tmp_path: Path) -> None:
    records = [record("a", 0, 3), record("a", 1, 0), record("a", 2, 2), record("b", 0, 0), record("b", 2, 1),
               record("c", 0, 3, status="infra_error"), record("c", 1, 3, valid=False)]
    paths = write_mlebench_reports(records, tmp_path, "my-agent")
    assert len(paths) == 3 and all(p.parent.parent == tmp_path / "runs" for p in paths)
    assert [p.parent.name.rsplit("_", 1)[1] for p in paths] == ["seed0000", "seed0001", "seed0002"]
    # <timestamp>_grading_report.json inside <timestamp>_run-group_<experiment>_seed<N>
    assert all(p.name.endswith("_grading_report.json")
               and p.parent.name.startswith(p.name.removesuffix("_grading_report.json") + "_run-group_my-agent_")
               for p in paths)
    with open(tmp_path / "runs" / "run_group_experiments.csv", newline="") as f:
        assert list(csv.reader(f)) == [["experiment_id", "run_group"]] + [["my-agent", p.parent.name] for p in paths]
    first = json.loads(paths[0].read_text())
    assert [r["competition_id"] for r in first["competition_reports"]] == ["a", "b", "c"]
    assert all(tuple(r) == REPORT_FIELDS for r in first["competition_reports"])
    assert (first["total_runs"], first["total_runs_with_submissions"], first["total_medals"],
            first["total_gold_medals"]) == (3, 2, 1, 1)  # c's seed 0: no submission, no medal
    second = json.loads(paths[1].read_text())
    assert second["total_valid_submissions"] == 1 and second["total_gold_medals"] == 1  # c: gold, not valid
    ids = ["a", "b", "c"]
    for pad in (False, True):
        ours = [s["any_medal"] for s in column(reports_by_competition(records), ids, pad)["per_seed"]]
        assert ours == pytest.approx(_as_mlebench_aggregates(paths, ids, pad))
    assert statistics.fmean(_as_mlebench_aggregates(paths, ids, False)) == pytest.approx(50.0)


def _run_dir(tmp_path: Path, records: list[dict[str, Any]], agent: str = "aide") -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (run / "config.json").write_text(json.dumps({"agent": agent, "competitions": sorted({r["competition_id"]
                                                                                         for r in records}),
                                                 "seeds": 2}))
    return run


def test_report_prints_the_columns_and_writes_the_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = [record(cid, seed, 3 if (i + seed) % 2 == 0 else 0) for i, cid in enumerate(LOW) for seed in (0, 1)]
    run = _run_dir(tmp_path, records, agent="agents/mine.py:Policy")
    assert main(["report", str(run), "--mlebench-format", str(tmp_path / "mb")]) == 0
    out, err = capsys.readouterr()
    assert "MLE-bench's leaderboard" in out and "Low (Lite)" in out and "50.0 ± 0.0" in out
    assert "no report for Medium: 38 of 38" in " ".join(out.split()) and "--pad-missing" in out
    assert "wrote 2 grading report(s)" in err
    groups = (tmp_path / "mb" / "runs" / "run_group_experiments.csv").read_text().splitlines()
    assert groups[1].startswith("agents-mine.py-Policy,")  # the agent's name made a safe run-group name
    summary = json.loads((run / "summary.json").read_text())
    assert summary["mlebench"]["columns"]["low"]["metrics"]["any_medal"]["mean"] == 50.0
    assert main(["report", str(run), "--pad-missing", "--json"]) == 0
    padded = json.loads(capsys.readouterr()[0])["mlebench"]
    assert padded["pad_missing"] is True and padded["columns"]["all"]["metrics"]["any_medal"]["mean"] == \
        pytest.approx(100 * 11 / 75)
    assert main(["report", str(run), "--mlebench-format", str(tmp_path / "x"), "--experiment-id", "../up"]) == 2
    err = capsys.readouterr()[1]
    assert err.count("\n") == 1 and "pass --experiment-id NAME" in err and not (tmp_path / "x").exists()


def test_a_run_without_mlebench_competitions_has_no_columns(tmp_path: Path) -> None:
    from mle_env.evaluation.report import summarize

    run = _run_dir(tmp_path, [record("practice-house-prices", 0, 3)])
    assert summarize(run)["mlebench"] is None
