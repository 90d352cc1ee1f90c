"""Parser for `.qmap.tmp` intermediate map files (spec §5).

Small structural parts go through the pull tokenizer (a mesh's head in the usual layout through one regular
expression first). Plain `vertices` and `faces` blocks are skipped on the way and read together at the end by
`blockscan`; a block it cannot read, and any block that is not plain, goes through `fastblocks` and then this
module's token-by-token path, in file order, so that the values and the first error are exactly the same.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

import numpy as np

from . import blockscan, fastblocks
from .arrays import Array
from .errors import QmapError
from .memory import freed_memory_kept
from .tokenizer import Kind, Source, Token, Tokenizer, float_value, number_kind, uint_value

Vec3 = tuple[float, float, float]


@dataclass
class MeshObject:
    """One `mesh` block. Faces are padded to 4 corners (a triangle repeats its corner 0 in slot 3)."""

    name: bytes
    position: Vec3
    orientation: Vec3
    size: Vec3
    auto_smooth_angle: float
    has_uv: bool
    materials: list[bytes]
    material_pos: list[int]
    vertices: Array  # (nv, 3) float32, object-local Blender coordinates
    face_sizes: Array  # (nf,) int8, 3 or 4
    face_materials: Array  # (nf,) int64 material slot (may be >= len(materials))
    face_smooth: Array  # (nf,) bool, parsed and ignored by the compiler
    face_indices: Array  # (nf, 4) int64 vertex indices in Blender corner order
    face_uvs: Array | None  # (nf, 4, 2) float32 Blender UVs, or None without UVs
    pos: int = 0


@dataclass
class LampObject:
    """One `lamp` block: parsed and kept, never compiled (the .qmap has no lights)."""

    name: bytes
    position: Vec3
    orientation: Vec3
    size: Vec3
    lamp_type: str
    distance: float
    color: Vec3
    softness: float = 0.0
    angle: float = 0.0


@dataclass
class TmpDocument:
    """A parsed `.qmap.tmp`: objects in file order, plus warnings and the source for error locations."""

    meshes: list[MeshObject] = field(default_factory=list)
    lamps: list[LampObject] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    source: Source | None = None

    def error_at(self, pos: int, message: str) -> QmapError:
        if self.source is None:
            return QmapError(message)
        return self.source.error(pos, message)


@dataclass
class ParseOptions:
    """`skip_unknown_objects`: skip any unknown object block with a warning (lattice is always skipped)."""

    skip_unknown_objects: bool = False


def parse_tmp(data: bytes, filename: str = "<tmp>", options: ParseOptions | None = None) -> TmpDocument:
    """Parse a `.qmap.tmp` document; raises QmapError for anything the grammar does not allow."""
    options = options or ParseOptions()
    source = Source(data, filename)
    tokens = Tokenizer(source)
    document = TmpDocument(source=source)
    tokens.expect_ident(b"QMAP")
    tokens.expect_ident(b"TMP")
    version = tokens.next()
    if uint_value(version, tokens) != 10:
        raise tokens.error(version, "wrong version (expected QMAP TMP 10)")
    tokens.expect_ident(b"objects")
    tokens.expect_symbol(b"{")
    blocks = _DeferredBlocks(tokens)
    try:
        while not tokens.is_symbol(b"}"):
            _parse_object(tokens, document, options, blocks)
        tokens.expect_symbol(b"}")
        end = tokens.next()
        if end.kind is not Kind.EOF:
            raise tokens.error(end, f"expected end of file, found {end.describe()}")
    except QmapError:
        blocks.read()  # an error in a block before this one comes first
        raise
    blocks.read()
    return document


def _parse_object(tokens: Tokenizer, document: TmpDocument, options: ParseOptions, blocks: _DeferredBlocks) -> None:
    head = tokens.next()
    if head.kind is Kind.IDENT and head.text == b"mesh":
        document.meshes.append(_parse_mesh(tokens, head, blocks))
    elif head.kind is Kind.IDENT and head.text == b"lamp":
        document.lamps.append(_parse_lamp(tokens))
    elif head.kind is Kind.IDENT and (head.text == b"lattice" or options.skip_unknown_objects):
        _skip_block(tokens)
        where = tokens.source.error(head.pos, "")  # the file and line, as errors give them
        document.warnings.append(f"{where.file}:{where.line}: '{head.text.decode()}' object skipped (only mesh and "
                                 "lamp compile)")  # fmt: skip
    else:
        raise tokens.error(head, f"expected an object (mesh or lamp), found {head.describe()}")


def _skip_block(tokens: Tokenizer) -> None:
    tokens.expect_string()
    tokens.expect_symbol(b"{")
    depth = 1
    while depth:
        token = tokens.next()
        if token.kind is Kind.EOF:
            raise tokens.error(token, "unexpected end of file inside an object block")
        if token.kind is Kind.SYMBOL and token.text in (b"{", b"}"):
            depth += 1 if token.text == b"{" else -1


def _vec3(tokens: Tokenizer) -> Vec3:
    x = tokens.get_float()
    tokens.expect_symbol(b",")
    y = tokens.get_float()
    tokens.expect_symbol(b",")
    return x, y, tokens.get_float()


# Fewest bytes one item can take (`""`, `0,0,0`, `3 0 0 0 0 0`): a larger count cannot be honest, and
# checking it first keeps a corrupt count from allocating gigabytes.
_MIN_ITEM_BYTES = {b"materials": 2, b"vertices": 5, b"faces": 11}


def _counted_header(tokens: Tokenizer, word: bytes) -> int:
    tokens.expect_ident(word)
    count = _checked_count(tokens, tokens.next(), word)
    tokens.expect_symbol(b"{")
    return count


def _checked_count(tokens: Tokenizer, count_token: Token, word: bytes) -> int:
    count = uint_value(count_token, tokens)
    if count > (len(tokens.text) - count_token.pos) // _MIN_ITEM_BYTES[word]:
        raise tokens.error(count_token, f"{word.decode()} count {count} is more than the rest of the file can hold")
    return count


def _parse_mesh(tokens: Tokenizer, head: Token, blocks: _DeferredBlocks) -> MeshObject:
    quick = _quick_mesh_head(tokens)
    if quick is not None:
        name, position, orientation, size, smooth_angle, has_uv, material_count = quick
    else:
        name = tokens.expect_string().value
        tokens.expect_symbol(b"{")
        position, orientation, size = _vec3(tokens), _vec3(tokens), _vec3(tokens)
        smooth_angle = tokens.get_float()
        has_uv = tokens.get_uint() > 0
        material_count = _counted_header(tokens, b"materials")
    materials, material_pos = _material_names(tokens, material_count)
    mesh = MeshObject(name, position, orientation, size, smooth_angle, has_uv, materials, material_pos,
                      *_NO_GEOMETRY, pos=head.pos)  # fmt: skip
    vertex_count = _block_head(tokens, _QUICK_VERTICES_HEAD, b"vertices")
    if not blocks.skip_vertices(mesh, vertex_count):
        mesh.vertices = _parse_vertices(tokens, vertex_count)
    face_count = _block_head(tokens, _QUICK_FACES_HEAD, b"faces")
    if not blocks.skip_faces(mesh, face_count, vertex_count):
        _set_faces(mesh, _parse_faces(tokens, face_count, vertex_count, has_uv))
    quick_end = _QUICK_MESH_END.match(tokens.text, tokens.pos) if tokens.unpeeked() else None
    if quick_end is not None:
        tokens.seek(quick_end.end())
    else:
        tokens.expect_symbol(b"}")
        tokens.expect_symbol(b"}")
    return mesh


def _block_head(tokens: Tokenizer, quick: re.Pattern[bytes], word: bytes) -> int:
    """The `}` closing the list before, then `word COUNT {`: the count, checked (by one regular expression in the
    usual layout, its count read as the tokenizer would read it; token by token otherwise)."""
    match = quick.match(tokens.text, tokens.pos) if tokens.unpeeked() else None
    if match is None:
        tokens.expect_symbol(b"}")
        return _counted_header(tokens, word)
    count = _checked_count(tokens, Token(number_kind(match.group(1)), match.group(1), match.start(1)), word)
    tokens.seek(match.end())
    return count


_BLANKS = rb"[ \t\r\n\x0b]*"
_NUMBER = rb"([0-9+\-][0-9A-Za-z+\-.]*)(?![0-9A-Za-z+\-.])"  # a whole number token, as the tokenizer cuts it
_VEC3 = _BLANKS + _NUMBER + _BLANKS + b"," + _BLANKS + _NUMBER + _BLANKS + b"," + _BLANKS + _NUMBER
# A mesh's head up to its material list, in the usual layout: no comments, a name without escapes.
_QUICK_MESH_HEAD = re.compile(
    _BLANKS + rb'"([^"\\\r\n]*)"' + _BLANKS + rb"\{" + _VEC3 * 3 + (_BLANKS + _NUMBER) * 2
    + _BLANKS + rb"materials[ \t\r\n\x0b]+" + _NUMBER + _BLANKS + rb"\{"
)
_QUICK_STRING = re.compile(_BLANKS + rb'"([^"\\\r\n]*)"')


def _quick_block_head(word: bytes) -> re.Pattern[bytes]:
    """The `}` closing the list before, then `word COUNT {`, in the usual layout (no comments)."""
    return re.compile(_BLANKS + rb"\}" + _BLANKS + word + rb"[ \t\r\n\x0b]+" + _NUMBER + _BLANKS + rb"\{")


# A mesh's tail in the usual layout: the heads of its vertex and face blocks, and its end.
_QUICK_VERTICES_HEAD, _QUICK_FACES_HEAD = _quick_block_head(b"vertices"), _quick_block_head(b"faces")
_QUICK_MESH_END = re.compile(_BLANKS + rb"\}" + _BLANKS + rb"\}")
_PLAIN_DECIMAL = re.compile(rb"[+-]?[0-9]{1,30}(?:\.[0-9]{0,30})?")  # read by float() exactly as atof reads it


def _quick_mesh_head(tokens: Tokenizer) -> tuple[bytes, Vec3, Vec3, Vec3, float, bool, int] | None:
    """A mesh head read by one regular expression, its numbers converted (and refused) exactly as the tokenizer
    would, token by token; None for any other layout, which the tokenizer then reads from the start."""
    match = _QUICK_MESH_HEAD.match(tokens.text, tokens.pos)
    if match is None:
        return None
    words = match.groups()[1:13]
    if all(_PLAIN_DECIMAL.fullmatch(word) for word in words[:10]):  # the usual case: all ten at once
        floats = np.array([float(word) for word in words[:10]]).astype(np.float32).tolist()  # (= atof, narrowed)
        numbers = [Token(number_kind(words[i]), words[i], match.start(i + 2)) for i in (10, 11)]
    else:
        tokens_of = [Token(number_kind(match.group(i)), match.group(i), match.start(i)) for i in range(2, 14)]
        floats = [float_value(token, tokens) for token in tokens_of[:10]]
        numbers = tokens_of[10:]
    has_uv = uint_value(numbers[0], tokens) > 0
    count = _checked_count(tokens, numbers[1], b"materials")
    tokens.seek(match.end())
    vectors = (floats[0], floats[1], floats[2]), (floats[3], floats[4], floats[5]), (floats[6], floats[7], floats[8])
    return match.group(1), *vectors, floats[9], has_uv, count


@functools.lru_cache(maxsize=64)
def _quick_string_run(count: int) -> re.Pattern[bytes]:
    """_QUICK_STRING `count` times over (each match of it is the only one at its place, so the run is too)."""
    return re.compile(b"(?:" + _QUICK_STRING.pattern + b"){%d}" % count)


@functools.lru_cache(maxsize=256)
def _listed_names(listing: bytes) -> tuple[tuple[bytes, ...], tuple[int, ...]]:
    """The strings of a run of _QUICK_STRING and where each one's quote is in it (meshes mostly repeat a few
    material lists: each is read once)."""
    matches = list(_QUICK_STRING.finditer(listing))
    return tuple(quick.group(1) for quick in matches), tuple(quick.start(1) - 1 for quick in matches)


def _material_names(tokens: Tokenizer, count: int) -> tuple[list[bytes], list[int]]:
    """`count` material names (strings without escapes by a regular expression, others by the tokenizer)."""
    run = _quick_string_run(count).match(tokens.text, tokens.pos) if count > 0 else None
    if run is not None:
        listed, offsets = _listed_names(run.group())
        tokens.seek(run.end())
        return list(listed), [run.start() + offset for offset in offsets]
    names: list[bytes] = []
    positions: list[int] = []
    for _ in range(count):
        quick = _QUICK_STRING.match(tokens.text, tokens.pos)
        if quick is not None:
            names.append(quick.group(1))
            positions.append(quick.start(1) - 1)
            tokens.seek(quick.end())
        else:
            token = tokens.expect_string()
            names.append(token.value)
            positions.append(token.pos)
    return names, positions


_NO_GEOMETRY = (np.zeros((0, 3), np.float32), np.zeros(0, np.int8), np.zeros(0, np.int64), np.zeros(0, bool),
                np.zeros((0, 4), np.int64), None)
# The bytes a plain block holds (numbers, commas, blanks): no comment or string can hide a `}` among them.
_PLAIN_BLOCK_BYTES = b" \t\r\n\x0b,0123456789+-.eE"


def _set_faces(mesh: MeshObject, faces: FaceArrays) -> None:
    mesh.face_sizes, mesh.face_materials, mesh.face_smooth, mesh.face_indices, mesh.face_uvs = faces


class _DeferredBlocks:
    """Plain vertex and face blocks, skipped on the way through the file and read at the end all together
    (`blockscan`, a few numpy calls per group of blocks instead of per block). A block the batch cannot read is
    then read on its own, exactly as it would have been in place, with the same values or the same error."""

    def __init__(self, tokens: Tokenizer) -> None:
        self.tokens = tokens
        self.vertices: list[tuple[MeshObject, int, int, int]] = []
        self.faces: list[tuple[MeshObject, int, int, int, int]] = []

    def _skip(self) -> tuple[int, int] | None:
        text, start = self.tokens.text, self.tokens.pos
        end = text.find(b"}", start)
        if end < 0 or text[start:end].translate(None, _PLAIN_BLOCK_BYTES):
            return None
        self.tokens.seek(end)
        return start, end

    def skip_vertices(self, mesh: MeshObject, count: int) -> bool:
        span = self._skip()
        if span is not None:
            self.vertices.append((mesh, *span, count))
        return span is not None

    def skip_faces(self, mesh: MeshObject, count: int, vertex_count: int) -> bool:
        span = self._skip()
        if span is not None:
            self.faces.append((mesh, *span, count, vertex_count))
        return span is not None

    def read(self) -> None:
        """Fill the skipped blocks in; blocks the batch could not read are read one by one in file order."""
        vertex_blocks, face_blocks, self.vertices, self.faces = self.vertices, self.faces, [], []
        text, unread = self.tokens.text, []  # (start, mesh, vertex count, face count or -1 for a vertex block)
        chosen = [[block for block in face_blocks if block[0].has_uv == has_uv] for has_uv in (False, True)]
        with freed_memory_kept():  # (the groups' temporaries, freed and taken again: 6,000 faults in a 100k import)
            vertex_found, *face_found = blockscan.read_together(  # (every kind's groups on one set of threads)
                [blockscan.vertex_plan(text, [block[1:] for block in vertex_blocks], plain=True)]
                + [blockscan.face_plan(text, [block[1:] for block in chosen[has_uv]], has_uv, plain=True)
                   for has_uv in (False, True)])  # fmt: skip
        for (mesh, start, _end, count), vertices in zip(vertex_blocks, vertex_found, strict=True):
            if vertices is None:
                unread.append((start, mesh, count, -1))
            else:
                mesh.vertices = vertices
        for has_uv in (False, True):
            for (mesh, start, _end, count, vertex_count), faces in zip(chosen[has_uv], face_found[has_uv],
                                                                       strict=True):  # fmt: skip
                if faces is None:
                    unread.append((start, mesh, vertex_count, count))
                else:
                    _set_faces(mesh, faces)
        for start, mesh, vertex_count, face_count in sorted(unread, key=lambda block: block[0]):
            self.tokens.seek(start)
            if face_count < 0:
                mesh.vertices = _parse_vertices(self.tokens, vertex_count)
            else:
                _set_faces(mesh, _parse_faces(self.tokens, face_count, vertex_count, mesh.has_uv))
            self.tokens.expect_symbol(b"}")


def _parse_vertices(tokens: Tokenizer, count: int) -> Array:
    fast = fastblocks.parse_vertex_block(tokens.text, tokens.pos, count)
    if fast is not None:
        vertices, end = fast
        tokens.seek(end)
        return vertices
    values = np.empty((count, 3), dtype=np.float32)
    for i in range(count):
        values[i] = _vec3(tokens)
    return values


FaceArrays = tuple[Array, Array, Array, Array, Array | None]


def _parse_faces(tokens: Tokenizer, count: int, vertex_count: int, has_uv: bool) -> FaceArrays:
    fast = fastblocks.parse_face_block(tokens.text, tokens.pos, count, vertex_count, has_uv)
    if fast is not None:
        arrays, end = fast
        tokens.seek(end)
        return arrays
    sizes = np.empty(count, dtype=np.int8)
    materials = np.empty(count, dtype=np.int64)
    smooth = np.empty(count, dtype=bool)
    indices = np.empty((count, 4), dtype=np.int64)
    uvs = np.zeros((count, 4, 2), dtype=np.float32) if has_uv else None
    for f in range(count):
        size_token = tokens.next()
        size = uint_value(size_token, tokens)
        if size not in (3, 4):
            raise tokens.error(size_token, f"a face must have 3 or 4 vertices, not {size}")
        sizes[f] = size
        materials[f] = tokens.get_uint()
        smooth[f] = tokens.get_uint() > 0
        for corner in range(size):
            index_token = tokens.next()
            index = uint_value(index_token, tokens)
            if index >= vertex_count:
                raise tokens.error(index_token, f"vertex index {index} out of range (the mesh has {vertex_count})")
            indices[f, corner] = index
            if uvs is not None:
                uvs[f, corner, 0] = tokens.get_float()
                tokens.expect_symbol(b",")
                uvs[f, corner, 1] = tokens.get_float()
        if size == 3:
            indices[f, 3] = indices[f, 0]
            if uvs is not None:
                uvs[f, 3] = uvs[f, 0]
    return sizes, materials, smooth, indices, uvs


def _parse_lamp(tokens: Tokenizer) -> LampObject:
    name = tokens.expect_string().value
    tokens.expect_symbol(b"{")
    position, orientation, size = _vec3(tokens), _vec3(tokens), _vec3(tokens)
    kind = tokens.next()
    if kind.kind is not Kind.IDENT or kind.text not in (b"Lamp", b"Spot"):
        raise tokens.error(kind, f"wrong lamp type {kind.describe()} (expected Lamp or Spot)")
    distance = tokens.get_float()
    color = _vec3(tokens)
    lamp = LampObject(name, position, orientation, size, kind.text.decode(), distance, color)
    if kind.text == b"Spot":
        lamp.softness = tokens.get_float()
        lamp.angle = tokens.get_float()
    tokens.expect_symbol(b"}")
    return lamp
