"""Run one computation over untrusted input in a forked child with a memory limit and a time limit.

A submission is written by the agent, which may craft it to make parsing or the metric cost as much as
possible. :func:`run_bounded` runs such work in a child made with ``fork`` (it inherits what the grader
already holds: imported modules, the answers; nothing is pickled across), under ``RLIMIT_AS`` (the address
space it inherited plus a budget) and ``RLIMIT_CPU``, while the parent waits at most a wall-clock limit and
then kills it. The child returns a JSON value (parsed in the parent: never a pickle from a process that
read hostile data); an exception of a type the caller names is rebuilt in the parent from its message.
The memory limit is on address space, so what the parent has mapped and not in use would be extra budget:
the free blocks of its malloc heaps (as large as whatever it freed last: a temporary the size of the file,
say) and the reserves of its extra malloc arenas (64 MiB for each thread it ran). The child takes them
before its budget is set (:mod:`~mle_env.grading.address_space`, which says what stays reusable), so that a
verdict does not depend on what the parent freed before. Whatever else happens to the child (memory
exhausted, killed, out of time, crashed) becomes :class:`LimitExceeded`; the parent's memory and state are
untouched.

The child only computes and exits with ``os._exit`` (no ``atexit``, no flushing of inherited streams), so
the threads the parent may have do not matter to it beyond the locks they held, which the child does not
take (were one taken, the time limit would end the wait). Outside Linux the work runs in this process,
unbounded.

A fork costs about 5 ms for a parent of 300 MB and 12 ms for 1.4 GB (copying page tables; measured on
2 cores), and a child that does nothing 8-15 ms in all. The child then pays for each page of its parent it
writes to (refcounts, the allocator's free lists) and each fresh page it maps, about 2-2.5 us a page on the
2-core virtual machines CI runs on: a small check adds 10-40 ms, a check of icecube's 13.2M rows about half
a second (its 150,000 fresh pages against 20,000 in a warm process, whose allocators reuse memory they
already mapped). The parent's objects are frozen for the fork (``gc.freeze``), so a collection in the child
does not write to every page that holds one; no thread pool is restarted in the child, nor looked for there
(:func:`_one_thread_per_pool`). Every file still goes to a child: the unbounded exposure of checking
in-process is not worth a few tens of milliseconds.
"""

from __future__ import annotations

import ctypes
import errno
import faulthandler
import gc
import json
import math
import os
import resource
import select
import signal
import struct
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mle_env.grading.address_space import MiB, limit_address_space, soft_limit

#: environment variables that override :class:`Limits`' defaults
MEMORY_ENV = "MLE_ENV_CHECK_MEMORY_MB"
SECONDS_ENV = "MLE_ENV_CHECK_SECONDS"
_HEADER = struct.Struct("<Q")
_MAX_RESULT = 4 * MiB  # a verdict or a score: anything longer means the child misbehaved
_POLL_S = 0.05


@dataclass(frozen=True)
class Limits:
    """How much one check of a file of ``size`` bytes may use.

    Attributes:
        min_memory: bytes of address space the child may add to what it inherited, at least (1 GiB;
            ``$MLE_ENV_CHECK_MEMORY_MB`` MiB when set).
        memory_per_byte: ...or this many times the file's size, when that is more (4);
        memory_per_cell: ...or this many bytes per cell of a valid submission (512: a valid file of short
            cells costs about 130 bytes a cell to align and score), when that is more.
        seconds: wall-clock seconds, at least (120; ``$MLE_ENV_CHECK_SECONDS`` when set).
        seconds_per_mib: ...plus this many per MiB of the file (2).
    """

    min_memory: int = 2**30
    memory_per_byte: float = 4.0
    memory_per_cell: float = 512.0
    seconds: float = 120.0
    seconds_per_mib: float = 2.0

    def memory(self, size: int, cells: int = 0) -> int:
        """The child's memory budget in bytes for a ``size``-byte file where a valid one has ``cells`` cells."""
        return int(max(self.min_memory, self.memory_per_byte * size, self.memory_per_cell * cells))

    def time(self, size: int) -> float:
        """The child's wall-clock limit in seconds for a ``size``-byte file."""
        return self.seconds + self.seconds_per_mib * size / MiB

    @classmethod
    def from_env(cls) -> Limits:
        """The defaults, with ``$MLE_ENV_CHECK_MEMORY_MB`` and ``$MLE_ENV_CHECK_SECONDS`` applied."""
        memory, seconds = os.environ.get(MEMORY_ENV), os.environ.get(SECONDS_ENV)
        return cls(
            min_memory=int(float(memory) * MiB) if memory else cls.min_memory,
            seconds=float(seconds) if seconds else cls.seconds,
        )


