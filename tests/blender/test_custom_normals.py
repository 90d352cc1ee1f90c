"""set_custom_normals leaves Blender's own normals where they already point the file's way: the test compares one
normal per vertex where that says the same as comparing every corner, and every corner otherwise."""

from __future__ import annotations

from types import ModuleType

import bpy
import numpy as np
import pytest


def _grid(extension: ModuleType, loose_vertex: bool = False, bumpy: bool = False) -> tuple[bpy.types.Mesh, np.ndarray]:
    """A smooth 4 x 4 grid of triangles (a loose vertex after its own, or heights that bend its normals); its
    corner vertices."""
    side = 4
    ticks = np.linspace(0.0, 1.0, side + 1)
    x, y = np.meshgrid(ticks, ticks, indexing="ij")
    heights = np.random.default_rng(1).random(x.size) * 0.3 if bumpy else np.zeros(x.size)
    positions = np.stack([x.ravel(), y.ravel(), heights], axis=1)
    if loose_vertex:
        positions = np.concatenate([positions, [[5.0, 5.0, 5.0]]])
    corner = (np.arange(side)[:, None] * (side + 1) + np.arange(side)[None, :]).ravel()
    quads = np.stack([corner, corner + side + 1, corner + side + 2, corner + 1], axis=1)
    corner_verts = np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]], axis=1).ravel()
    mesh = extension.common.mesh_io.new_mesh("grid", positions, corner_verts, np.arange(corner_verts.size // 3) * 3)
    return mesh, corner_verts


def _corner_normals(mesh: bpy.types.Mesh) -> np.ndarray:
    normals = np.empty(len(mesh.loops) * 3, np.float32)
    mesh.corner_normals.foreach_get("vector", normals)
    return normals.reshape(-1, 3)


def test_normals_blender_has_already_are_not_set_again(extension: ModuleType) -> None:
    mesh_io = extension.common.mesh_io
    mesh, corner_verts = _grid(extension)
    mesh_io.set_custom_normals(mesh, corner_verts, np.tile([0.0, 0.0, 1.0], (corner_verts.size, 1)))
    assert not mesh.has_custom_normals
    bumpy, corner_verts = _grid(extension, bumpy=True)
    mesh_io.set_custom_normals(bumpy, corner_verts, np.tile([0.0, 0.0, 1.0], (corner_verts.size, 1)))
    assert bumpy.has_custom_normals
    np.testing.assert_allclose(_corner_normals(bumpy), np.tile([0.0, 0.0, 1.0], (corner_verts.size, 1)), atol=1e-3)


def test_a_loose_vertex_leaves_the_test_to_the_corners(extension: ModuleType) -> None:
    """A vertex no corner uses has no normal of the file (a zero row per vertex): only the corners can tell that
    Blender's normals are the file's."""
    mesh, corner_verts = _grid(extension, loose_vertex=True)
    extension.common.mesh_io.set_custom_normals(mesh, corner_verts, np.tile([0.0, 0.0, 1.0], (corner_verts.size, 1)))
    assert not mesh.has_custom_normals


def test_normals_set_again_over_custom_ones(extension: ModuleType) -> None:
    """A mesh with custom normals already: its corners are compared, and the file's normals replace the custom
    ones even where they are Blender's own vertex normals (4.2's vertex normals leave custom ones out)."""
    mesh_io = extension.common.mesh_io
    mesh, corner_verts = _grid(extension)
    tilted = np.tile(np.array([0.0, 0.6, 0.8]), (corner_verts.size, 1))
    mesh_io.set_custom_normals(mesh, corner_verts, tilted)
    assert mesh.has_custom_normals
    mesh_io.set_custom_normals(mesh, corner_verts, np.tile([0.0, 0.0, 1.0], (corner_verts.size, 1)))
    np.testing.assert_allclose(_corner_normals(mesh), np.tile([0.0, 0.0, 1.0], (corner_verts.size, 1)), atol=1e-3)


class _Collection:
    """What foreach_get reads of a Blender collection: rows of floats."""

    def __init__(self, rows: list[list[float]]) -> None:
        self.rows = np.array(rows, np.float32)

    def __len__(self) -> int:
        return len(self.rows)

    def foreach_get(self, key: str, out: np.ndarray) -> None:
        out[:] = self.rows.ravel()


def test_a_corner_normal_blender_gives_as_nan_becomes_its_face_s_normal_or_zero(
    extension: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    """(Blender 4.4 at times gives NaN for a corner of a degenerate face: the export takes the face's normal, or
    zero where that too is no number, instead of refusing the mesh.)"""
    nan = float("nan")
    mesh = extension.common.mesh_io.new_mesh("pair", np.eye(3, dtype=np.float32), np.array([0, 1, 2, 0, 2, 1]),
                                             np.array([0, 3]))  # fmt: skip

    class Mesh:  # (its normals as Blender 4.4 may give them; the face starts are the real mesh's)
        normals_domain = "CORNER"  # (read from corner_normals)
        corner_normals = _Collection([[0, 0, 1], [nan, nan, nan], [0, 0, 1], [nan, 0, 0], [0, 1, 0], [0, 1, 0]])
        polygons = _Collection([[1, 0, 0], [nan, nan, nan]])

    face_corners = extension.common.mesh_io.face_corners
    monkeypatch.setattr(extension.common.mesh_io, "face_corners", lambda _mesh: face_corners(mesh))
    normals = extension.common.mesh_io.blender_corner_normals(Mesh)
    np.testing.assert_array_equal(normals, [[0, 0, 1], [1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 1, 0], [0, 1, 0]])
    # (a quick sum finds most meshes finite; one whose sum overflows, or holds an infinity, is looked at closely)
    huge = np.full((6, 3), 3e38, np.float32)
    assert extension.common.mesh_io.finite_corner_normals(mesh, huge.copy()).tolist() == huge.tolist()
    infinite = huge.copy()
    infinite[4, 1] = np.inf
    fixed = extension.common.mesh_io.finite_corner_normals(mesh, infinite)
    assert fixed[:4].tolist() == huge[:4].tolist() and np.isfinite(fixed).all()


@pytest.mark.parametrize(
    "kind", ["smooth", "flat", "one flat face", "a sharp edge", "custom", "flat quads and a triangle"]
)
def test_corner_normals_read_from_vertex_or_face_normals_are_blender_s_bit_for_bit(
    extension: ModuleType, kind: str
) -> None:  # fmt: skip
    """(Where the mesh's normals_domain is POINT or FACE, the vertex or face normals are read and copied to the
    corners: they must be the corner normals Blender gives.)"""
    mesh, _corner_verts = _grid(extension, bumpy=True)
    if kind == "flat quads and a triangle":
        mesh = bpy.data.meshes.new("quads")
        mesh.from_pydata([(0, 0, 0), (1, 0, 0), (1, 1, 0.3), (0, 1, 0), (2, 0, 0.5), (2, 1, 0)], [],
                         [(0, 1, 2, 3), (1, 4, 5, 2), (1, 4, 2)])  # fmt: skip
    flat = kind in ("flat", "one flat face", "flat quads and a triangle")
    mesh.polygons.foreach_set("use_smooth", np.full(len(mesh.polygons), not flat))
    if kind == "one flat face":
        mesh.polygons[3].use_smooth = True
    if kind == "a sharp edge":
        mesh.update(calc_edges=True)
        mesh.edges[5].use_edge_sharp = True
    if kind == "custom":
        mesh.normals_split_custom_set([(0.0, 0.6, 0.8)] * len(mesh.loops))
    mesh.update()
    expected = {"smooth": "POINT", "flat": "FACE", "flat quads and a triangle": "FACE"}.get(kind, "CORNER")
    assert mesh.normals_domain == expected
    normals = extension.common.mesh_io.blender_corner_normals(mesh)
    assert normals.dtype == np.float32 and normals.tobytes() == _corner_normals(mesh).tobytes()


def _tilted(normals: np.ndarray, degrees: float, every: int) -> np.ndarray:
    """Every `every`-th normal turned by `degrees` about an axis across it; the others as they are."""
    axis = np.cross(normals, [1.0, 0.0, 0.0])
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    angle = np.radians(degrees)
    turned = normals * np.cos(angle) + np.cross(axis, normals) * np.sin(angle)
    tilted = normals.copy()
    tilted[::every] = turned[::every]
    return tilted


@pytest.mark.parametrize("degrees", [0.02, 0.3, 0.6, 2.0, 40.0])
@pytest.mark.parametrize("kind", ["smooth", "a sharp edge", "custom", "flat normals"])
def test_corners_of_a_vertex_apart_skip_blender_s_normals_to_the_same_result(
    extension: ModuleType, degrees: float, kind: str
) -> None:
    """Where two corners of a vertex have normals more than half a degree apart, no normal of that vertex matches
    both: set_custom_normals answers so without Blender's normals (smooth faces, no sharp edge, no custom
    normals) and gives the mesh the general test gives it (the prepared normals without the flag)."""
    mesh_io, rows = extension.common.mesh_io, extension.formats.rows
    results = []
    for shortcut in (True, False):
        mesh, corner_verts = _grid(extension, bumpy=True)
        mesh.update(calc_edges=True)
        if kind == "a sharp edge":
            mesh.edges[5].use_edge_sharp = True
        if kind == "custom":
            mesh.normals_split_custom_set([(0.0, 0.6, 0.8)] * len(mesh.loops))
        mesh.update()
        if kind == "flat normals":  # each corner its face's (a hard-surface mesh): faces made flat
            normals = np.repeat(mesh_io.corner_floats(mesh.polygon_normals, "vector", 3), 3, axis=0)
        else:
            normals = _tilted(_corner_normals(mesh).astype(np.float64), degrees, 5)
        prepared = rows.prepared_normals(corner_verts, normals, len(mesh.vertices))
        if kind != "a sharp edge":  # (whose corners Blender's normals set apart already)
            assert prepared.apart == (kind == "flat normals" or degrees > 0.5)
        if not shortcut:
            prepared = rows.PreparedNormals(prepared.unit, prepared.per_vertex)
        mesh_io.set_custom_normals(mesh, corner_verts, normals, prepared)
        sharp = mesh.attributes.get("sharp_face")
        flags = np.zeros(len(mesh.polygons), np.bool_)
        if sharp is not None:
            sharp.data.foreach_get("value", flags)
        results.append((mesh.has_custom_normals, flags.tolist(), _corner_normals(mesh).tobytes()))
    assert results[0] == results[1]
