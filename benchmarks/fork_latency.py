"""Fork latency against reset latency, per sandbox backend, for an episode whose workspace holds 100 MB.

    python benchmarks/fork_latency.py [--forks 5] [--mb 100] [--competition ID] [--backends docker,local]
                                      [--small-mb 20] [--aide-nodes 8]

The workspace gets ``--mb`` MB: ``--small-mb`` of it as 10 KB files under ./logs (many small files are what
a pip install or a checkpoint folder leaves), the rest in one random file under ./code. Creating a file
costs far more than copying its bytes (about 0.6 ms per file on this project's ext4 test machine, ``cp -a``
alike), so the small files set the fork's price. Prints p50/p95 of
``env.reset()`` of another env (a fresh, empty sandbox: warm caches), of ``env.unwrapped.fork()`` of that
episode, and of closing a fork (which removes its snapshot); resets and forks alternate, so that both meet
the same load on a shared machine. Target: fork p50 no slower than twice reset p50.

Then what AIDE's ``fork=True`` saves (offline proposer, local sandbox): each improve or debug child starts
from a fork of its parent's state. Without forks, giving a child its parent's exact state in a sandbox of
its own means re-running from scratch: a reset, the setup (looking at the data, mlkit, the profile) and
the parent's program. Printed: the sum of both over the branched children, from the run's own timings.
Needs a prepared competition (default: practice-house-prices, prepared on the fly).
"""

from __future__ import annotations

import argparse
import statistics
import time

import mle_env
from mle_env.prepare.runner import prepare


def p50_p95(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def fill_action(mb: int, small_mb: int = 20) -> str:
    big, small = mb - small_mb, small_mb * 100  # MB in one file; number of 10 KB files
    return (f"head -c {big}M /dev/urandom > code/weights.bin && mkdir -p logs/many && "
            f"for i in $(seq {small}); do head -c 10240 /dev/urandom > logs/many/f$i; done && du -sh code logs")


def measure(competition: str, backend: str, forks: int, mb: int, small_mb: int) -> dict[str, tuple[float, float]]:
    """Resets of one env and forks of another, alternated, so that both meet the same load on the machine."""
    env = mle_env.make(competition, sandbox=backend, time_limit=3600, disk="4g")
    other = mle_env.make(competition, sandbox=backend, time_limit=3600)
    env.reset()
    other.reset()  # warm caches (package list, image lookup) as a long run would have them
    obs, *_ = env.step({"type": "shell", "code": fill_action(mb, small_mb), "timeout": 600})
    assert int(obs["exit_code"]) == 0, obs["stderr"]
    resets, fork_times, close_times = [], [], []
    for _ in range(forks):
        began = time.perf_counter()
        other.reset()
        resets.append(time.perf_counter() - began)
        began = time.perf_counter()
        fork = env.unwrapped.fork()
        fork_times.append(time.perf_counter() - began)
        obs, *_ = fork.step("du -sm code logs | awk '{s += $1} END {print s}'")
        assert int(obs["stdout"].strip()) >= mb - 1, obs["stdout"]
        began = time.perf_counter()
        fork.close()
        close_times.append(time.perf_counter() - began)
    env.close()
    other.close()
    return {"reset": p50_p95(resets), "fork": p50_p95(fork_times), "close a fork": p50_p95(close_times)}


def aide_saving(competition: str, nodes: int) -> tuple[int, float, float, float]:
    """(children branched, seconds fork mode spent: forking and the final re-run of a best node found in a
    branch, seconds re-running from scratch would take, the whole run)."""
    from mle_env.env import MLEEnv
    from mle_env.recording import read_trajectory
    from mle_env.scaffolds.aide.policy import AidePolicy

    fork_seconds: list[float] = []
    original = MLEEnv.fork

    def timed_fork(self: MLEEnv, replay_python: bool = False) -> MLEEnv:
        began = time.perf_counter()
        try:
            return original(self, replay_python)
        finally:
            fork_seconds.append(time.perf_counter() - began)

    MLEEnv.fork = timed_fork  # type: ignore[method-assign]
    try:
        env = mle_env.make(competition, sandbox="local", time_limit=3600)
        began = time.perf_counter()
        env.reset()
        reset_s = time.perf_counter() - began
        env.close()
        policy = AidePolicy(proposer="offline", fork=True, max_nodes=nodes, num_drafts=3, cv_folds=2)
        began = time.perf_counter()
        result = mle_env.run_episode(env, policy, seed=0)
        whole = time.perf_counter() - began
        env.close()
    finally:
        MLEEnv.fork = original  # type: ignore[method-assign]
    steps = [r for r in read_trajectory(result.trajectory) if r["type"] == "step"]
    setup_s = sum(r["duration_s"] for r in steps[:3])  # look at the data, install mlkit, profile
    by_id = {n.id: n for n in policy.journal.nodes}
    children = [n for n in policy.journal.nodes if n.parent is not None]
    scratch = sum(reset_s + setup_s + by_id[n.parent].run_time_s for n in children)
    # every fork the run made (a state kept after a node ran in the episode, a child's branch) is on the fork
    # side of the ledger, and so is the re-run in the episode of a best node that ran in a branch
    rerun = sum(r["duration_s"] for r in steps if r["action"].get("type") == "shell"
                and any(f"code/node_{n.id}/solution.py" in r["action"].get("code", "") for n in children))
    return len(children), sum(fork_seconds) + rerun, scratch, whole


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forks", type=int, default=5)
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--small-mb", type=int, default=20)
    parser.add_argument("--competition", default="practice-house-prices")
    parser.add_argument("--backends", default="docker,local")
    parser.add_argument("--aide-nodes", type=int, default=8, help="0: skip the AIDE measurement")
    args = parser.parse_args()
    prepare(args.competition)
    print(f"competition {args.competition}; workspace {args.mb} MB ({args.small_mb * 100} files of 10 KB, the rest "
          f"in one); {args.forks} resets and forks\n")
    print(f"{'backend':8} {'measure':14} {'p50':>8} {'p95':>8}")
    for backend in args.backends.split(","):
        results = measure(args.competition, backend, args.forks, args.mb, args.small_mb)
        for name, (p50, p95) in results.items():
            print(f"{backend:8} {name:14} {p50:7.2f}s {p95:7.2f}s")
        ratio = results["fork"][0] / results["reset"][0]
        print(f"{backend:8} {'fork / reset':14} {ratio:7.2f}x  (target <= 2x: {'met' if ratio <= 2 else 'NOT met'})")
    if args.aide_nodes:
        children, forking, scratch, whole = aide_saving(args.competition, args.aide_nodes)
        print(f"\nAIDE fork=True, {args.aide_nodes} nodes (local): {children} children branched; forking (and "
              f"re-running a best child in the episode) took {forking:.1f}s; re-running each child's parent from "
              f"scratch would take {scratch:.1f}s (saved {scratch - forking:.1f}s; the run took {whole:.1f}s)")


if __name__ == "__main__":
    main()
