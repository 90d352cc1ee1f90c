"""Buffer emission (spec §7.6, §7.8): faces go out in post-order of their nodes, children before parents,
so the buffers are laid out post-order while the node tables stay pre-order.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import cast

import numpy as np

from .arrays import Array, stable_order
from .frontend import FaceSet
from .model import DrawFragments, NodeTable, QmapModel, VertexRows
from .octree import Tree, postorder_ranks, preorder_ranks
from .parallel import made_on_cores, run_together

_FACE_INDEX_PATTERN = np.array([0, 1, 2, 0, 2, 3], dtype=np.uint32)  # triangle uses the first 3


def node_table(tree: Tree) -> tuple[NodeTable, Array, Array]:
    """The pre-order node table, plus each node's pre-order and post-order rank."""
    pre, size = preorder_ranks(tree)
    post = postorder_ranks(tree, pre, size)
    order = np.argsort(pre)
    table = NodeTable(tree.boxes[order], tree.level[order], size[order], tree.first_child[order] >= 0)
    return table, pre, post


def _exclusive_cumsum(values: Array) -> Array:
    out = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(values, out=out[1:])
    return out


def _corner_mask(sizes: Array) -> Array:
    return np.arange(4)[None, :] < sizes[:, None]


def _emitted_corners(order: Array, sizes: Array) -> tuple[Array, Array]:
    """For each vertex written (the used corners of the faces in `order`, corner by corner): its face and its
    corner's row in the faces' (F * 4) corner arrays."""
    emitted = np.flatnonzero(_corner_mask(sizes).ravel())  # position in order * 4 + corner
    source_face = order[emitted >> 2]
    return source_face, source_face * 4 + (emitted & 3)


_FACES_AT_A_TIME = 1 << 17
_FACES_WRITTEN_AT_A_TIME = 1 << 15  # a deferred table's blocks (about 7 MB): one per core made ahead of the one written


# A draw vertex's 14 floats as the byte items of its columns (position, normal, uv, tangent, binormal).
_DRAW_ROW = np.dtype({"names": ["position", "normal", "uv", "tangent", "binormal"],
                      "formats": ["V12", "V12", "V8", "V12", "V12"], "offsets": [0, 12, 24, 32, 44], "itemsize": 56})


def _items(table: Array, item_bytes: int) -> Array:
    """The rows of a float32 table (its last axis) as a 1-D array of `item_bytes`-byte items (a view when the table
    is contiguous, as the front end makes them)."""
    items: Array = np.ascontiguousarray(table, np.float32).view(np.dtype(f"V{item_bytes}")).reshape(-1)
    return items


def _vertex_rows(faces: FaceSet, order: Array, sizes: Array, vertex_start: Array, draw: bool,
                 deferred: bool) -> Array | VertexRows:
    """The vertex table of the faces in `order`: 14 columns (position, normal, uv, tangent, binormal) for drawing,
    the positions alone for collision; made a block of faces at a time (small index arrays), now or, `deferred`,
    as it is written."""
    width = 14 if draw else 3
    # Every row of the tables as one item of bytes (a corner's position, a face's normal...): numpy gathers and
    # places such items several times quicker than rows of floats, and the bytes are the same.
    positions = _items(faces.positions, 12)
    if draw:
        normals, uvs, tangents, binormals = (_items(faces.normals, 12), _items(faces.uvs, 8),
                                             _items(faces.tangents, 12), _items(faces.binormals, 12))  # fmt: skip

    def fill(rows: Array, begin: int, end: int) -> None:
        face, corner = _emitted_corners(order[begin:end], sizes[begin:end])
        if not draw:
            np.take(positions, corner, out=rows.view(positions.dtype).reshape(-1))
            return
        row = rows.view(_DRAW_ROW).reshape(-1)
        row["position"] = np.take(positions, corner)
        row["normal"] = np.take(normals, face)
        row["uv"] = np.take(uvs, corner)
        row["tangent"] = np.take(tangents, face)
        row["binormal"] = np.take(binormals, face)

    step = _FACES_WRITTEN_AT_A_TIME if deferred else _FACES_AT_A_TIME
    spans = [(begin, min(begin + step, len(order))) for begin in range(0, len(order), step)]
    def block(begin: int, end: int) -> Array:
        rows = np.empty((int(vertex_start[end] - vertex_start[begin]), width), np.float32)
        fill(rows, begin, end)
        return rows

    if deferred:  # (the next blocks are made on every core while this one is written)
        def blocks() -> Iterator[Array]:
            return made_on_cores([functools.partial(block, begin, end) for begin, end in spans])

        return VertexRows(int(vertex_start[-1]), width, blocks)
    vertices = np.empty((int(vertex_start[-1]), width), dtype=np.float32)
    for begin, end in spans:
        fill(vertices[vertex_start[begin] : vertex_start[end]], begin, end)
    return vertices


