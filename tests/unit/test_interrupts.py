"""A signal that stops the work is raised again where a caller swallowed it (Blender drops exceptions raised in its
own Python callbacks, such as those a file load runs)."""

from __future__ import annotations

import contextlib
import os
import signal

import pytest

from qmap_compiler.interrupts import raise_if_interrupted, stopped_by_sigterm


def swallowing(signal_number: int) -> None:
    """What Blender does with an exception raised inside a load handler: printed and dropped."""
    with contextlib.suppress(KeyboardInterrupt):
        os.kill(os.getpid(), signal_number)  # (its handler runs as the call returns)


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGINT])
def test_a_swallowed_interrupt_is_raised_again_at_the_next_check(signal_number: int) -> None:
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler and signal_number == signal.SIGINT:
        pytest.skip("SIGINT is ignored in this process (a background job): the command leaves it so")
    with stopped_by_sigterm():
        swallowing(signal_number)
        with pytest.raises(KeyboardInterrupt):
            raise_if_interrupted()
        raise_if_interrupted()  # (raised once: the next check goes on)


def test_nothing_is_raised_without_a_signal_nor_after_the_command() -> None:
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with stopped_by_sigterm():
        raise_if_interrupted()
    with stopped_by_sigterm():
        swallowing(signal.SIGTERM)
    raise_if_interrupted()  # (the command's end forgets it)
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
