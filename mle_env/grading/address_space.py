"""A forked child's memory budget that the parent's free memory cannot widen (glibc, Linux).

``RLIMIT_AS`` limits address space, and a forked child inherits its parent's: memory malloc holds free
(blocks freed, as large as whatever the parent freed last; the 64 MiB reserve of each extra arena its
threads made) costs no new address space, so a child could use it beyond any budget, and whether a file
fits the budget would depend on what the parent did before. :func:`limit_address_space` takes that memory
first, then sets the limit:

- the unused tails of the extra arenas' reserves are unmapped;
- with the limit at what is mapped (so that a request no free block can serve fails instead of mapping
  more), the free blocks of 4 KiB or more are allocated and never freed, in this thread's arena and the
  one malloc falls back to;
- the limit is raised by the budget.

Still reusable beyond the budget: free blocks under 4 KiB and Python's small-object pools (the parent's
own fragments), and the free blocks inside the other extra arenas, which a thread the child starts takes
over (Arrow's CSV reader starts two or three; their arenas' reserves are gone, so they grow only within the
limit). Taking the blocks costs 0.2-3 ms on a grading host; the pages stay untouched but for malloc's
headers.
"""

from __future__ import annotations

import ctypes
import resource
from collections.abc import Callable

MiB = 2**20
#: the smallest free block taken: smaller ones stay reusable beyond the budget
PLUG_MIN = 4096
#: the address space glibc reserves for each extra malloc arena (HEAP_MAX_SIZE on 64-bit Linux)
ARENA_HEAP = 64 * MiB


def _libc(name: str, restype: type, argtypes: tuple[type, ...]) -> Callable | None:
    """A libc function through ctypes, or None (not glibc, or no such function); looked up when this module
    is imported, in the parent, so that the child allocates nothing for it under the limit."""
    try:
        function = getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError, TypeError):
        return None
    function.restype, function.argtypes = restype, argtypes
    return function


_malloc = _libc("malloc", ctypes.c_void_p, (ctypes.c_size_t,))
_munmap = _libc("munmap", ctypes.c_int, (ctypes.c_void_p, ctypes.c_size_t))


def limit_address_space(memory: int) -> None:  # pragma: no cover - runs in the child
    """Set ``RLIMIT_AS`` so that this (child) process can use ``memory`` bytes beyond what its parent left
    it in use (see the module's docstring). Left unset when the address space cannot be read or the limit
    cannot be set; never left at the tight limit under which the free blocks are taken."""
    _drop_arena_reserves()
    try:
        mapped = _address_space()
        final = soft_limit(resource.RLIMIT_AS, mapped + memory)
        resource.setrlimit(resource.RLIMIT_AS, final)  # first: a limit that cannot be set is left unset
        resource.setrlimit(resource.RLIMIT_AS, soft_limit(resource.RLIMIT_AS, mapped))
    except (OSError, ValueError):
        return
    try:
        plug_free_blocks(mapped)
    except MemoryError:  # Python itself needed a new block: what is taken stays taken
        pass
    finally:
        resource.setrlimit(resource.RLIMIT_AS, final)


def plug_free_blocks(cap: int) -> None:  # pragma: no cover - runs in the child
    """Allocate, and never free, the free blocks of ``PLUG_MIN`` bytes or more that malloc holds in memory
    already mapped, in this thread's arena and those it falls back to; at most ``cap`` bytes.

    Called with ``RLIMIT_AS`` at the address space already mapped, so a request that no free block can
    serve fails instead of mapping more: requests of 64 MiB down to ``PLUG_MIN`` are repeated until they
    fail, taking each free block in a few pieces. ``cap`` (what is mapped) only guards a system that does not
    enforce the limit."""
    if _malloc is None:
        return
    size, taken = 64 * MiB, 0
    while size >= PLUG_MIN and taken <= cap:
        while taken <= cap and _malloc(size - 64):  # 64 bytes short: a free block of exactly ``size`` serves
            taken += size
        size //= 2


def _drop_arena_reserves() -> None:  # pragma: no cover - runs in the child
    """Unmap the unused, inaccessible tails of the extra malloc arenas the parent's threads made.

    Each such heap is a 64 MiB-aligned reservation whose tail glibc makes writable as the arena grows. That
    costs no new address space, so ``RLIMIT_AS`` cannot see it: every thread the parent ever ran would add up
    to 64 MiB to the child's budget. Unmapped, a tail cannot grow (glibc's mprotect fails and malloc turns
    to another arena, or returns NULL: a MemoryError)."""
    try:
        with open("/proc/self/maps") as f:
            regions = [line.split() for line in f]
    except OSError:
        return
    previous: tuple[int, int, str, bool] | None = None
    for fields in regions:
        start, end = (int(x, 16) for x in fields[0].split("-"))
        anonymous = len(fields) < 6
        if (_munmap is not None and previous is not None and anonymous and fields[1] == "---p" and previous[3]
                and previous[2] == "rw-p" and previous[1] == start and previous[0] % ARENA_HEAP == 0
                and end - previous[0] == ARENA_HEAP):
            _munmap(start, end - start)
        previous = (start, end, fields[1], anonymous)


def _address_space() -> int:
    """This process's virtual memory size in bytes (``VmSize``)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


def soft_limit(which: int, value: int) -> tuple[int, int]:
    """(soft, hard) for ``resource.setrlimit(which, ...)``: the soft limit at ``value``, never above the hard
    limit."""
    _, hard = resource.getrlimit(which)
    return (value if hard == resource.RLIM_INFINITY else min(value, hard)), hard
