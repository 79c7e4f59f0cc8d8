"""Per-step overhead of the OpenEnv server (``mle-env serve``) against calling ``env.step`` in process.

    python benchmarks/openenv_overhead.py [--steps 50] [--competition ID] [--sandbox local]

In the same run, interleaved (one step each way in turn, so that the host's load falls on both alike):
``--steps`` shell actions ``true`` through ``env.step`` of an env in this process, and through a real
``mle-env serve`` process on loopback with OpenEnv's WebSocket client
(:class:`~mle_env.integrations.openenv.MLEEnvClient`, sync). Prints p50/p95 of each and of the per-pair
difference (what the server adds per step: JSON and pydantic on both sides, the WebSocket round trip, the
session's thread hop), for ``true`` and for a malformed action (the step path without sandbox work, so the
server's own cost without the sandbox's noise), and the size of one step's reply. Needs a prepared competition (default:
practice-house-prices, prepared on the fly) and the openenv extra.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import mle_env
from mle_env.integrations.openenv import MLEAction, MLEEnvClient
from mle_env.prepare.runner import prepare

REPO = Path(__file__).resolve().parents[1]
TRUE = {"type": "shell", "code": "true"}
NOOP = {"type": "noop"}


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


TOKEN = secrets.token_urlsafe(24)  # the server's bearer token (mle-env serve requires one)


def start_server(competition: str, sandbox: str) -> tuple[subprocess.Popen[bytes], str]:
    """A real ``mle-env serve`` process on a free loopback port, answering /health; returns it and its URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "MLE_ENV_SERVE_TOKEN": TOKEN}
    proc = subprocess.Popen([sys.executable, "-m", "mle_env", "serve", "--port", str(port), "--competition",
                             competition, "--sandbox", sandbox, "--log-level", "warning"], env=env,
                            stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(f"{url}/health", timeout=2).close()
            return proc, url
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise SystemExit(f"the server did not start (exit status {proc.poll()})") from None
            time.sleep(0.2)


def ms(fn: Callable[[], object]) -> float:
    began = time.perf_counter()
    fn()
    return (time.perf_counter() - began) * 1000


def measure(competition: str, sandbox: str, steps: int, warmup: int = 5) -> tuple[dict[str, tuple[list, list]], int]:
    """{action: (in-process step times, server step times)} and the bytes of one step's observation as JSON; the
    two ways interleaved step by step, so that a change of the host's load falls on both alike. Besides ``true``,
    a malformed action ({"type": "noop"}) goes the whole step path without sandbox work: the server's own cost
    without the sandbox's noise."""
    proc, url = start_server(competition, sandbox)
    env = mle_env.make(competition, sandbox=sandbox)
    try:
        env.reset(seed=0)
        with MLEEnvClient(base_url=url, token=TOKEN).sync() as client:
            client.reset(seed=0)
            times: dict[str, tuple[list, list]] = {}
            for name, action in (("shell `true`", TRUE), ("malformed (no sandbox work)", NOOP)):
                local, served = times.setdefault(name, ([], []))
                for i in range(warmup + steps):
                    a = ms(lambda a=action: env.step(dict(a)))
                    b = ms(lambda a=action: client.step(dict(a)))
                    if i >= warmup:
                        local.append(a)
                        served.append(b)
            reply = len(client.step(MLEAction(**TRUE)).observation.model_dump_json())
        return times, reply
    finally:
        env.close()
        proc.terminate()
        proc.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--competition", default="practice-house-prices")
    parser.add_argument("--sandbox", default="local", choices=("local", "docker", "auto"))
    args = parser.parse_args()
    prepare(args.competition)  # a no-op when prepared; a competition that needs a leaderboard must be prepared
    times, reply_bytes = measure(args.competition, args.sandbox, args.steps)
    print(f"competition {args.competition}, sandbox {args.sandbox}; {args.steps} steps each way per action\n")
    print(f"{'action':28} {'path':28} {'p50':>10} {'p95':>10}")
    for name, (local, served) in times.items():
        rows = (("in-process env.step", local), ("OpenEnv server", served),
                ("difference (per pair)", [b - a for a, b in zip(local, served, strict=True)]))
        for path, samples in rows:
            p50, p95 = percentiles(samples)
            sign = "+" if path.startswith("difference") else ""
            print(f"{name:28} {path:28} {p50:{sign}8.2f}ms {p95:{sign}8.2f}ms")
    print(f"\none step's observation as JSON: {reply_bytes / 1024:.1f} KiB (the task text travels with every step)")

if __name__ == "__main__":
    main()
