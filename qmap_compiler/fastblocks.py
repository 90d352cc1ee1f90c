"""Fast parsing of the big `vertices { ... }` and `faces { ... }` blocks of a `.qmap.tmp`.

Only the plain case is handled: a block holding nothing but whitespace, commas and number tokens, with
integers written in plain decimal. In that case `bytes.split` finds exactly the tokenizer's tokens, and
Python's `float` accepts exactly the tokenizer's float syntax (letters other than the exponent markers are
excluded up front, `d`/`D` exponents are rewritten to `e`, tokens starting with `.` are excluded), giving
the same correctly rounded double that is then narrowed to float32. Whenever anything does not fit
(comments, octal or hex, a syntax error, a wrong count, an index out of range...) the functions return
None and the caller re-parses the block token by token, which yields the exact value or the exact error.
"""

from __future__ import annotations

import operator

import numpy as np

from . import blockscan
from .arrays import Array

_ALLOWED = b" \t\r\n\x0b,0123456789+-.eEdD"
_SEPARATORS_TO_SPACE = bytes.maketrans(b"\t\r\n\x0b,", b"     ")
_NONZERO_TO_ONE = bytes.maketrans(b"23456789", b"11111111")
_UINT32_MAX = 0xFFFFFFFF

FaceArrays = tuple[Array, Array, Array, Array, Array | None]


def _block_tokens(text: bytes, start: int) -> tuple[list[bytes], int] | None:
    """Tokens of the block from `start` to the next `}` (commas kept), or None if it is not plain."""
    end = text.find(b"}", start)
    if end < 0:
        return None
    block = text[start:end]
    if block.translate(None, _ALLOWED) or block.startswith(b"."):
        return None
    if b" ." in block.translate(_SEPARATORS_TO_SPACE):
        return None  # '.5' is the symbol '.' followed by 5 for the tokenizer
    if b"d" in block or b"D" in block:
        block = block.translate(bytes.maketrans(b"dD", b"ee"))
    return block.replace(b",", b" , ").split(), end


def _floats(tokens: list[bytes] | tuple[bytes, ...]) -> Array | None:
    """float32 values of float tokens (atof, then narrowed), or None if one is not a valid float."""
    try:
        values = np.array(list(map(float, tokens)), dtype=np.float64)
    except ValueError:
        return None
    with np.errstate(over="ignore"):
        return values.astype(np.float32)


def _uints(tokens: tuple[bytes, ...] | list[bytes]) -> Array | None:
    """Values of plain decimal unsigned integer tokens, or None if one is anything else."""
    joined = b" ".join(tokens)
    if joined.translate(None, b"0123456789 ") or max(map(len, tokens), default=0) > 10:
        return None
    shapes = b" " + joined.translate(_NONZERO_TO_ONE)
    if b" 00" in shapes or b" 01" in shapes:
        return None  # a leading 0 means octal for the tokenizer
    values = np.array(list(map(int, tokens)), dtype=np.int64)
    if len(values) and (values.max() > _UINT32_MAX or len(values) != len(tokens)):
        return None
    return values


def _gather(tokens: list[bytes], positions: Array) -> tuple[bytes, ...]:
    if len(positions) == 0:
        return ()
    if len(positions) == 1:
        return (tokens[int(positions[0])],)
    return operator.itemgetter(*positions.tolist())(tokens)  # type: ignore[no-any-return]


def parse_vertex_block(text: bytes, start: int, count: int) -> tuple[Array, int] | None:
    """`count` vec3s (`x,y,z`) from `start` up to the closing brace; returns (float32 (count, 3), brace pos)."""
    vectorised = blockscan.parse_vertex_block(text, start, count)
    if vectorised is not None:
        return vectorised
    scanned = _block_tokens(text, start)
    if scanned is None:
        return None
    tokens, end = scanned
    if len(tokens) != 5 * count or tokens.count(b",") != 2 * count:
        return None
    if tokens[1::5].count(b",") != count or tokens[3::5].count(b",") != count:
        return None
    columns = [_floats(tokens[offset::5]) for offset in (0, 2, 4)]
    if any(column is None for column in columns):
        return None
    return np.stack(columns, axis=1).reshape(count, 3), end  # type: ignore[arg-type]


def _face_starts(tokens: list[bytes], count: int, has_uv: bool) -> Array | None:
    """First token of each face, following the faces' own corner counts (which must be `3` or `4`)."""
    per_corner = 4 if has_uv else 1
    step3, step4 = 3 + 3 * per_corner, 3 + 4 * per_corner
    starts = [0] * count
    position = 0
    try:
        for face in range(count):
            size = tokens[position]
            starts[face] = position
            if size == b"3":
                position += step3
            elif size == b"4":
                position += step4
            else:
                return None
    except IndexError:
        return None
    return np.array(starts, dtype=np.int64) if position == len(tokens) else None


def parse_face_block(text: bytes, start: int, count: int, vertex_count: int,
                     has_uv: bool) -> tuple[FaceArrays, int] | None:
    """`count` faces from `start` up to the closing brace, in the layout of tmp_parser's slow path."""
    vectorised = blockscan.parse_face_block(text, start, count, vertex_count, has_uv)
    if vectorised is not None:
        return vectorised
    scanned = _block_tokens(text, start)
    if scanned is None:
        return None
    tokens, end = scanned
    first = _face_starts(tokens, count, has_uv)
    if first is None:
        return None
    sizes = np.where(np.array(_gather(tokens, first)) == b"4", 4, 3).astype(np.int8) if count else np.zeros(0, np.int8)
    stride = 4 if has_uv else 1
    present = np.arange(4)[None, :] < sizes[:, None]
    index_pos = first[:, None] + 3 + stride * np.where(present, np.arange(4)[None, :], 0)
    header = _uints(_gather(tokens, np.stack([first + 1, first + 2], axis=1).reshape(-1)))
    corner_indices = _uints(_gather(tokens, index_pos[present]))
    if header is None or corner_indices is None or (corner_indices >= vertex_count).any():
        return None
    indices = np.zeros((count, 4), dtype=np.int64)
    indices[present] = corner_indices
    indices[sizes == 3, 3] = indices[sizes == 3, 0]
    uvs = _face_uvs(tokens, index_pos, present, sizes) if has_uv else None
    if (has_uv and uvs is None) or (not has_uv and b"," in tokens):
        return None
    header = header.reshape(-1, 2)
    return (sizes, header[:, 0], header[:, 1] > 0, indices, uvs), end


def _face_uvs(tokens: list[bytes], index_pos: Array, present: Array, sizes: Array) -> Array | None:
    corners = int(present.sum())
    if tokens.count(b",") != corners or _gather(tokens, (index_pos + 2)[present]).count(b",") != corners:
        return None
    u = _floats(_gather(tokens, (index_pos + 1)[present]))
    v = _floats(_gather(tokens, (index_pos + 3)[present]))
    if u is None or v is None:
        return None
    uvs = np.zeros((*present.shape, 2), dtype=np.float32)
    uvs[present] = np.stack([u, v], axis=1)
    uvs[sizes == 3, 3] = uvs[sizes == 3, 0]
    return uvs
