"""Synthetic raw data for tensorflow2-question-answering (see mle_env.competition.synthetic)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import held_out, write_csv

PUBLIC = frozenset({"sample_submission.csv", "simplified-nq-test.jsonl", "simplified-nq-train.jsonl"})
PRIVATE = frozenset({"answers.csv", "gold_submission.csv", "test.jsonl"})
#: more than one block of 1,000 lines, so the block-wise split is exercised
N_TRAIN = 1050
WORDS = ["<P>", "</P>", "the", "river", "flows", "north", "into", "sea", "<Table>", "</Table>", "1905", "wins"]


def _document(rng: np.random.Generator) -> tuple[str, list[dict]]:
    tokens = [str(w) for w in rng.choice(WORDS, int(rng.integers(12, 30)))]
    candidates, start = [], 0
    while start < len(tokens) - 3:
        end = min(len(tokens), start + int(rng.integers(3, 8)))
        candidates.append({"start_token": start, "top_level": True, "end_token": end})
        start = end
    return " ".join(tokens), candidates


def _annotation(rng: np.random.Generator, candidates: list[dict], n: int) -> dict:
    kind = rng.choice(["none", "long", "short", "shorts", "yes", "no"], p=[0.25, 0.2, 0.3, 0.1, 0.1, 0.05])
    pick = int(rng.integers(len(candidates)))
    block = candidates[pick]
    long = ({"start_token": -1, "candidate_index": -1, "end_token": -1} if kind == "none" else
            {"start_token": block["start_token"], "candidate_index": pick, "end_token": block["end_token"]})
    shorts = []
    if kind in ("short", "shorts"):
        shorts.append({"start_token": block["start_token"], "end_token": block["start_token"] + 1})
        if kind == "shorts":
            shorts.append({"start_token": block["start_token"] + 1, "end_token": block["end_token"]})
    yes_no = {"yes": "YES", "no": "NO"}.get(str(kind), "NONE")
    return {"yes_no_answer": yes_no, "long_answer": long, "short_answers": shorts, "annotation_id": 10**12 + n}


def _record(rng: np.random.Generator, n: int, labelled: bool) -> dict:
    text, candidates = _document(rng)
    example_id = int(rng.integers(-(2**62), 2**62))
    record = {"document_text": text, "long_answer_candidates": candidates,
              "question_text": f"which river flows north number {n}"}
    if labelled:
        record["annotations"] = [_annotation(rng, candidates, n)]
        record["document_url"] = f"https://en.wikipedia.org//w/index.php?title=River_{n}"
    record["example_id"] = example_id if labelled else str(example_id)
    return record


def generate(raw: Path) -> None:
    rng = np.random.default_rng(71)
    with open(raw / "simplified-nq-train.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(_record(rng, n, True)) + "\n" for n in range(N_TRAIN))
    test = [_record(rng, n, False) for n in range(3)]
    with open(raw / "simplified-nq-test.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in test)
    rows = [f"{r['example_id']}_{part}" for r in test for part in ("long", "short")]
    write_csv(pd.DataFrame({"example_id": rows, "PredictionString": ""}), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return list(answers["example_id"])


def expected_test_ids(raw: Path) -> list[str]:
    """Each block of 1,000 lines split 10 % (seed 0); a held-out example's short row, then its long row."""
    with open(raw / "simplified-nq-train.jsonl", encoding="utf-8") as f:
        ids = [str(json.loads(line)["example_id"]) for line in f]
    picked = [i for start in range(0, len(ids), 1000) for i in held_out(ids[start:start + 1000], 0.1)]
    return [f"{i}_{part}" for i in picked for part in ("short", "long")]


def perfect_submission(answers: pd.DataFrame) -> pd.DataFrame:
    """The first valid answer of each row, blank where there is none."""
    first = [cell.split()[0] if cell.split() else "" for cell in answers["valid_answers"]]
    return pd.DataFrame({"example_id": answers["example_id"], "PredictionString": first})


def noisy_submission(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Perfect rows mixed with blanks, wrong spans, YES on long rows, the last of several valid short spans,
    padded spans, leading zeros and a pandas-missing 'nan' (a blank)."""
    rows = []
    for row_id, cell in zip(answers["example_id"], answers["valid_answers"], strict=True):
        valid = cell.split()
        choice = rng.integers(8)
        if choice == 0:
            rows.append("")
        elif choice == 1:
            rows.append("0:1")
        elif choice == 2:
            rows.append("YES" if row_id.endswith("_long") else "NO")
        elif choice == 3 and valid:
            rows.append(f" {valid[-1]} ")
        elif choice == 4 and valid and ":" in valid[0]:
            rows.append("0" + valid[0])
        elif choice == 5:
            rows.append("nan")
        else:
            rows.append(valid[0] if valid else "")
    return pd.DataFrame({"example_id": answers["example_id"], "PredictionString": rows})
