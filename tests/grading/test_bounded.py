"""run_bounded: a value or a named exception comes back; anything else the child does is LimitExceeded or
ChildFailed, and no child outlives the call."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from mle_env.grading import bounded
from mle_env.grading.bounded import ChildFailed, LimitExceeded, Limits, run_bounded
from mle_env.grading.validation import InvalidSubmission

MiB = 2**20
pytestmark = pytest.mark.skipif(not bounded.can_fork(), reason="the child needs Linux")


def run(fn, memory: int = 256 * MiB, seconds: float = 30.0):  # type: ignore[no-untyped-def]
    return run_bounded(fn, memory=memory, seconds=seconds, passthrough=(InvalidSubmission, KeyError))


def in_fresh_interpreter(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` (dedented) run by a new Python: for what depends on the process's history (its heap, the
    thread pools it started)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)


def reaped(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_a_value_and_a_named_exception_come_back() -> None:
    assert run(lambda: {"score": 0.12345, "inf": float("inf"), "list": [1, "a"]}) == \
        {"score": 0.12345, "inf": float("inf"), "list": [1, "a"]}

    def invalid() -> None:
        raise InvalidSubmission("column 'x' holds 'y'")

    with pytest.raises(InvalidSubmission, match="column 'x' holds 'y'"):
        run(invalid)
    with pytest.raises(ChildFailed, match="ZeroDivisionError: division by zero"):
        run(lambda: 1 / 0)
    with pytest.raises(ChildFailed, match="cannot be sent"):
        run(lambda: object())


def test_memory_time_and_crashes_are_limits_and_no_child_is_left(monkeypatch: pytest.MonkeyPatch) -> None:
    forked: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    with pytest.raises(LimitExceeded, match="needed over 64 MiB") as e:
        run(lambda: len(bytearray(512 * MiB)), memory=64 * MiB)
    assert e.value.what == "memory"
    with pytest.raises(LimitExceeded, match="needed over 64 MiB"):
        run(lambda: float(np.ones(64 * MiB).sum()), memory=64 * MiB)
    assert run(lambda: len(bytearray(16 * MiB)), memory=64 * MiB) == 16 * MiB
    with pytest.raises(LimitExceeded, match="ran for over 1 s") as e:
        run(lambda: signal.pause(), seconds=1.0)
    assert e.value.what == "time"
    with pytest.raises(LimitExceeded, match="killed by SIGSEGV"):
        run(lambda: os.kill(os.getpid(), signal.SIGSEGV))
    with pytest.raises(LimitExceeded, match="status 3 without an answer"):
        run(lambda: os._exit(3))
    with pytest.raises(LimitExceeded, match="answer was over 4 MiB"):
        run(lambda: "x" * (5 * MiB))
    assert len(forked) == 7 and all(map(reaped, forked))


def test_an_answer_written_as_the_poll_times_out_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parent polls the pipe, then checks whether the child has ended: a child that answers and ends
    between the two (a poll that just timed out) has its answer in the pipe, not yet read. It used to be
    lost: a valid file judged "exited with status 0 without an answer", once in a few dozen checks run from
    several threads."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read_end)
        data = json.dumps(["ok", 7]).encode()
        bounded._write_all(write_end, bounded._HEADER.pack(len(data)) + data)
        os._exit(0)
    os.close(write_end)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # it has answered and ended, and is not reaped yet
    real_select, polls = select.select, []

    def poll_that_timed_out_first(*args: object) -> object:
        polls.append(args)
        return ([], [], []) if len(polls) == 1 else real_select(*args)

    monkeypatch.setattr(select, "select", poll_that_timed_out_first)
    try:
        data, status = bounded._wait(pid, read_end, time.monotonic() + 10)
    finally:
        os.close(read_end)
    assert data is not None and json.loads(data) == ["ok", 7] and status == 0


def test_a_fork_that_fails_is_the_hosts_trouble(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refuse)
    with pytest.raises(ChildFailed, match="could not be started"):
        run(lambda: 1)


def test_the_limits_scale_with_the_file_and_the_valid_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    limits = Limits()
    assert limits.memory(10 * MiB) == 2**30
    assert limits.memory(400 * MiB) == 1600 * MiB
    assert limits.memory(MiB, cells=4_000_000) == 4_000_000 * 512
    assert limits.time(100 * MiB) == 120 + 200
    monkeypatch.setenv(bounded.MEMORY_ENV, "300")
    monkeypatch.setenv(bounded.SECONDS_ENV, "10")
    assert Limits.from_env().memory(0) == 300 * MiB and Limits.from_env().time(0) == 10


def test_the_child_sees_the_parents_objects_frozen_and_the_parent_gets_its_collector_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    held = [[i] for i in range(1000)]  # objects the collector tracks
    assert gc.get_freeze_count() == 0
    # in the child the parent's objects are out of the collector's reach: a collection there copies no page
    assert run(lambda: gc.get_freeze_count()) >= len(held)
    assert gc.get_freeze_count() == 0  # the parent's, unfrozen at once
    with pytest.raises(LimitExceeded):
        run(lambda: os._exit(3))
    assert gc.get_freeze_count() == 0
    monkeypatch.setattr(os, "fork", lambda: (_ for _ in ()).throw(BlockingIOError(11, "no process left")))
    with pytest.raises(ChildFailed):
        run(lambda: 1)
    assert gc.get_freeze_count() == 0


def test_memory_the_parent_freed_is_not_extra_budget() -> None:
    """The limit is on address space, and the child inherits the parent's malloc heaps: a block the parent
    freed (at the heap's top, or below a block still in use) and the 64 MiB reserve of each extra arena its
    threads made would be budget on top of ``memory``, as large as what the parent happened to free last.
    Each is taken or unmapped first: 30 MiB in 3 MiB blocks exceeds an 8 MiB budget after each, and still
    fits a 64 MiB one.

    Run in a fresh interpreter, so that the parent's heap holds just what the code frees."""
    out = in_fresh_interpreter("""
        import threading
        from mle_env.grading.bounded import LimitExceeded, run_bounded

        MiB = 2**20

        def verdicts():
            needs_30_mib = lambda: len([bytearray(3 * MiB) for _ in range(10)])
            try:
                print(run_bounded(needs_30_mib, memory=8 * MiB, seconds=30), end=" ")
            except LimitExceeded as e:
                print(e.what, end=" ")
            print(run_bounded(needs_30_mib, memory=64 * MiB, seconds=30))

        temporary = bytearray(31 * MiB)
        del temporary  # a large block freed: glibc's threshold for mapping blocks apart rises past 3 MiB
        blocks = [bytearray(3 * MiB) for _ in range(12)]
        del blocks  # freed at the heap's top
        verdicts()
        blocks = [bytearray(3 * MiB) for _ in range(12)]
        in_use = bytearray(200_000)  # above them
        del blocks  # freed below a block in use
        verdicts()

        def use_malloc():
            [bytearray(3000) for _ in range(20_000)]  # this thread's own arena

        thread = threading.Thread(target=use_malloc)
        thread.start()
        thread.join()
        verdicts()
    """)
    assert out.stdout.split("\n")[:3] == ["memory 10"] * 3, (out.stdout, out.stderr[-2000:])


def test_an_arena_the_parent_made_never_grows_over_memory_the_child_mapped() -> None:
    """The tail of each extra arena's 64 MiB reserve is kept from growing in the child: a thread the child
    starts takes that arena over, and growing into the reserve costs no new address space (30 MB in 3 kB
    blocks would fit an 8 MiB budget). Were the tail unmapped instead, the child's next mappings could take its
    place, and glibc, whose mprotect would then succeed on them, would grow the arena over them: a thread's
    bytearrays written into another allocator's memory. The child maps 1 MiB right after each arena's
    writable part where it can, fills it, and has a thread allocate 9 MB.

    Run in a fresh interpreter, so that the parent has just the arena its one thread made."""
    out = in_fresh_interpreter("""
        import ctypes, json, mmap, threading
        from mle_env.grading.address_space import ARENA_HEAP, arena_tails
        from mle_env.grading.bounded import run_bounded

        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                              ctypes.c_long)
        MAP_FIXED_NOREPLACE, SIZE = 0x100000, 2**20

        def allocate(n):
            blocks = [bytearray(3000) for _ in range(n)]
            return len(blocks)

        thread = threading.Thread(target=allocate, args=(2000,))
        thread.start()
        thread.join()
        tails = len(arena_tails(open("/proc/self/maps", "rb").read()))

        def child():
            placed = []
            for line in open("/proc/self/maps"):
                fields = line.split()
                start, end = (int(x, 16) for x in fields[0].split("-"))
                if len(fields) == 5 and fields[1] == "rw-p" and start % ARENA_HEAP == 0 and end - start < ARENA_HEAP:
                    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_FIXED_NOREPLACE
                    if libc.mmap(end, SIZE, mmap.PROT_READ | mmap.PROT_WRITE, flags, -1, 0) == end:
                        ctypes.memset(end, 0x5A, SIZE)
                        placed.append(end)
            grower = threading.Thread(target=allocate, args=(3000,))
            grower.start()
            grower.join()
            return [ctypes.string_at(at, SIZE) == b"\\x5a" * SIZE for at in placed]

        def in_a_thread():
            made = []
            thread = threading.Thread(target=lambda: made.append(allocate(10_000)))
            thread.start()
            thread.join()  # a MemoryError ends the thread without a count
            return made

        budgets = [run_bounded(in_a_thread, memory=mib * 2**20, seconds=60) for mib in (8, 64)]
        print(json.dumps([tails, run_bounded(child, memory=2**30, seconds=60), budgets]))
    """)
    assert out.returncode == 0, out.stderr[-2000:]
    tails, intact, budgets = json.loads(out.stdout.split("\n")[0])
    assert tails >= 1, "the parent's thread made no arena: nothing was tested"
    assert all(intact), intact
    assert budgets == [[], [10_000]], budgets


def test_a_tail_is_sealed_past_what_the_arena_has_grown_to_since_the_maps_were_read() -> None:
    """The maps text is read, then parsed, while the arena of the thread that reads it may grow (a child
    forked from a thread other than the main one allocates in that thread's arena). A tail sealed where the
    text says it starts would take memory malloc had already handed out. Here the child reads the text, grows
    its own arena by 3 MB, seals with the old text, then writes to and frees what it allocated.

    Run in a fresh interpreter, forking from a thread, so that the child's arena is an extra one."""
    out = in_fresh_interpreter("""
        import json, threading
        from mle_env.grading.address_space import arena_tails, seal_arena_reserves
        from mle_env.grading.bounded import run_bounded

        def child():
            stale = open("/proc/self/maps", "rb").read()
            blocks = [bytearray(3000) for _ in range(1000)]
            seal_arena_reserves(stale)
            for block in blocks:
                block[:] = b"x" * 3000
            total = sum(block.count(b"x") for block in blocks)
            del blocks
            return [len(arena_tails(stale)), total, len([bytearray(3000) for _ in range(1000)])]

        def in_a_thread():
            try:
                results.append(run_bounded(child, memory=2**30, seconds=60))
            except Exception as e:
                results.append(str(e))

        results = []
        thread = threading.Thread(target=in_a_thread)
        thread.start()
        thread.join()
        print(json.dumps(results[0]))
    """)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.split("\n")[0])
    assert isinstance(result, list), result  # else the child's verdict: "crash: it was killed by SIGSEGV"
    tails, written, allocated = result
    assert tails >= 1, "the child's thread arena had no tail: nothing was tested"
    assert (written, allocated) == (3_000_000, 1000)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="a thread pool needs two cores to start a thread")
