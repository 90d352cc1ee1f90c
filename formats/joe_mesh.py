"""A JOE model's arrays as a Blender mesh takes them, with the warnings its import gives: corners in Blender's order
(clockwise faces turned), faces kept whole (formats.dedup), v measured from the bottom. For one model, or for the
many small members of a track pack at once: numpy's cost per call, paid once per group of members instead of once
per member, is most of the time a small member takes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from . import dedup, joe
from .joe import FloatArray, JoeDocument, JoeFrame
from .rows import PreparedNormals, all_per_row, unit_vectors

SWAP_APPLIED = "VDrift's normal swap fired and was applied, as the game does"
SWAP_NOT_APPLIED = ("VDrift's normal-swap heuristic fires on this file: the game swaps its normals (turn on VDrift "
                    "Normal Swap to see it shaded as in the game)")  # fmt: skip


@dataclass
class MeshArrays:
    """One model as a mesh: triangles only, in the file's order."""

    positions: FloatArray  # (V, 3): the model's vertices, then the copies that keep its faces whole
    corner_verts: npt.NDArray[np.int64]  # (3F,)
    corner_normals: FloatArray  # (3F, 3) as the file has them (not necessarily unit length)
    corner_texcoords: FloatArray | None  # (3F, 2), v from the bottom; None without a UV map
    warnings: list[str]
    normals: PreparedNormals | None = None  # the corner normals as custom normals take them, when made ahead

    @property
    def face_count(self) -> int:
        return len(self.corner_verts) // 3


def mesh_arrays(document: JoeDocument, rewind_clockwise: bool, apply_normal_swap: bool) -> MeshArrays:
    """The model's mesh arrays and warnings. Numbers that are not finite are made 0 and the normal swap applied in
    the document itself."""
    warnings = list(document.warnings)
    warnings += [text for frame in document.frames[:1] for text in joe.zero_non_finite(frame)]
    if joe.normal_swap_would_fire(document):
        if apply_normal_swap:
            joe.swap_normals(document)
            warnings.append(SWAP_APPLIED)
        else:
            warnings.append(SWAP_NOT_APPLIED)
    frame = document.first_frame
    if (message := joe.texcoord_index_warning(frame)) is not None:
        warnings.append(message)
    faces = joe.importable_faces(frame, rewind_clockwise)
    corner_verts, corner_normals, corner_texcoords = joe.corner_data(frame, faces)
    corner_verts, copied = dedup.faces_kept_whole(corner_verts, np.full(frame.face_count, 3), len(frame.positions))
    positions = np.concatenate([frame.positions, frame.positions[copied]]) if copied.size else frame.positions
    texcoords = joe.flip_v(corner_texcoords) if corner_texcoords is not None else None
    return MeshArrays(positions, corner_verts, corner_normals, texcoords, warnings)


def mesh_arrays_of_many(
    documents: list[JoeDocument], rewind_clockwise: bool, apply_normal_swap: bool
) -> list[MeshArrays]:
    """mesh_arrays of each document, the same arrays and warnings, most of them a group of documents at a time.
    Documents the group's arrays do not describe as they are (several frames, numbers not finite, no UV map, a
    normal swap to apply, faces dedup must take apart) take the one-model path."""
    results: list[MeshArrays | None] = [None] * len(documents)
    candidates = [index for index, document in enumerate(documents) if _plain(document)]
    for group in _groups(candidates, documents):
        finite = joe.finite_documents([documents[index] for index in group])
        group = [index for index, ok in zip(group, finite, strict=True) if ok]
        for index, arrays in zip(group, _group_arrays([documents[i] for i in group], rewind_clockwise,
                                                      apply_normal_swap), strict=True):  # fmt: skip
            results[index] = arrays
    return [arrays if arrays is not None else mesh_arrays(document, rewind_clockwise, apply_normal_swap)
            for arrays, document in zip(results, documents, strict=True)]  # fmt: skip


def _plain(document: JoeDocument) -> bool:
    return len(document.frames) == 1 and document.first_frame.face_count > 0 and document.first_frame.has_uv_map


def _groups(indices: list[int], documents: list[JoeDocument]) -> list[list[int]]:
    groups: list[list[int]] = [[]]
    corners = 0
    for index in indices:
        groups[-1].append(index)
        corners += 3 * documents[index].first_frame.face_count
        if corners >= joe.GROUP_CORNERS:  # (a group's arrays stay in the CPU caches)
            groups.append([])
            corners = 0
    return [group for group in groups if group]