class LimitExceeded(Exception):
    """The child did not return: ``what`` is "memory", "time" or "crash" (``detail`` says more)."""

    def __init__(self, what: str, detail: str) -> None:
        self.what, self.detail = what, detail
        super().__init__(f"{what}: {detail}")


class ChildFailed(Exception):
    """The child raised an exception of a type the caller did not name (the message is its type and text),
    or could not be started."""


def can_fork() -> bool:
    """Whether work can be bounded here: Linux (``os.fork``, ``/proc``; macOS forbids forking a process whose
    frameworks started threads)."""
    return hasattr(os, "fork") and sys.platform.startswith("linux")


def run_bounded(
    fn: Callable[[], Any], *, memory: int, seconds: float, passthrough: tuple[type[Exception], ...] = ()
) -> Any:
    """``fn()`` computed in a forked child that may add ``memory`` bytes of address space and run ``seconds``.

    ``fn`` must return a JSON-serialisable value (it comes back through ``json``). An exception whose type is
    in ``passthrough`` is raised again here as ``type(message)``; those types must accept one string.

    Raises:
        LimitExceeded: the child ran out of memory or time, or died without answering.
        ChildFailed: ``fn`` raised an exception not in ``passthrough``, or no child could be forked.
    """
    if not can_fork():
        return fn()
    read_end, write_end = os.pipe()
    # the parent's objects out of the collector's reach, so that a collection in the child does not write
    # to (and copy) every page that holds one
    pid = -1
    pools = _thread_pools()
    gc.freeze()
    try:
        with warnings.catch_warnings():  # 3.12+ warns when threads exist: the child only computes, then exits
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError as e:  # no process left to this user, say: the host's trouble, not the input's
        os.close(read_end)
        os.close(write_end)
        raise ChildFailed(f"the child could not be started ({e})") from None
    finally:
        if pid != 0:  # the parent's collector back as it was; the child keeps its parent's objects frozen
            gc.unfreeze()
    if pid == 0:  # pragma: no cover - the child; coverage is not collected past os._exit
        os.close(read_end)
        _child(fn, memory, seconds, passthrough, pools, write_end)
    os.close(write_end)
    try:
        data, status = _wait(pid, read_end, time.monotonic() + seconds)
    finally:
        os.close(read_end)
    return _outcome(data, status, memory, seconds, passthrough)


def _child(fn: Callable[[], Any], memory: int, seconds: float, passthrough: tuple[type[Exception], ...],
           pools: list[Any], fd: int) -> None:  # pragma: no cover - runs in the child
    code = 70
    try:
        _limit_self(memory, seconds, pools)
        try:
            payload: list[Any] = ["ok", fn()]
        except passthrough as e:
            payload = ["raise", next(i for i, t in enumerate(passthrough) if isinstance(e, t)), str(e)]
        except BaseException as e:  # noqa: BLE001 - reported to the parent, whatever it is
            payload = ["memory"] if _out_of_memory(e) else ["error", f"{type(e).__name__}: {e}"[:2000]]
        try:
            data = json.dumps(payload).encode()
        except MemoryError:
            data = b'["memory"]'
        except (TypeError, ValueError) as e:
            data = json.dumps(["error", f"the result cannot be sent ({type(e).__name__}: {e})"[:2000]]).encode()
        _write_all(fd, _HEADER.pack(len(data)) + data)
        code = 0
    finally:
        os._exit(code)


