"""A forked child's memory budget that the parent's free memory cannot widen (glibc, Linux).

``RLIMIT_AS`` limits address space, and a forked child inherits its parent's: memory malloc holds free
(blocks freed, as large as whatever the parent freed last; the 64 MiB reserve of each extra arena its
threads made) costs no new address space, so a child could use it beyond any budget, and whether a file
fits the budget would depend on what the parent did before. :func:`limit_address_space` takes that memory
first, then sets the limit:

- the unused tails of the extra arenas' reserves are sealed: they can no longer be made writable;
- with the limit at what is mapped (so that a request no free block can serve fails instead of mapping
  more), the free blocks of 4 KiB or more are allocated and never freed, in this thread's arena and the
  one malloc falls back to;
- the limit is raised by the budget.

Still reusable beyond the budget: free blocks under 4 KiB and Python's small-object pools (the parent's
own fragments), and the free blocks inside the other extra arenas, which a thread the child starts takes
over (Arrow's CSV reader starts two or three; their arenas' reserves are sealed, so they grow only by new
heaps, within the limit). Taking the blocks costs 0.2-3 ms on a grading host; the pages stay untouched but
for malloc's headers.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import resource
from collections.abc import Callable

MiB = 2**20
#: the smallest free block taken: smaller ones stay reusable beyond the budget
PLUG_MIN = 4096
#: the address space glibc reserves for each extra malloc arena (HEAP_MAX_SIZE on 64-bit Linux)
ARENA_HEAP = 64 * MiB
#: room an arena's heap keeps to grow past the size glibc records for it when its tail is sealed: the
#: sealing itself allocates, and may grow the arena of the thread that runs it
SEAL_MARGIN = 1 * MiB


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
_mmap = _libc("mmap", ctypes.c_void_p,
              (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long))
_PROT_NONE, _MAP_FIXED = 0, 0x10


def limit_address_space(memory: int) -> None:  # pragma: no cover - runs in the child
    """Set ``RLIMIT_AS`` so that this (child) process can use ``memory`` bytes beyond what its parent left
    it in use (see the module's docstring). Left unset when the address space cannot be read or the limit
    cannot be set; never left at the tight limit under which the free blocks are taken."""
    seal_arena_reserves()
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


def seal_arena_reserves(maps: bytes | None = None) -> None:  # pragma: no cover - runs in the child
    """Make the unused, inaccessible tails of the extra malloc arenas the parent's threads made unable to grow.

    Each such heap is a 64 MiB-aligned reservation whose tail glibc makes writable (mprotect) as the arena
    grows. That costs no new address space, so ``RLIMIT_AS`` cannot see it: every thread the parent ever ran
    would add up to 64 MiB to the child's budget. Each tail is replaced by a mapping that mprotect cannot make
    writable (``/dev/zero``, shared, opened read-only), so glibc's growth fails and malloc turns to another
    arena, or returns NULL: a MemoryError. Unmapping the tail instead would leave a hole that the child's next
    mappings fill, and glibc's mprotect would then succeed on them: the arena would grow over another
    allocator's memory. A tail is sealed from ``SEAL_MARGIN`` past what glibc has made writable, read
    from the heap's header just before (:func:`_committed`); a region whose header does not look like a
    heap's is left alone. ``maps``: this process's /proc/self/maps text, read now when not given."""
    if _mmap is None:
        return
    try:
        if maps is None:
            with open("/proc/self/maps", "rb") as f:
                maps = f.read()
        tails = arena_tails(maps)
        if not tails:  # a parent whose threads made no arena (or none with room left): nothing to open
            return
        fd = os.open("/dev/zero", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        for start, end in tails:
            committed = _committed(end - ARENA_HEAP)
            if committed is not None:
                start = max(start, end - ARENA_HEAP + committed + SEAL_MARGIN)
                if start < end:
                    _mmap(start, end - start, _PROT_NONE, mmap.MAP_SHARED | _MAP_FIXED, fd, 0)
    finally:
        os.close(fd)


def _committed(heap: int) -> int | None:  # pragma: no cover - runs in the child
    """The bytes of a glibc arena heap made writable so far (its ``heap_info.mprotect_size``, the fourth word
    at its start), read now: the maps text may be older, the heap of this thread's own arena having grown
    while it was read. None when the words there do not look like a heap's header."""
    _, _, size, committed = (ctypes.c_size_t * 4).from_address(heap)
    if 0 < size <= committed <= ARENA_HEAP and committed % resource.getpagesize() == 0:
        return int(committed)
    return None


#: what follows the addresses on the line of an inaccessible private anonymous mapping in /proc/PID/maps
_INACCESSIBLE = b" ---p 00000000 00:00 0"


def arena_tails(maps: bytes) -> list[tuple[int, int]]:
    """The (start, end) of each unused tail of an extra malloc arena's heap in a /proc/PID/maps text: an
    inaccessible anonymous mapping right after a writable anonymous one that starts on a 64 MiB boundary,
    the two making up 64 MiB. Only the few inaccessible lines are parsed (a grading process has over a
    thousand lines; splitting every one cost the child 3 ms)."""
    tails = []
    at = maps.find(_INACCESSIBLE)
    while at != -1:
        line_start = maps.rfind(b"\n", 0, at) + 1
        line_end = maps.find(b"\n", at)
        line_end = len(maps) if line_end == -1 else line_end
        if line_start:
            line = maps[line_start:line_end].split()
            before = maps[maps.rfind(b"\n", 0, line_start - 1) + 1:line_start - 1].split()
            if len(line) == 5 and len(before) == 5 and before[1] == b"rw-p":
                start, end = (int(x, 16) for x in line[0].split(b"-"))
                heap, writable_end = (int(x, 16) for x in before[0].split(b"-"))
                if writable_end == start and heap % ARENA_HEAP == 0 and end - heap == ARENA_HEAP:
                    tails.append((start, end))
        at = maps.find(_INACCESSIBLE, line_end)
    return tails


def _address_space() -> int:
    """This process's virtual memory size in bytes (``VmSize``)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


def soft_limit(which: int, value: int) -> tuple[int, int]:
    """(soft, hard) for ``resource.setrlimit(which, ...)``: the soft limit at ``value``, never above the hard
    limit."""
    _, hard = resource.getrlimit(which)
    return (value if hard == resource.RLIM_INFINITY else min(value, hard)), hard
