"""The supervisor that runs every sandbox's actions (standard library only, Python >= 3.8).

The host keeps one persistent channel to it (a pipe for the local sandbox, an attached ``docker exec``
stream for docker), so an action costs a message round trip instead of a new process. Protocol: one
JSON object per line in each direction.

The worker is out of the agent's reach: in docker it runs as root with a few capabilities and starts the
agent's programs as uid 1000 (which can neither signal, trace nor read the file descriptors of a root
process); in the local sandbox it runs on the host, outside the bubblewrap namespaces, and starts every
program inside them through ``nsenter`` (the agent cannot even see it). So nothing the agent does can
write into this channel or stop the worker; the agent's output is only ever data.

``serve CONFIG`` takes one JSON object (all keys optional):
  workdir      the agent's working directory (default: the current one)
  prefix       argv prepended to every program started (local: the nsenter command)
  cwd          the host-side working directory of that prefix (default: workdir)
  user, group  uid/gid the programs run as (docker; needs CAP_SETUID/CAP_SETGID)
  env          the programs' exact environment (default: the worker's own)
  python, script  interpreter and path of this file as seen by the programs (for the python cells)
  cgroup_procs cgroup.procs files every program is placed in before it starts (memory/pids/cpu limits)
  pids_max_file, pids_current_file  the pids cgroup's limit and count, to see a full process table
  agent        how to find every agent process: {"uid": n} or {"pidns": "pid:[...]", "keep": [pids]}
  disk_limit, disk_paths, disk_exclude   the disk watchdog (bytes; folders summed; folders skipped)
  rlimits      {"RLIMIT_AS": n, ...} set on the worker and so inherited by every program
  no_new_privs set PR_SET_NO_NEW_PRIVS on the worker, inherited likewise (docker sets it for the container)
  validation   {"port": n, "max_bytes": n, "as_agent": bool, "uid": n, "gid": n, "env": {...}}: run the
               validation endpoint (see below); without as_agent it runs as uid/gid (default: the worker's)
  identity     {"uid": n, "gid": n, "caps": [names]}: at start, the worker (started as root) becomes this uid
               and keeps only these capabilities (docker); then nothing it runs is root
  fs_uid, fs_gid  the identity whose file permissions the worker uses when it reads the agent's files (the
               disk watchdog, copies out): it sees exactly what the agent may see (docker)
  stage_dir    a folder only the worker can reach, where files are staged for the host to copy out
  restore      at start, rebuild the sparse files a fork's copy left in stage_dir (docker forks)
  seccomp      a classic BPF program (base64) installed in every program started, before it runs (local)

Requests:  {"id": n, "op": "shell"|"python", "code": str, "timeout": seconds, "max_output": bytes}
           {"id": n, "op": "put", "path": relative path, "data": base64, "mode": int}  (a new file, not
           replacing anything, owned by the worker's user: read-only to the agent)
           {"id": n, "op": "stage", "path": relative path, "max_bytes": n}  (copy one file of the workspace,
           opened as the agent would and refusing a link in any component, to stage_dir: answers "staged"
           (its path there) and "size", or "missing", or "refused" with the reason)
           {"id": n, "op": "pack", "path": relative folder, "max_bytes": n, "max_files": n}  (a tar of the
           folder's regular files, under both caps, staged likewise: "staged", "size")
           {"id": n, "op": "pack_fork", "paths": [folders], "exclude": [folders]}  (everything the agent wrote,
           for a docker fork: see pack_for_fork; staged likewise)
           {"id": n, "op": "unstage"}  (empty stage_dir)
           {"id": n, "op": "ping"}  |  {"id": n, "op": "shutdown"}
           {"op": "cancel", "target": n}  (stop the shell or python request n if it is still running; no
           response of its own: request n answers as usual, with "cancelled": true when it was stopped)
Responses: {"id": n, "stdout": str, "stderr": str, "exit_code": int|null, "timed_out": bool,
            "cancelled": bool, "stdout_bytes": int, "stderr_bytes": int, "duration": seconds, "note": str}
Events (worker -> host, only while a request is in flight, before its response):
           {"event": "validate", "vid": n, "chunk": base64}  ...  {"event": "validate", "vid": n, "end": true}
           answered by the host with {"op": "validated", "vid": n, "result": str}

- The validation endpoint (MLE-bench's convention): ``relay PORT MAX_BYTES`` is an HTTP server on
  127.0.0.1:PORT inside the sandbox's network namespace (as root in docker; as the agent's uid in the local
  sandbox, whose only uid that is). ``POST /validate`` with the file as multipart field ``file`` (``curl -F
  file=@FILE``) or as the raw body is relayed in chunks through this worker to the host, which checks it
  against the answers and says only whether it is valid and why not; the reply is MLE-bench's
  ``{"result": "..."}``. Requests are answered while an action runs (the host reads the channel then);
  the relay restarts with the next action if the agent stopped it. What comes from it is checked like any
  data from the agent: at most ``max_bytes`` per file, chunks of bounded size, nothing but chunks and ends.

- ``shell`` runs ``bash -c code`` (``sh`` where bash is missing) in its own process group; on timeout the
  whole group is killed. Processes an action leaves in the background keep running, but what they print
  after the action ends is read and dropped: redirect it to a file to keep it. (When the sandbox's process
  limit leaves no room for the thread that reads it, their output pipe is closed instead.)
- ``python`` runs the code in ONE persistent interpreter (a child process), like a notebook cell: state
  carries over; the value of a final expression is printed. A timeout or a crash kills that interpreter;
  a fresh one starts and ``note`` says the state was lost.
- ``cancel`` (a person's Ctrl-C in ``mle-env play``) stops a running action as a terminal's Ctrl-C would:
  a shell action's process group gets SIGINT, then SIGKILL after ``CANCEL_GRACE_S`` (exit code 130); a
  python cell gets KeyboardInterrupt (exit code 1, the interpreter's state kept), and an interpreter that
  does not stop within ``CANCEL_GRACE_S`` is killed and restarted.
- Output is capped: the first and last ``max_output / 2`` bytes of each stream are kept and the cut is
  marked, so 10 MB of output never sits in memory whole.
- Children get ``oom_score_adj = 1000`` so that, under a memory limit, the kernel kills the agent's
  program rather than this worker.
- Disk: no file may grow past ``disk_limit`` (RLIMIT_FSIZE, set on the worker and inherited), and while
  an action runs the watchdog sums ``disk_paths`` about once a second (ten times a second past half the
  limit; and at the end of every action while a look is cheap): when the total is over the limit and
  still growing, the action and every background process are stopped, and the note says so.
"""

import ast
import base64
import contextlib
import ctypes
import io
import json
import os
import queue
import resource
import selectors
import signal
import stat
import subprocess
import sys
import tarfile
import threading
import time
import traceback

DEFAULT_MAX_OUTPUT = 64 * 1024
_READ = 65536
#: bytes of a file per message from the validation endpoint (base64 makes a line of about 1.4 MB)
RELAY_CHUNK = 1 << 20
#: seconds a new relay waits for the one it replaces to have died and let go of the port
RELAY_EXIT_WAIT_S = 5.0
#: seconds a cancelled action has to stop on SIGINT before it is killed
CANCEL_GRACE_S = 2.0


def _open_oom_score_adj() -> int:
    """A descriptor to write this process's OOM score through, opened once at start: a later change of the
    filesystem identity makes the process undumpable, and its /proc files root's (-1 where it cannot be had)."""
    try:
        return os.open("/proc/self/oom_score_adj", os.O_WRONLY)
    except OSError:
        return -1


def _set_oom_score_adj(fd: int, value: str) -> None:
    try:
        os.pwrite(fd, value.encode(), 0)
    except OSError:
        pass


