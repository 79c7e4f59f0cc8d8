"""``mle-env new``: a labelled table a user brings becomes a graded competition, and what would make a bad
task is refused in one line with nothing left behind. The table is scikit-learn's bundled copy of the
Wisconsin breast-cancer data (569 real tumours, 30 measurements, benign or malignant)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tomllib

from mle_env.authoring import NewCompetition, new_competition
from mle_env.competition.registry import get_spec, reset_registry, select_competitions
from mle_env.errors import ConfigError
from mle_env.grading.grader import Grader
from mle_env.prepare.runner import prepare


@pytest.fixture
def tumours(tmp_path: Path) -> Path:
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer(as_frame=True)
    frame = data.frame.rename(columns=lambda c: c.replace(" ", "_"))
    frame["diagnosis"] = np.where(data.target == 0, "malignant", "benign")
    frame = frame.drop(columns=["target"])
    frame.insert(0, "patient", [f"p{i:04d}" for i in range(len(frame))])
    path = tmp_path / "tumours.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture
def out(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "mine"
    folder.mkdir()
    monkeypatch.setenv("MLE_ENV_COMPETITIONS", str(folder))
    reset_registry()
    yield folder
    reset_registry()


def make(tumours: Path, out: Path, **options) -> Path:
    options = {"id": "my-tumours", "source": str(tumours), "target": "diagnosis", "out": out,
               "leaderboard": False, **options}
    return new_competition(NewCompetition(**options), say=lambda _line: None)


@pytest.mark.slow
def test_a_users_csv_becomes_a_graded_competition_with_a_reference_leaderboard(tumours: Path, out: Path) -> None:
    folder = make(tumours, out, id_column="patient", leaderboard=True)
    doc = tomllib.loads((folder / "competition.toml").read_text())
    assert doc["metric"] == {"name": "auc", "lower_is_better": False, "params": {}}
    params = doc["prepare"]["params"]
    assert params["task"] == "binary" and params["positive"] == "malignant" and params["split"] == "stratified"
    assert doc["sources"][0]["type"] == "file" and (folder / doc["sources"][0]["path"]).is_file()
    text = (folder / "description.md").read_text()
    assert "`diagnosis` is 1 where the original value was `malignant`" in text and "| `mean_radius` | number" in text
    assert "mle-my-tumours" not in (folder / "description_obfuscated.md").read_text()

    spec = get_spec("my-tumours")
    prepare(spec.id)
    grader = Grader(spec)
    public, private = grader.paths.public, grader.paths.private
    train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
    answers = pd.read_csv(private / "test.csv")
    assert len(test) == math.ceil(569 * 0.2) and len(train) + len(test) == 569
    assert "diagnosis" not in test.columns and set(train["patient"]).isdisjoint(answers["patient"])
    assert set(train["diagnosis"]) == {0, 1}
    assert grader.validate(public / "sample_submission.csv") == "valid"
    path = out / "perfect.csv"
    answers.to_csv(path, index=False)
    report = grader.grade(path)
    assert report.score == 1.0 and report.gold_medal
    board = pd.read_csv(folder / "leaderboard.csv")
    assert len(board) == 114 and board["teamName"].is_unique
    assert board["score"].max() < 1.0 and board["score"].min() == 0.5  # the constant guess is the floor
    t = grader.thresholds
    assert t.gold > t.silver > t.bronze > 0.5


def test_the_task_and_metric_follow_the_target(tumours: Path, out: Path) -> None:
    folder = make(tumours, out, id="my-texture", target="mean_texture", metric="rmsle")
    doc = tomllib.loads((folder / "competition.toml").read_text())
    assert doc["prepare"]["params"]["task"] == "regression" and doc["prepare"]["params"]["split"] == "random"
    assert doc["submission"]["kind"] == "number" and doc["metric"]["name"] == "rmsle"
    folder = make(tumours, out, id="my-logloss", metric="multiclass_log_loss")
    doc = tomllib.loads((folder / "competition.toml").read_text())
    assert doc["submission"]["target_columns"] == ["benign", "malignant"]
    assert doc["metric"]["params"] == {"eps": 1e-15, "renormalise": True}
    prepare("my-logloss")
    grader = Grader(get_spec("my-logloss"))
    answers = pd.read_csv(grader.paths.private / "test.csv")
    assert list(answers.columns) == ["id", "benign", "malignant"]
    assert (answers[["benign", "malignant"]].sum(axis=1) == 1).all()
    assert grader.validate(grader.paths.public / "sample_submission.csv") == "valid"


@pytest.mark.parametrize(("options", "says"), [
    ({"metric": "rmse"}, "--metric rmse does not fit target 'diagnosis', which is binary"),
    ({"metric": "qwk"}, "qwk needs the order of 'diagnosis''s classes (benign, malignant): pass --labels"),
    ({"target": "mean_texture", "metric": "auc"}, "which is regression"),
    ({"target": "worst_area", "metric": "bogus"}, "--metric bogus is not one mle-env new supports"),
    ({"id_column": "mean_radius"}, "--id mean_radius is not unique"),
    ({"test_size": 0.1}, "the test set would have 57 rows; the metric needs at least 100"),
    ({"target": "nope"}, "--target nope is not a column"),
    ({"id": "Bad Id"}, "use lowercase letters"),
    ({"group": "a", "time": "b"}, "give --group or --time, not both"),
])
def test_a_bad_task_is_refused_in_one_line_and_leaves_nothing(tumours: Path, out: Path, options: dict,
                                                              says: str) -> None:
    with pytest.raises(ConfigError) as e:
        make(tumours, out, **options)
    assert says in str(e.value) and "\n" not in str(e.value)
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("leak", ["copy", "function"])
def test_a_column_that_gives_the_target_away_is_refused(tumours: Path, out: Path, leak: str) -> None:
    frame = pd.read_csv(tumours)
    frame["review"] = (frame["diagnosis"] if leak == "copy"
                       else frame["diagnosis"].map({"malignant": "needs follow-up", "benign": "routine"}))
    frame.to_csv(tumours, index=False)
    with pytest.raises(ConfigError, match="column 'review' predicts 'diagnosis' almost perfectly on its own") as e:
        make(tumours, out)
    assert "--drop review" in str(e.value) and list(out.iterdir()) == []
    assert make(tumours, out, drop=("review",)).is_dir()


def test_a_numeric_near_copy_of_a_regression_target_is_refused(tumours: Path, out: Path) -> None:
    frame = pd.read_csv(tumours)
    frame["texture_x10"] = frame["mean_texture"] * 10 + np.random.default_rng(0).normal(0, 0.01, len(frame))
    frame.to_csv(tumours, index=False)
    with pytest.raises(ConfigError, match="column 'texture_x10' predicts 'mean_texture'"):
        make(tumours, out, target="mean_texture")


def test_a_local_pickle_is_refused_and_a_time_split_keeps_the_latest_rows_for_test(tumours: Path, out: Path,
                                                                                  tmp_path: Path) -> None:
    pickled = tmp_path / "table.pkl.xz"
    pd.read_csv(tumours).to_pickle(pickled)
    with pytest.raises(ConfigError, match="can run code when read; convert it to parquet or CSV"):
        make(pickled, out)
    frame = pd.read_csv(tumours)
    frame["visit"] = pd.date_range("2020-01-01", periods=len(frame), freq="D").astype(str)
    frame.sample(frac=1, random_state=1).to_parquet(tmp_path / "visits.parquet")
    make(tmp_path / "visits.parquet", out, id="my-visits", time="visit")
    prepare("my-visits")
    paths = Grader(get_spec("my-visits")).paths
    train, test = pd.read_csv(paths.public / "train.csv"), pd.read_csv(paths.public / "test.csv")
    assert get_spec("my-visits").domain == "time-series"
    assert train["visit"].max() < test["visit"].min() and len(test) == math.ceil(569 * 0.2)


def test_the_dev_split_works_on_a_new_competition(tumours: Path, out: Path) -> None:
    import json

    from mle_env.paths import CompetitionPaths
    from mle_env.prepare.dev import dev_support, ensure_dev_split

    make(tumours, out, id_column="patient")
    prepare("my-tumours")
    spec, paths = get_spec("my-tumours"), CompetitionPaths("my-tumours")
    assert dev_support(spec) is None
    dev = CompetitionPaths("my-tumours", ensure_dev_split(spec, paths, json.loads(paths.manifest.read_text()), 0.25))
    answers = pd.read_csv(dev.private / "test.csv")
    public_train = pd.read_csv(dev.public / "train.csv")
    assert len(answers) == math.ceil(455 * 0.25) and set(answers["patient"]).isdisjoint(public_train["patient"])
    assert set(answers["patient"]) <= set(pd.read_csv(paths.public / "train.csv")["patient"])


def test_new_from_a_pinned_pypi_package_records_every_checksum(out: Path) -> None:
    folder = make(Path("unused"), out, id="my-penguins",
                  source="pypi:palmerpenguins==0.1.6:palmerpenguins/data/penguins.csv", target="species",
                  test_size=0.3)
    doc = tomllib.loads((folder / "competition.toml").read_text())
    source = doc["sources"][0]
    assert source["type"] == "pypi" and source["filename"] == "palmerpenguins-0.1.6-py3-none-any.whl"
    assert len(source["sha256"]) == 64 and len(source["files"]["penguins.csv"]["sha256"]) == 64
    assert doc["prepare"]["params"]["task"] == "multiclass" and doc["metric"]["name"] == "accuracy"
    prepare("my-penguins")
    assert Grader(get_spec("my-penguins")).validate(
        Grader(get_spec("my-penguins")).paths.public / "sample_submission.csv") == "valid"


def test_the_cli_writes_the_folder_and_says_what_to_do_next(tumours: Path, out: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from mle_env.cli.main import main

    code = main(["new", "my-cli", "--from", str(tumours), "--target", "diagnosis", "--out", str(out),
                 "--no-leaderboard"])
    printed = capsys.readouterr().out
    assert code == 0 and (out / "my-cli" / "competition.toml").is_file()
    assert "tabular, auc, split stratified" in printed and "description.md" in printed
    assert select_competitions(["my-cli"]) == ["my-cli"]
    code = main(["new", "my-cli", "--from", str(tumours), "--target", "diagnosis", "--out", str(out)])
    assert code != 0 and "already exists" in capsys.readouterr().err
