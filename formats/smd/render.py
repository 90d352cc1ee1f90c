"""Vectorised number-to-text for the writer: `%.6f` floats and plain integers, without per-number Python calls.

Every token becomes one row of 4-byte words taken from small lookup tables (3 digits per word, NUL bytes as
padding): sign and leading digits, further 3-digit groups, ".ddd", "ddd" plus the separator, and an optional second
space. Dropping the NUL bytes of the whole table then yields the text of all tokens in order.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..errors import FormatError

SPACE, DOUBLE_SPACE, NEWLINE = 0, 1, 2  # separator written after a token
_LIMIT = 1e12  # below this the integer part has at most 4 groups of 3 digits and micro-units stay exact
_SEPARATOR = {SPACE: b" ", DOUBLE_SPACE: b" ", NEWLINE: b"\n"}  # the double space's second space is its own word


def _words(strings: list[bytes], right_align: bool = False) -> npt.NDArray[np.uint32]:
    padded = [s.rjust(4, b"\0") if right_align else s.ljust(4, b"\0") for s in strings]
    return np.frombuffer(b"".join(padded), dtype=np.uint32).copy()


_LEADING = [("-" if negative else "").encode() + str(i).encode() for negative in (0, 1) for i in range(1000)]
_LEADING_WORDS = _words(_LEADING, right_align=True)  # index: digits + 1000 * negative
_LEADING_LENGTHS = np.array([len(s) for s in _LEADING], dtype=np.int64)
_GROUP_WORDS = _words([f"{i:03d}".encode() for i in range(1000)])
_DOT_WORDS = _words([f".{i:03d}".encode() for i in range(1000)])
_LAST_WORDS = _words([f"{i:03d}".encode() + _SEPARATOR[s] for s in (SPACE, DOUBLE_SPACE, NEWLINE) for i in range(1000)])
_SEPARATOR_WORDS = _words([_SEPARATOR[s].rjust(4, b"\0") for s in (SPACE, DOUBLE_SPACE, NEWLINE)])
_SECOND_SPACE = _words([b" "])[0]


def render_tokens(
    values: npt.NDArray[np.float64], is_float: npt.NDArray[np.bool_], separators: npt.NDArray[np.int8]
) -> tuple[bytes, npt.NDArray[np.int64]]:
    """Text of all tokens, and the byte offset just past each token's separator."""
    if values.size == 0:
        return b"", np.zeros(0, dtype=np.int64)
    finite = np.isfinite(values) & (np.abs(values) < _LIMIT)
    if not finite.all():
        bad = float(values[~finite][0])
        raise FormatError(f"cannot write the number {bad!r} (not finite, or 1e12 or more)")
    micro = np.rint(np.abs(values) * 1e6).astype(np.int64)
    whole, fraction = np.divmod(micro, 1_000_000)
    fraction = fraction.astype(np.int32)
    groups = 1 + (whole >= 1000).astype(np.int64) + (whole >= 10**6) + (whole >= 10**9)
    width = int(groups.max())
    negative = (values < 0) & (micro > 0)
    words = np.zeros((values.size, width + 3), dtype=np.uint32)
    leading = whole // np.array([1, 1000, 10**6, 10**9], dtype=np.int64)[groups - 1] if width > 1 else whole
    words[:, 0] = _LEADING_WORDS[leading + 1000 * negative]
    for column in range(1, width):
        below = groups - 1 - column  # index of this 3-digit group counted from the right
        group = (whole // 1000 ** np.maximum(below, 0)) % 1000
        words[:, column] = np.where(below >= 0, _GROUP_WORDS[group], 0)
    high, low = np.divmod(fraction, 1000)
    kind = separators.astype(np.int64)
    words[:, width] = np.where(is_float, _DOT_WORDS[high], 0)
    words[:, width + 1] = np.where(is_float, _LAST_WORDS[low + 1000 * kind], _SEPARATOR_WORDS[kind])
    words[:, width + 2] = np.where(kind == DOUBLE_SPACE, _SECOND_SPACE, 0)
    lengths = _LEADING_LENGTHS[leading + 1000 * negative] + 3 * (groups - 1) + 7 * is_float + 1
    lengths += kind == DOUBLE_SPACE
    text = words.view(np.uint8)
    return text[text != 0].tobytes(), np.cumsum(lengths)


def render_table(
    table: npt.NDArray[np.float64], float_columns: npt.NDArray[np.bool_], separators: npt.NDArray[np.int8]
) -> tuple[bytes, npt.NDArray[np.int64]]:
    """Rows of a fixed-width table, one line each; returns the text and the byte offset after each line."""
    rows, columns = table.shape
    text, ends = render_tokens(
        table.reshape(-1), np.tile(float_columns, rows), np.tile(separators.astype(np.int8), rows)
    )
    return text, ends[columns - 1 :: columns] if columns else np.zeros(0, dtype=np.int64)
