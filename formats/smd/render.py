"""Vectorised number-to-text for the writer: `%.6f` floats and plain integers, without per-number Python calls.

Text is laid out as a table of 4-byte words, one row per line (or per group of lines), filled column by column
from small lookup tables: a leading word (sign and 1-3 digits, right-aligned), further 3-digit groups, ".ddd",
"ddd" plus the separator, and separator words. NUL bytes pad every word; deleting them from the whole table
yields the text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ..errors import FormatError

Words = npt.NDArray[np.uint32]
WordColumn = Words | np.uint32  # a word per row, or one word for every row
SPACE, DOUBLE_SPACE, NEWLINE = 0, 1, 2  # separator written after a token
_LIMIT = 1e12  # below this the integer part has at most 4 groups of 3 digits and micro-units stay exact
_SEPARATOR = {SPACE: b" ", DOUBLE_SPACE: b"  ", NEWLINE: b"\n"}


def _words(strings: list[bytes], right_align: bool = False) -> Words:
    padded = [s.rjust(4, b"\0") if right_align else s.ljust(4, b"\0") for s in strings]
    return np.frombuffer(b"".join(padded), dtype=np.uint32).copy()


_LEADING = _words([b"-" * negative + str(i).encode() for negative in (0, 1) for i in range(1000)], right_align=True)
_GROUP = _words([f"{i:03d}".encode() for i in range(1000)])
_DOT = _words([f".{i:03d}".encode() for i in range(1000)])
_LAST = _words([f"{i:03d}".encode() + _SEPARATOR[s][:1] for s in (SPACE, DOUBLE_SPACE, NEWLINE) for i in range(1000)])
_SEPARATOR_WORDS = _words([_SEPARATOR[s] for s in (SPACE, DOUBLE_SPACE, NEWLINE)])
_SECOND_SPACE = _words([b" "])[0]
_CHUNK_WORDS = 1 << 18  # words per block of rows_text: 1 MiB, within a core's L2 cache


class Lines(Protocol):
    """Numbers made on demand, a block of lines at a time."""

    def __getitem__(self, part: slice, /) -> npt.NDArray[np.float64]: ...


@dataclass
class NumberColumn:
    """A number column and its separators as words, made a block of rows at a time by `rows_text` (numbers
    formatted in small pieces stay in the CPU caches, and need no full-length temporaries)."""

    values: npt.NDArray[np.float64] | npt.NDArray[np.float32] | Lines  # one per line (float32: widened by block)
    is_float: bool
    separator: int | npt.NDArray[np.int8]
    groups: int  # words for the integer part: 1 below 1000, else one per group of 3 digits of the largest
    present: npt.NDArray[np.bool_] | None = None  # where False, the line gets neither number nor separator

    @property
    def width(self) -> int:
        if not self.is_float:
            return self.groups + 1
        return self.groups + 2 + (isinstance(self.separator, int) and self.separator == DOUBLE_SPACE)

    def words(self, start: int, stop: int) -> list[WordColumn]:
        separator = self.separator if isinstance(self.separator, int) else self.separator[start:stop]
        values = np.asarray(self.values[start:stop], np.float64)  # (exact for float32, which would round the text)
        columns = _number_words(values, self.is_float, separator, self.groups)
        if self.present is None:
            return columns
        present = self.present[start:stop]
        for at, column in enumerate(columns):
            if isinstance(column, np.ndarray):
                column *= present  # a fresh array of words: blanked in place
            else:
                columns[at] = np.where(present, column, np.uint32(0))
        return columns


def number_column(
    values: npt.ArrayLike,
    is_float: bool,
    separator: int | npt.NDArray[np.int8],
    present: npt.NDArray[np.bool_] | None = None,
) -> NumberColumn:
    """One number column followed by its separator: `%.6f` when is_float, else the integer part. `separator` is
    one kind for all rows, or a kind per row (SPACE or NEWLINE only). Raises FormatError for a number that cannot
    be written (`present` or not)."""
    values = np.asarray(values)
    if values.dtype != np.float32:  # (float32 stays as it is, no float64 copy of a large array)
        values = values.astype(np.float64, copy=False)
    values = values.reshape(-1)  # a view where the strides allow
    bad = first_unwritable(values)
    if bad is not None:
        raise FormatError(f"cannot write the number {bad!r} (not finite, or 1e12 or more)")
    largest = max(float(values.max()), -float(values.min())) if values.size else 0.0
    return NumberColumn(values, is_float, separator, integer_groups(largest), present)


def first_unwritable(values: npt.ArrayLike) -> float | None:
    """The first number the text cannot hold (NaN, infinite, or 1e12 or more in size), or None."""
    values = np.asarray(values)
    if values.dtype.kind != "f":  # (floats are checked as they are: no float64 copy of a large array)
        values = values.astype(np.float64)
    values = values.reshape(-1)
    if not values.size or (float(values.max()) < _LIMIT and float(values.min()) > -_LIMIT):  # (nan fails both)
        return None
    return float(values[~(np.abs(values) < _LIMIT)][0])


def integer_groups(largest: float) -> int:
    """Words for the integer part of numbers whose magnitudes are at most `largest` (below _LIMIT)."""
    top = int(np.rint(largest * 1e6)) // 1_000_000  # the largest integer part (it grows with the magnitude)
    return 1 if top < 1000 else (len(str(top)) + 2) // 3


def number_words(values: npt.ArrayLike, is_float: bool, separator: int | npt.NDArray[np.int8]) -> list[WordColumn]:
    """The word columns of `number_column(values, is_float, separator)`, all rows at once."""
    column = number_column(values, is_float, separator)
    return column.words(0, np.asarray(values).size)


def _number_words(
    values: npt.NDArray[np.float64], is_float: bool, separator: int | npt.NDArray[np.int8], groups: int
) -> list[WordColumn]:
    # rint is symmetric, so this is the sign of the value times rint(|value| * 1e6): negative only when the
    # magnitude does not round to 0
    micro = np.rint(values * 1e6).astype(np.int64)
    negative = micro < 0
    np.abs(micro, out=micro)
    whole = micro // 1_000_000
    sign = negative * 1000
    columns: list[WordColumn] = []
    if groups == 1:
        sign += whole
        columns.append(_LEADING[sign])
    else:
        row_top = (whole >= 1000).astype(np.int64) + (whole >= 10**6) + (whole >= 10**9)
        parts, rest = [], whole
        for _ in range(groups):
            above = rest // 1000
            parts.append(rest - above * 1000)
            rest = above
        for group in range(groups - 1, -1, -1):
            inner = np.where(row_top > group, _GROUP[parts[group]], np.uint32(0))
            columns.append(np.where(row_top == group, _LEADING[parts[group] + sign], inner))
    if is_float:
        micro -= whole * 1_000_000  # the fraction
        high = micro // 1000
        columns.append(_DOT[high])
        high *= 1000
        micro -= high  # the last 3 digits
        if isinstance(separator, int):
            columns.append(_LAST[1000 * separator : 1000 * separator + 1000][micro])
            if separator == DOUBLE_SPACE:
                columns.append(_SECOND_SPACE)
        else:
            columns.append(_LAST[micro + 1000 * separator.astype(np.int64)])
    else:
        columns.append(_SEPARATOR_WORDS[separator if isinstance(separator, int) else separator.astype(np.int64)])
    return columns


def text_words(text: bytes) -> Words:
    """A piece of text as whole words, NUL-padded at the end."""
    return np.frombuffer(text.ljust(-(-len(text) // 4) * 4, b"\0"), dtype=np.uint32)


def text_of(table: Words) -> bytes:
    """The table's bytes, row after row, NUL bytes left out."""
    return table.tobytes().translate(None, b"\0")


