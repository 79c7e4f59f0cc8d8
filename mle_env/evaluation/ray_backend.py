"""Episodes as Ray tasks on an existing cluster; Ray is imported only here (the ``ray`` extra).

Each task declares ``num_cpus`` and ``num_gpus``, so Ray places it on a node with room. A task prepares the
competition's data on its node when it is missing (``prepare`` is idempotent and locked, so tasks racing
on one node do the work once), or reads a shared ``data_dir``. mle-env must be installed on every node.

A task whose worker or node died is an infrastructure error (retried); a task whose own code raised in a
way ``run_task`` could not record (e.g. mle-env or the policy's module missing on a node) stops the
evaluation, as any error that is not the infrastructure's does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mle_env.errors import PrerequisiteError
from mle_env.evaluation.episodes import FATAL, failed_task_record, run_task


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
        self.cancelled: set[Any] = set()

    def submit(self, task: dict[str, Any]) -> None:
        self.pending[self.remote.remote(task)] = task

    def completed(self) -> Iterator[dict[str, Any]]:
        errors = self.ray.exceptions
        while self.pending:
            ready, _ = self.ray.wait(list(self.pending), num_returns=1)
            for ref in ready:
                task = self.pending.pop(ref)
                if ref in self.cancelled:
                    continue
                try:
                    yield self.ray.get(ref)
                except errors.RayTaskError as e:  # the task's own code raised: not the infrastructure's fault
                    yield failed_task_record(task, f"the Ray task raised: {e}", status=FATAL)
                except errors.RayError as e:  # the node or worker died: an infrastructure error
                    yield failed_task_record(task, f"Ray task failed: {type(e).__name__}: {e}")

    def cancel_pending(self) -> None:
        """Cancel every task still pending (Ray cannot tell queued from running ones cheaply)."""
        for ref in self.pending:
            self.cancelled.add(ref)
            self.ray.cancel(ref)  # a running task gets KeyboardInterrupt and closes its env

    def close(self) -> None:
        if self.owns_session:
            self.ray.shutdown()
