"""Stopping a compile (or a command line built on it) from outside, cleanly."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

_signalled = False  # (a signal came, and no caller has raised it again since: see raise_if_interrupted)


@contextmanager
def stopped_by_sigterm() -> Iterator[None]:
    """A SIGTERM (a CI timeout, a cancelled job) stops the work like Ctrl-C does, so that the files being written
    are removed rather than left as temporaries; outside the main thread the signals keep their handlers. Both are
    remembered as well as raised: see raise_if_interrupted."""
    global _signalled

    def interrupt(_signal: int, _frame: object) -> None:
        global _signalled
        _signalled = True
        raise KeyboardInterrupt

    try:
        previous_term = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread
        yield
        return
    previous_int = signal.getsignal(signal.SIGINT)
    if previous_int is signal.default_int_handler:  # (an ignored SIGINT, as in a background job, stays ignored)
        signal.signal(signal.SIGINT, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous_term)
        if previous_int is signal.default_int_handler:
            signal.signal(signal.SIGINT, previous_int)
        _signalled = False


def raise_if_interrupted() -> None:
    """KeyboardInterrupt again if a signal came and the one raised for it was swallowed: Blender prints and drops
    an exception raised inside its own Python callbacks (the handlers a file load runs), so the work would go on."""
    global _signalled
    if _signalled:
        _signalled = False
        raise KeyboardInterrupt
