"""Strict `.qmap` reader and validator (spec §8), and recovery of the compiled faces from a file.

Every count is checked against the bytes that remain before anything is allocated; every index and
range is checked; the file must end exactly after the collision tree. Problems raise QmapError with the
byte offset.
"""

from __future__ import annotations

import os
import stat
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .arrays import Array
from .errors import QmapError
from .frontend import FaceSet
from .model import DRAW_VERTEX_FLOATS, MAGIC, DrawFragments, NodeTable, QmapModel, vertex_table

_BOX_FLAG = struct.Struct("<6fB")
_U32 = struct.Struct("<I")
_FRAGMENT = struct.Struct("<5I")
_RANGE = struct.Struct("<2I")


class _Cursor:
    def __init__(self, data: bytes, filename: str) -> None:
        self.data = data
        self.filename = filename
        self.pos = 0

    def error(self, message: str, offset: int | None = None) -> QmapError:
        return QmapError(message, self.filename, offset=self.pos if offset is None else offset)

    def need(self, size: int, what: str) -> None:
        if size > len(self.data) - self.pos:
            raise self.error(f"file ends inside {what} (needs {size} bytes, {len(self.data) - self.pos} left)")

    def u32(self, what: str) -> int:
        self.need(4, what)
        (value,) = _U32.unpack_from(self.data, self.pos)
        self.pos += 4
        return int(value)

    def counted_array(self, item_bytes: int, dtype: str, what: str) -> Array:
        start = self.pos
        count = self.u32(f"{what} count")
        if count > (len(self.data) - self.pos) // item_bytes:
            raise self.error(f"{what} count {count} does not fit in the {len(self.data) - self.pos} bytes left", start)
        array = np.frombuffer(self.data, dtype=dtype, count=count * item_bytes // np.dtype(dtype).itemsize,
                              offset=self.pos)
        self.pos += count * item_bytes
        return array


@dataclass
class _TreeBuilder:
    boxes: list[tuple[float, ...]] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)
    size: list[int] = field(default_factory=list)
    children: list[bool] = field(default_factory=list)

    def table(self) -> NodeTable:
        boxes = np.array(self.boxes, dtype=np.float32).reshape(-1, 6)
        return NodeTable(boxes, np.array(self.depth, np.int64), np.array(self.size, np.int64),
                         np.array(self.children, bool))


TrailerReader = Callable[[_Cursor, int], None]
"""Reads the part of a node that follows its children (draw: fragment list; collision: index range)."""


def _read_tree(cursor: _Cursor, read_trailer: TrailerReader) -> NodeTable:
    """Pre-order nodes without recursion: a stack of (node, children still to read)."""
    tree = _TreeBuilder()
    stack: list[list[int]] = []
    while True:
        node = _read_header(cursor, tree, len(stack))
        if tree.children[node]:
            stack.append([node, 8])
            continue
        read_trailer(cursor, node)
        tree.size[node] = 1
        while stack:
            stack[-1][1] -= 1
            if stack[-1][1]:
                break
            parent, _ = stack.pop()
            read_trailer(cursor, parent)
            tree.size[parent] = len(tree.depth) - parent
        if not stack:
            return tree.table()


def _read_header(cursor: _Cursor, tree: _TreeBuilder, depth: int) -> int:
    cursor.need(_BOX_FLAG.size, "a tree node")
    *box, flag = _BOX_FLAG.unpack_from(cursor.data, cursor.pos)
    if flag > 1:
        raise cursor.error(f"HasSubNodes byte is {flag}, not 0 or 1", cursor.pos + 24)
    cursor.pos += _BOX_FLAG.size
    tree.boxes.append(tuple(box))
    tree.depth.append(depth)
    tree.size.append(0)
    tree.children.append(bool(flag))
    return len(tree.depth) - 1


