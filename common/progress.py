"""Progress of long imports and exports: Blender's progress cursor (`window_manager.progress_*`, which shows
nothing in background mode), and for listeners such as the command line on a terminal, each step with what it
is working on (a file being read, a stage of an export)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

import bpy


@dataclass(frozen=True)
class Step:
    """One step of a long operation, `done` of `total`, and what it worked on (`kind` "stage"); or (`kind` "file")
    the `done`-th of `total` files, `label`, about to be read."""

    done: int
    total: int
    kind: str
    label: str


Listener = Callable[[Step], None]
Item = TypeVar("Item")
_LISTENERS: list[Listener] = []


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """`listener` gets every step of the operations run meanwhile."""
    _LISTENERS.append(listener)
    try:
        yield
    finally:
        _LISTENERS.remove(listener)


class Progress:
    """Steps of one operation; `step` moves Blender's progress cursor and tells the listeners."""

    def __init__(self, context: bpy.types.Context, total: int, files: int = 0) -> None:
        self.window_manager = context.window_manager
        self.total = max(total, 1)
        self.done = 0
        self.files, self.files_read = files, 0

    def step(self, label: str = "", kind: str = "stage") -> None:
        """One more step done (`label`: what the next one works on)."""
        self.done = min(self.done + 1, self.total)
        self.window_manager.progress_update(self.done)
        for listener in list(_LISTENERS):
            listener(Step(self.done, self.total, kind, label))

    def each(self, items: Iterable[Item]) -> Iterator[Item]:
        """The items, one step counted after each (labelled with its name: objects, actions)."""
        for item in items:
            yield item
            self.step(str(getattr(item, "name", "")))

    def file(self, path: str) -> None:
        """The next of the operation's files is about to be read."""
        self.files_read += 1
        for listener in list(_LISTENERS):
            listener(Step(self.files_read, max(self.files, self.files_read), "file", path))


@contextmanager
def progress(context: bpy.types.Context, total: int, files: int = 0) -> Iterator[Progress]:
    """Blender's progress cursor over `total` steps (reading `files` files among them), always ended."""
    tracker = Progress(context, total, files)
    tracker.window_manager.progress_begin(0, tracker.total)
    try:
        yield tracker
    finally:
        tracker.window_manager.progress_end()
