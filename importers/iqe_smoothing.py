"""Normals for IQE files without `vn`, generated like the reference compiler from the smoothing commands.

Corners at the same position (across meshes, as the specification says; or with the same `vs` index when the
file has one) are smoothed with each other when their faces pass every test in force: the same `smoothgroup`
key, face normals within the smaller `smoothangle`, equal texcoords when `smoothuv` is on. Each face adds its
area-weighted normal. `fs` flags are approximated per corner: a corner whose two face edges are both flagged 0
is not smoothed with other faces. Pure numpy, no bpy.
"""

from __future__ import annotations

import numpy as np

from ..formats.iqe import IqeMesh
from ..formats.rows import row_lengths

_MAX_PAIRS = 20_000_000


def generated_normals(meshes: list[IqeMesh]) -> list[np.ndarray]:
    """Per mesh, (C, 3) float32 unit normals for its corners in file order (`face_corners`)."""
    corner_counts = [len(m.face_corners) for m in meshes]
    if not sum(corner_counts):
        return [np.zeros((0, 3), np.float32) for _ in meshes]
    parts = [_corner_table(mesh, offset) for mesh, offset in zip(meshes, _offsets(meshes), strict=True)]
    position = np.concatenate([p["position"] for p in parts])
    face = np.concatenate([p["face"] for p in parts])
    face_normals = np.concatenate([p["face_normals"] for p in parts])
    group = np.concatenate([p["group"] for p in parts])
    cos_limit = np.concatenate([p["cos_limit"] for p in parts])
    smooth_uv = np.concatenate([p["smooth_uv"] for p in parts])
    uv = np.concatenate([p["uv"] for p in parts])
    isolated = np.concatenate([p["isolated"] for p in parts])
    use_vs = all(m.smooth_indices is not None for m in meshes)
    if use_vs:
        keys = np.concatenate([p["vs"] for p in parts])[:, None].astype(np.float64)
    else:
        keys = position.astype(np.float64)
    _, key_id = np.unique(keys, axis=0, return_inverse=True)
    key_id = key_id.ravel()
    order = np.argsort(key_id, kind="stable")
    sorted_keys = key_id[order]
    starts = np.flatnonzero(np.diff(sorted_keys, prepend=-1))
    sizes = np.diff(np.append(starts, len(order)))
    if int((sizes.astype(np.int64) ** 2).sum()) > _MAX_PAIRS:
        raise ValueError("too many corners share one position to generate normals")
    # All ordered pairs (i, j) of corners inside each group.
    pair_group = np.repeat(np.arange(len(sizes)), sizes**2)
    within = np.arange(len(pair_group)) - np.repeat(np.cumsum(sizes**2) - sizes**2, sizes**2)
    group_size = sizes[pair_group]
    first = order[starts[pair_group] + within // group_size]
    second = order[starts[pair_group] + within % group_size]
    unit = face_normals / np.maximum(row_lengths(face_normals, keepdims=True), 1e-30)
    fa, fb = face[first], face[second]
    compatible = (
        (group[first] == group[second])
        & ((unit[fa] * unit[fb]).sum(axis=1) >= np.maximum(cos_limit[first], cos_limit[second]) - 1e-6)
        & (~(smooth_uv[first] | smooth_uv[second]) | (uv[first] == uv[second]).all(axis=1))
        & ~((isolated[first] | isolated[second]) & (fa != fb))
    )
    # Each face counts once per corner group, even if it reaches the position through two corners.
    pairs = np.unique(np.stack((first[compatible], fb[compatible]), axis=1), axis=0)
    sums = np.zeros((len(position), 3))
    np.add.at(sums, pairs[:, 0], face_normals[pairs[:, 1]])
    lengths = row_lengths(sums, keepdims=True)
    normals = np.divide(sums, lengths, out=np.tile([0.0, 0.0, 1.0], (len(sums), 1)), where=lengths > 1e-30)
    bounds = np.cumsum([0, *corner_counts])
    return [normals[bounds[i] : bounds[i + 1]].astype(np.float32) for i in range(len(meshes))]


def _offsets(meshes: list[IqeMesh]) -> list[int]:
    offsets, total = [], 0
    for mesh in meshes:
        offsets.append(total)
        total += mesh.face_count
    return offsets


def _corner_table(mesh: IqeMesh, face_offset: int) -> dict[str, np.ndarray]:
    corners = mesh.face_corners.astype(np.int64)
    sizes = mesh.face_sizes.astype(np.int64)
    faces = mesh.face_count
    face_of_corner = np.repeat(np.arange(faces), sizes)
    positions = mesh.positions.astype(np.float64)[corners]
    # Newell's normal, negated: the file's front faces are clockwise.
    starts = np.cumsum(sizes) - sizes
    following = np.arange(len(corners)) + 1
    following[starts + sizes - 1] = starts
    cross = np.cross(positions, positions[following])
    face_normals = np.zeros((faces, 3))
    np.add.at(face_normals, face_of_corner, cross)
    face_normals *= -0.5
    group = (mesh.face_smooth_groups if mesh.face_smooth_groups is not None else np.full(faces, -1))[face_of_corner]
    angles = mesh.face_smooth_angles if mesh.face_smooth_angles is not None else np.full(faces, 180.0)
    cos_limit = np.cos(np.radians(np.clip(angles, 0.0, 180.0)))[face_of_corner]
    smooth_uv = (mesh.face_smooth_uv if mesh.face_smooth_uv is not None else np.zeros(faces, bool))[face_of_corner]
    texcoords = mesh.texcoords if mesh.texcoords is not None else np.zeros((mesh.vertex_count, 2), np.float32)
    isolated = np.zeros(len(corners), bool)
    if mesh.edge_smooth is not None:
        previous = np.arange(len(corners)) - 1
        previous[starts] = starts + sizes - 1
        isolated = (mesh.edge_smooth == 0) & (mesh.edge_smooth[previous] == 0)
    vs = mesh.smooth_indices[corners] if mesh.smooth_indices is not None else np.zeros(len(corners), np.int32)
    return {
        "position": mesh.positions[corners],
        "face": face_of_corner + face_offset,
        "face_normals": face_normals,
        "group": group,
        "cos_limit": cos_limit,
        "smooth_uv": smooth_uv,
        "uv": texcoords[corners],
        "isolated": isolated,
        "vs": vs,
    }
