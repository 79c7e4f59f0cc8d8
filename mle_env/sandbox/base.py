"""The sandbox interface: where an episode's actions run.

A sandbox is started by the environment at ``reset`` and closed at the end of the episode. Its working
directory holds ``data/`` (the competition's public files, read-only), ``submission/`` (the graded file is
``submission/submission.csv``), ``code/`` and ``logs/``. Inside a docker sandbox the working directory is
``/home``, as in MLE-bench, so agents written for MLE-bench find ``/home/data`` and
``/home/submission``.

Every backend runs :mod:`mle_env.sandbox.worker` inside the sandbox and talks to it over one persistent
channel, so the semantics of an action are the same everywhere:

- ``exec("shell", code, timeout)`` runs ``bash -c code``; ``exec("python", code, timeout)`` runs the code
  in the episode's one persistent interpreter. Both return an :class:`ExecResult`; a program that fails,
  crashes or times out is a normal result (``exit_code``, ``timed_out``), never an exception.
- Output is cut to ``SandboxLimits.max_output`` bytes per stream (head and tail kept, the cut marked).
- :class:`~mle_env.errors.SandboxUnavailable` is raised only when the sandbox itself is gone (engine
  down, container removed, worker unreachable): an infrastructure failure, not the agent's.
- ``close()`` may be called any number of times and always releases everything the sandbox holds.
- MLE-bench's conventions (docker and local): an ``endpoint`` (:class:`~mle_env.sandbox.endpoint.
  ValidationEndpoint`) set before ``start`` makes ``http://localhost:5000/validate`` answer inside the
  sandbox, and ``put_file`` places read-only files such as ``instructions.txt`` in the working directory.
"""

from __future__ import annotations

import abc
import functools
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from mle_env.errors import SandboxUnavailable
from mle_env.sandbox.exec_result import ExecResult

if TYPE_CHECKING:
    from mle_env.sandbox.channel import WorkerClient
    from mle_env.sandbox.endpoint import ValidationEndpoint

WORKER_PATH = Path(__file__).with_name("worker.py")
SUBMISSION = "submission/submission.csv"
#: files one ``copy_tree`` keeps at most (each costs a tar header on the host, whatever its size)
MAX_TREE_FILES = 10_000


@dataclass(frozen=True)
class SandboxLimits:
    """Resources of one sandbox.

    Attributes:
        cpus: CPU cores (docker: a CFS quota; None = no limit). Both backends also cap the thread pools of
            OpenMP and BLAS at that many threads (see :meth:`thread_environment`).
        memory: memory limit in bytes (None = no limit); callers parse sizes like ``"4g"`` with EnvConfig.
        pids: most processes and threads at once (docker only).
        shm: size of /dev/shm in bytes.
        gpus: ``None`` (none), ``"all"``, a count, or a list of device ids (docker only).
        network: allow network access (docker only; off by default).
        max_output: bytes of each output stream kept per action.
        disk: bytes the agent may write in the sandbox (workspace, temporary folders, docker's writable
            layer); None = no limit. An action that writes past it is stopped and told so.
    """

    cpus: float | None = None
    memory: int | None = 4 * 2**30
    pids: int = 1024
    shm: int = 2**30
    gpus: str | int | list[str] | None = None
    network: bool = False
    max_output: int = 32 * 1024
    disk: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def thread_environment(self) -> dict[str, str]:
        """Thread counts for OpenMP, BLAS and friends that match ``cpus`` (empty when unlimited).

        Numerical libraries start one thread per host core whatever the CPU quota; several sandboxes on one
        machine then oversubscribe it, and OpenMP's spinning threads slow each other down many times over.
        """
        if self.cpus is None:
            return {}
        threads = str(max(1, math.ceil(self.cpus)))
        return {name: threads for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                           "NUMEXPR_NUM_THREADS")}


