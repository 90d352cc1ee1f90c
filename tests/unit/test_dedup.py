"""Exact-bit de-duplication of float rows, the fast path against the plain whole-row comparison."""

from __future__ import annotations

import numpy as np
import pytest

from formats import dedup


@pytest.mark.parametrize("by_sorting", [False, True], ids=["hash table", "sorted keys"])
@pytest.mark.parametrize("columns", [1, 2, 3, 4, 5, 21])  # (odd counts: a zero column pairs the last)
def test_fast_keys_agree_with_whole_row_comparison(monkeypatch: pytest.MonkeyPatch, columns: int,
                                                   by_sorting: bool) -> None:  # fmt: skip
    if by_sorting:  # as when the hash table gives up
        monkeypatch.setattr(dedup, "_probe_equal_rows", lambda key, hashes=None: None)
    rows = np.random.default_rng(7).integers(0, 30, (20_000, columns)).astype(np.float32)
    rows[3] = -0.0
    rows[4] = 0.0
    rows[5:7] = np.nan
    rows.view(np.uint32)[7:9, 0] = 0x7FC00001  # a NaN of another payload: a different row
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
    monkeypatch.setattr(dedup, "_probe_equal_rows", lambda key, hashes=None: None)  # the sorted keys, then whole rows
    monkeypatch.setattr(
        dedup, "_unique_keys", lambda keys: (np.array([0]), np.zeros(len(keys), np.intp))  # everything collides
    )
    values, index = dedup.unique_rows(rows)
    np.testing.assert_array_equal(values, [[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(index, [0, 1, 0])


def test_empty_input() -> None:
    values, index = dedup.unique_rows(np.zeros((0, 3), np.float32))
    assert values.shape == (0, 3) and index.shape == (0,)


def plain_first_equal(rows: np.ndarray) -> list[int]:
    seen: dict[bytes, int] = {}
    return [seen.setdefault(row.tobytes(), index) for index, row in enumerate(rows)]


def test_first_equal_rows_by_hashing_and_by_sorting(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = np.random.default_rng(3).integers(-3, 3, (5_000, 4)).astype(np.int64)
    expected = plain_first_equal(rows)
    assert dedup.first_equal_rows(rows).tolist() == expected  # (by sorting their hashes)
    monkeypatch.setattr(dedup, "_HASHES_SORTED_UP_TO", 0)  # through the hash table
    assert dedup.first_equal_rows(rows).tolist() == expected
    monkeypatch.setattr(dedup, "_PROBE_ROUNDS", 0)  # as if hashing never settled: grouped by sorting
    assert dedup.first_equal_rows(rows).tolist() == expected
    assert dedup.first_equal_rows(np.zeros((0, 2), np.int64)).tolist() == []
    few = rows[:300]  # (up to _SORTED_BELOW rows: by sorting, the same answer)
    monkeypatch.undo()
    assert dedup.first_equal_rows(few).tolist() == plain_first_equal(few)


@pytest.mark.parametrize("count", [1, 2, 399, 400, 2048, 2049, 16384, 16385])
@pytest.mark.parametrize("hashes_given", [False, True])
def test_first_equal_rows_alike_whichever_way_rows_are_grouped(count: int, hashes_given: bool) -> None:
    """Rows sorted whole (a few), grouped by their sorted hashes (up to _HASHES_SORTED_UP_TO rows, or any number
    of rows whose hashes are given) or through the hash table (more): each row's first equal row, as a dict of
    their bytes finds it."""
    rows = np.random.default_rng(count).integers(-3, 3, (count, 3)).astype(np.int64)
    rows[count // 2 :] += count % 2  # (rows repeated nearby and far apart)
    hashes = dedup.table_hashes(rows) if hashes_given else None
    assert dedup.first_equal_rows(rows, hashes).tolist() == plain_first_equal(rows)


@pytest.mark.parametrize("count", [2, 3000])
def test_sorted_hashes_shared_by_different_rows_fall_back_to_sorting_the_rows(count: int) -> None:
    rows = np.random.default_rng(count).integers(0, 4, (count, 2)).astype(np.int64)
    colliding = np.zeros(count, np.uint64)  # every row one hash: the whole-row check must notice
    assert dedup._sorted_equal_rows(rows, colliding) is None
    assert dedup.first_equal_rows(rows, colliding).tolist() == plain_first_equal(rows)


def test_first_equal_lines_compares_whole_lines_wherever_they_sit() -> None:
    lines = [b"0 1.000000 2.000000", b"0 1.000000 2.000001", b"0 1.000000 2.000000", b"12345678",
             b"0 1.000000 2.000000 3", b"12345678", b"0 1.000000 2.000001"]  # fmt: skip
    text = b"\n".join(lines)
    starts = np.cumsum([0] + [len(line) + 1 for line in lines[:-1]])
    ends = starts + [len(line) for line in lines]
    first = dedup.first_equal_lines(np.frombuffer(text, np.uint8), starts, ends)
    assert first is not None and first.tolist() == [0, 1, 0, 3, 4, 3, 1]


def test_first_equal_lines_leaves_short_and_long_lines_to_the_caller() -> None:
    text = np.frombuffer(b"1 2 3\n" + b"9" * 300, np.uint8)
    assert dedup.first_equal_lines(text, np.array([0]), np.array([5])) is None
    assert dedup.first_equal_lines(text, np.array([6]), np.array([306])) is None


def test_first_occurrences() -> None:
    assert dedup.first_occurrences(np.array([0, 1, 0, 2, 1, 3, 3])).tolist() == [0, 1, 3, 5]
    assert dedup.first_occurrences(np.zeros(0, np.int64)).tolist() == []


def _running_maxima_rises(numbers: np.ndarray) -> np.ndarray:
    """first_occurrences as the whole array's running maximum gives it: where it rises (and the first place)."""
    largest_before = np.maximum.accumulate(numbers)
    return np.flatnonzero(np.concatenate([[True], largest_before[1:] > largest_before[:-1]]))


@pytest.mark.parametrize("block", [1, 3, 64, 1 << 16])
def test_first_occurrences_a_block_at_a_time_as_whole(block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks carry the running maximum over: a new number at a block's first place, or one seen in an earlier
    block, is found as the whole array's running maximum finds it (numbers in order and not, of several types)."""
    monkeypatch.setattr(dedup, "_FIRSTS_AT_A_TIME", block)
    rng = np.random.default_rng(3)
    for size in (1, 2, 63, 64, 65, 200, 5000):
        steps = rng.random(size) < 0.3
        in_order = np.cumsum(steps) - steps[0]  # each new number the largest so far plus 1
        lines = in_order[np.minimum(np.arange(size), rng.integers(0, size, size)) if size > 1 else [0]]
        for numbers in (in_order, lines, rng.integers(-5, 50, size), in_order.astype(np.int32),
                        in_order.astype(np.uint32)):  # fmt: skip
            found = dedup.first_occurrences(np.asarray(numbers))
            assert found.dtype == np.int64
            np.testing.assert_array_equal(found, _running_maxima_rises(np.asarray(numbers)))


# Limits of held keys: 0 hashes every line and reads each line's first line from the text; the other hashes
# every line but holds the first lines' words
@pytest.mark.parametrize("limit", [0, 50], ids=["first lines read", "first lines held"])
def test_lines_grouped_by_a_colliding_hash_are_caught_by_the_word_check(
    monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    text = b"0 1.000000 2.000000\n0 1.000000 2.000000\n0 9.000000 2.000000\n"
    buffer = np.frombuffer(text, np.uint8)
    ends = np.flatnonzero(buffer == ord("\n"))
    starts = np.concatenate([[0], ends[:-1] + 1])
    assert dedup.first_equal_lines(buffer, starts, ends).tolist() == [0, 0, 2]
    monkeypatch.setattr(dedup, "_WHOLE_KEYS_BYTES", limit)  # the hashed path, as for large files
    assert dedup.first_equal_lines(buffer, starts, ends).tolist() == [0, 0, 2]
    every_hash_equal = lambda key, hashes=None: np.zeros(len(key), np.int64)  # noqa: E731
    monkeypatch.setattr(dedup, "first_equal_rows", every_hash_equal)
    assert dedup.first_equal_lines(buffer, starts, ends) is None


@pytest.mark.parametrize("limit", [0, 100_000], ids=["first lines read", "first lines held"])
def test_whole_keys_and_hashed_lines_group_alike(monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    rng = np.random.default_rng(3)
    pool = [f"{i % 7} {rng.integers(0, 9)}.000000 {rng.integers(0, 99)}.500000 x{'y' * (i % 40)}".encode()
            for i in range(300)]  # fmt: skip
    lines = [pool[i] for i in rng.integers(0, len(pool), 5000)]
    text = b"\n".join(lines) + b"\n"
    buffer = np.frombuffer(text, np.uint8)
    ends = np.flatnonzero(buffer == ord("\n"))
    starts = np.concatenate([[0], ends[:-1] + 1])
    whole = dedup.first_equal_lines(buffer, starts, ends)
    monkeypatch.setattr(dedup, "_WHOLE_KEYS_BYTES", limit)
    hashed = dedup.first_equal_lines(buffer, starts, ends)
    assert whole is not None and hashed is not None
    np.testing.assert_array_equal(whole, hashed)
    expected = [lines.index(line) for line in lines]
    assert whole.tolist() == expected


def test_faces_repeating_a_vertex_and_later_duplicates_of_a_face() -> None:
    corners = np.array([0, 1, 2, 3, 2, 1, 0, 1, 2, 3, 4, 4, 5, 6, 7, 8, 0, 1, 2])  # sizes 3, 3, 3, 3, 4, 3
    sizes = np.array([3, 3, 3, 3, 4, 3])
    assert dedup.faces_repeating_a_vertex(corners, sizes).tolist() == [False, False, False, True, False, False]
    # face 2 is face 0 again; face 5 uses face 0's vertices too; face 1 (1, 2, 3) is a set of its own
    assert dedup.later_duplicate_faces(corners, sizes).tolist() == [False, False, True, False, False, True]


@pytest.mark.parametrize("count", [1, 300, 2048, 2049])
@pytest.mark.parametrize("columns", [2, 3])
def test_small_tables_sorted_and_large_ones_hashed_give_the_same_labels(
    monkeypatch: pytest.MonkeyPatch, count: int, columns: int
) -> None:
    """Up to _SORTED_BELOW rows are grouped by sorting (fewer numpy calls for a pack's many small members): the
    labels are the hash table's, signed zeros and NaN payloads told apart alike."""
    rows = np.random.default_rng(count).integers(0, 7, (count, columns)).astype(np.float32)
    rows[: min(count, 2)] = -0.0
    rows.view(np.uint32)[count // 2, 0] = 0x7FC00001
    labels = dedup.row_labels(rows)
    monkeypatch.setattr(dedup, "_SORTED_BELOW", 0)  # (every size through the hash table)
    np.testing.assert_array_equal(labels, dedup.row_labels(rows))
    np.testing.assert_array_equal(labels, dedup._unique_rows_by_bytes(np.ascontiguousarray(rows))[1])


@pytest.mark.parametrize("by_sorting", [False, True], ids=["hash table", "sorted keys"])
def test_row_labels_are_unique_rows_indices(monkeypatch: pytest.MonkeyPatch, by_sorting: bool) -> None:
    if by_sorting:
        monkeypatch.setattr(dedup, "_probe_equal_rows", lambda key, hashes=None: None)
    rows = np.random.default_rng(4).integers(0, 5, (3000, 3)).astype(np.float32)
    rows[:2] = -0.0
    np.testing.assert_array_equal(dedup.row_labels(rows), dedup.unique_rows(rows)[1])
    assert dedup.row_labels(np.zeros((0, 3), np.float32)).shape == (0,)


@pytest.mark.parametrize("limit", [0, 100, 1 << 26], ids=["first lines read", "first lines held", "whole keys"])
def test_lines_of_every_length_and_alignment_group_as_their_bytes(monkeypatch: pytest.MonkeyPatch,
                                                                  limit: int) -> None:  # fmt: skip
    # Lengths 8 to 256 (keys with head, middle and tail words), starting at every byte offset, some lines alike
    # but for one byte, wherever it is
    monkeypatch.setattr(dedup, "_WHOLE_KEYS_BYTES", limit)
    rng = np.random.default_rng(11)
    pool = [bytes(rng.integers(33, 40, int(rng.integers(8, 257))).astype(np.uint8)) for _ in range(60)]
    pool[:3] = [pool[0][:8], (pool[1] * 5)[:256], (pool[2] * 5)[:100]]  # the shortest and longest lines possible
    pool += [line[:k] + b"~" + line[k + 1 :] for line in pool[:3] for k in range(len(line))]
    lines = [pool[i] for i in rng.integers(0, len(pool), 6000)]
    text = b"\n".join(lines)
    starts = np.cumsum([0] + [len(line) + 1 for line in lines[:-1]])
    ends = starts + np.array([len(line) for line in lines])
    first = dedup.first_equal_lines(np.frombuffer(text, np.uint8), starts, ends)
    assert first is not None and first.tolist() == [lines.index(line) for line in lines]


def test_rows_sharing_a_hash_are_told_apart_by_their_contents() -> None:
    rows = np.array([[1, 2], [3, 4], [1, 2], [3, 4], [5, 6]], np.int64)
    one_hash = np.zeros(len(rows), np.uint64)  # every row in one hash group: the whole-row check must notice
    assert dedup.first_equal_rows(rows, one_hash).tolist() == [0, 1, 0, 1, 4]


@pytest.mark.parametrize("seams", ["none", "one", "everywhere"])
@pytest.mark.parametrize("columns", [2, 3])
def test_per_corner_rows_grouped_by_vertex_give_unique_rows(columns: int, seams: str) -> None:
    """unique_corner_rows compares a vertex's first corner and the corners that differ from it; the result must be
    unique_rows' (same first-seen order, same bits: signed zeros and NaN payloads apart), with no seam, seams by a
    sign bit in one column, or every corner its own row, with vertices that no corner uses and vertices sharing a
    row."""
    rng = np.random.default_rng(columns)
    vertex_rows = rng.integers(0, 40, (3000, columns)).astype(np.float32)  # (many vertices share a row)
    vertex_rows[10] = -0.0
    vertex_rows[11] = 0.0
    if seams == "none":  # (NaN rows are unequal as values: bits must be compared to see a vertex's corners agree)
        vertex_rows[12:14] = np.nan
        vertex_rows.view(np.uint32)[14, 0] = 0x7FC00001
    corner_vertices = rng.integers(0, 2900, 9000)  # (the last hundred vertices unused)
    corner_vertices[:3] = 11
    rows = vertex_rows[corner_vertices]
    if seams == "one":  # corners of a vertex that differ from its first by one sign bit: in the first column, the last
        rows[1, 0] = -0.0
        rows[2, -1] = -0.0
    if seams == "everywhere":
        rows = rng.integers(0, 60, rows.shape).astype(np.float32)
    fast = dedup.unique_corner_rows(rows, corner_vertices)
    plain = dedup.unique_rows(rows)
    assert fast[0].tobytes() == plain[0].tobytes()
    np.testing.assert_array_equal(fast[1], plain[1])
    assert dedup.unique_corner_rows(rows[:0], corner_vertices[:0])[0].shape == (0, columns)


def test_faces_kept_whole_gives_repeated_and_doubled_faces_vertices_of_their_own() -> None:
    corners = np.array([0, 1, 2, 0, 0, 1, 2, 1, 0, 3, 3, 3, 4, 0, 1, 4, 1])  # a tri, one using 0 twice, the back
    sizes = np.array([3, 3, 3, 3, 5])  # of the first, a tri of one vertex, a pentagon using 4 and 1 twice
    renumbered, copied = dedup.faces_kept_whole(corners, sizes, vertex_count=6)  # (vertex 5: loose in the file)
    # (3 and 4 are used by spoiled faces only: their first use keeps them, so that no vertex is left loose)
    assert renumbered.tolist() == [0, 1, 2, 6, 7, 8, 9, 10, 11, 3, 12, 13, 4, 14, 15, 16, 17]
    assert copied.tolist() == [0, 0, 1, 2, 1, 0, 3, 3, 0, 1, 4, 1]
    assert not dedup.faces_repeating_a_vertex(renumbered, sizes).any()
    assert not dedup.later_duplicate_faces(renumbered, sizes).any()
    source = np.concatenate([np.arange(6), copied])
    np.testing.assert_array_equal(source[renumbered], corners)  # every corner still stands at its vertex
    good = renumbered[:3]
    assert not np.isin(renumbered[3:], good).any()  # the spoiled faces share no vertex with the good one


def test_faces_kept_whole_leaves_good_faces_as_they_are() -> None:
    corners = np.array([0, 1, 2, 2, 1, 3])
    renumbered, copied = dedup.faces_kept_whole(corners, np.array([3, 3]), vertex_count=4)
    np.testing.assert_array_equal(renumbered, corners)
    assert copied.size == 0


@pytest.mark.parametrize("count", [1, 7, 968, 2048, 2049, 30000, 1 << 15, (1 << 15) + 1, 40000])
def test_triangles_doubled_found_by_packed_keys_as_by_hashed_vertex_sets(count: int) -> None:
    """Triangles' later duplicates found by their packed sorted vertices (exact, up to _DOUBLED_SORTED_UP_TO by
    np.unique, more by first_equal_rows) are those later_duplicate_faces finds; faces_kept_whole gives the same
    either way."""
    rng = np.random.default_rng(count)
    corners = rng.integers(0, max(2, count // 2), 3 * count)
    repeats = rng.integers(0, count, count // 5 + 1)  # the same vertices again, in another order
    corners.reshape(-1, 3)[repeats] = np.roll(corners.reshape(-1, 3)[rng.integers(0, count, repeats.size)], 1, axis=1)
    corners.reshape(-1, 3)[rng.integers(0, count, count // 9 + 1), 2] = corners.reshape(-1, 3)[0, 0]  # some repeat
    sizes = np.full(count, 3)
    packed = dedup._later_duplicate_triangles(corners, sizes)
    assert packed is not None
    np.testing.assert_array_equal(packed, dedup.later_duplicate_faces(corners, sizes))
    fast = dedup.faces_kept_whole(corners, sizes, int(corners.max()) + 1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dedup, "_later_duplicate_triangles", lambda corners, sizes: None)
        hashed = dedup.faces_kept_whole(corners, sizes, int(corners.max()) + 1)
    for ours, theirs in zip(fast, hashed, strict=True):
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("count", [968, 2048, 10648, 1 << 15, 40000])
@pytest.mark.parametrize("doubled", ["none", "the last"])
def test_triangles_of_a_mesh_that_doubles_no_face_or_one(count: int, doubled: str) -> None:
    """A grid's triangles (no face doubles another: told by sorting their keys alone), or with its last face one
    of the first's vertices in another order: the faces later_duplicate_faces finds."""
    side = int(np.sqrt(count // 2)) + 1
    corner = (np.arange(side)[:, None] * (side + 1) + np.arange(side)[None, :]).ravel()
    quads = np.stack([corner, corner + side + 1, corner + side + 2, corner + 1], axis=1)
    corners = np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]], axis=1).reshape(-1, 3)[:count].copy()
    if doubled == "the last":
        corners[-1] = corners[0, [2, 0, 1]]
    sizes = np.full(count, 3)
    packed = dedup._later_duplicate_triangles(corners.ravel(), sizes)
    assert packed is not None and int(packed.sum()) == (doubled == "the last")
    np.testing.assert_array_equal(packed, dedup.later_duplicate_faces(corners.ravel(), sizes))


def test_triangles_too_large_to_pack_or_not_triangles_take_the_hashed_path() -> None:
    big = np.array([0, 1, 2, 2, 1, 1 << 21])
    assert dedup._later_duplicate_triangles(big, np.array([3, 3])) is None
    assert dedup._later_duplicate_triangles(np.arange(7), np.array([3, 4])) is None
    assert dedup._later_duplicate_triangles(np.zeros(0, np.int64), np.zeros(0, np.int64)) is None
    renumbered, copied = dedup.faces_kept_whole(np.concatenate([big, [1 << 21, 1, 2]]), np.full(3, 3), (1 << 21) + 1)
    assert copied.tolist() == [1 << 21, 1, 2]  # (the third face is the second again: its vertices copied)
    assert renumbered[6:].tolist() == [(1 << 21) + 1, (1 << 21) + 2, (1 << 21) + 3]


@pytest.mark.parametrize("kind", ["triangles", "large numbers", "quads and triangles", "none"])
def test_doubled_faces_are_later_duplicate_faces_by_packed_keys_where_it_can(kind: str) -> None:
    """doubled_faces: the faces later_duplicate_faces finds, by _later_duplicate_triangles where every face is a
    triangle of vertex numbers it packs (the hashed sets are not made then), by the hashed sets otherwise."""
    rng = np.random.default_rng(len(kind))
    count = 0 if kind == "none" else 3000
    sizes = rng.choice([3, 4], count) if kind == "quads and triangles" else np.full(count, 3)
    faces = [rng.choice(900, size, replace=False) for size in sizes.tolist()]
    faces += [np.roll(faces[index], index) for index in range(0, min(count, 40), 3)]  # (the same vertices again)
    if kind == "large numbers":
        faces[5][0] = 1 << 22
    corners = np.concatenate(faces) if faces else np.zeros(0, np.int64)
    sizes = np.array([len(face) for face in faces], np.int64)
    expected = dedup.later_duplicate_faces(corners, sizes)
    assert kind == "none" or expected.any()
    with pytest.MonkeyPatch.context() as patch:
        if kind == "triangles":
            patch.setattr(dedup, "later_duplicate_faces", lambda corners, sizes: pytest.fail("hashed"))
        np.testing.assert_array_equal(dedup.doubled_faces(corners, sizes), expected)
