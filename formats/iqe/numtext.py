"""Numbers to IQE text in bulk: byte matrices assembled with numpy, no Python per number.

Floats are written in fixed-point notation with just enough decimals for their float32 value: a value in
[2**e, 2**(e+1)) gets k decimals with 10**-k <= 2**(e-24) (a quarter of its float32 spacing), so the decimal
is within that quarter of the value and reads back (strtod, then float32) to exactly the same float32; trailing
zeros are dropped. The scaled value v * 10**k is exact in float64 for k <= 12, so the rounding to k decimals is
exact too. Values out of that range (tiny or huge magnitudes, subnormals) are written with `%.9g`, per value.

A text is built as a uint8 matrix, one row per line, where 0 bytes are fillers; `compact` drops them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .repeats import repeats_pay, row_sources

Bytes2D = npt.NDArray[np.uint8]
Int64Array = npt.NDArray[np.int64]
UInt64Array = npt.NDArray[np.uint64]
Float64Array = npt.NDArray[np.float64]

_U8 = np.dtype(np.uint8)
_LOG10_2 = 0.30102999566398120
_MAX_DECIMALS = 12  # 5**12 < 2**29: a float32 mantissa times 10**12 is exact in a double
_MAX_WHOLE = 10**6  # a float's whole part, its sign and the point fit one 8-byte word (ints: 10**7)
_POW10_FLOAT = np.array([10.0**k for k in range(17)], np.float64)
_POW10 = np.array([10**k for k in range(17)], np.uint64)
_ZEROS = np.uint64(0x3030303030303030)
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_HIGH = np.uint64(0x8080808080808080)
_ALL = 0xFFFFFFFFFFFFFFFF
# _KEEP_LAST[n]: the last n bytes of a little-endian word (the end of the text).
_KEEP_LAST = np.array([(_ALL << (8 * (8 - n))) & _ALL if n else 0 for n in range(9)], np.uint64)
_SHIFTS = np.arange(0, 64, 8, dtype=np.uint64)
_CHUNK = 32768
# _ASCII4[n]: the 4 ASCII digits of n < 10**4 with leading zeros, the first in the lowest byte; _DIGITS4[n]: how
# many digits n has (1 for 0).
_ASCII4 = np.array([int.from_bytes(f"{n:04d}".encode(), "little") for n in range(10_000)], np.uint32)
_DIGITS4 = np.array([len(str(n)) for n in range(10_000)], np.int64)
# _DIGITS_BELOW[b]: the digit count of 2**(b - 1) (1 for b = 0), for whole numbers below 2**b or equal to it.
_DIGITS_BELOW = np.array([1] + [len(str(2 ** (bits - 1))) for bits in range(1, 27)], np.int64)
# Decimals of four digits n < 10**4 (n / 10**4 written with leading zeros): _TRIMMED4[n] holds in its low half
# their ASCII digits without the trailing '0's, in its high half how many digits remain (0 for n = 0).
_TRIMMED4 = np.array([int.from_bytes(f"{n:04d}".rstrip("0").encode(), "little") | len(f"{n:04d}".rstrip("0")) << 32
                      for n in range(10_000)], np.uint64)  # fmt: skip
_LOW32 = np.uint64(0xFFFFFFFF)
# _WHOLE4[n + 10**4 * negative] for whole parts n < 10**4: '-' and the digits ending at byte 6 of a word (byte 7
# takes the point); _WHOLE4_LENGTHS: their text lengths.
_WHOLE4 = np.array([int.from_bytes(text.encode().rjust(7, b"\0") + b"\0", "little")
                    for text in [str(n) for n in range(10_000)] + [f"-{n}" for n in range(10_000)]],
                   np.uint64)  # fmt: skip
_WHOLE4_LENGTHS = np.array([len(str(n)) for n in range(10_000)] * 2, np.int64) + np.repeat([0, 1], 10_000)
# Per biased float32 exponent: the decimals a value gets (see the module notes; over _MAX_DECIMALS: not fast).
_DECIMALS_OF_EXPONENT = np.ceil((24 - (np.arange(256, dtype=np.int64) - 127)) * _LOG10_2).astype(np.int64)


@dataclass
class Fields:
    """Formatted numbers: row i holds number i as text padded with 0 bytes; `lengths` counts its text bytes."""

    chars: Bytes2D
    lengths: Int64Array


_REPEATS_FROM = 1024  # columns of this many values on are looked at for repeated values
_MOST_KEPT = 0.5  # formatting each distinct value once pays when a sample has at most this share of distinct values


def float_fields(values: npt.ArrayLike) -> Fields:
    """Text of each value (taken as float32) that reads back to the same float32."""
    given = np.asarray(values)
    if given.dtype == np.float32:  # (as they are: through float64 and back, each finite value is itself again)
        single = np.ascontiguousarray(given).ravel()
    else:
        single = np.asarray(given, np.float64).ravel().astype(np.float32)
    if single.shape[0] >= _REPEATS_FROM:
        # A value's text depends on its float32 bits alone: where a column repeats values (a grid's coordinates,
        # UVs on a seam's both sides, 0 and 1), each distinct value is formatted once and its text copied.
        words = single.view(np.uint32)[:, None]
        if repeats_pay(words, _MOST_KEPT):
            kept, source = row_sources(words)
            distinct = _distinct_float_fields(single[kept])
            return Fields(np.take(distinct.chars, source, axis=0), np.take(distinct.lengths, source))
    return _distinct_float_fields(single)


def _distinct_float_fields(single: npt.NDArray[np.float32]) -> Fields:
    count = single.shape[0]
    words = np.empty((count, 3), np.uint64)
    whole_lengths = np.empty(count, np.int64)
    decimal_counts = np.empty(count, np.int64)
    fast = np.empty(count, np.bool_)
    for start in range(0, count, _CHUNK):  # chunks small enough for the CPU caches
        part = slice(start, start + _CHUNK)
        _float_words(single[part], words[part], whole_lengths[part], decimal_counts[part], fast[part])
    lengths = whole_lengths + decimal_counts + (decimal_counts > 0)
    width_before = int(whole_lengths.max()) if count else 1
    width_after = int(decimal_counts.max()) if count else 0
    stop = 8 + width_after if width_after else 7
    every_byte = words.view(_U8).reshape(count, 24)
    chars = every_byte[:, 7 - width_before : stop]
    if not fast.all():
        slow = np.flatnonzero(~fast)
        texts = [b"%.9g" % value for value in single[slow].astype(np.float64).tolist()]
        width = max(chars.shape[1], max(len(text) for text in texts))
        if 7 - width_before + width <= 24:  # the rows' own bytes have room: widen in place, no copy of the table
            every_byte[:, stop : 7 - width_before + width] = 0
            chars = every_byte[:, 7 - width_before : 7 - width_before + width]
        chars, lengths = _place_texts(chars, lengths, slow, texts)
    return Fields(chars, lengths)


def _float_words(
    single: npt.NDArray[np.float32],
    words: UInt64Array,
    whole_lengths: Int64Array,
    decimal_counts: Int64Array,
    fast: npt.NDArray[np.bool_],
) -> None:
    """Fill (n, 3) words with [sign, whole digits, point] right-aligned, then 16 decimals left-aligned."""
    exact = single.astype(np.float64)
    magnitude = np.abs(exact)
    # magnitude in [2**exponent, 2**(exponent + 1)): the biased exponent of the float32 (subnormals, below every
    # fast value, read as 2**-127; zero is fast whatever its decimals)
    biased = ((single.view(np.uint32) >> np.uint32(23)) & np.uint32(0xFF)).astype(np.intp)
    decimals = _DECIMALS_OF_EXPONENT[biased]
    np.greater_equal(_MAX_DECIMALS, decimals, out=fast)
    fast &= magnitude < _MAX_WHOLE - 1
    fast |= magnitude == 0.0
    np.clip(decimals, 0, _MAX_DECIMALS, out=decimals)
    unit = _POW10_FLOAT[decimals]
    scaled = np.rint(np.where(fast, magnitude, 0.0) * unit)  # exact: see the module notes
    whole = np.floor(scaled / unit)  # the division may round up to the next whole number: corrected below
    fraction = scaled - whole * unit
    under = fraction < 0.0
    if under.any():
        whole[under] -= 1.0
        fraction[under] += unit[under]
    # The decimals as three groups of four digits (the third group holds what follows the eighth decimal: at
    # most _MAX_DECIMALS - 8 = 4 digits), left-aligned. Each division is exact or lands strictly between two
    # whole numbers, so floor() is right.
    spill = np.maximum(decimals - 8, 0)
    divisor = _POW10_FLOAT[spill]
    leading = np.floor(fraction / divisor)
    third = ((fraction - leading * divisor) * _POW10_FLOAT[4 - spill]).astype(np.intp)
    leading *= _POW10_FLOAT[np.maximum(8 - decimals, 0)]
    first = np.floor(leading / 10_000.0)
    second = (leading - first * 10_000.0).astype(np.intp)
    first_index = first.astype(np.intp)
    # Trailing '0's dropped: the last group with a non-zero digit is written trimmed, those before it whole.
    third_trimmed = _TRIMMED4[third]
    second_trimmed = _TRIMMED4[second]
    first_trimmed = _TRIMMED4[first_index]
    third_set = third != 0
    second_set = third_set | (second != 0)
    first_word = np.where(second_set, _ASCII4[first_index], first_trimmed & _LOW32)
    second_word = np.where(third_set, _ASCII4[second], second_trimmed & _LOW32)
    words[:, 1] = first_word | (second_word << np.uint64(32))
    words[:, 2] = third_trimmed & _LOW32
    decimal_counts[:] = np.where(
        third_set, (third_trimmed >> np.uint64(32)) + np.uint64(8),
        np.where(second_set, (second_trimmed >> np.uint64(32)) + np.uint64(4), first_trimmed >> np.uint64(32)),
    )  # fmt: skip
    whole_integers = whole.astype(np.uint64)
    negative = np.signbit(exact)
    if whole_integers.shape[0] and int(whole_integers.max()) < 10_000:  # the usual case: a table of the texts
        index = whole_integers.astype(np.intp) + negative * 10_000
        whole_word = _WHOLE4[index]
        whole_lengths[:] = _WHOLE4_LENGTHS[index]
    else:
        exponent = biased - 127
        bits = np.where(fast, np.clip(exponent, -1, 24) + 1, 0)  # whole <= 2**bits: its digit count is one of two
        digit_count = _DIGITS_BELOW[bits] + (whole_integers >= _POW10[_DIGITS_BELOW[bits]])
        whole_word = _ascii_digits(whole_integers)
        whole_word &= _KEEP_LAST[digit_count]
        whole_word >>= np.uint64(8)  # room for the point in the last byte
        whole_word |= np.where(negative, np.uint64(45) << _SHIFTS[np.maximum(6 - digit_count, 0)], np.uint64(0))
        whole_lengths[:] = digit_count + negative
    whole_word |= (decimal_counts > 0).astype(np.uint64) * np.uint64(46 << 56)
    words[:, 0] = whole_word


_LOOKUP_FROM = 4096  # integers from this many on: formatted once per distinct value when they span few values


def int_fields(values: npt.ArrayLike) -> Fields:
    """Decimal text of integers."""
    numbers = np.asarray(values).ravel().astype(np.int64)
    if numbers.shape[0] >= _LOOKUP_FROM:
        lowest, highest = int(numbers.min()), int(numbers.max())
        few = highest - lowest < numbers.shape[0] // 4  # (a mesh's corners: its few hundred vertex numbers)
        if few and lowest > -10 * _MAX_WHOLE and highest < 10 * _MAX_WHOLE:  # (all within one word)
            return _looked_up_int_fields(numbers, lowest, highest)
    negative = numbers < 0
    fast = (numbers > -10 * _MAX_WHOLE) & (numbers < 10 * _MAX_WHOLE)
    magnitude = np.abs(np.where(fast, numbers, 0))
    count = numbers.shape[0]
    word = np.empty(count, np.uint64)
    lengths = np.empty(count, np.int64)
    small = magnitude.astype(np.uint64)
    for start in range(0, count, _CHUNK):
        part = slice(start, start + _CHUNK)
        word[part], lengths[part] = _whole_words(small[part], negative[part])
    width = int(lengths.max()) if count else 1
    chars = word.view(_U8).reshape(count, 8)[:, 8 - width :]
    if not fast.all():
        slow = np.flatnonzero(~fast)
        texts = [b"%d" % value for value in numbers[slow].tolist()]
        chars, lengths = _place_texts(chars, lengths, slow, texts)
    return Fields(chars, lengths)


def _looked_up_int_fields(numbers: Int64Array, lowest: int, highest: int) -> Fields:
    """int_fields of numbers within lowest..highest, far fewer values than numbers: the text of each value of the
    span made once by int_fields, then each number's looked up (the same bytes; its widest is lowest's or
    highest's, both among the numbers, so the width is the same too)."""
    table = int_fields(np.arange(lowest, highest + 1, dtype=np.int64))
    width = table.chars.shape[1]
    words = np.zeros((highest - lowest + 1, 8), np.uint8)
    words[:, 8 - width :] = table.chars
    index = numbers - lowest
    chars = words.view(np.uint64)[:, 0][index].view(_U8).reshape(numbers.shape[0], 8)[:, 8 - width :]
    return Fields(chars, table.lengths[index])


