"""Time to grade the ``levenshtein`` metric on bms-molecular-translation's scale.

    python benchmarks/grading_levenshtein.py [--rows 485000] [--length 100] [--seed 0]

Builds ``--rows`` random InChI-like answers of about ``--length`` characters and predictions that differ
from them by a few edits, then prints the seconds the registered metric takes on them (the whole
metric call: text conversion, one rapidfuzz distance per row, the mean). Target: well under 30 s on 2 cores.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mle_env.grading.metrics import get_metric

ALPHABET = np.array(list("InChI=1S/C0123456789HNOPSclBr()+-,"))


def synthetic(rows: int, length: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Answers of ``length`` +- 20 % characters, and predictions with about 5 % of the characters changed."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(int(length * 0.8), int(length * 1.2) + 1, rows)
    truth = ["".join(ALPHABET[rng.integers(0, len(ALPHABET), n)]) for n in lengths]
    pred = []
    for text in truth:
        chars = np.array(list(text))
        changed = rng.random(len(chars)) < 0.05
        chars[changed] = ALPHABET[rng.integers(0, len(ALPHABET), int(changed.sum()))]
        pred.append("".join(chars[rng.random(len(chars)) > 0.01]))  # and about 1 % deleted
    return np.array(truth, dtype=object), np.array(pred, dtype=object)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=485_000)
    parser.add_argument("--length", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    truth, pred = synthetic(args.rows, args.length, args.seed)
    metric = get_metric("levenshtein")
    start = time.perf_counter()
    score = metric(truth, pred)
    elapsed = time.perf_counter() - start
    print(f"levenshtein on {args.rows:,} strings of ~{args.length} characters: {elapsed:.2f} s (score {score:.4f})")


if __name__ == "__main__":
    main()
