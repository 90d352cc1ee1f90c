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

from collections.abc import Callable

import numpy as np

from .arrays import Array

FaceArrays = tuple[Array, Array, Array, Array, Array | None]

_OTHER, _SPACE, _COMMA, _NUMBER = 0, 1, 2, 3
_CLASS = np.zeros(256, np.uint8)
_CLASS[list(b" \t\r\n\x0b")] = _SPACE
_CLASS[ord(",")] = _COMMA
_CLASS[list(b"0123456789+-.eE")] = _NUMBER
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


def _tokens(text: bytes, start: int) -> tuple[_Tokens, int] | None:
    end = text.find(b"}", start)
    if end < 0:
        return None
    block = np.frombuffer(text, np.uint8, count=end - start, offset=start)
    starts, run_ends, commas = [], [], []
    for begin in range(0, block.shape[0], _BYTES_AT_A_TIME):  # pieces that stay in the CPU caches
        piece = _CLASS[block[max(begin - 1, 0) : begin + _BYTES_AT_A_TIME + 1]]  # with a byte of each neighbour
        if begin == 0:
            piece = np.concatenate(([_SPACE], piece))
        if begin + _BYTES_AT_A_TIME >= block.shape[0]:
            piece = np.concatenate((piece, [_SPACE]))
        inner = piece[1:-1]
        if (inner == _OTHER).any():
            return None
        number = piece == _NUMBER
        comma = inner == _COMMA
        token_starts = np.flatnonzero((number[1:-1] & ~number[:-2]) | comma)
        starts.append(token_starts + begin)
        commas.append(comma[token_starts])
        run_ends.append(np.flatnonzero(number[1:-1] & ~number[2:]) + begin + 1)
    token_starts, is_comma = np.concatenate(starts), np.concatenate(commas)
    token_ends = token_starts + 1
    token_ends[~is_comma] = np.concatenate(run_ends)
    if (block[token_starts[~is_comma]] == ord(".")).any():
        return None  # '.5' is the symbol '.' followed by 5 for the tokenizer
    return _Tokens(block, token_starts, token_ends, is_comma), end


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
    valid = (lengths >= 1) & (lengths <= 20)
    last = block.shape[0] - 1
    for column in range(int(lengths.max(initial=0))):
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


def _converted(tokens: _Tokens, which: Array, convert: Callable[[_Tokens, Array, Array], Array | None],
               dtype: type) -> Array | None:
    """`convert(tokens, starts, ends)` over the tokens at these indices, a bounded number at a time."""
    values: Array = np.empty(which.shape[0], dtype)
    for begin in range(0, which.shape[0], _TOKENS_AT_A_TIME):
        part = which[begin : begin + _TOKENS_AT_A_TIME]
        chunk = convert(tokens, tokens.starts[part], tokens.ends[part])
        if chunk is None:
            return None
        values[begin : begin + part.shape[0]] = chunk
    return values


def _floats(tokens: _Tokens, which: Array) -> Array | None:
    """float32 values (atof, then narrowed) of the tokens at these indices, or None if one is not a float."""
    values = _converted(tokens, which, _doubles, np.float64)
    if values is None:
        return None
    with np.errstate(over="ignore"):
        return values.astype(np.float32)


def _doubles(tokens: _Tokens, starts: Array, ends: Array) -> Array | None:
    mantissa, after_point, valid, negative = _digit_columns(tokens.block, starts, ends)
    exact = valid & (mantissa < np.uint64(_EXACT_MANTISSA)) & (after_point <= 22)
    values: Array = mantissa.astype(np.float64) / _POWERS_OF_TEN[np.minimum(after_point, 22)]
    np.negative(values, out=values, where=negative)
    for index in np.flatnonzero(~exact).tolist():  # exponents, long numbers: few
        try:
            values[index] = float(tokens.block[starts[index] : ends[index]].tobytes())
        except ValueError:
            return None
    return values


def _uints(tokens: _Tokens, which: Array) -> Array | None:
    """Values of plain decimal unsigned integer tokens at these indices, or None if one is anything else."""
    return _converted(tokens, which, _plain_uints, np.int64)


