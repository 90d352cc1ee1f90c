"""Buffer emission (spec §7.6, §7.8): faces go out in post-order of their nodes, children before parents,
so the buffers are laid out post-order while the node tables stay pre-order.
"""

from __future__ import annotations

import numpy as np

from .arrays import Array
from .frontend import FaceSet
from .model import DrawFragments, NodeTable, QmapModel
from .octree import Tree, postorder_ranks, preorder_ranks

_FACE_INDEX_PATTERN = np.array([0, 1, 2, 0, 2, 3], dtype=np.int64)  # triangle uses the first 3


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


def _face_indices(sizes: Array, vertex_start: Array) -> Array:
    """Triangle v, v+1, v+2; quad v, v+1, v+2, v, v+2, v+3 (the Blender 1-3 diagonal after reversal)."""
    index_counts = np.where(sizes == 4, 6, 3)
    mask = np.arange(6)[None, :] < index_counts[:, None]
    indices: Array = (vertex_start[:, None] + _FACE_INDEX_PATTERN[None, :])[mask].astype(np.uint32)
    return indices


def emit_draw(faces: FaceSet, tree: Tree) -> tuple[Array, Array, NodeTable, DrawFragments]:
    table, pre, post = node_table(tree)
    order = np.argsort(post[tree.face_node], kind="stable")
    sizes = faces.sizes[order].astype(np.int64)
    vertex_start = _exclusive_cumsum(sizes)
    index_start = _exclusive_cumsum(np.where(sizes == 4, 6, 3))
    records = np.empty((len(order), 4, 14), dtype=np.float32)
    records[:, :, 0:3] = faces.positions[order]
    records[:, :, 3:6] = faces.normals[order][:, None, :]
    records[:, :, 6:8] = faces.uvs[order]
    records[:, :, 8:11] = faces.tangents[order][:, None, :]
    records[:, :, 11:14] = faces.binormals[order][:, None, :]
    vertices = records[_corner_mask(sizes)]
    indices = _face_indices(sizes, vertex_start[:-1])
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
    by_node = np.argsort(node_pre[starts], kind="stable")
    starts, ends = starts[by_node], ends[by_node]
    return DrawFragments(
        node=node_pre[starts],
        material=material[starts].astype(np.uint32),
        index_begin=index_start[starts],
        index_end=index_start[ends],
        vertex_begin=vertex_start[starts],
        vertex_end=vertex_start[ends],
    )


def emit_collision(faces: FaceSet, tree: Tree) -> tuple[Array, Array, NodeTable, Array]:
    table, pre, post = node_table(tree)
    face_post = post[tree.face_node]
    order = np.argsort(face_post, kind="stable")
    sizes = faces.sizes[order].astype(np.int64)
    vertex_start = _exclusive_cumsum(sizes)
    index_start = _exclusive_cumsum(np.where(sizes == 4, 6, 3))
    vertices = faces.positions[order][_corner_mask(sizes)].astype(np.float32)
    indices = _face_indices(sizes, vertex_start[:-1])
    sorted_post = face_post[order]
    node_post = post[np.argsort(pre)]
    begin = index_start[np.searchsorted(sorted_post, node_post, side="left")]
    end = index_start[np.searchsorted(sorted_post, node_post, side="right")]
    return vertices, indices, table, np.stack([begin, end], axis=1).astype(np.uint32)


def build_model(faces: FaceSet, draw_tree: Tree, collision_tree: Tree) -> QmapModel:
    draw_vb, draw_ib, draw_nodes, fragments = emit_draw(faces, draw_tree)
    coll_vb, coll_ib, coll_nodes, ranges = emit_collision(faces, collision_tree)
    return QmapModel(faces.materials, draw_vb, draw_ib, draw_nodes, fragments, coll_vb, coll_ib, coll_nodes, ranges)
