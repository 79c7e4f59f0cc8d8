"""The practice pool, task by task: prepare time, the offline baseline's score and medal, and AIDE's (offline
proposer, 4 nodes); then the medal distribution across the pool.

    python benchmarks/practice_pool.py [--competitions practice] [--agents baseline,aide] [--workers 2]
                                       [--save rows.json] [--report rows.json]

Each competition is prepared fresh into a temporary home (the PyPI downloads are shared through
``--cache``, default ``~/.cache/mle-env``'s package cache, so only the first run downloads), and each agent
plays one episode, seed 0, with a 1800 s budget and the machine's cores shared out among the workers
(``cpus``: OpenMP threads that do not oversubscribe). The summary counts gold, silver, bronze and no medal per
agent: the pool is meant to spread, not to hand the baseline gold everywhere.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

AGENT_OPTIONS = {"baseline": {}, "aide": {"proposer": "offline", "max_nodes": 4}}


def measure(cid: str, agents: list[str], sandbox: str, cpus: int) -> dict:
    """Prepare ``cid`` and play one episode per agent; the row of the table."""
    import mle_env
    from mle_env.prepare.runner import prepare

    began = time.monotonic()
    prepare(cid)
    row = {"competition": cid, "prepare_s": time.monotonic() - began, "agents": {}}
    for agent in agents:
        env = mle_env.make(cid, sandbox=sandbox, time_limit=1800, cpus=cpus)
        began = time.monotonic()
        result = mle_env.run_episode(env, mle_env.make_policy(agent, **AGENT_OPTIONS[agent]), seed=0)
        env.close()
        grade = result.grade
        scored = bool(grade and grade.scored)
        row["agents"][agent] = {"score": grade.score if scored else None, "status": result.status,
                                "wall_s": time.monotonic() - began}
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--competitions", nargs="*", default=["practice"], help="ids or sets (default practice)")
    parser.add_argument("--agents", default="baseline,aide")
    parser.add_argument("--sandbox", default="local")
    parser.add_argument("--workers", type=int, default=1, help="competitions at a time, each in its own process")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "mle-env",
                        help="a home whose .pypi-cache holds the packages already downloaded")
    parser.add_argument("--save", type=Path, help="also write the measured rows here (JSON)")
    parser.add_argument("--report", type=Path, metavar="JSON",
                        help="print the table of rows saved earlier with --save (medals from today's leaderboards)")
    args = parser.parse_args()
    if args.report:
        saved = json.loads(args.report.read_text())
        report(saved["rows"], saved["agents"])
        return
    work = Path(tempfile.mkdtemp(prefix="practice-pool-"))
    os.chmod(work, 0o755)  # the local sandbox's user must reach the prepared files
    cached = args.cache / ".pypi-cache"
    if cached.is_dir():
        (work / ".pypi-cache").symlink_to(cached.resolve())
    os.environ["MLE_ENV_HOME"] = str(work)

    from mle_env.competition.registry import select_competitions

    agents = args.agents.split(",")
    competitions = select_competitions(args.competitions)
    rows = []
    began = time.monotonic()
    try:
        with ProcessPoolExecutor(args.workers) as pool:
            cpus = max(1, (os.cpu_count() or 1) // args.workers)  # OpenMP threads that do not oversubscribe
            futures = [pool.submit(measure, cid, agents, args.sandbox, cpus) for cid in competitions]
            for done, future in enumerate(as_completed(futures), 1):
                rows.append(future.result())
                print(f"[{done}/{len(competitions)}] {rows[-1]['competition']}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows.sort(key=lambda r: r["competition"])
    if args.save:
        args.save.write_text(json.dumps({"agents": agents, "rows": rows}, indent=1))
    report(rows, agents)
    print(f"{len(competitions)} competitions in {time.monotonic() - began:.0f} s with {args.workers} worker(s)")


def report(rows: list[dict], agents: list[str]) -> None:
    """The table and the medal distribution. Medals are read off each competition's shipped leaderboard now,
    at the end, so a leaderboard rebuilt while the episodes ran is the one that counts."""
    from mle_env.competition.registry import get_spec
    from mle_env.grading.leaderboard import read_leaderboard
    from mle_env.grading.medals import medal_for, medal_thresholds

    medals: dict[str, collections.Counter] = {a: collections.Counter() for a in agents}
    print(f"{'competition':30} {'prep':>6} " + " ".join(f"{a + ' score':>14} {'medal':7} {'wall':>6}" for a in agents))
    for row in rows:
        spec = get_spec(row["competition"])
        thresholds = medal_thresholds(read_leaderboard(spec.bundled_leaderboard).scores, spec.metric.lower_is_better)
        cells = [f"{row['competition']:30} {row['prepare_s']:5.1f}s"]
        for agent in agents:
            r = row["agents"][agent]
            medal = medal_for(r["score"], thresholds).name.lower() if r["score"] is not None else "invalid"
            medals[agent][medal] += 1
            score = f"{r['score']:.5g}" if r["score"] is not None else r["status"]
            cells.append(f"{score:>14} {medal:7} {r['wall_s']:5.0f}s")
        print(" ".join(cells))
    for agent, counts in medals.items():
        parts = ", ".join(f"{k} {counts[k]}" for k in ("gold", "silver", "bronze", "none", "invalid") if counts[k])
        print(f"{agent}: {parts} (of {sum(counts.values())})")


if __name__ == "__main__":
    main()
