"""Synthetic raw data for jigsaw-unintended-bias-in-toxicity-classification (see mle_env.competition.synthetic).

Every identity has toxic and non-toxic comments in the test set, so each subgroup, BPSN and BNSP AUC is
defined; identity cells are empty (NaN) for comments without identity annotations, as in Kaggle's files.
"""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.registry import get_spec
from mle_env.competition.synthetic import texts, unsplit_recipe, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test.csv", "train.csv"})
PRIVATE = frozenset({"test.csv"})
SCORED = list(get_spec("jigsaw-unintended-bias-in-toxicity-classification").metric.params["identity_columns"])
IDENTITIES = ["male", "female", "transgender", "other_gender", "heterosexual", "homosexual_gay_or_lesbian",
              "bisexual", "other_sexual_orientation", "christian", "jewish", "muslim", "hindu", "buddhist",
              "atheist", "other_religion", "black", "white", "asian", "latino", "other_race_or_ethnicity",
              "physical_disability", "intellectual_or_learning_disability", "psychiatric_or_mental_illness",
              "other_disability"]
SUBTYPES = ["severe_toxicity", "obscene", "identity_attack", "insult", "threat", "sexual_explicit"]
META = ["created_date", "publication_id", "parent_id", "article_id", "rating", "funny", "wow", "sad", "likes",
        "disagree"]


def _comments(rng: np.random.Generator, ids: list[int]) -> pd.DataFrame:
    """Comments with a toxicity score, its subtypes, metadata and identity scores (NaN where unannotated):
    even rows are toxic, odd rows not, and each scored identity is mentioned by pairs of rows (one of each)."""
    n = len(ids)
    toxicity = np.where(np.arange(n) % 2 == 0, rng.choice([0.6, 0.8, 1.0], n), rng.choice([0.0, 0.1, 0.4], n))
    frame = pd.DataFrame({"id": ids, "comment_text": texts(rng, n), "toxicity": toxicity,
                          **{s: rng.choice([0.0, 0.2, 0.5], n) for s in SUBTYPES}})
    annotated = np.arange(n) < n - 6
    for column in IDENTITIES:
        values = rng.choice([0.0, 0.1], n)
        if column in SCORED:
            values[(np.arange(n) // 2) % len(SCORED) == SCORED.index(column)] = 0.75
        frame[column] = np.where(annotated, values, np.nan)
    frame["created_date"] = [f"2017-0{1 + k % 9}-1{k % 10} 10:0{k % 10}:00.000000+00" for k in range(n)]
    frame["publication_id"] = rng.integers(2, 100, n)
    frame["parent_id"] = np.where(rng.random(n) < 0.5, np.nan, rng.integers(10_000, 99_999, n))
    frame["article_id"] = rng.integers(2006, 400_000, n)
    frame["rating"] = rng.choice(["approved", "rejected"], n)
    for column in ["funny", "wow", "sad", "likes", "disagree"]:
        frame[column] = rng.integers(0, 5, n)
    frame["identity_annotator_count"] = np.where(annotated, 4, 0)
    frame["toxicity_annotator_count"] = rng.integers(4, 10, n)
    return frame


def generate(raw: Path) -> None:
    """Kaggle's files: train.csv (target as ``target``), test.csv, the two expanded test files (toxicity as
    ``toxicity``), the two annotation files, all_data.csv and the sample submission."""
    rng = np.random.default_rng(47)
    train = _comments(rng, list(range(59_848, 59_908))).rename(columns={"toxicity": "target"})
    train = train[["id", "target", "comment_text", *SUBTYPES[:5], *IDENTITIES, *META, "sexual_explicit",
                   "identity_annotator_count", "toxicity_annotator_count"]]
    expanded = [_comments(rng, list(range(start, start + 4 * len(SCORED) + 6)))
                for start in (7_000_000, 7_097_320)]
    order = ["id", "comment_text", *META, "toxicity", *SUBTYPES, "identity_annotator_count",
             "toxicity_annotator_count", *IDENTITIES]
    public, private = (frame[order] for frame in expanded)
    write_csv(train, raw / "train.csv")
    write_csv(public[["id", "comment_text"]], raw / "test.csv")
    write_csv(public, raw / "test_public_expanded.csv")
    write_csv(private, raw / "test_private_expanded.csv")
    write_csv(public[["id"]].assign(prediction=0.0), raw / "sample_submission.csv")
    write_csv(train.assign(split="train"), raw / "all_data.csv")
    write_csv(pd.DataFrame({"id": train["id"], "worker": 1, "toxic": 0.0, **dict.fromkeys(SUBTYPES, 0.0)}),
              raw / "toxicity_individual_annotations.csv")
    write_csv(pd.DataFrame({"id": train["id"], "worker": 2, "disability": "none", "gender": "none"}),
              raw / "identity_individual_annotations.csv")


def perfect_submission(answers: pd.DataFrame) -> pd.DataFrame:
    """The true toxicity shares as predictions."""
    return pd.DataFrame({"id": answers["id"], "prediction": answers["toxicity"]})


def noisy_submission(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Toxicity jittered, with a third of the rows moved to the other side of 0.5."""
    values = pd.to_numeric(answers["toxicity"]).to_numpy(dtype=float)
    noisy = np.clip(values + rng.normal(0, 0.1, len(values)), 0, 1)
    flipped = rng.choice(len(values), len(values) // 3, replace=False)
    noisy[flipped] = 1 - noisy[flipped]
    return pd.DataFrame({"id": answers["id"], "prediction": noisy})


ids_from_answers, expected_test_ids = unsplit_recipe("test_private_expanded.csv", "id")
