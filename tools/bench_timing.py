"""Timing shared by the Blender benchmark scripts (no bpy import here)."""

from __future__ import annotations

import contextlib
import ctypes
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


def reset_peak_memory() -> None:
    """Start a new peak-memory measurement for this process (Linux: resets VmHWM to the current resident set)."""
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")


def peak_memory_mb() -> float:
    """This process's peak resident set since the last reset_peak_memory (or its start), in MB (10^6 bytes)."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024 / 1e6
    raise OSError("VmHWM not found in /proc/self/status")


def release_free_memory() -> None:
    """Hand memory freed earlier back to the system (glibc), so that a measurement re-using it still counts."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def resident_mb() -> float:
    """This process's resident set now, in MB."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024 / 1e6
    return 0.0
