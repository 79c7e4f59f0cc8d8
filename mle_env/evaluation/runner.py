"""``mle-env eval``: an agent over a set of competitions with k seeds each, in parallel, resumable.

Every (competition, seed) is one scheduled episode, and every scheduled episode stays in the denominator
of every number reported (see :mod:`mle_env.evaluation.stats`). Episodes run in a local pool of worker
processes (``workers``), or as Ray tasks on an existing cluster (``ray_address``) that each declare the
CPUs and GPUs they need. Each attempt is appended to ``<out>/results.jsonl`` as soon as it ends.

What happens to an attempt depends on whose fault its outcome is (:mod:`mle_env.evaluation.episodes`):

- ``ok`` / ``agent_error``: the agent's result; the episode is finished.
- ``infra_error`` (the sandbox failed for reasons the host can show are not the agent's, or the worker
  process died): retried up to ``max_infra_retries`` times; if it still fails, the episode counts as no
  medal, as MLE-bench pads incomplete seeds with failures, and reports list it apart.
- anything else (our bug, the caller's or the setup's mistake: unprepared data, a bad option, a missing
  optional dependency): the evaluation stops at once with that error (:class:`EvaluationAborted`);
  nothing is retried. A :func:`preflight` finds most of these before the first episode starts.

Rerunning the same command skips finished episodes and tries the failed ones again.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import pickle
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mle_env.errors import ConfigError, NotPrepared, PrepareError, PrerequisiteError
from mle_env.evaluation.episodes import FATAL, failed_task_record, run_task
from mle_env.evaluation.results import (
    EvaluationError,
    append_result,
    check_comparable,
    finished_keys,
    read_results,
    write_config,
)


class EvaluationAborted(EvaluationError):
    """Raised when an episode fails in a way that retrying cannot fix (not the infrastructure's fault): the
    evaluation stops at once. Finished episodes stay in results.jsonl, so rerunning resumes."""


@dataclass
class EvalConfig:
    """What to evaluate and how.

    Attributes:
        agent, agent_options: the policy (``make_policy(agent, **agent_options)``): a bundled agent's name,
            ``package.module:Class`` or ``path/to/file.py:Class`` (see :mod:`mle_env.agents`). The spec
            string is what reaches the workers (a file path made absolute) and each resolves it itself, so
            a policy in a file works in spawned processes and on Ray (where the file must exist on every
            node). A policy that declares a ``seed`` option gets the episode's seed unless the options set one.
        competitions: competition ids.
        seeds: episodes per competition, with seeds 0 .. seeds-1.
        out: the run directory (results.jsonl, config.json, summary.json, plots, trajectories).
        workers: episodes at a time in the local pool (ignored with Ray).
        env_options: keyword arguments of ``mle_env.make`` (sandbox, limits, ...), validated with
            :class:`mle_env.config.EnvConfig` before anything runs; trajectories go to
            ``<out>/trajectories`` unless ``record_dir`` is given. Without ``cpus``, each episode gets
            the machine's cores divided by ``workers`` (with Ray: ``cpus_per_episode``), at least 1.
        ray_address: run on this existing Ray cluster ("auto", "127.0.0.1:6379", "ray://...").
        cpus_per_episode, gpus_per_episode: what each Ray task declares.
        data_dir: a data folder all workers share (MLE_ENV_HOME for them); default: each machine's own.
        max_infra_retries: attempts after the first for an episode whose infrastructure failed; an episode
            still failing after them counts as no medal.
        inject_infra_failures: testing aid: ``"competition:seed"`` makes that episode's first attempt fail
            as if its sandbox's engine went away; ``"competition:seed:N"`` makes its first N attempts fail.
        policy_factory: builds the policy instead of ``make_policy(agent, ...)``: a picklable callable (a
            class or function defined at module level), called as ``policy_factory(**agent_options)`` in
            each worker; ``agent`` is then only the name the results carry.
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
    policy_factory: Callable[..., Any] | None = None

    def injected_failures(self, competition: str, seed: int) -> int:
        """How many first attempts of this episode ``inject_infra_failures`` makes fail."""
        count = 0
        for item in self.inject_infra_failures:
            cid, _, rest = item.partition(":")
            seed_text, _, times = rest.partition(":")
            if cid == competition and seed_text == str(seed):
                count = max(count, int(times) if times else 1)
        return count

    def task(self, competition: str, seed: int, attempt: int, split: str | None = None) -> dict[str, Any]:
        env_options = {"record_dir": str(Path(self.out) / "trajectories"), **self.env_options}
        if env_options.get("cpus") is None:  # episodes share the machine: give each its share of the cores
            share = self.cpus_per_episode if self.ray_address else (os.cpu_count() or 1) / max(1, self.workers)
            env_options["cpus"] = max(1.0, share)
        from mle_env.agents import absolute_spec

        return {"competition_id": competition, "seed": seed, "attempt": attempt, "agent": self.agent,
                "agent_spec": absolute_spec(self.agent), "split": split, "agent_options": self.agent_options,
                "env_options": env_options,
                "data_dir": self.data_dir, "policy_factory": self.policy_factory,
                "inject_infra_failure": attempt < self.injected_failures(competition, seed)}

    def to_json(self) -> dict[str, Any]:
        """What config.json records (the run directory and testing aids left out)."""
        data = {k: v for k, v in asdict(self).items() if k not in ("out", "inject_infra_failures", "policy_factory")}
        if self.policy_factory is not None:
            factory = self.policy_factory
            name = getattr(factory, "__qualname__", repr(factory))
            data["policy_factory"] = f"{getattr(factory, '__module__', '?')}:{name}"
        return data


class Backend(Protocol):
    def submit(self, task: dict[str, Any]) -> None: ...
    def completed(self) -> Iterator[dict[str, Any]]: ...
    def cancel_pending(self) -> None: ...
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
                if future.cancelled():
                    continue
                try:
                    yield future.result()
                except BrokenProcessPool as e:  # the worker process died under the episode
                    yield failed_task_record(task, f"the worker process died: {type(e).__name__}: {e}")
                except Exception as e:  # noqa: BLE001 - e.g. the task could not be sent to the worker
                    yield failed_task_record(task, f"the task could not run in a worker: {type(e).__name__}: {e}",
                                             status=FATAL)

    def cancel_pending(self) -> None:
        """Cancel the tasks that have not started; those running are left to finish."""
        for future in list(self.pending):
            if future.cancel():
                del self.pending[future]

    def close(self) -> None:
        self.executor.shutdown(cancel_futures=True)


def episodes_to_run(config: EvalConfig, records: list[dict[str, Any]] | None = None) -> list[tuple[str, int]]:
    """(competition, seed) pairs without a finished record in the run directory (or in ``records``, when
    the caller has read them already); those whose infrastructure failed before are run again."""
    done = finished_keys(read_results(config.out) if records is None else records)
    return [(c, s) for c in config.competitions for s in range(config.seeds) if (c, s) not in done]


def _whole(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{name} must be a whole number >= {minimum}; got {value!r}")
    return value


def check_config(config: EvalConfig) -> None:
    """The evaluation's own options.

    Raises:
        ConfigError: naming the option and what is allowed.
    """
    if not config.competitions:
        raise ConfigError("competitions must name at least one competition")
    _whole("seeds", config.seeds, 1)
    _whole("workers", config.workers, 1)
    _whole("max_infra_retries", config.max_infra_retries, 0)
    for name in ("cpus_per_episode", "gpus_per_episode"):
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
            raise ConfigError(f"{name} must be a number >= 0; got {value!r}")
    if config.cpus_per_episode <= 0:
        raise ConfigError(f"cpus_per_episode must be > 0; got {config.cpus_per_episode!r}")
    for item in config.inject_infra_failures:
        parts = item.split(":")
        if not (2 <= len(parts) <= 3 and parts[1].isdigit() and (len(parts) == 2 or parts[2].isdigit())):
            raise ConfigError("inject_infra_failures takes COMPETITION:SEED or COMPETITION:SEED:ATTEMPTS; "
                              f"got {item!r}")


def preflight(config: EvalConfig, todo: list[tuple[str, int]] | None = None) -> dict[str, str]:
    """Check everything that can fail for the caller's or the setup's reasons before any episode starts,
    so that such errors stop the evaluation here, loudly, instead of in every episode.

    Checks the evaluation's options, the env options (:class:`mle_env.config.EnvConfig`), the agent and
    its options (the policy is built once), every competition (it exists, and its data is prepared, or
    prepared here if a source can provide it), and, where the data is on this machine (a local pool or a
    shared ``data_dir``), that the env builds for each competition and one sandbox starts. With Ray and each
    node's own data, nodes prepare what they lack; here it is only checked that a source exists.

    Returns:
        The split of each competition.

    Raises:
        ConfigError: an option of the evaluation or of the env is malformed or out of range.
        AgentError: the agent is unknown or takes no such option.
        UnknownCompetition: no competition has that id.
        NotPrepared: a competition's data is not prepared and could not be (the message says why and
            gives the ``mle-env prepare`` command).
        PrerequisiteError: what the sandbox needs is missing here (engine, image, bubblewrap, a GPU runtime),
            or a module a competition declares in ``requires`` (e.g. Pillow for practice-mnist-digits; the
            message gives the install command, e.g. ``pip install 'mle-env[images]'``).
        Whatever building the policy or the env raises (e.g. ImportError for a missing extra).
    """
    from mle_env.agents import absolute_spec, make_policy
    from mle_env.competition.registry import get_spec
    from mle_env.config import EnvConfig
    from mle_env.prepare.runner import prepare

    check_config(config)
    competitions = sorted(set(config.competitions))
    needed = sorted({c for c, _ in todo}) if todo is not None else competitions
    env_options = config.task(competitions[0], 0, 0)["env_options"]
    EnvConfig.from_options(env_options)
    if config.policy_factory is not None:
        _close(config.policy_factory(**config.agent_options))
        if not config.ray_address:
            try:
                pickle.dumps(config.policy_factory)
            except Exception as e:  # noqa: BLE001 - a lambda, a local class, ...
                raise ConfigError(f"policy_factory must be picklable (a class or function defined at module "
                                  f"level) to reach the worker processes: {type(e).__name__}: {e}") from e
    else:
        _close(make_policy(absolute_spec(config.agent), **config.agent_options))
    splits = {cid: get_spec(cid).split for cid in competitions}
    local_data = not config.ray_address or config.data_dir is not None
    home = Path(config.data_dir) if config.data_dir else None
    if local_data:
        _check_requirements(needed, env_options, home)
    for cid in needed:
        try:
            prepare(cid, home=home, dry_run=not local_data and not _prepared_here(cid, home))
        except PrepareError as e:
            raise NotPrepared(f"{cid} is not prepared, and preparing it here failed: {e}\nprepare it with "
                              f"`mle-env prepare {cid}` (or --raw-dir / --raw-zip), then rerun") from e
    if local_data and needed:
        _check_envs(needed, env_options, home)
    return splits


def _check_requirements(competitions: list[str], env_options: dict[str, Any], home: Path | None) -> None:
    """Every module the competitions declare (``requires`` in competition.toml) imports here, where it is
    needed here: to prepare data that is not prepared yet, or for the agent's programs in a sandbox that
    runs this machine's Python (local, unisolated; the docker image brings its own).

    Raises:
        PrerequisiteError: naming every missing module, the competitions that need it and the install command.
    """
    from mle_env.competition.registry import get_spec

    kind = env_options.get("sandbox", "auto")
    if kind == "auto":
        from mle_env.sandbox import choose_backend
        from mle_env.sandbox.images import DEFAULT_IMAGE

        try:
            kind = choose_backend("auto", env_options.get("image", DEFAULT_IMAGE))[0]
        except PrerequisiteError:
            kind = "local"  # no sandbox at all: _check_envs says so; the requirement is reported first
    missing: dict[tuple[str, str, str], list[str]] = {}
    for cid in competitions:
        spec = get_spec(cid)
        if not spec.requires or (kind == "docker" and _prepared_here(cid, home)):
            continue
        for req in spec.requires:
            why = req.missing()
            if why is not None:
                missing.setdefault((req.package, req.install, why), []).append(cid)
    if missing:
        lines = [f"{', '.join(cids)} need{'s' if len(cids) == 1 else ''} {package}, which cannot be imported here "
                 f"({why}): {install}" for (package, install, why), cids in missing.items()]
        raise PrerequisiteError("\n".join(lines) + "\ninstall it and rerun (or leave these competitions out)")


def _close(policy: Any) -> None:
    if hasattr(policy, "close"):
        policy.close()


def _prepared_here(cid: str, home: Path | None) -> bool:
    from mle_env.paths import CompetitionPaths

    return CompetitionPaths(cid, home).is_prepared()


def _check_envs(competitions: list[str], env_options: dict[str, Any], home: Path | None) -> None:
    """Build the env of every competition (no sandbox) and start one sandbox, with the episodes' options."""
    from mle_env.env import make

    with tempfile.TemporaryDirectory(prefix="mle-env-preflight-") as scratch:
        options = {**env_options, "record_dir": scratch}
        if home is not None and "home" not in options:
            options["home"] = str(home)
        for n, cid in enumerate(competitions):
            env = make(cid, **options)
            try:
                if n == 0:
                    try:
                        env.reset(seed=0)
                    except PrerequisiteError as e:
                        raise PrerequisiteError(f"the episodes' sandbox cannot start here: {e}") from e
            finally:
                env.close()


def evaluate(config: EvalConfig, progress: Callable[[dict[str, Any], int, int], None] | None = None) -> Path:
    """Run every unfinished episode of ``config``; returns the run directory.

    ``progress(record, done, total)`` is called after each attempt (``done`` counts episodes that will not
    be tried again in this call).

    Raises:
        Everything :func:`preflight` raises, before any episode starts.
        EvaluationAborted: an episode failed with an error that is not the infrastructure's (our bug, or
            the setup's: data, options, dependencies on a worker); nothing was retried.
        EvaluationError: ``out`` holds an incomparable run.
    """
    out = Path(config.out)
    check_config(config)
    check_comparable(out, config.to_json())
    records = read_results(out, repair=True)
    todo = episodes_to_run(config, records)
    splits = preflight(config, todo)
    out.mkdir(parents=True, exist_ok=True)
    write_config(out, {**config.to_json(), "splits": splits,
                       "scheduled": {c: config.seeds for c in config.competitions}})
    if not todo:
        return out
    last_attempt: dict[tuple[str, int], int] = {}
    for r in records:
        key = (r["competition_id"], int(r["seed"]))
        last_attempt[key] = max(last_attempt.get(key, -1), int(r.get("attempt", 0)))
    backend: Backend
    if config.ray_address:
        from mle_env.evaluation.ray_backend import RayBackend

        backend = RayBackend(config.ray_address, config.cpus_per_episode, config.gpus_per_episode)
    else:
        backend = LocalPool(min(config.workers, len(todo)))
    fatal: dict[str, Any] | None = None
    try:
        tries: dict[tuple[str, int], int] = {}
        for competition, seed in todo:
            tries[(competition, seed)] = 1
            attempt = last_attempt.get((competition, seed), -1) + 1
            backend.submit(config.task(competition, seed, attempt, splits.get(competition)))
        done = 0
        for record in backend.completed():
            if record["status"] == FATAL:
                if fatal is None:
                    fatal = record
                    backend.cancel_pending()  # those running finish and are kept
                continue
            append_result(out, record)
            key = (record["competition_id"], int(record["seed"]))
            if record["status"] == "infra_error" and tries[key] <= config.max_infra_retries and fatal is None:
                tries[key] += 1
                backend.submit(config.task(key[0], key[1], int(record["attempt"]) + 1, splits.get(key[0])))
            else:
                done += 1
            if progress is not None:
                progress(record, done, len(todo))
    finally:
        backend.close()
    if fatal is not None:
        finished = len(finished_keys(read_results(out)))
        raise EvaluationAborted(
            f"{fatal['competition_id']} seed {fatal['seed']} (attempt {fatal['attempt']}) failed with an error "
            f"that is not an infrastructure failure, so the evaluation stopped without retrying it:\n"
            f"{fatal['error']}\nFix it and rerun the same command; the {finished} finished episode(s) in {out} "
            "are kept.")
    return out
