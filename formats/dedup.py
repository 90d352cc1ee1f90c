"""De-duplication of rows (float rows by exact bit pattern, integer rows by value), fast enough for per-corner
mesh data."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]
_PROBE_ROUNDS = 64  # rounds of hash-table probing before rows are grouped by sorting instead
_CHUNK = 32768  # rows handled at a time: the work stays in the CPU caches


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


def row_labels(rows: FloatArray) -> npt.NDArray[np.int64]:
    """unique_rows(rows)[1] without making the distinct rows (a copy of most of a table of distinct rows)."""
    values = np.ascontiguousarray(rows, np.float32)
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
    first = _probe_equal_rows(key, hashes)
    if first is not None:
        return first
    # unlucky hashing: group by sorting the rows themselves
    count = len(key)
    sort = np.lexsort(key.T[::-1])
    ordered = key[sort]
    new_group = np.ones(count, bool)
    new_group[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    group_start = np.flatnonzero(new_group)
    group_of = np.cumsum(new_group) - 1
    first = np.empty(count, np.int64)
    first[sort] = np.minimum.reduceat(sort, group_start)[group_of]
    return first


def row_hashes(columns: Sequence[npt.NDArray[Any]]) -> npt.NDArray[np.uint64]:
    """A 64-bit hash of each row, from its columns (64-bit integers): a different odd multiplier per column, summed
    modulo 2**64, then mixed. Column by column: a matrix product would copy the whole key."""
    width = len(columns)
    multipliers = np.random.default_rng(width).integers(1, 2**63, width, dtype=np.uint64) | np.uint64(1)
    with np.errstate(over="ignore"):
        mixed: npt.NDArray[np.uint64] = columns[0].view(np.uint64) * multipliers[0]
        for column in range(1, width):
            mixed += columns[column].view(np.uint64) * multipliers[column]
        mixed ^= mixed >> np.uint64(29)
        mixed *= np.uint64(0x9E3779B97F4A7C15)
    return mixed


def _probe_equal_rows(
    key: npt.NDArray[np.int64], hashes: npt.NDArray[np.uint64] | None = None
) -> npt.NDArray[np.int64] | None:
    """For each row of `key`, the first row equal to it, through a hash table filled in bulk (open addressing,
    linear probing: each round, the rows whose slot holds another key move to the next slot). None when that
    takes too many rounds. `hashes`, when given, must be row_hashes of the key's columns (a caller that made the
    key column by column hashes it faster than its rows' strided columns can be)."""
    count, width = key.shape
    rows = np.ascontiguousarray(key).view(np.dtype((np.void, 8 * width))).reshape(count)  # a row compares whole
    mixed = row_hashes([key[:, column] for column in range(width)]) if hashes is None else hashes
    bits = count.bit_length() + 1  # at most half full
    index_type = np.int32 if (1 << bits) < 2**31 else np.int64  # half the memory for the usual sizes
    slot = (mixed >> np.uint64(64 - bits)).astype(index_type)
    table = np.full(1 << bits, count, index_type)  # `count` marks a free slot
    first = np.empty(count, np.int64)
    pending = np.arange(count, dtype=index_type)
    for _ in range(_PROBE_ROUNDS):
        wanted = slot[pending]
        holder = table[wanted]
        free = holder == count
        if free.any():  # rows claim free slots; of several claiming one, the first row takes it
            np.minimum.at(table, wanted[free], pending[free])
            holder = table[wanted]
        same = holder == pending
        # Rows in another row's slot: equal only if their hashes are, and only those few are compared whole (whole
        # rows of every pending row, gathered at once, would take several times the text's memory).
        others = np.flatnonzero(~same)
        others = others[mixed[holder[others]] == mixed[pending[others]]]
        for begin in range(0, others.size, _CHUNK):
            chunk = others[begin : begin + _CHUNK]
            same[chunk] = rows[holder[chunk]] == rows[pending[chunk]]
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

    A line's words are 8-byte words read straight from the text (the last one ending at the line's end, so that
    no word reaches past it). Up to _WHOLE_KEYS_BYTES the lines' words are the keys; beyond, memory stays at a few
    integers per line, never a copy of the lines."""
    lengths = ends - starts
    if not lengths.size:
        return np.zeros(0, np.int64)
    if int(lengths.min()) < 8 or int(lengths.max()) > _LONGEST_LINE:
        return None
    width = (int(lengths.max()) + 7) // 8
    if lengths.size * (width + 1) * 8 > 2 * int(lengths.sum()) + (1 << 20):
        return None  # a few long lines would make every key long: more memory than the text is worth
    words = byte_words(text)
    last = ends - 8

    def word(index: int, rows: npt.NDArray[np.int64] | slice) -> npt.NDArray[np.uint64]:
        gathered: npt.NDArray[np.uint64] = words[np.minimum(starts[rows] + 8 * index, last[rows])]
        return gathered

    def word_columns(rows: npt.NDArray[np.int64] | slice, spare: int = 0) -> npt.NDArray[np.uint64]:
        """The lines' words, a column per word (contiguous), and `spare` rows left for the caller."""
        block = np.empty((width + spare, lengths[rows].size), np.uint64)
        for index in range(width):
            block[index] = word(index, rows)
        return block

    if lengths.size * (width + 1) * 8 <= _WHOLE_KEYS_BYTES:  # small enough: whole keys, compared exactly
        key = np.empty((lengths.size, width + 1), np.uint64)
        key_hashes = np.empty(lengths.size, np.uint64)
        for begin in range(0, lengths.size, _CHUNK):  # a block of lines at a time: their bytes stay in the caches
            rows = slice(begin, begin + _CHUNK)
            block = word_columns(rows, spare=1)
            block[width] = lengths[rows]
            key[rows] = block.T
            key_hashes[rows] = row_hashes(list(block))  # (hashed here, while each column is contiguous)
        return first_equal_rows(key.view(np.int64), key_hashes)
    # Each line is reduced to a 64-bit hash of its words (a block of lines at a time: their bytes stay in the
    # caches, and no key of every line's words is ever held); lines are grouped by (hash, length), then every
    # line is checked against its group's first line word by word.
    multipliers = np.random.default_rng(width).integers(1, 2**63, width, dtype=np.uint64) | np.uint64(1)
    hashes = np.empty(lengths.size, np.uint64)
    with np.errstate(over="ignore"):
        for begin in range(0, lengths.size, _CHUNK):
            rows = slice(begin, begin + _CHUNK)
            mixed = word(0, rows) * multipliers[0]
            for index in range(1, width):
                mixed += word(index, rows) * multipliers[index]
            hashes[rows] = mixed
    hash_key = np.empty((lengths.size, 2), np.int64)
    hash_key[:, 0] = hashes.view(np.int64)
    hash_key[:, 1] = lengths
    del hashes
    first = first_equal_rows(hash_key)
    del hash_key
    is_first = first == np.arange(first.size)
    firsts = np.flatnonzero(is_first)
    held = firsts.size * width * 8 <= _WHOLE_KEYS_BYTES
    if held:
        # The first lines' words side by side (read in text order), so that each later line is checked against one
        # row of them rather than against words scattered over the whole text
        first_words = np.empty((firsts.size, width), np.uint64)
        for begin in range(0, firsts.size, _CHUNK):
            first_words[begin : begin + _CHUNK] = word_columns(firsts[begin : begin + _CHUNK]).T
        rank = np.cumsum(is_first) - 1  # of each first line among the first lines
    grouped = np.flatnonzero(~is_first)
    for begin in range(0, grouped.size, _CHUNK):
        rows_ = grouped[begin : begin + _CHUNK]
        if held:
            expected = first_words[rank[first[rows_]]]
            same = all(np.array_equal(word(index, rows_), expected[:, index]) for index in range(width))
        else:  # too many distinct lines to hold: each line's first line is read from the text
            same = all(np.array_equal(word(index, rows_), word(index, first[rows_])) for index in range(width))
        if not same:
            return None  # two different lines with one hash: astronomically rare; the caller reads every line
    return first


def byte_words(text: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint64]:
    """The little-endian 8-byte word starting at each byte of `text` (but the last 7): a view, no copy."""
    words: npt.NDArray[np.uint64] = np.ndarray((text.size - 7,), np.dtype("<u8"), buffer=text, strides=(1,))
    return words


def first_occurrences(numbers: npt.NDArray[np.integer[Any]]) -> npt.NDArray[np.int64]:
    """Where each of 0, 1, 2... first occurs in `numbers`, which must number things in order of first appearance
    (each new one is the largest so far plus 1)."""
    if not numbers.size:
        return np.zeros(0, np.int64)
    largest_before = np.maximum.accumulate(numbers)
    new = np.empty(numbers.size, bool)
    new[0] = True
    np.greater(largest_before[1:], largest_before[:-1], out=new[1:])
    return np.flatnonzero(new)


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
