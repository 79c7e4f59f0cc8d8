"""The unisolated sandbox (``sandbox="unisolated"``): a per-episode workspace folder and the worker as a
subprocess of this Python, with no isolation at all.

**Not a security boundary**: actions run as the host user with the host's network, processes and files
(including the prepared answers in the cache); ``kill -9 -1`` from an action run as root kills every process
on the machine. It exists only as an explicit opt-in for trusted code on machines without Docker or
bubblewrap, and refuses to run as root unless ``MLE_ENV_ALLOW_UNISOLATED_ROOT=1`` says so. ``data`` is a
symbolic link to the prepared public folder. Every process an action starts is in a process group of its
own that is killed on timeout and when the sandbox closes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO

from mle_env.errors import PrerequisiteError, SandboxUnavailable
from mle_env.sandbox.base import (
    MAX_TREE_FILES,
    SUBMISSION,
    WORKER_PATH,
    ExecResult,
    Sandbox,
    SandboxInfo,
    SandboxLimits,
    host_memory,
    host_packages,
)
from mle_env.sandbox.channel import PipeTransport, StderrTail, WorkerClient
from mle_env.sandbox.files import archive_workspace_tree, empty_tree_archive, read_workspace_file
from mle_env.sandbox.tree_removal import remove_tree

# variables that must not reach agent code even in the local sandbox
_SECRET_PREFIXES = ("KAGGLE_", "OPENAI_", "MLE_ENV_LLM_", "AWS_", "HF_TOKEN", "ANTHROPIC_")


ALLOW_ROOT = "MLE_ENV_ALLOW_UNISOLATED_ROOT"


class UnisolatedSandbox(Sandbox):
    """Actions run in ``<root>/mle-env-*/`` with this interpreter, as this user (see the module docstring)."""

    kind = "unisolated"

    def __init__(self, public_dir: Path, limits: SandboxLimits | None = None, root: Path | None = None) -> None:
        self.public_dir = Path(public_dir)
        self.limits = limits or SandboxLimits()
        self.root = root
        self.workdir: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.client: WorkerClient | None = None

    def _start(self) -> SandboxInfo:
        if os.geteuid() == 0 and os.environ.get(ALLOW_ROOT) != "1":
            raise PrerequisiteError(
                "sandbox='unisolated' runs agent code as this user, and this process is root (an action "
                "`kill -9 -1` would kill every process on the machine); use sandbox='local' (bubblewrap) or "
                f"'docker', or set {ALLOW_ROOT}=1 if you really mean it"
            )
        self.workdir = Path(tempfile.mkdtemp(prefix="mle-env-", dir=self.root))
        (self.workdir / "data").symlink_to(self.public_dir.resolve(), target_is_directory=True)
        for name in ("submission", "code", "logs"):
            (self.workdir / name).mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(_SECRET_PREFIXES)}
        # `python3` in actions is this interpreter, even when it lives in a venv that is not activated
        env.update(MLE_ENV_SANDBOX="unisolated", PYTHONUNBUFFERED="1",
                   PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
                   **self.limits.thread_environment())
        self.process = subprocess.Popen(
            [sys.executable, str(WORKER_PATH), "serve", json.dumps({"workdir": str(self.workdir)})],
            cwd=self.workdir, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True,
        )
        transport = PipeTransport(self.process.stdin.fileno(), self.process.stdout.fileno(),
                                  StderrTail(self.process.stderr))
        self.client = WorkerClient(transport, f"unisolated sandbox {self.workdir}")
        self.client.call("ping", 30.0)
        return SandboxInfo(
            kind=self.kind, workdir=str(self.workdir), cpus=float(os.cpu_count() or 1),
            memory_bytes=host_memory(), python=sys.version.split()[0],
        )

    def exec(self, kind: str, code: str, timeout: float) -> ExecResult:
        if self.client is None:
            raise SandboxUnavailable("the unisolated sandbox is not started")
        return self.client.exec(kind, code, timeout, self.limits.max_output)

    def copy_out(self, path: str = SUBMISSION, max_bytes: int = 2**30) -> bytes | str | None:
        if self.workdir is None:
            return None
        parts = Path(path).parts
        if parts and parts[0] == "data":  # the link to the public folder
            return read_workspace_file(self.public_dir, str(Path(*parts[1:])) if len(parts) > 1 else ".", max_bytes)
        return read_workspace_file(self.workdir, path, max_bytes)

    def copy_tree(self, path: str, max_bytes: int, max_files: int = MAX_TREE_FILES) -> IO[bytes]:
        if self.workdir is None:
            return empty_tree_archive()
        return archive_workspace_tree(self.workdir, path, max_bytes, max_files)

    def python_packages(self) -> dict[str, str]:
        return host_packages()

    def _channel(self) -> WorkerClient | None:
        return self.client

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
            remove_tree(self.workdir)
            self.workdir = None