# --- privileges -------------------------------------------------------------------------------------------
#: capability numbers (linux/capability.h) of the ones a worker may keep
CAPABILITIES = {"KILL": 5, "SETGID": 6, "SETUID": 7, "SYS_RESOURCE": 24}
_PR_SET_DUMPABLE, _PR_SET_KEEPCAPS = 4, 8
_CAP_VERSION_3 = 0x20080522


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def drop_privileges(uid: int, gid: int, caps: list) -> None:
    """Become ``uid``/``gid`` (real, effective and saved; no supplementary groups) keeping only ``caps`` in
    the effective and permitted sets, none inheritable or ambient, so no program started later inherits any.

    Raises OSError when the kernel refuses a step (then the worker must not start)."""
    libc = _libc()
    if libc.prctl(_PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_KEEPCAPS)")
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    mask = 0
    for name in caps:
        mask |= 1 << CAPABILITIES[name]
    header = (ctypes.c_uint32 * 2)(_CAP_VERSION_3, 0)
    # two {effective, permitted, inheritable} triples: capabilities 0-31, then 32-63
    data = (ctypes.c_uint32 * 6)(mask & 0xFFFFFFFF, mask & 0xFFFFFFFF, 0, mask >> 32, mask >> 32, 0)
    if libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset")
    libc.prctl(_PR_SET_KEEPCAPS, 0, 0, 0, 0)
    # changing uid made the process undumpable, which leaves /proc/self (oom_score_adj) root's; no other
    # process has this uid, so being dumpable opens nothing to the agent
    libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)


@contextlib.contextmanager
def filesystem_identity(uid, gid):
    """Inside the block, this thread's file accesses are checked as ``uid``/``gid`` (Linux's fsuid/fsgid,
    per thread; needs CAP_SETUID/CAP_SETGID): the worker then reads exactly what the agent could read. With
    ``uid`` None, nothing changes."""
    if uid is None:
        yield
        return
    libc = _libc()
    own_uid, own_gid = os.geteuid(), os.getegid()
    libc.setfsgid(gid)
    libc.setfsuid(uid)
    try:
        if libc.setfsuid(-1) != uid:  # setfsuid reports failure only through the value it returns
            raise OSError(f"could not take the file identity of uid {uid}")
        yield
    finally:
        libc.setfsuid(own_uid)
        libc.setfsgid(own_gid)


# --- the agent's files, read from the outside --------------------------------------------------------------
#: folders deeper than this below a packed folder are left out (each level holds one descriptor)
MAX_PACK_DEPTH = 200


def open_in_workspace(root: str, path: str):
    """Open ``root/path`` for reading: every component is opened relative to the one before with
    ``O_NOFOLLOW``, so a symbolic link anywhere on the path is refused and nothing can be swapped in between a
    check and the read; named pipes and devices never block. Returns (fd, None) for a regular file,
    (None, None) when there is no such file, or (None, why) when it is refused. ``path`` is relative,
    without ``..``."""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    name = parts[-1] if parts else path
    if not parts or ".." in parts or path.startswith("/"):
        return None, f"{path} is not a path inside the working directory"
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        return None, None
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | (0 if last else os.O_DIRECTORY)
            try:
                next_fd = os.open(part, flags, dir_fd=fd)
            except FileNotFoundError:
                return None, None
            except OSError as e:  # O_NOFOLLOW: ELOOP for a link as the file, ENOTDIR for a link as a folder
                try:
                    is_link = stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode)
                except OSError:
                    is_link = False
                if is_link:
                    return None, (f"{'/'.join(parts[:i + 1])} is a symbolic link, which could lead out of the "
                                  "working directory; write a regular file")
                if isinstance(e, NotADirectoryError):
                    return None, f"{'/'.join(parts[:i + 1])} is not a folder"
                return None, f"{name} cannot be read ({e.strerror})"
            os.close(fd)
            fd = next_fd
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            return None, f"{name} is a directory, not a file"
        if not stat.S_ISREG(st.st_mode):
            return None, f"{name} is not a regular file"
        os.set_blocking(fd, True)
        opened, fd = fd, -1
        return opened, None
    finally:
        if fd >= 0:
            os.close(fd)


def copy_fd(source: int, target: int, size: int) -> None:
    """Copy the first ``size`` bytes of ``source`` to ``target`` at the same offsets, data segments only (a
    sparse file stays sparse), then set ``target``'s length."""
    offset = 0
    while offset < size:
        try:
            start = os.lseek(source, offset, os.SEEK_DATA)
            end = min(os.lseek(source, start, os.SEEK_HOLE), size)
        except OSError:  # ENXIO: nothing but a hole up to the end (or the file shrank meanwhile)
            break
        while start < end:
            try:
                n = os.copy_file_range(source, target, end - start, start, start)
            except OSError:  # another filesystem (EXDEV) or no support: plain reads and writes
                data = os.pread(source, min(end - start, 1 << 20), start)
                n = os.pwrite(target, data, start) if data else 0
            if n == 0:
                break
            start += n
        offset = end
    os.ftruncate(target, size)


class PackedTree:
    """A tar of the regular files under a folder, at most ``max_bytes`` of content and ``max_files`` files,
    written to ``out`` as it is walked (see :func:`pack_tree`). What is left out is described in a last
    member, TRUNCATED.txt. Names are at most MAX_NAME characters, so the archive is at most ``max_bytes``
    plus HEADER_BOUND bytes per file."""

    #: a longer name is left out (a path of 48 KB would cost as much in headers as many files' contents)
    MAX_NAME = 1024
    #: the most one member's headers take (a PAX record for a name of MAX_NAME characters) and its padding
    HEADER_BOUND = 4 * tarfile.BLOCKSIZE + MAX_NAME

    def __init__(self, out, max_bytes: int, max_files: int) -> None:
        self.tar = tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT)
        self.max_bytes = max(0, int(max_bytes))
        self.max_files = max(0, int(max_files))
        self.files = 0
        self.skipped_files = 0
        self.skipped_bytes = 0
        self.long_names = 0
        self.content = 0  # bytes of the files added
        self.stopped = ""  # why the walk ended early

    @property
    def left(self) -> int:
        return self.max_bytes - self.content

    def add(self, name: str, fd: int, st: os.stat_result) -> None:
        if self.files >= self.max_files:
            self.stopped = f"the walk stopped at the {self.max_files}-file cap"
            return
        if len(name) > self.MAX_NAME:
            self.long_names += 1
            return
        if st.st_size > self.left:  # never read: a huge or sparse file costs nothing
            self.skipped_files += 1
            self.skipped_bytes += st.st_size
            return
        info = tarfile.TarInfo(name)
        info.size, info.mode, info.mtime = st.st_size, 0o644, int(st.st_mtime)  # whole seconds: no PAX record
        self.tar.addfile(info, _Segments(b"", fd, [[0, st.st_size]]))  # exactly that long, even if it shrinks
        self.files += 1
        self.content += st.st_size

    def finish(self) -> dict:
        notes = []
        if self.skipped_files:
            notes.append(f"{self.skipped_files} file(s), {self.skipped_bytes} bytes, were left out: over the size cap")
        if self.long_names:
            notes.append(f"{self.long_names} file(s) with paths over {self.MAX_NAME} characters were left out")
        if self.stopped:
            notes.append(self.stopped + "; later files were left out")
        if notes:
            note = ("\n".join(notes) + "\n").encode()
            info = tarfile.TarInfo("TRUNCATED.txt")
            info.size, info.mode, info.mtime = len(note), 0o644, time.time()
            self.tar.addfile(info, io.BytesIO(note))
        self.tar.close()
        return {"files": self.files, "skipped_files": self.skipped_files, "skipped_bytes": self.skipped_bytes,
                "stopped": self.stopped}


