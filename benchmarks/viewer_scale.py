"""How ``mle-env view`` copes with a large evaluation: 10,000 episodes.

    python benchmarks/viewer_scale.py [--competitions 500] [--seeds 20] [--keep DIR]

Writes a synthetic run folder (config.json, results.jsonl, and a small episode folder per episode: a
trajectory of 3 steps, grade.json), then prints: the time to build the index (the run's summary as
``mle-env report`` computes it, and the table's columns) and the size of the first data file the page
loads (data/index.js); then, served on 127.0.0.1 and opened in headless Chromium (Debian's ``chromium``
and the ``playwright`` package), the time from navigation to the evaluation page showing its table, and
the time from a click on a row to the episode's timeline. Target: the evaluation page in under 2 s.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import threading
import time
from pathlib import Path

from mle_env.viewer.index import ViewIndex
from mle_env.viewer.server import ViewServer


def write_run(out: Path, competitions: int, seeds: int) -> int:
    """The synthetic run; returns how many episodes it holds."""
    rng = random.Random(0)
    out.mkdir(parents=True, exist_ok=True)
    cids = [f"synthetic-competition-{c:04d}" for c in range(competitions)]
    medals = [None, None, None, "bronze", "silver", "gold"]
    with open(out / "results.jsonl", "w") as results:
        for cid in cids:
            for seed in range(seeds):
                folder = out / "trajectories" / f"{cid}-{seed:03d}"
                folder.mkdir(parents=True)
                medal = rng.choice(medals)
                score = rng.random()
                grade = {"competition_id": cid, "status": "graded", "score": score, "valid_submission": True,
                         "medal": medal, "medal_tier": {"bronze": 1, "silver": 2, "gold": 3}.get(medal or "", 0),
                         "any_medal": medal is not None, "above_median": score > 0.5, "is_lower_better": False,
                         "percentile": score, "gold_threshold": 0.95}
                steps = [{"type": "step", "step": n, "kind": "shell", "action": {"type": "shell", "code": f"echo {n}"},
                          "stdout": f"line {n}\n" * 20, "stderr": "", "message": "", "exit_code": 0,
                          "timed_out": False, "started_at": float(n), "duration_s": 0.5, "time_left": 100.0 - n,
                          "steps_left": -1} for n in range(1, 4)]
                records = [{"type": "header", "format": 1, "competition_id": cid, "seed": seed, "sandbox": "local",
                            "task": f"# {cid}\n" + "the task text\n" * 50},
                           *steps, {"type": "footer", "status": "submitted", "steps": 3, "elapsed_s": 10.0,
                                    "reward": 1.0, "grade": grade}]
                (folder / "trajectory.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
                (folder / "grade.json").write_text(json.dumps(grade))
                results.write(json.dumps({
                    "competition_id": cid, "split": rng.choice(["lite", "medium", "hard"]), "seed": seed,
                    "attempt": 0, "agent": "synthetic", "status": "ok", "end": "submitted", "grade": grade,
                    "reward": 1.0, "steps": 3, "wall_time_s": rng.uniform(60, 86400), "error": None,
                    "trajectory": str(folder / "trajectory.jsonl"),
                    "disclosure": {"llm": {"calls": 3, "prompt_tokens": 3000, "completion_tokens": 300,
                                           "cost": rng.uniform(0, 2)}}}) + "\n")
    (out / "config.json").write_text(json.dumps({"agent": "synthetic", "competitions": cids, "seeds": seeds,
                                                 "splits": {}, "scheduled": {c: seeds for c in cids}}))
    return competitions * seeds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--competitions", type=int, default=500)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--keep", type=Path, help="write the run here and keep it (default: a temporary folder)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    scratch = None if args.keep else Path(tempfile.mkdtemp(prefix="mle-env-viewer-scale-"))
    run = args.keep or scratch / "run"  # type: ignore[operator]
    try:
        started = time.perf_counter()
        n = write_run(run, args.competitions, args.seeds)
        print(f"wrote a run of {n} episodes in {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        index = ViewIndex([run])
        first = index.script("index")
        assert first is not None
        print(f"index build time: {time.perf_counter() - started:.2f} s; first data file (data/index.js): "
              f"{len(first) / 1024:.0f} KiB")
        server = ViewServer(index, "127.0.0.1", 0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto("about:blank")
            started = time.perf_counter()
            page.goto(server.url)
            page.wait_for_selector("table.episodes tr.row")
            paint = time.perf_counter() - started
            rows = page.locator("table.episodes tr.row").count()
            print(f"evaluation page, navigation to its table shown: {paint:.2f} s ({rows} rows of the first page)")
            started = time.perf_counter()
            page.click("table.episodes tr.row >> nth=5")
            page.wait_for_selector("section.step")
            print(f"open one episode (click to its timeline shown): {time.perf_counter() - started:.2f} s")
            page.goto(server.url + "#/")
            page.wait_for_selector("table.episodes tr.row")
            started = time.perf_counter()
            page.fill("#search", "synthetic-competition-0001")
            page.wait_for_selector(f"text={args.seeds} of {n} episodes")
            print(f"first text search (loads the search text of every episode): {time.perf_counter() - started:.2f} s")
            browser.close()
        server.shutdown()
        server.server_close()
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
