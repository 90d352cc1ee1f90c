"""Exact-bit de-duplication of float rows, the fast path against the plain whole-row comparison."""

from __future__ import annotations

import numpy as np
import pytest

from formats import dedup


@pytest.mark.parametrize("columns", [2, 3])
def test_fast_keys_agree_with_whole_row_comparison(columns: int) -> None:
    rows = np.random.default_rng(7).integers(0, 30, (20_000, columns)).astype(np.float32)
    rows[3] = -0.0
    rows[4] = 0.0
    rows[5:7] = np.nan
    fast = dedup.unique_rows(rows)
    plain = dedup._unique_rows_by_bytes(np.ascontiguousarray(rows))
    np.testing.assert_array_equal(fast[0], plain[0])
    np.testing.assert_array_equal(fast[1], plain[1])
    assert np.array_equal(fast[0][fast[1]], rows, equal_nan=True)


def test_first_seen_order_and_signed_zero() -> None:
    rows = np.array([[1, 0, 0], [-0.0, 0, 0], [0, 0, 0], [1, 0, 0]], np.float32)
    values, index = dedup.unique_rows(rows)
    np.testing.assert_array_equal(index, [0, 1, 2, 0])
    assert np.signbit(values[1, 0]) and not np.signbit(values[2, 0])


def test_a_hash_collision_falls_back_to_whole_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = np.array([[1, 2, 3], [4, 5, 6], [1, 2, 3]], np.float32)
    monkeypatch.setattr(
        dedup, "_unique_keys", lambda keys: (np.array([0]), np.zeros(len(keys), np.intp))  # everything collides
    )
    values, index = dedup.unique_rows(rows)
    np.testing.assert_array_equal(values, [[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(index, [0, 1, 0])


def test_empty_input() -> None:
    values, index = dedup.unique_rows(np.zeros((0, 3), np.float32))
    assert values.shape == (0, 3) and index.shape == (0,)
