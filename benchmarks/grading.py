"""Grading cost per competition, beside the time pandas takes just to read the same two files.

    python benchmarks/grading.py [--competitions ID ...] [--repeat 3] [--levenshtein-rows 485000]

For every MLE-bench competition with a synthetic raw generator (``competitions/<id>/synthetic.py``), the
raw files are generated, prepared, and a perfect submission (the answers' ids and targets, or the
folder's ``perfect_submission``) is graded with :class:`~mle_env.grading.grader.Grader` (validation,
alignment, metric, medals; the grader is built once, as an env does). Printed per competition: answer
rows, the best of ``--repeat`` grading times, the best time of ``pandas.read_csv`` of the submission plus
the answers, and their ratio (target: within 3x on the largest synthetic files, so that validation never
dominates). Then the ``levenshtein`` metric on ``--levenshtein-rows`` strings of about 100 characters
(bms-molecular-translation's scale; target under 30 s). Prepare's peak memory on large raw files is
``benchmarks/prepare_memory.py``."""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
from grading_levenshtein import synthetic as levenshtein_inputs

from mle_env.competition.registry import get_spec
from mle_env.competition.synthetic import load_synthetic, synthetic_competitions
from mle_env.grading.grader import Grader
from mle_env.grading.metrics import get_metric
from mle_env.paths import CompetitionPaths
from mle_env.prepare.runner import prepare


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(cid: str, work: Path, repeat: int) -> tuple[int, float, float]:
    """(answer rows, grading seconds, reading seconds) for a perfect submission of ``cid``."""
    raw, home = work / "raw" / cid, work / "home"
    raw.mkdir(parents=True)
    module = load_synthetic(cid)
    assert module is not None
    module.generate(raw)
    prepare(cid, raw_dir=raw, home=home, verify=False)
    spec = get_spec(cid)
    grader = Grader(spec, home)
    answers_path = CompetitionPaths(cid, home).private / spec.submission.answers
    answers = pd.read_csv(answers_path, dtype=str, keep_default_na=False)
    ids = list(spec.submission.id_columns)
    custom = getattr(module, "perfect_submission", None)  # where the answers are not the targets as such
    perfect = custom(answers) if custom else answers[[*ids, *grader.targets]]
    submission = work / f"{cid}.csv"
    perfect.to_csv(submission, index=False)
    report = grader.grade(submission)
    assert report.valid_submission, (cid, report.invalid_reason)
    grading = best_of(repeat, lambda: grader.grade(submission))
    reading = best_of(repeat, lambda: (pd.read_csv(submission), pd.read_csv(answers_path)))
    return len(answers), grading, reading


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--competitions", nargs="+", help="ids (default: every competition with synthetic data)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--levenshtein-rows", type=int, default=485_000)
    args = parser.parse_args()
    ids = args.competitions or synthetic_competitions()
    rows = []
    with tempfile.TemporaryDirectory(prefix="mle-env-grading-bench-") as tmp:
        for cid in ids:
            n, grading, reading = measure(cid, Path(tmp), args.repeat)
            rows.append((cid, n, grading, reading))
            print(f"{cid:55s} {n:>8,} rows  grade {grading * 1000:8.1f} ms  read {reading * 1000:7.1f} ms  "
                  f"x{grading / reading:5.1f}", flush=True)
    largest = sorted(rows, key=lambda r: -r[1])[:3]
    print("largest synthetic answers: " + ", ".join(f"{c} ({n:,} rows) x{g / r:.1f}" for c, n, g, r in largest))
    truth, pred = levenshtein_inputs(args.levenshtein_rows, 100, 0)
    metric = get_metric("levenshtein")
    elapsed = best_of(1, lambda: metric(truth, pred))
    print(f"levenshtein on {args.levenshtein_rows:,} strings of ~100 characters: {elapsed:.2f} s")


if __name__ == "__main__":
    main()
