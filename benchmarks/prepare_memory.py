"""Peak host memory and time of preparing a large CSV with the streamed (chunked) split_csv.

    python benchmarks/prepare_memory.py [--gb 3] [--chunk-rows 200000] [--workdir DIR] [--keep]

Writes a synthetic labelled CSV of about ``--gb`` GB (ventilator-like numeric columns plus a text column),
a throwaway competition folder that splits it with ``split_csv``, then runs ``mle-env``'s real ``prepare``
in a child process and prints that child's peak resident memory (``ru_maxrss``) and wall time. The raw
file, its prepared copy and the split's scratch buckets together take about 3.5 times ``--gb``; the run is
refused when that exceeds a quarter of the free disk at ``--workdir``. Target: peak under 2 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.prepare.runner import remove_tree

FOOTPRINT = 3.5
ROWS_PER_BLOCK = 500_000
WORDS = np.array(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"])

TOML = """
id = "bench-large-csv"
version = 0
title = "Benchmark: a large CSV split in chunks"
domain = "tabular"
split = "practice"

[metric]
name = "mae"
lower_is_better = true

[submission]
id_column = "id"
target_columns = ["pressure"]
kind = "number"
answers = "test.csv"
sample_submission = "sample_submission.csv"

[prepare]
helper = "split_csv"

[prepare.params]
file = "train.csv"
test_size = 0.1
id_column = "id"
target_columns = ["pressure"]
sample_values = {{ pressure = 0 }}
chunk_rows = {chunk_rows}

[[sources]]
type = "none"
files = ["train.csv"]

[leaderboard]
source = "bundled"
"""


def block(start: int, rows: int, rng: np.random.Generator) -> pd.DataFrame:
    """Rows ``start`` .. ``start + rows`` of the synthetic table (about 150 bytes a row as CSV)."""
    ids = np.arange(start, start + rows)
    note = WORDS[rng.integers(0, len(WORDS), (rows, 4))]
    return pd.DataFrame({
        "id": ids + 1,
        "breath_id": ids // 80,
        "R": rng.choice([5, 20, 50], rows),
        "C": rng.choice([10, 20, 50], rows),
        "time_step": rng.random(rows) * 3,
        "u_in": rng.random(rows) * 100,
        "u_out": rng.integers(0, 2, rows),
        "note": [" ".join(words) for words in note],
        "pressure": rng.normal(10, 5, rows),
    })


def write_csv(path: Path, gigabytes: float) -> int:
    """Write the synthetic CSV until it reaches ``gigabytes``; returns the number of rows."""
    rng = np.random.default_rng(0)
    target, rows = gigabytes * 1e9, 0
    with open(path, "w", newline="") as f:
        while f.tell() < target:
            block(rows, ROWS_PER_BLOCK, rng).to_csv(f, index=False, header=rows == 0)
            rows += ROWS_PER_BLOCK
    return rows


CHILD = """
import json, sys, time
from mle_env.prepare.runner import prepare
started = time.monotonic()
result = prepare("bench-large-csv", raw_dir=sys.argv[1], verify=False)
print(json.dumps({"seconds": time.monotonic() - started, "public_bytes": result.public_bytes,
                  "private_bytes": result.private_bytes}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=3.0, help="size of the synthetic CSV in GB (default 3)")
    parser.add_argument("--chunk-rows", type=int, default=200_000, help="rows per chunk (default 200000)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()), help="where to write")
    parser.add_argument("--keep", action="store_true", help="keep the files afterwards")
    args = parser.parse_args()

    free = shutil.disk_usage(args.workdir).free
    if FOOTPRINT * args.gb * 1e9 > free / 4:
        print(f"error: {args.gb:g} GB needs about {FOOTPRINT * args.gb:.1f} GB, over a quarter of the "
              f"{free / 1e9:.1f} GB free at {args.workdir}; pass a smaller --gb", file=sys.stderr)
        return 2
    root = Path(tempfile.mkdtemp(prefix="mle-env-prepare-memory-", dir=args.workdir))
    try:
        folder, raw, home = root / "competitions" / "bench-large-csv", root / "raw", root / "home"
        folder.mkdir(parents=True)
        raw.mkdir()
        (folder / "competition.toml").write_text(textwrap.dedent(TOML.format(chunk_rows=args.chunk_rows)))
        (folder / "description.md").write_text("# A large synthetic CSV\n\nFor the prepare memory benchmark.\n")
        (folder / "leaderboard.csv").write_text("score\n1\n2\n3\n")
        started = time.monotonic()
        rows = write_csv(raw / "train.csv", args.gb)
        size = (raw / "train.csv").stat().st_size
        print(f"raw CSV: {size / 1e9:.2f} GB, {rows:,} rows, written in {time.monotonic() - started:.0f} s")
        env = dict(os.environ, MLE_ENV_COMPETITIONS=str(folder.parent), MLE_ENV_HOME=str(home),
                   MLE_ENV_NO_PROGRESS="1")
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-c", CHILD, str(raw)], env=env, capture_output=True, text=True)
        wall = time.monotonic() - started
        if done.returncode != 0:
            print(done.stderr[-3000:], file=sys.stderr)
            return 1
        result = json.loads(done.stdout.strip().splitlines()[-1])
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20  # KiB on Linux -> GiB
        print(f"prepare (chunk_rows={args.chunk_rows:,}): {wall:.0f} s wall ({result['seconds']:.0f} s in prepare), "
              f"{size / 1e6 / wall:.0f} MB/s of raw CSV")
        print(f"peak host memory of the prepare process (ru_maxrss): {peak:.2f} GiB (target < 2 GiB)")
        print(f"outputs: public {result['public_bytes'] / 1e9:.2f} GB, private {result['private_bytes'] / 1e9:.2f} GB")
    finally:
        if not args.keep:
            remove_tree(root)
        else:
            print(f"kept {root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
