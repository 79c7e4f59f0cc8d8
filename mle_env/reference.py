"""Reference leaderboards for practice competitions.

A practice competition has no human leaderboard, so it ships one built from a documented population of
reference solutions of varied strength (its folder's ``reference.py``: ``solutions() ->
list[ReferenceSolution]``). Each solution reads the prepared public files and returns a submission; every
submission is graded on the private answers and the scores become ``leaderboard.csv`` in MLE-bench's
format (plus a ``teamName`` column naming the solution), best first. All solutions are seeded, so a
rebuild gives the same file:

    mle-env reference-leaderboard practice-house-prices

Two things besides the seeds decide a score's fifth decimal, and both are fixed:

- the library versions: requirements.lock pins them, and the versions a leaderboard was built with are
  written beside it (``reference-versions.json``); the reproduction test names them when it fails;
- the CPU: numpy picks SIMD code for the CPU it runs on (AVX-512, AVX2, ...), and those paths order ties
  differently (``argsort`` of equal counts picks another TF-IDF vocabulary) and round sums differently,
  which moved scores by up to 5e-4 between machines; OpenBLAS likewise picks kernels per CPU and splits
  work by thread count. So the solutions always run pinned (``PINNED``): numpy held to its baseline code
  (``NPY_DISABLE_CPU_FEATURES`` naming every dispatched feature), OpenBLAS to its Nehalem kernels (x86-64)
  and one thread, OpenMP to one thread; in a child process (``python -m mle_env.reference build|score
  ...``) when this one was not started pinned, since these take effect when the libraries load.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env import reference_population
from mle_env.competition.registry import get_spec
from mle_env.competition.spec import CompetitionSpec
from mle_env.errors import MleEnvError
from mle_env.grading.grader import Grader
from mle_env.prepare.runner import prepare
from mle_env.reference_solution import ReferenceSolution

SUBMISSION_DATE = "2026-11-30 00:00:00"  # fixed so that rebuilds are byte-identical
VERSIONS_FILE = "reference-versions.json"
# the distributions the reference solutions' scores depend on
SCORE_LIBRARIES = ("numpy", "scipy", "pandas", "scikit-learn")


def load_solutions(competition: str) -> list[ReferenceSolution]:
    """The population from the competition folder's reference.py; a ``table_split`` practice competition
    without one gets the shared population (:mod:`mle_env.reference_population`)."""
    spec = get_spec(competition)
    path = spec.folder / "reference.py"
    if not path.is_file() and spec.prepare.helper == "table_split" and spec.split == "practice":
        return reference_population.solutions(spec)
    if not path.is_file():
        raise MleEnvError(f"{spec.id} has no reference.py; only practice competitions have reference solutions")
    module_spec = importlib.util.spec_from_file_location(f"mle_env_reference_{spec.id.replace('-', '_')}", path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return list(module.solutions())


def _numpy_cpu() -> tuple[list[str], list[str], dict[str, bool]]:
    """numpy's baseline SIMD features, those it dispatches at run time, and those this process uses."""
    try:
        from numpy._core import _multiarray_umath as umath  # numpy >= 2
    except ImportError:  # pragma: no cover - numpy 1.x
        from numpy.core import _multiarray_umath as umath
    return list(umath.__cpu_baseline__), list(umath.__cpu_dispatch__), dict(umath.__cpu_features__)


def pinned_variables() -> dict[str, str]:
    """The environment that makes the solutions' arithmetic independent of the CPU and its core count."""
    pins = {"NPY_DISABLE_CPU_FEATURES": " ".join(_numpy_cpu()[1])}
    if platform.machine().lower() in ("x86_64", "amd64"):
        pins["OPENBLAS_CORETYPE"] = "Nehalem"  # SSE4.2 kernels, as numpy's x86-64-v2 baseline
    pins.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return pins


def pinned() -> bool:
    """Whether this process runs pinned: numpy dispatches to none of its SIMD extensions and the
    variables of ``pinned_variables()`` were set when it started."""
    _, dispatch, features = _numpy_cpu()
    if any(features.get(name) for name in dispatch):
        return False
    return all(os.environ.get(k) == v for k, v in pinned_variables().items() if k != "NPY_DISABLE_CPU_FEATURES")


def installed_versions() -> dict[str, str]:
    """What the scores depend on here: Python's and each ``SCORE_LIBRARIES`` version, the machine
    architecture, numpy's baseline SIMD level and the pinning the solutions run under."""
    versions = {"python": platform.python_version()}
    for name in SCORE_LIBRARIES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    versions["machine"] = platform.machine()
    versions["numpy-simd"] = "baseline " + "+".join(_numpy_cpu()[0])
    versions["pinned"] = " ".join(f"{k}={v}" for k, v in pinned_variables().items()
                                  if k != "NPY_DISABLE_CPU_FEATURES")
    return versions


def versions_path(leaderboard: Path) -> Path:
    """Where the library versions of the leaderboard at ``leaderboard`` are recorded."""
    return leaderboard.with_name(VERSIONS_FILE)


def recorded_versions(competition: str) -> dict[str, str] | None:
    """The versions the shipped leaderboard of ``competition`` was built with (None if not recorded)."""
    board = get_spec(competition).bundled_leaderboard
    path = versions_path(board) if board else None
    if path is None or not path.is_file():
        return None
    return dict(json.loads(path.read_text())["versions"])


