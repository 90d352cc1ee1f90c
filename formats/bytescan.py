"""Scans of a text's bytes that keep no temporary as large as the text: a mask of every byte of a 25 MB file costs
as much in fresh memory pages as the comparison itself, and that cost varies with the machine's memory state."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

_SCAN_BYTES = 1 << 20  # bytes compared at a time


def positions_of(text: npt.NDArray[np.uint8], byte: int) -> npt.NDArray[np.int64]:
    """Offsets of every `byte` in the text, in order."""
    parts = [np.flatnonzero(text[begin : begin + _SCAN_BYTES] == byte) + begin
             for begin in range(0, text.shape[0], _SCAN_BYTES)]  # fmt: skip
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)
