"""``mle-env eval``: an agent over a set of competitions with k seeds each, in parallel, resumable.

Every (competition, seed) is one episode. Episodes run in a local pool of worker processes
(``workers``), or as Ray tasks on an existing cluster (``ray_address``) that each declare the CPUs and
GPUs they need. Each finished attempt is appended to ``<out>/results.jsonl`` at once. An attempt that
ends in an infrastructure error is retried up to ``max_infra_retries`` times; its records stay in the file,
reported apart and never counted against the agent. Rerunning the same command skips finished episodes.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mle_env.evaluation.episodes import run_task
from mle_env.evaluation.results import append_result, finished_keys, read_results, write_config


@dataclass
class EvalConfig:
    """What to evaluate and how.

    Attributes:
        agent, agent_options: the policy (``make_policy(agent, **agent_options)``).
        competitions: competition ids.
        seeds: episodes per competition, with seeds 0 .. seeds-1.
        out: the run directory (results.jsonl, config.json, summary.json, plots, trajectories).
        workers: episodes at a time in the local pool (ignored with Ray).
        env_options: keyword arguments of ``mle_env.make`` (sandbox, limits, ...); trajectories go to
            ``<out>/trajectories`` unless ``record_dir`` is given. Without ``cpus``, each episode gets
            the machine's cores divided by ``workers`` (with Ray: ``cpus_per_episode``), at least 1.
        ray_address: run on this existing Ray cluster ("auto", "127.0.0.1:6379", "ray://...").
        cpus_per_episode, gpus_per_episode: what each Ray task declares.
        data_dir: a data folder all workers share (MLE_ENV_HOME for them); default: each machine's own.
        max_infra_retries: attempts after the first for an episode whose infrastructure failed.
        inject_infra_failures: "competition:seed" episodes whose first attempt has its sandbox killed
            (to test the retry path end to end).
    """

    agent: str
    competitions: list[str]
    seeds: int
    out: Path
    agent_options: dict[str, Any] = field(default_factory=dict)
    workers: int = 1
    env_options: dict[str, Any] = field(default_factory=dict)
    ray_address: str | None = None
    cpus_per_episode: float = 1.0
    gpus_per_episode: float = 0.0
    data_dir: str | None = None
    max_infra_retries: int = 2
    inject_infra_failures: list[str] = field(default_factory=list)

    def task(self, competition: str, seed: int, attempt: int) -> dict[str, Any]:
        env_options = {"record_dir": str(Path(self.out) / "trajectories"), **self.env_options}
        if env_options.get("cpus") is None:  # episodes share the machine: give each its share of the cores
            share = self.cpus_per_episode if self.ray_address else (os.cpu_count() or 1) / max(1, self.workers)
            env_options["cpus"] = max(1.0, share)
        return {"competition_id": competition, "seed": seed, "attempt": attempt, "agent": self.agent,
                "agent_options": self.agent_options, "env_options": env_options, "data_dir": self.data_dir,
                "inject_infra_failure": attempt == 0 and f"{competition}:{seed}" in self.inject_infra_failures}


class Backend(Protocol):
    def submit(self, task: dict[str, Any]) -> None: ...
    def completed(self) -> Iterator[dict[str, Any]]: ...
    def close(self) -> None: ...


class LocalPool:
    """Worker processes on this machine (spawned fresh, so no engine client or thread is shared). A worker
    that dies (e.g. killed for memory) fails only its own episode, as an infrastructure error; the pool is
    then rebuilt for the others."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)
        self.executor = self._new_executor()
        self.pending: dict[concurrent.futures.Future[dict[str, Any]], dict[str, Any]] = {}

    def _new_executor(self) -> concurrent.futures.ProcessPoolExecutor:
        return concurrent.futures.ProcessPoolExecutor(
            max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"))

    def submit(self, task: dict[str, Any]) -> None:
        try:
            future = self.executor.submit(run_task, task)
        except BrokenProcessPool:
            self.executor = self._new_executor()
            future = self.executor.submit(run_task, task)
        self.pending[future] = task

    def completed(self) -> Iterator[dict[str, Any]]:
        while self.pending:
            done, _ = concurrent.futures.wait(self.pending, return_when="FIRST_COMPLETED")
            for future in done:
                task = self.pending.pop(future)
                try:
                    yield future.result()
                except Exception as e:  # noqa: BLE001 - the worker process itself failed
                    yield failed_task_record(task, f"the worker process failed: {type(e).__name__}: {e}")

    def close(self) -> None:
        self.executor.shutdown(cancel_futures=True)


def failed_task_record(task: dict[str, Any], error: str) -> dict[str, Any]:
    """The infrastructure-error record of a task whose worker (process or Ray task) died."""
    return {"competition_id": task["competition_id"], "seed": task["seed"], "attempt": task["attempt"],
            "agent": task["agent"], "status": "infra_error", "grade": None, "error": error}


def episodes_to_run(config: EvalConfig, records: list[dict[str, Any]] | None = None) -> list[tuple[str, int]]:
    """(competition, seed) pairs without a finished record in the run directory (or in ``records``, when
    the caller has read them already)."""
    done = finished_keys(read_results(config.out) if records is None else records)
    return [(c, s) for c in config.competitions for s in range(config.seeds) if (c, s) not in done]


def evaluate(config: EvalConfig, progress: Callable[[dict[str, Any], int, int], None] | None = None) -> Path:
    """Run every unfinished episode of ``config``; returns the run directory.

    ``progress(record, done, total)`` is called after each attempt.
    """
    from mle_env.agents import make_policy

    make_policy(config.agent, **config.agent_options)  # a wrong agent or option fails here, not in every episode
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    write_config(out, {k: v for k, v in asdict(config).items() if k not in ("out", "inject_infra_failures")})
    todo = episodes_to_run(config, read_results(out, repair=True))
    if not todo:
        return out
    backend: Backend
    if config.ray_address:
        from mle_env.evaluation.ray_backend import RayBackend

        backend = RayBackend(config.ray_address, config.cpus_per_episode, config.gpus_per_episode)
    else:
        backend = LocalPool(min(config.workers, len(todo)))
    try:
        for competition, seed in todo:
            backend.submit(config.task(competition, seed, 0))
        done = 0
        for record in backend.completed():
            append_result(out, record)
            if record["status"] == "infra_error" and record["attempt"] < config.max_infra_retries:
                backend.submit(config.task(record["competition_id"], record["seed"], record["attempt"] + 1))
            else:
                done += 1
            if progress is not None:
                progress(record, done, len(todo))
    finally:
        backend.close()
    return out