def pack_tree(root: str, path: str, out, max_bytes: int, max_files: int) -> dict:
    """Write to ``out`` a tar of the regular files under ``root/path`` (names relative to it), walked without
    following a link in any component and without recursion; links, pipes and devices are left out, and so
    are files past either cap and folders deeper than MAX_PACK_DEPTH (the tar then holds TRUNCATED.txt).
    An empty tar when there is no such folder. Returns counts (files, skipped_files, skipped_bytes)."""
    packed = PackedTree(out, max_bytes, max_files)
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts or path.startswith("/"):
        return packed.finish()
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        for part in parts:
            next_fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = next_fd
    except OSError:
        return packed.finish()
    stack = [(fd, "", os.scandir(fd))]
    try:
        while stack and not packed.stopped:
            dir_fd, where, entries = stack[-1]
            entry = next(entries, None)
            if entry is None:
                entries.close()
                os.close(dir_fd)
                stack.pop()
                continue
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    if len(stack) > MAX_PACK_DEPTH:
                        packed.skipped_files += 1
                        continue
                    sub = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
                    stack.append((sub, f"{where}{entry.name}/", os.scandir(sub)))
                elif stat.S_ISREG(mode):
                    file_fd = os.open(entry.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
                    try:
                        st = os.fstat(file_fd)
                        if stat.S_ISREG(st.st_mode):
                            packed.add(where + entry.name, file_fd, st)
                    finally:
                        os.close(file_fd)
            except (OSError, UnicodeError):  # gone, unreadable or swapped meanwhile: left out
                continue
    finally:
        for dir_fd, _, entries in stack:
            entries.close()
            os.close(dir_fd)
    return packed.finish()


# --- a docker fork's copy of everything the agent wrote ------------------------------------------------------
#: a file whose holes exceed this many bytes travels as its data segments alone, and is rebuilt sparse
SPARSE_MIN_HOLES = 1 << 20
RESTORE_PREFIX = "restore-"  # the stage folder's files that rebuild sparse files in a fork (see restore_sparse)
_OWNERS = (1000, 999)  # the owners a fork's copy keeps: the agent, the worker (instructions, the script)


def pack_for_fork(paths: list, exclude: set, out, stage_name: str) -> dict:
    """Write to ``out`` a tar of everything under the folders ``paths`` (names relative to "/", the folders
    themselves left out): folders, regular files and symbolic links (as links), with their owners (only
    :data:`_OWNERS`; others are left out), modes (no set-id bits) and times. Walked by descriptors without
    following a link and without recursion, with this thread's filesystem identity (the caller's: the
    agent's), so only what the agent can read is copied; folders whose (st_dev, st_ino) is in ``exclude``
    are left out. A file with more than SPARSE_MIN_HOLES of holes becomes a member ``stage_name/restore-N``
    holding a JSON line (its path, size, owner, mode, time and data extents) and then its data segments:
    the engine would write its holes as zeros, so the fork's worker rebuilds it (:func:`restore_sparse`).
    Returns {"files": n, "skipped": [paths left out, at most 50], "skipped_count": n}."""
    tar = tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT)
    result = {"files": 0, "skipped": [], "skipped_count": 0}

    def skip(path: str) -> None:
        result["skipped_count"] += 1
        if len(result["skipped"]) < 50:
            result["skipped"].append(path)

    sparse = 0
    for root in paths:
        try:
            top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        stack = [(top, root.strip("/") + "/", iter(sorted(set(os.listdir(top)))))]
        while stack:
            dir_fd, where, names = stack[-1]
            name = next(names, None)
            if name is None:
                os.close(dir_fd)
                stack.pop()
                continue
            path = where + name
            try:
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                if (st.st_dev, st.st_ino) in exclude:
                    continue
                if st.st_uid not in _OWNERS or len(path) > 4000:
                    skip(path)
                    continue
                info = tarfile.TarInfo(path)
                info.uid, info.gid, info.mtime = st.st_uid, st.st_gid, int(st.st_mtime)
                info.mode = stat.S_IMODE(st.st_mode) & 0o1777
                if stat.S_ISDIR(st.st_mode):
                    sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
                    info.type = tarfile.DIRTYPE
                    tar.addfile(info)
                    stack.append((sub, path + "/", iter(sorted(set(os.listdir(sub))))))
                elif stat.S_ISLNK(st.st_mode):
                    info.type, info.linkname = tarfile.SYMTYPE, os.readlink(name, dir_fd=dir_fd)
                    tar.addfile(info)
                elif stat.S_ISREG(st.st_mode):
                    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
                    try:
                        st = os.fstat(fd)
                        if not stat.S_ISREG(st.st_mode):
                            skip(path)
                            continue
                        if st.st_size - st.st_blocks * 512 > SPARSE_MIN_HOLES:
                            sparse += 1
                            _add_sparse(tar, f"{stage_name}/{RESTORE_PREFIX}{sparse}", path, fd, st)
                        else:
                            info.size = st.st_size
                            tar.addfile(info, _Segments(b"", fd, [[0, st.st_size]]))
                    finally:
                        os.close(fd)
                    result["files"] += 1
                else:  # pipes, sockets, devices
                    skip(path)
            except (OSError, UnicodeError, tarfile.TarError):  # unreadable, or changed meanwhile
                skip(path)
    tar.close()
    return result


def _add_sparse(tar, member: str, path: str, fd: int, st: os.stat_result) -> None:
    extents, offset = [], 0
    while offset < st.st_size:
        try:
            start = os.lseek(fd, offset, os.SEEK_DATA)
            end = min(os.lseek(fd, start, os.SEEK_HOLE), st.st_size)
        except OSError:  # ENXIO: holes to the end
            break
        extents.append([start, end - start])
        offset = end
    head = json.dumps({"path": path, "size": st.st_size, "uid": st.st_uid, "gid": st.st_gid, "mtime": int(st.st_mtime),
                       "mode": stat.S_IMODE(st.st_mode) & 0o777, "extents": extents}).encode() + b"\n"
    info = tarfile.TarInfo(member)
    info.size = len(head) + sum(length for _, length in extents)
    info.uid = info.gid = os.geteuid()
    info.mode, info.mtime = 0o600, int(time.time())
    tar.addfile(info, _Segments(head, fd, extents))


class _Segments:
    """A readable stream of ``head`` then the bytes of each (start, length) extent of ``fd``; a file that
    shrank meanwhile reads as zeros, so the stream is always as long as promised (a tar member whose header
    was written can never come up short and leave the archive unreadable)."""

    def __init__(self, head: bytes, fd: int, extents: list) -> None:
        self.pending = head
        self.fd = fd
        self.extents = [list(e) for e in extents]

    def read(self, n: int = -1) -> bytes:
        out = bytearray()
        while n < 0 or len(out) < n:
            if not self.pending:
                if not self.extents:
                    break
                start, length = self.extents[0]
                chunk = min(length, 1 << 20)
                data = os.pread(self.fd, chunk, start)
                self.pending = data + b"\0" * (chunk - len(data))
                self.extents[0] = [start + chunk, length - chunk]
                if length - chunk <= 0:
                    self.extents.pop(0)
            take = self.pending if n < 0 else self.pending[: n - len(out)]
            out += take
            self.pending = self.pending[len(take):]
        return bytes(out)


def restore_sparse(stage_dir: str) -> list:
    """Rebuild, holes and all, each sparse file a fork's copy carried as ``stage_dir/restore-N`` (see
    :func:`pack_for_fork`), then remove those files. Each is created as its owner (the filesystem identity of
    uid 1000 or 999), below one of the agent's writable folders, opened component by component without
    following a link; a file that cannot be rebuilt so is left out. Returns the paths left out."""
    skipped = []
    for name in sorted(os.listdir(stage_dir)):
        if not name.startswith(RESTORE_PREFIX):
            continue
        source, path = os.path.join(stage_dir, name), name
        try:
            with open(source, "rb") as f:
                entry = json.loads(f.readline(1 << 16))
                base = f.tell()
                path = str(entry["path"])
                if int(entry["uid"]) not in _OWNERS:
                    raise ValueError(f"owner {entry['uid']}")
                with filesystem_identity(int(entry["uid"]), int(entry["gid"])):
                    _rebuild(f.fileno(), base, path, entry)
        except (OSError, ValueError, KeyError, TypeError):
            skipped.append(path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(source)
    return skipped


def _rebuild(source: int, base: int, path: str, entry: dict) -> None:
    parts = path.split("/")
    if not parts or any(p in ("", ".", "..") for p in parts) or parts[0] not in ("home", "tmp", "var", "run"):
        raise ValueError(f"not a workspace path: {path!r}")
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            next_fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = next_fd
        out = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=fd)
    finally:
        os.close(fd)
    try:
        offset = base
        for start, length in entry["extents"]:
            start, length = int(start), int(length)
            while length > 0:
                data = os.pread(source, min(length, 1 << 20), offset)
                if not data:
                    raise ValueError("truncated")
                os.pwrite(out, data, start)
                offset, start, length = offset + len(data), start + len(data), length - len(data)
        os.ftruncate(out, int(entry["size"]))
        os.fchmod(out, int(entry["mode"]) & 0o777)
        os.utime(out, (int(entry["mtime"]), int(entry["mtime"])))
    finally:
        os.close(out)


