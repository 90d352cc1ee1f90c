"""VDrift JOE version 3: a static triangle mesh with independent position, normal and texcoord indices.

Layout (little-endian): a 16-byte header (magic, version, num_faces, num_frames), then per frame the face
records first (three u16 index triples each), the counts in (verts, texcoords, normals) order, and the arrays
in (verts, normals, texcoords) order. Texture v is measured from the top of the image, as the file stores it;
the Blender layers flip it.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from .atomic import write_bytes_atomically
from .dedup import first_equal_rows, paired_columns, unique_corner_rows, unique_rows
from .errors import FormatError, read_file_bytes
from .rows import any_per_row, zeroed_non_finite

MAGIC_IDP2 = 0x32504449  # "IDP2", MD2's magic; VDrift never checks it
VERSION = 3
VDRIFT_MAX_FACES = 32000  # VDrift refuses files with more faces
MAX_INDEX = 0xFFFF
SIGNED_INDEX_LIMIT = 0x7FFF  # pre-2014 VDrift and every old Python tool read indices as signed shorts


class OverLimit(FormatError):
    """A model over VDrift's 32,000 faces or the format's 16-bit indices: it fits as several models."""


HEADER = struct.Struct("<4I")
COUNTS = struct.Struct("<3I")
FACE_DTYPE = np.dtype([("vertex", "<u2", 3), ("normal", "<u2", 3), ("texcoord", "<u2", 3)])

FloatArray = npt.NDArray[np.float32]
IndexArray = npt.NDArray[np.uint16]


@dataclass
class JoeFrame:
    """One frame: (F, 3) index arrays into its own position, normal and texcoord arrays."""

    vertex_indices: IndexArray
    normal_indices: IndexArray
    texcoord_indices: IndexArray
    positions: FloatArray  # (V, 3)
    normals: FloatArray  # (N, 3), not necessarily unit length
    texcoords: FloatArray  # (T, 2), v measured from the top of the image

    @property
    def face_count(self) -> int:
        return len(self.vertex_indices)

    @property
    def has_texcoords(self) -> bool:
        return len(self.texcoords) > 0

    @property
    def has_uv_map(self) -> bool:
        """False without texcoords, and for the single (0, 0) that exporters write in place of none."""
        return self.has_texcoords and not (len(self.texcoords) == 1 and not self.texcoords.any())


@dataclass
class JoeDocument:
    frames: list[JoeFrame]
    magic: int = MAGIC_IDP2
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what is worth saying but normal (dof2joe's magic 0)

    @property
    def first_frame(self) -> JoeFrame:
        return self.frames[0]


# --------------------------------------------------------------------------------------------------- reading


def read_joe(data: bytes, path: str | None = None) -> JoeDocument:
    """Parse a whole JOE file; every count is checked against the bytes left before anything is allocated."""
    try:
        return _read(memoryview(data))
    except FormatError as error:
        if path:
            error.with_path(path)
        raise


def load_joe(path: str) -> JoeDocument:
    return read_joe(read_file_bytes(path), path)


def _read(data: memoryview) -> JoeDocument:
    if len(data) < HEADER.size:
        raise FormatError(f"file is {len(data)} bytes, too short for the 16-byte JOE header", offset=0)
    magic, version, face_count, frame_count = HEADER.unpack_from(data, 0)
    if version != VERSION:
        if magic not in (MAGIC_IDP2, 0):  # (another kind of file: its first bytes say more than a version number)
            start = bytes(data[:4]).hex(" ").upper()
            raise FormatError(f"not a JOE file: it starts with bytes {start}, not IDP2 and version 3", offset=0)
        raise FormatError(f"JOE version {version} is not supported (only version 3)", offset=4)
    if frame_count == 0:
        raise FormatError("the file has no frames", offset=12)
    frames: list[JoeFrame] = []
    offset = HEADER.size
    for frame_number in range(frame_count):
        frame, offset = _read_frame(data, offset, face_count, frame_number)
        frames.append(frame)
    return _document(frames, magic, face_count, len(data) - offset)


def _document(frames: list[JoeFrame], magic: int, face_count: int, trailing: int) -> JoeDocument:
    """The document of frames read, with what its header and its size say."""
    warnings: list[str] = []
    notes: list[str] = []
    if magic == 0:  # (normal for dof2joe output; the normal-swap check says what matters of it)
        notes.append("magic is 0x00000000, not IDP2: made by dof2joe")
    elif magic != MAGIC_IDP2:
        warnings.append(f"magic is {magic:#010x}, not IDP2")
    if face_count > VDRIFT_MAX_FACES:
        warnings.append(f"{face_count} faces: VDrift refuses files with more than {VDRIFT_MAX_FACES}")
    if trailing:
        warnings.append(f"{trailing} trailing bytes after the last frame were ignored")
    if len(frames) > 1:
        warnings.append(f"{len(frames)} frames: only frame 0 is used, as in VDrift")
    return JoeDocument(frames=frames, magic=magic, warnings=warnings, notes=notes)


def read_many(files: list[tuple[bytes, str]]) -> list[JoeDocument]:
    """read_joe of each (data, path): the same documents and warnings, and the same error (the first file that
    cannot be read raises it). Files of one frame are read together: a few numpy calls for them all instead of a
    dozen each, most of a small model's reading, and a track's pack holds thousands. Any other file, and one whose
    indices are out of range, is read alone."""
    layouts = [_one_frame_layout(data) for data, _ in files]
    together = [index for index, layout in enumerate(layouts) if layout is not None]
    documents: dict[int, JoeDocument | None] = dict(zip(together, _read_together(
        [files[index][0] for index in together], [layouts[index] for index in together]), strict=True))  # fmt: skip
    return [document if (document := documents.get(index)) is not None else read_joe(data, path)
            for index, (data, path) in enumerate(files)]  # fmt: skip


_Layout: TypeAlias = tuple[int, int, int, int, int]  # magic, faces, vertices, texcoords, normals


def _one_frame_layout(data: bytes) -> _Layout | None:
    """The counts of a file of one frame with faces whose bytes hold what they count; None for any other."""
    if len(data) < HEADER.size:
        return None
    magic, version, faces, frames = HEADER.unpack_from(data, 0)
    counts_at = HEADER.size + faces * FACE_DTYPE.itemsize
    if version != VERSION or frames != 1 or faces == 0 or counts_at + COUNTS.size > len(data):
        return None
    vertices, texcoords, normals = COUNTS.unpack_from(data, counts_at)
    if counts_at + COUNTS.size + 12 * vertices + 12 * normals + 8 * texcoords > len(data):
        return None
    return magic, faces, vertices, texcoords, normals


def _read_together(datas: list[bytes], layouts: list[_Layout | None]) -> list[JoeDocument | None]:
    """The documents of files of one frame (their layouts), read as one; None for one with indices out of range."""
    if not datas:
        return []
    face_pieces, float_pieces = [], []
    for data, layout in zip(datas, layouts, strict=True):
        assert layout is not None
        _, faces, vertices, texcoords, normals = layout
        counts_at = HEADER.size + faces * FACE_DTYPE.itemsize
        arrays_at = counts_at + COUNTS.size
        face_pieces.append(data[HEADER.size : counts_at])
        float_pieces.append(data[arrays_at : arrays_at + 12 * vertices + 12 * normals + 8 * texcoords])
    records = np.frombuffer(b"".join(face_pieces), FACE_DTYPE)
    floats = np.frombuffer(b"".join(float_pieces), "<f4").astype(np.float32)
    counts = np.array([layout[1:] for layout in layouts if layout is not None], np.int64)  # faces, V, T, N
    face_ends = np.cumsum(counts[:, 0])
    face_starts = face_ends - counts[:, 0]
    indices = {name: records[name].astype(np.uint16) for name in ("vertex", "normal", "texcoord")}
    highest = {name: np.maximum.reduceat(table.max(axis=1), face_starts) for name, table in indices.items()}
    fine = (highest["vertex"] < counts[:, 1]) & (highest["normal"] < counts[:, 3]) & (
        (counts[:, 2] == 0) | (highest["texcoord"] < counts[:, 2]))  # fmt: skip
    results: list[JoeDocument | None] = []
    face_start = float_start = 0
    for data, layout, face_end, ok in zip(datas, layouts, face_ends.tolist(), fine.tolist(), strict=True):
        assert layout is not None
        magic, faces, vertices, texcoords, normals = layout
        normals_at = float_start + 3 * vertices
        texcoords_at = normals_at + 3 * normals
        float_end = texcoords_at + 2 * texcoords
        if ok:
            frame = JoeFrame(indices["vertex"][face_start:face_end], indices["normal"][face_start:face_end],
                             indices["texcoord"][face_start:face_end],
                             floats[float_start:normals_at].reshape(vertices, 3),
                             floats[normals_at:texcoords_at].reshape(normals, 3),
                             floats[texcoords_at:float_end].reshape(texcoords, 2))  # fmt: skip
            end = HEADER.size + faces * FACE_DTYPE.itemsize + COUNTS.size + 4 * (float_end - float_start)
            results.append(_document([frame], magic, faces, len(data) - end))
        else:
            results.append(None)
        face_start, float_start = face_end, float_end
    return results


def _require(data: memoryview, offset: int, size: int, what: str, report_at: int | None = None) -> None:
    if size > len(data) - offset:
        remaining = max(len(data) - offset, 0)
        raise FormatError(f"{what} needs {size} bytes but only {remaining} remain", offset=report_at or offset)


def _read_frame(data: memoryview, offset: int, face_count: int, frame_number: int) -> tuple[JoeFrame, int]:
    label = f"frame {frame_number}"
    _require(data, offset, face_count * FACE_DTYPE.itemsize + COUNTS.size, f"{label}: {face_count} faces")
    faces = np.frombuffer(data, FACE_DTYPE, face_count, offset)
    faces_offset = offset
    offset += face_count * FACE_DTYPE.itemsize
    vert_count, texcoord_count, normal_count = COUNTS.unpack_from(data, offset)
    counts_offset = offset
    offset += COUNTS.size
    arrays_size = 12 * vert_count + 12 * normal_count + 8 * texcoord_count
    _require(
        data,
        offset,
        arrays_size,
        f"{label}: {vert_count} vertices, {normal_count} normals and {texcoord_count} texcoords",
        report_at=counts_offset,
    )
    positions = _floats(data, offset, vert_count, 3)
    offset += 12 * vert_count
    normals = _floats(data, offset, normal_count, 3)
    offset += 12 * normal_count
    texcoords = _floats(data, offset, texcoord_count, 2)
    offset += 8 * texcoord_count
    frame = JoeFrame(
        vertex_indices=faces["vertex"].astype(np.uint16),
        normal_indices=faces["normal"].astype(np.uint16),
        texcoord_indices=faces["texcoord"].astype(np.uint16),
        positions=positions,
        normals=normals,
        texcoords=texcoords,
    )
    _check_indices(frame, faces_offset, label)
    return frame, offset


def _floats(data: memoryview, offset: int, rows: int, columns: int) -> FloatArray:
    return np.frombuffer(data, "<f4", rows * columns, offset).astype(np.float32).reshape(rows, columns)


def _check_indices(frame: JoeFrame, faces_offset: int, label: str) -> None:
    """Out-of-range indices are an error, except texcoord indices when the file has no texcoords at all."""
    checks = (
        ("vertex", "vertices", frame.vertex_indices, len(frame.positions), 0),
        ("normal", "normals", frame.normal_indices, len(frame.normals), 6),
    )
    for kind, kinds, indices, count, field_offset in checks:
        if not indices.size or int(indices.max()) < count:  # (the usual case, in one pass)
            continue
        bad = np.flatnonzero(any_per_row(indices >= count))
        if len(bad):
            face = int(bad[0])
            raise FormatError(
                f"{label}: face {face} has a {kind} index {int(indices[face].max())} but there are only "
                f"{count} {kinds} ({len(bad)} face(s) out of range)",
                offset=faces_offset + face * FACE_DTYPE.itemsize + field_offset,
            )
    texcoords = frame.texcoord_indices
    if frame.has_texcoords and texcoords.size and int(texcoords.max()) >= len(frame.texcoords):
        bad = np.flatnonzero(any_per_row(frame.texcoord_indices >= len(frame.texcoords)))
        if len(bad):
            face = int(bad[0])
            raise FormatError(
                f"{label}: face {face} has a texcoord index {int(frame.texcoord_indices[face].max())} but there "
                f"are only {len(frame.texcoords)} texcoords ({len(bad)} faces are out of range)",
                offset=faces_offset + face * FACE_DTYPE.itemsize + 12,
            )


def texcoord_index_warning(frame: JoeFrame) -> str | None:
    """With no texcoords VDrift supplies one (0, 0); indices other than 0 would read out of bounds in the game."""
    if frame.has_texcoords or not frame.texcoord_indices.any():
        return None
    count = int(np.count_nonzero(any_per_row(frame.texcoord_indices != 0)))
    return f"the file has no texcoords but {count} faces have texcoord indices other than 0; they were ignored"


# --------------------------------------------------------------------------------------------------- writing


def write_joe(document: JoeDocument, warnings: list[str] | None = None, finite: bool = False) -> bytes:
    """Serialise a document; limits VDrift enforces are errors, limits old tools had are warnings (`finite`: its
    numbers are known to be finite, see finite_documents)."""
    check_limits(document, warnings if warnings is not None else [], finite)
    chunks = [HEADER.pack(document.magic, VERSION, document.first_frame.face_count, len(document.frames))]
    for frame in document.frames:
        chunks.append(_frame_bytes(frame))
    return b"".join(chunks)


def save_joe(path: str, document: JoeDocument, warnings: list[str] | None = None) -> None:
    write_bytes_atomically(path, write_joe(document, warnings))


def non_finite_warnings(frame: JoeFrame) -> list[str]:
    """NaN or infinite numbers, which VDrift reads without complaint and draws as holes or spikes."""
    warnings = []
    for what, values in (("positions", frame.positions), ("normals", frame.normals), ("texcoords", frame.texcoords)):
        bad = int(np.count_nonzero(any_per_row(~np.isfinite(values)))) if len(values) else 0
        if bad:
            warnings.append(f"{bad} of {len(values)} {what} are NaN or infinite")
    return warnings


def zero_non_finite(frame: JoeFrame) -> list[str]:
    """Make every NaN and infinite number of the frame 0, as an import reads them (a zero normal is Blender's own
    normal); one warning per kind of number, counting them."""
    warnings = []
    for what in ("positions", "normals", "texcoords"):
        values, bad = zeroed_non_finite(getattr(frame, what))
        if bad:
            setattr(frame, what, values)
            warnings.append(f"{bad:,} of {len(values):,} {what} are NaN or infinite: read as 0")
    return warnings


def check_limits(document: JoeDocument, warnings: list[str], finite: bool = False) -> None:
    """VDrift's limits and the numbers' finiteness (`finite`: already known to be finite everywhere)."""
    if not document.frames:
        raise FormatError("a JOE file needs at least one frame")
    face_count = document.first_frame.face_count
    if face_count > VDRIFT_MAX_FACES:
        raise OverLimit(f"{face_count} triangles: VDrift refuses JOE files with more than {VDRIFT_MAX_FACES}")
    for frame in document.frames:
        if frame.face_count != face_count:
            raise FormatError("every frame of a JOE file must have the same number of faces")
        if not finite and (problems := non_finite_warnings(frame)):
            raise FormatError(f"cannot write {problems[0]}")
        largest = max(len(frame.positions), len(frame.normals), max(len(frame.texcoords), 1)) - 1
        if largest > MAX_INDEX:
            raise FormatError(
                f"{largest + 1} distinct vertices, normals or texcoords: JOE indices are 16-bit (at most 65536)"
            )
        if largest > SIGNED_INDEX_LIMIT:
            warnings.append(
                f"indices up to {largest}: VDrift before 2014 and the old Blender scripts read indices as signed "
                f"16-bit and break above {SIGNED_INDEX_LIMIT}"
            )


def _frame_bytes(frame: JoeFrame) -> bytes:
    faces = np.empty(frame.face_count, FACE_DTYPE)
    faces["vertex"] = frame.vertex_indices
    faces["normal"] = frame.normal_indices
    faces["texcoord"] = frame.texcoord_indices
    counts = COUNTS.pack(len(frame.positions), len(frame.texcoords), len(frame.normals))
    return b"".join(
        (
            faces.tobytes(),
            counts,
            np.ascontiguousarray(frame.positions, "<f4").tobytes(),
            np.ascontiguousarray(frame.normals, "<f4").tobytes(),
            np.ascontiguousarray(frame.texcoords, "<f4").tobytes(),
        )
    )


def build_frame(
    corner_positions: FloatArray,
    corner_normals: FloatArray,
    corner_texcoords: FloatArray | None,
    vertex_table: tuple[FloatArray, npt.NDArray[np.integer[Any]]] | None = None,
) -> JoeFrame:
    """A frame from per-corner triangle data ((3F, 3), (3F, 3), (3F, 2) or None), de-duplicated by exact value.

    `vertex_table` (positions of V vertices, each corner's vertex) gives the same positions more cheaply.
    Without texcoords one (0, 0) is written with every index 0, which keeps the file safe for pre-2014 engines.
    """
    face_count = len(corner_positions) // 3
    if face_count > VDRIFT_MAX_FACES:
        raise OverLimit(f"{face_count} triangles: VDrift refuses JOE files with more than {VDRIFT_MAX_FACES}")
    distinct: Callable[[FloatArray], tuple[FloatArray, npt.NDArray[np.int64]]] = unique_rows
    if vertex_table is None:
        positions, vertex_indices = unique_rows(corner_positions)
    else:
        table, corner_vertices = vertex_table[0], np.asarray(vertex_table[1], np.intp)
        used = np.bincount(corner_vertices, minlength=len(table)) > 0  # loose vertices are not written
        positions, used_rank = unique_rows(table[used])
        vertex_indices = used_rank[(np.cumsum(used) - 1)[corner_vertices]]
        distinct = functools.partial(unique_corner_rows, corner_vertices=corner_vertices)  # (quicker, same rows)
    normals, normal_indices = distinct(corner_normals)
    if corner_texcoords is None:
        texcoords: FloatArray = np.zeros((1, 2), np.float32)
        texcoord_indices = np.zeros(3 * face_count, np.int64)
    else:
        texcoords, texcoord_indices = distinct(corner_texcoords)
    largest = max(len(positions), len(normals), len(texcoords)) - 1
    if largest > MAX_INDEX:
        raise OverLimit(
            f"{largest + 1} distinct vertices, normals or texcoords: JOE indices are 16-bit (at most 65536)"
        )
    return JoeFrame(
        vertex_indices=vertex_indices.astype(np.uint16).reshape(face_count, 3),
        normal_indices=normal_indices.astype(np.uint16).reshape(face_count, 3),
        texcoord_indices=texcoord_indices.astype(np.uint16).reshape(face_count, 3),
        positions=positions,
        normals=normals,
        texcoords=texcoords,
    )


# ------------------------------------------------------------------------------------------- VDrift behaviour


def normal_swap_would_fire(document: JoeDocument) -> bool:
    """Exact float32 replica of VDrift's NeedsNormalSwap: any frame with over a quarter of its faces'
    normals nearly perpendicular to the face votes for swapping every normal."""
    return any(_frame_votes_for_swap(frame) for frame in document.frames)


def _frame_votes_for_swap(frame: JoeFrame) -> bool:
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # (huge or NaN numbers: warned of once)
        return _votes_for_swap(frame)


def _votes_for_swap(frame: JoeFrame) -> bool:
    corners = frame.positions[frame.vertex_indices.astype(np.intp)]
    normals = frame.normals[frame.normal_indices.astype(np.intp)]
    perpendicular = perpendicular_faces(corners, normals)
    return int(np.count_nonzero(perpendicular)) > frame.face_count // 4


def perpendicular_faces(corners: FloatArray, normals: FloatArray) -> npt.NDArray[np.bool_]:
    """Per face ((F, 3, 3) corner positions and normals): whether VDrift counts it as voting for a swap. (Worked on
    each coordinate's own contiguous row: the same float32 operations, about twice as fast as on columns.)"""
    c = np.ascontiguousarray(np.moveaxis(corners, 0, -1), np.float32)  # (corner, axis, face)
    n = np.ascontiguousarray(np.moveaxis(normals, 0, -1), np.float32)
    sum_x, sum_y, sum_z = ((n[0, axis] + n[1, axis]) + n[2, axis] for axis in range(3))
    a_x, a_y, a_z = (c[2, axis] - c[0, axis] for axis in range(3))
    b_x, b_y, b_z = (c[1, axis] - c[0, axis] for axis in range(3))
    geometric_x, geometric_y, geometric_z = a_y * b_z - a_z * b_y, a_z * b_x - a_x * b_z, a_x * b_y - a_y * b_x
    geometric_length = np.sqrt((geometric_x * geometric_x + geometric_y * geometric_y) + geometric_z * geometric_z)
    sum_length = np.sqrt((sum_x * sum_x + sum_y * sum_y) + sum_z * sum_z)
    usable = (geometric_length.astype(np.float64) > 0.0001) & (sum_length.astype(np.float64) > 0.0001)
    cosine = ((sum_x / sum_length) * (geometric_x / geometric_length)
              + (sum_y / sum_length) * (geometric_y / geometric_length)) + (
        (sum_z / sum_length) * (geometric_z / geometric_length))  # fmt: skip
    perpendicular: npt.NDArray[np.bool_] = usable & (cosine < 0.5) & (cosine > -0.5)
    return perpendicular


def swap_normals(document: JoeDocument) -> None:
    """What VDrift does when the heuristic fires: (x, y, z) -> (x, -z, y) for every normal of every frame."""
    for frame in document.frames:
        x, y, z = frame.normals[:, 0].copy(), frame.normals[:, 1].copy(), frame.normals[:, 2].copy()
        frame.normals = np.stack((x, -z, y), axis=1).astype(np.float32)


def clockwise_faces(frame: JoeFrame) -> npt.NDArray[np.bool_]:
    """Faces whose geometric normal (P1 - P0) x (P2 - P0) points away from the sum of their stored normals."""
    return clockwise_of(frame.positions, frame.vertex_indices, frame.normals, frame.normal_indices)


def clockwise_of(
    positions: FloatArray, vertex_indices: npt.NDArray[np.integer[Any]], normals: FloatArray,
    normal_indices: npt.NDArray[np.integer[Any]],
) -> npt.NDArray[np.bool_]:  # fmt: skip
    """clockwise_faces of (F, 3) vertex and normal indices into these positions and normals."""
    vertex = vertex_indices.astype(np.intp)
    normal = normal_indices.astype(np.intp)
    points = positions.astype(np.float64)
    p0, p1, p2 = (np.take(points, vertex[:, corner], axis=0) for corner in range(3))  # (quicker than indexing)
    normals64 = normals.astype(np.float64)
    n0, n1, n2 = (np.take(normals64, normal[:, corner], axis=0) for corner in range(3))
    normal_sum = n0 + n1 + n2
    return _dot_rows(_cross_rows(p1 - p0, p2 - p0), normal_sum) < 0.0


def _cross_rows(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Row-wise cross product; much faster than np.cross on (N, 3) arrays."""
    out = np.empty_like(a)
    out[:, 0] = a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1]
    out[:, 1] = a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2]
    out[:, 2] = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return out


def _dot_rows(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return np.asarray(a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1] + a[:, 2] * b[:, 2], dtype=np.float64)


# ------------------------------------------------------------------------------------ to and from Blender order


@dataclass
class ImportableFaces:
    """The faces in Blender's corner order: every face of the frame (Blender holds each, see dedup), in the file's
    order."""

    flipped: npt.NDArray[np.bool_]  # per face: corners 1 and 2 swapped to face along the normals


def importable_faces(frame: JoeFrame, rewind_clockwise: bool) -> ImportableFaces:
    flipped = clockwise_faces(frame) if rewind_clockwise else np.zeros(frame.face_count, bool)
    return ImportableFaces(flipped=flipped)


def corner_data(
    frame: JoeFrame, faces: ImportableFaces
) -> tuple[npt.NDArray[np.int64], FloatArray, FloatArray | None]:
    """Flat corner vertex indices, corner normals and corner texcoords (v still from the top) of the faces."""
    corners = np.arange(3 * len(faces.flipped), dtype=np.intp).reshape(-1, 3)
    corners[faces.flipped] = corners[faces.flipped][:, [0, 2, 1]]
    corners = corners.ravel()
    vertex = frame.vertex_indices.ravel()[corners].astype(np.int64)
    normals = frame.normals[frame.normal_indices.ravel()[corners]]
    texcoords = None
    if frame.has_uv_map:
        texcoords = frame.texcoords[frame.texcoord_indices.ravel()[corners]]
    return vertex, normals, texcoords


def flip_v(texcoords: FloatArray) -> FloatArray:
    """JOE measures v from the top of the image, Blender from the bottom; computed in double, then rounded."""
    flipped = texcoords.astype(np.float64)
    flipped[:, 1] = 1.0 - flipped[:, 1]
    return flipped.astype(np.float32)


def document_from_triangles(
    positions: FloatArray,
    normals: FloatArray,
    blender_uvs: FloatArray | None,
    vertex_table: tuple[FloatArray, npt.NDArray[np.integer[Any]]] | None = None,
) -> JoeDocument:
    """A JOE document from per-corner triangle data in Blender's conventions, written CCW relative to the
    normals (what VDrift's winding fix and track culling expect). `vertex_table` optionally gives the same
    positions as (vertex positions, each corner's vertex), which de-duplicates faster."""
    positions = np.ascontiguousarray(positions, np.float32)
    normals = np.ascontiguousarray(normals, np.float32)
    corners = positions.reshape(-1, 3, 3).astype(np.float64)
    geometric = _cross_rows(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    per_face = normals.reshape(-1, 3, 3).astype(np.float64)
    clockwise = _dot_rows(geometric, per_face[:, 0] + per_face[:, 1] + per_face[:, 2]) < 0.0
    texcoords = flip_v(blender_uvs) if blender_uvs is not None else None
    if clockwise.any():  # (no copies where every face is already counter-clockwise)
        order = (np.where(clockwise[:, None], [0, 2, 1], [0, 1, 2]) + 3 * np.arange(len(clockwise))[:, None]).ravel()
        positions, normals = positions[order], normals[order]
        texcoords = texcoords[order] if texcoords is not None else None
        if vertex_table is not None:
            vertex_table = (vertex_table[0], np.asarray(vertex_table[1])[order])
    frame = build_frame(positions, normals, texcoords, vertex_table)
    return JoeDocument(frames=[frame])


# --------------------------------------------------------------------------------- many small models at once
# A pack holds thousands of models of a few hundred triangles: one numpy call per array for every model costs
# more than the work. These do the work of the one-model functions above for all models in one pass, rows of
# every model concatenated and the model's number part of each de-duplication key, with the same results.

Member: TypeAlias = tuple[
    FloatArray, FloatArray, FloatArray | None, tuple[FloatArray, npt.NDArray[np.integer[Any]]] | None
]  # (positions, normals, blender_uvs, vertex_table) of document_from_triangles


def documents_from_many_triangles(members: list[Member]) -> list[JoeDocument | None]:
    """document_from_triangles(*member) for each member (positions, normals, blender_uvs, vertex_table), in one
    pass; None for a member over VDrift's limits (the one-member function raises OverLimit for it)."""
    results: list[JoeDocument | None] = [None] * len(members)
    for group in _groups(members):
        for number, document in zip(group, _split_documents(_made_group([members[i] for i in group])), strict=True):
            results[number] = document
    return results


def files_from_many_triangles(members: list[Member]) -> list[tuple[bytes, bool] | None]:
    """For each member: the bytes of write_joe(document_from_triangles(*member)) and whether normal_swap_would_fire
    on it, in one pass (no document made for each). None for a member that one-member path refuses or warns of
    (over VDrift's limits or the old tools' signed indices, numbers not finite): it says why."""
    results: list[tuple[bytes, bool] | None] = [None] * len(members)
    for group in _groups(members):
        for number, made in zip(group, _group_files(_made_group([members[i] for i in group])), strict=True):
            results[number] = made
    return results


def _groups(members: list[Member]) -> Iterator[list[int]]:
    """The members under VDrift's face limit, a group of about GROUP_CORNERS corners at a time."""
    group: list[int] = []
    corners = 0
    for index, member in enumerate(members):
        if len(member[0]) // 3 > VDRIFT_MAX_FACES:
            continue
        group.append(index)
        corners += len(member[0])
        if corners >= GROUP_CORNERS:
            yield group
            group, corners = [], 0
    if group:
        yield group


# Members are made a group of about this many corners at a time: the arrays of a group stay in the CPU caches (a
# whole track's would be new memory, slower to fill than the work on it)
GROUP_CORNERS = 1 << 16


@dataclass
class _Group:
    """A group's frames, rows of every member one after another: of positions, normals and texcoords each, the
    distinct rows, how many each member has and each corner's index among its member's."""

    faces: npt.NDArray[np.int64]  # (M,) triangles of each member
    textured: npt.NDArray[np.bool_]  # (M,) whether the member has texcoords (else one (0, 0) is written)
    kinds: tuple[tuple[FloatArray, npt.NDArray[np.int64], npt.NDArray[np.int64]], ...]


def _made_group(members: list[Member]) -> _Group:
    faces = np.array([len(member[0]) // 3 for member in members], np.int64)
    corners = 3 * faces
    positions = np.concatenate([np.asarray(member[0], np.float32).reshape(-1, 3) for member in members])
    normals = np.concatenate([np.asarray(member[1], np.float32).reshape(-1, 3) for member in members])
    textured = np.array([member[2] is not None for member in members], bool)
    corner_member = np.repeat(np.arange(len(members)), corners)
    with_uvs = textured[corner_member]
    texcoords = np.zeros((len(positions), 2), np.float32)
    if textured.any():
        texcoords[with_uvs] = flip_v(np.concatenate([np.asarray(member[2], np.float32).reshape(-1, 2)
                                                     for member in members if member[2] is not None]))  # fmt: skip
    order = _counter_clockwise_order(positions, normals)
    if order is not None:  # (np.take: numpy 1.26 indexes rows of small tables several times slower)
        positions, normals, texcoords = (np.take(rows, order, axis=0) for rows in (positions, normals, texcoords))
    table, vertex_member, corner_vertices = _vertex_tables(members, positions, corners, order)
    used = np.bincount(corner_vertices, minlength=len(table)) > 0  # loose vertices are not written
    distinct_positions, used_rank, position_counts = _unique_rows_per_member(
        np.compress(used, table, axis=0), vertex_member[used], len(members))  # fmt: skip
    vertex_indices = used_rank[(np.cumsum(used) - 1)[corner_vertices]]
    distinct_normals, normal_indices, normal_counts = _unique_corner_rows_per_member(
        normals, corner_member, len(members), corner_vertices, len(table))  # fmt: skip
    if textured.all():
        distinct_texcoords, texcoord_indices, texcoord_counts = _unique_corner_rows_per_member(
            texcoords, corner_member, len(members), corner_vertices, len(table))  # fmt: skip
    else:
        distinct_texcoords, uv_indices, texcoord_counts = _unique_corner_rows_per_member(
            np.compress(with_uvs, texcoords, axis=0), corner_member[with_uvs], len(members), corner_vertices[with_uvs],
            len(table),
        )  # fmt: skip
        texcoord_indices = np.zeros(len(corner_member), np.int64)
        texcoord_indices[with_uvs] = uv_indices
    return _Group(faces, textured, (
        (distinct_positions, position_counts, vertex_indices),
        (distinct_normals, normal_counts, normal_indices),
        (distinct_texcoords, texcoord_counts, texcoord_indices),
    ))  # fmt: skip


def _group_files(group: _Group) -> list[tuple[bytes, bool] | None]:
    """files_from_many_triangles of a group: every member's faces and rows laid out as write_joe lays them out, for
    all at once, then cut into members; the swap vote and the checks on all rows at once."""
    member_count = len(group.faces)
    (positions, position_counts, vertex), (normals, normal_counts, normal), (texcoords, texcoord_counts, texcoord) = (
        group.kinds)  # fmt: skip
    counts = np.stack([position_counts, normal_counts, texcoord_counts])
    bad = np.zeros(member_count, bool)
    for rows, kind_counts in zip((positions, normals, texcoords), counts, strict=True):
        if not np.isfinite(rows).all():
            bad[np.repeat(np.arange(member_count), kind_counts)[~np.isfinite(rows).all(axis=1)]] = True
    # (an untextured member writes one (0, 0) texcoord; over the old tools' signed indices, check_limits warns)
    bad |= np.maximum(counts.max(axis=0), 1) - 1 > SIGNED_INDEX_LIMIT
    corner_member = np.repeat(np.arange(member_count), 3 * group.faces)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # (as _frame_votes_for_swap)
        perpendicular = perpendicular_faces(
            np.take(positions, vertex + (np.cumsum(position_counts) - position_counts)[corner_member],
                    axis=0).reshape(-1, 3, 3),
            np.take(normals, normal + (np.cumsum(normal_counts) - normal_counts)[corner_member],
                    axis=0).reshape(-1, 3, 3),
        )  # fmt: skip
    face_member = corner_member[::3]
    swaps = (np.bincount(face_member[perpendicular], minlength=member_count) > group.faces // 4).tolist()
    faces = np.empty(int(group.faces.sum()), FACE_DTYPE)
    for name, indices in (("vertex", vertex), ("normal", normal), ("texcoord", texcoord)):
        faces[name] = indices.astype(np.uint16).reshape(-1, 3)
    face_bytes = memoryview(faces.tobytes())
    row_bytes = [memoryview(np.ascontiguousarray(rows, "<f4").tobytes()) for rows in (positions, normals, texcoords)]
    ends = [np.cumsum(group.faces * FACE_DTYPE.itemsize).tolist()]
    ends += [np.cumsum(kind_counts * width).tolist() for kind_counts, width in zip(counts, (12, 12, 8), strict=True)]
    files: list[tuple[bytes, bool] | None] = []
    starts = [0, 0, 0, 0]
    for member, (face_count, vertices, normal_rows, texcoord_rows, textured) in enumerate(
        zip(group.faces.tolist(), *counts.tolist(), group.textured.tolist(), strict=True)
    ):
        stops = [kind_ends[member] for kind_ends in ends]
        if bad[member]:
            files.append(None)
        else:
            own = (face_bytes, *row_bytes) if textured else (face_bytes, *row_bytes[:2])
            pieces = [view[start:stop] for view, start, stop in zip(own, starts, stops, strict=False)]
            files.append((b"".join((
                HEADER.pack(MAGIC_IDP2, VERSION, face_count, 1), pieces[0],
                COUNTS.pack(vertices, texcoord_rows if textured else 1, normal_rows), pieces[1], pieces[2],
                pieces[3] if textured else _NO_TEXCOORDS,
            )), swaps[member]))  # fmt: skip
        starts = stops
    return files


_NO_TEXCOORDS = np.zeros(2, "<f4").tobytes()  # the one (0, 0) of a model without texcoords


def _counter_clockwise_order(positions: FloatArray, normals: FloatArray) -> npt.NDArray[np.intp] | None:
    """The corner order of document_from_triangles: corners 1 and 2 of each clockwise face swapped (None: every
    face is counter-clockwise already)."""
    corners = positions.reshape(-1, 3, 3).astype(np.float64)
    geometric = _cross_rows(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    per_face = normals.reshape(-1, 3, 3).astype(np.float64)
    clockwise = _dot_rows(geometric, per_face[:, 0] + per_face[:, 1] + per_face[:, 2]) < 0.0
    if not clockwise.any():
        return None
    order: npt.NDArray[np.intp] = (
        np.where(clockwise[:, None], [0, 2, 1], [0, 1, 2]) + 3 * np.arange(len(clockwise))[:, None]
    ).ravel()
    return order


def _vertex_tables(
    members: list[Member], positions: FloatArray, corners: npt.NDArray[np.int64], order: npt.NDArray[np.intp] | None
) -> tuple[FloatArray, npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """The members' vertex tables one after another, each vertex's member, and every corner's row in the tables
    (in the new corner order). A member without a table gets its corners as its table, which de-duplicates exactly
    as its corners do."""
    starts = (np.cumsum(corners) - corners).tolist()
    tables: list[FloatArray] = []
    local: list[npt.NDArray[np.integer[Any]]] = []
    given = np.array([member[3] is not None for member in members], bool)
    for member, start, count in zip(members, starts, corners.tolist(), strict=True):
        if member[3] is None:
            tables.append(positions[start : start + count])
            local.append(np.arange(count))
        else:
            tables.append(np.asarray(member[3][0], np.float32).reshape(-1, 3))
            local.append(np.asarray(member[3][1]))
    sizes = np.array([len(table) for table in tables], np.intp)
    offsets = np.cumsum(sizes) - sizes
    corner_vertices = np.concatenate(local).astype(np.intp) + np.repeat(offsets, corners)
    if order is not None:  # (the given corners are in the given order; corners never move between members)
        moved = given[np.repeat(np.arange(len(members)), corners)]
        corner_vertices[moved] = corner_vertices[order][moved]
    vertex_member = np.repeat(np.arange(len(members), dtype=np.intp), sizes)
    return np.concatenate(tables), vertex_member, corner_vertices


def _unique_rows_per_member(
    rows: FloatArray, member: npt.NDArray[np.integer[Any]], member_count: int
) -> tuple[FloatArray, npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """unique_rows of each member's rows (rows of one member together, members in order), at once: the distinct
    rows of every member one after another, each row's index among its member's, and how many each member has."""
    values = np.ascontiguousarray(rows, np.float32)
    keyed = np.empty((len(values), values.shape[1] + 1), np.uint32)
    keyed[:, 0] = member
    keyed[:, 1:] = values.view(np.uint32)  # (bits, as unique_rows compares)
    first = first_equal_rows(paired_columns(keyed))
    is_first = first == np.arange(len(first))
    rank = np.cumsum(is_first) - 1  # among the first rows of every member
    counts = np.bincount(np.asarray(member)[is_first], minlength=member_count).astype(np.int64)
    before = np.cumsum(counts) - counts
    labels: npt.NDArray[np.int64] = rank[first] - before[member]
    return np.compress(is_first, values, axis=0), labels, counts  # (rows chosen: quicker than a boolean index)


def _unique_corner_rows_per_member(
    rows: FloatArray,
    member: npt.NDArray[np.integer[Any]],
    member_count: int,
    corner_vertices: npt.NDArray[np.intp],
    vertex_count: int,
) -> tuple[FloatArray, npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """_unique_rows_per_member of per-corner rows, comparing only the corners whose row differs from their vertex's
    first corner's (as unique_corner_rows does: smooth normals and UVs with few seams leave a fraction)."""
    values = np.ascontiguousarray(rows, np.float32)
    count = len(values)
    first_corner = np.full(vertex_count, count, np.intp)
    np.minimum.at(first_corner, corner_vertices, np.arange(count))
    first = first_corner[corner_vertices]  # each corner's vertex's first corner (of its own member)
    bits = values.view(np.uint32)
    first_bits = np.take(bits, first, axis=0)
    differs = bits[:, 0] != first_bits[:, 0]
    for column in range(1, bits.shape[1]):
        differs |= bits[:, column] != first_bits[:, column]
    compared = np.flatnonzero(differs | (first == np.arange(count)))  # every row's first occurrence is among them
    distinct, labels, counts = _unique_rows_per_member(np.take(values, compared, axis=0), member[compared],
                                                       member_count)  # fmt: skip
    compared_labels = np.empty(count, np.int64)
    compared_labels[compared] = labels
    corner_labels = compared_labels[first]
    corner_labels[differs] = compared_labels[differs]
    return distinct, corner_labels, counts


def _split_documents(group: _Group) -> list[JoeDocument | None]:
    """One document per member of the group; None for a member over the 16-bit index limit."""
    faces, textured = group.faces, group.textured
    kinds = [(rows, counts, indices.astype(np.uint16)) for rows, counts, indices in group.kinds]
    row_ends = [np.cumsum(counts).tolist() for _, counts, _ in kinds]
    corner_ends = np.cumsum(3 * faces).tolist()
    documents: list[JoeDocument | None] = []
    row_start = [0, 0, 0]
    corner_start = 0
    for member, face_count in enumerate(faces.tolist()):
        arrays: list[FloatArray] = []
        indices: list[IndexArray] = []
        for kind, (rows, _, corner_indices) in enumerate(kinds):
            end = row_ends[kind][member]
            arrays.append(rows[row_start[kind] : end])
            indices.append(corner_indices[corner_start : corner_ends[member]].reshape(face_count, 3))
            row_start[kind] = end
        corner_start = corner_ends[member]
        if not textured[member]:
            arrays[2] = np.zeros((1, 2), np.float32)
        if max(len(array) for array in arrays) - 1 > MAX_INDEX:
            documents.append(None)
            continue
        frame = JoeFrame(vertex_indices=indices[0], normal_indices=indices[1], texcoord_indices=indices[2],
                         positions=arrays[0], normals=arrays[1], texcoords=arrays[2])  # fmt: skip
        documents.append(JoeDocument(frames=[frame]))
    return documents


def finite_documents(documents: list[JoeDocument]) -> list[bool]:
    """Per document: whether every number of every frame is finite (non_finite_warnings empty), in one pass."""
    frames = [(number, frame) for number, document in enumerate(documents) for frame in document.frames]
    bad = np.zeros(len(documents), bool)
    for what in ("positions", "normals", "texcoords"):
        arrays = [getattr(frame, what).reshape(len(getattr(frame, what)), -1) for _, frame in frames]
        if not frames or not sum(len(array) for array in arrays):
            continue
        rows_bad = ~np.isfinite(np.concatenate([array.reshape(-1) for array in arrays]))
        owner = np.repeat([number for number, _ in frames], [array.size for array in arrays])
        bad[owner[rows_bad]] = True
    return [bool(flag) for flag in ~bad]


def normal_swaps_would_fire(documents: list[JoeDocument]) -> list[bool]:
    """normal_swap_would_fire of each document, in one pass over every frame of a group of documents at a time."""
    fires: list[bool] = []
    group: list[JoeDocument] = []
    corners = 0
    for document in documents:
        group.append(document)
        corners += sum(3 * frame.face_count for frame in document.frames)
        if corners >= GROUP_CORNERS:
            fires += _normal_swaps_would_fire(group)
            group, corners = [], 0
    return fires + _normal_swaps_would_fire(group)


def _normal_swaps_would_fire(documents: list[JoeDocument]) -> list[bool]:
    frames = [(number, frame) for number, document in enumerate(documents) for frame in document.frames]
    if not frames:
        return [False] * len(documents)
    positions = np.concatenate([frame.positions for _, frame in frames])
    normals = np.concatenate([frame.normals for _, frame in frames])
    position_offsets = np.cumsum([0] + [len(frame.positions) for _, frame in frames[:-1]])
    normal_offsets = np.cumsum([0] + [len(frame.normals) for _, frame in frames[:-1]])
    face_counts = np.array([frame.face_count for _, frame in frames], np.int64)
    frame_of_face = np.repeat(np.arange(len(frames)), face_counts)
    vertex = np.concatenate([frame.vertex_indices for _, frame in frames]).astype(np.intp)
    normal = np.concatenate([frame.normal_indices for _, frame in frames]).astype(np.intp)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # (huge or NaN numbers: warned of once)
        perpendicular = perpendicular_faces(positions[vertex + position_offsets[frame_of_face, None]],
                                             normals[normal + normal_offsets[frame_of_face, None]])  # fmt: skip
    votes = np.bincount(frame_of_face[perpendicular], minlength=len(frames)) > face_counts // 4
    fires = np.zeros(len(documents), bool)
    fires[np.array([number for number, _ in frames])[votes]] = True
    return [bool(flag) for flag in fires]
