"""Host cost of one ``Grader.validate`` on hostile and normal submission files: wall time and peak memory.

    python benchmarks/validate_cost.py [--answers-rows 100000] [--cases unique wide valid ...] [--workdir DIR]

Builds a throwaway tabular competition (an ``id`` column and one probability ``target``, prepared with
``split_csv``; ``--answers-rows`` test rows) and these submissions:

- ``unique``: just under the grader's size limit (100 MiB) of short unique rows (``u1a2b3,0\\n``), none a
  test id: the old code read it whole (the red team measured 17 s and ~1.1 GiB of host RSS) before noticing
  the row count;
- ``wide``: about 9.9 MB whose header has 1,000,000 columns (the old code parsed the whole file, 60 s and
  ~1 GiB, before looking at the header);
- ``wide1m``: a header of 120,000 columns that fits in the 1 MiB a header may take, and 30 rows;
- ``valid``: a correct submission (the answers' ids, a prediction each);
- ``invalid``: the valid one with one unknown id.

Each file is validated in a fresh Python process (so that ``ru_maxrss`` is that validate's peak alone),
after the grader was built there. Printed per file: its size (MB); the wall time of the first ``validate``
(``s``: it includes the grader's one-time warm-up) and of a second one (``again s``); in MiB, the process's
RSS before the first (``parent RSS``), its peak RSS after it (``peak``, ``RUSAGE_SELF``: mostly the
grader's construction) and how much that peak rose during it (``(+)``: what the validate cost the host
process), and the peak RSS of its children (``child peak``, ``RUSAGE_CHILDREN``: the bounded child that
parses; it counts the pages it shares with the parent, so its own cost is about ``child peak - parent RSS``
after the warm-up); then the verdict. To measure older code, run this file with that code first on
``PYTHONPATH``.

Measured on a shared 2-core container, pandas 3.1 (before: the whole CSV read in this process; after: the
header first, then a chunked parse in a forked child); seconds of the second validate:

    file      MB   before s  (+) MiB   after s  (+) MiB  child peak MiB
    unique   104.9    3.8     +414       4.1       +2        240
    wide       9.9   62.6    +1811       0.00      +0          -
    wide1m     8.0   25.1     +963       0.01      +0          -
    valid      2.8    0.64     +10       0.34      +0        221
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd

CID = "bench-validate-cost"
TOML = f"""
id = "{CID}"
version = 0
title = "Benchmark: the cost of validating hostile files"
domain = "tabular"
split = "practice"

[metric]
name = "auc"
lower_is_better = false

[submission]
id_column = "id"
target_columns = ["target"]
kind = "probability"
answers = "test.csv"
sample_submission = "sample_submission.csv"

[prepare]
helper = "split_csv"

[prepare.params]
file = "data.csv"
test_size = 0.5
id_column = "id"
target_columns = ["target"]
sample_values = {{ target = 0.5 }}
answers_keep = "targets"

[[sources]]
type = "kaggle"

