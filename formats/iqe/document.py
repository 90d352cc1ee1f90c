"""The in-memory IQE document: plain dataclasses holding numpy arrays, ready for `foreach_set`.

Conventions kept from the file (no conversion happens in the codec):
* coordinates are the file's (Z-up, unconverted); texcoords keep the file's V (exporters write `1 - v`);
* faces keep the file's winding (clockwise fronts by IQE convention); `IqeMesh.blender_corners()` reverses it;
* poses are parent-local translation, quaternion (x, y, z, w) with w <= 0, and scale.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..errors import Warnings

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int32]

VERTEX_ARRAY_KINDS = (
    "position",
    "texcoord",
    "normal",
    "tangent",
    "blendindexes",
    "blendweights",
    "color",
    *(f"custom{slot}" for slot in range(10)),
)
COMPONENT_TYPES = ("byte", "ubyte", "short", "ushort", "int", "uint", "half", "float", "double")
MAX_INFLUENCES = 4
# Pose channels of one row of `IqeAnimation.frames` / `IqeDocument.base_pose_array()`.
POSE_CHANNELS = ("tx", "ty", "tz", "qx", "qy", "qz", "qw", "sx", "sy", "sz")
IDENTITY_POSE = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0, 1.0, 1.0, 1.0)


@dataclass
class IqeVertexArrayFormat:
    """One `vertexarray KIND COMPONENT SIZE NAME` declaration."""

    kind: str  # one of VERTEX_ARRAY_KINDS
    component: str  # one of COMPONENT_TYPES
    size: int  # 1..4
    name: str  # attribute name for custom arrays; the kind otherwise


@dataclass
class FteMeshFields:
    """FTE's FTE_MESH values of one IQM mesh (FTE's iqmtool sets them with `contents`, `surfaceflags`, `body`,
    `geomset` and `lodrange`); the defaults are iqmtool's."""

    contents: int = 0x02000000  # CONTENTS_BODY
    surfaceflags: int = 0
    body: int = 0  # the engine's `surfaceid`, reported to game code by traces
    geomset: int = 0xFFFFFFFF
    geomid: int = 0
    mindist: float = 0.0
    maxdist: float = 0.0


@dataclass
class IqeSkinFrame:
    """One frame of an FTE_SKINS skin: a material name and the shader text FTE uses when it has no shader."""

    material: str
    shader: str = ""


@dataclass
class IqeSkin:
    """One FTE_SKINS skin of a mesh: its frames, shown `interval` seconds each."""

    frames: list[IqeSkinFrame] = field(default_factory=list)
    interval: float = 0.0


@dataclass
class IqeEvent:
    """One FTE_EVENT animation event: `time` in seconds from the start of its animation."""

    time: float
    code: int = 0
    data: str = ""


@dataclass
class IqeMesh:
    """One output mesh: what the reference compiler groups under one (mesh name, material) pair.

    Vertex arrays have one row per vertex (V rows) or are None when the file has no such attribute.
    Faces are polygons: `face_corners` holds mesh-local vertex indices of all faces one after the other,
    `face_sizes` the number of corners of each face (>= 3), in the file's winding.
    """

    name: str
    material: str
    positions: FloatArray  # (V, 3); a `vp` W component is dropped, as the compiler never writes it
    texcoords: FloatArray | None = None  # (V, 2), V as in the file
    normals: FloatArray | None = None  # (V, 3)
    tangents: FloatArray | None = None  # (V, 4): tangent xyz and the bitangent sign in w
    bitangents: FloatArray | None = None  # (V, 3) when the file used the 6-value `vx` form
    colors: FloatArray | None = None  # (V, 4) RGBA floats, A defaults to 1
    blend_indices: IntArray | None = None  # (V, 4) joint indices; unused slots are 0 with weight 0
    blend_weights: FloatArray | None = None  # (V, 4) weights as written (not renormalised)
    custom: dict[int, FloatArray] = field(default_factory=dict)  # slot 0..9 -> (V, size)
    smooth_indices: IntArray | None = None  # (V,) `vs` smoothing index
    face_corners: IntArray = field(default_factory=lambda: np.zeros(0, np.int32))
    face_sizes: IntArray = field(default_factory=lambda: np.zeros(0, np.int32))
    edge_smooth: npt.NDArray[np.uint8] | None = None  # `fs` flag per corner (edge from that corner to the next)
    face_smooth_groups: IntArray | None = None  # (F,) `smoothgroup` key in force, -1 by default
    face_smooth_angles: FloatArray | None = None  # (F,) `smoothangle` in degrees, 180 by default
    face_smooth_uv: npt.NDArray[np.bool_] | None = None  # (F,) `smoothuv` in force
    fte: FteMeshFields | None = None  # FTE_MESH values (IQM only)
    skins: list[IqeSkin] = field(default_factory=list)  # FTE_SKINS skins (IQM only)

    @property
    def vertex_count(self) -> int:
        return int(self.positions.shape[0])

    @property
    def face_count(self) -> int:
        return int(self.face_sizes.shape[0])

    def face_starts(self) -> IntArray:
        """Offset of each face's first corner in `face_corners` (Blender's `loop_start`)."""
        starts = np.zeros(self.face_count, np.int32)
        if self.face_count > 1:
            np.cumsum(self.face_sizes[:-1], out=starts[1:])
        return starts

    def blender_corners(self) -> IntArray:
        """Corner vertex indices in Blender's counter-clockwise order: each face reversed, first corner kept."""
        return reverse_face_order(self.face_corners, self.face_sizes)

    def blender_edge_smooth(self) -> npt.NDArray[np.uint8] | None:
        """`edge_smooth` re-indexed to follow `blender_corners()` (flag of the edge from a corner to the next)."""
        if self.edge_smooth is None:
            return None
        return self.edge_smooth[_reversed_edge_sources(self.face_sizes)]

    def blender_texcoords(self) -> FloatArray | None:
        """Texcoords with V flipped back (`1 - v`), as every IQE exporter flips V when writing."""
        if self.texcoords is None:
            return None
        flipped = self.texcoords.copy()
        flipped[:, 1] = 1.0 - flipped[:, 1]
        return flipped


