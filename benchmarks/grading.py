"""Grading cost per competition, beside the time pandas takes just to read the same two files.

    python benchmarks/grading.py [--competitions ID ...] [--repeat 3] [--levenshtein-rows 485000]
    python benchmarks/grading.py --real-scale [--competitions ID ...]

For every MLE-bench competition with a synthetic raw generator (``competitions/<id>/synthetic.py``), the
raw files are generated, prepared, and a perfect submission (the answers' ids and targets, or the
folder's ``perfect_submission``) is graded with :class:`~mle_env.grading.grader.Grader` (validation,
alignment, metric, medals; the grader is built once, as an env does). Printed per competition: answer
rows; the best of ``--repeat`` grading times, split into validation alone and the metric alone (both timed
in this process) and the rest (the bounded child's fixed cost: fork, limits, exit); the best time of
``pandas.read_csv`` of the submission plus the answers, in this process and in a child forked as the
grader forks one (the same fork, first touch of fresh pages and exit that every grade pays); and the ratios
of grading to both readings and of validation to reading (target: within 3x on the largest files, so that
validation never dominates). Then the ``levenshtein`` metric on ``--levenshtein-rows`` strings of about 100
characters (bms-molecular-translation's scale; target under 30 s). Prepare's peak memory on large raw files
is ``benchmarks/prepare_memory.py``.

``--real-scale``: the 21 competitions added last (or ``--competitions``), their answers grown to
MLE-bench's real test sets before grading (icecube's 13.2M rows, hubmap's gigapixel masks; see
``benchmarks/real_scale.py``); target: grading within 3x of reading the two files. Skips the levenshtein
line."""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from grading_levenshtein import synthetic as levenshtein_inputs
from real_scale import SCALES, real_scale_answers

from mle_env.competition.registry import get_spec
from mle_env.competition.synthetic import load_synthetic, synthetic_competitions
from mle_env.grading.bounded import run_bounded
from mle_env.grading.grader import Grader
from mle_env.grading.metrics import get_metric
from mle_env.paths import CompetitionPaths, sha256_file
from mle_env.prepare.runner import prepare, seal


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _record_in_manifest(paths: CompetitionPaths, changed: Path) -> None:
    """Let the grader's integrity check accept a prepared file this benchmark rewrote (sealed again, as
    prepare seals it)."""
    manifest = json.loads(paths.manifest.read_text())
    manifest["sha256"][changed.relative_to(paths.prepared).as_posix()] = sha256_file(changed)
    seal(paths.prepared, manifest)


@dataclass(frozen=True)
class Timing:
    """Best-of seconds for one competition's perfect submission."""

    rows: int  # answer rows
    grade: float  # Grader.grade: everything, in the bounded child
    check: float  # validation alone (read, align, convert), in this process
    metric: float  # the metric alone on the validated submission, in this process
    read: float  # pandas.read_csv of the submission plus the answers
    read_in_child: float  # the same read in a child forked as the grader forks one (fork, fresh pages, exit)


def measure(cid: str, work: Path, repeat: int, real_scale: bool = False) -> Timing:
    """Timings for a perfect submission of ``cid``, its answers grown to MLE-bench's size first where
    ``real_scale``."""
    raw, home = work / "raw" / cid, work / "home"
    raw.mkdir(parents=True)
    module = load_synthetic(cid)
    assert module is not None
    module.generate(raw)
    prepare(cid, raw_dir=raw, home=home, verify=False)
    spec = get_spec(cid)
    paths = CompetitionPaths(cid, home)
    answers_path = paths.private / spec.submission.answers
    answers = pd.read_csv(answers_path, dtype=str, keep_default_na=False)
    ids = list(spec.submission.id_columns)
    if real_scale:
        answers = real_scale_answers(cid, answers, tuple(ids))
        answers.to_csv(answers_path, index=False)
        _record_in_manifest(paths, answers_path)
    grader = Grader(spec, home)
    custom = getattr(module, "perfect_submission", None)  # where the answers are not the targets as such
    perfect = custom(answers) if custom else answers[[*ids, *grader.targets]]
    submission = work / f"{cid}.csv"
    perfect.to_csv(submission, index=False)
    if real_scale:
        # the grader warms the metric's imports up on the public sample, so that its children inherit them;
        # the sample's synthetic ids no longer pass against the grown answers, so warm them up here instead
        grader.score(grader.check(submission))
    report = grader.grade(submission)
    assert report.valid_submission, (cid, report.invalid_reason)
    grading = best_of(repeat, lambda: grader.grade(submission))
    checking = best_of(repeat, lambda: grader.check(submission))
    aligned = grader.check(submission)
    scoring = best_of(repeat, lambda: grader.score(aligned))

    def read() -> int:
        return len(pd.read_csv(submission)) + len(pd.read_csv(answers_path))

    reading = best_of(repeat, read)
    reading_in_child = best_of(repeat, lambda: run_bounded(read, memory=16 * 2**30, seconds=600))
    return Timing(len(answers), grading, checking, scoring, reading, reading_in_child)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--competitions", nargs="+", help="ids (default: every competition with synthetic data)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--levenshtein-rows", type=int, default=485_000)
    parser.add_argument("--real-scale", action="store_true",
                        help="grow the answers of the 21 added last to MLE-bench's real test sets first")
    args = parser.parse_args()
    ids = args.competitions or (list(SCALES) if args.real_scale else synthetic_competitions())
    rows = []
    with tempfile.TemporaryDirectory(prefix="mle-env-grading-bench-") as tmp:
        for cid in ids:
            t = measure(cid, Path(tmp), args.repeat, args.real_scale)
            rows.append((cid, t))
            size = f"  ({SCALES[cid].note})" if args.real_scale else ""
            print(f"{cid:55s} {t.rows:>10,} rows  grade {t.grade * 1000:8.1f} ms = check {t.check * 1000:7.1f} + "
                  f"metric {t.metric * 1000:7.1f} + child {max(0.0, t.grade - t.check - t.metric) * 1000:6.1f}  "
                  f"read {t.read * 1000:7.1f} ms ({t.read_in_child * 1000:7.1f} in a child)  "
                  f"grade x{t.grade / t.read:5.1f} (x{t.grade / t.read_in_child:4.1f})  check x{t.check / t.read:4.1f}"
                  f"{size}", flush=True)
    largest = sorted(rows, key=lambda r: -r[1].rows)[:3]
    print("largest answers: " + ", ".join(f"{c} ({t.rows:,} rows) grade x{t.grade / t.read:.1f}, "
                                          f"check x{t.check / t.read:.1f}" for c, t in largest))
    if args.real_scale:
        for what in ("grade", "check"):
            over = [f"{c} x{getattr(t, what) / t.read:.1f}" for c, t in rows if getattr(t, what) > 3 * t.read]
            print(f"{what} over 3x read: " + (", ".join(over) if over else "none"))
        return
    truth, pred = levenshtein_inputs(args.levenshtein_rows, 100, 0)
    metric = get_metric("levenshtein")
    elapsed = best_of(1, lambda: metric(truth, pred))
    print(f"levenshtein on {args.levenshtein_rows:,} strings of ~100 characters: {elapsed:.2f} s")


if __name__ == "__main__":
    main()
