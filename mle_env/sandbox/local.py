"""The local sandbox: bubblewrap namespaces on this machine, with the supervising worker outside them.

``bwrap`` (Debian/Ubuntu package ``bubblewrap``; the mechanism Codex CLI and Anthropic's sandbox-runtime
use on Linux) starts a tiny init in new user, PID, network, IPC, UTS, cgroup and mount namespaces. Inside,
only these paths exist: /usr (and the /bin, /lib links), the Python installation this process runs
(read-only), a few files of /etc, the worker script (read-only), ``/home`` (the episode's workspace:
``data/`` read-only, ``submission/``, ``code/``, ``logs/``, ``agent/``), ``/tmp``, a fresh /proc and a
minimal /dev. Never $MLE_ENV_HOME, the private answers, the host's home or the repository. The agent runs
as uid 1000 with no capabilities and no network (loopback is its own); the environment is an allowlist.

The worker that runs the actions stays on the host, outside every namespace, and starts each program inside
them with ``nsenter``: the agent cannot see it, signal it, trace it or write into its channel. On a root
host, bubblewrap itself is started as ``nobody`` (the paths it binds are first bind-mounted into a private
mount namespace where nobody can reach them), so the sandbox's uid 1000 is ``nobody`` outside and owns
nothing of the host's.

Limits: where the host lets this process create cgroups (root, cgroup v1 or v2), memory, pids and CPU are
cgroup limits; elsewhere the memory limit is an address-space rlimit, pids an ``RLIMIT_NPROC`` and CPU only
the capped thread pools (``SandboxInfo.extra["limits"]`` says which). Disk: the worker's watchdog plus a
per-file ``RLIMIT_FSIZE`` (see worker.py). ``gpus`` passes ``/dev/nvidia*`` through and sets
``CUDA_VISIBLE_DEVICES``.

``fork()`` copies the workspace's ``home`` and ``tmp`` folders into a new sandbox's folder with
:func:`~mle_env.sandbox.files.copy_workspace` (owners kept, so the agent's files stay nobody's on a root host
and the supervisor's read-only files stay root's; ``copy_file_range`` shares extents where the filesystem
can; the walk never follows a link the agent may swap in meanwhile); the fork then starts over the copy.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

from mle_env.errors import PrerequisiteError, SandboxBroken, SandboxUnavailable
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
    pid_alive,
)
from mle_env.sandbox.channel import PipeTransport, StderrTail, WorkerClient
from mle_env.sandbox.endpoint import VALIDATION_PORT
from mle_env.sandbox.files import archive_workspace_tree, copy_workspace, empty_tree_archive, read_workspace_file
from mle_env.sandbox.seccomp import local_filter
from mle_env.sandbox.tree_removal import remove_tree

WORKDIR = "/home"
WORKER_INSIDE = "/opt/mle-env/worker.py"
#: seconds bubblewrap has to build a sandbox and execute its init, once it has forked it
INIT_START_S = 30.0
AGENT_UID = 1000
NOBODY = 65534
OWNER_FILE = "owner"  # "<pid> <host>" of the process that started the sandbox, for `mle-env gc`
CGROUP_ROOT = Path("/sys/fs/cgroup")
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "nsswitch.conf", "ssl",
        "mime.types", "protocols", "services")
_ENV_ALLOWED = ("LANG", "LC_ALL", "TZ", "TERM")
_INSTALL_HINT = ("use sandbox='docker' (a Docker engine and `mle-env image build --offline`), or "
                 "sandbox='unisolated' for trusted code only")


class LocalSandbox(Sandbox):
    """Actions run in bubblewrap namespaces over a workspace in ``<root>/mle-env-*/`` (see the module
    docstring)."""

    kind = "local"
    serves_endpoint = True

    def __init__(self, public_dir: Path, limits: SandboxLimits | None = None, root: Path | None = None) -> None:
        self.public_dir = Path(public_dir).resolve()
        self.limits = limits or SandboxLimits()
        self.root = root
        self.base: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None  # bubblewrap, whose child is the sandbox's init
        self.init_pid: int | None = None
        self.worker: subprocess.Popen[bytes] | None = None
        self.client: WorkerClient | None = None
        self.cgroups: list[Path] = []
        self.enforced: dict[str, str] = {}
        self.forked = False  # base already holds a copy of another sandbox's home and tmp (see fork)
        self.fork_skipped: list[str] = []  # what that copy left out

    # -- lifecycle ------------------------------------------------------------------------------------
    def _new_base(self) -> Path:
        base = Path(tempfile.mkdtemp(prefix="mle-env-", dir=self.root))
        os.chmod(base, 0o711)  # nobody may pass through to the workspace, not list it
        (base / OWNER_FILE).write_text(f"{os.getpid()} {socket.gethostname()}\n")
        return base

    def fork(self) -> LocalSandbox:
        if self.base is None or not self._init_alive():
            raise SandboxUnavailable("the local sandbox is not running")
        child = LocalSandbox(self.public_dir, self.limits, self.root)
        child.base, child.forked = self._new_base(), True
        try:
            for part in ("home", "tmp"):
                child.fork_skipped += [f"{part}/{p}" for p in copy_workspace(self.base / part, child.base / part)]
        except BaseException as e:
            child.close()
            if isinstance(e, OSError):
                raise SandboxUnavailable(f"cannot copy the local sandbox's workspace: {e}") from e
            raise
        return child

    def _start(self) -> SandboxInfo:
        bwrap = require_bubblewrap()
        as_root = os.geteuid() == 0
        owner = NOBODY if as_root else os.geteuid()
        if as_root:
            _require_searchable(Path(self.root or tempfile.gettempdir()))
        if self.base is None:
            self.base = self._new_base()
        home, tmp = self.base / "home", self.base / "tmp"
        made = (home / "data",) if self.forked else (
            home, tmp, *(home / name for name in ("submission", "code", "logs", "agent", "data")))
        for folder in made:  # a fork keeps the folders as the agent left them; data is the public data's mount point
            folder.mkdir(exist_ok=self.forked)
            if as_root:
                os.chown(folder, owner, owner)
        etc = self.base / "etc"
        etc.mkdir()
        (etc / "passwd").write_text(f"root:x:0:0:root:/root:/usr/sbin/nologin\n"
                                    f"agent:x:{AGENT_UID}:{AGENT_UID}:agent:{WORKDIR}/agent:/bin/bash\n"
                                    f"nobody:x:{NOBODY}:{NOBODY}:nobody:/nonexistent:/usr/sbin/nologin\n")
        (etc / "group").write_text(f"root:x:0:\nagent:x:{AGENT_UID}:\nnogroup:x:{NOBODY}:\n")
        (etc / "hostname").write_text("mle-env\n")
        (etc / "hosts").write_text("127.0.0.1\tlocalhost mle-env\n::1\tlocalhost ip6-localhost ip6-loopback\n")
        for f in etc.iterdir():
            f.chmod(0o644)
        self.cgroups, cgroup_files = self._make_cgroups()
        binds = self._binds(home, tmp, etc)
        info_r, info_w = os.pipe()
        self.process = subprocess.Popen(self._launcher(bwrap, binds, info_w, as_root), pass_fds=(info_w,),
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        start_new_session=True, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        os.close(info_w)
        self.init_pid = _read_child_pid(info_r)
        if self.init_pid is None:
            raise SandboxUnavailable(f"bubblewrap did not start the sandbox: {self._exit_message() or 'no output'}; "
                                     + _INSTALL_HINT)
        self._wait_for_init()
        try:
            self._start_worker(home, tmp, cgroup_files)
        except FileNotFoundError as e:  # the init is gone already: bubblewrap failed after forking it
            raise SandboxUnavailable(f"the sandbox's init exited at start: {self._exit_message() or e}") from e
        return SandboxInfo(
            kind=self.kind, workdir=WORKDIR, cpus=self.limits.cpus or float(os.cpu_count() or 1),
            memory_bytes=self.limits.memory or host_memory(), gpus=_gpu_ids(self.limits.gpus),
            python=sys.version.split()[0],
            extra={"isolation": "bubblewrap", "limits": dict(self.enforced), "base": str(self.base),
                   **({"fork_skipped": self.fork_skipped[:20]} if self.fork_skipped else {})},
        )

    def _wait_for_init(self) -> None:
        """Wait, at most ``INIT_START_S`` seconds, until bubblewrap has built the sandbox and executed its init.

        Bubblewrap reports the init's pid as soon as it has forked it, while the fork still builds the sandbox's
        root (a tmpfs, then each bind); an action entering its namespaces before then finds no /home (nsenter:
        "cannot open current working directory"). The init runs only once the root is complete, so the fork's
        command line turning into the init's says the sandbox is ready. Returns early when the init is gone;
        starting the worker then reports why."""
        assert self.init_pid is not None
        deadline = time.monotonic() + INIT_START_S
        while time.monotonic() < deadline and self._init_alive():
            try:
                args = Path(f"/proc/{self.init_pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                return
            if args[1:3] == [WORKER_INSIDE.encode(), b"init"]:
                return
            time.sleep(0.005)

    def _exit_message(self) -> str:
        """The last of what bubblewrap wrote to stderr, once it exited (it is given 10 s)."""
        assert self.process is not None
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            pass
        stderr = self.process.stderr.read().decode("utf-8", "replace").strip() if self.process.stderr else ""
        return stderr[-800:]

    def _binds(self, home: Path, tmp: Path, etc: Path) -> list[tuple[str, str, str]]:
        """(kind, source, destination) for every path the sandbox sees, in mount order: the workspace's /tmp
        and /home first, since a later mount hides whatever an earlier one put below it (a venv in /tmp)."""
        binds: list[tuple[str, str, str]] = [("rw", str(tmp), "/tmp"), ("rw", str(home), WORKDIR),
                                             ("ro", "/usr", "/usr")]
        for name in ("bin", "lib", "lib64", "lib32", "sbin"):
            path = Path("/") / name
            if path.is_symlink():
                binds.append(("symlink", os.readlink(path), str(path)))
            elif path.is_dir():
                binds.append(("ro", str(path), str(path)))
        for prefix in sorted({os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, sys.exec_prefix)}):
            if not prefix.startswith("/usr/"):
                binds.append(("ro", prefix, prefix))
        for name in _ETC:
            if (Path("/etc") / name).exists():
                binds.append(("ro", f"/etc/{name}", f"/etc/{name}"))
        for name in ("passwd", "group", "hostname", "hosts"):  # hosts: `localhost` names the sandbox's loopback
            binds.append(("ro", str(etc / name), f"/etc/{name}"))
        binds += [("ro", str(WORKER_PATH), WORKER_INSIDE), ("ro", str(self.public_dir), f"{WORKDIR}/data")]
        for device in _gpu_devices(self.limits.gpus):
            binds.append(("dev", device, device))
        return binds

    def _bwrap_args(self, bwrap: str, binds: list[tuple[str, str, str]], info_fd: int) -> list[str]:
        args = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
                "--as-pid-1", "--uid", str(AGENT_UID), "--gid", str(AGENT_UID), "--hostname", "mle-env",
                "--info-fd", str(info_fd), "--proc", "/proc", "--dev", "/dev",
                "--size", str(self.limits.shm), "--tmpfs", "/dev/shm"]
        for kind, source, dest in binds:
            flag = {"ro": "--ro-bind", "rw": "--bind", "dev": "--dev-bind", "symlink": "--symlink"}[kind]
            args += [flag, source, dest]
        # the root is bubblewrap's own tmpfs: read-only, so that only /home, /tmp and /dev/shm take writes
        return args + ["--remount-ro", "/", "--chdir", WORKDIR, "--clearenv", "--", sys.executable, WORKER_INSIDE,
                       "init"]

    def _launcher(self, bwrap: str, binds: list[tuple[str, str, str]], info_fd: int, as_root: bool) -> list[str]:
        """The command that starts bubblewrap (in the sandbox's cgroups). As root: in a private mount namespace
        where each bound path is first bind-mounted under the sandbox's folder (so that nobody, whose uid
        bubblewrap then takes, can reach it even below /root)."""
        steps = [f"echo $$ > {shlex.quote(str(c / 'cgroup.procs'))}" for c in self.cgroups]
        if not as_root:
            args = self._bwrap_args(bwrap, binds, info_fd)
            return ["sh", "-ec", "\n".join([*steps, 'exec "$@"']), "sh", *args]
        assert self.base is not None
        stage = self.base / "stage"
        stage.mkdir(mode=0o711)
        steps.append("mount --make-rprivate /")
        staged = []
        for i, (kind, source, dest) in enumerate(binds):
            if kind != "symlink":
                target = stage / str(i)
                if os.path.isdir(source):
                    target.mkdir(mode=0o755)
                else:
                    target.touch(mode=0o644)
                steps.append(f"mount --bind {shlex.quote(source)} {shlex.quote(str(target))}")
                source = str(target)
            staged.append((kind, source, dest))
        args = self._bwrap_args(bwrap, staged, info_fd)
        steps.append(f"exec setpriv --reuid={NOBODY} --regid={NOBODY} --clear-groups " + shlex.join(args))
        return ["unshare", "--mount", "--propagation", "private", "sh", "-ec", "\n".join(steps)]

    def _start_worker(self, home: Path, tmp: Path, cgroup_files: dict[str, str]) -> None:
        assert self.init_pid is not None
        env = {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin", "HOME": f"{WORKDIR}/agent",
               "USER": "agent", "LOGNAME": "agent", "SHELL": "/bin/bash", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
               "MLE_ENV_SANDBOX": "local", "PYTHONUNBUFFERED": "1", **self.limits.thread_environment()}
        env.update({k: os.environ[k] for k in _ENV_ALLOWED if k in os.environ})
        if self.limits.gpus is not None:
            env["CUDA_VISIBLE_DEVICES"] = _cuda_visible(self.limits.gpus)
        prefix = ["nsenter", "-t", str(self.init_pid), "-U", "-p", "-n", "-i", "-u", "-m", "-C", "-S",
                  str(AGENT_UID), "-G", str(AGENT_UID), "-W", WORKDIR, "--"]
        config = {
            "workdir": WORKDIR, "cwd": str(home), "prefix": prefix, "env": env, "python": sys.executable,
            "script": WORKER_INSIDE, "agent": {"pidns": _namespace_of(self.init_pid, "pid"),
                                               "keep": [self.init_pid]},
            "disk_limit": self.limits.disk, "disk_paths": [str(home), str(tmp)], "disk_exclude": [str(home / "data")],
            "rlimits": self._rlimits(), "no_new_privs": True, **cgroup_files,
        }
        program = local_filter()
        if program is not None:
            config["seccomp"] = base64.b64encode(program).decode()
        self.enforced["seccomp"] = "filter" if program is not None else "none (libseccomp not found)"
        if self.endpoint is not None:  # inside the namespaces, as the sandbox's only uid
            config["validation"] = {"port": VALIDATION_PORT, "max_bytes": self.endpoint.max_bytes, "as_agent": True,
                                    "idle_s": self.endpoint.idle_s}
        self.worker = subprocess.Popen(
            [sys.executable, "-I", str(WORKER_PATH), "serve", json.dumps(config)], cwd=self.base,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )
        assert self.worker.stdin is not None and self.worker.stdout is not None and self.worker.stderr is not None
        transport = PipeTransport(self.worker.stdin.fileno(), self.worker.stdout.fileno(),
                                  StderrTail(self.worker.stderr))
        self.client = WorkerClient(transport, f"local sandbox {self.base}", on_event=self.endpoint)
        self.client.call("ping", 30.0)

    def _rlimits(self) -> dict[str, int]:
        """Limits the worker applies to itself (and so to every program) where cgroups are not available."""
        out = {}
        if "memory" not in self.enforced and self.limits.memory is not None:
            out["RLIMIT_AS"] = self.limits.memory
            self.enforced["memory"] = "rlimit (address space)"
        if "pids" not in self.enforced:
            out["RLIMIT_NPROC"] = self.limits.pids
            self.enforced["pids"] = "rlimit (RLIMIT_NPROC)"
        self.enforced.setdefault("cpu", "thread pools only" if self.limits.cpus else "none")
        self.enforced["disk"] = "watchdog + RLIMIT_FSIZE" if self.limits.disk else "none"
        return out

    def _make_cgroups(self) -> tuple[list[Path], dict[str, object]]:
        """cgroups holding the sandbox's processes, with its limits, where this process may create them."""
        assert self.base is not None
        name = f"mle-env/{self.base.name}"
        limits = self.limits
        memory = limits.memory
        made: list[Path] = []
        files: dict[str, object] = {}
        try:
            if (CGROUP_ROOT / "cgroup.controllers").exists():  # cgroup v2
                group = CGROUP_ROOT / name
                group.mkdir(parents=True)
                made.append(group)
                (CGROUP_ROOT / "mle-env" / "cgroup.subtree_control").write_text("+memory +pids +cpu")
                if memory:
                    (group / "memory.max").write_text(str(memory))
                    (group / "memory.swap.max").write_text("0")
                (group / "pids.max").write_text(str(limits.pids))
                if limits.cpus:
                    (group / "cpu.max").write_text(f"{int(limits.cpus * 100_000)} 100000")
                files = {"pids_max_file": str(group / "pids.max"), "pids_current_file": str(group / "pids.current")}
            elif (CGROUP_ROOT / "memory" / "memory.limit_in_bytes").exists():  # cgroup v1
                for controller in ("memory", "pids", "cpu"):
                    group = CGROUP_ROOT / controller / name
                    group.mkdir(parents=True)
                    made.append(group)
                if memory:
                    (CGROUP_ROOT / "memory" / name / "memory.limit_in_bytes").write_text(str(memory))
                    swap = CGROUP_ROOT / "memory" / name / "memory.memsw.limit_in_bytes"
                    if swap.exists():
                        swap.write_text(str(memory))
                (CGROUP_ROOT / "pids" / name / "pids.max").write_text(str(limits.pids))
                if limits.cpus:
                    (CGROUP_ROOT / "cpu" / name / "cpu.cfs_period_us").write_text("100000")
                    (CGROUP_ROOT / "cpu" / name / "cpu.cfs_quota_us").write_text(str(int(limits.cpus * 100_000)))
                files = {"pids_max_file": str(CGROUP_ROOT / "pids" / name / "pids.max"),
                         "pids_current_file": str(CGROUP_ROOT / "pids" / name / "pids.current")}
            else:
                return [], {}
        except OSError:
            for group in reversed(made):
                _remove_cgroup(group)
            return [], {}
        self.enforced.update(memory="cgroup" if memory else "none", pids="cgroup",
                             cpu="cgroup" if limits.cpus else "none")
        files["cgroup_procs"] = [str(g / "cgroup.procs") for g in made]
        return made, files

    # -- actions --------------------------------------------------------------------------------------
    def exec(self, kind: str, code: str, timeout: float) -> ExecResult:
        if self.client is None:
            raise SandboxUnavailable("the local sandbox is not started")
        if not self._init_alive():
            raise self._init_gone()
        try:
            result = self.client.exec(kind, code, timeout, self.limits.max_output)
        except SandboxUnavailable as e:
            raise SandboxUnavailable(f"{e} (the worker runs on the host, out of the agent's reach)") from e
        if not self._init_alive():
            raise self._init_gone()
        return result

    def _init_alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def _init_gone(self) -> Exception:
        """The sandbox's init died. The agent can neither signal nor trace it (it ignores signals, and the kernel
        keeps SIGKILL from inside off a namespace's init; it is not dumpable), so: the kernel's OOM killer
        within the sandbox's cgroup, or bubblewrap killed by a signal, which only the host can send; an init
        that exited by itself can only have been made to by what runs inside, the agent's doing."""
        if self._oom_kills() > 0:
            return SandboxBroken("the sandbox ran out of memory and the kernel killed its init process, so every "
                                 "process in it is gone")
        code = self.process.returncode if self.process is not None else None
        if code is not None and code >= 0:
            return SandboxBroken(f"the sandbox's init process exited (status {code}), which only what runs inside "
                                 "can have caused, so every process in it is gone")
        return SandboxUnavailable(f"the local sandbox's bubblewrap process ended from outside (exit {code})")

    def _oom_kills(self) -> int:
        for group in self.cgroups:
            for name in ("memory.events", "memory.oom_control"):
                path = group / name
                if path.exists():
                    for line in path.read_text().splitlines():
                        key, _, value = line.partition(" ")
                        if key == "oom_kill" and value.strip().isdigit():
                            return int(value)
        return 0

    def copy_out(self, path: str = SUBMISSION, max_bytes: int = 2**30) -> bytes | str | None:
        if self.base is None:
            return None
        parts = Path(path).parts
        if parts and parts[0] == "data":
            return read_workspace_file(self.public_dir, str(Path(*parts[1:])) if len(parts) > 1 else ".", max_bytes)
        return read_workspace_file(self.base / "home", path, max_bytes)

    def copy_tree(self, path: str, max_bytes: int, max_files: int = MAX_TREE_FILES) -> IO[bytes]:
        if self.base is None:
            return empty_tree_archive()
        return archive_workspace_tree(self.base / "home", path, max_bytes, max_files)

    def python_packages(self) -> dict[str, str]:
        return host_packages()

    def _channel(self) -> WorkerClient | None:
        return self.client

    def close(self) -> None:
        if self.client is not None:
            self.client.shutdown()
            self.client = None
        for proc in (self.worker, self.process):
            if proc is None:
                continue
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
        self.worker = self.process = None
        for group in reversed(self.cgroups):
            _remove_cgroup(group)
        self.cgroups = []
        if self.base is not None:
            remove_tree(self.base)  # iterative: a deep tree the agent made cannot make close() raise
            self.base = None