def _face_indices(sizes: Array, vertex_start: Array, index_start: Array) -> Array:
    """Triangle v, v+1, v+2; quad v, v+1, v+2, v, v+2, v+3 (the Blender 1-3 diagonal after reversal), a block
    of faces at a time: each index is its face's first vertex plus the pattern's entry at its place in the face."""
    indices = np.empty(int(index_start[-1]), np.uint32)
    for begin in range(0, len(sizes), _FACES_AT_A_TIME):
        end = min(begin + _FACES_AT_A_TIME, len(sizes))
        first, last = int(index_start[begin]), int(index_start[end])
        counts = index_start[begin + 1 : end + 1] - index_start[begin:end]
        place = np.arange(first, last, dtype=np.int64)
        place -= np.repeat(index_start[begin:end], counts)
        indices[first:last] = np.repeat(vertex_start[begin:end].astype(np.uint32), counts) + _FACE_INDEX_PATTERN[place]
    return indices


DrawEmitted = tuple[Array | VertexRows, Array, NodeTable, DrawFragments]
CollisionEmitted = tuple[Array | VertexRows, Array, NodeTable, Array]


def emit_draw(faces: FaceSet, tree: Tree, deferred: bool = False) -> DrawEmitted:
    table, pre, post = node_table(tree)
    order = stable_order(post[tree.face_node])
    sizes = faces.sizes[order]
    vertex_start = _exclusive_cumsum(sizes)
    index_start = _exclusive_cumsum(np.where(sizes == 4, 6, 3))
    vertices = _vertex_rows(faces, order, sizes, vertex_start, True, deferred)
    indices = _face_indices(sizes, vertex_start, index_start)
    fragments = _fragments(pre[tree.face_node[order]], faces.material[order], vertex_start, index_start)
    return vertices, indices, table, fragments


def _fragments(node_pre: Array, material: Array, vertex_start: Array,
               index_start: Array) -> DrawFragments:
    """One fragment per run of faces with the same (node, material) in emission order."""
    count = len(node_pre)
    change = np.ones(count, dtype=bool)
    if count:
        change[1:] = (node_pre[1:] != node_pre[:-1]) | (material[1:] != material[:-1])
    starts = np.flatnonzero(change)
    ends = np.append(starts[1:], count)
    by_node = stable_order(node_pre[starts])
    starts, ends = starts[by_node], ends[by_node]
    return DrawFragments(
        node=node_pre[starts],
        material=material[starts].astype(np.uint32),
        index_begin=index_start[starts],
        index_end=index_start[ends],
        vertex_begin=vertex_start[starts],
        vertex_end=vertex_start[ends],
    )


def emit_collision(faces: FaceSet, tree: Tree, deferred: bool = False) -> CollisionEmitted:
    table, pre, post = node_table(tree)
    face_post = post[tree.face_node]
    order = stable_order(face_post)
    sizes = faces.sizes[order]
    vertex_start = _exclusive_cumsum(sizes)
    index_start = _exclusive_cumsum(np.where(sizes == 4, 6, 3))
    vertices = _vertex_rows(faces, order, sizes, vertex_start, False, deferred)
    indices = _face_indices(sizes, vertex_start, index_start)
    sorted_post = face_post[order]
    node_post = post[np.argsort(pre)]
    begin = index_start[np.searchsorted(sorted_post, node_post, side="left")]
    end = index_start[np.searchsorted(sorted_post, node_post, side="right")]
    return vertices, indices, table, np.stack([begin, end], axis=1).astype(np.uint32)


def build_model(faces: FaceSet, draw_tree: Tree, collision_tree: Tree, deferred: bool = False) -> QmapModel:
    """Both buffers and node tables. `deferred`: the vertex tables are made as they are written (the faces stay
    until then)."""
    draw, collision = run_together(  # (side by side: 0.45 s of 1M faces in turn)
        functools.partial(emit_draw, faces, draw_tree, deferred),
        functools.partial(emit_collision, faces, collision_tree, deferred))  # fmt: skip
    draw_vb, draw_ib, draw_nodes, fragments = cast(DrawEmitted, draw)
    coll_vb, coll_ib, coll_nodes, ranges = cast(CollisionEmitted, collision)
    return QmapModel(faces.materials, draw_vb, draw_ib, draw_nodes, fragments, coll_vb, coll_ib, coll_nodes, ranges)
