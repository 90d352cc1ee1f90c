"""The JPK export's shortcuts for a pack's many small members write the bytes the plain path writes: meshes read
straight from the objects' own data instead of evaluated copies (those of triangles in the export's space read all
together), each object's custom properties read at once instead of one by one. The plain path is put back by
swapping the shortcuts for what they stand in for."""

from __future__ import annotations

import gc
from pathlib import Path
from types import ModuleType

import bpy
import numpy as np
import pytest
from mathutils import Matrix

from tests.blender.scene_helpers import cube
from tools.bench_cases import track_pack

CORPUS_TRACKS = next((root for root in (Path("/work/corpus/vdrift_tracks"), Path("/work/corpus/vdrift/data/tracks"))
                      if root.exists()), Path("/work/corpus/vdrift_tracks"))  # fmt: skip
CORPUS_PACKS = [CORPUS_TRACKS / track / "objects" / "objects.jpk" for track in ("monaco", "zandvoort")]
OPTIONS: list[dict[str, object]] = [
    {},
    {"global_scale": 2.5},
    {"forward_axis": "X", "up_axis": "Z"},
    {"forward_axis": "NEGATIVE_Z", "up_axis": "Y", "global_scale": 0.5},
    {"apply_transform": False},
    {"apply_modifiers": False},
]


def written(folder: Path, **options: object) -> dict[str, bytes]:
    """The pack and the track list an export of every object writes, by file name."""
    folder.mkdir(parents=True, exist_ok=True)
    assert bpy.ops.export_scene.jpk(filepath=str(folder / "out.jpk"), **options) == {"FINISHED"}
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def plain_and_shortcut(extension: ModuleType, folder: Path, monkeypatch: pytest.MonkeyPatch,
                       **options: object) -> tuple[dict[str, bytes], dict[str, bytes]]:  # fmt: skip
    shortcut = written(folder / "shortcut", **options)
    with monkeypatch.context() as patch:
        mesh_io = extension.common.mesh_io
        patch.setattr(mesh_io, "exported_mesh", mesh_io.evaluated_mesh)
        patch.setattr(extension.common.track_settings, "properties_of", lambda obj: obj)
        patch.setattr(extension.exporters.joe, "read_straight", lambda obj, matrix: False)
        plain = written(folder / "plain", **options)
    return plain, shortcut


def assert_same(plain: dict[str, bytes], shortcut: dict[str, bytes]) -> None:
    assert list(plain) == list(shortcut)
    for name, data in plain.items():
        assert shortcut[name] == data, name


@pytest.mark.parametrize("options", OPTIONS, ids=lambda options: ",".join(map(str, options.items())) or "defaults")
def test_a_generated_track_pack_exports_the_same_bytes(extension, tmp_path: Path, monkeypatch, options) -> None:  # type: ignore[no-untyped-def]
    pack = track_pack(tmp_path / "track", members=150, textures=20)
    assert bpy.ops.import_scene.joe(filepath=str(pack.path)) == {"FINISHED"}
    objects = list(bpy.context.scene.objects)
    objects[0].location = (3.0, -2.0, 1.0)  # (moved, turned, scaled, mirrored: transforms that are not the identity)
    objects[1].rotation_euler = (0.3, 0.1, 1.2)
    objects[2].scale = (2.0, 0.5, 1.5)
    objects[3].scale = (-1.0, 1.0, 1.0)
    objects[4]["vdrift_mipmap"] = False  # (a changed setting)
    objects[5].data.attributes.remove(objects[5].data.attributes["joe_normal"])  # (no stored normals)
    edited = objects[6].data.attributes["joe_normal"].data  # (stored normals of which some no longer match)
    edited[0].vector = (1.0, 0.0, 0.0)
    edited[1].vector = (0.0, -1.0, 0.0)
    assert_same(*plain_and_shortcut(extension, tmp_path, monkeypatch, **options))