def remove_stale_local_sandboxes(everything: bool = False, root: Path | None = None) -> list[str]:
    """Remove the workspaces and cgroups of local sandboxes whose owning process on this host is gone (all of
    this host's with ``everything``); returns their folder names. Their processes died with their owner
    (bubblewrap's --die-with-parent); whatever is left in their cgroups is killed first."""
    removed = []
    host = socket.gethostname()
    for base in Path(root or tempfile.gettempdir()).glob("mle-env-*"):
        try:
            pid_text, owner_host = (base / OWNER_FILE).read_text().split()
            pid = int(pid_text)
        except (OSError, ValueError):
            continue  # not a local sandbox's folder
        if owner_host != host or (not everything and pid_alive(pid)):
            continue
        for controller in ("", "memory", "pids", "cpu"):
            group = CGROUP_ROOT / controller / "mle-env" / base.name
            if group.is_dir():
                _remove_cgroup(group)
        remove_tree(base)
        removed.append(base.name)
    return removed


def _require_searchable(root: Path) -> None:
    """Refuse a sandbox root that nobody (whose uid bubblewrap takes when run as root) cannot pass through:
    bubblewrap could not reach the workspace and the sandbox's init would die at start."""
    root = root.resolve()
    for folder in (*reversed(root.parents), root):
        try:
            mode = folder.stat().st_mode
        except OSError as e:
            raise SandboxUnavailable(f"the local sandbox's root {root} cannot be used: {e}") from e
        if not mode & stat.S_IXOTH:
            raise SandboxUnavailable(
                f"the local sandbox's root {root} lies in {folder}, which other users cannot enter (mode "
                f"{stat.S_IMODE(mode):o}); give a root (or TMPDIR) whose every folder is world-searchable, "
                f"such as /tmp, or run `chmod o+x {shlex.quote(str(folder))}`")


