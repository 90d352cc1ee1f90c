"""De-duplication of rows (float rows by exact bit pattern, integer rows by value), fast enough for per-corner
mesh data."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]
_PROBE_ROUNDS = 64  # rounds of hash-table probing before rows are grouped by sorting instead
_CHUNK = 32768  # rows handled at a time: the work stays in the CPU caches
# Up to this many rows, sorting one key per row is quicker than the hash table (fewer numpy calls: a pack's small
# members are de-duplicated thousands of times; 450 rows: 0.09 ms against 0.29 ms)
_SORTED_BELOW = 2048
# From this many rows (any number when their hashes are given), hashing the rows and sorting the hashes, one 64-bit
# key a row, is quicker than sorting the rows themselves (a pass a column); up to _HASHES_SORTED_UP_TO rows it is
# quicker than the hash table too, whose rounds of probing each cost several numpy calls (a small SMD's 2,904 vertex
# lines: 0.13 ms against 0.19; its 529 vertices: 0.07 ms against 0.09 by sorting the rows)
_HASHES_SORTED_FROM = 400
_HASHES_SORTED_UP_TO = 16384


def unique_rows(rows: FloatArray) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """Distinct rows by exact bits, in first-seen order, and the index of each input row among them.

    Bit patterns, not values, are compared: -0.0 and 0.0 stay distinct and NaNs de-duplicate, because the
    written bytes are what count. Equal rows are found through a hash table filled in bulk (whole rows compared
    where hashes agree); where that gives up, by sorting one 64-bit key per row (exact for two columns, a hash
    checked for collisions otherwise).
    """
    values = np.ascontiguousarray(rows, np.float32)
    labels = row_labels(values)
    return values[first_occurrences(labels)], labels


def unique_corner_rows(
    rows: FloatArray, corner_vertices: npt.NDArray[np.integer[Any]]
) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """unique_rows of per-corner rows, where `corner_vertices` (valid, non-negative) gives each corner's vertex:
    quicker where most corners of a vertex have the same row (smooth normals, UVs with few seams). Only the first
    corner of each vertex and the corners whose bits differ from it are compared; every other corner repeats its
    vertex's first corner. The first occurrence of any row is among those, so the first-seen order is unique_rows'."""
    values = np.ascontiguousarray(rows, np.float32)
    vertices = np.asarray(corner_vertices, np.intp)
    count = len(values)
    if count == 0 or vertices.shape != (count,):
        return unique_rows(values)
    first_corner = np.full(int(vertices.max()) + 1, count, np.intp)
    np.minimum.at(first_corner, vertices, np.arange(count))
    first = first_corner[vertices]  # each corner's vertex's first corner
    bits = values.view(np.uint32)
    differs = bits[:, 0] != bits[first, 0]  # (bits, as unique_rows compares)
    for column in range(1, bits.shape[1]):
        differs |= bits[:, column] != bits[first, column]
    compared = np.flatnonzero(differs | (first == np.arange(count)))  # in corner order
    if len(compared) > count * 3 // 4:  # (seams nearly everywhere: nothing to gain)
        return unique_rows(values)
    distinct, labels = unique_rows(values[compared])
    compared_labels = np.empty(count, np.int64)
    compared_labels[compared] = labels
    corner_labels = compared_labels[first]
    corner_labels[differs] = compared_labels[differs]
    return distinct, corner_labels


def row_labels(rows: FloatArray) -> npt.NDArray[np.int64]:
    """unique_rows(rows)[1] without making the distinct rows (a copy of most of a table of distinct rows)."""
    values = np.ascontiguousarray(rows, np.float32)
    if 0 < len(values) <= _SORTED_BELOW:
        return _unique_rows_by_sorting(values)[1]
    first = _probe_equal_rows(paired_columns(values)) if len(values) else np.zeros(0, np.int64)  # (no sort: quicker)
    if first is None:
        return _unique_rows_by_sorting(values)[1]
    is_first = first == np.arange(first.size)
    labels: npt.NDArray[np.int64] = (np.cumsum(is_first) - 1)[first]
    return labels


def paired_columns(values: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
    """The rows of a C-contiguous table of 32-bit numbers as 64-bit integers, two columns in each (a zero column
    added to an odd count): rows are equal bit for bit exactly when these are, at half the width of a column
    each (a key for first_equal_rows)."""
    values = np.ascontiguousarray(values)
    assert values.dtype.itemsize == 4 and values.ndim == 2
    count, width = values.shape
    if width % 2 == 0:
        return values.view(np.int64)
    paired = np.empty((count, (width + 1) // 2), np.int64)
    halves = paired.view(np.uint32)  # (bits copied as they are: NaN payloads included)
    halves[:, :width] = values.view(np.uint32)
    halves[:, width:] = 0
    return paired


def _unique_rows_by_sorting(values: FloatArray) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """unique_rows by sorting one 64-bit key per row, for the rare input the hash table gives up on."""
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


def first_equal_rows(
    key: npt.NDArray[np.int64], hashes: npt.NDArray[np.uint64] | None = None
) -> npt.NDArray[np.int64]:
    """For each row of the 2-D int64 array `key`, the index of the first row equal to it (`hashes`: see
    _probe_equal_rows)."""
    count = len(key)
    first = None
    if 0 < count <= _HASHES_SORTED_UP_TO and (hashes is not None or count >= _HASHES_SORTED_FROM):
        first = _sorted_equal_rows(key, hashes)
    elif count > _SORTED_BELOW and hashes is None and key.shape[1] == 1:
        # (one column: its mix is a hash no two different keys share, the mix being invertible; no row check)
        first = _first_equal_hashes(_mixed(key[:, 0].astype(np.uint64)))
    elif count > _SORTED_BELOW:
        first = _probe_equal_rows(key, hashes)
    if first is not None:
        return first
    # few rows (sorting is quicker), or unlucky hashing: group by sorting the rows themselves
    sort = np.lexsort(key.T[::-1])
    ordered = key[sort]
    new_group = np.ones(count, bool)
    new_group[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    group_start = np.flatnonzero(new_group)
    group_of = np.cumsum(new_group) - 1
    first = np.empty(count, np.int64)
    first[sort] = np.minimum.reduceat(sort, group_start)[group_of]
    return first


def table_hashes(table: npt.NDArray[Any]) -> npt.NDArray[np.uint64]:
    """A 64-bit hash of each row of a C-contiguous table of 64-bit integers: its 32-bit halves times a different
    odd 64-bit multiplier each, summed modulo 2**64, then mixed. (Whole 64-bit words times multipliers would keep
    a change in a word's top byte to the sum's top 8 bits: lines differing in two such bytes would collide one
    time in 256.)"""
    halves = table.view(np.uint32)
    multipliers = _multipliers(halves.shape[1])
    summed: npt.NDArray[np.uint64] = np.empty(len(table), np.uint64)
    for begin in range(0, len(table), _CHUNK):  # (a block at a time: the widened halves are twice the table)
        rows = slice(begin, begin + _CHUNK)
        summed[rows] = np.einsum("ij,j->i", halves[rows].astype(np.uint64), multipliers)  # (wraps)
    return _mixed(summed)


@functools.cache
def _multipliers(width: int) -> npt.NDArray[np.uint64]:
    multipliers: npt.NDArray[np.uint64] = np.random.default_rng(width).integers(1, 2**63, width, dtype=np.uint64)
    multipliers |= np.uint64(1)
    multipliers.flags.writeable = False  # (shared by every call)
    return multipliers


def _mixed(summed: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """The sum's high bits made to depend on all its bits (the hash table's slot is taken from them)."""
    with np.errstate(over="ignore"):
        summed ^= summed >> np.uint64(29)
        summed *= np.uint64(0x9E3779B97F4A7C15)
    return summed


def _probe_equal_rows(
    key: npt.NDArray[np.int64], hashes: npt.NDArray[np.uint64] | None = None
) -> npt.NDArray[np.int64] | None:
    """For each row of `key`, the first row equal to it; None when two different rows share a hash (rare: the
    caller then groups rows by sorting) or when probing takes too many rounds. `hashes`, when given, must be
    table_hashes of the key (or any hash that equal rows share).

    Rows are grouped by hash through a hash table filled in bulk (open addressing, linear probing: each round,
    the rows whose slot holds another hash move to the next slot); then every row is compared whole with the
    first of its group, in one pass."""
    key = np.ascontiguousarray(key)
    mixed = table_hashes(key) if hashes is None else hashes
    first = _first_equal_hashes(mixed)
    return first if first is not None and _equal_to_their_firsts(key, first) else None


def _sorted_equal_rows(
    key: npt.NDArray[np.int64], hashes: npt.NDArray[np.uint64] | None = None
) -> npt.NDArray[np.int64] | None:
    """_probe_equal_rows with the rows grouped by sorting their hashes instead of through a hash table."""
    key = np.ascontiguousarray(key)
    first = _first_equal_sorted_hashes(table_hashes(key) if hashes is None else hashes)
    return first if _equal_to_their_firsts(key, first) else None


def _equal_to_their_firsts(key: npt.NDArray[np.int64], first: npt.NDArray[np.int64]) -> bool:
    """Whether every row of the C-contiguous `key` holds the same as row first[row] (of the same hash)."""
    count, width = key.shape
    rows = key.view(np.dtype((np.void, 8 * width))).reshape(count)  # a row compares whole
    later = np.flatnonzero(first != np.arange(count))
    for begin in range(0, later.size, _CHUNK):
        chunk = later[begin : begin + _CHUNK]
        if not np.array_equal(rows[first[chunk]], rows[chunk]):
            return False
    return True


def _first_equal_sorted_hashes(hashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]:
    """For each hash, the index of its first occurrence, by sorting them (unstably: the first of each run of
    equal hashes is their smallest index)."""
    order = np.argsort(hashes)
    ordered = hashes[order]
    new_group = np.empty(hashes.size, bool)
    new_group[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new_group[1:])
    group_first = np.minimum.reduceat(order, np.flatnonzero(new_group))
    first = np.empty(hashes.size, np.int64)
    first[order] = group_first[np.cumsum(new_group) - 1]
    return first


def _first_equal_hashes(hashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64] | None:
    """For each hash, the index of its first occurrence (None after _PROBE_ROUNDS rounds of probing)."""
    count = hashes.size
    bits = count.bit_length() + 1  # at most half full
    index_type = np.int32 if (1 << bits) < 2**31 else np.int64  # half the memory for the usual sizes
    slot: npt.NDArray[np.integer[Any]] = (hashes >> np.uint64(64 - bits)).astype(index_type)
    table = np.full(1 << bits, count, index_type)  # `count` marks a free slot
    first = np.empty(count, np.int64)
    # The first round, every slot free and every row pending: the rounds' steps without gathering through them
    rows = np.arange(count, dtype=index_type)
    np.minimum.at(table, slot, rows)  # (of several rows claiming one slot, the first takes it)
    holder = table[slot]
    found = holder == rows
    others = np.flatnonzero(~found)
    found[others] = hashes[holder[others]] == hashes[others]
    np.copyto(first, holder, where=found)
    pending = np.flatnonzero(~found).astype(index_type, copy=False)
    if not pending.size:
        return first
    slot[pending] = (slot[pending] + 1) & index_type((1 << bits) - 1)
    for _ in range(_PROBE_ROUNDS - 1):
        wanted = slot[pending]
        holder = table[wanted]
        free = holder == count
        if free.any():  # rows claim free slots; of several claiming one, the first row takes it
            np.minimum.at(table, wanted[free], pending[free])
            holder = table[wanted]
        same = holder == pending
        others = np.flatnonzero(~same)
        same[others] = hashes[holder[others]] == hashes[pending[others]]
        first[pending[same]] = holder[same]
        pending = pending[~same]
        if not pending.size:
            return first
        slot[pending] = (slot[pending] + 1) & index_type((1 << bits) - 1)
    return None


_LONGEST_LINE = 256  # bytes; longer lines are rare and not worth grouping
_WHOLE_KEYS_BYTES = 64 << 20  # up to this size, every line's words are kept as its key (faster than hashing twice)


def first_equal_lines(
    text: npt.NDArray[np.uint8], starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64] | None:
    """For each line text[starts[i]:ends[i]], the index of the first line with the same bytes. None when some
    line is shorter than 8 bytes or longer than _LONGEST_LINE, when the lines' lengths differ so much that grouping
    them would not pay (the caller then reads every line), or in the astronomically rare case of two different
    lines with one hash.

    A line's key is its length and 8-byte words read straight from the text, never reaching outside the line
    (see LineWords). Up to _WHOLE_KEYS_BYTES the lines' keys are held and compared whole; beyond, memory stays
    at a few integers per line, never a copy of the lines."""
    lengths = ends - starts
    if not lengths.size:
        return np.zeros(0, np.int64)
    if int(lengths.min()) < 8 or int(lengths.max()) > _LONGEST_LINE:
        return None
    lines = LineWords(text, starts, ends)
    if lengths.size * lines.width * 8 > 2 * int(lengths.sum()) + (1 << 20):
        return None  # a few long lines would make every key long: more memory than the text is worth
    if lengths.size * lines.width * 8 <= _WHOLE_KEYS_BYTES:  # small enough: whole keys, compared exactly
        key = np.empty((lengths.size, lines.width), np.uint64)
        key_hashes = np.empty(lengths.size, np.uint64)
        for begin in range(0, lengths.size, _CHUNK):  # a block of lines at a time: their bytes stay in the caches
            rows = slice(begin, begin + _CHUNK)
            key_hashes[rows] = table_hashes(lines.fill(key[rows], rows))
        return first_equal_rows(key.view(np.int64), key_hashes)
    # Each line is reduced to a 64-bit hash of its key (a block of lines at a time: their bytes stay in the caches,
    # and no key of every line is ever held); lines are grouped by hash, then every line is checked against its
    # group's first line.
    hashes = np.empty(lengths.size, np.uint64)
    for begin in range(0, lengths.size, _CHUNK):
        rows = slice(begin, begin + _CHUNK)
        hashes[rows] = table_hashes(lines.fill(np.empty((lengths[rows].size, lines.width), np.uint64), rows))
    # (the hashes are mixed already: grouped by them as they are, not hashed again and compared with their firsts)
    found = _first_equal_hashes(hashes) if lengths.size > _SORTED_BELOW else None
    first = found if found is not None else first_equal_rows(hashes.view(np.int64)[:, None])
    del hashes
    is_first = first == np.arange(first.size)
    firsts = np.flatnonzero(is_first)
    held = firsts.size * lines.width * 8 <= _WHOLE_KEYS_BYTES
    if held:
        # The first lines' keys side by side (read in text order), so that each later line is checked against one
        # row of them rather than against words scattered over the whole text
        first_keys = lines.fill(np.empty((firsts.size, lines.width), np.uint64), firsts)
        rank = np.cumsum(is_first) - 1  # of each first line among the first lines
    grouped = np.flatnonzero(~is_first)
    for begin in range(0, grouped.size, _CHUNK):
        rows_ = grouped[begin : begin + _CHUNK]
        keys = lines.fill(np.empty((rows_.size, lines.width), np.uint64), rows_)
        # (too many distinct lines to hold: each line's first line is read from the text)
        expected = first_keys[rank[first[rows_]]] if held else lines.fill(np.empty_like(keys), first[rows_])
        if not np.array_equal(keys, expected):
            return None  # two different lines with one hash: astronomically rare; the caller reads every line
    return first


class LineWords:
    """Lines' keys: each line's length and its bytes as 8-byte words, in three parts that each stay inside every
    line: `head` words from its start, `tail` words ending at its end (rows of words gathered a row at a time
    from views of the text), and between them, for lines too long for those two, words from its start on that
    stop at its end. Two lines have equal keys exactly when they hold the same bytes."""

    def __init__(self, text: npt.NDArray[np.uint8], starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64]):
        self.starts, self.ends, self.lengths = starts, ends, ends - starts
        shortest, longest = int(self.lengths.min()), int(self.lengths.max())
        self.head = shortest // 8
        self.tail = min(self.head, -(-(longest - 8 * self.head) // 8))
        self.middle = max(0, -(-(longest - 8 * (self.head + self.tail)) // 8))
        self.width = self.head + self.middle + self.tail + 1
        self.words = byte_words(text)
        self.heads = _word_rows(text, self.head)
        self.tails = _word_rows(text, self.tail)

    def fill(self, block: npt.NDArray[np.uint64], rows: npt.NDArray[np.int64] | slice) -> npt.NDArray[np.uint64]:
        """`block` (len(rows), width) filled with the keys of lines `rows`."""
        starts, ends = self.starts[rows], self.ends[rows]
        block[:, : self.head] = self.heads[starts]
        for index in range(self.middle):
            block[:, self.head + index] = self.words[np.minimum(starts + 8 * (self.head + index), ends - 8)]
        if self.tail:
            block[:, self.head + self.middle : -1] = self.tails[ends - 8 * self.tail]
        block[:, -1] = self.lengths[rows]
        return block

    def copy_to(self, target: npt.NDArray[np.uint8], target_starts: npt.NDArray[np.int64]) -> None:
        """Every line written into `target` from its offset in `target_starts` (a row of words at a time)."""
        if not target_starts.size:
            return
        target_ends = target_starts + self.lengths
        _word_rows(target, self.head)[target_starts] = self.heads[self.starts]
        for index in range(self.middle):
            offset = np.minimum(8 * (self.head + index), self.lengths - 8)
            byte_words(target)[target_starts + offset] = self.words[self.starts + offset]
        if self.tail:
            _word_rows(target, self.tail)[target_ends - 8 * self.tail] = self.tails[self.ends - 8 * self.tail]


def _word_rows(text: npt.NDArray[np.uint8], count: int) -> npt.NDArray[np.uint64]:
    """Row i: the `count` consecutive little-endian 8-byte words from byte i of `text` on (a view, no copy)."""
    rows = max(text.size - 8 * count + 1, 0)
    words: npt.NDArray[np.uint64] = np.ndarray((rows, count), np.dtype("<u8"), buffer=text, strides=(1, 8))
    return words


def byte_words(text: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint64]:
    """The little-endian 8-byte word starting at each byte of `text` (but the last 7): a view, no copy."""
    words: npt.NDArray[np.uint64] = np.ndarray((text.size - 7,), np.dtype("<u8"), buffer=text, strides=(1,))
    return words


_FIRSTS_AT_A_TIME = 1 << 16  # (3M numbers whole: 24 MB of running maxima, fresh pages each time)


def first_occurrences(numbers: npt.NDArray[np.integer[Any]]) -> npt.NDArray[np.int64]:
    """Where each of 0, 1, 2... first occurs in `numbers`, which must number things in order of first appearance
    (each new one is the largest so far plus 1)."""
    if not numbers.size:
        return np.zeros(0, np.int64)
    found = []
    largest = numbers[0]
    for start in range(0, numbers.size, _FIRSTS_AT_A_TIME):  # (a block at a time: its temporaries stay in cache)
        largest_before = np.maximum.accumulate(numbers[start : start + _FIRSTS_AT_A_TIME])
        np.maximum(largest_before, largest, out=largest_before)
        new = np.empty(largest_before.size, bool)
        new[0] = start == 0 or largest_before[0] > largest
        np.greater(largest_before[1:], largest_before[:-1], out=new[1:])
        found.append(np.flatnonzero(new) + start)
        largest = largest_before[-1]
    return found[0] if len(found) == 1 else np.concatenate(found)


def faces_repeating_a_vertex(corners: npt.ArrayLike, sizes: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Per face: whether it uses a vertex more than once. Triangles compare their corners directly; other
    sizes sort each face's corners."""
    corner_table = np.asarray(corners, np.int64)
    size_table = np.asarray(sizes, np.int64)
    if size_table.shape[0] and (size_table == 3).all():
        triangles = corner_table.reshape(-1, 3)
        repeating: npt.NDArray[np.bool_] = (
            (triangles[:, 0] == triangles[:, 1])
            | (triangles[:, 1] == triangles[:, 2])
            | (triangles[:, 0] == triangles[:, 2])
        )
        return repeating
    face_of_corner = np.repeat(np.arange(size_table.shape[0]), size_table)
    order = np.lexsort((corner_table, face_of_corner))
    repeated = (np.diff(corner_table[order]) == 0) & (np.diff(face_of_corner[order]) == 0)
    faces = np.zeros(size_table.shape[0], np.bool_)
    faces[face_of_corner[order][1:][repeated]] = True
    return faces


