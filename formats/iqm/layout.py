"""IQM version 2: the binary layout (little-endian) and the model as its sections hold it.

`IqmModel` is the file's content, decoded from bytes but not interpreted: the reader fills it from a file and
turns it into an IqeDocument; the writer compiles an IqeDocument into one and lays it out. Section order
follows the reference compiler: header, text, meshes, vertex array headers, vertex data (8-byte aligned),
triangles, adjacency, joints, poses, animations, frames, bounds, comment, then extensions as FTE's iqmtool
lays them out (see extensions.py).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from .extensions import IqmExtensions

MAGIC = b"INTERQUAKEMODEL\x00"
VERSION = 2
HEADER_FIELDS = (
    "version", "filesize", "flags", "num_text", "ofs_text", "num_meshes", "ofs_meshes", "num_vertexarrays",
    "num_vertexes", "ofs_vertexarrays", "num_triangles", "ofs_triangles", "ofs_adjacency", "num_joints",
    "ofs_joints", "num_poses", "ofs_poses", "num_anims", "ofs_anims", "num_frames", "num_framechannels",
    "ofs_frames", "ofs_bounds", "num_comment", "ofs_comment", "num_extensions", "ofs_extensions",
)  # fmt: skip
HEADER = struct.Struct("<16s" + "I" * len(HEADER_FIELDS))
NO_NEIGHBOUR = 0xFFFFFFFF  # adjacency entry of an edge without exactly one other triangle

MESH_DTYPE = np.dtype([("name", "<u4"), ("material", "<u4"), ("first_vertex", "<u4"), ("num_vertexes", "<u4"),
                       ("first_triangle", "<u4"), ("num_triangles", "<u4")])  # fmt: skip
VERTEX_ARRAY_DTYPE = np.dtype([("type", "<u4"), ("flags", "<u4"), ("format", "<u4"), ("size", "<u4"),
                               ("offset", "<u4")])  # fmt: skip
JOINT_DTYPE = np.dtype([("name", "<u4"), ("parent", "<i4"), ("pose", "<f4", 10)])
POSE_DTYPE = np.dtype([("parent", "<i4"), ("mask", "<u4"), ("offset", "<f4", 10), ("scale", "<f4", 10)])
ANIM_DTYPE = np.dtype([("name", "<u4"), ("first_frame", "<u4"), ("num_frames", "<u4"), ("framerate", "<f4"),
                       ("flags", "<u4")])  # fmt: skip
BOUNDS_DTYPE = np.dtype("<f4")  # 8 per frame: bbmin xyz, bbmax xyz, xyradius, radius
LOOP_FLAG = 1

# Vertex array types; a type >= CUSTOM names a custom array by its text offset (type - CUSTOM).
POSITION, TEXCOORD, NORMAL, TANGENT, BLENDINDEXES, BLENDWEIGHTS, COLOR = range(7)
CUSTOM = 0x10
KIND_OF_TYPE = ("position", "texcoord", "normal", "tangent", "blendindexes", "blendweights", "color")

# Component formats, in code order: (IQE component name, numpy dtype of the stored value).
FORMATS = (
    ("byte", np.dtype("<i1")),
    ("ubyte", np.dtype("<u1")),
    ("short", np.dtype("<i2")),
    ("ushort", np.dtype("<u2")),
    ("int", np.dtype("<i4")),
    ("uint", np.dtype("<u4")),
    ("half", np.dtype("<f2")),
    ("float", np.dtype("<f4")),
    ("double", np.dtype("<f8")),
)
FORMAT_CODE = {name: code for code, (name, _) in enumerate(FORMATS)}
# The compiler's format and size of each array when the IQE does not declare one; customs are float x 4.
DEFAULT_FORMATS = {
    "position": ("float", 3),
    "texcoord": ("float", 2),
    "normal": ("float", 3),
    "tangent": ("float", 4),
    "blendindexes": ("ubyte", 4),
    "blendweights": ("ubyte", 4),
    "color": ("ubyte", 4),
}
CUSTOM_DEFAULT = ("float", 4)


@dataclass
class IqmVertexArray:
    """One vertex array: `values` (V, size) in the stored component type (uint8 for ubyte, float16 for half...)."""

    kind: str  # "position" ... "color", or "custom" (then `name` is the array's name)
    component: str  # one of the FORMATS names
    values: npt.NDArray[np.generic]
    name: str = ""
    flags: int = 0
    offset: int = 0  # where the values start in the file (for messages)

    @property
    def size(self) -> int:
        return int(self.values.shape[1])


@dataclass
class IqmMesh:
    name: str
    material: str
    first_vertex: int
    vertex_count: int
    first_triangle: int
    triangle_count: int


@dataclass
class IqmAnim:
    name: str
    first_frame: int
    frame_count: int
    framerate: float
    flags: int = 0


@dataclass
class IqmModel:
    """Everything an IQM file holds, section by section, with names resolved from the text section."""

    meshes: list[IqmMesh] = field(default_factory=list)
    vertex_count: int = 0
    vertex_arrays: list[IqmVertexArray] = field(default_factory=list)
    triangles: npt.NDArray[np.uint32] = field(default_factory=lambda: np.zeros((0, 3), np.uint32))
    adjacency: npt.NDArray[np.uint32] | None = None  # (T, 3): the triangle across edge k -> k+1, or NO_NEIGHBOUR
    joint_names: list[str] = field(default_factory=list)
    joint_parents: npt.NDArray[np.int32] = field(default_factory=lambda: np.zeros(0, np.int32))
    joint_poses: npt.NDArray[np.float32] = field(default_factory=lambda: np.zeros((0, 10), np.float32))
    pose_parents: npt.NDArray[np.int32] = field(default_factory=lambda: np.zeros(0, np.int32))
    pose_masks: npt.NDArray[np.uint32] = field(default_factory=lambda: np.zeros(0, np.uint32))
    channel_offsets: npt.NDArray[np.float32] = field(default_factory=lambda: np.zeros((0, 10), np.float32))
    channel_scales: npt.NDArray[np.float32] = field(default_factory=lambda: np.zeros((0, 10), np.float32))
    anims: list[IqmAnim] = field(default_factory=list)
    frames: npt.NDArray[np.uint16] = field(default_factory=lambda: np.zeros((0, 0), np.uint16))  # (F, channels)
    bounds: npt.NDArray[np.float32] | None = None  # (F, 8)
    comment: bytes | None = None  # the comment section without its terminating NULs; None when absent
    flags: int = 0
    extension_count: int = 0
    extensions: IqmExtensions = field(default_factory=IqmExtensions)  # FTE's decoded; written when they hold any

    def array(self, kind: str) -> IqmVertexArray | None:
        """The first vertex array of a standard kind, or None."""
        return next((array for array in self.vertex_arrays if array.kind == kind), None)

    def decoded_frames(self) -> npt.NDArray[np.float32]:
        """(F, P, 10) pose channels: offset + value * scale for the channels the masks store, as engines decode."""
        pose_count = self.pose_masks.shape[0]
        result = np.repeat(self.channel_offsets[None, :, :], self.frames.shape[0], axis=0).astype(np.float32)
        present = ((self.pose_masks[:, None] >> np.arange(10, dtype=np.uint32)) & 1).astype(bool)  # (P, 10)
        if pose_count and self.frames.shape[1]:
            stored = self.frames.astype(np.float32) * self.channel_scales[present][None, :]
            result[:, present] = self.channel_offsets[present][None, :] + stored
        return result