def _whole_words(whole: UInt64Array, negative: npt.NDArray[np.bool_]) -> tuple[UInt64Array, Int64Array]:
    """Whole numbers below 10**7 right-aligned in 8 bytes with a '-' when negative; their text lengths."""
    high, low = _split_at_four_digits(whole)
    word = _ascii_from_halves(high, low)
    digit_count = np.where(high > 0, 4 + _DIGITS4[high], _DIGITS4[low])
    length = digit_count + negative
    word &= _KEEP_LAST[digit_count]
    sign_at = _SHIFTS[np.maximum(7 - digit_count, 0)]
    word |= np.where(negative, np.uint64(45) << sign_at, np.uint64(0))
    return word, length.astype(np.int64)


def _split_at_four_digits(numbers: UInt64Array) -> tuple[UInt64Array, UInt64Array]:
    """numbers // 10**4 and numbers % 10**4 for numbers below 10**8 (a multiplication, exact below 4.9e8)."""
    high = (numbers * np.uint64(109_951_163)) >> np.uint64(40)
    return high, numbers - high * np.uint64(10_000)


def _ascii_from_halves(high: UInt64Array, low: UInt64Array) -> UInt64Array:
    """8 ASCII digits of high * 10**4 + low (both below 10**4), the first digit in the lowest byte."""
    halves = np.empty((high.shape[0], 2), np.uint32)
    halves[:, 0] = _ASCII4[high]
    halves[:, 1] = _ASCII4[low]
    digits: UInt64Array = halves.view(np.uint64).reshape(-1)
    return digits


