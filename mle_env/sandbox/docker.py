"""The docker sandbox: one container per episode, driven through one attached ``docker exec`` stream.

The container runs ``sleep infinity`` under Docker's init; the worker is copied in and started once with
``docker exec``, and every action is a message on that stream (about 1-2 ms instead of ~50 ms for a new
``docker exec`` per action). Isolation: no network unless asked, CPU/memory/pids/shm limits,
no-new-privileges, a seccomp profile (:mod:`mle_env.sandbox.seccomp`: no file handles, namespaces, mounts,
ptrace, keyrings or BPF, whatever the capabilities) and a bounding set of four capabilities.

No process of the sandbox that holds a privilege runs, imports or reads what the agent can write:
- the worker starts as root only to give itself up: it becomes uid 999 (:data:`WORKER_UID`) with just the
  capabilities its job needs (start the agent's programs as uid 1000: CAP_SETUID, CAP_SETGID; stop them:
  CAP_KILL; pin their OOM score: CAP_SYS_RESOURCE), none inheritable, and never CAP_DAC_READ_SEARCH;
- it and the validation endpoint's relay (uid 998, no capabilities) run isolated Python (``-I``: no user
  site, no PYTHON* variables, no script folder on the path) with HOME and TMPDIR in folders of their own;
  the agent's environment (HOME=/home/agent) is given only to the agent's programs;
- it reads the agent's files (the disk watchdog, copies out) as uid 1000 (a per-thread filesystem identity),
  so it sees exactly what the agent may see, and copies out refuse a link in any path component.
The agent's programs have no capabilities and cannot signal, trace or read the file descriptors of the
worker or the relay, so the channel is out of their reach; the container's init is root's, so ``kill -9 -1``
from inside ends only the agent's own processes. The public data is bind-mounted read-only at /home/data;
private answers, graders and leaderboards are never mounted. A file leaves the container in two steps: the
worker copies it, opened as the agent would, into a folder only it can enter, and the host takes that copy
through the engine (``get_archive``), size-capped; ``./code`` and ``./logs`` leave as one tar the worker
packs under caps in bytes and files. Containers carry labels naming the process that owns them, so
``mle-env gc`` can remove those a killed process left behind.

``fork()`` asks the worker for a tar of everything the agent can have written (the workspace but the data,
/tmp, /var/tmp, /run/lock: folders, files and links with their owners and modes, read as the agent, never
through a link), takes it out through the engine into a host temporary file, and starts the fork's container
from the image with that tar put in. A file with more than a MiB of holes travels as its data segments and
the fork's worker rebuilds it sparse (the engine would write the holes out as zeros, as ``docker commit``
does: a 1 GiB sparse file cost 1 GiB and 12 s per fork that way). What the agent cannot read, pipes and
devices are left out (``SandboxInfo.extra["fork_skipped"]``); running processes are not carried.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import socket
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from mle_env.errors import PrerequisiteError, SandboxBroken, SandboxUnavailable
from mle_env.sandbox.base import (
    MAX_TREE_FILES,
    PACKAGES_CODE,
    SUBMISSION,
    WORKER_PATH,
    ExecResult,
    Sandbox,
    SandboxInfo,
    SandboxLimits,
    pid_alive,
)
from mle_env.sandbox.channel import DockerStreamTransport, WorkerClient
from mle_env.sandbox.endpoint import VALIDATION_PORT
from mle_env.sandbox.files import empty_tree_archive
from mle_env.sandbox.images import DEFAULT_IMAGE, docker_client
from mle_env.sandbox.seccomp import docker_security_option
from mle_env.sandbox.worker import PackedTree

LABEL = "mle-env"
OWNER_PID = "mle-env.owner-pid"
OWNER_HOST = "mle-env.owner-host"
SNAPSHOT_LABEL = "mle-env.snapshot"
WORKDIR = "/home"
WORKER_FOLDER = "/opt/mle-env"
WORKER_IN_CONTAINER = f"{WORKER_FOLDER}/worker.py"
WORKER_HOME = f"{WORKER_FOLDER}/home"  # the worker's HOME and TMPDIR: its own, mode 0700
STAGE_DIR = f"{WORKER_FOLDER}/stage"  # files on their way out: the worker's own, mode 0700
AGENT_UID = 1000
WORKER_UID = 999  # the worker, after it gives up root
RELAY_UID = 998  # the validation endpoint's HTTP server
WORKER_CAPABILITIES = ["SETUID", "SETGID", "KILL", "SYS_RESOURCE"]
#: the environment of the worker and of everything root starts in the container (docker exec included)
ROOT_ENVIRONMENT = {"HOME": WORKER_HOME, "TMPDIR": WORKER_HOME, "PYTHONNOUSERSITE": "1", "MLE_ENV_SANDBOX": "docker"}
# what uid 1000 can write: the workspace and the world-writable folders of a Debian image (/dev/shm is a
# tmpfs bounded by shm)
DISK_PATHS = [WORKDIR, "/tmp", "/var/tmp", "/run/lock"]
_PACKAGES: dict[str, dict[str, str]] = {}  # image id -> packages, read once per process
_ENGINE_CAPABILITIES: dict[str, list[str]] = {}  # engine id -> the worker capabilities it can grant


class DockerSandbox(Sandbox):
    """Actions run in a fresh container of ``image`` (see the module docstring)."""

    kind = "docker"
    serves_endpoint = True

    def __init__(
        self, public_dir: Path, limits: SandboxLimits | None = None, image: str = DEFAULT_IMAGE,
        labels: dict[str, str] | None = None,
    ) -> None:
        self.public_dir = Path(public_dir).resolve()
        self.limits = limits or SandboxLimits()
        self.image = image
        self.labels = labels or {}
        self.client: Any = None
        self.container: Any = None
        self.image_id: str | None = None
        self.worker: WorkerClient | None = None
        self.seed: IO[bytes] | None = None  # a fork's copy of its parent's files (a tar; see fork)
        self.fork_skipped: list[str] = []  # what that copy left out
        self.agent_environment: dict[str, str] = {}  # the agent's programs' environment (set at start)
        self.capabilities: list[str] = WORKER_CAPABILITIES  # what the worker keeps (this engine may grant fewer)

    # -- lifecycle ------------------------------------------------------------------------------------
    def _start(self) -> SandboxInfo:
        import docker

        self.client = docker_client()
        try:
            image = self.client.images.get(self.image)
        except docker.errors.ImageNotFound:
            raise PrerequisiteError(
                f"the image {self.image} is not on this Docker engine; build it with "
                "`mle-env image build` (or `mle-env image build --offline` without a registry)"
            ) from None
        self.agent_environment = _agent_environment(image.attrs.get("Config", {}).get("Env") or [], self.limits)
        engine = self.client.info()
        engine_id = str(engine.get("ID", ""))
        self.capabilities = _ENGINE_CAPABILITIES.get(engine_id, WORKER_CAPABILITIES)
        try:
            try:
                self._create_container()
            except docker.errors.APIError as e:
                if "apply caps" not in str(e) or "SYS_RESOURCE" not in self.capabilities:
                    raise
                # an engine that itself lacks CAP_SYS_RESOURCE (a container or a restricted VM) cannot grant it:
                # start without, and the agent's OOM score has no floor there (see SandboxInfo.extra)
                self.container.remove(force=True)
                self.capabilities = _ENGINE_CAPABILITIES[engine_id] = [
                    c for c in WORKER_CAPABILITIES if c != "SYS_RESOURCE"]
                self._create_container()
        except docker.errors.APIError as e:
            raise _start_error(e, self.limits) from e
        self.image_id = image.id
        self.worker = self._attach_worker()
        answer = self.worker.call("ping", 30.0)
        self.fork_skipped += [f"{p} (could not be rebuilt sparse)" for p in answer.get("restore_skipped") or []]
        return SandboxInfo(
            kind=self.kind, workdir=WORKDIR, image=self.image,
            cpus=self.limits.cpus or float(engine.get("NCPU", 0)) or None,
            memory_bytes=self.limits.memory or engine.get("MemTotal"),
            gpus=_gpu_names(self.limits.gpus), extra={"container": self.container.short_id, "image_id": image.short_id,
                                                      "oom_score_floor": "SYS_RESOURCE" in self.capabilities,
                                                      **({"fork_skipped": self.fork_skipped[:20]}
                                                         if self.fork_skipped else {})},
        )

    def _create_container(self) -> None:
        self.container = self.client.containers.create(self.image, **self._create_options())
        self.container.put_archive("/", _bootstrap_tar())
        if self.seed is not None:  # a fork: what the parent's agent wrote, over the fresh folders
            self.seed.seek(0)
            self.container.put_archive("/", self.seed)
        self.container.start()

    def fork(self) -> DockerSandbox:
        if self.container is None or self.worker is None:
            raise SandboxUnavailable("the docker sandbox is not started")
        try:
            staged = self._stage("pack_fork", paths=DISK_PATHS, exclude=[f"{WORKDIR}/data"])
            seed = self._take_staged(staged, int(staged.get("size", 0)))
        except SandboxBroken as e:  # the agent broke its own sandbox: there is nothing to fork
            raise SandboxUnavailable(f"cannot copy the docker sandbox's files: {e}") from e
        child = DockerSandbox(self.public_dir, self.limits, self.image, self.labels)
        child.seed = seed
        child.fork_skipped = [str(p) for p in staged.get("skipped", [])]
        return child

    def _create_options(self) -> dict[str, Any]:
        import docker

        limits = self.limits
        options: dict[str, Any] = dict(
            command=["sleep", "infinity"], init=True, detach=True, user="0:0",
            working_dir=WORKDIR, network_mode="bridge" if limits.network else "none",
            cap_drop=["ALL"], cap_add=self.capabilities,
            security_opt=["no-new-privileges", docker_security_option()],
            pids_limit=limits.pids, shm_size=limits.shm, environment=dict(ROOT_ENVIRONMENT),
            volumes={str(self.public_dir): {"bind": f"{WORKDIR}/data", "mode": "ro"}},
            labels={LABEL: "1", OWNER_PID: str(os.getpid()), OWNER_HOST: socket.gethostname(), **self.labels},
        )
        if limits.memory is not None:
            options.update(mem_limit=limits.memory, memswap_limit=limits.memory)  # no swap beyond the limit
        if limits.cpus is not None:
            options["nano_cpus"] = int(limits.cpus * 1e9)
        if limits.gpus is not None:
            gpus = limits.gpus
            if gpus == "all":
                request = docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])
            elif isinstance(gpus, int):
                request = docker.types.DeviceRequest(count=gpus, capabilities=[["gpu"]])
            else:
                request = docker.types.DeviceRequest(device_ids=[str(g) for g in gpus], capabilities=[["gpu"]])
            options["device_requests"] = [request]
        return options

    def _attach_worker(self) -> WorkerClient:
        api = self.client.api
        config = {"workdir": WORKDIR, "user": AGENT_UID, "group": AGENT_UID, "agent": {"uid": AGENT_UID},
                  "env": self.agent_environment, "disk_limit": self.limits.disk, "disk_paths": DISK_PATHS,
                  "disk_exclude": [f"{WORKDIR}/data"], "fs_uid": AGENT_UID, "fs_gid": AGENT_UID,
                  "identity": {"uid": WORKER_UID, "gid": WORKER_UID, "caps": self.capabilities},
                  "stage_dir": STAGE_DIR, "restore": self.seed is not None}
        if self.endpoint is not None:  # a uid of its own, out of the agent's reach
            config["validation"] = {"port": VALIDATION_PORT, "max_bytes": self.endpoint.max_bytes, "as_agent": False,
                                    "idle_s": self.endpoint.idle_s,
                                    "uid": RELAY_UID, "gid": RELAY_UID,
                                    "env": {"PATH": self.agent_environment["PATH"], "HOME": WORKER_FOLDER,
                                            "TMPDIR": WORKER_FOLDER, "LANG": "C.UTF-8"}}
        exec_id = api.exec_create(
            self.container.id, ["python3", "-I", WORKER_IN_CONTAINER, "serve", json.dumps(config)], stdin=True,
            stdout=True, stderr=True, user="0:0", workdir=WORKER_FOLDER,
        )["Id"]
        stream = api.exec_start(exec_id, socket=True)
        sock = getattr(stream, "_sock", stream)
        return WorkerClient(DockerStreamTransport(sock), f"docker sandbox {self.container.short_id}",
                            on_event=self.endpoint)

    def _channel(self) -> WorkerClient | None:
        return self.worker

    # -- actions --------------------------------------------------------------------------------------
    def exec(self, kind: str, code: str, timeout: float) -> ExecResult:
        if self.worker is None:
            raise SandboxUnavailable("the docker sandbox is not started")
        try:
            return self.worker.exec(kind, code, timeout, self.limits.max_output)
        except SandboxUnavailable as e:
            raise self._failure(str(e)) from e

    def _failure(self, why: str) -> Exception:
        """Whose fault a lost worker is. The agent can neither kill the root worker nor the root init, so
        only two things inside reach them: memory (the OOM killer) and, in principle, a bug of the worker.
        The host can show that the fault is outside when the container is gone, stopped without an OOM
        kill, or the engine does not answer: that is an infrastructure error; else the agent's doing."""
        import docker

        try:
            self.container.reload()
        except docker.errors.NotFound:
            return SandboxUnavailable(f"{why} (the container was removed from outside)")
        except Exception as e:  # noqa: BLE001 - any failure here means the engine is unreachable
            return SandboxUnavailable(f"{why} (the Docker engine does not answer: {type(e).__name__})")
        state = self.container.attrs.get("State", {})
        if state.get("OOMKilled"):
            return SandboxBroken("the sandbox ran out of memory and the kernel killed its init and worker, so "
                                 "every process in it is gone")
        if state.get("Status") != "running":
            return SandboxUnavailable(f"{why} (the container was stopped from outside: {state.get('Status')}, "
                                      f"exit code {state.get('ExitCode')})")
        return SandboxBroken(f"the sandbox's worker was lost while the container runs ({why}); only the agent's "
                             "use of memory or processes reaches it")

    def _container_state(self) -> str:
        import docker

        try:
            self.container.reload()
        except docker.errors.NotFound:
            return "the container was removed"
        except Exception as e:  # noqa: BLE001 - any failure here means the engine is unreachable
            return f"the Docker engine does not answer: {type(e).__name__}"
        state = self.container.attrs.get("State", {})
        return (f"container {state.get('Status')}, exit code {state.get('ExitCode')}, "
                f"OOM killed {state.get('OOMKilled')}")

    def copy_out(self, path: str = SUBMISSION, max_bytes: int = 2**30) -> bytes | str | None:
        if self.container is None or self.worker is None:
            return None
        staged = self._stage("stage", path=path, max_bytes=max_bytes)
        if staged.get("missing"):
            return None
        if "refused" in staged:
            return str(staged["refused"])
        try:
            with self._fetch(staged, max_bytes) as member:
                data = member.read(max_bytes + 1)
        finally:
            self._unstage()
        if len(data) > max_bytes:
            return f"{Path(path).name} is over the {max_bytes}-byte limit"
        return data

    def copy_tree(self, path: str, max_bytes: int, max_files: int = MAX_TREE_FILES) -> IO[bytes]:
        if self.container is None or self.worker is None or ".." in Path(path).parts:
            return empty_tree_archive()
        staged = self._stage("pack", path=path, max_bytes=max_bytes, max_files=max_files)
        # the files' bytes, a bounded header per file, the note on what was left out, the tar's end and padding
        return self._take_staged(staged, max_bytes + (max_files + 1) * PackedTree.HEADER_BOUND + 64 * 1024)

    def _take_staged(self, staged: dict[str, Any], max_bytes: int) -> IO[bytes]:
        """The staged file (at most ``max_bytes``) copied into a host temporary file, positioned at its start;
        the stage is emptied whatever happens."""
        out = tempfile.TemporaryFile(prefix="mle-env-staged-")
        try:
            with self._fetch(staged, max_bytes) as member:
                shutil.copyfileobj(member, out, 1 << 20)
        except BaseException:
            out.close()
            raise
        finally:
            self._unstage()
        out.seek(0)
        return out

    def _stage(self, op: str, **fields: Any) -> dict[str, Any]:
        """Ask the worker to stage a file or a packed folder (see worker.py) and return its answer."""
        assert self.worker is not None
        try:
            return self.worker.call(op, 300.0, **fields)
        except SandboxUnavailable as e:
            raise self._failure(str(e)) from e

    @contextlib.contextmanager
    def _fetch(self, staged: dict[str, Any], max_bytes: int) -> Iterator[IO[bytes]]:
        """The staged file, streamed out of the container through the engine (its path is the worker's own
        folder, which the agent cannot enter); at most ``max_bytes``."""
        import docker

        if int(staged.get("size", 0)) > max_bytes or staged.get("staged") != f"{STAGE_DIR}/out":
            raise SandboxUnavailable(f"the worker staged an unexpected file ({str(staged)[:200]})")
        try:
            stream, _ = self.container.get_archive(f"{STAGE_DIR}/out")
        except docker.errors.APIError as e:
            raise SandboxUnavailable(f"cannot copy a staged file out: {e} ({self._container_state()})") from e
        with tarfile.open(fileobj=_ChunkReader(stream), mode="r|") as tar:
            member = tar.next()
            extracted = tar.extractfile(member) if member is not None and member.isfile() else None
            if extracted is None:
                raise SandboxUnavailable("the engine sent no staged file")
            yield extracted

    def _unstage(self) -> None:
        try:
            self._stage("unstage")
        except (SandboxUnavailable, SandboxBroken):
            pass  # the container is going away, and the staged copy with it

    def python_packages(self) -> dict[str, str]:
        key = self.image_id or self.image
        if key not in _PACKAGES:
            import json
            import shlex

            if self.worker is None:
                raise SandboxUnavailable("the docker sandbox is not started")
            result = self.worker.exec("shell", f"python3 -c {shlex.quote(PACKAGES_CODE)}", 60, 2**24)
            try:
                _PACKAGES[key] = json.loads(result.stdout) if result.exit_code == 0 else {}
            except ValueError:
                _PACKAGES[key] = {}
        return dict(_PACKAGES[key])

    def close(self) -> None:
        if self.worker is not None:
            self.worker.transport.close()  # the container goes away below; no need to ask the worker
            self.worker = None
        if self.container is not None:
            try:
                self.container.remove(force=True)
            except Exception as e:  # noqa: BLE001 - already gone, or the engine is down: nothing left to do here
                import docker

                if not isinstance(e, docker.errors.NotFound):
                    import warnings

                    warnings.warn(f"could not remove container {self.container.short_id}: {e}; run `mle-env gc`",
                                  stacklevel=2)
            self.container = None
        if self.seed is not None:
            self.seed.close()
            self.seed = None
        if self.client is not None:
            self.client.close()
            self.client = None


