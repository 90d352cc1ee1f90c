"""The engines' limits checked before an SMD is written: each warning names the limit and the engine."""

from __future__ import annotations

import numpy as np

from formats.smd import SkeletonFrame, SmdDocument, Triangles
from formats.smd.limits import (
    GOLDSRC_MAX_KEYFRAMES,
    GOLDSRC_MAX_TRIANGLES,
    GOLDSRC_MAX_VERTICES,
    SOURCE_MAX_WEIGHTS,
    limit_warnings,
)


def strip(count: int, links: int = 1) -> SmdDocument:
    """`count` triangles, each with corners of its own (3 distinct vertices and normals per triangle)."""
    corners = np.arange(count * 3, dtype=np.float64)
    positions = np.stack([corners, corners * 0.5, np.zeros_like(corners)], axis=1).reshape(count, 3, 3)
    normals = np.stack([np.zeros_like(corners), np.sin(corners), np.cos(corners)], axis=1).reshape(count, 3, 3)
    return SmdDocument(triangles=Triangles(
        material_names=["skin.bmp"], material_indices=np.zeros(count, np.int32),
        parent_bones=np.zeros((count, 3), np.int32), positions=positions, normals=normals,
        uvs=np.zeros((count, 3, 2)), link_counts=np.full((count, 3), links, np.int32),
        link_bones=np.zeros(count * 3 * links, np.int32), link_weights=np.full(count * 3 * links, 1.0 / links),
    ))  # fmt: skip


def test_goldsrc_vertices_normals_and_triangles() -> None:
    under = strip(GOLDSRC_MAX_VERTICES // 3)
    assert limit_warnings(under, "goldsrc", "a.smd") == []
    over = strip(GOLDSRC_MAX_VERTICES // 3 + 1)
    assert limit_warnings(over, "goldsrc", "a.smd") == [
        f"a.smd: {3 * (GOLDSRC_MAX_VERTICES // 3 + 1):,} distinct vertices; GoldSrc's studiomdl takes at most 2,048 "
        "per SMD (split the mesh into several)",
        f"a.smd: {3 * (GOLDSRC_MAX_VERTICES // 3 + 1):,} distinct normals; GoldSrc's studiomdl takes at most 2,048 "
        "per SMD (split the mesh into several)",
    ]  # fmt: skip
    many = strip(GOLDSRC_MAX_TRIANGLES + 1)
    many.triangles.positions[:] = 0.0  # (few distinct vertices: only the triangle count is over)
    many.triangles.normals[:] = (0.0, 0.0, 1.0)
    assert limit_warnings(many, "goldsrc", "b.smd") == [
        f"b.smd: {GOLDSRC_MAX_TRIANGLES + 1:,} triangles; GoldSrc's studiomdl takes at most 20,000 per SMD (split "
        "the mesh into several)"]  # fmt: skip
    assert limit_warnings(over, "source", "a.smd") == []  # (Source's limits are others)


def test_source_weights_per_vertex() -> None:
    assert limit_warnings(strip(4, links=SOURCE_MAX_WEIGHTS), "source", "m.smd") == []
    assert limit_warnings(strip(4, links=SOURCE_MAX_WEIGHTS + 1), "source", "m.smd") == [
        "m.smd: 12 vertex line(s) with more than 3 bone weights; Source's studiomdl keeps 3 per vertex (Limit "
        "Weights does it now, as it will)"]  # fmt: skip


def test_goldsrc_keyframes_per_sequence() -> None:
    frames = [SkeletonFrame(time, np.zeros(1, np.int32), np.zeros((1, 3)), np.zeros((1, 3)))
              for time in range(GOLDSRC_MAX_KEYFRAMES + 1)]  # fmt: skip
    assert limit_warnings(SmdDocument(skeleton=frames[:-1]), "goldsrc", "walk") == []
    assert limit_warnings(SmdDocument(skeleton=frames), "goldsrc", "walk") == [
        "walk: 513 frames; GoldSrc's studiomdl takes at most 512 per sequence (split the action, or lower its frame "
        "rate)"]  # fmt: skip
