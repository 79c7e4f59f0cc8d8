"""Peak host memory, time and disk of preparing data at MLE-bench's scale: a large CSV split in chunks, and
an image competition whose public files are hard links of the raw ones (or copies).

    python benchmarks/prepare_memory.py [--gb 3] [--chunk-rows 200000] [--workdir DIR] [--keep]
    python benchmarks/prepare_memory.py --images-gb 20 [--workdir DIR]

Writes a synthetic labelled CSV of about ``--gb`` GB (ventilator-like numeric columns plus a text column),
a throwaway competition folder that splits it with ``split_csv``, then runs ``mle-env``'s real ``prepare``
in a child process and prints that child's peak resident memory (``ru_maxrss``) and wall time. The raw
file, its prepared copy and the split's scratch buckets together take about 3.5 times ``--gb``; the run is
refused when that exceeds a quarter of the free disk at ``--workdir``. Target: peak under 2 GB.

``--images-gb``: a throwaway image competition of that many GB of raw image files (200 KB each, in
``<home>/<id>/raw/images/``, mle-env's raw cache as a finished Kaggle download leaves it; 10 % held out as
test), prepared twice: once with the public files hard-linked to the raw ones (what the prepare helpers do
with mle-env's own raw cache) and once copied (as for a ``--raw-dir`` the user owns, or across
filesystems). For each: the peak memory, the wall time, and the disk the prepared data adds beyond the raw
files (blocks of files not shared with raw, each inode counted once). Needs about 2.2 times
``--images-gb`` free (raw plus one copy at a time).
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

from mle_env.prepare.runner import RAW_COMPLETE, remove_tree

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


IMAGES_TOML = """
id = "bench-images"
version = 0
title = "Benchmark: many image files"
domain = "image"
split = "practice"

[metric]
name = "mae"
lower_is_better = true

[submission]
id_column = "id"
target_columns = ["label"]
kind = "number"
answers = "test.csv"
sample_submission = "sample_submission.csv"

[prepare]
script = "prepare.py"

[[sources]]
type = "kaggle"

[leaderboard]
source = "bundled"
"""

IMAGES_PREPARE = """
import os
import pandas as pd
from mle_env.prepare.helpers import place_files

def prepare(ctx):
    link = os.environ["BENCH_LINK"] == "1"
    labels = pd.read_csv(ctx.raw_file("labels.csv"), dtype={"id": str})
    test = labels.iloc[::10]
    train = labels.drop(test.index)
    for name, rows in (("train", train), ("test", test)):
        place_files(((ctx.raw / "images" / f"{i}.png", ctx.public / name / f"{i}.png") for i in rows["id"]),
                    link=link and ctx.may_link(ctx.raw))
    train.to_csv(ctx.public / "train.csv", index=False)
    test[["id"]].assign(label=0).to_csv(ctx.public / "sample_submission.csv", index=False)
    test.to_csv(ctx.private / "test.csv", index=False)
"""

IMAGE_BYTES = 200_000


def unique_bytes(folder: Path, exclude: set[tuple[int, int]] = frozenset()) -> tuple[int, set[tuple[int, int]]]:
    """Disk blocks (bytes) of the files under ``folder`` whose inode is not in ``exclude``, each inode once,
    and the inodes seen."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for path in folder.rglob("*"):
        st = path.lstat()
        key = (st.st_dev, st.st_ino)
        if path.is_file() and key not in seen and key not in exclude:
            seen.add(key)
            total += st.st_blocks * 512
    return total, seen


def images_benchmark(root: Path, gigabytes: float) -> None:
    """Write the raw images once, then prepare them hard-linked and copied (see the module docstring)."""
    folder, home = root / "competitions" / "bench-images", root / "home"
    folder.mkdir(parents=True)
    (folder / "competition.toml").write_text(textwrap.dedent(IMAGES_TOML))
    (folder / "prepare.py").write_text(textwrap.dedent(IMAGES_PREPARE))
    (folder / "description.md").write_text("# Many images\n\nFor the prepare disk benchmark.\n")
    (folder / "leaderboard.csv").write_text("score\n0.1\n0.5\n0.9\n")
    raw = home / "bench-images" / "raw"
    (raw / "images").mkdir(parents=True)
    count = int(gigabytes * 1e9 / IMAGE_BYTES)
    started = time.monotonic()
    rng = np.random.default_rng(0)
    payload = rng.integers(0, 256, IMAGE_BYTES, dtype=np.uint8).tobytes()
    for i in range(count):
        (raw / "images" / f"{i:07d}.png").write_bytes(i.to_bytes(8, "little") + payload[8:])
    pd.DataFrame({"id": [f"{i:07d}" for i in range(count)], "label": np.arange(count) % 10}).to_csv(
        raw / "labels.csv", index=False)
    (raw / RAW_COMPLETE).write_text("kaggle")  # as a finished download leaves mle-env's own raw cache
    raw_bytes, raw_inodes = unique_bytes(raw)
    print(f"raw: {count:,} image files, {raw_bytes / 1e9:.2f} GB on disk, written in "
          f"{time.monotonic() - started:.0f} s")
    for link in (True, False):
        env = dict(os.environ, MLE_ENV_COMPETITIONS=str(folder.parent), MLE_ENV_HOME=str(home),
                   MLE_ENV_NO_PROGRESS="1", BENCH_LINK="1" if link else "0")
        child = CHILD.replace("bench-large-csv", "bench-images").replace("raw_dir=sys.argv[1], ", "force=True, ")
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-c", child, "-"], env=env, capture_output=True, text=True)
        wall = time.monotonic() - started
        if done.returncode != 0:
            raise SystemExit(done.stderr[-3000:])
        peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 2**20
        added, _ = unique_bytes(home / "bench-images" / "prepared", raw_inodes)
        print(f"prepare with public files {'hard-linked' if link else 'copied'}: {wall:.0f} s wall, peak memory "
              f"{peak:.2f} GiB (the largest of the runs so far), disk added beyond raw {added / 1e9:.2f} GB "
              f"({100 * added / raw_bytes:.1f} % of raw)")


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
    parser.add_argument("--images-gb", type=float,
                        help="instead: an image competition of this many GB, prepared with links and with copies")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.images_gb:
        free = shutil.disk_usage(args.workdir).free
        if 2.2 * args.images_gb * 1e9 > free * 0.8:
            print(f"error: {args.images_gb:g} GB of images need about {2.2 * args.images_gb:.0f} GB, over 80 % of the "
                  f"{free / 1e9:.0f} GB free at {args.workdir}; pass a smaller --images-gb", file=sys.stderr)
            return 2
        root = Path(tempfile.mkdtemp(prefix="mle-env-prepare-images-", dir=args.workdir))
        try:
            images_benchmark(root, args.images_gb)
        finally:
            if not args.keep:
                remove_tree(root)
        return 0

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
