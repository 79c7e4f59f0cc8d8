"""Synthetic raw data for google-quest-challenge (see mle_env.competition.synthetic).

question_type_spelling is 0 in every row of the plain split's test part, so the preparation's swap of one
test row with a train row happens here (tests/competitions/test_google_quest.py covers the other case).
"""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.registry import get_spec
from mle_env.competition.synthetic import held_out, texts, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test.csv", "train.csv"})
PRIVATE = frozenset({"test.csv"})
SPELLING = "question_type_spelling"
FRACTIONS = [0.0, 0.333333333333333, 0.5, 0.666666666666667, 0.777777777777778, 0.888888888888889, 1.0]
TARGETS = list(get_spec("google-quest-challenge").submission.target_columns or ())


def raw_train(n: int = 80, seed: int = 43, spelling_in_test: bool = False) -> pd.DataFrame:
    """Kaggle's train.csv layout; question_type_spelling is non-zero in two rows, both held out by the
    plain split when ``spelling_in_test`` and both kept in its train part otherwise."""
    rng = np.random.default_rng(seed)
    hosts = rng.choice(["english.stackexchange.com", "superuser.com", "math.stackexchange.com"], n)
    frame = pd.DataFrame({
        "qa_id": np.sort(rng.choice(10_000, n, replace=False)), "question_title": texts(rng, n),
        "question_body": texts(rng, n), "question_user_name": [f"user{k}" for k in rng.integers(500, size=n)],
        "question_user_page": [f"https://{h}/users/{k}" for k, h in enumerate(hosts)], "answer": texts(rng, n),
        "answer_user_name": [f"user{k}" for k in rng.integers(500, size=n)],
        "answer_user_page": [f"https://{h}/users/{k + 1000}" for k, h in enumerate(hosts)],
        "url": [f"https://{h}/questions/{k}" for k, h in enumerate(hosts)],
        "category": rng.choice(["CULTURE", "TECHNOLOGY", "SCIENCE"], n), "host": hosts,
        **{t: rng.choice(FRACTIONS, n) for t in TARGETS}})
    test_rows = set(held_out(list(range(n)), 0.1))
    rows = sorted(test_rows) if spelling_in_test else [r for r in range(n) if r not in test_rows]
    frame[SPELLING] = 0.0
    frame.loc[[rows[1], rows[-1]], SPELLING] = 0.333333333333333
    return frame


def generate(raw: Path) -> None:
    train = raw_train()
    test = pd.DataFrame({"qa_id": [20_001, 20_002], **{c: texts(np.random.default_rng(1), 2)
                                                        for c in train.columns[1:11]}})
    write_csv(train, raw / "train.csv")
    write_csv(test, raw / "test.csv")
    write_csv(test[["qa_id"]].assign(**dict.fromkeys(TARGETS, 0.00308)), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return list(answers["qa_id"])


def expected_test_ids(raw: Path) -> list[str]:
    """The plain split's test ids; when the spelling column is constant there, the first test id is
    replaced by the id of the first train row (in split order) with a non-zero spelling value."""
    from sklearn.model_selection import train_test_split

    frame = pd.read_csv(raw / "train.csv")
    train, test = train_test_split(frame, test_size=0.1, random_state=0)
    ids = [str(v) for v in test["qa_id"]]
    if test[SPELLING].nunique() == 1:
        ids[0] = str(train.loc[train[SPELLING] != 0, "qa_id"].iloc[0])
    return ids