def _ascii_digits(numbers: UInt64Array) -> UInt64Array:
    """8 ASCII digits (with leading zeros) of numbers below 10**8, the first digit in the lowest byte."""
    return _ascii_from_halves(*_split_at_four_digits(numbers))


def _place_texts(
    chars: Bytes2D, lengths: Int64Array, rows: Int64Array, texts: list[bytes]
) -> tuple[Bytes2D, Int64Array]:
    """The texts written over these rows (left-aligned, 0-padded); the table is copied wider only if it must be."""
    width = max(chars.shape[1], max(len(text) for text in texts))
    if width > chars.shape[1]:
        chars = np.pad(chars, ((0, 0), (0, width - chars.shape[1])))  # a copy, wider
    block = np.frombuffer(b"".join(text.ljust(width, b"\0") for text in texts), np.uint8).reshape(-1, width)
    chars[rows] = block
    lengths = lengths.copy()
    lengths[rows] = [len(text) for text in texts]
    return chars, lengths


# ---------------------------------------------------------------------------------------------------- lines


def literal(text: bytes, rows: int) -> Bytes2D:
    """The same bytes on every row (a read-only view)."""
    return np.broadcast_to(np.frombuffer(text, np.uint8), (rows, len(text)))


def table_lines(command: bytes, columns: list[Fields], widths: Int64Array | None = None) -> list[Bytes2D]:
    """`command n1 n2 ...` lines, one per row, as column blocks for `compact`; row i keeps its first widths[i]
    numbers (all when None). The fields' characters are used in place (blanked where a row is shorter)."""
    rows = columns[0].chars.shape[0] if columns else 0
    parts = [literal(command, rows)]
    for index, field in enumerate(columns):
        if widths is None:
            parts.append(literal(b" ", rows))
        else:
            short = widths <= index
            field.chars[short] = 0
            parts.append(np.where(short, 0, 32).astype(np.uint8)[:, None])
        parts.append(field.chars)
    parts.append(literal(b"\n", rows))
    return parts


_ROWS_AT_A_TIME = 1 << 15


def compact(parts: list[Bytes2D]) -> bytes:
    """The text of rows made of these column blocks side by side, one row after the other, fillers dropped."""
    return b"".join(compact_pieces(parts))


def compact_pieces(parts: list[Bytes2D]) -> list[bytes]:
    """`compact`'s text in consecutive pieces, made a few thousand rows at a time: the table of a million lines
    would not fit the CPU caches, and every pass over it would go to main memory."""
    rows = parts[0].shape[0] if parts else 0
    return [np.concatenate([part[start : start + _ROWS_AT_A_TIME] for part in parts], axis=1).tobytes()
            .translate(None, b"\0") for start in range(0, rows, _ROWS_AT_A_TIME)]  # fmt: skip