class _DrawTrailers:
    def __init__(self, material_count: int, index_count: int, vertex_count: int) -> None:
        self.limits = (material_count, index_count, vertex_count)
        self.rows: list[tuple[int, ...]] = []
        self.nodes: list[int] = []

    def __call__(self, cursor: _Cursor, node: int) -> None:
        start = cursor.pos
        count = cursor.u32("a fragment count")
        if count > (len(cursor.data) - cursor.pos) // _FRAGMENT.size:
            raise cursor.error(f"fragment count {count} does not fit in the file", start)
        materials, indices, vertices = self.limits
        for _ in range(count):
            row = _FRAGMENT.unpack_from(cursor.data, cursor.pos)
            material, ib, ie, vb, ve = row
            if material >= materials or not ib <= ie <= indices or not vb <= ve <= vertices or (ie - ib) % 3:
                raise cursor.error(f"fragment {row} is out of range")
            self.rows.append(row)
            self.nodes.append(node)
            cursor.pos += _FRAGMENT.size

    def fragments(self) -> DrawFragments:
        """Fragments sorted by node; trailers were read when each subtree closed, i.e. in post-order."""
        nodes = np.array(self.nodes, np.int64)
        order = np.argsort(nodes, kind="stable")
        rows = np.array(self.rows, dtype=np.int64).reshape(-1, 5)[order]
        return DrawFragments(nodes[order], rows[:, 0].astype(np.uint32), rows[:, 1], rows[:, 2], rows[:, 3], rows[:, 4])


class _CollisionTrailers:
    def __init__(self, index_count: int) -> None:
        self.index_count = index_count
        self.ranges: dict[int, tuple[int, int]] = {}

    def __call__(self, cursor: _Cursor, node: int) -> None:
        cursor.need(_RANGE.size, "a collision index range")
        begin, end = _RANGE.unpack_from(cursor.data, cursor.pos)
        if not begin <= end <= self.index_count or (end - begin) % 3:
            raise cursor.error(f"collision index range ({begin}, {end}) is out of range")
        self.ranges[node] = (begin, end)
        cursor.pos += _RANGE.size

    def table(self, count: int) -> Array:
        return np.array([self.ranges[i] for i in range(count)], dtype=np.uint32).reshape(-1, 2)


def _check_indices(cursor: _Cursor, indices: Array, vertex_count: int, what: str, offset: int) -> None:
    if len(indices) % 3:
        raise cursor.error(f"{what} count {len(indices)} is not a multiple of 3", offset)
    if len(indices) and int(indices.max()) >= vertex_count:
        bad = int(np.argmax(indices >= vertex_count))
        message = f"{what} {bad} is {int(indices[bad])}, past the {vertex_count} vertices"
        raise cursor.error(message, offset + 4 + 4 * bad)


def read_qmap(data: bytes, filename: str = "<qmap>") -> QmapModel:
    """Parse and validate a whole `.qmap` file."""
    cursor = _Cursor(data, filename)
    cursor.need(8, "the header")
    if data[:8] != MAGIC:
        raise cursor.error("not a QMAP file (header is not TFQMAP10)", 0)
    cursor.pos = 8
    materials = _read_materials(cursor)
    draw_vb = cursor.counted_array(4 * DRAW_VERTEX_FLOATS, "<f4", "draw vertex").reshape(-1, DRAW_VERTEX_FLOATS)
    offset = cursor.pos
    draw_ib = cursor.counted_array(4, "<u4", "draw index")
    _check_indices(cursor, draw_ib, len(draw_vb), "draw index", offset)
    draw_trailers = _DrawTrailers(len(materials), len(draw_ib), len(draw_vb))
    draw_nodes = _read_tree(cursor, draw_trailers)
    coll_vb = cursor.counted_array(12, "<f4", "collision vertex").reshape(-1, 3)
    offset = cursor.pos
    coll_ib = cursor.counted_array(4, "<u4", "collision index")
    _check_indices(cursor, coll_ib, len(coll_vb), "collision index", offset)
    coll_trailers = _CollisionTrailers(len(coll_ib))
    coll_nodes = _read_tree(cursor, coll_trailers)
    if cursor.pos != len(data):
        raise cursor.error(f"{len(data) - cursor.pos} unexpected bytes after the collision tree")
    return QmapModel(materials, draw_vb, draw_ib, draw_nodes, draw_trailers.fragments(), coll_vb, coll_ib,
                     coll_nodes, coll_trailers.table(coll_nodes.count))


