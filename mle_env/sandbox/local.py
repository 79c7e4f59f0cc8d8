"""The local sandbox: a per-episode workspace folder and the worker as a subprocess of this Python.

Convenient where no Docker engine answers, and fast, but **not a security boundary**: actions run as
the host user with the host's network and files (including the prepared answers in the cache). ``data``
is a symbolic link to the prepared public folder, whose files are read-only. Every process an action
starts is in a process group of its own that is killed on timeout and when the sandbox closes.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from collections import deque
from pathlib import Path

from mle_env.errors import SandboxUnavailable
from mle_env.sandbox.base import SUBMISSION, WORKER_PATH, ExecResult, Sandbox, SandboxInfo, SandboxLimits
from mle_env.sandbox.channel import PipeTransport, WorkerClient

# variables that must not reach agent code even in the local sandbox
_SECRET_PREFIXES = ("KAGGLE_", "OPENAI_", "MLE_ENV_LLM_", "AWS_", "HF_TOKEN", "ANTHROPIC_")


class LocalSandbox(Sandbox):
    """Actions run in ``<root>/mle-env-*/`` with this interpreter (see the module docstring)."""

    kind = "local"

    def __init__(self, public_dir: Path, limits: SandboxLimits | None = None, root: Path | None = None) -> None:
        self.public_dir = Path(public_dir)
        self.limits = limits or SandboxLimits()
        self.root = root
        self.workdir: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.client: WorkerClient | None = None
        self._stderr: deque[str] = deque(maxlen=50)

    def _start(self) -> SandboxInfo:
        self.workdir = Path(tempfile.mkdtemp(prefix="mle-env-", dir=self.root))
        (self.workdir / "data").symlink_to(self.public_dir.resolve(), target_is_directory=True)
        for name in ("submission", "code", "logs"):
            (self.workdir / name).mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(_SECRET_PREFIXES)}
        # `python3` in actions is this interpreter, even when it lives in a venv that is not activated
        env.update(MLE_ENV_SANDBOX="local", PYTHONUNBUFFERED="1",
                   PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
                   **self.limits.thread_environment())
        self.process = subprocess.Popen(
            [sys.executable, str(WORKER_PATH), "serve", str(self.workdir)],
            cwd=self.workdir, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True,
        )
        threading.Thread(target=self._collect_stderr, daemon=True).start()
        transport = PipeTransport(self.process.stdin.fileno(), self.process.stdout.fileno(),
                                  lambda: "".join(self._stderr))
        self.client = WorkerClient(transport, f"local sandbox {self.workdir}")
        self.client.call("ping", 30.0)
        return SandboxInfo(
            kind=self.kind, workdir=str(self.workdir), cpus=float(os.cpu_count() or 1),
            memory_bytes=_host_memory(), python=sys.version.split()[0],
        )

    def _collect_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.append(line.decode("utf-8", "replace"))

    def exec(self, kind: str, code: str, timeout: float) -> ExecResult:
        if self.client is None:
            raise SandboxUnavailable("the local sandbox is not started")
        return self.client.exec(kind, code, timeout, self.limits.max_output)

    def copy_out(self, path: str = SUBMISSION, max_bytes: int = 2**30) -> bytes | str | None:
        if self.workdir is None:
            return None
        name = Path(path).name
        target = self.workdir / path
        real = Path(os.path.realpath(target))
        inside = [Path(os.path.realpath(self.workdir)), Path(os.path.realpath(self.public_dir))]
        if not any(real == root or real.is_relative_to(root) for root in inside):
            return f"{name} leads out of the working directory through a symbolic link"
        try:  # O_NONBLOCK: opening a named pipe must not wait for a writer
            fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return f"{name} is a symbolic link or unreadable; write a regular file"
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                return f"{name} is not a regular file"
            if st.st_size > max_bytes:
                return f"{name} is {st.st_size} bytes, over the {max_bytes}-byte limit"
            return f.read(max_bytes + 1)

    def python_packages(self) -> dict[str, str]:
        return dict(_host_packages())

    def close(self) -> None:
        if self.client is not None:
            self.client.shutdown()
            self.client = None
        if self.process is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
                if stream is not None:
                    stream.close()
            self.process = None
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None


@functools.cache
def _host_packages() -> dict[str, str]:
    """This interpreter's distributions (the local sandbox runs it), read once per process."""
    import importlib.metadata as metadata

    return {d.metadata["Name"]: d.version for d in metadata.distributions() if d.metadata["Name"]}


def _host_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None

