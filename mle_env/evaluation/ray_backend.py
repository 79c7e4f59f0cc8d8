"""Episodes as Ray tasks on an existing cluster; Ray is imported only here (the ``ray`` extra).

Each task declares ``num_cpus`` and ``num_gpus``, so Ray places it on a node with room. A task prepares the
competition's data on its node when it is missing (``prepare`` is idempotent and locked, so tasks racing
on one node do the work once), or reads a shared ``data_dir``. mle-env must be installed on every node.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mle_env.errors import PrerequisiteError
from mle_env.evaluation.episodes import run_task
from mle_env.evaluation.runner import failed_task_record


class RayBackend:
    def __init__(self, address: str, cpus: float, gpus: float) -> None:
        try:
            import ray
        except ImportError as e:
            raise PrerequisiteError("--ray needs Ray: pip install 'mle-env[ray]'") from e
        self.ray = ray
        self.owns_session = not ray.is_initialized()  # a session the caller opened stays open
        if self.owns_session:
            ray.init(address=address, log_to_driver=False)
        self.remote = ray.remote(num_cpus=cpus, num_gpus=gpus, max_retries=0)(run_task)
        self.pending: dict[Any, dict[str, Any]] = {}

    def submit(self, task: dict[str, Any]) -> None:
        self.pending[self.remote.remote(task)] = task

    def completed(self) -> Iterator[dict[str, Any]]:
        while self.pending:
            ready, _ = self.ray.wait(list(self.pending), num_returns=1)
            for ref in ready:
                task = self.pending.pop(ref)
                try:
                    yield self.ray.get(ref)
                except self.ray.exceptions.RayError as e:  # the node or worker died: an infrastructure error
                    yield failed_task_record(task, f"Ray task failed: {type(e).__name__}: {e}")

    def close(self) -> None:
        if self.owns_session:
            self.ray.shutdown()
