"""Shortcuts of the IQE writer that must not change a byte: a column of repeated values formatted once per distinct
value, and faces of one size written straight from their corners."""

from __future__ import annotations

import numpy as np
import pytest

from formats.iqe import numtext, repeats, writer
from formats.iqe.numtext import compact, table_lines


def _column_text(fields: numtext.Fields) -> bytes:
    return compact(table_lines(b"v", [fields]))


def _repeating_column(rng: np.random.Generator, count: int) -> np.ndarray:
    """Few distinct values (negative zero, values written with %.9g, the widest whole parts among them), in runs
    and scattered, and a few unique ones."""
    pool = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 0.1, 1e-30, 3.4e38, 999999.0, -123456.78, 1e7, 2.0**-20, 0.333],
                    np.float32)  # fmt: skip
    values = rng.choice(pool[: int(rng.integers(1, len(pool) + 1))], count)
    unique = rng.integers(0, count, count // 50)
    values[unique] = rng.random(len(unique)).astype(np.float32)
    return values


@pytest.mark.parametrize("seed", range(12))
def test_repeated_values_are_written_as_each_alone(seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = _repeating_column(rng, int(rng.integers(numtext._REPEATS_FROM, 20_000)))
    assert repeats.repeats_pay(values.view(np.uint32)[:, None], numtext._MOST_KEPT)  # (the shortcut is taken)
    fields = numtext.float_fields(values)
    alone = numtext._distinct_float_fields(values)
    assert fields.lengths.tolist() == alone.lengths.tolist()
    assert _column_text(fields) == _column_text(alone)
    assert fields.chars.shape[1] == alone.chars.shape[1]


def test_distinct_values_are_not_looked_up() -> None:
    values = np.random.default_rng(3).random(5000).astype(np.float32)
    assert not repeats.repeats_pay(values.view(np.uint32)[:, None], numtext._MOST_KEPT)
    assert _column_text(numtext.float_fields(values)) == _column_text(numtext._distinct_float_fields(values))


def _faces_one_by_one(corners: np.ndarray, sizes: np.ndarray, flags: np.ndarray | None) -> tuple[bytes, list[int]]:
    text, ends = b"", []
    start = 0
    for size in sizes.tolist():
        text += b"fm " + b" ".join(b"%d" % value for value in corners[start : start + size].tolist()) + b"\n"
        if flags is not None:
            text += b"fs " + b" ".join(b"%d" % value for value in flags[start : start + size].tolist()) + b"\n"
        ends.append(len(text))
        start += size
    return text, ends


@pytest.mark.parametrize("seed", range(12))
def test_faces_of_one_size_are_written_as_one_by_one(seed: int) -> None:
    """(and faces of mixed sizes, by the general table)"""
    rng = np.random.default_rng(seed)
    faces = int(rng.integers(1, 6000))
    sizes = np.full(faces, int(rng.integers(3, 7)), np.int64)
    if seed % 3 == 2:
        sizes = rng.integers(3, 7, faces).astype(np.int64)
    corners = rng.integers(0, int(rng.choice([10, 600, 10**6])), int(sizes.sum())).astype(np.int64)
    flags = rng.integers(0, 2, len(corners)).astype(np.int64) if seed % 2 else None
    text, ends = writer._face_text(corners, sizes, flags)
    assert (text, ends.tolist()) == _faces_one_by_one(corners, sizes, flags)


@pytest.mark.parametrize("mixed", [False, True])
def test_a_grid_s_faces_are_formatted_as_one_table_and_written_as_one_by_one(
    mixed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    """(A grid's corners span all its vertices in each corner column, but few for the whole table: its numbers
    are formatted once per value and looked up, and the lines are those written one by one.)"""
    side = 80
    corner = (np.arange(side)[:, None] * (side + 1) + np.arange(side)[None, :]).ravel()
    quads = np.stack([corner, corner + 1, corner + side + 2, corner + side + 1], axis=1)
    faces = [quads[:, [0, 1, 2]], quads[:, [0, 2, 3]], *([quads[:100]] if mixed else [])]
    sizes = np.concatenate([np.full(len(part), part.shape[1], np.int64) for part in faces])
    corners = np.concatenate([part.ravel() for part in faces]).astype(np.int64)
    flags = np.random.default_rng(1).integers(0, 2, len(corners)).astype(np.int64)
    looked_up: list[int] = []  # (the highest number of each table looked up)
    lookup = numtext._looked_up_int_fields
    monkeypatch.setattr(numtext, "_looked_up_int_fields", lambda *args: looked_up.append(args[2]) or lookup(*args))
    for face_flags in (None, flags):
        text, ends = writer._face_text(corners, sizes, face_flags)
        assert (text, ends.tolist()) == _faces_one_by_one(corners, sizes, face_flags)
    assert int(corners.max()) in looked_up  # (the corners, not only the flags)
