"""Competition-specific behaviour of AI4Code, alaska2, billion-word, bms, kuzushiji and statoil that the
registry-wide test cannot see, and the two shared pieces they added: Levenshtein's ``missing_as`` (bms reads
pandas' missing cells as "nan", as MLE-bench does) and 7z sample submissions (statoil)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mle_env.archives import read_7z_member, write_7z
from mle_env.competition.registry import get_spec
from mle_env.competition.synthetic import folder_module, load_synthetic
from mle_env.grading.grader import Grader, sample_header
from mle_env.grading.metrics import get_metric
from mle_env.paths import CompetitionPaths
from mle_env.prepare.runner import prepare


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory):
    home, raws, done = tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("raw"), set()

    def get(cid: str) -> tuple[Path, CompetitionPaths]:
        if cid not in done:
            (raws / cid).mkdir()
            load_synthetic(cid).generate(raws / cid)
            prepare(cid, raw_dir=raws / cid, home=home, verify=False)
            done.add(cid)
        return raws / cid, CompetitionPaths(cid, home)

    get.home = home
    return get


def test_levenshtein_missing_as_scores_pandas_missing_cells_as_that_text() -> None:
    metric = get_metric("levenshtein")
    truth, pred = np.array(["InChI=1S/H2O", "abc"]), np.array(["", "NA"])
    assert metric(truth, pred) == (12 + 3) / 2  # as written: "" and the two letters NA
    assert metric(truth, pred, missing_as="nan") == (11 + 3) / 2  # "InChI=1S/H2O" vs "nan": keeps one n
    assert metric(np.array(["x y"]), np.array(["x  y"]), missing_as="nan") == 1  # other text is untouched


def test_a_7z_sample_submission_gives_the_header(tmp_path: Path) -> None:
    (tmp_path / "sample_submission.csv").write_text("id,is_iceberg\na,0.5\n")
    write_7z([(tmp_path / "sample_submission.csv", "sample_submission.csv")], tmp_path / "s.csv.7z")
    assert read_7z_member(tmp_path / "s.csv.7z") == b"id,is_iceberg\na,0.5\n"
    assert list(sample_header(tmp_path / "s.csv.7z").columns) == ["id", "is_iceberg"]
    assert sample_header(tmp_path / "absent.csv") is None


def test_billion_word_test_sentences_lose_one_interior_word(prepared) -> None:
    raw, paths = prepared("billion-word-imputation")
    answers = pd.read_csv(paths.private / "test.csv", dtype=str, keep_default_na=False)
    with zipfile.ZipFile(paths.public / "test_v2.txt.zip") as zf:
        assert zf.namelist() == ["test_v2.txt"]
        public = zf.read("test_v2.txt")
    assert public == (paths.private / "sample_submission.csv").read_bytes()
    test = pd.read_csv(paths.public / "test_v2.txt.zip", dtype=str, keep_default_na=False)
    assert list(test["id"]) == [str(i) for i in range(len(answers))] and len(answers) > 20
    for full, cut in zip(answers["sentence"], test["sentence"], strict=True):
        words, left = full.split(), cut.split()
        assert len(left) == len(words) - 1 and left[0] == words[0] and left[-1] == words[-1]
        assert any(words[:k] + words[k + 1:] == left for k in range(1, len(words) - 1))
    with zipfile.ZipFile(paths.public / "train_v2.txt.zip") as zf:
        train = zf.read("train_v2.txt").decode().splitlines()
    with zipfile.ZipFile(raw / "train_v2.txt.zip") as zf:
        original = zf.read("train_v2.txt").decode().splitlines()
    assert len(train) + len(answers) == len(original) and set(train) | set(answers["sentence"]) == set(original)


def test_billion_word_empty_sentence_is_scored_not_rejected(prepared, tmp_path: Path) -> None:
    _, paths = prepared("billion-word-imputation")
    answers = pd.read_csv(paths.private / "test.csv", dtype=str, keep_default_na=False)
    submission = answers.assign(sentence=[""] + list(answers["sentence"][1:]))
    submission.to_csv(tmp_path / "s.csv", index=False)
    report = Grader(get_spec("billion-word-imputation"), prepared.home).grade(tmp_path / "s.csv")
    assert report.status == "scored" and report.score == round(len(answers["sentence"][0]) / len(answers), 5)


@pytest.mark.slow
def test_alaska2_test_images_are_the_drawn_versions(prepared) -> None:
    raw, paths = prepared("alaska2-image-steganalysis")
    sources = load_synthetic("alaska2-image-steganalysis").expected_test_sources(raw)
    assert len(sources) == 5000 and 2200 < sum(label for _, _, label in sources) < 2800
    for n, (folder, name, _) in enumerate(sources[:300], 1):
        assert (paths.public / "Test" / f"{n:04d}.jpg").read_bytes() == (raw / folder / name).read_bytes()
    assert len(list((paths.public / "UERD").iterdir())) == 12
    assert sorted(p.name for p in (paths.public / "Cover").iterdir()) == [f"{n:05d}.jpg" for n in range(1, 13)]


def test_kuzushiji_gold_submission_is_perfect_and_survives_empty_pages(prepared) -> None:
    _, paths = prepared("kuzushiji-recognition")
    script = folder_module("kuzushiji-recognition", "prepare.py")
    assert script.gold_labels(float("nan")) == "" and script.gold_labels("U+3042 10 20 5 6") == "U+3042 11 21"
    answers = pd.read_csv(paths.private / "test.csv", dtype=str, keep_default_na=False)
    assert "" in set(answers["labels"])  # the synthetic test set holds an empty page
    report = Grader(get_spec("kuzushiji-recognition"), prepared.home).grade(paths.private / "gold_submission.csv")
    assert report.status == "scored" and report.score == 1.0


@pytest.mark.slow
def test_ai4code_test_notebooks_share_no_ancestor_with_train(prepared) -> None:
    _, paths = prepared("AI4Code")
    ancestors = pd.read_csv(paths.public / "train_ancestors.csv")
    answers = pd.read_csv(paths.private / "test_orders.csv")
    assert len(answers) == 20000 and not set(answers["id"]) & set(ancestors["id"])
    assert sorted(p.stem for p in (paths.public / "test").iterdir()) == sorted(answers["id"])
    split = folder_module("AI4Code", "prepare.py").ancestor_split
    frame = pd.DataFrame({"id": list("abcde"), "ancestor_id": ["x", float("nan"), "x", float("nan"), "y"]})
    train, test = split(frame, 3)
    assert test == ["a", "c", "b"] and train == ["d", "e"]  # each missing ancestor is a group of its own
