"""Vectorised reading of the big `vertices { ... }` and `faces { ... }` blocks of a `.qmap.tmp` (spec §4, §5).

The first of three ways to read a block, for the layout every exporter writes: nothing in the block but
whitespace, commas and number tokens, integers in plain decimal, and (for faces) one face per line. The block's
bytes are classified at once, tokens are the runs of number characters and the single commas, and numbers are
converted column by column over all tokens together:

* an unsigned integer is a run of digits without a leading zero (a leading 0 is octal for the tokenizer), at most
  10 digits and at most 0xFFFFFFFF;
* a float is `[+-]digits[.digits]` read as `atof` reads it: its digits make an integer M < 2**53 and the value
  is M / 10**k (k <= 22), one correctly rounded division of two exact doubles, then narrowed to float32. Any
  other float token (an exponent, more digits) is converted by `float()`, the same correctly rounded double.

Whenever something does not fit (a comment, another layout, a token the tokenizer reads differently such as
`.5`, a syntax error, an index out of range) the functions return None and `fastblocks` takes over, whose
token-by-token fallback gives the exact value or the exact error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from .arrays import Array
from .parallel import ordered_map

FaceArrays = tuple[Array, Array, Array, Array, Array | None]
Item = TypeVar("Item")
Block = tuple[int, ...]  # start, end, count (-1: what it holds), and for faces the mesh's vertex count

_OTHER, _SPACE, _COMMA, _NUMBER = 0, 1, 2, 3
_CLASS = np.zeros(256, np.uint8)
_CLASS[list(b" \t\r\n\x0b")] = _SPACE
_CLASS[ord(",")] = _COMMA
_CLASS[list(b"0123456789+-.eE")] = _NUMBER
_BLOCK_BYTES = bytes(np.flatnonzero(_CLASS != _OTHER).tolist())
_COMMA_BYTE, _PLUS_BYTE = np.uint8(ord(",")), np.uint8(ord("+"))
_UINT32_MAX = 0xFFFFFFFF
_EXACT_MANTISSA = 1 << 53
_POWERS_OF_TEN = np.array([10.0**k for k in range(23)])
_TOKENS_AT_A_TIME = 1 << 16
_BYTES_AT_A_TIME = 1 << 20


class _Tokens:
    """The tokens of a block: start and end offsets (into the block) and whether each is a comma."""

    def __init__(self, block: Array, starts: Array, ends: Array, commas: Array) -> None:
        self.block = block
        self.starts = starts
        self.ends = ends
        self.commas = commas


def _tokens(text: bytes, start: int, end: int | None = None, plain: bool = False) -> tuple[_Tokens, int] | None:
    """The tokens of text[start:end] (to the next `}` without `end`; text[end] must be no number character).
    `plain`: the caller has checked that the block holds only whitespace, commas and number characters."""
    end = text.find(b"}", start) if end is None else end
    if end < 0:
        return None
    every_byte = np.frombuffer(text, np.uint8)
    block = every_byte[start:end]
    starts, run_ends, commas = [np.zeros(0, np.intp)], [np.zeros(0, np.intp)], [np.zeros(0, np.bool_)]
    for begin in range(0, block.shape[0], _BYTES_AT_A_TIME):  # pieces that stay in the CPU caches
        finish = min(begin + _BYTES_AT_A_TIME, block.shape[0])
        if not plain and text[start + begin : start + finish].translate(None, _BLOCK_BYTES):
            return None  # (bytes.translate finds other bytes in a megabyte in well under a ms)
        token_starts, is_comma, ends = _piece_tokens(text, start, block, begin, finish)
        if (block[token_starts] == ord(".")).any():
            return None  # '.5' is the symbol '.' followed by 5 for the tokenizer
        starts.append(token_starts)
        commas.append(is_comma)
        run_ends.append(ends)
    token_starts, is_comma = np.concatenate(starts), np.concatenate(commas)
    token_ends = token_starts + 1
    token_ends[~is_comma] = np.concatenate(run_ends)
    return _Tokens(block, token_starts, token_ends, is_comma), end


def _piece_tokens(text: bytes, start: int, block: Array, begin: int, finish: int) -> tuple[Array, Array, Array]:
    """The tokens that start in block[begin:finish]: their starts, whether each is a comma, and the ends of the
    number runs that end in it (offsets into the block)."""
    # Among the block's bytes, the number characters are `+` and everything above the comma. `number` also holds
    # the byte before the piece (none before the block) and the one after it (none after the block).
    inner = block[begin:finish]
    number = np.zeros(finish - begin + 2, np.bool_)
    np.greater(block[max(begin - 1, 0) : min(finish + 1, block.shape[0])], _COMMA_BYTE,
               out=number[1 - min(begin, 1) : number.shape[0] - 1 + (finish < block.shape[0])])  # fmt: skip
    if text.find(b"+", start + max(begin - 1, 0), start + min(finish + 1, block.shape[0])) >= 0:  # (seldom)
        number[1:-1] |= inner == _PLUS_BYTE
        if begin > 0:
            number[0] |= block[begin - 1] == _PLUS_BYTE
        if finish < block.shape[0]:
            number[-1] |= block[finish] == _PLUS_BYTE
    comma = inner == _COMMA_BYTE
    # (on booleans `a > b` is `a and not b`: a number character after none starts a run, one before none ends it)
    token_starts = np.flatnonzero(np.greater(number[1:-1], number[:-2]) | comma)
    run_ends = np.flatnonzero(np.greater(number[1:-1], number[2:])) + (begin + 1)
    return token_starts + begin, comma[token_starts], run_ends


_MOST_COLUMNS = 20  # characters of a `[+-]digits[.digits]` token of at most 19 digits


def _digit_columns(block: Array, starts: Array, ends: Array) -> tuple[Array, Array, Array, Array]:
    """For tokens `[+-]digits[.digits]`: the digits as an integer, how many follow the point, whether the token
    has that shape (at most 19 digits) and whether it is negative."""
    first = block[starts]
    negative = first == ord("-")
    body = starts + (negative | (first == ord("+")))
    lengths = ends - body
    count = starts.shape[0]
    mantissa = np.zeros(count, np.uint64)
    after_point = np.zeros(count, np.int64)
    digits = np.zeros(count, np.int64)
    seen_point = np.zeros(count, np.bool_)
    valid = (lengths >= 1) & (lengths <= _MOST_COLUMNS)
    last = block.shape[0] - 1
    for column in range(min(int(lengths.max(initial=0)), _MOST_COLUMNS)):  # (longer tokens are not valid anyway:
        # a run of 16,000 digits took a column pass for each)
        active = column < lengths
        char = block[np.minimum(body + column, last)]
        digit = char - np.uint8(48)  # wraps above 9 for anything but a digit
        is_digit = active & (digit < 10)
        is_point = active & (char == ord("."))
        valid &= ~active | is_digit | (is_point & ~seen_point)
        mantissa = np.where(is_digit, mantissa * np.uint64(10) + digit, mantissa)
        after_point += is_digit & seen_point
        digits += is_digit
        seen_point |= is_point
    valid &= (digits >= 1) & (digits <= 19)
    return mantissa, after_point, valid, negative


def _converted(tokens: _Tokens, which: Array, convert: Callable[[_Tokens, Array, Array], tuple[Array, Array]],
               dtype: type) -> tuple[Array, Array]:
    """`convert(tokens, starts, ends)` over the tokens at these indices, a bounded number at a time: the values
    and whether each token was read."""
    values: Array = np.empty(which.shape[0], dtype)
    read: Array = np.empty(which.shape[0], np.bool_)
    for begin in range(0, which.shape[0], _TOKENS_AT_A_TIME):
        part = which[begin : begin + _TOKENS_AT_A_TIME]
        values[begin : begin + part.shape[0]], read[begin : begin + part.shape[0]] = convert(
            tokens, tokens.starts[part], tokens.ends[part])
    return values, read


def _floats(tokens: _Tokens, which: Array) -> tuple[Array, Array]:
    """float32 values (atof, then narrowed) of the tokens at these indices, and which of them are floats."""
    values, read = _converted(tokens, which, _doubles, np.float64)
    with np.errstate(over="ignore"):
        return values.astype(np.float32), read


def _doubles(tokens: _Tokens, starts: Array, ends: Array) -> tuple[Array, Array]:
    block = tokens.block
    values: Array
    if block.shape[0] >= 8 and (block[np.maximum(ends - 7, 0)] == ord(".")).all():  # every token may be %f
        mantissa, valid, negative = _six_decimal_columns(block, starts, ends)
        after_point = np.full(starts.shape[0], 6, np.int64)
    else:  # other spellings (%g, more or fewer decimals, a sign '+')
        mantissa, after_point, valid, negative = _short_decimal_columns(block, starts, ends)
    others = np.flatnonzero(~valid)
    if not others.shape[0] and (after_point == 6).all():  # (the usual case, every token %f: one power of ten)
        exact = mantissa < np.uint64(_EXACT_MANTISSA)
        values = mantissa.astype(np.float64) / _POWERS_OF_TEN[6]
    else:
        if others.shape[0]:  # longer spellings, tokens in the block's first 16 bytes: the general columns
            mantissa[others], after_point[others], valid[others], _ = _digit_columns(block, starts[others],
                                                                                     ends[others])  # fmt: skip
        exact = valid & (mantissa < np.uint64(_EXACT_MANTISSA)) & (after_point <= 22)
        values = mantissa.astype(np.float64) / _POWERS_OF_TEN[np.minimum(after_point, 22)]
    np.negative(values, out=values, where=negative)
    for index in np.flatnonzero(~exact).tolist():  # exponents, long numbers: few
        try:
            values[index] = float(tokens.block[starts[index] : ends[index]].tobytes())
            exact[index] = True
        except ValueError:
            pass
    return values, exact


_MOST_WHOLE_DIGITS = 12


def _six_decimal_columns(block: Array, starts: Array, ends: Array) -> tuple[Array, Array, Array]:
    """_digit_columns for the tokens `[-]digits.dddddd` (printf's %f, as exporters write floats) in a few passes:
    the point and the six decimals sit at fixed places before the token's end, so the units digit, the point and
    the decimals are read as one 8-byte word, and only the digits before the units need a column each. The digits
    as an integer, whether the token has that shape (at most _MOST_WHOLE_DIGITS before the point; the others'
    integers mean nothing) and whether it is negative."""
    negative = block[starts] == ord("-")
    if block.shape[0] < 8:  # (no room for the shape: every token goes the general way)
        return np.zeros(starts.shape[0], np.uint64), np.zeros(starts.shape[0], np.bool_), negative
    body = starts + negative
    point = np.maximum(ends - 7, 0)  # (point + 6 is never past the block: a token's end is at most its length)
    whole = point - body  # digits before the point
    shaped = (whole >= 1) & (whole <= _MOST_WHOLE_DIGITS)
    # The word from the units digit (`point - 1`: in every shaped token) to the last decimal; as eight digit
    # characters, '0', the units and the decimals, its value is the units times 10**6 plus the decimals.
    words = _words_at(block, np.maximum(point - 1, 0))
    shaped &= (words >> np.uint64(8)) & np.uint64(0xFF) == np.uint64(ord("."))
    digits = (words & np.uint64(0xFFFF_FFFF_FFFF_0000)) | ((words & np.uint64(0xFF)) << np.uint64(8)) | np.uint64(0x30)
    shaped &= _eight_digit_characters(digits)
    mantissa = _eight_digits_value(digits)
    for place in range(1, min(int(whole.max(initial=0)), _MOST_WHOLE_DIGITS)):  # the digits before the units
        present = place < whole
        digit = block[np.maximum(point - 1 - place, 0)] - np.uint8(48)  # wraps above 9 for anything but a digit
        shaped &= ~present | (digit < 10)
        mantissa += np.multiply(digit * present, np.uint64(10 ** (place + 6)), dtype=np.uint64)  # (uint64
        # product: numpy would otherwise take the smallest type that holds the scalar)
    return mantissa, shaped, negative


_MOST_SHORT_CHARACTERS = 16  # digits and point of a token read as two words


def _short_decimal_columns(block: Array, starts: Array, ends: Array) -> tuple[Array, Array, Array, Array]:
    """_digit_columns for tokens `[+-]digits[.digits]` of at most 16 characters after the sign (as `%.9g` and
    `%f` write floats) in a fixed number of passes: the 16 bytes that end at the token's end, read as two words
    with the bytes before the token made '0', are 16 digit characters once the point (if any) is made '0' too.
    Their value is the digits with a 0 put in at the point; the digits left of the point, read with those from
    the point on made '0', give the part to take out. The digits as an integer, how many follow the point, whether
    the token has that shape (the others' integers mean nothing; also any token ending in the block's first 16
    bytes) and whether it is negative."""
    first = block[starts]
    negative = first == ord("-")
    lengths = ends - starts - (negative | (first == ord("+")))
    shaped = (lengths >= 1) & (lengths <= _MOST_SHORT_CHARACTERS) & (ends >= _MOST_SHORT_CHARACTERS)
    if block.shape[0] < _MOST_SHORT_CHARACTERS:
        return np.zeros(starts.shape[0], np.uint64), np.zeros(starts.shape[0], np.int64), shaped, negative
    lengths = np.clip(lengths, 0, _MOST_SHORT_CHARACTERS)
    low = _as_digits(_words_at(block, np.maximum(ends - 8, 0)), _KEEP_HIGH_BYTES[np.minimum(lengths, 8)])
    high = _as_digits(_words_at(block, np.maximum(ends - 16, 0)), _KEEP_HIGH_BYTES[np.maximum(lengths - 8, 0)])
    point_low, point_high = _byte_flags(low, _POINTS) >> np.uint64(7), _byte_flags(high, _POINTS) >> np.uint64(7)
    # (each flag is 1 at the point's byte: at most one point in all)
    shaped &= ((point_low & (point_low - np.uint64(1))) == 0) & ((point_high & (point_high - np.uint64(1))) == 0)
    in_low = point_low != 0
    point = point_low | point_high
    shaped &= ~in_low | (point_high == 0)
    has_point = point != 0
    low ^= point_low * _POINT_TO_ZERO
    high ^= point_high * _POINT_TO_ZERO
    shaped &= _eight_digit_characters(low) & _eight_digit_characters(high)
    shaped &= lengths > has_point  # a digit at least
    high_value = _eight_digits_value(high)
    value = high_value * np.uint64(10**8) + _eight_digits_value(low)
    below_point = point - np.uint64(1)  # (the bytes below the point's: all of them without a point)
    word = np.where(in_low, low, high)
    left_part = _eight_digits_value((word & below_point) | (_ZERO_CHARACTERS & ~below_point))
    left = np.where(in_low, high_value * np.uint64(10**8) + left_part, left_part * np.uint64(10**8))
    mantissa = np.where(has_point, left // np.uint64(10) + (value - left), value)
    place = ((point * _BYTE_PLACES) >> np.uint64(56)).astype(np.int64)  # the point's byte in its word
    after_point = np.where(in_low, 7 - place, np.where(has_point, 15 - place, 0))
    return mantissa, after_point, shaped, negative


def _as_digits(words: Array, keep: Array) -> Array:
    """The words with the bytes outside `keep` made '0'."""
    made: Array = (words & keep) | (_ZERO_CHARACTERS & ~keep)
    return made


def _byte_flags(words: Array, pattern: np.uint64) -> Array:
    """0x80 in each byte of the words that equals the pattern's, 0 in the others (no carry between bytes)."""
    differ = words ^ pattern
    flags: Array = ~(((differ & _LOW_SEVEN_BITS) + _LOW_SEVEN_BITS) | differ | _LOW_SEVEN_BITS)
    return flags


_ZERO_CHARACTERS, _POINTS, _LOW_SEVEN_BITS = (np.uint64(0x0101_0101_0101_0101 * byte) for byte in (0x30, 0x2E, 0x7F))
_POINT_TO_ZERO = np.uint64(ord(".") ^ ord("0"))
_BYTE_PLACES = np.uint64(0x0001_0203_0405_0607)  # times 1 << 8i: i in the top byte
_KEEP_HIGH_BYTES = np.array([((1 << 64) - 1) ^ ((1 << (64 - 8 * kept)) - 1) for kept in range(9)], np.uint64)


def _words_at(block: Array, offsets: Array) -> Array:
    """The 8 bytes of the block from each offset (at most its length - 8) as a little-endian uint64."""
    every_word: Array = np.ndarray((block.shape[0] - 7,), "<u8", block, 0, (1,))  # (a word at every byte: a view)
    words: Array = every_word[offsets].astype(np.uint64, copy=False)
    return words


_HIGH_NIBBLES, _THREES, _SIXES = (np.uint64(0x0101_0101_0101_0101 * byte) for byte in (0xF0, 0x30, 0x06))


def _eight_digit_characters(words: Array) -> Array:
    """Whether each of the words' 8 bytes is '0' to '9' (a high nibble of 3, and a low one that adding 6 keeps
    below 16: a byte whose sum carries into the next one has a high nibble other than 3 itself)."""
    checked: Array = ((words & _HIGH_NIBBLES) == _THREES) & (((words + _SIXES) & _HIGH_NIBBLES) == _THREES)
    return checked


def _eight_digits_value(words: Array) -> Array:
    """The numbers that 8 digit characters spell (the first byte the most significant), by three multiplications:
    neighbouring digits, then pairs, then quadruples joined (uint64 arithmetic wraps as the steps expect)."""
    values = ((words & np.uint64(0x0F0F_0F0F_0F0F_0F0F)) * np.uint64(2561)) >> np.uint64(8)
    values = ((values & np.uint64(0x00FF_00FF_00FF_00FF)) * np.uint64(6553601)) >> np.uint64(16)
    joined: Array = ((values & np.uint64(0x0000_FFFF_0000_FFFF)) * np.uint64(42949672960001)) >> np.uint64(32)
    return joined


def _uints(tokens: _Tokens, which: Array) -> tuple[Array, Array]:
    """Values of plain decimal unsigned integer tokens at these indices, and which tokens are such integers."""
    return _converted(tokens, which, _plain_uints, np.int64)


def _plain_uints(tokens: _Tokens, starts: Array, ends: Array) -> tuple[Array, Array]:
    """Tokens of 1 to 10 digits, no leading 0 (octal for the tokenizer) but `0` itself, at most 0xFFFFFFFF: their
    values, and which tokens are such."""
    block = tokens.block
    lengths = ends - starts
    plain = (lengths >= 1) & (lengths <= 10) & ((block[starts] != ord("0")) | (lengths == 1))
    # The digits from the token's end leftwards, each times its power of ten (no select per column).
    ones = block[ends - 1] - np.uint8(48)  # wraps above 9 for anything but a digit
    plain &= ones < 10
    values = ones.astype(np.int64)
    for place in range(1, min(int(lengths.max(initial=0)), 10)):
        present = place < lengths
        digit = block[np.maximum(ends - 1 - place, 0)] - np.uint8(48)
        plain &= ~present | (digit < 10)
        values += np.multiply(digit * present, np.int64(10**place), dtype=np.int64)
    plain &= values <= _UINT32_MAX
    return values, plain


# ------------------------------------------------------------------------------------------ many blocks at once
# Blocks are read in groups: their bytes joined (a newline between two blocks) into one buffer of a few megabytes,
# tokenised and converted together, so that a map of many small meshes costs a few numpy calls per group rather
# than per block. A block that does not fit the layout gets None and is read on its own by the slower paths.

_GROUP_BYTES = 1 << 20


class _Group:
    """Blocks joined into one buffer: their tokens, and for each token the block (within the group) it is in."""

    def __init__(self, text: bytes, spans: list[tuple[int, int]], plain: bool = False) -> None:
        self.block_count = len(spans)
        if len(spans) == 1:  # read in place: a large block is not copied
            offsets = np.zeros(1, np.int64)
            scanned = _tokens(text, *spans[0], plain=plain)
        else:
            view = memoryview(text)
            joined = b"\n".join([view[start:end] for start, end in spans]) + b"}"
            offsets = np.cumsum([0] + [end - start + 1 for start, end in spans[:-1]])
            scanned = _tokens(joined, 0, plain=plain)
        self.tokens = scanned[0] if scanned is not None else None
        if self.tokens is not None:
            self.first = np.searchsorted(self.tokens.starts, offsets)  # each block's first token
            self.token_counts = np.diff(np.append(self.first, self.tokens.starts.shape[0]))
            # (a block's tokens are consecutive: its number repeated, in linear time, not a search per token)
            self._owner = (np.repeat(np.arange(len(spans), dtype=np.intp), self.token_counts) if len(spans) > 1
                           else None)  # fmt: skip

    def owner(self, tokens: Array) -> Array:
        """The block (within the group) of each of these tokens."""
        if self._owner is None:  # one block: every token is in block 0 (a view, no array of zeros)
            return np.broadcast_to(np.intp(0), np.shape(tokens))
        owners: Array = self._owner[tokens]
        return owners

    def blocks_of(self, tokens: Array) -> Array:
        """Which blocks hold any of these tokens (a mask over the group's blocks)."""
        if self._owner is None:
            return np.array([np.size(tokens) > 0])
        return np.bincount(self._owner[tokens], minlength=self.block_count) > 0

    def split(self, values: Array, counts: Array) -> list[Array]:
        return np.split(values, np.cumsum(counts)[:-1])


def _groups(blocks: Sequence[Block]) -> list[list[int]]:
    """Indices of consecutive blocks, a group at most _GROUP_BYTES long (or one block, if longer)."""
    groups: list[list[int]] = []
    size = 0
    for index, (start, end, *_) in enumerate(blocks):
        if not groups or size + end - start > _GROUP_BYTES:
            groups.append([])
            size = 0
        groups[-1].append(index)
        size += end - start + 1
    return groups


_VERTEX_LAYOUT = np.array([False, True, False, True, False])  # x , y , z


def _vertex_layouts(group: _Group, commas: Array, sized: Array) -> Array:
    """Per block: its tokens are `x , y , z` rows (`sized`: the block has 5 tokens per vertex)."""
    if group.block_count == 1:
        return np.array([bool(sized[0]) and bool((commas.reshape(-1, 5) == _VERTEX_LAYOUT).all())])
    every_token = np.arange(commas.shape[0])
    local = every_token - group.first[group.owner(every_token)]
    return ~group.blocks_of(np.flatnonzero(commas != _VERTEX_LAYOUT[local % 5]))


def parse_vertex_blocks(text: bytes, blocks: list[tuple[int, int, int]], plain: bool = False) -> list[Array | None]:
    """Vertex blocks text[start:end] (after `{`, up to `}`) of `count` vec3s `x,y,z` each: float32 (count, 3)
    arrays, or None for a block to be read another way. Groups of blocks, and the parts of a large block, are read
    side by side. `plain`: the caller has checked that the blocks hold only whitespace, commas and numbers."""
    return read_together([vertex_plan(text, blocks, plain)])[0]


class Plan:
    """Blocks of one kind cut into groups: each group read on its own (`read`), side by side with the groups of
    other plans, then the results put back together block by block (`finish`)."""

    def __init__(self, groups: list[list[int]], read: Callable[[list[int]], list[Any]],
                 finish: Callable[[list[list[Any]]], list[Any]]) -> None:
        self.groups, self.read, self.finish = groups, read, finish


def read_together(plans: Sequence[Plan]) -> list[list[Any]]:
    """Every plan's results, the groups of all of them read on one set of threads (no core waits for the last
    group of one kind while the next kind could be read)."""
    jobs = [(plan, members) for plan in plans for members in plan.groups]
    found = ordered_map(lambda job: job[0].read(job[1]), jobs)
    results, first = [], 0
    for plan in plans:
        results.append(plan.finish(found[first : first + len(plan.groups)]))
        first += len(plan.groups)
    return results


def vertex_plan(text: bytes, blocks: list[tuple[int, int, int]], plain: bool = False) -> Plan:
    """parse_vertex_blocks as a plan: its results are those of parse_vertex_blocks."""
    parts, block_of_part = _parts(text, blocks)
    groups = _groups(parts)

    def read(members: list[int]) -> list[Array | None]:
        return _group_vertices(_Group(text, [(parts[i][0], parts[i][1]) for i in members], plain),
                               np.array([parts[i][2] for i in members], np.int64))  # fmt: skip

    def finish(found: list[list[Array | None]]) -> list[Array | None]:
        return _whole_blocks(_in_block_order(len(parts), groups, found), block_of_part,
                             [count for _, _, count in blocks], _joined_vertices)  # fmt: skip

    return Plan(groups, read, finish)


def _in_block_order(count: int, groups: list[list[int]], found: list[list[Item | None]]) -> list[Item | None]:
    results: list[Item | None] = [None] * count
    for members, arrays in zip(groups, found, strict=True):
        for index, array in zip(members, arrays, strict=True):
            results[index] = array
    return results


def _group_vertices(group: _Group, counts: Array) -> list[Array | None]:
    """Vertices of each block of the group (a count of -1: as many as the block holds)."""
    tokens = group.tokens
    if tokens is None:
        return [None] * group.block_count
    good = np.where(counts < 0, group.token_counts % 5 == 0, group.token_counts == 5 * counts)
    good &= _vertex_layouts(group, tokens.commas, good)
    in_good_block = good[group.owner(np.arange(tokens.starts.shape[0]))] if group.block_count > 1 else good[0]
    numbers = np.flatnonzero(~tokens.commas & in_good_block)
    values, read = _floats(tokens, numbers)
    good &= ~group.blocks_of(numbers[~read])
    kept = good[group.owner(numbers)]
    parts = group.split(values[kept], np.where(good, 3 * (group.token_counts // 5), 0))
    return [parts[slot].reshape(-1, 3) if good[slot] else None for slot in range(group.block_count)]


_PART_BYTES = 1 << 20  # a block longer than this is read in parts of about this size, cut at line ends


def _parts(text: bytes, blocks: Sequence[Block]) -> tuple[list[Block], list[int]]:
    """The blocks, each large one cut at line ends into parts of unknown count (-1), and each part's block. A part
    ends at a newline (no number character), which the next part starts with."""
    parts: list[Block] = []
    block_of_part: list[int] = []
    for index, (start, end, *sizes) in enumerate(blocks):
        begin = start
        while end - begin > 2 * _PART_BYTES:
            cut = text.find(b"\n", begin + _PART_BYTES, end)
            if cut < 0:
                break
            parts.append((begin, cut, -1, *sizes[1:]))
            block_of_part.append(index)
            begin = cut
        parts.append((begin, end, sizes[0] if begin == start else -1, *sizes[1:]))
        block_of_part.append(index)
    return parts, block_of_part


def _whole_blocks(found: list[Item | None], block_of_part: list[int], counts: list[int],
                  join: Callable[[list[Item]], tuple[Item, int]]) -> list[Item | None]:
    """Each block's parts joined by `join` (which also counts the rows), None if any part is None: a block must hold
    `count` rows in all."""
    results: list[Item | None] = []
    first = 0
    for index, count in enumerate(counts):
        last = first
        while last < len(block_of_part) and block_of_part[last] == index:
            last += 1
        pieces = found[first:last]
        first = last
        if len(pieces) == 1:
            results.append(pieces[0])
            continue
        present = [piece for piece in pieces if piece is not None]
        joined, rows = join(present) if len(present) == len(pieces) else (None, -1)
        results.append(joined if rows == count else None)
    return results


def _joined_vertices(pieces: list[Array]) -> tuple[Array, int]:
    joined = np.concatenate(pieces)
    return joined, len(joined)


def _joined_faces(pieces: list[FaceArrays]) -> tuple[FaceArrays, int]:
    sizes, materials, smooth, corners, uvs = (list(column) for column in zip(*pieces, strict=True))
    joined_uvs = None if uvs[0] is None else np.concatenate([part for part in uvs if part is not None])
    joined = (np.concatenate(sizes), np.concatenate(materials), np.concatenate(smooth), np.concatenate(corners),
              joined_uvs)  # fmt: skip
    return joined, len(joined[0])


def parse_vertex_block(text: bytes, start: int, count: int) -> tuple[Array, int] | None:
    """`count` vec3s `x,y,z` from `start` to the closing brace: (float32 (count, 3), the brace's position)."""
    end = text.find(b"}", start)
    if end < 0:
        return None
    vertices = parse_vertex_blocks(text, [(start, end, count)])[0]
    return None if vertices is None else (vertices, end)


def parse_face_blocks(text: bytes, blocks: list[tuple[int, int, int, int]], has_uv: bool,
                      plain: bool = False) -> list[FaceArrays | None]:
    """Face blocks text[start:end] of `count` faces each, one per line, indices below `vertex_count`, in
    tmp_parser's layout (a triangle repeats corner 0 in slot 3); None for a block to be read another way. Groups of
    blocks, and the parts of a large block, are read side by side."""
    return read_together([face_plan(text, blocks, has_uv, plain)])[0]


def face_plan(text: bytes, blocks: list[tuple[int, int, int, int]], has_uv: bool, plain: bool = False) -> Plan:
    """parse_face_blocks as a plan: its results are those of parse_face_blocks."""
    parts, block_of_part = _parts(text, blocks)
    groups = _groups(parts)

    def read(members: list[int]) -> list[FaceArrays | None]:
        group = _Group(text, [(parts[i][0], parts[i][1]) for i in members], plain)
        if group.tokens is None:
            return [None] * len(members)
        counts = np.array([parts[i][2] for i in members], np.int64)
        vertex_counts = np.array([parts[i][3] for i in members], np.int64)
        return _group_faces(group, counts, vertex_counts, has_uv)

    def finish(found: list[list[FaceArrays | None]]) -> list[FaceArrays | None]:
        return _whole_blocks(_in_block_order(len(parts), groups, found), block_of_part,
                             [count for _, _, count, _ in blocks], _joined_faces)  # fmt: skip

    return Plan(groups, read, finish)


def _group_faces(group: _Group, counts: Array, vertex_counts: Array, has_uv: bool) -> list[FaceArrays | None]:
    tokens = group.tokens
    assert tokens is not None
    stride = 4 if has_uv else 1
    lines = _face_lines(tokens, stride)
    if lines is None:
        return [None] * group.block_count
    first, sizes, is_face = lines
    line_owner = group.owner(first)
    good = ~group.blocks_of(first[~is_face])
    face_counts = np.bincount(line_owner, minlength=group.block_count)
    good &= (counts < 0) | (face_counts == counts)  # (a count of -1: as many as the block holds)
    present = np.arange(4)[None, :] < sizes[:, None]
    last = tokens.starts.shape[0] - 1  # (lines that are no face may be too short: their blocks are dropped)
    index_tokens = first[:, None] + 3 + stride * np.arange(4)[None, :]
    header_tokens = np.minimum(first[:, None] + np.array([1, 2])[None, :], last).ravel()
    header, header_read = _uints(tokens, header_tokens)
    good &= ~group.blocks_of(header_tokens[~header_read])
    corner_tokens = np.minimum(index_tokens[present], last)
    corner_indices, corner_read = _uints(tokens, corner_tokens)
    corner_read &= corner_indices < vertex_counts[group.owner(corner_tokens)]
    good &= ~group.blocks_of(corner_tokens[~corner_read])
    indices = np.zeros((first.shape[0], 4), np.int64)
    indices[present] = corner_indices
    triangles = sizes == 3
    indices[triangles, 3] = indices[triangles, 0]
    uvs = None
    if has_uv:
        separators = np.minimum((index_tokens + 2)[present], last)
        numbers = np.minimum(np.stack([(index_tokens + 1)[present], (index_tokens + 3)[present]], axis=1).ravel(),
                             last)
        good &= ~group.blocks_of(separators[~tokens.commas[separators]]) & ~group.blocks_of(
            numbers[tokens.commas[numbers]])
        values, read = _floats(tokens, numbers)
        good &= ~group.blocks_of(numbers[~read])
        words = np.zeros((first.shape[0], 4), np.uint64)  # (a corner's u and v as one 8-byte word: numpy moves
        words[present] = values.view(np.uint64)  # words several times quicker than pairs of floats; the same bytes)
        words[triangles, 3] = words[triangles, 0]
        uvs = words.view(np.float32).reshape(-1, 4, 2)
    else:
        good &= ~group.blocks_of(np.flatnonzero(tokens.commas))
    header = header.reshape(-1, 2)
    line_counts = np.where(good, face_counts, 0)
    kept: Array | slice = slice(None)  # (the usual case, every line kept: no copy of the group's tables)
    if not good.all():
        kept = good[line_owner]
    columns = [sizes[kept].astype(np.int8), np.ascontiguousarray(header[kept, 0]), header[kept, 1] > 0, indices[kept]]
    if uvs is not None:
        columns.append(uvs[kept])
    face_sizes, materials, smooth, corners, *uv_parts = [group.split(column, line_counts) for column in columns]
    results: list[FaceArrays | None] = [None] * group.block_count
    for slot in np.flatnonzero(good).tolist():
        results[slot] = (face_sizes[slot], materials[slot], smooth[slot], corners[slot], uv_parts[0][slot] if uv_parts
                         else None)  # fmt: skip
    return results


def _face_lines(tokens: _Tokens, per_corner: int) -> tuple[Array, Array, Array] | None:
    """Each line's first token, its face size (3 or 4; 3 where the line is not a face) and whether the line holds
    one face: a size token, material, smooth flag and `per_corner` tokens per corner. None without tokens."""
    token_count = tokens.starts.shape[0]
    if token_count == 0:
        return None
    after_newlines = np.searchsorted(tokens.starts, np.flatnonzero(tokens.block == ord("\n")))
    firsts = np.concatenate(([0], after_newlines[after_newlines < token_count]))  # each line's first token
    line_starts = firsts[np.concatenate(([True], firsts[1:] != firsts[:-1]))]  # blank lines add none
    line_lengths = np.diff(np.append(line_starts, token_count))
    size_text = tokens.block[tokens.starts[line_starts]]
    one_char = tokens.ends[line_starts] - tokens.starts[line_starts] == 1
    sizes = np.where(one_char & (size_text == ord("4")), 4, 3)
    is_face = one_char & ((size_text == ord("3")) | (size_text == ord("4")))
    is_face &= line_lengths == 3 + per_corner * sizes
    return line_starts, sizes, is_face


def parse_face_block(text: bytes, start: int, count: int, vertex_count: int,
                     has_uv: bool) -> tuple[FaceArrays, int] | None:
    """`count` faces, one per line, from `start` to the closing brace: the arrays and the brace's position."""
    end = text.find(b"}", start)
    if end < 0:
        return None
    faces = parse_face_blocks(text, [(start, end, count, vertex_count)], has_uv)[0]
    return None if faces is None else (faces, end)