def _remove_snapshot(client: Any, image_id: str) -> None:
    """Remove a fork's snapshot image; one that forks of the fork still stand on is left to the engine, which
    deletes it (untagged, unused) together with the last of them."""
    import docker

    try:
        client.images.remove(image_id)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as e:
        if e.status_code != 409:  # 409: a conflict with a child image or a container still using it
            import warnings

            warnings.warn(f"could not remove snapshot image {image_id[7:19]}: {e}; run `mle-env gc`", stacklevel=3)


class _ChunkReader(io.RawIOBase):
    """A readable file over the engine's iterator of archive chunks (so a big folder is never held whole)."""

    def __init__(self, chunks: Any) -> None:
        self.chunks = iter(chunks)
        self.pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self.pending:
            try:
                self.pending = next(self.chunks)
            except StopIteration:
                return 0
        n = min(len(buffer), len(self.pending))
        buffer[:n] = self.pending[:n]
        self.pending = self.pending[n:]
        return n


def _bootstrap_tar() -> bytes:
    """The worker with its own folders, and the agent's writable folders owned by uid 1000, as a tar for
    put_archive."""
    buffer = io.BytesIO()
    now = time.time()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for folder, owner, mode in ((WORKER_FOLDER, 0, 0o755), (WORKER_HOME, WORKER_UID, 0o700),
                                    (STAGE_DIR, WORKER_UID, 0o700), (WORKDIR, WORKER_UID, 0o755)):
            info = tarfile.TarInfo(folder.lstrip("/"))
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, mode, now
            info.uid = info.gid = owner  # /home: the worker's, so it can place instructions.txt there
            tar.addfile(info)
        for folder in ("submission", "code", "logs", "agent"):
            info = tarfile.TarInfo(f"{WORKDIR.strip('/')}/{folder}")
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, now
            info.uid = info.gid = AGENT_UID
            tar.addfile(info)
        worker = WORKER_PATH.read_bytes()
        info = tarfile.TarInfo(WORKER_IN_CONTAINER.lstrip("/"))
        info.size, info.mode, info.mtime = len(worker), 0o644, now
        tar.addfile(info, io.BytesIO(worker))
    return buffer.getvalue()


