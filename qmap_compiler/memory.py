"""Handing freed memory back to the system between the compiler's stages.

The stages allocate and free large numpy temporaries. glibc's malloc raises its mmap threshold after such frees,
so later large blocks come from the heap and stay resident once freed: without a trim the resident set climbs
from stage to stage although the live data does not. `malloc_trim` returns the free pages; elsewhere it is a
no-op.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
from collections.abc import Callable

_trim: Callable[[int], int] | None = None


def _find_trim() -> Callable[[int], int] | None:
    with contextlib.suppress(OSError, AttributeError, TypeError):
        name = ctypes.util.find_library("c")
        if name:
            function: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
            return function
    return None


def release_free_memory() -> None:
    """Return memory freed so far to the system (glibc); nothing happens where that is not available."""
    global _trim
    if _trim is None:
        _trim = _find_trim() or (lambda _pad: 0)
    _trim(0)
