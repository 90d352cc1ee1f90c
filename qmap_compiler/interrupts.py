"""Stopping a compile (or a command line built on it) from outside, cleanly."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def stopped_by_sigterm() -> Iterator[None]:
    """A SIGTERM (a CI timeout, a cancelled job) stops the work like Ctrl-C does, so that the files being written
    are removed rather than left as temporaries; outside the main thread the signal keeps its handler."""

    def interrupt(_signal: int, _frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