class Config:
    """The worker's settings (see the module docstring for each key)."""

    def __init__(self, raw: dict) -> None:
        self.workdir = raw.get("workdir") or os.getcwd()
        self.prefix = list(raw.get("prefix") or [])
        self.cwd = raw.get("cwd") or self.workdir
        self.user = raw.get("user")
        self.group = raw.get("group")
        self.env = raw.get("env")
        self.python = raw.get("python") or sys.executable
        self.script = raw.get("script") or os.path.abspath(__file__)
        self.cgroup_procs = list(raw.get("cgroup_procs") or [])
        self.pids_max_file = raw.get("pids_max_file")
        self.pids_current_file = raw.get("pids_current_file")
        self.agent = raw.get("agent") or {}
        self.disk_limit = raw.get("disk_limit")
        self.disk_paths = list(raw.get("disk_paths") or [])
        self.disk_exclude = set(raw.get("disk_exclude") or [])
        self.rlimits = dict(raw.get("rlimits") or {})
        self.no_new_privs = bool(raw.get("no_new_privs"))
        self.validation = raw.get("validation") or None
        self.identity = raw.get("identity") or None
        self.fs_uid = raw.get("fs_uid")
        self.fs_gid = raw.get("fs_gid")
        self.stage_dir = raw.get("stage_dir")
        self.restore = bool(raw.get("restore"))
        self.seccomp = raw.get("seccomp")


