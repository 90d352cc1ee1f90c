"""numpy's OpenBLAS kept to one thread in a process that is already running (a worker gets it by its environment,
batch.pool.ONE_THREAD, read when numpy loads). The conversions' matrix products are small: threads gain nothing,
and after each product OpenBLAS's idle threads spin for a while, taking the core a worker beside them needs."""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import sys

# The setter's name in the OpenBLAS builds numpy wheels carry (numpy 1.x: 64-bit ints, symbols suffixed; numpy 2.x:
# scipy-openblas, prefixed too).
SETTERS = ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
           "openblas_set_num_threads")  # fmt: skip


def blas_to_one_thread() -> int:
    """Every loaded OpenBLAS set to one thread; how many were found (0 where numpy uses another BLAS)."""
    found = 0
    for path in _openblas_libraries():
        with contextlib.suppress(OSError):
            library = ctypes.CDLL(path)  # (already loaded: the same library, not a second copy)
            for name in SETTERS:
                setter = getattr(library, name, None)
                if setter is not None:
                    setter(1)
                    found += 1
                    break
    return found


def _openblas_libraries() -> list[str]:
    """The OpenBLAS libraries this process has loaded (Linux: from its memory map), else those numpy's wheel
    carries beside it (macOS, Windows)."""
    try:
        with open("/proc/self/maps") as maps:
            loaded = {line.split(maxsplit=5)[-1].strip() for line in maps if "openblas" in line.lower()}
        return sorted(path for path in loaded if os.path.isfile(path))
    except OSError:
        pass
    numpy_file = getattr(sys.modules.get("numpy"), "__file__", None)
    if not isinstance(numpy_file, str):
        return []
    here = os.path.dirname(numpy_file)
    patterns = [os.path.join(here + ".libs", "*openblas*"), os.path.join(here, ".dylibs", "*openblas*")]
    return sorted(path for pattern in patterns for path in glob.glob(pattern))