_FACE_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F))


def later_duplicate_faces(
    corners: npt.NDArray[np.integer[Any]], sizes: npt.NDArray[np.integer[Any]]
) -> npt.NDArray[np.bool_]:
    """Per face (corners one face after another): whether an earlier face uses the same set of vertices (the back
    of a double-sided card, once its vertices are merged). Faces are compared by a hash of their vertex set and
    size: a collision marks a face too many, never one too few."""
    starts = (np.cumsum(sizes) - sizes).astype(np.intp)
    with np.errstate(over="ignore"):
        mixed = [(corners.astype(np.uint64) + np.uint64(1)) * multiplier for multiplier in _FACE_MIX]
        mixed[1] ^= mixed[1] >> np.uint64(29)
        keys = np.stack([np.asarray(sizes).astype(np.uint64), np.add.reduceat(mixed[0], starts),
                         np.bitwise_xor.reduceat(mixed[1], starts)], axis=1)  # fmt: skip
    later: npt.NDArray[np.bool_] = first_equal_rows(keys.view(np.int64)) != np.arange(len(starts))
    return later


def doubled_faces(corners: npt.NDArray[np.integer[Any]], sizes: npt.NDArray[np.integer[Any]]) -> npt.NDArray[np.bool_]:
    """later_duplicate_faces, exactly and quicker where every face is a triangle (_later_duplicate_triangles:
    100k triangles 10.3 -> 6.7 ms, 1M 165 -> 115 ms CPU)."""
    doubled = _later_duplicate_triangles(np.asarray(corners, np.int64), np.asarray(sizes, np.int64))
    return later_duplicate_faces(corners, sizes) if doubled is None else doubled