@dataclass
class IqeJoint:
    """A joint and its base (bind) pose relative to its parent."""

    name: str
    parent: int  # index of an earlier joint, or -1 for a root
    translation: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rotation: tuple[float, float, float, float] = (0.0, 0.0, 0.0, -1.0)  # unit quaternion x, y, z, w with w <= 0
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    line: int = field(default=0, compare=False)  # its `joint` line in the file read (0: not read from one)


@dataclass
class IqeAnimation:
    name: str
    framerate: float = 0.0  # frames per second; the compiler's default is 0
    loop: bool = False
    frames: FloatArray = field(default_factory=lambda: np.zeros((0, 0, 10), np.float32))  # (F, J, 10), POSE_CHANNELS
    events: list[IqeEvent] = field(default_factory=list)  # FTE_EVENT events (IQM only)


NUMBERED_JOINTS_NOTE = "the file holds animations but no joints"


@dataclass
class IqeDocument:
    meshes: list[IqeMesh] = field(default_factory=list)
    joints: list[IqeJoint] = field(default_factory=list)
    animations: list[IqeAnimation] = field(default_factory=list)
    vertex_arrays: list[IqeVertexArrayFormat] = field(default_factory=list)  # declarations, first per kind
    comments: list[str] = field(default_factory=list)  # text after '#' of comment lines (header excluded)
    comment_section: str | None = None  # verbatim text after the `comment` command
    warnings: Warnings = field(default_factory=Warnings)
    notes: list[str] = field(default_factory=list)  # what an import says without a warning: the file is as it should be
    # joints an IQM names by number alone (an animation file: it has poses but no joints), for a model of the same
    # skeleton; they are matched to its bones by number
    joints_numbered: bool = False

    def base_pose_array(self) -> FloatArray:
        """Base poses as a (J, 10) array of POSE_CHANNELS."""
        rows = [(*j.translation, *j.rotation, *j.scale) for j in self.joints]
        return np.array(rows, np.float32).reshape(len(rows), 10)

    def custom_format(self, slot: int) -> IqeVertexArrayFormat:
        """The declared format of custom array `slot`, or the compiler's default (float x 4, named customN)."""
        kind = f"custom{slot}"
        for declared in self.vertex_arrays:
            if declared.kind == kind:
                return declared
        return IqeVertexArrayFormat(kind, "float", 4, kind)


_FILLED_IN = (("texcoords", "texcoords"), ("normals", "normals"), ("tangents", "tangents"), ("colors", "colors"),
              ("blend weights", "blend_indices"), ("smoothing indices", "smooth_indices"))


def filled_in_notes(meshes: list[IqeMesh], smoothing: bool = True) -> list[str]:
    """Notes on the arrays a file holds for every vertex that some meshes lack (written as defaults for them: the
    compiler indexes each attribute across the whole file), each mesh named once; `smoothing`: smoothing indices
    too (IQE; IQM holds none)."""
    notes = []
    for label, field_name in _FILLED_IN if smoothing else _FILLED_IN[:-1]:
        if any(getattr(mesh, field_name) is not None for mesh in meshes):
            missing = dict.fromkeys(m.name for m in meshes if m.vertex_count and getattr(m, field_name) is None)
            if missing:
                notes.append(f"{label} written as defaults for meshes without them: {', '.join(missing)}")
    return notes