def test_objects_that_evaluation_changes_export_the_same_bytes(extension, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Modifiers, shape keys, a mesh two objects share, ngons, no UV map: the shortcut must leave them to the copy."""
    mirrored = cube("mirrored")
    mirrored.modifiers.new("mirror", "MIRROR")
    keyed = cube("keyed")
    keyed.shape_key_add(name="Basis")
    key = keyed.shape_key_add(name="up")
    key.data[0].co = (0.0, 0.0, 3.0)
    key.value = 0.7
    shared = cube("shared")
    twin = shared.copy()
    twin.name = "twin"
    twin.matrix_world = Matrix.Translation((4.0, 0.0, 0.0)) @ Matrix.Rotation(0.5, 4, "Z")
    bpy.context.collection.objects.link(twin)
    bare = cube("bare")  # (a cube of quads: triangulated)
    while bare.data.uv_layers:
        bare.data.uv_layers.remove(bare.data.uv_layers[0])
    bare.data.update()  # (tagged for evaluation, as Blender's own operators do: else the copy is of the old mesh)
    for options in ({}, {"apply_modifiers": False}, {"global_scale": 3.0, "forward_axis": "X", "up_axis": "Z"}):
        tag = "-".join(map(str, options.values())) or "defaults"
        plain, shortcut = plain_and_shortcut(extension, tmp_path / tag, monkeypatch, **options)
        assert_same(plain, shortcut)


def test_the_first_object_in_order_with_non_finite_numbers_is_named(tmp_path: Path) -> None:
    """Objects read together and objects read one by one (a modifier) report the first in the objects' order."""
    objects = [cube(name) for name in "ABCD"]  # (at the origin, the export matrix the identity: read together)
    for obj in objects[1:]:
        obj.data.vertices[0].co = (float("nan"), 0.0, 0.0)
        obj.data.update()
    objects[1].modifiers.new("bevel", "BEVEL")  # (B is read alone, before C)
    with pytest.raises(RuntimeError, match=r"object 'B' has vertex positions that are NaN or infinite"):
        bpy.ops.export_scene.jpk(filepath=str(tmp_path / "out.jpk"))
    objects[1].modifiers.clear()
    objects[1].data.vertices[0].co = (1.0, 1.0, 1.0)
    objects[1].data.update()
    objects[3].modifiers.new("bevel", "BEVEL")  # (C, read with the others, before D, read alone)
    with pytest.raises(RuntimeError, match=r"object 'C' has vertex positions that are NaN or infinite"):
        bpy.ops.export_scene.jpk(filepath=str(tmp_path / "out.jpk"))
    assert not (tmp_path / "out.jpk").exists()


def test_a_corner_normal_blender_gives_as_nan_is_its_face_s_normal_in_members_read_together(  # type: ignore[no-untyped-def]
    extension, tmp_path: Path, monkeypatch
) -> None:
    """(Blender 4.4 at times gives NaN for a corner of a degenerate face.) Members read together take the face's
    normal there, as one read alone does, instead of refusing the pack: flat faces, so the bytes do not change."""
    for name in "ABC":  # (triangles at the origin: read together)
        triangulated = bpy.data.meshes.new(name)
        triangulated.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 1)], [], [(0, 1, 2), (1, 3, 2)])
        bpy.context.collection.objects.link(bpy.data.objects.new(name, triangulated))
    untouched = written(tmp_path / "untouched")
    read_corner_normals = extension.exporters.joe.read_corner_normals

    def broken(mesh: bpy.types.Mesh, out: np.ndarray) -> None:
        read_corner_normals(mesh, out)
        if mesh.name == "B":
            out[3:9] = np.nan  # (two corners of the first face)

    monkeypatch.setattr(extension.exporters.joe, "read_corner_normals", broken)
    assert written(tmp_path / "broken") == untouched


