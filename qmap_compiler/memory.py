"""How the compiler's memory goes back to the system (glibc's malloc; elsewhere these are no-ops).

The stages allocate and free large numpy temporaries. Two costs pull against each other:
* resident memory: glibc raises its mmap threshold after such frees, so later large blocks come from the heap and
  stay resident once freed; without a trim the resident set climbs from stage to stage although the live data
  does not. `release_free_memory` (malloc_trim) returns the free pages between stages.
* page faults: every page handed back and taken again costs a fault and a zeroed page. By default glibc hands
  back blocks of up to 32 MB as soon as they are freed (`munmap`, or a trim of the heap's top above 64 MB): a
  1M-face compile took about 360,000 faults, over a second of system time. `freed_memory_kept` keeps freed
  memory for the next allocation until a stage ends and trims (about 150,000 faults, a few % more peak memory).
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt parameters (malloc.h)
_HEAP_BLOCKS_UP_TO = 32 << 20  # the largest mmap threshold glibc accepts, and where its own adjustment stops
_TRIM_AFTER = 64 << 20  # glibc's trim threshold once its mmap threshold is 32 MB (twice it)
_KEEP_ALL = 1 << 30


class _Libc:
    def __init__(self) -> None:
        self.trim: Callable[[int], int] = lambda _pad: 0
        self.mallopt: Callable[[int, int], int] | None = None
        with contextlib.suppress(OSError, AttributeError, TypeError):
            library = ctypes.CDLL(None)  # the process's own symbols, libc's among them (find_library runs ldconfig)
            self.trim = library.malloc_trim
            self.mallopt = library.mallopt


_libc: _Libc | None = None
_kept_lock = threading.Lock()
_kept_depth = 0


def _library() -> _Libc:
    global _libc
    if _libc is None:
        _libc = _Libc()
    return _libc


def release_free_memory() -> None:
    """Return memory freed so far to the system (glibc); nothing happens where that is not available."""
    _library().trim(0)


_trim_between_stages: ContextVar[bool] = ContextVar("trim_between_stages", default=True)


def release_stage_memory() -> None:
    """release_free_memory between two stages of a compile, unless inside `stage_memory_kept()`."""
    if _trim_between_stages.get():
        release_free_memory()


@contextlib.contextmanager
def stage_memory_kept(when: bool = True) -> Iterator[None]:
    """Within the block (when `when`), what a stage frees stays for the next stages to reuse: for a small map,
    whose stages soon take that memory again, each page handed back would cost a fault when touched anew (100k
    faces: about 42,000 faults with the trims, 24,000 without, at the same peak). `freed_memory_kept` still hands
    everything back at its end."""
    token = _trim_between_stages.set(not when and _trim_between_stages.get())
    try:
        yield
    finally:
        _trim_between_stages.reset(token)


@contextlib.contextmanager
def freed_memory_kept() -> Iterator[None]:
    """Within the block, freed memory (blocks up to 32 MB) is kept for reuse until `release_free_memory` instead of
    being handed back at once. On leaving, the free memory is handed back and glibc is left with the thresholds it
    reaches by itself once it has freed a large block (32 MB mmap threshold, 64 MB trim threshold)."""
    global _kept_depth
    mallopt = _library().mallopt
    if mallopt is None:
        yield
        return
    with _kept_lock:
        _kept_depth += 1
        if _kept_depth == 1:
            mallopt(_M_MMAP_THRESHOLD, _HEAP_BLOCKS_UP_TO)
            mallopt(_M_TRIM_THRESHOLD, _KEEP_ALL)
    try:
        yield
    finally:
        with _kept_lock:
            _kept_depth -= 1
            if _kept_depth == 0:
                mallopt(_M_TRIM_THRESHOLD, _TRIM_AFTER)
                release_free_memory()