class _FilterProgram(ctypes.Structure):  # struct sock_fprog
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _before_exec(cgroup_fds: list, program, ignore_sigint: bool = False):
    """A preexec_fn that moves the new process into the sandbox's cgroups and installs the seccomp filter
    ``program`` (a (buffer, _FilterProgram) pair made once in the worker; None: none) before it runs anything.
    The filter stays through exec (nsenter, then the agent's program), with no_new_privs set. With
    ``ignore_sigint``, SIGINT is ignored from the start (an ignored signal stays ignored through exec)."""
    libc = _libc()

    def prepare() -> None:
        if ignore_sigint:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        pid = str(os.getpid()).encode()
        for fd in cgroup_fds:
            os.write(fd, pid)
        if program is not None and libc.prctl(22, 2, ctypes.byref(program[1]), 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
            raise OSError(ctypes.get_errno(), "the seccomp filter could not be installed")

    return prepare


def _read_int(path) -> int:
    try:
        with open(path) as f:
            text = f.read().strip()
        return int(text) if text != "max" else 1 << 62
    except (OSError, ValueError):
        return -1


def agent_processes(agent: dict, exclude: set) -> list:
    """Pids of every process of the agent (by real uid, or by pid namespace), without ``exclude``."""
    me = os.getpid()
    found = []
    uid, pidns, keep = agent.get("uid"), agent.get("pidns"), set(agent.get("keep") or [])
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for name in entries:
        if not name.isdigit():
            continue
        pid = int(name)
        if pid == me or pid in exclude or pid in keep:
            continue
        try:
            if uid is not None:
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        if line.startswith("Uid:"):
                            if int(line.split()[1]) == uid:
                                found.append(pid)
                            break
            elif pidns is not None and os.readlink(f"/proc/{pid}/ns/pid") == pidns:
                found.append(pid)
        except (OSError, ValueError, IndexError):
            continue
    return found


def kill_agent_processes(agent: dict, exclude: set = frozenset()) -> int:
    """Stop, then kill, every agent process but ``exclude``, in rounds until none is left (a fork bomb
    forks while it is being killed); returns how many were killed."""
    if not agent:
        return 0
    killed = 0
    for _ in range(50):
        pids = agent_processes(agent, exclude)
        if not pids:
            break
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
        killed += len(pids)
    return killed


class DiskWatch:
    """Sums the bytes allocated under some folders while an action runs: about once a second, ten times a
    second once half the limit is used.

    A file counts its apparent size or its allocated blocks, whichever is larger; hard links count once; a
    walk that gets slow is done less often (never more than a tenth of the time)."""

    def __init__(self, config: Config) -> None:
        self.limit = config.disk_limit
        self.paths = config.disk_paths
        self.exclude = config.disk_exclude
        self.identity = (config.fs_uid, config.fs_gid)
        self.agent = config.agent
        self.deleted = 0  # bytes of deleted files the agent holds open, at the last scan
        self.next_deleted_check = 0.0
        self.last = 0
        self.next_check = 0.0
        self.cost = 0.0  # seconds the last walk took

    @property
    def enabled(self) -> bool:
        return bool(self.limit) and bool(self.paths)

    @property
    def cheap(self) -> bool:
        """Whether a look costs next to nothing (then every action ends with one)."""
        return self.cost < 0.005

    def usage(self) -> int:
        with filesystem_identity(*self.identity):  # no capability to read past permissions: the agent's view
            return self._usage()

    def _usage(self) -> int:
        total, seen = 0, set()
        excluded, devices = set(), set()
        for path in self.exclude:
            try:
                st = os.stat(path)
                excluded.add((st.st_dev, st.st_ino))
            except OSError:
                pass
        for root in self.paths:
            try:
                fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
                devices.add(os.fstat(fd).st_dev)
            except OSError:
                continue
            total += self._walk(fd, seen, excluded)
        now = time.monotonic()
        if now >= self.next_deleted_check:  # a scan of every agent process's descriptors: once a second at most
            self.deleted = self._deleted_but_open(seen, devices)
            self.next_deleted_check = now + 1.0
        return total + self.deleted

    def _walk(self, top: int, seen: set, excluded: set) -> int:
        """Bytes under the open folder ``top`` (closed here): every entry is reached relative to its open
        folder without following a link, so no path is too long and no link swapped in is walked; one open
        folder per level, no recursion."""
        total = 0
        stack = [(top, iter(self._names(top)))]
        while stack:
            dir_fd, names = stack[-1]
            name = next(names, None)
            if name is None:
                os.close(dir_fd)
                stack.pop()
                continue
            try:
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                continue
            folder = stat.S_ISDIR(st.st_mode)
            if not folder and st.st_nlink > 1:  # hard links count once
                if (st.st_dev, st.st_ino) in seen:
                    continue
                seen.add((st.st_dev, st.st_ino))
            # blocks can lag behind the size while writes sit in the page cache; a sparse file counts at its
            # apparent size (what `du --apparent-size` shows)
            total += max(st.st_blocks * 512, st.st_size)
            if folder and (st.st_dev, st.st_ino) not in excluded:
                sub = self._open_folder(dir_fd, name, st)
                if sub is not None:
                    stack.append((sub, iter(self._names(sub))))
        return total

    @staticmethod
    def _names(fd: int) -> list:
        try:
            return os.listdir(fd)
        except OSError:
            return []

    def _open_folder(self, dir_fd: int, name: str, st: os.stat_result):
        """The folder ``name`` opened (None if it cannot be). One the agent made unreadable to itself would hide
        what it holds: its owner gets read and search permission back first (the watchdog reads as the
        agent, who owns it; even through a link swapped in meanwhile only the agent's own files change)."""
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
        try:
            return os.open(name, flags, dir_fd=dir_fd)
        except PermissionError:
            if self.identity[0] is None:
                return None
        except OSError:
            return None
        try:
            os.chmod(name, stat.S_IMODE(st.st_mode) | 0o500, dir_fd=dir_fd)
            return os.open(name, flags, dir_fd=dir_fd)
        except OSError:
            return None

    def _deleted_but_open(self, seen: set, devices: set) -> int:
        """Bytes of files on the watched filesystems that were deleted while the agent's processes hold them
        open (they take disk space until closed, and no folder walk sees them)."""
        if not self.agent:
            return 0
        total = 0
        for pid in agent_processes(self.agent, set()):
            try:
                entries = os.scandir(f"/proc/{pid}/fd")
            except OSError:  # gone, or not dumpable: not readable to the agent's uid either
                continue
            with entries:
                for entry in entries:
                    try:
                        st = os.stat(entry.path)
                    except OSError:
                        continue
                    key = (st.st_dev, st.st_ino)
                    if stat.S_ISREG(st.st_mode) and st.st_nlink == 0 and st.st_dev in devices and key not in seen:
                        seen.add(key)
                        total += max(st.st_blocks * 512, st.st_size)
        return total

    def over(self, force: bool = False) -> "int | None":
        """The usage when it is over the limit and grew since the last look (None otherwise, or when it is
        not time to look yet; ``force`` looks now)."""
        now = time.monotonic()
        if not self.enabled or (not force and now < self.next_check):
            return None
        used = self.usage()
        took = self.cost = time.monotonic() - now
        near = used > self.limit // 2  # look ten times as often once half the limit is used
        self.next_check = time.monotonic() + max(0.1 if near else 1.0, 10 * took)
        grew = used > self.last
        self.last = used
        return used if used > self.limit and grew else None

    def note(self, used: int) -> str:
        return (f"the sandbox's disk limit of {_size(self.limit)} was exceeded ({_size(used)} written), so the "
                "writing action and every background process were stopped; delete files to free space")


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


class Capture:
    """Keeps the head and tail of a byte stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.half = max(limit // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    def text(self) -> str:
        kept = len(self.head) + len(self.tail)
        if self.total <= kept:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", "replace")
        cut = self.total - kept
        return (
            bytes(self.head).decode("utf-8", "replace")
            + f"\n[... {cut} bytes of output cut ...]\n"
            + bytes(self.tail).decode("utf-8", "replace")
        )


class Streams:
    """Non-blocking reads of a program's output pipes into Captures, plus an optional control pipe that
    delivers one status line (the persistent interpreter's "cell finished")."""

    def __init__(self, captures: dict) -> None:
        self.captures = captures
        self.sel = selectors.DefaultSelector()
        self.open = set()
        for fd in captures:
            os.set_blocking(fd, False)
            self.sel.register(fd, selectors.EVENT_READ)
            self.open.add(fd)
        self.control = None
        self.accept = None
        self.control_buffer = bytearray()
        self.control_line = None
        self.control_closed = False

    def watch(self, fd: int, accept=None) -> None:
        """Also read the status line from ``fd``: the first line ``accept(line)`` is true for (any line
        without ``accept``); other lines are dropped."""
        os.set_blocking(fd, False)
        self.sel.register(fd, selectors.EVENT_READ)
        self.control = fd
        self.accept = accept

    def read(self, until: float) -> None:
        """Read until ``until`` (monotonic), all output pipes close, or the control line arrives."""
        while self.open or self.control is not None:
            remaining = until - time.monotonic()
            if remaining <= 0:
                return
            for key, _ in self.sel.select(remaining):
                self._read_one(key.fd)
            if self.control_line is not None or self.control_closed:
                return

    def drain(self) -> None:
        """Take whatever is already in the pipes, without waiting."""
        for fd in list(self.open):
            while fd in self.open and self._read_one(fd):
                pass

    def _read_one(self, fd: int) -> bool:
        try:
            data = os.read(fd, _READ)
        except BlockingIOError:
            return False
        if fd == self.control:
            if not data:
                self.control_closed = True
                self._forget(fd)
                self.control = None
                return False
            self.control_buffer += data
            while b"\n" in self.control_buffer:
                line, self.control_buffer = self.control_buffer.split(b"\n", 1)
                if self.accept is None or self.accept(line):
                    self.control_line = line
                    self._forget(fd)
                    self.control = None
                    break
            del self.control_buffer[: max(0, len(self.control_buffer) - 4096)]
            return True
        if not data:
            self._forget(fd)
            self.open.discard(fd)
            return False
        self.captures[fd].feed(data)
        return True

    def _forget(self, fd: int) -> None:
        try:
            self.sel.unregister(fd)
        except (KeyError, ValueError):
            pass

    def close(self) -> None:
        self.sel.close()


def _discard_in_background(pipe) -> None:
    """Keep reading (and dropping) a pipe that processes left in the background may still write to, so
    that their writes do not fail with SIGPIPE; the thread ends when the last writer closes the pipe."""

    def drain() -> None:
        try:
            while pipe.read(_READ):
                pass
        except (OSError, ValueError):
            pass
        finally:
            pipe.close()

    os.set_blocking(pipe.fileno(), True)
    try:
        threading.Thread(target=drain, daemon=True).start()
    except RuntimeError:  # the process limit is reached, so no thread can start: give up on the background
        pipe.close()      # writers instead (their next write fails) rather than on the action that just ran


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _interrupt_group(proc: subprocess.Popen) -> None:
    """SIGINT to the action's process group, as a terminal's Ctrl-C; what has not ended within CANCEL_GRACE_S
    is killed."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=CANCEL_GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    _kill_group(proc)


class Worker:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.workdir = config.workdir
        self.repl = None
        self.relay = None
        self.relay_lock = threading.Lock()
        self.send_lock = threading.Lock()
        self.out = None
        self.groups = set()
        self.running_id = None  # the request of the action now running
        self.cancel_target = None  # set by the reading thread when the host cancels a request
        self.disk = DiskWatch(config)
        self.cgroup_fds = [os.open(f, os.O_WRONLY) for f in config.cgroup_procs]
        self.filter = None
        if config.seccomp:  # kept alive for the worker's life: every spawn points the kernel at it
            code = base64.b64decode(config.seccomp)
            buffer = ctypes.create_string_buffer(code, len(code))
            self.filter = (buffer, _FilterProgram(len(code) // 8, ctypes.addressof(buffer)))
        limits = dict(config.rlimits)
        if self.disk.enabled:  # no single file may outgrow the limit, whatever the watchdog sees
            limits["RLIMIT_FSIZE"] = config.disk_limit
        for name, value in limits.items():  # inherited by every program started
            resource.setrlimit(getattr(resource, name), (int(value), int(value)))
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = 1 << 20 if hard == resource.RLIM_INFINITY else min(hard, 1 << 20)
        if soft != resource.RLIM_INFINITY and soft < wanted:
            # the disk walk holds one descriptor per folder level, so a deep tree cannot hide below the limit
            # (the agent's programs inherit the higher soft limit, within the same hard one)
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        if config.no_new_privs:
            PR_SET_NO_NEW_PRIVS = 38
            if _libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        try:
            with open("/proc/self/oom_score_adj") as f:
                self.oom_score_adj = f.read().strip()
        except OSError:
            self.oom_score_adj = "0"
        self.oom_fd = _open_oom_score_adj()
        if config.stage_dir:
            st = os.lstat(config.stage_dir)  # made by the sandbox's owner; only this worker may enter it
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
                raise OSError(f"the stage folder {config.stage_dir} must be the worker's own, mode 0700")
        self.restore_skipped = restore_sparse(config.stage_dir) if config.restore and config.stage_dir else []

    def _spawn(self, args: list, ignore_sigint: bool = False, **kwargs) -> subprocess.Popen:
        """Start ``args`` (behind the configured prefix, as the configured user, in the sandbox's cgroups) in
        a new session (its own process group) with oom_score_adj 1000.

        The score is inherited: the worker raises its own for the spawn and lowers it back, which is about 1 ms
        faster than a preexec_fn. With CAP_SYS_RESOURCE (docker's worker, root on the host) the raise also
        sets the floor that the new process inherits, so the agent cannot lower its score again (and make the
        OOM killer pick the worker's helpers instead).
        """
        config = self.config
        if config.user is not None:
            kwargs.update(user=config.user, group=config.group, extra_groups=[])
        if config.env is not None:
            kwargs["env"] = config.env
        if self.cgroup_fds or self.filter is not None or ignore_sigint:
            kwargs["preexec_fn"] = _before_exec(self.cgroup_fds, self.filter, ignore_sigint)
        _set_oom_score_adj(self.oom_fd, "1000")
        try:
            return subprocess.Popen(config.prefix + args, start_new_session=True, close_fds=True, **kwargs)
        finally:
            _set_oom_score_adj(self.oom_fd, self.oom_score_adj)

    def _process_table_full(self) -> bool:
        limit, current = self.config.pids_max_file, self.config.pids_current_file
        return bool(limit and current) and _read_int(current) >= _read_int(limit) - 2

    # -- shell ----------------------------------------------------------------------------------------
    def _spawn_action(self, args: list, **kwargs) -> tuple:
        """Spawn an action's process; when the process table is full, kill the processes earlier actions
        left behind and try once more. Returns (process or None, note)."""
        if not self._process_table_full():
            try:
                return self._spawn(args, **kwargs), ""
            except BlockingIOError:
                pass
        killed = self._kill_background()
        note = (f"the sandbox's process limit was reached, so {killed} process(es) that earlier actions left "
                "running were killed; ")
        try:
            return self._spawn(args, **kwargs), note
        except OSError as e:
            return None, note + f"the command still could not start ({e})"

    def _kill_background(self) -> int:
        """Kill every agent process but the python interpreter (or, without a way to find them all, every
        process group of earlier actions); returns how many."""
        repl_pid = self.repl[0].pid if self.repl is not None else None
        keep = set(_family(self.repl[0])) if self.repl is not None else set()
        if self.relay is not None:
            keep |= set(_family(self.relay))
        if self.config.agent:
            killed = kill_agent_processes(self.config.agent, keep)
        else:
            killed = 0
            for pgid in list(self.groups):
                if pgid == repl_pid:
                    continue
                try:
                    os.killpg(pgid, signal.SIGKILL)
                    killed += 1
                except (ProcessLookupError, PermissionError):
                    pass
        self.groups = {g for g in self.groups if g == repl_pid}
        return killed

    def _forget_finished_groups(self) -> None:
        for pgid in list(self.groups):
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                self.groups.discard(pgid)
            except PermissionError:
                pass

    def _disk_stop(self, force: bool = False) -> str:
        """When the disk watchdog finds the limit exceeded: kill every background process and return the
        note (the caller stops the running action); else ""."""
        used = self.disk.over(force)
        if used is None:
            return ""
        self._kill_background()
        return self.disk.note(used)

    def shell(self, code: str, timeout: float, max_output: int) -> dict:
        self._forget_finished_groups()
        shell = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
        out, err = Capture(max_output), Capture(max_output)
        proc, spawn_note = self._spawn_action([shell, "-c", code], cwd=self.config.cwd, stdin=subprocess.DEVNULL,
                                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if proc is None:
            return self._result(out, err, 126, False, spawn_note)
        self.groups.add(proc.pid)
        streams = Streams({proc.stdout.fileno(): out, proc.stderr.fileno(): err})
        deadline = time.monotonic() + timeout
        timed_out = cancelled = False
        disk_note = ""
        # until the program ends (a background child may still hold the pipes: drained below); a program that
        # closed its pipes (output redirected to a file) is still watched for the disk limit and a cancel
        while proc.poll() is None and time.monotonic() < deadline:
            if streams.open:
                streams.read(min(deadline, time.monotonic() + 0.05))
            else:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(max(0.0, min(0.05, deadline - time.monotonic())))
            disk_note = self._disk_stop()
            if disk_note:
                _kill_group(proc)
                break
            if self._cancelled():
                cancelled = True
                _interrupt_group(proc)
                break
        if proc.poll() is None and not disk_note and not cancelled:
            timed_out = True
            _kill_group(proc)
        streams.drain()
        streams.close()
        for pipe in (proc.stdout, proc.stderr):
            _discard_in_background(pipe)
        disk_note = disk_note or self._disk_stop(force=self.disk.cheap)
        if cancelled:
            note = "cancelled (Ctrl-C): the command and its process group were interrupted"
        elif timed_out:
            note = f"timed out after {timeout:g}s; the command and its process group were killed"
        elif proc.returncode == -signal.SIGXFSZ or proc.returncode == 128 + signal.SIGXFSZ:
            note = (f"a file reached the sandbox's disk limit of {_size(self.disk.limit or 0)}, so the program writing "
                    "it was stopped")
        else:
            note = ""
        note = "; ".join(n for n in (spawn_note.rstrip("; "), note, disk_note) if n)
        exit_code = 130 if cancelled else None if timed_out else proc.returncode
        return self._result(out, err, exit_code, timed_out, note, cancelled)

    # -- python ---------------------------------------------------------------------------------------
    def _start_repl(self) -> str:
        """Start the persistent interpreter; returns a note when the process limit got in the way."""
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        proc, note = self._spawn_action(
            [self.config.python, "-u", self.config.script, "repl", str(cmd_r), str(res_w)],
            cwd=self.config.cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            pass_fds=(cmd_r, res_w), ignore_sigint=True,
        )
        os.close(cmd_r)
        os.close(res_w)
        if proc is None:
            os.close(cmd_w)
            os.close(res_r)
            return note
        self.groups.add(proc.pid)
        os.set_blocking(res_r, False)
        self.repl = (proc, cmd_w, res_r)
        return note

    def _stop_repl(self) -> None:
        if self.repl is None:
            return
        proc, cmd_w, res_r = self.repl
        _kill_group(proc)
        for fd in (cmd_w, res_r):
            try:
                os.close(fd)
            except OSError:
                pass
        proc.stdout.close()
        proc.stderr.close()
        self.groups.discard(proc.pid)
        self.repl = None

    def python(self, code: str, timeout: float, max_output: int) -> dict:
        out, err = Capture(max_output), Capture(max_output)
        start_note = ""
        if self.repl is None or self.repl[0].poll() is not None:
            self._stop_repl()
            start_note = self._start_repl()
            if self.repl is None:
                return self._result(out, err, 126, False, start_note)
        proc, cmd_w, res_r = self.repl
        streams = Streams({proc.stdout.fileno(): out, proc.stderr.fileno(): err})
        # a cell can write into its own interpreter's status pipe: only the line that carries this cell's
        # nonce ends it, and whatever an earlier cell left in the pipe is dropped first
        nonce = os.urandom(16).hex()
        _drain_fd(res_r)
        streams.watch(res_r, lambda line: _status_nonce(line) == nonce)
        try:
            _write_all(cmd_w, json.dumps({"code": code, "nonce": nonce}).encode() + b"\n")
        except BrokenPipeError:
            pass
        deadline = time.monotonic() + timeout
        disk_note = ""
        cancelled = False
        while streams.control_line is None and not streams.control_closed and time.monotonic() < deadline:
            streams.read(min(deadline, time.monotonic() + 0.05))
            disk_note = self._disk_stop()
            if disk_note:
                break
            if not cancelled and self._cancelled():
                # KeyboardInterrupt in the cell, and SIGINT to the programs it started, as a terminal's Ctrl-C;
                # the interpreter and its state live on unless it ignores that (a launcher in front of it, such
                # as nsenter, ignores SIGINT from its start, see _start_repl)
                cancelled = True
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGINT)
                deadline = min(deadline, time.monotonic() + CANCEL_GRACE_S)
        # the interpreter flushes its output before it reports, so what is left is already in the pipes
        streams.drain()
        streams.close()
        if disk_note:
            self._stop_repl()
            return self._result(out, err, 1, False, disk_note + "; the python interpreter was restarted, so its "
                                "state is lost")
        disk_note = self._disk_stop(force=self.disk.cheap)
        start_note = "; ".join(n for n in (start_note.rstrip("; "), disk_note) if n)
        if cancelled:
            start_note = "; ".join(n for n in ("cancelled (Ctrl-C): the cell was interrupted", start_note) if n)
        if streams.control_line is not None:
            try:
                return self._result(out, err, int(json.loads(streams.control_line.decode())["exit_code"]), False,
                                    start_note, cancelled)
            except (ValueError, KeyError, TypeError):  # the cell forged a status line with the right nonce
                self._stop_repl()
                return self._result(out, err, 1, False, "the python interpreter's status channel was written to "
                                    "by the code and is no longer trustworthy, so the interpreter was restarted "
                                    "and its state is lost")
        if not streams.control_closed:
            self._stop_repl()
            if cancelled:
                return self._result(out, err, 1, False, "cancelled (Ctrl-C): the cell did not stop when "
                                    "interrupted, so the python interpreter was killed and restarted, and its "
                                    "variables and imports are lost", True)
            note = (f"timed out after {timeout:g}s; the python interpreter was killed and restarted, "
                    "so its variables and imports are lost")
            return self._result(out, err, None, True, note)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        rc = proc.returncode
        self._stop_repl()
        if rc is not None and rc < 0:
            why = f"was killed by signal {-rc} (out of memory?)"
        else:
            why = f"exited (code {rc})"
        note = f"the python interpreter {why}; a new one starts with the next python action, so state is lost"
        if cancelled:
            note = "cancelled (Ctrl-C): " + note
        return self._result(out, err, rc if rc is not None else -1, False, note, cancelled)

    # -- common ---------------------------------------------------------------------------------------
    def _cancelled(self) -> bool:
        return self.running_id is not None and self.cancel_target == self.running_id

    def _result(self, out: Capture, err: Capture, exit_code, timed_out: bool, note: str,
                cancelled: bool = False) -> dict:
        return {
            "stdout": out.text(), "stderr": err.text(), "exit_code": exit_code, "timed_out": timed_out,
            "cancelled": cancelled,
            "stdout_bytes": out.total, "stderr_bytes": err.total, "note": note,
        }

    def shutdown(self) -> None:
        self._stop_repl()
        self._stop_relay()
        for pgid in list(self.groups):
            try:
                os.killpg(pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        kill_agent_processes(self.config.agent)

    # -- the validation endpoint ----------------------------------------------------------------------
    def _start_relay(self) -> None:
        """Start the endpoint's HTTP server (see the module docstring) unless it runs; failures are quiet:
        the agent then finds no endpoint, and the next action tries again."""
        settings = self.config.validation
        if not settings or self._relay_alive():
            return
        inside = self._relay_inside()
        self._stop_relay()
        # one the agent killed may still be dying, holding the port until it has died
        deadline = time.monotonic() + RELAY_EXIT_WAIT_S
        while any(_running(pid) for pid in inside) and time.monotonic() < deadline:
            time.sleep(0.01)
        args = [self.config.python, "-u", self.config.script, "relay", str(int(settings["port"])),
                str(int(settings["max_bytes"])), str(float(settings["idle_s"]))]
        pipes = dict(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            if settings.get("as_agent"):
                proc = self._spawn(args, cwd=self.config.cwd, **pipes)
            else:  # a uid of its own, out of the agent's reach; isolated (-I) from anything the agent wrote
                ident = {}
                if settings.get("uid") is not None:
                    ident = dict(user=int(settings["uid"]), group=int(settings["gid"]), extra_groups=[])
                proc = subprocess.Popen([args[0], "-I", *args[1:]], cwd="/", env=dict(settings.get("env") or {}),
                                        start_new_session=True, close_fds=True, **ident, **pipes)
        except OSError:
            return
        self.relay = proc
        listening = threading.Event()
        try:
            threading.Thread(target=self._forward_relay, args=(proc, listening), daemon=True).start()
        except RuntimeError:  # the process limit is reached (a fork bomb): no endpoint until the next action
            self._stop_relay()
            return
        listening.wait(10.0)  # so that the first action finds it; a relay that cannot start ends sooner

    def _stop_relay(self) -> None:
        """Kill the relay and close our end of its input (its forwarding thread ends with its output)."""
        if self.relay is None:
            return
        _kill_group(self.relay)
        self.relay.stdin.close()
        self.relay = None

    def _relay_inside(self) -> list:
        """The relay's own process: behind nsenter, the ones nsenter forked inside the sandbox."""
        if self.relay is None:
            return []
        return _family(self.relay)[1:] if self.config.prefix else [self.relay.pid]

    def _relay_alive(self) -> bool:
        """Whether the relay runs and will go on running: nsenter outlives the process inside for a moment,
        and a process the agent sent SIGKILL may not have been scheduled to die yet when the next action
        starts."""
        if self.relay is None or self.relay.poll() is not None:
            return False
        return any(_running(pid) and not _kill_pending(pid) for pid in self._relay_inside())

    def _forward_relay(self, proc: subprocess.Popen, listening: threading.Event) -> None:
        """Pass the endpoint's chunks and ends on to the host, checked: nothing else gets through."""
        longest = 2 * RELAY_CHUNK
        ready = proc.stdout.readline(longest)  # the relay's first line says it listens (or it exits)
        listening.set()
        if not ready:
            return
        for line in iter(lambda: proc.stdout.readline(longest), b""):
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict) or type(message.get("vid")) is not int:
                continue
            chunk = message.get("chunk")
            if isinstance(chunk, str):
                self._send({"event": "validate", "vid": message["vid"], "chunk": chunk})
            elif message.get("end") is True:
                self._send({"event": "validate", "vid": message["vid"], "end": True})

    def _answer_relay(self, reply: dict) -> None:
        relay = self.relay
        if relay is None or relay.poll() is not None:
            return
        line = json.dumps({"vid": reply.get("vid"), "result": str(reply.get("result", ""))}).encode() + b"\n"
        with self.relay_lock:
            try:
                relay.stdin.write(line)
                relay.stdin.flush()
            except (OSError, ValueError):
                pass

    # -- the channel ----------------------------------------------------------------------------------
    def _send(self, message: dict) -> None:
        with self.send_lock:
            self.out.write(json.dumps(message) + "\n")
            self.out.flush()

    def _read_host(self, inp, requests: "queue.Queue") -> None:
        """Requests go to the serving loop; the host's answers for the endpoint straight to it (they arrive
        while an action runs)."""
        for raw in inp:
            try:
                request = json.loads(raw)
            except ValueError:
                continue
            if isinstance(request, dict) and request.get("op") == "validated":
                self._answer_relay(request)
            elif isinstance(request, dict) and request.get("op") == "cancel":
                self.cancel_target = request.get("target")  # read by the running action's loop
            elif isinstance(request, dict):
                requests.put(request)
        requests.put(None)

    def put(self, path: str, data: str, mode: int) -> dict:
        """Write a new file (relative to the working directory) that replaces nothing and follows no link."""
        if os.path.isabs(path) or ".." in path.split("/"):
            return {"error": f"put: {path!r} is not a relative path inside the working directory"}
        fd = os.open(os.path.join(self.config.cwd, path),
                     os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as f:
            os.fchmod(fd, int(mode) & 0o755)
            f.write(base64.b64decode(data))
        return {"ok": True}

    # -- copies out, for the host (see the stage, pack and unstage requests) ------------------------------------
    @staticmethod
    def _new_stage_file(target: str) -> int:
        return os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)

    def _copy_op(self, op: str, request: dict) -> dict:
        if not self.config.stage_dir:
            raise ValueError("this worker has no stage folder")
        target = os.path.join(self.config.stage_dir, "out")
        try:
            os.unlink(target)
        except FileNotFoundError:
            pass
        if op == "unstage":
            return {"ok": True}
        identity = (self.config.fs_uid, self.config.fs_gid)
        if op == "pack_fork":
            exclude = set()
            for path in request.get("exclude") or []:
                with contextlib.suppress(OSError):
                    st = os.stat(path)
                    exclude.add((st.st_dev, st.st_ino))
            with os.fdopen(self._new_stage_file(target), "wb") as out, filesystem_identity(*identity):
                paths = [str(p) for p in request["paths"]]
                counts = pack_for_fork(paths, exclude, out, self.config.stage_dir.strip("/"))
            return {"staged": target, "size": os.path.getsize(target), **counts}
        if op == "pack":
            with os.fdopen(self._new_stage_file(target), "wb") as out, filesystem_identity(*identity):
                counts = pack_tree(self.config.cwd, str(request["path"]), out, int(request["max_bytes"]),
                                   int(request["max_files"]))
            return {"staged": target, "size": os.path.getsize(target), **counts}
        path, max_bytes = str(request["path"]), int(request["max_bytes"])
        with filesystem_identity(*identity):
            fd, why = open_in_workspace(self.config.cwd, path)
        if why:
            return {"refused": why}
        if fd is None:
            return {"missing": True}
        name = path.rsplit("/", 1)[-1]
        try:
            size = os.fstat(fd).st_size
            if size > max_bytes:
                return {"refused": f"{name} is {size} bytes, over the {max_bytes}-byte limit"}
            out = self._new_stage_file(target)
            try:
                copy_fd(fd, out, size)
            finally:
                os.close(out)
        except OSError as e:  # the file changed under the copy (the agent's doing): its answer, not a failure
            return {"refused": f"{name} could not be copied ({e.strerror or e}); stop changing it while it is read"}
        finally:
            os.close(fd)
        return {"staged": target, "size": size}

    def serve(self, inp, out) -> None:
        self.out = out
        requests = queue.Queue()
        threading.Thread(target=self._read_host, args=(inp, requests), daemon=True).start()
        self._start_repl()  # ready before the first python action; it imports nothing heavy
        self._start_relay()
        while True:
            request = requests.get()
            if request is None:
                break
            started = time.monotonic()
            op = request.get("op")
            if op == "shutdown":
                self.shutdown()
                self._send({"id": request.get("id"), "ok": True})
                return
            if op == "ping":
                response = {"ok": True, "restore_skipped": self.restore_skipped}
            elif op in ("stage", "pack", "pack_fork", "unstage"):
                try:
                    response = self._copy_op(op, request)
                except (KeyError, OSError, ValueError, TypeError) as e:
                    response = {"error": f"{op} failed ({type(e).__name__}: {e})"}
            elif op == "put":
                try:
                    response = self.put(str(request["path"]), str(request["data"]), int(request.get("mode", 0o644)))
                except (KeyError, OSError, ValueError) as e:
                    response = {"error": f"put failed ({type(e).__name__}: {e})"}
            elif op in ("shell", "python"):
                self._start_relay()
                fn = self.shell if op == "shell" else self.python
                self.running_id = request.get("id")
                try:
                    response = fn(request["code"], float(request["timeout"]),
                                  int(request.get("max_output", DEFAULT_MAX_OUTPUT)))
                except Exception as e:  # noqa: BLE001 - what the action did to its sandbox is its own result
                    self._stop_repl()
                    empty = Capture(1)
                    response = self._result(empty, empty, 126, False,
                                            f"the sandbox could not run this action ({type(e).__name__}: {e})")
            else:
                response = {"error": f"unknown op {op!r}"}
            self.running_id = None
            response["id"] = request.get("id")
            response["duration"] = time.monotonic() - started
            self._send(response)
        self.shutdown()


def _running(pid: int) -> bool:
    """Whether a process exists and has not exited (a zombie waits for its parent to reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _kill_pending(pid: int) -> bool:
    """Whether a SIGKILL waits to be delivered to a process (it dies once it next runs)."""
    bit = 1 << (signal.SIGKILL - 1)
    try:
        with open(f"/proc/{pid}/status") as f:
            masks = [int(line.split()[1], 16) for line in f if line.startswith(("SigPnd:", "ShdPnd:"))]
    except (OSError, IndexError, ValueError):
        return False
    return any(mask & bit for mask in masks)


def _family(proc: subprocess.Popen) -> list:
    """A process and, behind a prefix like nsenter, the processes it forked (inside the sandbox)."""
    pid = proc.pid
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [pid] + [int(c) for c in f.read().split()]
    except (OSError, ValueError):
        return [pid]


def _status_nonce(line: bytes):
    try:
        status = json.loads(line.decode("utf-8", "replace"))
    except ValueError:
        return None
    return status.get("nonce") if isinstance(status, dict) else None


def _drain_fd(fd: int) -> None:
    """Drop whatever is waiting in a non-blocking pipe."""
    try:
        while os.read(fd, _READ):
            pass
    except (BlockingIOError, OSError):
        pass


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


# --- the persistent interpreter ------------------------------------------------------------------------
def _interruptible(on: bool) -> None:
    """SIGINT (a cancel) raises KeyboardInterrupt while a cell runs, and is ignored between cells."""
    signal.signal(signal.SIGINT, signal.default_int_handler if on else signal.SIG_IGN)


def _run_cell(code: str, namespace: dict) -> int:
    try:
        tree = ast.parse(code, "<cell>", "exec")
    except SyntaxError:
        traceback.print_exc(limit=0)
        return 1
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    try:
        _interruptible(True)
        exec(compile(tree, "<cell>", "exec"), namespace)
        if last is not None:
            value = eval(compile(last, "<cell>", "eval"), namespace)
            if value is not None:
                print(repr(value))
    except SystemExit:
        raise
    except BaseException:
        _interruptible(False)
        etype, value, tb = sys.exc_info()
        traceback.print_exception(etype, value, tb.tb_next if tb is not None else tb)
        return 1
    finally:
        _interruptible(False)
    return 0


def repl(cmd_fd: int, res_fd: int) -> None:
    sys.path.insert(0, os.getcwd())
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    commands = os.fdopen(cmd_fd, "r")
    results = os.fdopen(res_fd, "w")
    _interruptible(False)
    for line in commands:
        request = json.loads(line)
        code, nonce = request["code"], request.get("nonce")
        try:
            status = _run_cell(code, namespace)
        except KeyboardInterrupt:  # one that came as the cell was ending
            status = 1
        except SystemExit as e:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(e.code if isinstance(e.code, int) else 1)
        sys.stdout.flush()
        sys.stderr.flush()
        results.write(json.dumps({"exit_code": status, "nonce": nonce}) + "\n")
        results.flush()


def init() -> None:
    """PID 1 of the local sandbox's namespaces: reaps orphans and never exits, so the namespaces live until
    the host kills it (the kernel does not deliver SIGKILL to a namespace's init from inside it)."""
    # not dumpable: the agent, whose uid this is, cannot ptrace it into exiting (that would end the sandbox
    # as if from outside)
    _libc().prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    while True:
        try:
            os.wait()
        except ChildProcessError:
            signal.pause()
        except InterruptedError:
            pass


# --- the validation endpoint inside the sandbox ----------------------------------------------------------
def _uploaded_file(content_type: str, body: bytes):
    """The posted file: multipart field ``file`` (``curl -F file=@...``), else the whole body; None when a
    multipart form has no such field."""
    if not content_type.lower().startswith("multipart/form-data"):
        return body
    from email import policy
    from email.parser import BytesParser

    message = BytesParser(policy=policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1", "replace") + b"\r\n\r\n" + body)
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            return part.get_payload(decode=True) or b""
    return None


def relay(port: int, max_bytes: int, idle_s: float) -> None:
    """Serve ``POST /validate`` (and ``GET /health``) on 127.0.0.1:``port``, one request at a time, asking the
    worker (stdout: chunks, stdin: verdicts) for each verdict; a connection idle for ``idle_s`` seconds is
    dropped, so a half-sent request cannot hold the endpoint for ever."""
    from http.server import BaseHTTPRequestHandler, HTTPServer

    verdicts, chunks = sys.stdin.buffer, sys.stdout.buffer
    counter = [0]

    def ask(data: bytes) -> str:
        counter[0] += 1
        vid = counter[0]
        for start in range(0, max(len(data), 1), RELAY_CHUNK):
            piece = base64.b64encode(data[start:start + RELAY_CHUNK]).decode()
            chunks.write(json.dumps({"vid": vid, "chunk": piece}).encode() + b"\n")
        chunks.write(json.dumps({"vid": vid, "end": True}).encode() + b"\n")
        chunks.flush()
        for line in verdicts:
            try:
                reply = json.loads(line)
            except ValueError:
                continue
            if isinstance(reply, dict) and reply.get("vid") == vid:
                return str(reply.get("result", ""))
        raise SystemExit(0)  # the worker is gone

    class Handler(BaseHTTPRequestHandler):
        timeout = idle_s

        def _reply(self, status: int, payload: dict) -> None:
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path.split("?")[0].rstrip("/") == "/health":
                self._reply(200, {"status": "running"})
            else:
                self._reply(404, {"error": "not found: POST the file to /validate"})

        def do_POST(self) -> None:
            if self.path.split("?")[0].rstrip("/") != "/validate":
                self._reply(404, {"error": "not found: POST the file to /validate"})
                return
            declared = self.headers.get_all("Content-Length") or []
            try:
                length = int(declared[0]) if len(declared) == 1 and declared[0].strip().isdigit() else -1
            except ValueError:
                length = -1
            if length < 0:  # missing, repeated, negative or not a number: never read "until the end"
                self.close_connection = True
                self._reply(411, {"error": "send one Content-Length of 0 or more bytes "
                                           "(curl -X POST -F file=@FILE URL does)"})
                return
            if length > max_bytes + 65536:
                self.close_connection = True
                self._reply(413, {"error": f"the file is over the {max_bytes // 2**20} MiB limit"})
                return
            data = _uploaded_file(self.headers.get("Content-Type", ""), self.rfile.read(length))
            if data is None:
                self._reply(400, {"error": "post the file as the multipart field 'file': curl -F file=@FILE URL"})
                return
            self._reply(200, {"result": ask(data)})

        def log_message(self, *args) -> None:
            pass

    try:
        server = HTTPServer(("127.0.0.1", port), Handler)
    except OSError as e:
        sys.exit(f"the validation endpoint cannot listen on port {port}: {e}")
    chunks.write(b'{"listening": true}\n')
    chunks.flush()
    server.serve_forever(poll_interval=3600)  # nothing asks it to stop: it ends with the sandbox


def main(argv) -> None:
    if argv and argv[0] == "repl":
        repl(int(argv[1]), int(argv[2]))
        return
    if argv and argv[0] == "relay":
        relay(int(argv[1]), int(argv[2]), float(argv[3]))
        return
    if argv and argv[0] == "init":
        init()
        return
    raw = json.loads(argv[1]) if len(argv) > 1 and argv[0] == "serve" else {}
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    config = Config(raw)
    if config.identity:  # before anything else: from here on nothing of the worker is root
        drop_privileges(int(config.identity["uid"]), int(config.identity["gid"]), list(config.identity["caps"]))
    Worker(config).serve(sys.stdin, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
