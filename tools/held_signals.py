"""SIGINT and SIGTERM held while Blender starts, in a module of its own so that a command can hold them from its
first lines, before it imports anything heavier (tools/iogf.py)."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


@contextlib.contextmanager
def signals_held() -> Iterator[list[int]]:
    """SIGINT and SIGTERM noted, not acted on, while Blender starts: an interrupt raised inside `import bpy` or an
    add-on's registration leaves a half-started Blender (tracebacks, sometimes a crash, an exit status of 0) and
    its temporary folders behind. The caller acts on the list once the start is over. A SIGINT ignored (a
    background job of a script) stays ignored."""
    caught: list[int] = []
    previous = {}
    for number in (signal.SIGINT, signal.SIGTERM):
        if number == signal.SIGINT and signal.getsignal(number) is not signal.default_int_handler:
            continue
        previous[number] = signal.signal(number, lambda received, _frame: caught.append(received))
    try:
        yield caught
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