def test_the_child_computes_blas_on_its_own_thread_and_starts_no_pool() -> None:
    """OpenBLAS restarts its whole pool in a forked child on the first openblas_set_num_threads call (a thread
    per core, spinning before it sleeps): the child limits it without that call, so no thread is started,
    before or during a product that would run in parallel, and numpy's and scipy's BLAS report one thread.

    Run in a fresh interpreter, with numpy's and scipy's OpenBLAS and scikit-learn's OpenMP loaded and used
    in the parent first, as a grader has them; scipy's and scikit-learn's only after a first child, whose
    fork found numpy's pool alone (the pools are found again once modules were imported since)."""
    out = in_fresh_interpreter("""
        import json, os
        import numpy as np, threadpoolctl
        from mle_env.grading.bounded import run_bounded

        run_bounded(lambda: 0, memory=2**30, seconds=60)
        import scipy.linalg, sklearn.metrics
        a = np.random.default_rng(0).random((600, 600))
        a @ a, scipy.linalg.lu_factor(a)  # the parent's pools running

        def child():
            before = len(os.listdir("/proc/self/task"))
            product, factor = a @ a, scipy.linalg.lu_factor(a)[0]
            after = len(os.listdir("/proc/self/task"))
            pools = {i["internal_api"] + ":" + os.path.basename(i["filepath"]): i["num_threads"]
                     for i in threadpoolctl.threadpool_info()}
            return [before, after, float(product[0, 0]), float(factor[0, 0]), pools]

        print(json.dumps(run_bounded(child, memory=2**30, seconds=60)))
        print(json.dumps([float((a @ a)[0, 0]), float(scipy.linalg.lu_factor(a)[0][0, 0])]))
    """)
    assert out.returncode == 0, out.stderr[-2000:]
    (before, after, product, factor, pools), expected = (json.loads(line) for line in out.stdout.split("\n")[:2])
    assert (before, after) == (1, 1), out.stdout
    assert [product, factor] == pytest.approx(expected, rel=1e-12)
    assert any(name.startswith("openblas") for name in pools) and set(pools.values()) == {1}, pools
