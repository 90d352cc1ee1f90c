"""The in-memory SMD/VTA document: plain dataclasses holding numpy arrays for the bulk data.

Triangle data is stored per corner in file order (triangle t, corner k is row 3*t + k once flattened), so an importer
can push it through `foreach_set` without Python loops. Weight links are stored raw, as read, in CSR form:
`link_counts[t, k]` links for that corner, taken in order from `link_bones` / `link_weights`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

Flavour = Literal["source", "goldsrc"]
IntArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]
CornerFloats = npt.NDArray[np.float64] | npt.NDArray[np.float32]  # as read (float64), or as an exporter has them


def empty_ints(*shape: int) -> IntArray:
    return np.zeros(shape, dtype=np.int32)


def empty_floats(*shape: int) -> FloatArray:
    return np.zeros(shape, dtype=np.float64)


@dataclass
class SmdNode:
    """One bone: `parent` is another node's id, or -1 for a root."""

    id: int
    name: str
    parent: int


@dataclass
class SkeletonFrame:
    """One `time N` block of the skeleton: the bones listed there (a sparse frame lists only some)."""

    time: int
    bone_ids: IntArray = field(default_factory=lambda: empty_ints(0))
    positions: FloatArray = field(default_factory=lambda: empty_floats(0, 3))
    rotations: FloatArray = field(default_factory=lambda: empty_floats(0, 3))  # Euler XYZ, radians
    comment: str = ""  # text after the time number, comment marker removed (VTA shape names live here)
    line: int = 0  # the `time` line's number in its file (0: not read from one)


@dataclass
class Triangles:
    """The `triangles` block: T triangles, 3 corners each, all arrays in file order."""

    material_names: list[str] = field(default_factory=list)
    material_indices: IntArray = field(default_factory=lambda: empty_ints(0))  # (T,) into material_names
    parent_bones: IntArray = field(default_factory=lambda: empty_ints(0, 3))  # (T, 3) the first column
    positions: CornerFloats = field(default_factory=lambda: empty_floats(0, 3, 3))  # (T, 3, 3)
    normals: CornerFloats = field(default_factory=lambda: empty_floats(0, 3, 3))  # (T, 3, 3)
    uvs: CornerFloats = field(default_factory=lambda: empty_floats(0, 3, 2))  # (T, 3, 2), bottom-left origin
    link_counts: IntArray = field(default_factory=lambda: empty_ints(0, 3))  # (T, 3); 0 = rigid on parent
    link_bones: IntArray = field(default_factory=lambda: empty_ints(0))  # (L,) L = link_counts.sum()
    link_weights: FloatArray = field(default_factory=lambda: empty_floats(0))  # (L,) raw, as written
    # (3T,) optional: which corners hold one line's values (equal numbers, numbered in order of first appearance),
    # as the reader found them or an exporter knows them. Readers of the document may group corners by it; the
    # writer checks it, then makes each such line once. Whoever changes per-corner arrays must set it to None.
    corner_lines: npt.NDArray[np.int64] | None = None

    def __len__(self) -> int:
        return int(self.material_indices.shape[0])

    # Per-corner columns held per distinct vertex line (see hold_per_line): made per corner when first asked for.
    _PER_LINE = ("positions", "normals", "uvs")

    def hold_per_line(self, columns: dict[str, FloatArray]) -> None:
        """Hold these per-corner columns (of positions, normals, uvs) as the rows of the distinct vertex lines (row
        i: line i of corner_lines) instead: each is made per corner, the same array as before, when first asked
        for, and until then `line_rows` gives the lines' rows (an importer that groups corners by line needs no
        more; a 1M-triangle grid's three per-corner columns are 190 MB)."""
        assert self.corner_lines is not None and set(columns) <= set(self._PER_LINE)
        for name in columns:
            delattr(self, name)
        self.__dict__["_per_line"] = (self.corner_lines, columns)

    def __getattr__(self, name: str) -> FloatArray:
        """A column held per line (hold_per_line), made per corner now and kept."""
        held = self.__dict__.get("_per_line")
        if held is None or name not in held[1]:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        lines, columns = held
        table = columns[name]
        value: FloatArray = np.take(table, lines, axis=0).reshape(-1, 3, table.shape[1])
        setattr(self, name, value)
        return value

    def line_rows(self, name: str) -> FloatArray | None:
        """The distinct lines' rows of a column held per line and not made per corner yet, while corner_lines is
        the one it was held with; else None (take the per-corner column)."""
        held = self.__dict__.get("_per_line")
        if held is None or name in self.__dict__ or name not in held[1] or held[0] is not self.corner_lines:
            return None
        rows: FloatArray = held[1][name]
        return rows

    def link_offsets(self) -> npt.NDArray[np.int64]:
        """(3T + 1,) start of each corner's links in link_bones / link_weights, plus the end."""
        offsets = np.zeros(self.link_counts.size + 1, dtype=np.int64)
        np.cumsum(self.link_counts.reshape(-1), out=offsets[1:])
        return offsets

    def padded_links(self, max_links: int | None = None) -> tuple[IntArray, FloatArray]:
        """Links as (T, 3, K) bone ids (-1 = none) and weights (0 = none); K = max count, or max_links."""
        counts = self.link_counts.reshape(-1).astype(np.int64)
        width = int(counts.max(initial=0)) if max_links is None else max_links
        bones = np.full((counts.size, width), -1, dtype=np.int32)
        weights = np.zeros((counts.size, width), dtype=np.float64)
        first = self.link_offsets()[:-1]
        for rank in range(min(width, int(counts.max(initial=0)))):  # rank by rank: a column each
            has = np.flatnonzero(counts > rank)
            bones[has, rank] = self.link_bones[first[has] + rank]
            weights[has, rank] = self.link_weights[first[has] + rank]
        shape = (*self.link_counts.shape, width)
        return bones.reshape(shape), weights.reshape(shape)


@dataclass
class VertexFrame:
    """One `time N` block of `vertexanimation`: absolute positions and normals of the listed vertex ids."""

    time: int
    vertex_ids: IntArray = field(default_factory=lambda: empty_ints(0))
    positions: FloatArray = field(default_factory=lambda: empty_floats(0, 3))
    normals: FloatArray = field(default_factory=lambda: empty_floats(0, 3))


@dataclass
class SmdDocument:
    """A whole SMD or VTA file. `triangles` is None without a triangles block (animation or VTA)."""

    version: int = 1
    flavour: Flavour = "source"  # "goldsrc" when every vertex line has the 9 GoldSrc fields
    nodes: list[SmdNode] = field(default_factory=list)
    skeleton: list[SkeletonFrame] = field(default_factory=list)
    triangles: Triangles | None = None
    vertex_animation: list[VertexFrame] | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def is_animation(self) -> bool:
        """Nodes and skeleton only: an animation (or pose) SMD."""
        return self.triangles is None and self.vertex_animation is None

    def node_rows(self) -> dict[int, int]:
        """Bone id -> index into `nodes` (ids may be sparse)."""
        return {node.id: row for row, node in enumerate(self.nodes)}

    def shape_names(self) -> dict[int, str]:
        """VTA shape name per time number: the skeleton `time N # name` comment, else the number itself."""
        names = {frame.time: frame.comment for frame in self.skeleton if frame.comment}
        frames = self.vertex_animation or []
        return {frame.time: names.get(frame.time, str(frame.time)) for frame in frames}