def rows_text(
    rows: int,
    columns: list[WordColumn | NumberColumn],
    *,
    lines_per_row: int = 1,
    head: Words | None = None,
    lengths: bool = False,
) -> tuple[list[bytes], npt.NDArray[np.int64] | None]:
    """The text of `rows` table rows, in pieces, each `head[row]` (words, optional) then `lines_per_row` lines made of
    `columns` (arrays hold a word per line; number columns are made a block at a time). Built a block of rows at a
    time, so that making and writing the columns and dropping the padding happen in cache. With `lengths`, also
    the byte length of each line."""
    head_width = 0 if head is None else head.shape[1]
    line_width = sum(c.width if isinstance(c, NumberColumn) else 1 for c in columns)
    width = head_width + lines_per_row * line_width
    chunk = max(1, min(rows, _CHUNK_WORDS // max(width, 1)))
    table = np.empty((chunk, width), dtype=np.uint32)
    parts: list[bytes] = []
    sizes: list[npt.NDArray[np.int64]] = []
    for start in range(0, rows, chunk):
        stop = min(rows, start + chunk)
        block = table[: stop - start]
        if head is not None:
            block[:, :head_width] = head[start:stop]
        lines = block[:, head_width:].reshape(stop - start, lines_per_row, line_width)
        at = 0
        for column in columns:
            if isinstance(column, NumberColumn):
                for words in column.words(start * lines_per_row, stop * lines_per_row):
                    lines[:, :, at] = words.reshape(-1, lines_per_row) if isinstance(words, np.ndarray) else words
                    at += 1
            else:
                shaped = column.reshape(rows, lines_per_row)[start:stop] if isinstance(column, np.ndarray) else column
                lines[:, :, at] = shaped
                at += 1
        if lengths:
            sizes.append(np.count_nonzero(lines.view(np.uint8).reshape(-1, 4 * line_width), axis=1))
        parts.append(block.tobytes().translate(None, b"\0"))
    line_lengths = np.concatenate(sizes).astype(np.int64) if lengths and sizes else None
    return parts, line_lengths


def render_table(
    table: npt.NDArray[np.float64], float_columns: npt.NDArray[np.bool_], separators: npt.NDArray[np.int8]
) -> tuple[bytes, npt.NDArray[np.int64]]:
    """Rows of a fixed-width table, one line each; returns the text and the byte offset after each line."""
    rows, columns = table.shape
    if rows == 0:
        return b"", np.zeros(0, dtype=np.int64)
    word_columns: list[WordColumn | NumberColumn] = [
        number_column(table[:, column], bool(float_columns[column]), int(separators[column]))
        for column in range(columns)
    ]
    parts, lengths = rows_text(rows, word_columns, lengths=True)
    assert lengths is not None
    return b"".join(parts), np.cumsum(lengths)
