"""IQM bytes into an IqmModel. Every count and offset of the header is checked against the file's size before
anything is read or allocated, and every index against what it indexes: a hostile file raises FormatError with
the byte offset of the field at fault, never an out-of-range read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import FileBuffer, FormatError, Warnings
from .extensions import decode_extensions
from .layout import (
    ANIM_DTYPE,
    BOUNDS_DTYPE,
    CUSTOM,
    FORMATS,
    HEADER,
    HEADER_FIELDS,
    JOINT_DTYPE,
    KIND_OF_TYPE,
    MAGIC,
    MESH_DTYPE,
    NO_NEIGHBOUR,
    POSE_DTYPE,
    VERSION,
    VERTEX_ARRAY_DTYPE,
    IqmAnim,
    IqmMesh,
    IqmModel,
    IqmVertexArray,
)

_FIELD_OFFSET = {name: 16 + 4 * index for index, name in enumerate(HEADER_FIELDS)}
_CHANNELS = 10
_MAX_UNSTORED_POSES = 1 << 24  # frames x poses of animations whose every channel is constant


@dataclass
class _Header:
    values: dict[str, int]
    size: int  # bytes in the file

    def __getitem__(self, name: str) -> int:
        return self.values[name]

    def error(self, message: str, name: str) -> FormatError:
        return FormatError(f"header field {name} = {self.values[name]}: {message}", offset=_FIELD_OFFSET[name])


def decode_model(data: FileBuffer, warnings: Warnings) -> IqmModel:
    header = _read_header(data, warnings)
    text = _section(data, header, "num_text", "ofs_text", np.dtype(np.uint8))
    names = _Names(text.tobytes(), header)
    model = IqmModel(flags=header["flags"], extension_count=header["num_extensions"])
    model.vertex_count = header["num_vertexes"]
    model.meshes = _meshes(data, header, names)
    model.vertex_arrays = _vertex_arrays(data, header, names, warnings)
    if model.vertex_count and model.array("position") is None:
        if model.meshes or header["num_triangles"] or model.vertex_arrays:
            raise header.error("vertices but no position array", "num_vertexes")
        model.vertex_count = 0  # (an animation file with a vertex count and nothing else, as real ones have: none)
    _triangles(data, header, model)
    _joints(data, header, names, model)
    _animations(data, header, names, model, warnings)
    if header["num_comment"]:
        comment = _section(data, header, "num_comment", "ofs_comment", np.dtype(np.uint8)).tobytes()
        model.comment = comment.rstrip(b"\0")
    if header["num_extensions"]:
        model.extensions = decode_extensions(data, header["num_extensions"], header["ofs_extensions"], names.get,
                                             len(model.meshes), len(model.anims), warnings)  # fmt: skip
    return model


def _read_header(data: FileBuffer, warnings: Warnings) -> _Header:
    if len(data) < HEADER.size:
        raise FormatError(f"file is {len(data)} bytes, too short for the {HEADER.size}-byte IQM header", offset=0)
    magic, *values = HEADER.unpack_from(data, 0)
    if magic != MAGIC:
        raise FormatError(f"not an IQM file (starts with {magic[:16]!r}, not 'INTERQUAKEMODEL')", offset=0)
    header = _Header(dict(zip(HEADER_FIELDS, values, strict=True)), len(data))
    if header["version"] != VERSION:
        hint = " (an old file: the reference tools' `upgrade` converts it)" if header["version"] == 1 else ""
        raise header.error(f"only IQM version {VERSION} is supported{hint}", "version")
    if header["filesize"] > len(data):
        raise header.error(f"the file is {len(data)} bytes: truncated", "filesize")
    if header["filesize"] < len(data):
        warnings.add(f"{len(data) - header['filesize']} bytes after the declared end of the file ignored")
    return header


def _section(
    data: FileBuffer, header: _Header, count_field: str, offset_field: str, dtype: np.dtype[Any], per: int = 1
) -> npt.NDArray[Any]:
    """`count * per` items of `dtype` at the field's offset, after checking that they lie inside the file."""
    count = header[count_field] * per
    if not count:
        return np.zeros(0, dtype)
    offset = header[offset_field]
    if offset < HEADER.size:
        message = f"{count_field} is {header[count_field]} but the data would overlap the header"
        raise header.error(message, offset_field)
    end = offset + count * dtype.itemsize
    if end > header.size:
        raise header.error(
            f"{header[count_field]} items of {dtype.itemsize * per} bytes end at byte {end}, past the end of the "
            f"file ({header.size} bytes)",
            offset_field,
        )
    return np.frombuffer(data, dtype, count, offset)


