"""mlkit, the library the offline agents run in the sandbox, on small synthetic tasks."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mle_env.agents import mlkit


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "data").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _info(targets: list[str], kind: str, metric: str, lower: bool) -> dict:
    return {"id_column": "id", "targets": targets, "kind": kind, "sample": "sample_submission.csv",
            "header": ["id", *targets], "metric": metric, "lower_is_better": lower}


def test_multi_target_regression_is_written_on_the_original_scale(workdir: Path) -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, 300)
    frame = pd.DataFrame({"id": np.arange(300), "x": x, "a": 100 + 50 * x, "b": 20 + 5 * x})
    frame.iloc[:240].to_csv("data/train.csv", index=False)
    frame.iloc[240:][["id", "x"]].to_csv("data/test.csv", index=False)
    frame.iloc[240:][["id"]].assign(a=0.0, b=0.0).to_csv("data/sample_submission.csv", index=False)
    profile = mlkit.profile(_info(["a", "b"], "number", "mean_columnwise_rmsle", True))
    assert profile["task"] == "regression" and profile["data_type"] == "tabular"
    with contextlib.redirect_stdout(io.StringIO()):
        mlkit.run(profile, {"family": "forest", "params": {"n_estimators": 50}}, "out/submission.csv")
    written = pd.read_csv("out/submission.csv")
    truth = frame.iloc[240:].reset_index(drop=True)
    assert list(written.columns) == ["id", "a", "b"]
    assert np.abs(written["a"] - truth["a"]).mean() < 5 and np.abs(written["b"] - truth["b"]).mean() < 1


def test_a_long_text_id_is_not_taken_for_the_text(workdir: Path) -> None:
    ids = [f"{'x' * 50}-{i:04d}" for i in range(60)]
    frame = pd.DataFrame({"id": ids, "size": np.arange(60.0), "label": np.arange(60) % 2})
    frame.to_csv("data/train.csv", index=False)
    frame[["id", "size"]].to_csv("data/test.csv", index=False)
    frame[["id"]].assign(label=0.5).to_csv("data/sample_submission.csv", index=False)
    profile = mlkit.profile(_info(["label"], "probability", "auc", False))
    assert profile["data_type"] == "tabular" and profile["feature_columns"] == ["size"]


def test_an_id_that_reads_like_text_is_the_text(workdir: Path) -> None:
    comments = [f"comment number {i} says something rather long about the topic" for i in range(60)]
    frame = pd.DataFrame({"Insult": np.arange(60) % 2, "Comment": comments})
    frame.to_csv("data/train.csv", index=False)
    frame[["Comment"]].to_csv("data/test.csv", index=False)
    frame[["Insult", "Comment"]].assign(Insult=0).to_csv("data/sample_submission.csv", index=False)
    info = {**_info(["Insult"], "probability", "auc", False), "id_column": "Comment",
            "header": ["Insult", "Comment"]}
    profile = mlkit.profile(info)
    assert profile["data_type"] == "text" and profile["text_column"] == "Comment"