@dataclass
class SandboxInfo:
    """What a started sandbox is and runs on (recorded in trajectories and eval results)."""

    kind: str
    workdir: str
    image: str | None = None
    cpus: float | None = None
    memory_bytes: int | None = None
    gpus: list[str] = field(default_factory=list)
    python: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Sandbox(abc.ABC):
    """One episode's isolated place to run actions (see the module docstring for the contract)."""

    kind: str = ""
    #: answers the in-sandbox validation endpoint when set before start() (backends that have their own
    #: network namespace: docker and local)
    endpoint: ValidationEndpoint | None = None
    #: whether this backend serves the endpoint at all
    serves_endpoint: bool = False

    def start(self) -> SandboxInfo:
        """Create the sandbox and its worker; on failure, everything half-created is removed.

        Raises:
            PrerequisiteError: what the backend needs is missing (engine, image, GPU runtime).
            SandboxUnavailable: it could not be started for another reason.
        """
        try:
            return self._start()
        except BaseException:
            self.close()
            raise

    @abc.abstractmethod
    def _start(self) -> SandboxInfo:
        """The backend's part of :meth:`start` (which cleans up after it when it raises)."""

    @abc.abstractmethod
    def exec(self, kind: str, code: str, timeout: float) -> ExecResult:
        """Run a ``shell`` or ``python`` action with a timeout in seconds.

        Raises:
            SandboxUnavailable: the sandbox is gone; the episode cannot continue.
        """

    @abc.abstractmethod
    def copy_out(self, path: str = SUBMISSION, max_bytes: int = 2**30) -> bytes | str | None:
        """Copy one file out of the sandbox (default ``submission/submission.csv``; ``path`` is relative to
        the working directory, without ``..``).

        Returns the bytes; None if there is no such file; or a string saying why it was not copied (not a
        regular file, a link leading out of the working directory, larger than ``max_bytes``). Whatever the
        agent put at ``path``, this returns promptly and never raises for it.
        """

    @abc.abstractmethod
    def copy_tree(self, path: str, max_bytes: int, max_files: int = MAX_TREE_FILES) -> IO[bytes]:
        """A tar archive of the regular files under ``path`` (relative to the working directory, e.g.
        ``code``), names relative to ``path``, at most ``max_bytes`` of file content and ``max_files``
        files: links, pipes and devices are left out, and files past either cap too, unread (the archive then
        holds ``TRUNCATED.txt`` saying what was left out). Returned as a temporary file, positioned at its
        start, which the caller closes: the host holds none of it in memory. An empty archive when there is
        no such folder; never raises for what the agent put there (SandboxUnavailable only when the sandbox
        itself is gone)."""

    def cancel(self) -> bool:
        """Stop the action now running in :meth:`exec`, as a terminal's Ctrl-C would (see worker.py): its
        ``exec`` returns soon after with ``cancelled`` set and the output so far. Returns whether an action
        was running. Only sets a flag, so a signal handler or another thread may call it."""
        channel = self._channel()
        return channel.cancel() if channel is not None else False

    def fork(self) -> Sandbox:
        """A new sandbox, not yet started, of the same backend, image and limits, whose ``start()`` begins
        from a snapshot taken now of everything the agent can write here (the working directory, /tmp, its
        home; not /dev/shm). Running processes, the python interpreter among them, are not carried: the new
        sandbox starts its own worker. Closing either sandbox leaves the other as it is; closing the new one
        removes its snapshot (a docker copy held in a host temporary file, a copied folder).

        Raises:
            SandboxUnavailable: this sandbox is not running, or the snapshot could not be taken.
            NotImplementedError: this backend cannot be forked.
        """
        raise NotImplementedError(f"the {self.kind} sandbox cannot be forked")

    def put_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        """Create the file ``path`` (relative to the working directory, not yet existing) owned by the
        sandbox's supervisor, so the agent can read (or, for mode 0o755, run) it but not change it.

        Raises:
            SandboxUnavailable: the sandbox is not running.
        """
        channel = self._channel()
        if channel is None:
            raise SandboxUnavailable(f"the {self.kind} sandbox is not started")
        channel.put(path, data, mode)

    def _channel(self) -> WorkerClient | None:
        """The channel to the sandbox's worker (None before start, after close, and for backends without)."""
        return None

    @abc.abstractmethod
    def python_packages(self) -> dict[str, str]:
        """Name -> version of the Python distributions the sandbox's interpreter can import."""

    @abc.abstractmethod
    def close(self) -> None:
        """Stop every process and remove the sandbox; safe to call again."""

    def __enter__(self) -> Sandbox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


PACKAGES_CODE = (
    "import importlib.metadata as m, json\n"
    "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions() if d.metadata['Name']}))"
)


@functools.cache
def _host_packages() -> dict[str, str]:
    import importlib.metadata as metadata

    return {d.metadata["Name"]: d.version for d in metadata.distributions() if d.metadata["Name"]}


def host_packages() -> dict[str, str]:
    """This interpreter's distributions (the local sandboxes run it), read once per process."""
    return dict(_host_packages())


def host_memory() -> int | None:
    """This machine's physical memory in bytes (None where it cannot be read)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this host (one of another user's counts)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