class _Names:
    """Strings of the text section by offset; each must start inside it and end with a NUL inside it."""

    def __init__(self, text: bytes, header: _Header) -> None:
        self._text = text
        self._header = header
        self._cache: dict[int, str] = {}

    def get(self, offset: int, what: str, where: int) -> str:
        cached = self._cache.get(offset)
        if cached is not None:
            return cached
        if offset == 0 and not self._text:
            return ""  # the compiler's files always hold "" at 0; an empty text section means no names
        end = self._text.find(b"\0", offset) if offset < len(self._text) else -1
        if end < 0:
            raise FormatError(
                f"{what}: name offset {offset} is outside the {len(self._text)}-byte text section or not "
                "NUL-terminated in it",
                offset=where,
            )
        raw = self._text[offset:end]
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            name = raw.decode("latin-1")
        self._cache[offset] = name
        return name


def _meshes(data: FileBuffer, header: _Header, names: _Names) -> list[IqmMesh]:
    records = _section(data, header, "num_meshes", "ofs_meshes", MESH_DTYPE)
    meshes = []
    base = header["ofs_meshes"]
    for index, record in enumerate(records.tolist()):
        name_offset, material_offset, first_vertex, vertex_count, first_triangle, triangle_count = record
        where = base + index * MESH_DTYPE.itemsize
        if first_vertex + vertex_count > header["num_vertexes"]:
            raise FormatError(
                f"mesh {index}: vertices {first_vertex}..{first_vertex + vertex_count - 1} but the file has "
                f"{header['num_vertexes']}",
                offset=where + 8,
            )
        if first_triangle + triangle_count > header["num_triangles"]:
            raise FormatError(
                f"mesh {index}: triangles {first_triangle}..{first_triangle + triangle_count - 1} but the file has "
                f"{header['num_triangles']}",
                offset=where + 16,
            )
        meshes.append(
            IqmMesh(
                names.get(name_offset, f"mesh {index} name", where),
                names.get(material_offset, f"mesh {index} material", where + 4),
                first_vertex,
                vertex_count,
                first_triangle,
                triangle_count,
            )
        )
    return meshes


def _vertex_arrays(data: FileBuffer, header: _Header, names: _Names, warnings: Warnings) -> list[IqmVertexArray]:
    records = _section(data, header, "num_vertexarrays", "ofs_vertexarrays", VERTEX_ARRAY_DTYPE)
    count = header["num_vertexes"]
    arrays: list[IqmVertexArray] = []
    seen: set[str] = set()
    base = header["ofs_vertexarrays"]
    for index, (kind_code, flags, format_code, size, offset) in enumerate(records.tolist()):
        where = base + index * VERTEX_ARRAY_DTYPE.itemsize
        if format_code >= len(FORMATS):
            raise FormatError(f"vertex array {index}: unknown component format {format_code}", offset=where + 8)
        if not 1 <= size <= 4:
            raise FormatError(f"vertex array {index}: {size} components per vertex (1 to 4 allowed)", offset=where + 12)
        component, dtype = FORMATS[format_code]
        end = offset + count * size * dtype.itemsize
        if count and end > header.size:
            raise FormatError(
                f"vertex array {index}: {count} vertices of {size} x {component} end at byte {end}, past the end of "
                f"the file ({header.size} bytes)",
                offset=where + 16,
            )
        if kind_code >= CUSTOM:
            kind, name = "custom", names.get(kind_code - CUSTOM, f"vertex array {index}", where)
        elif kind_code < len(KIND_OF_TYPE):
            kind, name = KIND_OF_TYPE[kind_code], ""
        else:
            warnings.add(f"vertex array {index} of reserved type {kind_code} ignored")
            continue
        key = name if kind == "custom" else kind
        if key in seen:
            warnings.add(f"vertex array {index}: a second {key!r} array ignored")
            continue
        seen.add(key)
        # (NaN and infinite numbers are kept: the reference compiler writes NaN tangents; see reader._Attributes)
        values = np.frombuffer(data, dtype, count * size, offset if count else 0).reshape(count, size)
        arrays.append(IqmVertexArray(kind, component, values, name, flags, offset))
    return arrays