def reverse_face_order(corners: IntArray, sizes: IntArray) -> IntArray:
    """Reverse the winding of every face, keeping each face's first corner first."""
    faces = sizes.shape[0]
    if faces and int(sizes.min()) == int(sizes.max()) > 0 and corners.shape[0] == faces * int(sizes[0]):
        # faces of one size (triangles): the corners as a table of faces, its columns taken in the reversed order
        # (the same rows as gathering each corner's source: 32k triangles 338 -> 64 us)
        width = int(sizes[0])
        table = corners.reshape(faces, width, *corners.shape[1:])
        reversed_table: IntArray = np.take(table, (width - np.arange(width)) % width, axis=1)
        return reversed_table.reshape(corners.shape)
    return corners[_reversed_corner_sources(sizes)]


def _face_offsets(sizes: IntArray) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Per corner: the start of its face and its position inside the face."""
    sizes64 = sizes.astype(np.int64)
    starts = np.zeros(sizes64.shape[0], np.int64)
    if starts.shape[0] > 1:
        np.cumsum(sizes64[:-1], out=starts[1:])
    start_per_corner = np.repeat(starts, sizes64)
    return start_per_corner, np.arange(start_per_corner.shape[0], dtype=np.int64) - start_per_corner


def _reversed_corner_sources(sizes: IntArray) -> npt.NDArray[np.int64]:
    if sizes.shape[0] and int(sizes.min()) == int(sizes.max()) > 0:  # faces of one size (triangles): one pattern
        width = int(sizes[0])
        pattern = (width - np.arange(width, dtype=np.int64)) % width
        uniform: npt.NDArray[np.int64] = (np.arange(sizes.shape[0], dtype=np.int64)[:, None] * width + pattern).ravel()
        return uniform
    start, position = _face_offsets(sizes)
    size = np.repeat(sizes.astype(np.int64), sizes.astype(np.int64))
    sources: npt.NDArray[np.int64] = start + (size - position) % np.maximum(size, 1)
    return sources


def _reversed_edge_sources(sizes: IntArray) -> npt.NDArray[np.int64]:
    # Reversed edge j (new corner j -> j+1) is old edge (size - j - 1) mod size, walked backwards.
    start, position = _face_offsets(sizes)
    size = np.repeat(sizes.astype(np.int64), sizes.astype(np.int64))
    sources: npt.NDArray[np.int64] = start + (size - position - 1) % np.maximum(size, 1)
    return sources


def limit_blend_weights(
    indices: npt.ArrayLike,
    weights: npt.ArrayLike,
    max_influences: int = MAX_INFLUENCES,
    min_weight: float = 0.0,
    normalize: bool = True,
) -> tuple[IntArray, FloatArray]:
    """Sort influences by descending weight (stable), drop weights <= min_weight, keep `max_influences`.

    With `normalize` the kept weights sum to 1 (vertices with no weight left stay all zero). Unused slots get
    index 0 and weight 0. Inputs are (V, K) arrays of any K. Duplicate joint indices are not merged (the
    compiler does not merge them either). The reader uses `min_weight=1e-3, normalize=False`, the compiler's
    selection rule; exporters typically call it with the defaults.
    """
    index_table = np.asarray(indices, dtype=np.int64)
    weight_table = np.asarray(weights, dtype=np.float64)
    if index_table.ndim != 2 or index_table.shape != weight_table.shape:
        raise ValueError("indices and weights must be (V, K) arrays of the same shape")
    kept = weight_table > min_weight
    order = np.argsort(np.where(kept, -weight_table, np.inf), axis=1, kind="stable")[:, :max_influences]
    best_weights = np.where(np.take_along_axis(kept, order, 1), np.take_along_axis(weight_table, order, 1), 0.0)
    best_indices = np.where(best_weights > 0.0, np.take_along_axis(index_table, order, 1), 0)
    width = best_weights.shape[1]
    if width < max_influences:
        padding = ((0, 0), (0, max_influences - width))
        best_weights = np.pad(best_weights, padding)
        best_indices = np.pad(best_indices, padding)
    if normalize:
        totals = best_weights.sum(axis=1, keepdims=True)
        best_weights = np.divide(best_weights, totals, out=np.zeros_like(best_weights), where=totals > 0.0)
    return best_indices.astype(np.int32), best_weights.astype(np.float32)


def parent_first_order(parents: list[int]) -> list[int]:
    """An order of joint indices in which every parent precedes its children (breadth-first from the roots).

    Exporters use it to renumber joints before filling an IqeDocument; raises ValueError on a cycle or a parent
    index out of range.
    """
    count = len(parents)
    children: list[list[int]] = [[] for _ in range(count)]
    queue: list[int] = []
    for index, parent in enumerate(parents):
        if parent < 0:
            queue.append(index)
        elif parent < count:
            children[parent].append(index)
        else:
            raise ValueError(f"joint {index} has parent {parent}, out of range")
    position = 0
    while position < len(queue):
        queue.extend(children[queue[position]])
        position += 1
    if len(queue) != count:
        raise ValueError("the joint hierarchy has a cycle")
    return queue