def _out_of_memory(e: BaseException) -> bool:
    """Whether ``e`` says an allocation failed: MemoryError, or ENOMEM (pandas' parser raises OSError)."""
    return isinstance(e, MemoryError) or (isinstance(e, OSError) and e.errno == errno.ENOMEM)


def _limit_self(memory: int, seconds: float, pools: list[Any]) -> None:  # pragma: no cover - runs in the child
    """Cap this (child) process: address space = what it holds in use + ``memory``
    (:func:`~mle_env.grading.address_space.limit_address_space`); CPU = ``seconds`` + 1; no core dumps or
    fault tracebacks; one thread for the thread pools the parent loaded (``pools``,
    :func:`_one_thread_per_pool`), so that their reservations do not eat the budget; Arrow allocating with
    the system allocator. A limit that cannot be set is skipped."""
    limit_address_space(memory)
    limits = ((resource.RLIMIT_CPU, lambda: math.ceil(seconds) + 1),
              (resource.RLIMIT_CORE, lambda: 0))  # a crash dumps no GiB of core
    for which, value in limits:
        try:
            resource.setrlimit(which, soft_limit(which, value()))
        except (OSError, ValueError):
            pass
    faulthandler.disable()  # a crash is the verdict; its traceback is not for the host's stderr
    pyarrow = sys.modules.get("pyarrow")
    if pyarrow is not None:
        pyarrow.set_cpu_count(1)
        pyarrow.set_io_thread_count(1)
        # mimalloc/jemalloc reuse address space reserved before the fork (a GiB), which RLIMIT_AS cannot
        # see; the system allocator maps what it needs
        pyarrow.set_memory_pool(pyarrow.system_memory_pool())
    _one_thread_per_pool(pools)


#: (modules imported, threadpoolctl's controllers of the thread pools loaded then), see _thread_pools
_pools: tuple[int, list[Any]] = (0, [])


def _thread_pools() -> list[Any]:
    """threadpoolctl's controllers of the BLAS and OpenMP pools loaded in this process, for the child to limit;
    none when threadpoolctl was never imported (no library that uses it was). Finding them takes 3-9 ms, so
    they are found again only when modules were imported since (native libraries come with modules)."""
    global _pools
    threadpoolctl = sys.modules.get("threadpoolctl")
    if threadpoolctl is None:
        return []
    if _pools[0] != len(sys.modules):
        try:
            controllers = list(threadpoolctl.ThreadpoolController().lib_controllers)
        except Exception:  # noqa: BLE001 - only an optimisation
            controllers = []
        _pools = (len(sys.modules), controllers)
    return _pools[1]


def _one_thread_per_pool(pools: list[Any]) -> None:  # pragma: no cover - runs in the child
    """Make the BLAS and OpenMP libraries the parent loaded compute on this thread alone, starting none.

    OpenBLAS built on pthreads (numpy's and scipy's wheels) stops its pool before a fork and restarts all of
    it in the child, a thread per core that spins about 0.1 s before it sleeps, on the first call to
    ``openblas_set_num_threads``, whatever number is asked (OpenBLAS #1837, #4361). Through threadpoolctl
    that cost 80 ms of a 20 ms check on two cores, and would start a hundred threads on a large host, each
    reserving its stack from the memory budget. So for that library the thread count its parallel paths
    read, the exported ``blas_cpu_number``, is set to 1 directly and the pool is never restarted; any other
    library (OpenMP, MKL, BLIS, OpenBLAS on OpenMP) gets threadpoolctl's limit. ``pools``: their controllers,
    found in the parent (:func:`_thread_pools`)."""
    for library in pools:
        try:
            if not _openblas_on_one_thread(library):
                library.set_num_threads(1)
        except Exception:  # noqa: BLE001 - only an optimisation
            pass


def _openblas_on_one_thread(library: Any) -> bool:  # pragma: no cover - runs in the child
    """Set a pthreads OpenBLAS (a threadpoolctl controller) to one thread through its ``blas_cpu_number``;
    False for any other library, or a build that does not export it (the library's own call is left)."""
    if library.internal_api != "openblas" or getattr(library, "threading_layer", "") != "pthreads":
        return False
    try:
        ctypes.c_int.in_dll(library.dynlib, "blas_cpu_number").value = 1
    except ValueError:
        return False
    return True


