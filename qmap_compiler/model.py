"""The in-memory form of a `.qmap` file (spec §8), shared by the compiler's back end, the writer and the reader.

Trees are flat tables in pre-order (the order nodes are serialised in); `depth` and `subtree_size` are enough
to rebuild the nesting.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from .arrays import Array

DRAW_VERTEX_FLOATS = 14  # position 3, normal 3, tex 2, tangent 3, binormal 3 = 56 bytes
MAGIC = b"TFQMAP10"


@dataclass
class NodeTable:
    """Tree nodes in pre-order."""

    boxes: Array  # (N, 6) float32: min x, y, z, max x, y, z
    depth: Array  # (N,) int64, root = 0
    subtree_size: Array  # (N,) int64, nodes in the subtree including the node
    has_children: Array  # (N,) bool

    @property
    def count(self) -> int:
        return len(self.depth)

    def nodes_per_level(self) -> list[int]:
        return np.bincount(self.depth).tolist() if self.count else []


@dataclass
class DrawFragments:
    """Draw fragments sorted by node (pre-order index) and then by their order inside the node."""

    node: Array  # (G,) int64 pre-order node index
    material: Array  # (G,) uint32
    index_begin: Array
    index_end: Array
    vertex_begin: Array
    vertex_end: Array

    def as_rows(self) -> Array:
        """(G, 5) uint32 rows as stored in the file."""
        return np.stack([self.material, self.index_begin, self.index_end, self.vertex_begin, self.vertex_end],
                        axis=1).astype(np.uint32)


class VertexRows:
    """A vertex table made a block of rows at a time as it is written, never held whole (the draw table of a large
    map is most of the file)."""

    def __init__(self, count: int, width: int, blocks: Callable[[], Iterator[Array]]) -> None:
        self.count, self.width, self._blocks = count, width, blocks

    def __len__(self) -> int:
        return self.count

    def blocks(self) -> Iterator[Array]:
        """Consecutive (rows, width) float32 blocks, from the first row to the last."""
        return self._blocks()

    def whole(self) -> Array:
        table: Array = np.concatenate([np.zeros((0, self.width), np.float32), *self.blocks()])
        return table


def vertex_table(rows: Array | VertexRows) -> Array:
    """The whole table, made now if it was deferred."""
    return rows.whole() if isinstance(rows, VertexRows) else rows


@dataclass
class QmapModel:
    """Everything a `.qmap` holds."""

    materials: list[bytes]
    draw_vertices: Array | VertexRows  # (V, 14) float32
    draw_indices: Array  # (I,) uint32
    draw_nodes: NodeTable
    draw_fragments: DrawFragments
    collision_vertices: Array | VertexRows  # (C, 3) float32
    collision_indices: Array  # (J,) uint32
    collision_nodes: NodeTable
    collision_ranges: Array  # (M, 2) uint32 index begin/end per collision node, pre-order