def _read_materials(cursor: _Cursor) -> list[bytes]:
    start = cursor.pos
    count = cursor.u32("the material count")
    if count > len(cursor.data) - cursor.pos:
        raise cursor.error(f"material count {count} does not fit in the file", start)
    names = []
    for _ in range(count):
        cursor.need(1, "a material name")
        length = cursor.data[cursor.pos]
        cursor.need(1 + length, "a material name")
        names.append(bytes(cursor.data[cursor.pos + 1 : cursor.pos + 1 + length]))
        cursor.pos += 1 + length
    return names


def read_qmap_file(path: str | os.PathLike[str]) -> QmapModel:
    return read_qmap(read_input_file(path), str(path))


def read_input_file(path: str | os.PathLike[str]) -> bytes:
    """A file's bytes, only from a regular file: a device or a pipe (/dev/zero) would be read until memory runs
    out, a FIFO would wait for a writer."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise QmapError("cannot read: not a file (a folder, device or pipe)", str(path))
        return Path(path).read_bytes()
    except OSError as error:
        raise QmapError(f"cannot read: {error.strerror}", str(path)) from None


def model_faces(model: QmapModel) -> FaceSet:
    """The faces stored in a file's draw fragments, grouped by material, quads rejoined from the
    v, v+1, v+2, v, v+2, v+3 index pattern; N/T/B are taken from each face's first corner."""
    frags = model.draw_fragments
    tri_fragment = np.repeat(np.arange(len(frags.node)), (frags.index_end - frags.index_begin) // 3)
    tri_starts = np.concatenate([np.arange(b, e, 3) for b, e in zip(frags.index_begin, frags.index_end, strict=True)]
                                ) if len(frags.node) else np.zeros(0, np.int64)
    tris = model.draw_indices.astype(np.int64)[tri_starts[:, None] + np.arange(3)].reshape(-1, 3)
    first_half = (tris[:, 1] == tris[:, 0] + 1) & (tris[:, 2] == tris[:, 0] + 2)
    second_half = np.zeros(len(tris), dtype=bool)
    if len(tris) > 1:
        nxt = tris[1:]
        second_half[1:] = (first_half[:-1] & (nxt[:, 0] == tris[:-1, 0]) & (nxt[:, 1] == tris[:-1, 0] + 2)
                           & (nxt[:, 2] == tris[:-1, 0] + 3) & (tri_fragment[1:] == tri_fragment[:-1]))
    is_quad = np.zeros(len(tris), dtype=bool)
    is_quad[:-1] = second_half[1:]
    keep = ~second_half
    corners = np.concatenate([tris, tris[:, :1]], axis=1)
    corners[is_quad, 3] = tris[is_quad, 0] + 3
    corners, sizes = corners[keep], np.where(is_quad[keep], 4, 3).astype(np.int8)
    material = frags.material[tri_fragment[keep]].astype(np.int64)
    order = np.argsort(material, kind="stable")
    corners, sizes, material = corners[order], sizes[order], material[order]
    vb = vertex_table(model.draw_vertices)
    first = vb[corners[:, 0]]
    corner_data = vb[corners]
    return FaceSet(list(model.materials), material, sizes, corner_data[:, :, 0:3].copy(),
                   corner_data[:, :, 6:8].copy(), first[:, 3:6].copy(), first[:, 8:11].copy(), first[:, 11:14].copy())