def versions_note(competition: str) -> str:
    """One line for a failure message: the versions the leaderboard was built with vs those installed."""
    built = recorded_versions(competition)
    here = installed_versions()
    if built is None:
        return f"{competition}'s leaderboard records no library versions; installed: {here}"
    differ = {k: (built.get(k), here.get(k)) for k in sorted(set(built) | set(here)) if built.get(k) != here.get(k)}
    if not differ:
        return (f"built with {built}, the same versions as installed "
                "(so the solutions, their data or the platform changed)")
    changes = ", ".join(f"{k} {old} (built) vs {new} (installed)" for k, (old, new) in differ.items())
    return (f"{competition}'s leaderboard was built with {built}; installed differs: {changes}. "
            "Install the locked versions (pip install -r requirements.lock) or rebuild it "
            f"(mle-env reference-leaderboard {competition})")


def _run_pinned(args: list[str], log: Callable[[str], None]) -> list[str]:
    """Run ``python -m mle_env.reference ARGS`` pinned (``pinned_variables``); pass its output lines to
    ``log`` and return them."""
    # stderr goes to a file, not a pipe: a child that wrote more than a pipe holds to stderr while this
    # reads its stdout would wait for this, and this for it
    with tempfile.TemporaryFile("w+") as stderr:
        child = subprocess.Popen([sys.executable, "-m", "mle_env.reference", *args],
                                 env={**os.environ, **pinned_variables()},
                                 stdout=subprocess.PIPE, stderr=stderr, text=True)
        assert child.stdout is not None
        lines = []
        for line in child.stdout:
            lines.append(line.rstrip("\n"))
            log(lines[-1])
        child.wait()
        stderr.seek(0)
        err = stderr.read()
    if child.returncode != 0:
        raise MleEnvError(f"the reference solutions failed (python -m mle_env.reference {' '.join(args)}): "
                          + (err.strip()[-3000:] or f"exit status {child.returncode}"))
    return lines


def _score(spec: CompetitionSpec, names: list[str] | None, say: Callable[[str], None]) -> list[dict]:
    """Run and grade the named reference solutions (all when None), in this process."""
    if not pinned():
        raise MleEnvError(f"the reference solutions must run pinned ({pinned_variables()}); "
                          "numpy still dispatches to this CPU's SIMD code or a variable is missing")
    prepare(spec.id)
    grader = Grader(spec)
    public = grader.paths.public
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for index, solution in enumerate(load_solutions(spec.id)):
            if names is not None and solution.name not in names:
                continue
            started = time.monotonic()
            path = Path(tmp) / f"{index}.csv"
            solution.predict(public).to_csv(path, index=False)
            score = grader.score(grader.check(path))
            rows.append({"teamName": solution.name, "score": score})
            say(f"{solution.name}: {score:.5f} ({time.monotonic() - started:.1f} s)")
    return rows


def reference_scores(competition: str, names: list[str] | None = None) -> dict[str, float]:
    """The scores of the named reference solutions (all when None), computed as the leaderboard's were
    (pinned, in a child process unless this one already is)."""
    spec = get_spec(competition)
    if pinned():
        rows = _score(spec, names, lambda _line: None)
    else:
        lines = _run_pinned(["score", spec.id, *(names or [])], lambda _line: None)
        rows = json.loads(lines[-1])
    return {row["teamName"]: row["score"] for row in rows}


def build_reference_leaderboard(
    competition: str, out: Path | None = None, log: Callable[[str], None] | None = None
) -> Path:
    """Run every reference solution, grade it, and write the leaderboard (default: the folder's
    leaderboard.csv) and, beside it, the versions it was built with (``reference-versions.json``).
    The solutions run pinned (in a child process unless this one already is). Returns the leaderboard's
    path."""
    say = log or (lambda _line: None)
    spec = get_spec(competition)
    target = Path(out) if out else spec.folder / "leaderboard.csv"
    if pinned():
        _build(spec, target, say)
    else:
        _run_pinned(["build", spec.id, "--out", str(target)], say)
    return target


def _build(spec: CompetitionSpec, target: Path, say: Callable[[str], None]) -> None:
    """Score every solution here and write the leaderboard and its versions file."""
    rows = _score(spec, None, say)
    board = pd.DataFrame(rows).sort_values(
        "score", ascending=spec.metric.lower_is_better, kind="stable"
    ).reset_index(drop=True)
    board.insert(0, "scoreNullable", board["score"])
    board.insert(1, "teamId", np.arange(1, len(board) + 1))
    board.insert(2, "hasTeamName", True)
    board.insert(3, "submissionDate", SUBMISSION_DATE)
    board["hasScore"] = True
    board = board[["scoreNullable", "teamId", "hasTeamName", "submissionDate", "score", "hasScore", "teamName"]]
    board.to_csv(target, index=False)
    record = {
        "competition_id": spec.id,
        "note": ("what the scores of leaderboard.csv were computed with (mle_env/reference.py); "
                 "requirements.lock pins these versions"),
        "versions": installed_versions(),
    }
    versions_path(target).write_text(json.dumps(record, indent=2) + "\n")


def _main(argv: list[str]) -> int:
    """``python -m mle_env.reference build ID --out PATH`` or ``... score ID [NAME ...]`` (prints JSON);
    run pinned by the functions above."""
    command, competition, *rest = argv
    spec = get_spec(competition)
    if command == "build":  # _score refuses to run unless pinned
        _build(spec, Path(rest[1]) if rest[:1] == ["--out"] else spec.folder / "leaderboard.csv",
               lambda line: print(line, flush=True))
    elif command == "score":
        print(json.dumps(_score(spec, rest or None, lambda _line: None)), flush=True)
    else:
        raise SystemExit(f"unknown command {command!r}")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
