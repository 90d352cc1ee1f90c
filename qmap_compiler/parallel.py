"""Independent pieces of the compile run side by side on the machine's cores.

numpy lets go of the interpreter lock inside its loops (gathers, sorts, arithmetic on large arrays), so plain
threads run the heavy array work of two pieces at once. Each piece's result is the same as when run alone; only
the wall time changes. numpy's floating-point error settings belong to each thread: every piece runs under those of
the caller (the compiler ignores overflow and NaN warnings, as the original computes through them).
"""

from __future__ import annotations

import collections
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, TypeVar

import numpy as np

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

Item = TypeVar("Item")
Result = TypeVar("Result")
_MOST_WORKERS = 4  # beyond this the pieces are too few to share out


_one_at_a_time: ContextVar[bool] = ContextVar("one_at_a_time", default=False)


def worker_count() -> int:
    """Cores this process may run on (at most _MOST_WORKERS), or 1 inside `one_at_a_time()`."""
    return 1 if _one_at_a_time.get() else max(1, min(_MOST_WORKERS, cores()))


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@contextmanager
def one_at_a_time(when: bool = True) -> Iterator[None]:
    """Pieces run in turn in this block (when `when`): for small work, where threads would cost more memory
    (each keeps a malloc arena of freed memory) than they save time."""
    token = _one_at_a_time.set(when or _one_at_a_time.get())
    try:
        yield
    finally:
        _one_at_a_time.reset(token)


def thread_pool(workers: int) -> ThreadPoolExecutor:
    """A pool of `workers` threads. concurrent.futures (and the logging it imports) is loaded only here: a small map
    is compiled without threads, and every run's start-up is shorter without it."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(workers)


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

    with thread_pool(workers) as pool:
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


def made_ahead(makers: Iterable[Callable[[], Result]], workers: int = 1) -> Iterator[Result]:
    """The makers' results in order, the next ones made on `workers` threads (at most worker_count()) while this
    one is being used: a table made block by block while the blocks before it are written. At most `workers`
    results wait made. One maker, or one core: made in turn."""
    makers = list(makers)
    workers = min(workers, worker_count(), len(makers))
    if workers < 1 or worker_count() <= 1 or len(makers) <= 1:
        yield from (make() for make in makers)
        return
    settings = np.geterr()

    def run(make: Callable[[], Result]) -> Result:
        with np.errstate(**settings):
            return make()

    with thread_pool(workers) as pool:
        pending: collections.deque[Future[Result]] = collections.deque()
        try:
            for make in makers:
                pending.append(pool.submit(run, make))
                if len(pending) > workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:  # (an error, or the caller stopped early: what has not started is dropped)
                future.cancel()


def made_on_cores(makers: Sequence[Callable[[], Result]], /) -> Iterator[Result]:
    """made_ahead with a worker per core: the next pieces made side by side while this one is used."""
    return made_ahead(makers, worker_count())
