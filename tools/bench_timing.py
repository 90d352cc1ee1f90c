"""Timing shared by the Blender benchmark scripts (no bpy import here)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


def best_of(repeat: int, setup: Callable[[], object], work: Callable[[], object]) -> float:
    """The shortest of `repeat` timings of `work`, each after an untimed `setup`."""
    times = []
    for _ in range(repeat):
        setup()
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


@dataclass
class BenchRow:
    """One line of the benchmark table (tools/bench.py prints them all): our time and peak memory for one case,
    and the peer's (Blender's OBJ importer/exporter, or Tools.exe) measured in the same run, when it ran."""

    format: str  # "SMD", "QMAP compile", ...
    case: str  # "import, 100k triangles, every corner distinct"
    ours: float  # seconds
    peak_mb: float | None  # our peak memory for this case (resident set, MB)
    peer: str | None = None  # "OBJ", "Tools.exe"; None: no peer ran, and no ratio is printed
    peer_time: float | None = None
    peer_peak_mb: float | None = None
    floor: float | None = None  # seconds the bpy calls alone take to build/read the same data from ready arrays

    @property
    def ratio(self) -> float | None:
        """Our time / the peer's time (lower is better)."""
        return self.ours / self.peer_time if self.peer_time else None
