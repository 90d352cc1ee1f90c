"""De-duplication of float rows by exact bit pattern, fast enough for per-corner mesh data."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]


def unique_rows(rows: FloatArray) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """Distinct rows by exact bits, in first-seen order, and the index of each input row among them.

    Bit patterns, not values, are compared: -0.0 and 0.0 stay distinct and NaNs de-duplicate, because the
    written bytes are what count. Rows are reduced to one 64-bit key each (exact for two columns, a hash
    checked for collisions otherwise), which sorts several times faster than comparing whole rows.
    """
    values = np.ascontiguousarray(rows, np.float32)
    if len(values) == 0:
        return values, np.zeros(0, np.int64)
    bits = values.view(np.uint32).astype(np.uint64)
    if values.shape[1] == 2:
        keys = (bits[:, 0] << np.uint64(32)) | bits[:, 1]
    else:
        keys = np.zeros(len(values), np.uint64)
        for column in range(values.shape[1]):
            keys = (keys ^ bits[:, column]) * np.uint64(0x9E3779B97F4A7C15)
            keys ^= keys >> np.uint64(29)
    first_seen, inverse = _unique_keys(keys)
    if values.shape[1] != 2 and not np.array_equal(bits[first_seen[inverse]], bits):
        return _unique_rows_by_bytes(values)  # a hash collision: compare whole rows instead
    return _first_seen_order(values, first_seen, inverse)


def _unique_keys(keys: npt.NDArray[np.uint64]) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """np.unique(return_index, return_inverse) with an unstable sort, which is several times faster."""
    permutation = np.argsort(keys)
    ordered = keys[permutation]
    starts_group = np.empty(len(keys), bool)
    starts_group[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts_group[1:])
    starts = np.flatnonzero(starts_group)
    first_seen = np.minimum.reduceat(permutation, starts)
    inverse = np.empty(len(keys), np.intp)
    inverse[permutation] = np.cumsum(starts_group) - 1
    return first_seen, inverse


def _unique_rows_by_bytes(values: FloatArray) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    keys = values.view(np.dtype((np.void, values.dtype.itemsize * values.shape[1]))).ravel()
    _, first_seen, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return _first_seen_order(values, first_seen, inverse.ravel())


def _first_seen_order(
    values: FloatArray, first_seen: npt.NDArray[np.intp], inverse: npt.NDArray[np.intp]
) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    order = np.argsort(first_seen, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return values[first_seen[order]], rank[inverse].astype(np.int64)
