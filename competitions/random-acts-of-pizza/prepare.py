"""Kaggle's unlabelled test share of requests is split off the labelled ones, as MLE-bench does; the test
requests keep only the fields Kaggle's own test file has, minus ``giver_username_if_known`` (see the
known issue in competition.toml)."""

import json

import pandas as pd

from mle_env.prepare.helpers import PrepareContext, find_raw, split, write_csv, write_json, zip_files

LEAKING_FIELDS = {"giver_username_if_known"}


def prepare(ctx: PrepareContext) -> None:
    train_requests, test_requests = (json.loads(find_raw(ctx, name).read_text(encoding="utf-8"))
                                     for name in ("train.json", "test.json"))
    test_ratio = len(test_requests) / (len(train_requests) + len(test_requests))
    test_fields = [key for key in test_requests[0] if key not in LEAKING_FIELDS]
    train, test = split(train_requests, test_ratio)
    write_json(train, ctx.public / "train.json")
    write_json([{key: request[key] for key in test_fields} for request in test], ctx.public / "test.json")
    for name in ("train", "test"):
        zip_files([(ctx.public / f"{name}.json", f"{name}.json")], ctx.public / f"{name}.zip")
    answers = pd.DataFrame({"request_id": [r["request_id"] for r in test],
                            "requester_received_pizza": [int(r["requester_received_pizza"]) for r in test]})
    write_csv(answers, ctx.private / "test.csv")
    write_csv(answers.assign(requester_received_pizza=0), ctx.public / "sampleSubmission.csv")
