"""SMD / VTA (Valve Studio Model Data, Source and GoldSrc flavours): read, write, and helpers for Blender.

`read_smd` reads any of reference SMD, animation SMD and VTA (one grammar, optional blocks) into an SmdDocument of
numpy arrays; `write_smd` writes one back, in Source or GoldSrc flavour. See specs/smd.md for the rules followed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ..atomic import write_bytes_atomically
from ..errors import FileBuffer, FormatError, read_file_buffer
from ..rows import row_lengths
from .animation import DenseAnimation, dense_skeleton
from .document import Flavour, SkeletonFrame, SmdDocument, SmdNode, Triangles, VertexFrame
from .qc import COLLISION_COMMANDS, QcAttachment, QcDocument, QcFlexFile, QcMesh, load_qc
from .reader import read_smd
from .render import first_unwritable
from .weights import (
    STUDIOMDL_CULL,
    STUDIOMDL_MAX_LINKS,
    balance_links,
    dominant_bones,
    effective_links,
    links_from_padded,
    merge_duplicate_links,
    normalize_links,
    select_links,
)
from .writer import smd_pieces, write_smd, writes_lines_once

__all__ = [
    "COLLISION_COMMANDS",
    "STUDIOMDL_CULL",
    "STUDIOMDL_MAX_LINKS",
    "VTA_CHANGE_THRESHOLD",
    "DenseAnimation",
    "Flavour",
    "QcAttachment",
    "QcDocument",
    "QcFlexFile",
    "QcMesh",
    "SkeletonFrame",
    "SmdDocument",
    "SmdNode",
    "Triangles",
    "VertexFrame",
    "balance_links",
    "build_vta",
    "dense_skeleton",
    "dominant_bones",
    "effective_links",
    "first_unwritable",
    "links_from_padded",
    "load_qc",
    "load_smd",
    "load_vta",
    "merge_duplicate_links",
    "normalize_links",
    "read_smd",
    "read_vta",
    "save_smd",
    "save_vta",
    "select_links",
    "smd_pieces",
    "write_smd",
    "write_vta",
    "writes_lines_once",
]

# A vertex is listed in a later VTA frame when its position or normal moved by more than this (Euclidean length).
VTA_CHANGE_THRESHOLD = 1e-4


def read_vta(data: FileBuffer, path: str | None = None) -> SmdDocument:
    """A VTA is an SMD with a `vertexanimation` block; warns when that block is missing."""
    doc = read_smd(data, path)
    if doc.vertex_animation is None:
        doc.warnings.append("no 'vertexanimation' block: not a vertex animation file")
    return doc


def write_vta(doc: SmdDocument) -> bytes:
    if doc.vertex_animation is None:
        raise FormatError("document has no vertex animation to write")
    return write_smd(doc, "source")


def load_smd(path: str | os.PathLike[str], *, blank_material: str | None = None) -> SmdDocument:
    name = os.fspath(path)
    try:
        return read_smd(read_file_buffer(path), name, blank_material=blank_material)
    except FormatError as error:
        raise error.with_path(name) from None


def load_vta(path: str | os.PathLike[str]) -> SmdDocument:
    name = os.fspath(path)
    try:
        return read_vta(read_file_buffer(path), name)
    except FormatError as error:
        raise error.with_path(name) from None


def save_smd(path: str | os.PathLike[str], doc: SmdDocument, flavour: Flavour | None = None) -> None:
    """Write atomically: an existing file is replaced only by a complete new one."""
    try:
        pieces = smd_pieces(doc, flavour)
    except FormatError as error:
        raise error.with_path(os.fspath(path)) from None
    write_bytes_atomically(path, pieces)


def save_vta(path: str | os.PathLike[str], doc: SmdDocument) -> None:
    try:
        data = write_vta(doc)
    except FormatError as error:
        raise error.with_path(os.fspath(path)) from None
    write_bytes_atomically(path, data)


def build_vta(
    base_positions: npt.NDArray[np.float64],
    base_normals: npt.NDArray[np.float64],
    shapes: Sequence[tuple[str, npt.NDArray[np.float64], npt.NDArray[np.float64]]],
    *,
    threshold: float = VTA_CHANGE_THRESHOLD,
) -> SmdDocument:
    """A VTA document as BST writes it: vertex ids are corner ordinals 0..N-1 (SMD triangle order), time 0 lists
    them all, time i (1-based shape order) lists only those whose position or normal changed by > threshold, and
    the skeleton carries `time i # name` comments."""
    # (compared in float64 whatever the callers hold: a float32 difference would round the 1e-4 threshold)
    base_positions, base_normals = np.asarray(base_positions, np.float64), np.asarray(base_normals, np.float64)
    count = base_positions.shape[0]
    ids = np.arange(count, dtype=np.int32)
    frames = [VertexFrame(0, ids, base_positions.copy(), base_normals.copy())]
    skeleton = [SkeletonFrame(0)]
    for time, (name, positions, normals) in enumerate(shapes, start=1):
        positions, normals = np.asarray(positions, np.float64), np.asarray(normals, np.float64)
        moved = (row_lengths(positions - base_positions) > threshold) | (
            row_lengths(normals - base_normals) > threshold
        )
        frames.append(
            VertexFrame(time, ids[moved], positions[moved].astype(np.float64), normals[moved].astype(np.float64))
        )
        skeleton.append(SkeletonFrame(time, comment=name))
    return SmdDocument(nodes=[SmdNode(0, "root", -1)], skeleton=skeleton, vertex_animation=frames)