def test_the_pack_is_made_with_the_collector_paused_and_it_runs_again_after(  # type: ignore[no-untyped-def]
    extension, tmp_path: Path, monkeypatch
) -> None:
    """Python's cyclic garbage collector is off while a pack is made (a track's members make tens of thousands of
    objects: each collection walks every object Blender holds), and on again after an export, failed or not."""
    seen: list[bool] = []
    export_jpk = extension.exporters.joe.export_jpk
    monkeypatch.setattr(extension.exporters.joe, "export_jpk",
                        lambda *arguments: seen.append(gc.isenabled()) or export_jpk(*arguments))  # fmt: skip
    cube("A")
    assert gc.isenabled()
    assert bpy.ops.export_scene.jpk(filepath=str(tmp_path / "out.jpk")) == {"FINISHED"}
    bpy.data.objects.remove(bpy.data.objects["A"])
    with pytest.raises(RuntimeError, match="no mesh objects to export"):
        bpy.ops.export_scene.jpk(filepath=str(tmp_path / "none.jpk"))
    assert seen == [False, False] and gc.isenabled()
    gc.disable()  # (a caller's choice is left as it was)
    try:
        with pytest.raises(RuntimeError, match="no mesh objects to export"):
            bpy.ops.export_scene.jpk(filepath=str(tmp_path / "none.jpk"))
        still_off = not gc.isenabled()
    finally:
        gc.enable()
    assert still_off


@pytest.mark.parametrize("pack", CORPUS_PACKS, ids=lambda path: path.parent.parent.name)
def test_a_real_track_pack_exports_the_same_bytes(extension, tmp_path: Path, monkeypatch, pack: Path) -> None:  # type: ignore[no-untyped-def]
    if not pack.exists():
        pytest.skip(f"{pack} is not on this machine")
    assert bpy.ops.import_scene.joe(filepath=str(pack)) == {"FINISHED"}
    for index, options in enumerate(OPTIONS[:4]):
        assert_same(*plain_and_shortcut(extension, tmp_path / str(index), monkeypatch, **options))


def test_is_identity_is_numpys_exact_comparison(extension) -> None:  # type: ignore[no-untyped-def]
    is_identity = extension.common.mesh_io.is_identity
    nearly = Matrix.Identity(4)
    nearly[0][0] = float(np.nextafter(np.float32(1.0), np.float32(2.0)))
    negative_zero = Matrix.Identity(4)
    negative_zero[1][0] = -0.0
    not_a_number = Matrix.Identity(4)
    not_a_number[2][3] = float("nan")
    for matrix in (Matrix.Identity(4), nearly, negative_zero, not_a_number, Matrix.Scale(2.0, 4), Matrix.Identity(3)):
        expected = np.array(matrix).shape == (4, 4) and bool(np.array_equal(np.array(matrix), np.identity(4)))
        assert is_identity(matrix) == expected


@pytest.mark.parametrize("exporter", ["jpk", "iqe"])
@pytest.mark.parametrize("mode", ["OBJECT", "SCULPT"])
def test_an_object_its_lattice_parent_deforms_is_written_deformed(tmp_path: Path, exporter: str, mode: str) -> None:
    """A Lattice parent deforms its child without a modifier: the object's own mesh is not what it shows, so the
    shortcut is not taken (nor in Sculpt Mode, where the mesh being sculpted may live elsewhere)."""
    mesh = bpy.data.meshes.new("tri")
    mesh.from_pydata([(0.0, 0.0, 0.0), (0.4, 0.0, 0.0), (0.0, 0.4, 0.0)], [], [(0, 1, 2)])
    obj = bpy.data.objects.new("tri", mesh)
    lattice = bpy.data.objects.new("lattice", bpy.data.lattices.new("lattice"))
    for each in (obj, lattice):
        bpy.context.scene.collection.objects.link(each)
    obj.parent, obj.parent_type = lattice, "LATTICE"
    for point in lattice.data.points:
        point.co_deform.z += 1.0
    if mode != "OBJECT":
        bpy.context.view_layer.objects.active = obj
        bpy.ops.object.mode_set(mode=mode)
    path = tmp_path / f"out.{exporter}"
    assert getattr(bpy.ops.export_scene, exporter)(filepath=str(path)) == {"FINISHED"}
    if mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.wm.read_homefile(use_empty=True)
    importer = bpy.ops.import_scene.joe if exporter == "jpk" else bpy.ops.import_scene.iqe
    assert importer(filepath=str(path)) == {"FINISHED"}
    written = next(each for each in bpy.data.objects if each.type == "MESH")
    heights = [vertex.co.z for vertex in written.data.vertices]
    assert heights == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)
