"""What the engines' studiomdl refuses or silently cuts, checked on an SMD before it is written (limits from the
Half-Life SDK's studio.h and studiomdl.c, and the Source SDK 2013's studio.h; the 128 bones are checked where the
bones are chosen, and GoldSrc's name lengths by the writer, which refuses them): warnings naming the limit and the
engine. And the split of a mesh over GoldSrc's limits into parts each within them (Split Over Limits).

GoldSrc's studiomdl counts per `$body` SMD: its vertices as distinct (position, bone) pairs and its normals as
distinct (normal, bone, texture) triples (lookup_vertex and lookup_normal; it merges positions equal to 0.01 and
normals within 2 degrees first, so exact counts here are never below its own); its triangles into an array of
MAXSTUDIOTRIANGLES it does not check (a larger SMD overruns it)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from ..dedup import row_labels
from .document import Flavour, SmdDocument, Triangles

GOLDSRC_MAX_TRIANGLES = 20000  # per SMD (MAXSTUDIOTRIANGLES of the Half-Life SDK's studio.h and studiomdl.h)
GOLDSRC_MAX_VERTICES = 2048  # per SMD, and as many normals (MAXSTUDIOVERTS: the SDK's and the engine's)
GOLDSRC_MAX_KEYFRAMES = 512  # per sequence (MAXSTUDIOANIMATIONS of the engine's headers; the 2013 SDK allows 2048)
GOLDSRC_MAX_TEXTURES = 100  # per model (MAXSTUDIOSKINS: studiomdl's texture table, unchecked)
SOURCE_MAX_WEIGHTS = 3  # bone weights per vertex (MAX_NUM_BONES_PER_VERT)
SOURCE_MAX_VERTICES = 65535  # per SMD: studiomdl refuses a model of MAXSTUDIOVERTS (65,536) vertices or more
SOURCE_MAX_MATERIALS = 32  # per model (MAXSTUDIOSKINS: "Too many materials used, max 32")
SOURCE_MAX_FLEXED_VERTICES = 10000  # vertices any flex moves (MAXSTUDIOFLEXVERTS: "Too many flexed verts")
SOURCE_FLEX_MOVE = 0.001  # studiomdl skips a vertex of a flex that moves less, and whose normal turns by less
SOURCE_FLEX_TURN = 0.001  # (a squared change of the normal)


def limit_warnings(document: SmdDocument, flavour: Flavour, label: str) -> list[str]:
    """The engine's limits the document is over; `label` names the file (or mesh) in each warning."""
    warnings: list[str] = []
    triangles = document.triangles
    if triangles is not None and len(triangles):
        warnings += _goldsrc_mesh(triangles, label) if flavour == "goldsrc" else _source_mesh(triangles, label)
    frames = len(document.skeleton)
    if flavour == "goldsrc" and triangles is None and frames > GOLDSRC_MAX_KEYFRAMES:
        warnings.append(f"{label}: {frames:,} frames; GoldSrc's studiomdl takes at most {GOLDSRC_MAX_KEYFRAMES} per "
                        "sequence (split the action, or lower its frame rate)")  # fmt: skip
    return warnings


def material_warnings(names: Iterable[str], flavour: Flavour) -> list[str]:
    """The model's textures (GoldSrc) or materials (Source) over the engine's limit, all its SMDs together."""
    count = len(set(names))
    if flavour == "goldsrc" and count > GOLDSRC_MAX_TEXTURES:
        return [f"{count:,} textures; GoldSrc's studiomdl takes at most {GOLDSRC_MAX_TEXTURES} per model "
                "(MAXSTUDIOSKINS; more overrun its table)"]  # fmt: skip
    if flavour == "source" and count > SOURCE_MAX_MATERIALS:
        return [f"{count:,} materials; Source's studiomdl takes at most {SOURCE_MAX_MATERIALS} per model (\"Too many "
                "materials used\")"]  # fmt: skip
    return []


def flex_warnings(vta: SmdDocument, label: str) -> list[str]:
    """A VTA's shapes over Source's limit of vertices that flexes move: the distinct vertices (position, normal)
    that any shape moves as studiomdl counts a move (more than 0.001, or the normal by a squared 0.001)."""
    frames = vta.vertex_animation or []
    if len(frames) < 2:
        return []
    base = frames[0]
    row_of = np.full(int(base.vertex_ids.max(initial=-1)) + 1, -1, np.int64)
    row_of[base.vertex_ids] = np.arange(len(base.vertex_ids))
    moved = []
    for frame in frames[1:]:
        known = frame.vertex_ids < len(row_of)
        rows = row_of[frame.vertex_ids[known]]
        valid = rows >= 0
        rows = rows[valid]
        shift = frame.positions[known][valid] - base.positions[rows]
        turn = frame.normals[known][valid] - base.normals[rows]
        far = (np.einsum("ij,ij->i", shift, shift) > SOURCE_FLEX_MOVE**2) | (
            np.einsum("ij,ij->i", turn, turn) > SOURCE_FLEX_TURN)  # fmt: skip
        moved.append(rows[far])
    rows = np.unique(np.concatenate(moved))
    count = _distinct(_labels(base.positions[rows], base.normals[rows])) if rows.size else 0
    if count <= SOURCE_MAX_FLEXED_VERTICES:
        return []
    return [f"{label}: the shape keys move {count:,} distinct vertices; Source's studiomdl takes at most "
            f"{SOURCE_MAX_FLEXED_VERTICES:,} (MAXSTUDIOFLEXVERTS, \"Too many flexed verts\")"]  # fmt: skip


