"""How a codec runs independent pieces of its work.

A codec that splits its work into independent pieces takes a `PieceMap`. By default the pieces run one after the
other; the Blender layer hands in one that runs them on several cores (numpy lets go of the interpreter lock in its
loops, so threads overlap the heavy array work). The results are the same either way, in the pieces' order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


class PieceMap(Protocol):
    def __call__(self, function: Callable[[Item], Result], items: Sequence[Item], /) -> list[Result]: ...


def sequential(function: Callable[[Item], Result], items: Sequence[Item], /) -> list[Result]:
    """The pieces one after the other."""
    return [function(item) for item in items]


class PieceStream(Protocol):
    def __call__(self, makers: Sequence[Callable[[], Result]], /) -> Iterator[Result]: ...


def made_in_turn(makers: Sequence[Callable[[], Result]], /) -> Iterator[Result]:
    """The pieces' results in order, each made when taken."""
    return (make() for make in makers)