[leaderboard]
source = "bundled"
"""
CASES = ("unique", "wide", "wide1m", "valid", "invalid")
MiB = 2**20


def build_competition(work: Path, answers_rows: int) -> Path:
    """Write and prepare the competition under ``work``; returns the MLE_ENV_HOME it was prepared into."""
    from mle_env.competition.registry import register_competition
    from mle_env.prepare.runner import prepare

    folder, raw, home = work / "competitions" / CID, work / "raw", work / "home"
    folder.mkdir(parents=True)
    raw.mkdir()
    (folder / "competition.toml").write_text(textwrap.dedent(TOML))
    (folder / "description.md").write_text(f"# {CID}\n\nA synthetic competition for a benchmark.\n")
    pd.DataFrame({"score": [0.9, 0.8, 0.7, 0.6, 0.5]}).to_csv(folder / "leaderboard.csv", index=False)
    n = 2 * answers_rows
    rng = np.random.default_rng(0)
    pd.DataFrame({"id": [f"r{i:07d}" for i in range(n)], "x": rng.normal(size=n), "target": np.arange(n) % 2}) \
        .to_csv(raw / "data.csv", index=False)
    register_competition(folder)
    prepare(CID, raw_dir=raw, home=home, verify=False)
    return home


def write_unique(path: Path, size: int) -> None:
    """Short unique rows (``u<hex>,0``) up to just under ``size`` bytes."""
    with path.open("w") as f:
        f.write("id,target\n")
        written, i, block = 10, 0, 100_000
        while written < size - 64 * block:
            text = "".join(f"u{j:x},0\n" for j in range(i, i + block))
            f.write(text)
            written += len(text)
            i += block
        while written < size - 64:
            line = f"u{i:x},0\n"
            f.write(line)
            written += len(line)
            i += 1


def write_wide(path: Path, columns: int = 1_000_000, rows: int = 1) -> None:
    """A header of ``columns`` columns (id, target, then c1, c2, ...) and ``rows`` rows of zeros (1,000,000
    columns and one row: about 9.9 MB)."""
    names = ["id", "target", *(f"c{i}" for i in range(1, columns - 1))]
    path.write_text(",".join(names) + "\n" + (",".join(["0"] * columns) + "\n") * rows)


def write_valid(path: Path, home: Path, broken: bool = False) -> None:
    from mle_env.paths import CompetitionPaths

    answers = pd.read_csv(CompetitionPaths(CID, home).private / "test.csv", dtype={"id": str})
    frame = pd.DataFrame({"id": answers["id"], "target": np.linspace(0.01, 0.99, len(answers))})
    if broken:
        frame.loc[0, "id"] = "not-a-test-id"
    frame.to_csv(path, index=False)


def one(case_file: Path) -> dict[str, object]:
    """In a fresh process: build the grader, then validate ``case_file`` once and measure it."""
    from mle_env.competition.registry import get_spec
    from mle_env.grading.grader import Grader

    grader = Grader(get_spec(CID))
    with open("/proc/self/statm") as f:
        current = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    start = time.perf_counter()
    verdict = grader.validate(case_file)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    start = time.perf_counter()
    again = grader.validate(case_file)
    assert again == verdict, (verdict, again)
    return dict(verdict=verdict, seconds=seconds, again=time.perf_counter() - start, current=current,
                before=before, after=after, children=children)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers-rows", type=int, default=100_000)
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--workdir", type=Path, help="where the files go (default: a temporary folder)")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # internal: measure one file
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(one(args.one)))
        return
    with tempfile.TemporaryDirectory(prefix="mle-env-validate-cost-", dir=args.workdir) as tmp:
        work = Path(tmp)
        home = build_competition(work, args.answers_rows)
        from mle_env.competition.registry import get_spec
        from mle_env.grading.grader import Grader

        max_bytes = Grader(get_spec(CID), home).max_bytes
        env = dict(os.environ, MLE_ENV_HOME=str(home), MLE_ENV_COMPETITIONS=str(work / "competitions"))
        print(f"{'file':8s} {'MB':>6s} {'s':>6s} {'again s':>7s} {'parent RSS':>10s} {'peak':>5s} {'(+)':>5s} "
              f"{'child peak':>10s}  verdict  (memory in MiB)")
        for case in args.cases:
            path = work / f"{case}.csv"
            if case == "unique":
                write_unique(path, max_bytes - 1024)
            elif case == "wide":
                write_wide(path)
            elif case == "wide1m":
                write_wide(path, 120_000, rows=30)
            else:
                write_valid(path, home, broken=case == "invalid")
            out = subprocess.run([sys.executable, __file__, "--one", str(path)], env=env, capture_output=True,
                                 text=True, check=False)
            if out.returncode != 0:
                print(f"{case:8s} failed: {out.stderr.strip()[-500:]}")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"{case:8s} {path.stat().st_size / 1e6:6.1f} {r['seconds']:6.2f} {r['again']:7.2f} "
                  f"{r['current'] / MiB:10.0f} {r['after'] / MiB:5.0f} {(r['after'] - r['before']) / MiB:+5.0f} "
                  f"{r['children'] / MiB:10.0f}  {r['verdict'][:60]}", flush=True)
            path.unlink()


if __name__ == "__main__":
    main()