_PACKED_BITS = 21  # bits of each vertex number in a triangle's key: three fit in a 64-bit integer
# Triangles up to which a sort of their keys tells whether any face is doubled, not the hash table: 10k faces (a
# QC's batch of meshes) 0.07 against 0.30 ms, numpy 1.26 with AVX-512; without it (introsort) 0.40 against 0.87 ms,
# and it loses from about 50k
_DOUBLED_SORTED_UP_TO = 1 << 15


def _later_duplicate_triangles(
    corners: npt.NDArray[np.int64], sizes: npt.NDArray[np.int64]
) -> npt.NDArray[np.bool_] | None:
    """later_duplicate_faces for triangles, exactly (no hash collision can mark a face too many) and in fewer
    steps: each face's vertices sorted and packed into one integer key (a small model's faces are kept whole
    thousands of times in a pack or a QC). None for other faces, or vertex numbers too large to pack."""
    count = sizes.shape[0]
    if not count or corners.shape[0] != 3 * count or not (sizes == 3).all():
        return None
    if int(corners.min()) < 0 or int(corners.max()) >= 1 << _PACKED_BITS:
        return None
    a, b, c = corners[0::3], corners[1::3], corners[2::3]
    low, high = np.minimum(a, b), np.maximum(a, b)  # (three compare-and-swaps: quicker than np.sort by row)
    lowest, middle = np.minimum(low, c), np.maximum(low, c)
    middle, highest = np.minimum(high, middle), np.maximum(high, middle)
    keys = (lowest << (2 * _PACKED_BITS)) | (middle << _PACKED_BITS) | highest
    if count <= _DOUBLED_SORTED_UP_TO:
        ordered = np.sort(keys)  # (the usual mesh doubles no face: a sort tells, 5 times quicker than np.unique)
        if not (ordered[1:] == ordered[:-1]).any():
            return np.zeros(count, bool)
        _, first_index, group = np.unique(keys, return_index=True, return_inverse=True)  # (the first of each)
        first = first_index[group]
    else:
        first = first_equal_rows(keys[:, None])
    later: npt.NDArray[np.bool_] = first != np.arange(count)
    return later


