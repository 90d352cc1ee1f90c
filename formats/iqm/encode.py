"""Lay an IqmModel out as IQM bytes, section by section in the reference compiler's order and alignment."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .components import stored_dtype
from .extensions import encode_extensions, extension_headers
from .layout import (
    ANIM_DTYPE,
    CUSTOM,
    FORMAT_CODE,
    HEADER,
    HEADER_FIELDS,
    JOINT_DTYPE,
    KIND_OF_TYPE,
    MAGIC,
    MESH_DTYPE,
    POSE_DTYPE,
    VERSION,
    VERTEX_ARRAY_DTYPE,
    IqmModel,
)


class _Text:
    """The text section: "" at offset 0, then each distinct string once, in the order first asked for."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.offsets: dict[str, int] = {}

    def offset(self, text: str) -> int:
        if not self.data:
            self._add("")
        found = self.offsets.get(text)
        return found if found is not None else self._add(text)

    def _add(self, text: str) -> int:
        offset = len(self.data)
        self.offsets[text] = offset
        self.data += text.encode("utf-8") + b"\0"
        return offset


def _padded(data: bytes, alignment: int) -> bytes:
    return data + bytes(-len(data) % alignment)


def encode_model(model: IqmModel) -> bytes:
    return b"".join(encode_model_pieces(model))


Piece = bytes | memoryview


def _array_bytes(values: npt.ArrayLike, dtype: np.dtype[Any] | str) -> Piece:
    """An array's bytes in the file's layout: a view of the array itself where it is laid out so already (a 1M-
    triangle model's vertex arrays, triangles and adjacency: 170 MB not copied), else of a copy in that layout."""
    table = np.ascontiguousarray(values, dtype)
    return table.reshape(-1).data.cast("B") if table.size else b""


def encode_model_pieces(model: IqmModel) -> list[Piece]:
    """The file's bytes as consecutive pieces: a large model's arrays are written one after the other, never
    copied into one whole (nor each into bytes of its own: a piece may be a view of the model's array)."""
    text = _Text()
    meshes = np.zeros(len(model.meshes), MESH_DTYPE)
    for index, mesh in enumerate(model.meshes):  # names, then materials, mesh by mesh (the compiler's order)
        meshes[index] = (text.offset(mesh.name), text.offset(mesh.material), mesh.first_vertex, mesh.vertex_count,
                         mesh.first_triangle, mesh.triangle_count)  # fmt: skip
    headers = np.zeros(len(model.vertex_arrays), VERTEX_ARRAY_DTYPE)
    vertex_data: list[Piece] = []  # the arrays, each aligned to its component (at least 4 bytes)
    vertex_size = 0
    for index, array in enumerate(model.vertex_arrays):
        dtype = stored_dtype(array.component)
        vertex_data.append(bytes(-vertex_size % max(dtype.itemsize, 4)))
        vertex_size += len(vertex_data[-1])
        kind = CUSTOM + text.offset(array.name) if array.kind == "custom" else KIND_OF_TYPE.index(array.kind)
        headers[index] = (kind, array.flags, FORMAT_CODE[array.component], array.size, vertex_size)
        vertex_data.append(_array_bytes(array.values, dtype.newbyteorder("<")))
        vertex_size += len(vertex_data[-1])
    vertex_data.append(bytes(-vertex_size % 4))
    joints = np.zeros(len(model.joint_names), JOINT_DTYPE)
    joints["name"] = [text.offset(name) for name in model.joint_names]
    joints["parent"] = model.joint_parents
    joints["pose"] = model.joint_poses
    poses = np.zeros(model.pose_masks.shape[0], POSE_DTYPE)
    poses["parent"], poses["mask"] = model.pose_parents, model.pose_masks
    poses["offset"], poses["scale"] = model.channel_offsets, model.channel_scales
    anims = np.zeros(len(model.anims), ANIM_DTYPE)
    for index, anim in enumerate(model.anims):
        anims[index] = (text.offset(anim.name), anim.first_frame, anim.frame_count, anim.framerate, anim.flags)
    extensions = encode_extensions(model.extensions, len(model.meshes), text.offset)
    comment = b"" if model.comment is None else _padded(model.comment + b"\0", 4)
    frames = _padded(np.ascontiguousarray(model.frames, "<u2").tobytes(), 4)
    sections: list[tuple[str | None, str, bytes]] = [
        ("num_text", "ofs_text", _padded(bytes(text.data), 4)),
        (None, "ofs_meshes", meshes.tobytes()),
        (None, "ofs_vertexarrays", headers.tobytes()),
    ]
    values = dict.fromkeys(HEADER_FIELDS, 0)
    values.update(version=VERSION, flags=model.flags, num_meshes=len(model.meshes),
                  num_vertexarrays=len(model.vertex_arrays), num_vertexes=model.vertex_count,
                  num_triangles=model.triangles.shape[0], num_joints=len(model.joint_names),
                  num_poses=model.pose_masks.shape[0], num_anims=len(model.anims), num_frames=model.frames.shape[0],
                  num_framechannels=model.frames.shape[1])  # fmt: skip
    pieces: list[Piece] = []
    size = HEADER.size

    def place(count_field: str | None, offset_field: str | None, data: Piece) -> None:
        nonlocal size
        if count_field is not None:
            values[count_field] = len(data)
        if data and offset_field is not None:
            values[offset_field] = size
        pieces.append(data)
        size += len(data)

    for count_field, offset_field, data in sections:
        place(count_field, offset_field, data)
    place(None, None, bytes(-size % 8))  # vertex data starts 8-byte aligned
    for header_index in range(headers.shape[0]):  # offsets were relative to the vertex data
        headers[header_index]["offset"] += size
    pieces[2] = headers.tobytes()
    for piece in vertex_data:
        place(None, None, piece)
    place(None, "ofs_triangles", _array_bytes(model.triangles, "<u4"))
    adjacency = model.adjacency
    place(None, "ofs_adjacency", b"" if adjacency is None else _array_bytes(adjacency, "<u4"))
    place(None, "ofs_joints", joints.tobytes())
    place(None, "ofs_poses", poses.tobytes())
    place(None, "ofs_anims", anims.tobytes())
    place(None, "ofs_frames", frames)
    bounds = b"" if model.bounds is None else np.ascontiguousarray(model.bounds, "<f4").tobytes()
    place(None, "ofs_bounds", bounds)
    place("num_comment", "ofs_comment", comment)
    if extensions:
        values["num_extensions"] = len(extensions)
        place(None, "ofs_extensions", extension_headers(extensions, size))
        for _, data in extensions:
            place(None, None, data)
    values["filesize"] = size
    header = HEADER.pack(MAGIC, *(values[name] for name in HEADER_FIELDS))
    return [header, *(piece for piece in pieces if piece)]
