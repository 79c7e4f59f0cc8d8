"""Synthetic raw data for random-acts-of-pizza (see mle_env.competition.synthetic)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import column_ids, held_out, texts, write_csv

PUBLIC = frozenset({"sampleSubmission.csv", "test.json", "test.zip", "train.json", "train.zip"})
PRIVATE = frozenset({"test.csv"})


def _request(rng: np.random.Generator, i: int, labelled: bool) -> dict:
    got = bool(rng.integers(0, 2)) if labelled else False
    request = {
        "giver_username_if_known": (f"giver{i}" if got and i % 2 else "N/A"),
        "request_id": f"t3_{i:05x}",
        "request_text_edit_aware": texts(rng, 1)[0],
        "request_title": f"[Request] pizza please {i}",
        "requester_account_age_in_days_at_request": float(rng.random() * 900),
        "requester_days_since_first_post_on_raop_at_request": float(rng.random() * 10),
        "requester_number_of_comments_at_request": int(rng.integers(0, 500)),
        "requester_number_of_comments_in_raop_at_request": int(rng.integers(0, 5)),
        "requester_number_of_posts_at_request": int(rng.integers(0, 100)),
        "requester_number_of_posts_on_raop_at_request": int(rng.integers(0, 3)),
        "requester_number_of_subreddits_at_request": 2,
        "requester_subreddits_at_request": ["AskReddit", "pizza"],
        "requester_upvotes_minus_downvotes_at_request": int(rng.integers(-10, 1000)),
        "requester_upvotes_plus_downvotes_at_request": int(rng.integers(0, 2000)),
        "requester_username": f"user{i}",
        "unix_timestamp_of_request": 1300000000.0 + i,
        "unix_timestamp_of_request_utc": 1300003600.0 + i,
    }
    if labelled:
        request |= {
            "in_test_set": False,
            "number_of_downvotes_of_request_at_retrieval": int(rng.integers(0, 5)),
            "number_of_upvotes_of_request_at_retrieval": int(rng.integers(0, 20)),
            "post_was_edited": False,
            "request_number_of_comments_at_retrieval": int(rng.integers(0, 20)),
            "request_text": request["request_text_edit_aware"],
            "requester_account_age_in_days_at_retrieval": 1000.5,
            "requester_days_since_first_post_on_raop_at_retrieval": 500.25,
            "requester_number_of_comments_at_retrieval": 600,
            "requester_number_of_comments_in_raop_at_retrieval": 6,
            "requester_number_of_posts_at_retrieval": 120,
            "requester_number_of_posts_on_raop_at_retrieval": 4,
            "requester_received_pizza": got,
            "requester_upvotes_minus_downvotes_at_retrieval": 1200,
            "requester_upvotes_plus_downvotes_at_retrieval": 2400,
            "requester_user_flair": "shroom" if got else None,
        }
    return request


def generate(raw: Path) -> None:
    rng = np.random.default_rng(14)
    train = [_request(rng, i, True) for i in range(40)]
    test = [_request(rng, 100 + i, False) for i in range(15)]
    (raw / "train.json").write_text(json.dumps(train, indent=4))
    (raw / "test.json").write_text(json.dumps(test, indent=4))
    write_csv(pd.DataFrame({"request_id": [r["request_id"] for r in test], "requester_received_pizza": 0}),
              raw / "sampleSubmission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "request_id")


def expected_test_ids(raw: Path) -> list[str]:
    """As many labelled requests as Kaggle's unlabelled test has."""
    train, test = (json.loads((raw / f"{name}.json").read_text()) for name in ("train", "test"))
    return [r["request_id"] for r in held_out(train, len(test) / (len(train) + len(test)))]