def _namespace_of(pid: int, kind: str, attempts: int = 50) -> str:
    """The namespace link of ``pid`` (``pid:[4026532...]``). While the sandbox's init is still becoming itself
    (bubblewrap changing its credentials, then the init making itself not dumpable) the kernel may refuse the
    look for a moment: it is tried again for up to about a second."""
    for attempt in range(attempts):
        try:
            return os.readlink(f"/proc/{pid}/ns/{kind}")
        except PermissionError:
            if attempt == attempts - 1:
                raise
            time.sleep(0.02)
    raise AssertionError("unreachable")


def _read_child_pid(fd: int) -> int | None:
    """The pid of the sandbox's init, from bubblewrap's --info-fd (None when bubblewrap failed first)."""
    data = b""
    with os.fdopen(fd, "rb", buffering=0) as info:
        while b"}" not in data:
            chunk = info.read(4096)
            if not chunk:
                break
            data += chunk
    try:
        return int(json.loads(data)["child-pid"])
    except (ValueError, KeyError, TypeError):
        return None


def _remove_cgroup(group: Path) -> None:
    """Kill what is left in a cgroup and remove it (a cgroup with processes cannot be removed)."""
    for _ in range(50):
        try:
            pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            pids = []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)


@functools.cache
def require_bubblewrap() -> str:
    """The path of a working ``bwrap`` (checked once per process by starting an empty sandbox).

    Raises:
        PrerequisiteError: not Linux, bubblewrap missing, or user namespaces not allowed here.
    """
    if not sys.platform.startswith("linux"):
        raise PrerequisiteError(f"the isolated local sandbox needs Linux (bubblewrap); on {sys.platform} "
                                + _INSTALL_HINT)
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise PrerequisiteError("the isolated local sandbox needs bubblewrap: `apt-get install bubblewrap` "
                                "(or your distribution's package), or " + _INSTALL_HINT)
    for tool in ("nsenter", "setpriv", "unshare"):
        if shutil.which(tool) is None:
            raise PrerequisiteError(f"the isolated local sandbox needs `{tool}` (util-linux); install it, or "
                                    + _INSTALL_HINT)
    probe = [bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib64"):
        path = Path("/") / name
        if path.is_symlink():
            probe += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            probe += ["--ro-bind", str(path), str(path)]
    probe += ["--", "/usr/bin/true"]
    if os.geteuid() == 0:
        probe = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *probe]
    try:
        result = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        raise PrerequisiteError(f"bubblewrap could not run ({e}); " + _INSTALL_HINT) from None
    if result.returncode != 0:
        raise PrerequisiteError(
            f"bubblewrap cannot create namespaces here ({result.stderr.strip()[-300:]}); allow unprivileged user "
            "namespaces (sysctl kernel.unprivileged_userns_clone=1 or user.max_user_namespaces > 0), or "
            + _INSTALL_HINT)
    return bwrap


def _gpu_devices(gpus: str | int | list[str] | None) -> list[str]:
    if gpus is None:
        return []
    devices = sorted(str(p) for p in Path("/dev").glob("nvidia*") if not p.is_dir())
    if not devices:
        raise PrerequisiteError(f"gpus={gpus!r} was asked for but this machine has no /dev/nvidia* devices; "
                                "run without gpus, or on a machine with an NVIDIA driver")
    return devices


def _cuda_visible(gpus: str | int | list[str]) -> str:
    if gpus == "all":
        return "all"
    if isinstance(gpus, int):
        return ",".join(str(i) for i in range(gpus))
    return ",".join(str(g) for g in gpus)


def _gpu_ids(gpus: str | int | list[str] | None) -> list[str]:
    if gpus is None:
        return []
    return _cuda_visible(gpus).split(",")