def _require_finite(values: npt.NDArray[Any], base: int, stride: int, what: str) -> None:
    """Refuse NaN and infinite numbers (`values`: the file's numbers in order, each `stride` bytes from `base`):
    no bone or frame can be made of them."""
    finite = np.isfinite(values).ravel()
    if not finite.all():
        index = int(np.argmin(finite))
        raise FormatError(f"{what}: the number {float(values.ravel()[index])!r} is not finite",
                          offset=base + index * stride)  # fmt: skip


def _triangles(data: FileBuffer, header: _Header, model: IqmModel) -> None:
    triangles = _section(data, header, "num_triangles", "ofs_triangles", np.dtype("<u4"), per=3).reshape(-1, 3)
    if triangles.size and int(triangles.max()) >= header["num_vertexes"]:
        bad = int(np.argmax(triangles.ravel() >= header["num_vertexes"]))
        raise FormatError(
            f"triangle {bad // 3} uses vertex {int(triangles.ravel()[bad])} but the file has "
            f"{header['num_vertexes']} vertices",
            offset=header["ofs_triangles"] + 4 * bad,
        )
    model.triangles = triangles.astype(np.uint32)
    if header["ofs_adjacency"] and header["num_triangles"]:
        adjacency = _section(data, header, "num_triangles", "ofs_adjacency", np.dtype("<u4"), per=3).reshape(-1, 3)
        bad_mask = (adjacency >= header["num_triangles"]) & (adjacency != NO_NEIGHBOUR)
        if bad_mask.any():
            bad = int(np.argmax(bad_mask.ravel()))
            raise FormatError(
                f"adjacency of triangle {bad // 3} names triangle {int(adjacency.ravel()[bad])} of "
                f"{header['num_triangles']}",
                offset=header["ofs_adjacency"] + 4 * bad,
            )
        model.adjacency = adjacency.astype(np.uint32)


def _joints(data: FileBuffer, header: _Header, names: _Names, model: IqmModel) -> None:
    records = _section(data, header, "num_joints", "ofs_joints", JOINT_DTYPE)
    base = header["ofs_joints"]
    parents = records["parent"].astype(np.int32)
    _check_parents(parents, base, JOINT_DTYPE.itemsize, "joint")
    model.joint_names = [
        names.get(offset, f"joint {index}", base + index * JOINT_DTYPE.itemsize)
        for index, offset in enumerate(records["name"].tolist())
    ]
    model.joint_parents = parents
    model.joint_poses = records["pose"].astype(np.float32).reshape(-1, 10)
    for index, pose in enumerate(model.joint_poses):
        _require_finite(pose, base + index * JOINT_DTYPE.itemsize + 8, 4, f"joint {index} base pose")


def _check_parents(parents: npt.NDArray[np.int32], base: int, stride: int, what: str) -> None:
    """Parents must come before their children: loaders build each world matrix from its parent's."""
    bad = (parents < -1) | (parents >= np.arange(parents.shape[0]))
    if bad.any():
        index = int(np.argmax(bad))
        raise FormatError(
            f"{what} {index} has parent {int(parents[index])}: a parent must be an earlier {what} (or -1)",
            offset=base + index * stride + (4 if what == "joint" else 0),
        )


