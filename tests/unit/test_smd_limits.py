"""The engines' limits checked before an SMD is written: each warning names the limit and the engine."""

from __future__ import annotations

import itertools

import numpy as np

from formats.smd import SkeletonFrame, SmdDocument, Triangles, build_vta
from formats.smd.limits import (
    GOLDSRC_MAX_KEYFRAMES,
    GOLDSRC_MAX_TRIANGLES,
    GOLDSRC_MAX_VERTICES,
    SOURCE_MAX_FLEXED_VERTICES,
    SOURCE_MAX_MATERIALS,
    SOURCE_MAX_VERTICES,
    SOURCE_MAX_WEIGHTS,
    flex_warnings,
    goldsrc_labels,
    goldsrc_parts,
    limit_warnings,
    material_warnings,
    triangle_range,
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
        "per SMD (split the mesh into several: Split Over Limits)",
        f"a.smd: {3 * (GOLDSRC_MAX_VERTICES // 3 + 1):,} distinct normals; GoldSrc's studiomdl takes at most 2,048 "
        "per SMD (split the mesh into several: Split Over Limits)",
    ]  # fmt: skip
    many = strip(GOLDSRC_MAX_TRIANGLES + 1)
    many.triangles.positions[:] = 0.0  # (few distinct vertices: only the triangle count is over)
    many.triangles.normals[:] = (0.0, 0.0, 1.0)
    assert limit_warnings(many, "goldsrc", "b.smd") == [
        f"b.smd: {GOLDSRC_MAX_TRIANGLES + 1:,} triangles; GoldSrc's studiomdl takes at most 20,000 per SMD (split "
        "the mesh into several: Split Over Limits)"]  # fmt: skip
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


def test_goldsrc_counts_a_vertex_per_bone_and_a_normal_per_texture() -> None:
    """studiomdl's lookup_vertex tells (position, bone) apart, lookup_normal (normal, bone, texture)."""
    document = strip(2)
    tris = document.triangles
    tris.positions[1] = tris.positions[0]
    tris.normals[1] = tris.normals[0]
    assert [int(labels.max()) + 1 for labels in goldsrc_labels(tris)] == [3, 3]
    tris.parent_bones[1] = 1  # (the same places on another bone: other vertices and normals)
    assert [int(labels.max()) + 1 for labels in goldsrc_labels(tris)] == [6, 6]
    tris.parent_bones[1] = 0
    tris.material_names.append("eye.bmp")
    tris.material_indices[1] = 1  # (another texture: other normals, the same vertices)
    assert [int(labels.max()) + 1 for labels in goldsrc_labels(tris)] == [3, 6]


