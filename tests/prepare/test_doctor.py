"""mle-env doctor against a thin fake of the Kaggle API's answers (Kaggle cannot be reached from here): the
credentials, each competition's rules, sizes against free disk, and prepared data checked against its
manifest, all without downloading anything."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mle_env.cli import main
from mle_env.competition.registry import get_spec
from mle_env.prepare import doctor

LITE = ["spooky-author-identification", "aerial-cactus-identification", "detecting-insults-in-social-commentary",
        "random-acts-of-pizza"]


class FakeKaggle:
    """Kaggle's competition list as the client returns it: objects with ``ref`` and ``user_has_entered``."""

    def __init__(self, entered: dict[str, bool], fail: set[str] = frozenset()) -> None:
        self.entered, self.fail, self.asked = entered, fail, []

    def competitions_list(self, search: str) -> list[Any]:
        self.asked.append(search)
        if search in self.fail:
            raise ConnectionError("the server hung up")
        return [SimpleNamespace(ref=f"https://www.kaggle.com/competitions/{slug}", user_has_entered=entered)
                for slug, entered in self.entered.items() if search in slug]


@pytest.fixture
def kaggle(monkeypatch: pytest.MonkeyPatch) -> FakeKaggle:
    fake = FakeKaggle({"spooky-author-identification": True, "aerial-cactus-identification": False,
                       "random-acts-of-pizza-extra": True}, fail={"detecting-insults-in-social-commentary"})
    monkeypatch.setattr(doctor, "kaggle_api", lambda: fake)
    return fake


def test_rules_sizes_and_disk_for_each_competition(kaggle: FakeKaggle, home: Path) -> None:
    report = doctor.check([get_spec(cid) for cid in LITE], home)
    rows = {r["id"]: r for r in report["competitions"]}
    assert report["kaggle"] == {"ok": True, "problem": None}
    assert rows["spooky-author-identification"]["rules"] == "accepted"
    assert rows["aerial-cactus-identification"]["rules"] == "not accepted"
    assert rows["aerial-cactus-identification"]["rules_url"] == \
        "https://www.kaggle.com/competitions/aerial-cactus-identification/rules"
    assert rows["detecting-insults-in-social-commentary"]["rules"].startswith("unknown: Kaggle did not answer")
    assert rows["random-acts-of-pizza"]["rules"].startswith("unknown: Kaggle does not list it")  # no exact ref
    assert kaggle.asked == LITE  # one question per competition, nothing downloaded
    assert all(r["prepared"] == "no" and r["raw_bytes"] > 0 for r in rows.values())
    assert report["disk"]["needed_bytes"] == sum(int(r["raw_bytes"] * doctor.PREPARE_FACTOR) for r in rows.values())
    assert report["disk"]["free_bytes"] > 0 and report["disk"]["enough"] is True


def test_prepared_data_is_checked_against_its_manifest(practice_home: Path, kaggle: FakeKaggle) -> None:
    report = doctor.check([get_spec("practice-house-prices")], practice_home)
    [row] = report["competitions"]
    assert (row["prepared"], row["rules"], row["needed_bytes"]) == ("yes", "not needed", 0)
    assert kaggle.asked == []  # no Kaggle source: nothing to ask


def test_a_changed_prepared_file_is_invalid(tiny_prepared: str, home: Path) -> None:
    answers = home / tiny_prepared / "prepared" / "private" / "test.csv"
    answers.write_text(answers.read_text() + "r999,1\n")
    [row] = doctor.check([get_spec(tiny_prepared)], home)["competitions"]
    assert row["prepared"].startswith("invalid:") and "test.csv" in row["prepared"]


def test_without_credentials_every_kaggle_question_says_why(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    for name in ("KAGGLE_USERNAME", "KAGGLE_KEY", "KAGGLE_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KAGGLE_CONFIG_DIR", str(tmp_path / "no-kaggle"))
    report = doctor.check([get_spec("spooky")], home)
    assert report["kaggle"]["ok"] is False and "no Kaggle credentials" in report["kaggle"]["problem"]
    assert report["competitions"][0]["rules"] == "unknown: Kaggle could not be asked (see the kaggle problem)"


def test_the_cli_says_what_to_open_and_exits_1_while_rules_stand_in_the_way(
        kaggle: FakeKaggle, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "spooky", "cactus"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "Kaggle: credentials accepted" in out and "rules accepted" in out
    assert "rules not accepted (https://www.kaggle.com/competitions/aerial-cactus-identification/rules)" in out
    assert "1 competition(s) cannot be downloaded until their rules are accepted" in out
    assert main(["doctor", "spooky", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["competitions"][0]["rules"] == "accepted"
