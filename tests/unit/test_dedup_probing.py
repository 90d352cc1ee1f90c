"""The hash table's first round of probing (every slot free, every row pending) taken without gathering through
the pending rows: each hash's first occurrence, through several rounds where slots are crowded, and a give-up
where one slot holds more different hashes than the rounds can pass."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from formats import dedup


def _first_occurrences(hashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]:
    _, first, group = np.unique(hashes, return_index=True, return_inverse=True)
    found: npt.NDArray[np.int64] = first[group.ravel()]
    return found


@pytest.mark.parametrize("count", [1, 2, 7, 1000, 50_000])
@pytest.mark.parametrize("kind", ["distinct", "repeated", "one value", "one slot", "crowded slots"])
def test_first_round_of_its_own_finds_what_the_rounds_alone_find(count: int, kind: str) -> None:
    rng = np.random.default_rng(count)
    values = rng.integers(0, 2**63, count, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    if kind == "repeated":
        values = values[rng.integers(0, max(count // 5, 1), count)]
    elif kind == "one value":
        values[:] = values[0]
    elif kind == "one slot":  # every hash in one slot, a few different ones: probing gives up past its rounds
        values = (values % np.uint64(1 << 20)) if count > dedup._PROBE_ROUNDS else values % np.uint64(3)
    elif kind == "crowded slots":  # high bits shared by many different hashes: several rounds each
        values = (values >> np.uint64(50)) << np.uint64(50) | (values % np.uint64(7))
    found = dedup._first_equal_hashes(values.copy())
    if kind == "one slot" and len(np.unique(values)) > dedup._PROBE_ROUNDS:
        assert found is None
        return
    assert found is not None
    np.testing.assert_array_equal(found, _first_occurrences(values))


@pytest.mark.parametrize("grouping", ["as found", "given up", "every hash one"])
def test_lines_hashed_for_a_large_text_are_grouped_by_their_hashes_alone(
    monkeypatch: pytest.MonkeyPatch, grouping: str
) -> None:
    rng = np.random.default_rng(9)
    pool = [f"{i % 5} {rng.integers(0, 99)}.250000 {rng.integers(0, 9)}.000000".encode() for i in range(400)]
    lines = [pool[i] for i in rng.integers(0, len(pool), 6000)]
    buffer = np.frombuffer(b"\n".join(lines) + b"\n", np.uint8)
    ends = np.flatnonzero(buffer == ord("\n"))
    starts = np.concatenate([[0], ends[:-1] + 1])
    monkeypatch.setattr(dedup, "_WHOLE_KEYS_BYTES", 0)  # (the hashed path, as for a file of a million triangles)
    if grouping == "given up":  # too many rounds: the rows' own grouping decides
        monkeypatch.setattr(dedup, "_first_equal_hashes", lambda hashes: None)
    elif grouping == "every hash one":  # a collision everywhere: the word check finds it
        monkeypatch.setattr(dedup, "_first_equal_hashes", lambda hashes: np.zeros(hashes.size, np.int64))
        assert dedup.first_equal_lines(buffer, starts, ends) is None
        return
    found = dedup.first_equal_lines(buffer, starts, ends)
    assert found is not None and found.tolist() == [lines.index(line) for line in lines]


@pytest.mark.parametrize("spread", [3, 1000, 2**40])
def test_one_column_keys_grouped_by_their_mix_alone_as_by_checked_hashes(spread: int) -> None:
    rng = np.random.default_rng(spread)
    keys = rng.integers(-spread, spread, (40_000, 1), dtype=np.int64)
    keys[::7] = np.iinfo(np.int64).min  # (the extremes too: the mix takes the bits as they are)
    keys[1::7] = np.iinfo(np.int64).max
    found = dedup.first_equal_rows(keys)
    checked = dedup._probe_equal_rows(keys)  # (hashed as any table, then every row compared with its first)
    assert checked is not None
    np.testing.assert_array_equal(found, checked)
    np.testing.assert_array_equal(found, _first_occurrences(keys[:, 0].view(np.uint64)))