def _source_mesh(triangles: Triangles, label: str) -> list[str]:
    warnings = []
    over = int(np.count_nonzero(triangles.link_counts > SOURCE_MAX_WEIGHTS))
    if over:
        warnings.append(f"{label}: {over:,} vertex line(s) with more than {SOURCE_MAX_WEIGHTS} bone weights; "
                        f"Source's studiomdl keeps {SOURCE_MAX_WEIGHTS} per vertex (Limit Weights does it now, as it "
                        "will)")  # fmt: skip
    vertices = _distinct(_source_vertex_labels(triangles))
    if vertices > SOURCE_MAX_VERTICES:
        warnings.append(f"{label}: {vertices:,} distinct vertices (position, normal, UV); Source's studiomdl takes "
                        f"at most {SOURCE_MAX_VERTICES:,} per SMD (MAXSTUDIOVERTS; split the mesh into "
                        "several)")  # fmt: skip
    return warnings


def _goldsrc_mesh(triangles: Triangles, label: str) -> list[str]:
    warnings = []
    count = len(triangles)
    if count > GOLDSRC_MAX_TRIANGLES:
        warnings.append(f"{label}: {count:,} triangles; GoldSrc's studiomdl takes at most {GOLDSRC_MAX_TRIANGLES:,} "
                        "per SMD (split the mesh into several: Split Over Limits)")  # fmt: skip
    vertices, normals = goldsrc_labels(triangles)
    for what, labels in (("vertices", vertices), ("normals", normals)):
        distinct = _distinct(labels)
        if distinct > GOLDSRC_MAX_VERTICES:
            warnings.append(f"{label}: {distinct:,} distinct {what}; GoldSrc's studiomdl takes at most "
                            f"{GOLDSRC_MAX_VERTICES:,} per SMD (split the mesh into several: Split Over "
                            "Limits)")  # fmt: skip
    return warnings


def _distinct(labels: npt.NDArray[np.int64]) -> int:
    return int(labels.max(initial=-1)) + 1


def _labels(*columns: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
    """Per corner: the number of its distinct row of `columns` (each (3T, k) or (3T,)), in order of first sight."""
    table = np.column_stack([np.asarray(column, np.float32).reshape(len(column), -1) for column in columns])
    return row_labels(table)


def goldsrc_labels(triangles: Triangles) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Per corner (3T,): its vertex and its normal as GoldSrc's studiomdl tells them apart (see the module)."""
    bones = triangles.parent_bones.reshape(-1)
    materials = np.repeat(triangles.material_indices, 3)
    vertices = _labels(triangles.positions.reshape(-1, 3), bones)
    normals = _labels(triangles.normals.reshape(-1, 3), bones, materials)
    return vertices, normals


def _source_vertex_labels(triangles: Triangles) -> npt.NDArray[np.int64]:
    if triangles.corner_lines is not None and triangles.corner_lines.size == 3 * len(triangles):
        return triangles.corner_lines.astype(np.int64)  # (the lines the writer makes: one per distinct vertex)
    return _labels(triangles.positions.reshape(-1, 3), triangles.normals.reshape(-1, 3), triangles.uvs.reshape(-1, 2))


# ------------------------------------------------------------------------------------------------ Split Over Limits


def goldsrc_parts(triangles: Triangles) -> list[tuple[int, int]]:
    """Triangle ranges [start, end), in order, covering the mesh: each as long as GoldSrc's limits allow (its
    triangles, distinct vertices and distinct normals, counted as studiomdl counts them). One range when the whole
    mesh is within them."""
    count = len(triangles)
    vertices, normals = goldsrc_labels(triangles)
    earlier = [_previous_occurrences(labels) for labels in (vertices, normals)]
    parts: list[tuple[int, int]] = []
    start = 0
    while start < count:
        stop = min(count, start + GOLDSRC_MAX_TRIANGLES)
        for previous in earlier:  # distinct in the part so far, after each triangle: new ones seen before `start`
            new = previous[3 * start: 3 * stop] < 3 * start
            distinct = np.cumsum(new)[2::3]
            stop = min(stop, start + int(np.searchsorted(distinct, GOLDSRC_MAX_VERTICES, side="right")))
        parts.append((start, stop))
        start = stop
    return parts


def _previous_occurrences(labels: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """For each position, the position of the same label before it (-1: none)."""
    order = np.argsort(labels, kind="stable")
    ordered = labels[order]
    previous = np.full(labels.size, -1, np.int64)
    same = ordered[1:] == ordered[:-1]
    previous[order[1:][same]] = order[:-1][same]
    return previous


def triangle_range(triangles: Triangles, start: int, stop: int) -> Triangles:
    """Triangles [start, stop) as a mesh of their own: its materials those it uses, its lines numbered anew."""
    offsets = triangles.link_offsets()
    first_link, end_link = int(offsets[3 * start]), int(offsets[3 * stop])
    used, materials = np.unique(triangles.material_indices[start:stop], return_inverse=True)
    lines = None
    if triangles.corner_lines is not None:  # (numbered anew in order of first appearance, as the writer wants)
        _, firsts, inverse = np.unique(triangles.corner_lines[3 * start: 3 * stop], return_index=True,
                                       return_inverse=True)  # fmt: skip
        rank = np.empty(firsts.size, np.int64)
        rank[np.argsort(firsts, kind="stable")] = np.arange(firsts.size)
        lines = rank[inverse.reshape(-1)]
    return Triangles(
        material_names=[triangles.material_names[index] for index in used.tolist()],
        material_indices=materials.reshape(-1).astype(np.int32),
        parent_bones=triangles.parent_bones[start:stop],
        positions=triangles.positions[start:stop],
        normals=triangles.normals[start:stop],
        uvs=triangles.uvs[start:stop],
        link_counts=triangles.link_counts[start:stop],
        link_bones=triangles.link_bones[first_link:end_link],
        link_weights=triangles.link_weights[first_link:end_link],
        corner_lines=lines,
    )