def _animations(data: FileBuffer, header: _Header, names: _Names, model: IqmModel, warnings: Warnings) -> None:
    poses = _section(data, header, "num_poses", "ofs_poses", POSE_DTYPE)
    _check_parents(poses["parent"].astype(np.int32), header["ofs_poses"], POSE_DTYPE.itemsize, "pose")
    model.pose_parents = poses["parent"].astype(np.int32)
    model.pose_masks = poses["mask"].astype(np.uint32) & np.uint32((1 << _CHANNELS) - 1)
    model.channel_offsets = poses["offset"].astype(np.float32).reshape(-1, _CHANNELS)
    model.channel_scales = poses["scale"].astype(np.float32).reshape(-1, _CHANNELS)
    stored_channels = (model.pose_masks[:, None] >> np.arange(_CHANNELS, dtype=np.uint32)) & 1 == 1
    for index, (offset, scale) in enumerate(zip(model.channel_offsets, model.channel_scales, strict=True)):
        where = header["ofs_poses"] + index * POSE_DTYPE.itemsize + 8
        _require_finite(offset, where, 4, f"pose {index} channel offsets")  # (every channel decodes to its offset)
        with np.errstate(over="ignore", invalid="ignore"):  # the largest value a frame can decode to (float32)
            reach = np.abs(offset) + np.abs(scale) * np.float32(np.iinfo(np.uint16).max)
        reach[~stored_channels[index]] = 0.0  # a channel the mask does not store never reads its scale
        _require_finite(reach, where + 4 * _CHANNELS, 4, f"pose {index} channel scales (offset + 65535 x scale)")
    if (poses["mask"] >> _CHANNELS).any():
        warnings.add("pose channel masks with bits above the 10 channels ignored")
    stored = int(sum(bin(int(mask)).count("1") for mask in model.pose_masks.tolist()))
    frame_count, channels = header["num_frames"], header["num_framechannels"]
    if frame_count and channels != stored:
        raise header.error(f"the poses store {stored} channels per frame", "num_framechannels")
    if frame_count and header["ofs_frames"]:
        frames = _section(data, header, "num_frames", "ofs_frames", np.dtype("<u2"), per=channels)
        model.frames = frames.reshape(frame_count, channels).astype(np.uint16)
    elif frame_count and stored:
        raise header.error(f"{frame_count} frames but no frame data (ofs_frames is 0)", "num_frames")
    else:  # nothing in the file backs the frame count: keep what decoding it would allocate plausible
        if frame_count * max(poses.shape[0], 1) > _MAX_UNSTORED_POSES:
            raise header.error("frames without stored channels, more than any model holds", "num_frames")
        model.frames = np.zeros((frame_count, 0), np.uint16)
    if header["ofs_bounds"] and frame_count:
        model.bounds = _section(data, header, "num_frames", "ofs_bounds", BOUNDS_DTYPE, per=8).reshape(-1, 8).copy()
    records = _section(data, header, "num_anims", "ofs_anims", ANIM_DTYPE)
    base = header["ofs_anims"]
    for index, (name_offset, first, count, framerate, flags) in enumerate(records.tolist()):
        where = base + index * ANIM_DTYPE.itemsize
        _require_finite(np.array([framerate]), where + 12, 4, f"animation {index} framerate")
        if framerate < 0:  # (as the IQE reader reads a negative `framerate`)
            warnings.add(f"animation {index}: negative framerate {framerate:g} read as 0 (none given)")
            framerate = 0.0
        if first + count > frame_count:
            raise FormatError(
                f"animation {index}: frames {first}..{first + count - 1} but the file has {frame_count} frames",
                offset=where + 4,
            )
        model.anims.append(IqmAnim(names.get(name_offset, f"animation {index}", where), first, count, framerate, flags))
