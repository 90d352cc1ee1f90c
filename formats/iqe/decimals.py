"""Plain decimal tokens (`-12.5`, `3`, `.25`, `7.`) to float64 in bulk, exactly as `float()` reads them.

Each token is read as two little-endian 64-bit words holding its last 16 bytes (of the text itself: no copy); bytes
before the token (and a sign) are masked to '0', the '.' is turned into a '0', and the 16 digits are converted
eight at a time with the SWAR multiplications of Lemire's `parse_eight_digits_unrolled`. The digits make an integer
M < 2**53 and the value is M / 10**k with k <= 15 digits after the point: both operands are exact doubles, so the
one IEEE division is correctly rounded, the same result as strtod or `float()` (Clinger's fast path).

Anything else (an exponent, more than 16 characters or 15 significant digits, `inf`, a stray character) is
reported as not parsed; the caller converts those few tokens the slow way and reports errors.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Int64Array = npt.NDArray[np.int64]
Float64Array = npt.NDArray[np.float64]
UInt64Array = npt.NDArray[np.uint64]

PAD = 16  # zero bytes the caller puts before and after the text (see `padded_bytes`)
_U64 = np.dtype("<u8")
_ALL = 0xFFFFFFFFFFFFFFFF
_ZEROS = np.uint64(0x3030303030303030)  # "00000000"
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_HIGH = np.uint64(0x8080808080808080)
_DOTS = np.uint64(0x2E2E2E2E2E2E2E2E)
_POINT_VALUES = np.uint64(0x1E1E1E1E1E1E1E1E)  # '.' ^ '0' in every byte
_AFTER_IN_LOW = np.uint64(0x0706050403020100)  # byte j: j (a point at byte b of the last word: 7 - b digits after)
_AFTER_IN_HIGH = np.uint64(0x0F0E0D0C0B0A0908)  # byte j: 8 + j
_ONES = np.uint64(0x0101010101010101)
# _KEEP[n] keeps the last n bytes of a word (its high bytes: the text is little-endian); the rest become '0'.
_KEEP = np.array([(_ALL << (8 * (8 - n))) & _ALL if n else 0 for n in range(9)], np.uint64)
_FILL = np.array([int(_ZEROS) & ~int(keep) for keep in _KEEP], np.uint64)
_POW10 = np.array([10**k for k in range(17)], np.uint64)
_POW10_FLOAT = np.array([10.0**k for k in range(17)], np.float64)
_MAX_EXACT = np.uint64(1 << 53)
_CHUNK = 32768


def padded_bytes(data: bytes) -> npt.NDArray[np.uint8]:
    """The text as uint8 with PAD zero bytes on both sides (a copy: only for short texts)."""
    padded = np.zeros(len(data) + 2 * PAD, np.uint8)
    padded[PAD : PAD + len(data)] = np.frombuffer(data, np.uint8)
    return padded


def parse_decimals(
    text: npt.NDArray[np.uint8], starts: Int64Array, ends: Int64Array
) -> tuple[Float64Array, npt.NDArray[np.bool_]]:
    """Values of the tokens text[starts[i]:ends[i]] and whether each was a plain decimal read here exactly.

    `text` is the file's bytes as uint8 (a view, not a copy: `np.frombuffer(data, np.uint8)`). Each token is read
    from the 16 bytes that end with it; the few tokens ending in the first 16 bytes of the text are read from a
    zero-padded copy of those bytes. Values of unparsed tokens are garbage.
    """
    values = np.empty(starts.shape[0], np.float64)
    parsed = np.empty(starts.shape[0], np.bool_)
    for start in range(0, starts.shape[0], _CHUNK):  # chunks small enough for the CPU caches
        part = slice(start, start + _CHUNK)
        values[part], parsed[part] = _parse_chunk(text, 0, starts[part], ends[part])
    early = np.flatnonzero(ends < PAD)
    if early.shape[0]:
        head = padded_bytes(text[:PAD].tobytes())
        values[early], parsed[early] = _parse_chunk(head, PAD, starts[early], ends[early])
    return values, parsed


def _parse_chunk(
    buffer: npt.NDArray[np.uint8], offset: int, starts: Int64Array, ends: Int64Array
) -> tuple[Float64Array, npt.NDArray[np.bool_]]:
    """Tokens at starts/ends + `offset` in `buffer`; a token whose 16 bytes would start before it is not parsed."""
    if buffer.shape[0] < 8:
        return np.zeros(starts.shape[0]), np.zeros(starts.shape[0], np.bool_)
    words: UInt64Array = np.ndarray((buffer.shape[0] - 7,), _U64, buffer, 0, (1,))  # the 8 bytes at every offset
    first = buffer[starts + offset]
    negative = first == 45
    length = ends - starts - (negative | (first == 43))  # digits and the point
    if length.shape[0] and int(length.max()) <= 8:
        return _parse_short(words, ends + offset, length, negative)
    parsed = (length >= 1) & (length <= 16) & (ends + offset >= 16)
    length = np.minimum(np.maximum(length, 0), 16)
    low_count = np.minimum(length, 8)
    # Each byte as its digit's value (0-9; the point 0x1E, anything else above 9), bytes before the token 0
    low_ends, high_ends = ends + (offset - 8), ends + (offset - 16)
    if ends.shape[0] and int(ends.min()) + offset < 16:  # (those are not parsed: any word will do)
        np.maximum(low_ends, 0, out=low_ends)
        np.maximum(high_ends, 0, out=high_ends)
    low = (words[low_ends] ^ _ZEROS) & _KEEP[low_count]
    high = (words[high_ends] ^ _ZEROS) & _KEEP[length - low_count]
    low_at = _zero_bytes(low ^ _POINT_VALUES) >> np.uint64(7)  # 1 in the point's byte
    high_at = _zero_bytes(high ^ _POINT_VALUES) >> np.uint64(7)
    low ^= low_at * np.uint64(0x1E)  # the point read as a 0 digit
    high ^= high_at * np.uint64(0x1E)
    parsed &= (_above_nine(low) | _above_nine(high)) == 0
    points = ((low_at + high_at) * _ONES) >> np.uint64(56)  # (the bytes' sum: their count)
    has_dot = points == 1
    parsed &= (points <= 1) & (length > has_dot)
    # digits after the point: the top byte of (1 << 8b) * multiplier is the multiplier's byte 7 - b
    after = ((low_at * _AFTER_IN_LOW) >> np.uint64(56)) + ((high_at * _AFTER_IN_HIGH) >> np.uint64(56))
    digits = _eight_values(high) * np.uint64(100_000_000) + _eight_values(low)  # the point counts as a 0 digit
    parsed &= digits < _MAX_EXACT
    # digits = whole * 10**(after + 1) + fraction: every step below is exact in doubles (all below 2**53; the
    # quotient's fraction is below 0.1, so floor() is right), and the one division at the end rounds correctly
    exact = digits.astype(np.float64)
    unit = _POW10_FLOAT[np.minimum(after, 16)]  # (more: two points, not parsed)
    whole = np.floor(exact / np.where(has_dot, unit * 10.0, np.inf))
    values: Float64Array = (exact - whole * 9.0 * unit) / unit
    np.negative(values, out=values, where=negative)
    return values, parsed


def _parse_short(
    words: UInt64Array, ends: Int64Array, length: Int64Array, negative: npt.NDArray[np.bool_]
) -> tuple[Float64Array, npt.NDArray[np.bool_]]:
    """`_parse_chunk` for tokens of at most 8 digits and point (faces, indices, short numbers): one word each.

    `ends` are offsets into the buffer of `words`."""
    parsed = (length >= 1) & (ends >= 8)
    length = np.maximum(length, 0)
    low = (words[np.maximum(ends - 8, 0)] & _KEEP[length]) | _FILL[length]
    dot = _zero_bytes(low ^ _DOTS)
    if not dot.any():  # whole numbers
        parsed &= _not_digits(low) == 0
        values: Float64Array = _eight_digits(low).astype(np.float64)
        np.negative(values, out=values, where=negative)
        return values, parsed
    low ^= (dot >> np.uint64(7)) * np.uint64(0x1E)  # '.' ^ 0x1E == '0'
    has_dot = dot != 0
    parsed &= (_not_digits(low) == 0) & ((dot & (dot - np.uint64(1))) == 0) & (length > has_dot)
    after = np.where(has_dot, 7 - (np.frexp(dot.astype(np.float64))[1] - 8) // 8, 0)
    digits = _eight_digits(low)  # the point counts as a 0 digit
    fraction = digits % _POW10[after]
    mantissa = np.where(has_dot, (digits - fraction) // np.uint64(10) + fraction, digits)
    values = mantissa.astype(np.float64) / _POW10_FLOAT[after]
    np.negative(values, out=values, where=negative)
    return values, parsed


def _zero_bytes(words: UInt64Array) -> UInt64Array:
    """The high bit of every zero byte, exactly (no false positives from borrows)."""
    carried = (words & _LOW7) + _LOW7
    zero: UInt64Array = ~(carried | words | _LOW7)
    return zero


def _above_nine(values: UInt64Array) -> UInt64Array:
    """Nonzero when some byte is above 9."""
    above: UInt64Array = (((values & _LOW7) + np.uint64(0x7676767676767676)) | values) & _HIGH
    return above


def _eight_values(values: UInt64Array) -> UInt64Array:
    """The number written by 8 digit values (0-9), the first in the lowest byte."""
    value = values * np.uint64(10) + (values >> np.uint64(8))
    pairs = np.uint64(0x000000FF000000FF)
    value = (
        (value & pairs) * np.uint64(100 + (1_000_000 << 32))
        + ((value >> np.uint64(16)) & pairs) * np.uint64(1 + (10_000 << 32))
    ) >> np.uint64(32)
    return value


def _not_digits(words: UInt64Array) -> UInt64Array:
    """Nonzero when some byte is not an ASCII digit."""
    bad: UInt64Array = ((words + np.uint64(0x4646464646464646)) | (words - _ZEROS)) & _HIGH
    return bad


def _eight_digits(words: UInt64Array) -> UInt64Array:
    """The number written by 8 ASCII digits, the first in the lowest byte."""
    return _eight_values(words - _ZEROS)
