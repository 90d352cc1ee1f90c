"""The array type used in annotations throughout the package, and array helpers quicker than numpy's own."""

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


def nan_in_rows(*tables: Array) -> Array:
    """Whether each row (everything but the first axis) of any of the tables holds a NaN. A column at a time:
    numpy's `.any(axis=1)` over a million short rows takes ~10 ms, a column under 1 ms."""
    result = np.zeros(len(tables[0]), dtype=bool)
    for table in tables:
        columns = table.reshape(len(table), int(np.prod(table.shape[1:])))  # (-1 fails for no rows)
        for column in range(columns.shape[1]):
            result |= np.isnan(columns[:, column])
    return result
