"""Independent pieces of the compile run side by side on the machine's cores.

numpy lets go of the interpreter lock inside its loops (gathers, sorts, arithmetic on large arrays), so plain
threads run the heavy array work of two pieces at once. Each piece's result is the same as when run alone; only
the wall time changes. numpy's floating-point error settings belong to each thread: every piece runs under those of
the caller (the compiler ignores overflow and NaN warnings, as the original computes through them).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np

Item = TypeVar("Item")
Result = TypeVar("Result")
_MOST_WORKERS = 4  # beyond this the pieces are too few to share out


def worker_count() -> int:
    """Cores this process may run on (at most _MOST_WORKERS)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(_MOST_WORKERS, cores))


def ordered_map(function: Callable[[Item], Result], items: Iterable[Item]) -> list[Result]:
    """[function(item) for item in items], run on up to worker_count() threads; an error in any is raised."""
    pieces = list(items)
    workers = min(worker_count(), len(pieces))
    if workers <= 1:
        return [function(item) for item in pieces]
    settings = np.geterr()

    def run(item: Item) -> Result:
        with np.errstate(**settings):
            return function(item)

    with ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(run, item) for item in pieces]
        try:
            return [future.result() for future in futures]
        except BaseException:
            for future in futures:  # (pieces not started are dropped, not waited for)
                future.cancel()
            raise


def run_together(*calls: Callable[[], Result]) -> list[Result]:
    """The results of calls made side by side."""
    return ordered_map(lambda call: call(), calls)
