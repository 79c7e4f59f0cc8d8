"""Sandbox and environment overheads: step latency, reset latency, host memory per live env.

    python benchmarks/sandbox_overhead.py [--steps 200] [--resets 10] [--envs 10] [--competition ID]
                                           [--backends docker,local,unisolated]

Prints p50/p95 of a trivial shell action (``true``) and a trivial python action (``pass``) through
``env.step`` for the docker sandbox, the isolated local one (bubblewrap) and the unisolated subprocess
backend (the local sandbox before it was isolated: the reference its overhead is compared with), and, in
the same run, the same ``true`` run with one ``docker exec`` per action (the approach the persistent
channel replaces); reset latency; and the host RSS added by each live env (this process only; the
sandbox's own host-side processes are listed apart). Only harmless actions run, so the unisolated backend
is allowed to run as root here.
Targets: docker step p50 <= 5 ms, local <= 8 ms, resets <= 1.5 s, <= 30 MB host RSS per env.
Needs a prepared competition (default: practice-house-prices, prepared on the fly).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import mle_env
from mle_env.prepare.runner import prepare


def rss_mb(pid: str = "self") -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def timed(fn: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        began = time.perf_counter()
        fn()
        out.append((time.perf_counter() - began) * 1000)
    return out


def step_latency(competition: str, backend: str, steps: int) -> dict[str, tuple[float, float]]:
    env = mle_env.make(competition, sandbox=backend)
    env.reset()
    results = {
        "shell `true`": percentiles(timed(lambda: env.step({"type": "shell", "code": "true"}), steps)),
        "python `pass`": percentiles(timed(lambda: env.step({"type": "python", "code": "pass"}), steps)),
    }
    if backend == "docker":
        container = env.unwrapped._sandbox.container
        results["docker exec per action (baseline)"] = percentiles(
            timed(lambda: container.exec_run(["true"], user="1000:1000"), max(20, steps // 4)))
    env.close()
    return results


def reset_latency(competition: str, backend: str, n: int) -> tuple[float, float]:
    env = mle_env.make(competition, sandbox=backend)
    env.reset()  # warm caches (package list, image lookup) as a long run would have them
    samples = timed(lambda: env.reset(), n)
    env.close()
    return percentiles(samples)


def memory_per_env(competition: str, backend: str, n: int) -> tuple[float, float]:
    """(host RSS added per live env in MB, sandbox-side RSS per env in MB where it is measurable)."""
    import gc

    warm = mle_env.make(competition, sandbox=backend)
    warm.reset()
    warm.close()
    gc.collect()
    before = rss_mb()
    envs = []
    for _ in range(n):
        env = mle_env.make(competition, sandbox=backend)
        env.reset()
        envs.append(env)
    gc.collect()
    host = (rss_mb() - before) / n
    sandbox_side = 0.0
    if backend in ("local", "unisolated"):  # the host-side worker (the REPL, inside, comes on top)
        sandboxes = [e.unwrapped._sandbox for e in envs]
        workers = [getattr(s, "worker", None) or s.process for s in sandboxes]
        sandbox_side = sum(rss_mb(str(w.pid)) for w in workers) / n
    for env in envs:
        env.close()
    return host, sandbox_side


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--envs", type=int, default=10)
    parser.add_argument("--resets", type=int, default=10)
    parser.add_argument("--competition", default="practice-house-prices")
    parser.add_argument("--backends", default="docker,local,unisolated")
    args = parser.parse_args()
    os.environ.setdefault("MLE_ENV_ALLOW_UNISOLATED_ROOT", "1")  # trivial actions only
    prepare(args.competition)
    print(f"competition {args.competition}; {args.steps} steps, {args.resets} resets, {args.envs} live envs\n")
    print(f"{'backend':10} {'measure':38} {'p50':>10} {'p95':>10}")
    for backend in args.backends.split(","):
        for name, (p50, p95) in step_latency(args.competition, backend, args.steps).items():
            print(f"{backend:10} {'step: ' + name:38} {p50:8.2f}ms {p95:8.2f}ms")
        p50, p95 = reset_latency(args.competition, backend, args.resets)
        print(f"{backend:10} {'reset':38} {p50 / 1000:9.2f}s {p95 / 1000:9.2f}s")
        host, side = memory_per_env(args.competition, backend, args.envs)
        extra = f" (+{side:.1f} MB worker process)" if side else " (sandbox processes live in the container)"
        print(f"{backend:10} {'host RSS per live env':38} {host:8.1f}MB{extra}")


if __name__ == "__main__":
    main()
