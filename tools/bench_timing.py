"""Timing shared by the Blender benchmark scripts (no bpy import here)."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(repeat: int, setup: Callable[[], object], work: Callable[[], object]) -> float:
    """The shortest of `repeat` timings of `work`, each after an untimed `setup`."""
    times = []
    for _ in range(repeat):
        setup()
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)
