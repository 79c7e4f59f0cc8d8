"""facebook-recruiting-iii-keyword-extraction: the streamed split equals MLE-bench's in-memory recipe, and
the grader reproduces MLE-bench's micro F1 (tags absent from the answers are ignored)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from sklearn.model_selection import train_test_split

from mle_env.competition.registry import get_spec
from mle_env.competition.synthetic import folder_module, load_synthetic
from mle_env.grading.grader import Grader
from mle_env.prepare.helpers import PrepareContext
from mle_env.prepare.runner import prepare

CID = "facebook-recruiting-iii-keyword-extraction"


def test_streamed_split_in_small_chunks_is_mlebench_s(tmp_path: Path) -> None:
    raw, out = tmp_path / "raw", tmp_path / "out"
    raw.mkdir()
    load_synthetic(CID).generate(raw)
    ctx = PrepareContext(get_spec(CID), raw, out / "public", out / "private", tmp_path / "scratch",
                         params={"chunk_rows": 7})
    folder_module(CID, "prepare.py").prepare(ctx)
    old = pd.read_csv(raw / "Train.zip", dtype={"Id": str, "Tags": str})
    train, test = train_test_split(old, test_size=0.1, random_state=0)
    read = lambda path: pd.read_csv(path, dtype={"Id": str, "Tags": str})  # noqa: E731
    pd.testing.assert_frame_equal(read(ctx.public / "train.csv"), train.reset_index(drop=True))
    pd.testing.assert_frame_equal(read(ctx.private / "test.csv"), test.reset_index(drop=True))
    public_test = test.drop(columns=["Tags"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(read(ctx.public / "test.csv"), public_test)
    sample = read(ctx.public / "sample_submission.csv")
    assert list(sample.columns) == ["Id", "Title", "Body", "Tags"]
    assert set(sample["Tags"]) == {"javascript c# python php java"}


@pytest.fixture(scope="module")
def grader(tmp_path_factory: pytest.TempPathFactory) -> Grader:
    home, raw = tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("raw")
    load_synthetic(CID).generate(raw)
    prepare(CID, raw_dir=raw, home=home, verify=False)
    return Grader(get_spec(CID), home)


def test_tags_no_test_question_has_are_ignored(grader: Grader, tmp_path: Path) -> None:
    answers = pd.read_csv(grader.paths.private / "test.csv", dtype=str, keep_default_na=False)
    perfect = answers[["Id", "Tags"]]
    padded = perfect.assign(Tags=perfect["Tags"] + " no-such-tag another-unknown-tag")
    padded.to_csv(tmp_path / "padded.csv", index=False)
    assert grader.grade(tmp_path / "padded.csv").score == 1.0
    # one real tag dropped from the first row: 2 TP / (2 TP + FN)
    n_tags = sum(len(t.split()) for t in answers["Tags"])
    first = answers["Tags"].iloc[0].split()
    fewer = perfect.copy()
    fewer.iloc[0, 1] = " ".join(first[1:])
    fewer.to_csv(tmp_path / "fewer.csv", index=False)
    assert grader.grade(tmp_path / "fewer.csv").score == pytest.approx(round(2 * (n_tags - 1) / (2 * n_tags - 1), 5))
