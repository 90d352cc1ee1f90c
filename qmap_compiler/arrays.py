"""The array type used in annotations throughout the package."""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np

Array: TypeAlias = np.ndarray[Any, np.dtype[Any]]


def stable_order(keys: Array) -> Array:
    """np.argsort(keys, kind="stable") of non-negative integer keys, by radix passes over 16-bit digits (numpy
    sorts 16-bit integers stably by counting): several times quicker on a million keys, and the same order, the
    order of a stable sort being unique."""
    values = np.asarray(keys)
    if values.size < 2 or values.dtype.kind not in "iu" or int(values.min()) < 0:
        return np.argsort(values, kind="stable")
    largest = int(values.max())
    if largest >= 1 << 32:
        return np.argsort(values, kind="stable")
    wide = values.astype(np.int64, copy=False)
    order = np.argsort((wide & 0xFFFF).astype(np.uint16), kind="stable")
    if largest >= 1 << 16:  # then by the high digit, keeping the order of equal high digits
        order = order[np.argsort((wide[order] >> 16).astype(np.uint16), kind="stable")]
    result: Array = order
    return result
