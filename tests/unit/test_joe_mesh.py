"""A pack's members taken a group at a time give exactly the mesh arrays and warnings of one member at a time."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from formats import joe, joe_mesh, rows

KINDS = ["plain", "plain", "plain", "degenerate", "doubled", "nan", "untextured", "frames", "perpendicular", "warned"]


def _document(rng: np.random.Generator, kind: str) -> joe.JoeDocument:
    faces = int(rng.integers(1, 40))
    vertex_count, normal_count, texcoord_count = (int(rng.integers(3, 30)) for _ in range(3))
    vertex = np.stack([rng.choice(vertex_count, 3, replace=False) for _ in range(faces)]).astype(np.uint16)
    if kind == "degenerate":
        vertex[faces // 2, 1] = vertex[faces // 2, 0]
    if kind == "doubled" and faces > 1:
        vertex[-1] = vertex[0][::-1]
    positions = rng.normal(0.0, 2.0, (vertex_count, 3)).astype(np.float32)
    normals = rng.normal(0.0, 1.0, (normal_count, 3)).astype(np.float32)  # (random: faces of either winding)
    if kind == "perpendicular":
        positions[:, 2] = 0.0
        normals[:, 2] = 0.0
    if kind == "nan":
        positions[0, 1] = np.nan
    texcoords = rng.random((texcoord_count, 2)).astype(np.float32)
    texcoord = rng.integers(0, texcoord_count, (faces, 3)).astype(np.uint16)
    if kind == "untextured":
        texcoords, texcoord = np.zeros((0, 2), np.float32), np.zeros((faces, 3), np.uint16)
    frame = joe.JoeFrame(vertex, rng.integers(0, normal_count, (faces, 3)).astype(np.uint16), texcoord, positions,
                         normals, texcoords)  # fmt: skip
    frames = [frame, copy.deepcopy(frame)] if kind == "frames" else [frame]
    return joe.JoeDocument(frames, warnings=["magic is 0x12345678, not IDP2"] if kind == "warned" else [])


def _same(a: joe_mesh.MeshArrays, b: joe_mesh.MeshArrays) -> None:
    for name in ("positions", "corner_verts", "corner_normals", "corner_texcoords"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), name
    assert a.warnings == b.warnings
    if a.normals is not None:  # (made ahead: as the one-mesh way makes them)
        expected = rows.prepared_normals(b.corner_verts, b.corner_normals, len(b.positions))
        assert a.normals.unit.tobytes() == expected.unit.tobytes()
        assert (a.normals.per_vertex is None) == (expected.per_vertex is None)
        if expected.per_vertex is not None:
            assert a.normals.per_vertex is not None
            assert a.normals.per_vertex.tobytes() == expected.per_vertex.tobytes()


@pytest.mark.parametrize("rewind_clockwise", [True, False])
@pytest.mark.parametrize("apply_normal_swap", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_a_group_at_a_time_matches_one_at_a_time(seed: int, rewind_clockwise: bool, apply_normal_swap: bool) -> None:
    rng = np.random.default_rng(seed)
    documents = [_document(rng, KINDS[int(rng.integers(0, len(KINDS)))]) for _ in range(int(rng.integers(1, 60)))]
    originals = copy.deepcopy(documents)
    many = joe_mesh.mesh_arrays_of_many(documents, rewind_clockwise, apply_normal_swap)
    for arrays, original in zip(many, originals, strict=True):
        _same(arrays, joe_mesh.mesh_arrays(copy.deepcopy(original), rewind_clockwise, apply_normal_swap))


def test_every_kind_is_met_and_the_swap_fires() -> None:
    rng = np.random.default_rng(1)
    documents = [_document(rng, kind) for kind in KINDS]
    assert joe.normal_swap_would_fire(documents[KINDS.index("perpendicular")])
    many = joe_mesh.mesh_arrays_of_many(copy.deepcopy(documents), True, False)
    assert joe_mesh.SWAP_NOT_APPLIED in many[KINDS.index("perpendicular")].warnings
    assert many[KINDS.index("untextured")].corner_texcoords is None
    degenerate = KINDS.index("degenerate")
    assert len(many[degenerate].positions) > len(documents[degenerate].first_frame.positions)


def test_normals_are_made_ahead_per_vertex_where_the_corners_of_a_vertex_agree() -> None:
    rng = np.random.default_rng(3)
    smooth, split = _document(rng, "plain"), _document(rng, "plain")
    for document in (smooth, split):  # (faces of their own vertices: none that dedup takes apart)
        frame = document.first_frame
        frame.vertex_indices = np.arange(3 * frame.face_count, dtype=np.uint16).reshape(-1, 3)
        frame.positions = rng.normal(0.0, 2.0, (3 * frame.face_count, 3)).astype(np.float32)
    smooth.first_frame.normal_indices = smooth.first_frame.vertex_indices.copy()  # (one normal per vertex)
    smooth.first_frame.normals = rng.normal(0.0, 1.0, (len(smooth.first_frame.positions), 3)).astype(np.float32)
    split.first_frame.vertex_indices[:, 0] = 0  # (every face at vertex 0, each with a normal of its own there)
    split.first_frame.normal_indices = np.arange(3 * split.first_frame.face_count, dtype=np.uint16).reshape(-1, 3)
    split.first_frame.normals = rng.normal(0.0, 1.0, (3 * split.first_frame.face_count, 3)).astype(np.float32)
    many = joe_mesh.mesh_arrays_of_many([smooth, split], True, False)
    assert many[0].normals is not None and many[0].normals.per_vertex is not None
    assert many[1].normals is not None and many[1].normals.per_vertex is None


def test_groups_split_a_large_pack() -> None:
    rng = np.random.default_rng(2)
    documents = [_document(rng, "plain") for _ in range(3000)]  # (over one group's corners)
    many = joe_mesh.mesh_arrays_of_many(copy.deepcopy(documents), True, False)
    for index in (0, 1499, 2999):
        _same(many[index], joe_mesh.mesh_arrays(copy.deepcopy(documents[index]), True, False))
