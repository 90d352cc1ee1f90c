"""A guard against runaway work in tests of hostile input: the block is stopped with an error once it has run far
longer than any linear-time reader needs (seconds where milliseconds do), so a quadratic or exponential path fails
the test instead of hanging the run. Not a benchmark: the limit is a hang guard, never a measured target."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

HANG_SECONDS = 10.0


class RanAway(Exception):
    """The guarded work ran past its limit."""


@contextlib.contextmanager
def no_runaway(seconds: float = HANG_SECONDS) -> Iterator[None]:
    def stop(_signal: int, _frame: object) -> None:
        raise RanAway(f"still running after {seconds:g} s: worse than linear in its input")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