def _plain_uints(tokens: _Tokens, starts: Array, ends: Array) -> Array | None:
    mantissa, after_point, valid, negative = _digit_columns(tokens.block, starts, ends)
    lengths = ends - starts
    plain = valid & ~negative & (tokens.block[starts] != ord("+")) & (lengths <= 10)
    plain &= (after_point == 0) & (tokens.block[np.maximum(ends - 1, 0)] != ord("."))
    plain &= (tokens.block[starts] != ord("0")) | (lengths == 1)  # a leading 0 is octal
    if not plain.all() or (mantissa > np.uint64(_UINT32_MAX)).any():
        return None
    return mantissa.astype(np.int64)


def parse_vertex_block(text: bytes, start: int, count: int) -> tuple[Array, int] | None:
    """`count` vec3s `x,y,z` from `start` to the closing brace: (float32 (count, 3), the brace's position)."""
    scanned = _tokens(text, start)
    if scanned is None:
        return None
    tokens, end = scanned
    if tokens.starts.shape[0] != 5 * count:
        return None
    layout = tokens.commas.reshape(count, 5)
    if not (layout == np.array([False, True, False, True, False])).all():
        return None
    values = _floats(tokens, np.flatnonzero(~tokens.commas))
    if values is None:
        return None
    return values.reshape(count, 3), end


def parse_face_block(text: bytes, start: int, count: int, vertex_count: int,
                     has_uv: bool) -> tuple[FaceArrays, int] | None:
    """`count` faces, one per line, from `start` to the closing brace, in tmp_parser's layout (a triangle repeats
    corner 0 in slot 3)."""
    scanned = _tokens(text, start)
    if scanned is None:
        return None
    tokens, end = scanned
    lines = _face_lines(tokens, count, has_uv)
    if lines is None:
        return None
    first, sizes = lines
    stride = 4 if has_uv else 1
    present = np.arange(4)[None, :] < sizes[:, None]
    index_tokens = first[:, None] + 3 + stride * np.arange(4)[None, :]
    header = _uints(tokens, (first[:, None] + np.array([1, 2])[None, :]).ravel())
    corner_indices = _uints(tokens, index_tokens[present])
    if header is None or corner_indices is None or (corner_indices >= vertex_count).any():
        return None
    indices = np.zeros((count, 4), np.int64)
    indices[present] = corner_indices
    triangles = sizes == 3
    indices[triangles, 3] = indices[triangles, 0]
    uvs = None
    if has_uv:
        separators = tokens.commas[(index_tokens + 2)[present]]
        numbers = np.stack([(index_tokens + 1)[present], (index_tokens + 3)[present]], axis=1).ravel()
        if not separators.all() or tokens.commas[numbers].any():
            return None
        values = _floats(tokens, numbers)
        if values is None:
            return None
        uvs = np.zeros((count, 4, 2), np.float32)
        uvs[present] = values.reshape(-1, 2)
        uvs[triangles, 3] = uvs[triangles, 0]
    elif tokens.commas.any():
        return None
    header = header.reshape(-1, 2)
    return (sizes.astype(np.int8), header[:, 0], header[:, 1] > 0, indices, uvs), end


def _face_lines(tokens: _Tokens, count: int, has_uv: bool) -> tuple[Array, Array] | None:
    """Each face's first token and its size, when every line that holds tokens holds exactly one face."""
    token_count = tokens.starts.shape[0]
    after_newlines = np.searchsorted(tokens.starts, np.flatnonzero(tokens.block == ord("\n")))
    firsts = np.concatenate(([0], after_newlines[after_newlines < token_count]))  # each line's first token
    line_starts = firsts[np.concatenate(([token_count > 0], firsts[1:] != firsts[:-1]))]  # blank lines add none
    if line_starts.shape[0] != count:
        return None
    line_lengths = np.diff(np.append(line_starts, tokens.starts.shape[0]))
    size_text = tokens.block[tokens.starts[line_starts]]
    one_char = tokens.ends[line_starts] - tokens.starts[line_starts] == 1
    sizes = np.where(one_char & (size_text == ord("3")), 3, np.where(one_char & (size_text == ord("4")), 4, 0))
    per_corner = 4 if has_uv else 1
    if (sizes == 0).any() or (line_lengths != 3 + per_corner * sizes).any():
        return None
    return line_starts, sizes
