"""Vectorised number-to-text for the writer: `%.6f` floats and plain integers, without per-number Python calls.

Text is laid out as a table of 4-byte words, one row per line (or per group of lines), filled column by column
from small lookup tables: a leading word (sign and 1-3 digits, right-aligned), further 3-digit groups, ".ddd",
"ddd" plus the separator, and separator words. NUL bytes pad every word; deleting them from the whole table
yields the text.
"""

from __future__ import annotations

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


def number_words(values: npt.ArrayLike, is_float: bool, separator: int | npt.NDArray[np.int8]) -> list[WordColumn]:
    """Word columns of one number column followed by its separator: `%.6f` when is_float, else the integer part.
    `separator` is one kind for all rows, or a kind per row (SPACE or NEWLINE only)."""
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    magnitude = np.abs(values)
    if not (magnitude < _LIMIT).all():  # also catches nan
        bad = float(values[~(magnitude < _LIMIT)][0])
        raise FormatError(f"cannot write the number {bad!r} (not finite, or 1e12 or more)")
    micro = np.rint(magnitude * 1e6).astype(np.int64)
    whole = micro // 1_000_000
    sign = ((values < 0) & (micro > 0)) * 1000
    columns: list[WordColumn] = []
    top = int(whole.max(initial=0))
    if top < 1000:
        columns.append(_LEADING[whole + sign])
    else:
        groups = (len(str(top)) + 2) // 3
        row_top = (whole >= 1000).astype(np.int64) + (whole >= 10**6) + (whole >= 10**9)
        parts, rest = [], whole
        for _ in range(groups):
            above = rest // 1000
            parts.append(rest - above * 1000)
            rest = above
        for group in range(groups - 1, -1, -1):
            inner = np.where(row_top > group, _GROUP[parts[group]], np.uint32(0))
            columns.append(np.where(row_top == group, _LEADING[parts[group] + sign], inner))
    kind = separator if isinstance(separator, int) else separator.astype(np.int64)
    if is_float:
        fraction = micro - whole * 1_000_000
        high = fraction // 1000
        columns.append(_DOT[high])
        columns.append(_LAST[fraction - high * 1000 + 1000 * kind])
        if isinstance(kind, int) and kind == DOUBLE_SPACE:
            columns.append(_SECOND_SPACE)
    else:
        columns.append(_SEPARATOR_WORDS[kind])
    return columns


def text_words(text: bytes) -> Words:
    """A piece of text as whole words, NUL-padded at the end."""
    return np.frombuffer(text.ljust(-(-len(text) // 4) * 4, b"\0"), dtype=np.uint32)


def text_of(table: Words) -> bytes:
    """The table's bytes, row after row, NUL bytes left out."""
    return table.tobytes().translate(None, b"\0")


def rows_text(
    rows: int, columns: list[WordColumn], *, lines_per_row: int = 1, head: Words | None = None, lengths: bool = False
) -> tuple[list[bytes], npt.NDArray[np.int64] | None]:
    """The text of `rows` table rows, in pieces, each `head[row]` (words, optional) then `lines_per_row` lines made of
    `columns` (arrays hold a word per line). Built a block of rows at a time, so that writing the columns and
    dropping the padding happen in cache. With `lengths`, also the byte length of each line."""
    head_width = 0 if head is None else head.shape[1]
    width = head_width + lines_per_row * len(columns)
    chunk = max(1, min(rows, _CHUNK_WORDS // max(width, 1)))
    table = np.empty((chunk, width), dtype=np.uint32)
    shaped = [c.reshape(rows, lines_per_row) if isinstance(c, np.ndarray) else c for c in columns]
    parts: list[bytes] = []
    sizes: list[npt.NDArray[np.int64]] = []
    for start in range(0, rows, chunk):
        stop = min(rows, start + chunk)
        block = table[: stop - start]
        if head is not None:
            block[:, :head_width] = head[start:stop]
        lines = block[:, head_width:].reshape(stop - start, lines_per_row, len(columns))
        for at, column in enumerate(shaped):
            lines[:, :, at] = column[start:stop] if isinstance(column, np.ndarray) else column
        if lengths:
            sizes.append(np.count_nonzero(lines.view(np.uint8).reshape(-1, 4 * len(columns)), axis=1))
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
    word_columns: list[WordColumn] = []
    for column in range(columns):
        word_columns += number_words(table[:, column], bool(float_columns[column]), int(separators[column]))
    parts, lengths = rows_text(rows, word_columns, lengths=True)
    assert lengths is not None
    return b"".join(parts), np.cumsum(lengths)
