"""Synthetic raw data for stanford-covid-vaccine (see mle_env.competition.synthetic)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import write_csv

PUBLIC = frozenset({"sample_submission.csv", "test.json", "train.json"})
PRIVATE = frozenset({"test.csv"})
TARGETS = ["reactivity", "deg_Mg_pH10", "deg_pH10", "deg_Mg_50C", "deg_50C"]
ERRORS = ["reactivity_error", "deg_error_Mg_pH10", "deg_error_pH10", "deg_error_Mg_50C", "deg_error_50C"]
LENGTH, SCORED = 12, 8  # Kaggle's: 107 and 68


def _sequence(rng: np.random.Generator, index: int, length: int, labelled: bool) -> dict:
    record = {"index": index, "id": f"id_{index * 7919 % 100000:05x}a{index}",
              "sequence": "".join(rng.choice(list("AGUC"), length)),
              "structure": "".join(rng.choice(list("(.)"), length)),
              "predicted_loop_type": "".join(rng.choice(list("SMIBHEX"), length))}
    if labelled:
        snr = float(rng.random() * 10)
        record |= {"signal_to_noise": round(snr, 3), "SN_filter": int(snr > 3)}
    record |= {"seq_length": length, "seq_scored": SCORED if length == LENGTH else 10}
    if labelled:
        record |= {name: [round(float(v), 4) for v in rng.random(SCORED)] for name in ERRORS}
        record |= {name: [round(float(v), 4) for v in rng.normal(0.5, 0.4, SCORED)] for name in TARGETS}
    return record


def generate(raw: Path) -> None:
    rng = np.random.default_rng(41)
    train = [_sequence(rng, i, LENGTH, True) for i in range(40)]
    test = [_sequence(rng, i, LENGTH if i < 2 else 15, False) for i in range(4)]
    for name, records in (("train", train), ("test", test)):
        (raw / f"{name}.json").write_text("".join(json.dumps(r) + "\n" for r in records))
    ids = [f"{r['id']}_{j}" for r in test for j in range(r["seq_length"])]
    write_csv(pd.DataFrame({"id_seqpos": ids, **dict.fromkeys(TARGETS, 0.0)}), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return list(answers["id_seqpos"])


def expected_test_ids(raw: Path) -> list[str]:
    """int(10 %) sequences sampled (seed 0) among those with SN_filter > 0, in raw order, every position."""
    records = [json.loads(line) for line in (raw / "train.json").read_text().splitlines()]
    passed = pd.DataFrame([r for r in records if r["SN_filter"] > 0],
                          index=[k for k, r in enumerate(records) if r["SN_filter"] > 0])
    picked = set(passed.sample(n=int(len(records) * 0.1), random_state=0).index)
    return [f"{r['id']}_{j}" for k, r in enumerate(records) if k in picked for j in range(r["seq_length"])]