def _agent_environment(image_env: list[str], limits: SandboxLimits) -> dict[str, str]:
    """The environment of the agent's programs: the image's, with the agent's own home and temporary folder."""
    env = dict(item.split("=", 1) for item in image_env if "=" in item)
    env.update({"HOME": f"{WORKDIR}/agent", "USER": "agent", "LOGNAME": "agent", "SHELL": "/bin/bash", "TMPDIR": "/tmp",
                "MLE_ENV_SANDBOX": "docker", "PYTHONUNBUFFERED": "1", **limits.thread_environment()})
    env.setdefault("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    return env


def _start_error(error: Exception, limits: SandboxLimits) -> Exception:
    text = str(error)
    if limits.gpus is not None and ("device driver" in text or "gpu" in text.lower()):
        return PrerequisiteError(
            f"gpus={limits.gpus!r} was asked for but this Docker engine has no GPU runtime ({text.strip()}); "
            "install the NVIDIA Container Toolkit, or run without gpus"
        )
    return SandboxUnavailable(f"cannot start the container: {text}")


def _gpu_names(gpus: str | int | list[str] | None) -> list[str]:
    if gpus is None:
        return []
    if isinstance(gpus, list):
        return [str(g) for g in gpus]
    return [str(gpus)]


def remove_stale_containers(everything: bool = False) -> list[str]:
    """Remove mle-env containers whose owning process on this host is gone (every mle-env container, of any
    host, with ``everything``), and the snapshot images of their forks likewise; returns the short ids removed.
    Containers started from other hosts are left alone: their owners cannot be checked from here."""
    client = docker_client()
    removed = []
    host = socket.gethostname()
    try:
        for container in client.containers.list(all=True, filters={"label": LABEL}):
            labels = container.labels
            mine = labels.get(OWNER_HOST) == host
            if everything or (mine and not pid_alive(int(labels.get(OWNER_PID, "0") or 0))):
                container.remove(force=True)
                removed.append(container.short_id)
        for image in client.images.list(all=True, filters={"label": SNAPSHOT_LABEL}):  # forks' snapshots
            labels = image.labels or {}
            mine = labels.get(OWNER_HOST) == host
            if everything or (mine and not pid_alive(int(labels.get(OWNER_PID, "0") or 0))):
                _remove_snapshot(client, image.id)
                removed.append(image.short_id)
    finally:
        client.close()
    return removed


    return True