def faces_kept_whole(
    corners: npt.ArrayLike, sizes: npt.ArrayLike, vertex_count: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Corners renumbered so that every face is one a Blender mesh holds, and for each vertex added, the vertex it
    copies. Faces that use a vertex twice (no area) or the vertex set of an earlier face (a doubled card) stand
    apart from the others: each of their corners gets a copy of its vertex, but for the first use of a vertex no
    other face uses (it would be left loose). The copies stand where their vertex stands, so every face of a file
    arrives as the file has it, shares no edge with the faces around it (whose shading it would upset), and an
    export that merges equal positions writes it back."""
    corner_table = np.array(corners, np.int64)
    size_table = np.asarray(sizes, np.int64)
    spoiled = faces_repeating_a_vertex(corner_table, size_table) | doubled_faces(corner_table, size_table)
    if not spoiled.any():
        return corner_table, np.zeros(0, np.int64)
    in_spoiled = np.repeat(spoiled, size_table)
    used_elsewhere = np.zeros(max(vertex_count, int(corner_table.max()) + 1), bool)
    used_elsewhere[corner_table[~in_spoiled]] = True
    chosen = np.flatnonzero(in_spoiled)
    vertices = corner_table[chosen]
    _, first_use = np.unique(vertices, return_index=True)  # (the first corner of each vertex, in corner order)
    copy = np.ones(chosen.shape[0], bool)
    copy[first_use] = used_elsewhere[vertices[first_use]]
    copied_corners = chosen[copy]
    sources = corner_table[copied_corners].copy()
    corner_table[copied_corners] = vertex_count + np.arange(copied_corners.shape[0])
    return corner_table, sources