def _group_arrays(
    documents: list[JoeDocument], rewind_clockwise: bool, apply_normal_swap: bool
) -> list[MeshArrays | None]:
    """The arrays of single-frame, finite, textured documents; None for one that must take the one-model path."""
    if not documents:
        return []
    frames = [document.first_frame for document in documents]
    faces = np.array([frame.face_count for frame in frames], np.int64)
    face_starts = np.cumsum(faces) - faces
    member_of_face = np.repeat(np.arange(len(frames)), faces)
    positions, vertex = _joined(frames, "positions", "vertex_indices", member_of_face)
    normals, normal = _joined(frames, "normals", "normal_indices", member_of_face)
    texcoords, texcoord = _joined(frames, "texcoords", "texcoord_indices", member_of_face)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        perpendicular = joe.perpendicular_faces(np.take(positions, vertex, axis=0), np.take(normals, normal, axis=0))
    fires = np.add.reduceat(perpendicular.astype(np.int64), face_starts) > faces // 4
    flipped = (joe.clockwise_of(positions, vertex, normals, normal) if rewind_clockwise
               else np.zeros(len(vertex), bool))  # fmt: skip
    corners = np.arange(3 * len(vertex), dtype=np.intp).reshape(-1, 3)
    corners[flipped] = corners[flipped][:, [0, 2, 1]]
    corners = corners.ravel()
    corner_verts = vertex.ravel()[corners]
    # (np.take: numpy 1.26 indexes rows of small tables several times slower)
    corner_normals = np.take(normals, normal.ravel()[corners], axis=0)
    corner_texcoords = joe.flip_v(np.take(texcoords, texcoord.ravel()[corners], axis=0))
    spoiled = dedup.faces_repeating_a_vertex(corner_verts, np.full(len(vertex), 3)) | dedup.later_duplicate_faces(
        corner_verts, np.full(len(vertex), 3))  # fmt: skip
    spoiled_members = np.add.reduceat(spoiled.astype(np.int64), face_starts) > 0
    vertex_counts = np.array([len(frame.positions) for frame in frames], np.int64)
    vertex_starts = np.cumsum(vertex_counts) - vertex_counts
    unit = unit_vectors(corner_normals)
    per_vertex = np.zeros((len(positions), 3), np.float32)
    per_vertex[corner_verts] = unit
    same = all_per_row(np.take(per_vertex, corner_verts, axis=0) == unit)
    one_per_vertex = np.logical_and.reduceat(same, 3 * face_starts)
    member_corner_verts = corner_verts - np.repeat(vertex_starts, 3 * faces)  # (each member's own numbering)
    # (numpy's scalars and small slices cost a microsecond each: the loop takes Python numbers)
    corner_bounds = (3 * np.cumsum(faces)).tolist()
    vertex_bounds = np.cumsum(vertex_counts).tolist()
    skipped = (spoiled_members | (fires & apply_normal_swap)).tolist()
    results: list[MeshArrays | None] = []
    begin = first = 0
    for document, frame, end, last, skip, swap, one in zip(
        documents, frames, corner_bounds, vertex_bounds, skipped, fires.tolist(), one_per_vertex.tolist(),
        strict=True,
    ):  # fmt: skip
        if not skip:
            warnings = [*document.warnings, SWAP_NOT_APPLIED] if swap else list(document.warnings)
            prepared = PreparedNormals(unit[begin:end], per_vertex[first:last] if one else None)
            results.append(MeshArrays(frame.positions, member_corner_verts[begin:end], corner_normals[begin:end],
                                      corner_texcoords[begin:end], warnings, prepared))  # fmt: skip
        else:
            results.append(None)
        begin, first = end, last
    return results


def _joined(
    frames: list[JoeFrame], rows: str, indices: str, member_of_face: npt.NDArray[np.intp]
) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """The frames' rows one after another, and their faces' indices into them."""
    arrays: list[FloatArray] = [getattr(frame, rows) for frame in frames]
    counts = np.array([len(array) for array in arrays], np.int64)
    starts = np.cumsum(counts) - counts
    index_table: npt.NDArray[Any] = np.concatenate([getattr(frame, indices) for frame in frames])
    return np.concatenate(arrays), index_table.astype(np.int64) + starts[member_of_face, None]
