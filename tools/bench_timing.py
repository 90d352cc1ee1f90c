"""Timing shared by the Blender benchmark scripts (no bpy import here)."""

from __future__ import annotations

import contextlib
import ctypes
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


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
    peak_mb: float | None  # peak resident set (MB) of the process while the case ran (see tools/bench.py)
    peer: str | None = None  # "OBJ", "Tools.exe", "floor"; None: no peer, and no ratio is printed
    peer_time: float | None = None  # None: the peer did not run (peer_note says why)
    peer_peak_mb: float | None = None
    floor: float | None = None  # seconds the bpy calls alone take to build/read the same data from ready arrays
    peer_note: str | None = None  # shown in place of the peer's time when it did not run: "not run (no --tools-exe)"
    run_ratios: list[float | None] = field(default_factory=list)  # the ratio of each whole run (with --runs)

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


# Run by whole_process in a small Python of its own: it starts the command, waits for it and writes its figures.
_LAUNCHER = """
import os, sys, time
started = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
elapsed = time.perf_counter() - started
with open(sys.argv[1], "w") as result:
    result.write(f"{elapsed!r} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


def whole_process(command: Sequence[str], log: Path, cwd: Path | None = None,
                  env: Mapping[str, str] | None = None) -> tuple[float, float, int]:  # fmt: skip
    """Run `command` as a process of its own: (wall seconds from its spawn to its exit, its peak resident set in
    MB, its exit code). Output goes to `log`, not to pipes (Wine's server and devices inherit pipes and would keep
    them open).

    The peak is os.wait4's rusage for that one pid (its own maximum resident set and that of the descendants it
    waited for), so one run's never carries over into the next's as RUSAGE_CHILDREN's would. It is started and
    waited for by a small launcher (Python without site, about 9 MB), not by this process: Linux counts the memory
    of the process that spawned it, up to the exec, into a child's maximum resident set, and this one may be
    Blender's. The launcher's start is outside the time."""
    with tempfile.TemporaryDirectory(prefix="iogf-spawn-") as scratch:
        figures = Path(scratch) / "figures"
        with open(log, "wb") as output:
            subprocess.run([sys.executable, "-S", "-c", _LAUNCHER, str(figures), *command], stdout=output,
                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=cwd,
                           env=None if env is None else dict(env), check=False)  # fmt: skip
        if not figures.exists():
            raise RuntimeError(f"{command[0]} could not be started; see {log}")
        elapsed, peak_kib, code = figures.read_text().split()
    return float(elapsed), int(peak_kib) * 1024 / 1e6, int(code)  # ru_maxrss: KiB on Linux