def test_source_vertices_per_smd() -> None:
    over = strip(SOURCE_MAX_VERTICES // 3 + 1)
    assert limit_warnings(over, "source", "big.smd") == [
        f"big.smd: {3 * (SOURCE_MAX_VERTICES // 3 + 1):,} distinct vertices (position, normal, UV); Source's "
        "studiomdl takes at most 65,535 per SMD (MAXSTUDIOVERTS; split the mesh into several)"]  # fmt: skip
    over.triangles.corner_lines = np.arange(over.triangles.positions.size // 3) // 2  # (the lines the writer makes)
    assert limit_warnings(over, "source", "big.smd") == []
    assert limit_warnings(strip(SOURCE_MAX_VERTICES // 3), "source", "ok.smd") == []


def test_materials_per_model() -> None:
    names = [f"m{index}" for index in range(SOURCE_MAX_MATERIALS + 1)]
    assert material_warnings(names[:-1] * 2, "source") == []
    assert material_warnings(names, "source") == [
        "33 materials; Source's studiomdl takes at most 32 per model (\"Too many materials used\")"]
    assert material_warnings(names, "goldsrc") == []
    assert material_warnings([f"t{index}.bmp" for index in range(101)], "goldsrc") == [
        "101 textures; GoldSrc's studiomdl takes at most 100 per model (MAXSTUDIOSKINS; more overrun its table)"]


def _within_goldsrc(tris: Triangles) -> bool:
    return len(tris) <= GOLDSRC_MAX_TRIANGLES and all(
        int(labels.max()) + 1 <= GOLDSRC_MAX_VERTICES for labels in goldsrc_labels(tris))


def test_goldsrc_parts_by_vertices_cover_the_mesh_in_order() -> None:
    document = strip(5000)  # 15,000 distinct vertices: 8 parts of 682 triangles (2,046 vertices), then the rest
    tris = document.triangles
    tris.material_names.append("eye.bmp")
    tris.material_indices[::7] = 1
    tris.corner_lines = np.arange(15000)
    parts = goldsrc_parts(tris)
    assert parts[0] == (0, GOLDSRC_MAX_VERTICES // 3) and parts[-1][1] == 5000
    assert all(end == start for (_, end), (start, _) in itertools.pairwise(parts))
    pieces = [triangle_range(tris, start, stop) for start, stop in parts]
    assert all(_within_goldsrc(piece) for piece in pieces)
    assert len(pieces) == -(-5000 // (GOLDSRC_MAX_VERTICES // 3))
    joined = np.concatenate([piece.positions for piece in pieces])
    assert np.array_equal(joined, tris.positions)
    names = [piece.material_names[index] for piece in pieces for index in piece.material_indices.tolist()]
    assert names == [tris.material_names[index] for index in tris.material_indices.tolist()]
    assert all(np.array_equal(piece.corner_lines, np.arange(3 * len(piece))) for piece in pieces)
    assert all(limit_warnings(SmdDocument(triangles=piece), "goldsrc", "p") == [] for piece in pieces)


def test_goldsrc_parts_by_triangles_and_links_kept() -> None:
    document = strip(2 * GOLDSRC_MAX_TRIANGLES + 5, links=2)
    tris = document.triangles
    tris.positions[:] = 0.0  # (few vertices and normals: the triangles alone are over)
    tris.normals[:] = (0.0, 0.0, 1.0)
    tris.link_bones[:] = np.arange(tris.link_bones.size) % 5
    parts = goldsrc_parts(tris)
    assert parts == [(0, 20000), (20000, 40000), (40000, 40005)]
    last = triangle_range(tris, *parts[-1])
    assert np.array_equal(last.link_bones, tris.link_bones[-30:]) and last.link_counts.shape == (5, 3)
    assert last.corner_lines is None
    whole = strip(10)
    assert goldsrc_parts(whole.triangles) == [(0, 10)]


def test_a_part_renumbers_shared_lines_in_order_of_first_use() -> None:
    tris = strip(4).triangles
    tris.corner_lines = np.array([0, 1, 2, 2, 1, 3, 4, 3, 5, 6, 4, 7])
    assert triangle_range(tris, 2, 4).corner_lines.tolist() == [0, 1, 2, 3, 0, 4]
    assert triangle_range(tris, 1, 3).corner_lines.tolist() == [0, 1, 2, 3, 2, 4]


def test_source_flexed_vertices_counted_as_studiomdl_moves_them() -> None:
    count = SOURCE_MAX_FLEXED_VERTICES + 2
    places = np.repeat(np.stack([np.arange(count, dtype=np.float64), np.zeros(count), np.zeros(count)], 1), 3, 0)
    normals = np.tile([0.0, 0.0, 1.0], (3 * count, 1))  # (3 corners per vertex: counted once)
    lifted = places + np.array([0.0, 0.0, 0.01])
    vta = build_vta(places, normals, [("up", lifted, normals)])
    assert flex_warnings(vta, "face.vta") == [
        "face.vta: the shape keys move 10,002 distinct vertices; Source's studiomdl takes at most 10,000 "
        "(MAXSTUDIOFLEXVERTS, \"Too many flexed verts\")"]  # fmt: skip
    nudged = places + np.array([0.0, 0.0, 0.0005])  # (over the VTA's 0.0001, under studiomdl's 0.001)
    assert flex_warnings(build_vta(places, normals, [("nudge", nudged, normals)]), "face.vta") == []
    half = lifted.copy()
    half[: 3 * (count // 2)] = places[: 3 * (count // 2)]
    assert flex_warnings(build_vta(places, normals, [("a", half, normals), ("b", half, normals)]), "f") == []
    assert flex_warnings(SmdDocument(), "none") == []
