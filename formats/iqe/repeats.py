"""Rows that repeat an earlier or later row bit for bit, found in one pass: the text of a repeated row is made once.

A mesh with hard edges and UV seams splits its vertices: the corners of one point repeat its position, the corners
of one flat face its normal. Formatting (or parsing) each distinct row once and copying its text (or numbers) to the
rows that repeat it gives the same bytes for less work.

Each row is hashed into a table of about four slots per row; a row takes the row last stored in its slot as its
source when the two are equal in every word (one comparison, no probing). Rows whose slot holds a different row are
their own source: some repeats are missed (about one distinct row in ten), never a row given another's source.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Int64Array = npt.NDArray[np.int64]
Words = npt.NDArray[np.uint32] | npt.NDArray[np.uint64]

_MULTIPLIERS = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93,
                         0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53, 0x94D049BB133111EB, 0xBF58476D1CE4E5B9],
                        np.uint64)  # fmt: skip
SAMPLE_ROWS = 4096  # rows looked at to tell whether a table repeats enough rows to pay


def row_sources(words: Words) -> tuple[Int64Array, Int64Array]:
    """(the rows that are their own source, in order; for each row, its source's position among them). Rows of a
    2-D table of unsigned words are equal when every word is (each column is read as a whole)."""
    count, width = words.shape
    rows = np.arange(count)
    if not count:
        return rows, rows
    columns = [words[:, column] for column in range(width)]
    hashes = columns[0] * _MULTIPLIERS[0]  # (unsigned integer arrays wrap silently)
    for index in range(1, width):
        hashes += columns[index] * _MULTIPLIERS[index % len(_MULTIPLIERS)]
    hashes ^= hashes >> np.uint64(31)
    hashes *= _MULTIPLIERS[1]
    bits = count.bit_length() + 2
    slots = (hashes >> np.uint64(64 - bits)).astype(np.intp)
    table = np.empty(1 << bits, np.intp)
    table[slots] = rows  # (of rows sharing a slot, one is kept: it is its own source)
    candidates = table[slots]
    same = columns[0][candidates] == columns[0]
    for column in columns[1:]:
        same &= column[candidates] == column
    sources = np.where(same, candidates, rows)
    kept = sources == rows
    rank: Int64Array = (np.cumsum(kept) - 1)[sources]
    return np.flatnonzero(kept), rank


def repeats_pay(words: Words, most_kept: float) -> bool:
    """Whether, among the first SAMPLE_ROWS rows, at most the fraction `most_kept` are their own source."""
    sample = words[:SAMPLE_ROWS]
    return sample.shape[0] >= 64 and row_sources(sample)[0].shape[0] <= most_kept * sample.shape[0]