def _write_all(fd: int, data: bytes) -> None:  # pragma: no cover - runs in the child
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _wait(pid: int, fd: int, deadline: float) -> tuple[bytes | None, int | str]:
    """The child's whole message (or None) and its wait status, or "time" when it was killed at ``deadline``,
    or "oversized" when it was killed for an answer over :data:`_MAX_RESULT` bytes.

    The message is length-prefixed, so it is complete without waiting for end-of-file (another child forked
    meanwhile may hold the pipe's write end); a child that dies without one is noticed by polling. The child
    is always reaped before this returns, and only once (its pid may be reused afterwards)."""
    buffer = bytearray()
    status: int | str | None = None
    try:
        while status is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                os.kill(pid, signal.SIGKILL)
                _reap(pid)
                status = "time"
                break
            readable, _, _ = select.select([fd], [], [], min(remaining, _POLL_S))
            chunk = os.read(fd, 1 << 16) if readable else None
            if chunk:
                buffer += chunk
                length = _HEADER.unpack_from(buffer)[0] if len(buffer) >= _HEADER.size else 0
                if length > _MAX_RESULT:
                    os.kill(pid, signal.SIGKILL)
                    _reap(pid)
                    status = "oversized"
                    break
                if not length or len(buffer) < _HEADER.size + length:
                    continue
                status = _reap(pid)  # it has answered: it exits now
            elif chunk == b"":  # every write end is closed: the child has exited or is exiting
                status = _reap(pid)
            else:
                status = _reap(pid, os.WNOHANG)
                if status is not None:  # it ended since the poll: what it wrote before is in the pipe
                    buffer += _drain(fd)
    finally:
        if status is None:  # interrupted here (KeyboardInterrupt, say): the child must not outlive the call
            os.kill(pid, signal.SIGKILL)
            _reap(pid)
    if isinstance(status, str) or len(buffer) < _HEADER.size:
        return None, status
    length = _HEADER.unpack_from(buffer)[0]
    complete = 0 < length <= _MAX_RESULT and len(buffer) >= _HEADER.size + length
    return (bytes(buffer[_HEADER.size:_HEADER.size + length]) if complete else None), status


def _drain(fd: int) -> bytes:
    """What the pipe holds now, without waiting (another child may hold its write end open)."""
    data = bytearray()
    while len(data) <= _MAX_RESULT + _HEADER.size and select.select([fd], [], [], 0)[0]:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        data += chunk
    return bytes(data)


def _reap(pid: int, flags: int = 0) -> int | None:
    """The child's wait status; None while it runs (with ``WNOHANG``); 0 when it was reaped elsewhere (a
    SIGCHLD handler that ignores children, say)."""
    try:
        done, status = os.waitpid(pid, flags)
    except ChildProcessError:
        return 0
    return status if done else None


def _outcome(data: bytes | None, status: int | str, memory: int, seconds: float,
             passthrough: tuple[type[Exception], ...]) -> Any:
    if status == "time":
        raise LimitExceeded("time", f"it ran for over {seconds:.0f} s")
    if status == "oversized":
        raise LimitExceeded("crash", f"its answer was over {_MAX_RESULT // MiB} MiB")
    limit = f"{memory / MiB:,.0f} MiB"
    if data is not None:
        kind, *rest = json.loads(data)
        if kind == "ok":
            return rest[0]
        if kind == "raise":
            raise passthrough[rest[0]](rest[1])
        if kind == "memory":
            raise LimitExceeded("memory", f"it needed over {limit} of memory")
        raise ChildFailed(rest[0])
    assert isinstance(status, int)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            raise LimitExceeded("time", f"it used over {seconds:.0f} s of CPU")
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        if sig in (signal.SIGKILL, signal.SIGABRT):  # the OOM killer; a C++ allocation failing aborts
            raise LimitExceeded("memory", f"it was killed by {name}, its memory limit being {limit}")
        raise LimitExceeded("crash", f"it was killed by {name}")
    raise LimitExceeded("crash", f"it exited with status {os.WEXITSTATUS(status)} without an answer")
