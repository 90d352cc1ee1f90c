"""QMAP in Blender: .qmap.tmp/.qmap.desc export and import, compiling from the panel, importing compiled maps."""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import bpy
import numpy as np
import pytest

import qmap_compiler as qc
from tests.blender.conftest import data_state
from tests.blender.scene_helpers import active_collection_holding, cube
from tests.sample_paths import sample_dir
from tools.bpy_extension import REPO_ROOT


def material(name: str, **options: object) -> bpy.types.Material:
    mat = bpy.data.materials.new(name)
    for key, value in options.items():
        setattr(mat.qmap, key, value)
    return mat


def map_scene() -> dict[str, bpy.types.Object]:
    """A cube with two materials (one skipped), a mirrored cube, a 7-gon, lights and objects QMAP skips."""
    room = cube("Room", location=(1, 2, 3))
    room.rotation_euler = (0.1, 0.2, 0.3)
    room.data.materials.append(material("stone", tex_scale=2.0, output_name="wall"))
    room.data.materials.append(material("hidden", skip=True))
    room.data.polygons[0].material_index = 1
    mirrored = cube("Mirrored", location=(5, 0, 0))
    mirrored.scale = (-1, 1, 1)
    bpy.ops.mesh.primitive_circle_add(vertices=7, fill_type="NGON", location=(0, 0, -3))
    bpy.context.active_object.name = "Floor"
    bpy.ops.object.light_add(type="SPOT", location=(0, 0, 5))
    spot = bpy.context.active_object
    spot.data.spot_size = math.radians(60)
    spot.data.spot_blend = 0.25
    bpy.ops.object.light_add(type="SUN")
    bpy.ops.curve.primitive_bezier_curve_add()
    bpy.ops.object.camera_add()
    return {"room": room, "mirrored": mirrored, "spot": spot}


def parse(path: Path) -> qc.TmpDocument:
    return qc.parse_tmp(path.read_bytes(), str(path))


def test_scene_exports_to_tmp_and_desc(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    map_scene()
    out = tmp_path / "level.qmap.tmp"
    assert bpy.ops.export_scene.qmap_tmp(filepath=str(out)) == {"FINISHED"}
    document = parse(out)
    meshes = {m.name: m for m in document.meshes}
    assert sorted(meshes) == [b"Floor", b"Mirrored", b"Room"]
    room = meshes[b"Room"]
    assert room.position == pytest.approx((1, 2, 3)) and room.orientation == pytest.approx((0.1, 0.2, 0.3))
    assert room.materials == [b"stone", b"hidden"] and room.has_uv
    assert room.face_sizes.tolist() == [4] * 6 and room.face_materials.tolist() == [1, 0, 0, 0, 0, 0]
    assert np.abs(room.vertices).max() == pytest.approx(1.0)  # object-local coordinates
    assert sorted(meshes[b"Floor"].face_sizes.tolist()) == [3] * 5  # the 7-gon is split into triangles
    mirrored = meshes[b"Mirrored"]  # mirroring cannot be written as a scale: baked, faces rewound
    assert mirrored.position == (0, 0, 0) and mirrored.size == (1, 1, 1)
    assert mirrored.vertices[:, 0].min() == pytest.approx(4.0)
    assert outward_faces(mirrored, center=(5, 0, 0)).all()
    assert outward_faces(room, center=(0, 0, 0)).all()
    (spot,) = document.lamps
    assert (spot.lamp_type, spot.angle, spot.softness) == ("Spot", pytest.approx(60), pytest.approx(0.25))
    desc = qc.parse_desc((tmp_path / "level.qmap.desc").read_bytes())
    assert desc.entries[b"stone"].tex_scale == 2.0 and desc.entries[b"stone"].new_name == b"wall"
    assert desc.entries[b"hidden"].skip
    printed = capsys.readouterr().out
    assert "sun lights are not QMAP lamps" in printed and "curve objects are not exported" in printed


def outward_faces(mesh: qc.MeshObject, center: tuple[float, float, float]) -> np.ndarray:
    """Per face: does the counter-clockwise normal of the written corners point away from `center`?"""
    corners = mesh.vertices[mesh.face_indices[:, :3]].astype(np.float64)
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    return np.asarray(((corners.mean(axis=1) - center) * normals).sum(axis=1) > 0)


def test_source_round_trips_through_import(tmp_path: Path) -> None:
    map_scene()
    first = tmp_path / "a.qmap.tmp"
    bpy.ops.export_scene.qmap_tmp(filepath=str(first))
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.data.materials.remove(bpy.data.materials["stone"]) if "stone" in bpy.data.materials else None
    assert bpy.ops.import_scene.qmap_tmp(filepath=str(first)) == {"FINISHED"}
    assert bpy.data.materials["hidden"].qmap.skip and bpy.data.materials["stone"].qmap.output_name == "wall"
    second = tmp_path / "b.qmap.tmp"
    bpy.ops.export_scene.qmap_tmp(filepath=str(second))
    a, b = parse(first), parse(second)
    for old, new in zip(sorted(a.meshes, key=lambda m: m.name), sorted(b.meshes, key=lambda m: m.name), strict=True):
        assert (old.name, old.materials, old.face_sizes.tolist()) == (new.name, new.materials, new.face_sizes.tolist())
        np.testing.assert_array_equal(old.face_indices, new.face_indices)
        np.testing.assert_allclose(old.vertices, new.vertices, atol=1e-6)
        np.testing.assert_allclose(old.position, new.position, atol=1e-6)
    assert (tmp_path / "a.qmap.desc").read_bytes() == (tmp_path / "b.qmap.desc").read_bytes()


def test_names_outside_windows_1250_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    cube("\u65e5\u672c")
    with pytest.raises(RuntimeError, match="Windows-1250"):
        bpy.ops.export_scene.qmap_tmp(filepath=str(tmp_path / "x.qmap.tmp"))
    assert list(tmp_path.iterdir()) == []


def test_export_and_compile_writes_a_valid_map_and_keeps_the_report(tmp_path: Path) -> None:
    map_scene()
    out = tmp_path / "level.qmap"
    assert bpy.ops.export_scene.qmap(filepath=str(out), k=0.3, max_depth=4) == {"FINISHED"}
    model = qc.read_qmap_file(out)
    assert sorted(model.materials) == [b"", b"wall"]  # renamed; the skipped material is gone; the 7-gon has none
    lines = [line.text for line in bpy.context.scene.qmap.report]
    assert any(line.startswith("faces: 16 (5 triangles, 11 quads), 1 skipped") for line in lines), lines
    assert "QMAP compile report" in bpy.data.texts


def test_panel_compile_is_byte_identical_to_the_original_compiler(tmp_path: Path) -> None:
    cases = sample_dir("qmap") / "tools_exe" / "cases"
    for name in ("Example.qmap.tmp", "Example.qmap.desc"):
        shutil.copy(cases / name, tmp_path / name)
    settings = bpy.context.scene.qmap
    settings.tmp_path = str(tmp_path / "Example.qmap.tmp")
    settings.qmap_path = str(tmp_path / "Example.qmap")
    assert bpy.ops.qmap.compile() == {"FINISHED"}
    assert (tmp_path / "Example.qmap").read_bytes() == (cases / "Example.qmap").read_bytes()
    assert bpy.ops.qmap.show_octrees() == {"FINISHED"}
    octrees = bpy.data.collections["QMAP Octrees"]
    model = qc.read_qmap_file(tmp_path / "Example.qmap")
    levels = len(set(model.draw_nodes.depth.tolist())) + len(set(model.collision_nodes.depth.tolist()))
    assert len(octrees.objects) == levels
    assert bpy.ops.qmap.hide_octrees() == {"FINISHED"}
    assert "QMAP Octrees" not in bpy.data.collections


def test_compile_errors_carry_line_and_column(tmp_path: Path) -> None:
    source = tmp_path / "bad.qmap.tmp"
    source.write_bytes(b"QMAP TMP 11\nobjects {\n}\n")
    settings = bpy.context.scene.qmap
    settings.tmp_path = str(source)
    settings.qmap_path = str(tmp_path / "bad.qmap")
    with pytest.raises(RuntimeError, match=r"bad\.qmap\.tmp:1:\d+"):
        bpy.ops.qmap.compile()
    assert not (tmp_path / "bad.qmap").exists()


PANEL_OPERATORS = ["export_source", "compile", "export_and_compile", "show_octrees"]


@pytest.mark.parametrize("operator", PANEL_OPERATORS)
def test_panel_paths_relative_to_an_unsaved_blend_are_refused_and_nothing_is_written(
    operator: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # where `//map.qmap.tmp` would land without a saved .blend file
    cube("Room")
    with pytest.raises(RuntimeError, match=r"save the \.blend file first or set an absolute path for (Source|Map)"):
        getattr(bpy.ops.qmap, operator)()
    assert list(tmp_path.iterdir()) == []


def test_export_and_compile_checks_both_panel_paths_before_writing(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    cube("Room")
    bpy.context.scene.qmap.tmp_path = str(tmp_path / "level.qmap.tmp")  # absolute; the map path stays `//`
    with pytest.raises(RuntimeError, match="set an absolute path for Map"):
        bpy.ops.qmap.export_and_compile()
    bpy.context.scene.qmap.qmap_path = "level.qmap"  # relative to whatever the working folder is
    with pytest.raises(RuntimeError, match=r"'level\.qmap' is relative: set an absolute path for Map"):
        bpy.ops.qmap.export_and_compile()
    assert list(tmp_path.iterdir()) == []


def test_panel_paths_are_beside_the_saved_blend(tmp_path: Path) -> None:
    cube("Room")
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "level.blend"))
    assert bpy.ops.qmap.export_and_compile() == {"FINISHED"}
    assert {"map.qmap.tmp", "map.qmap"} <= {path.name for path in tmp_path.iterdir()}
    report = [line.text for line in bpy.context.scene.qmap.report]
    assert any(line.startswith("root box (map axes: Blender x, z, y): ") for line in report), report
    assert bpy.ops.qmap.show_octrees() == {"FINISHED"}


def drop(tmp_path: Path, *names: str) -> set[str]:
    """Drop files on the 3D viewport as Blender does: the FileHandlers whose extensions match choose."""
    window = bpy.context.window_manager.windows[0]
    area = next(area for area in window.screen.areas if area.type == "VIEW_3D")
    with bpy.context.temp_override(window=window, area=area, region=area.regions[-1]):
        return bpy.ops.wm.drop_import_file(directory=str(tmp_path), files=[{"name": name} for name in names])


def test_a_drop_imports_the_map_sources_and_leaves_other_tmp_files_alone(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    cube("Room")
    bpy.ops.export_scene.qmap_tmp(filepath=str(tmp_path / "level.qmap.tmp"))
    (tmp_path / "notes.tmp").write_bytes(b"an editor's swap file\n")
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.types.IOGF_FH_qmap_tmp.bl_file_extensions == ".qmap.tmp;.tmp"  # Blender matches ".tmp" only
    drop(tmp_path, "notes.tmp", "level.qmap.tmp")
    assert [obj.name for obj in bpy.context.scene.objects] == ["Room"]
    assert "notes.tmp: not a QMAP source (.qmap.tmp); left out" in capsys.readouterr().out


def test_a_drop_without_a_map_source_is_refused_before_the_options_are_shown(tmp_path: Path) -> None:
    """Headless Blender runs `execute` where the UI runs `invoke`: invoke is called here as the UI would."""
    notes = str(tmp_path / "notes.tmp")
    reports: list[tuple[set[str], str]] = []
    dropped = SimpleNamespace(filepath=notes, selected_paths=lambda: [notes], report=lambda *r: reports.append(r))
    invoke = bpy.types.IMPORT_SCENE_OT_qmap_tmp.invoke
    assert invoke(dropped, bpy.context, None) == {"CANCELLED"}
    assert reports == [({"ERROR"}, "notes.tmp: not a QMAP source (the name must end in .qmap.tmp); nothing imported")]
    before = data_state()
    drop(tmp_path, "notes.tmp")  # (the importer's report goes to the window, not to this call)
    assert data_state() == before


@pytest.mark.parametrize("name", ["Fpp.qmap", "PacMan.qmap"])
def test_compiled_maps_import_one_object_per_material_facing_the_right_way(name: str) -> None:
    path = sample_dir("qmap") / name
    assert bpy.ops.import_scene.qmap(filepath=str(path)) == {"FINISHED"}
    faces = qc.model_faces(qc.read_qmap_file(path))
    objects = [o for o in bpy.data.objects if o.name.startswith(name)]
    assert len(objects) == len(set(faces.material.tolist()))
    assert sum(len(o.data.polygons) for o in objects) == faces.face_count
    for obj in objects:
        mesh = obj.data
        label = {i: m.decode("cp1250") or "(no material)" for i, m in enumerate(faces.materials)}
        index = next(i for i, text in label.items() if obj.name.endswith(text))
        stored = faces.normals[faces.material == index][:, [0, 2, 1]]  # map (x, y, z) -> Blender (x, z, y)
        blender = np.array([p.normal[:] for p in mesh.polygons])
        usable = np.isfinite(stored).all(axis=1) & (np.linalg.norm(blender, axis=1) > 0.5)
        assert ((stored[usable] * blender[usable]).sum(axis=1) > 0.99).mean() > 0.99


def mesh_problems(mesh: bpy.types.Mesh) -> bool:
    """Whether Blender's validation would change a copy of `mesh` (it collapses faces that use a vertex twice)."""
    copy = mesh.copy()
    try:
        return bool(copy.validate(verbose=True))
    finally:
        bpy.data.meshes.remove(copy)


@pytest.mark.parametrize("name", ["Fpp.qmap", "PacMan.qmap"])
def test_compiled_maps_import_flat_valid_meshes_with_every_face(name: str) -> None:
    path = sample_dir("qmap") / name
    assert bpy.ops.import_scene.qmap(filepath=str(path)) == {"FINISHED"}
    meshes = [obj.data for obj in bpy.data.objects]
    assert sum(len(mesh.polygons) for mesh in meshes) == qc.model_faces(qc.read_qmap_file(path)).face_count
    for mesh in meshes:
        assert not any(polygon.use_smooth for polygon in mesh.polygons), mesh.name  # one normal per face
        assert not mesh_problems(mesh), mesh.name


# Corners 2 and 4 share a place: quad 1 is zero-area once welded; triangles 2 and 3 are one face, both sides.
SPOILED_BY_WELDING = b"""QMAP TMP 10
objects {
 mesh "Box" {
  0,0,0 0,0,0 1,1,1 30 1
  materials 1 { "stone" }
  vertices 6 { 0,0,0 1,0,0 1,1,0 0,1,0 1,1,0 2,0,0 }
  faces 4 {
   4 0 0 0 0,0 1 1,0 2 1,1 3 0,1
   4 0 0 0 0,0 1 1,0 2 1,1 4 1,1
   3 0 0 1 1,0 5 1,0 2 1,1
   3 0 0 2 1,1 5 1,0 1 1,0
  }
 }
}
"""


def test_faces_that_welding_would_spoil_keep_their_own_vertices(tmp_path: Path) -> None:
    compiled = tmp_path / "spoiled.qmap"
    compiled.write_bytes(qc.compile_bytes(SPOILED_BY_WELDING))
    assert bpy.ops.import_scene.qmap(filepath=str(compiled)) == {"FINISHED"}
    (obj,) = bpy.data.objects
    mesh = obj.data
    assert sorted(len(polygon.vertices) for polygon in mesh.polygons) == [3, 3, 4, 4]
    assert not mesh_problems(mesh)
    assert not any(polygon.use_smooth for polygon in mesh.polygons)
    assert len(mesh.vertices) == 5 + 4 + 3  # 5 places shared by the sound faces; the spoiled ones their own


def test_failed_import_of_a_damaged_map_changes_nothing(tmp_path: Path) -> None:
    damaged = tmp_path / "broken.qmap"
    damaged.write_bytes((sample_dir("qmap") / "Fpp.qmap").read_bytes()[:5000])
    before = data_state()
    with pytest.raises(RuntimeError, match=r"broken\.qmap"):
        bpy.ops.import_scene.qmap(filepath=str(damaged))
    assert data_state() == before


def test_desc_import_sets_material_options(tmp_path: Path) -> None:
    material("brick")
    desc = tmp_path / "m.qmap.desc"
    desc.write_bytes(
        b'QMAP DESC 10\nmaterials {\n "brick" { tex gen; tex scale 0.5; name "B"; }\n "nope" { skip; }\n}\n'
    )
    assert bpy.ops.qmap.import_desc(filepath=str(desc)) == {"FINISHED"}
    settings = bpy.data.materials["brick"].qmap
    assert (settings.tex_gen, settings.tex_scale, settings.output_name, settings.skip) == (True, 0.5, "B", False)


class FakeLayout:
    """Accepts every layout call, records drawn property names."""

    def __init__(self, drawn: list[tuple[object, str]]) -> None:
        self.drawn = drawn

    def prop(self, data: object, name: str, **_: object) -> None:
        self.drawn.append((data, name))

    def __getattr__(self, name: str) -> object:
        return lambda *args, **kwargs: self

    def __setattr__(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)


@pytest.mark.parametrize("panel", ["VIEW3D_PT_qmap", "VIEW3D_PT_qmap_compile", "VIEW3D_PT_qmap_materials",
                                   "VIEW3D_PT_qmap_report"])  # fmt: skip
def test_panels_draw_real_properties(panel: str) -> None:
    obj = cube("Room")
    obj.data.materials.append(material("stone"))
    bpy.context.view_layer.objects.active = obj
    bpy.context.scene.qmap.use_bounds = True
    drawn: list[tuple[object, str]] = []
    getattr(bpy.types, panel).draw(SimpleNamespace(layout=FakeLayout(drawn)), bpy.context)
    for data, name in drawn:
        assert name in data.bl_rna.properties, name


def test_cli_exports_and_compiles_a_blend_in_one_call(tmp_path: Path) -> None:
    map_scene()
    blend = tmp_path / "level.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    out = tmp_path / "level.qmap"
    command = [sys.executable, str(REPO_ROOT / "tools" / "iogf.py"), "export", str(blend), "-o", str(out),
               "--set", "max_depth=3"]  # fmt: skip
    environment = {"BLENDER_USER_RESOURCES": str(tmp_path / "user"), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False, env=environment)
    assert result.returncode == 0, result.stderr
    assert qc.read_qmap_file(out).draw_nodes.depth.max() <= 3
    assert (tmp_path / "level.qmap.tmp").is_file() and (tmp_path / "level.qmap.desc").is_file()


def test_collection_exporter_compiles_only_its_collection(tmp_path: Path) -> None:
    inside = cube("Inside")
    cube("Outside", location=(5, 0, 0))
    collection = active_collection_holding("Level", inside)
    assert bpy.ops.collection.exporter_add(name="IOGF_FH_qmap") == {"FINISHED"}
    out = tmp_path / "level.qmap"
    collection.exporters[0].export_properties.filepath = str(out)
    assert bpy.ops.collection.exporter_export(index=0) == {"FINISHED"}
    assert [m.name for m in parse(tmp_path / "level.qmap.tmp").meshes] == [b"Inside"]
    assert qc.read_qmap_file(out).draw_vertices.shape[0] == 24  # one cube: 6 quads of 4 corners


def test_failed_compile_replaces_none_of_the_three_files(tmp_path: Path) -> None:
    room = cube("Room")
    room.data.materials.append(material("gone", skip=True))  # every face skipped: an empty map
    for name in ("level.qmap", "level.qmap.tmp", "level.qmap.desc"):
        (tmp_path / name).write_bytes(b"old " + name.encode())
    with pytest.raises(RuntimeError, match="empty"):
        bpy.ops.export_scene.qmap(filepath=str(tmp_path / "level.qmap"))
    for name in ("level.qmap", "level.qmap.tmp", "level.qmap.desc"):
        assert (tmp_path / name).read_bytes() == b"old " + name.encode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["level.qmap", "level.qmap.desc", "level.qmap.tmp"]


@pytest.mark.parametrize("blocked", ["level.qmap", "level.qmap.tmp", "level.qmap.desc"])
def test_a_file_that_cannot_be_replaced_leaves_all_three_as_they_were(tmp_path: Path, blocked: str) -> None:
    cube("Room").data.materials.append(material("stone"))
    for name in ("level.qmap", "level.qmap.tmp", "level.qmap.desc"):
        if name == blocked:
            (tmp_path / name).mkdir()  # a folder where a file should go
        else:
            (tmp_path / name).write_bytes(b"old " + name.encode())
    with pytest.raises(RuntimeError, match=blocked):
        bpy.ops.export_scene.qmap(filepath=str(tmp_path / "level.qmap"))
    for name in {"level.qmap", "level.qmap.tmp", "level.qmap.desc"} - {blocked}:
        assert (tmp_path / name).read_bytes() == b"old " + name.encode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["level.qmap", "level.qmap.desc", "level.qmap.tmp"]


def test_without_desc_an_old_desc_beside_the_target_is_not_used(tmp_path: Path) -> None:
    cube("Room").data.materials.append(material("stone"))
    (tmp_path / "level.qmap.desc").write_bytes(b'QMAP DESC 10\nmaterials {\n "stone" { skip; }\n}\n')
    assert bpy.ops.export_scene.qmap(filepath=str(tmp_path / "level.qmap"), write_desc=False) == {"FINISHED"}
    assert qc.read_qmap_file(tmp_path / "level.qmap").materials == [b"stone"]


@pytest.mark.parametrize(
    ("typed", "expected"),
    [("map", "map.qmap.tmp"), ("map.qmap", "map.qmap.tmp"), ("map.tmp", "map.qmap.tmp"), ("map.qmap.tmp", None)],
)
def test_file_browser_completes_the_double_extension_without_doubling_it(typed: str, expected: str | None) -> None:
    operator_class = bpy.types.EXPORT_SCENE_OT_qmap_tmp
    fake = SimpleNamespace(filepath=f"/maps/{typed}")
    assert operator_class.check(fake, bpy.context) is (expected is not None)
    assert fake.filepath == f"/maps/{expected or typed}"
    assert operator_class.check(fake, bpy.context) is False  # a second check changes nothing


def test_failed_source_import_restores_material_options(tmp_path: Path, extension, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    existing = material("stone", tex_scale=3.0)
    cube("Room").data.materials.append(existing)
    for name in ("a", "b"):
        bpy.ops.export_scene.qmap_tmp(filepath=str(tmp_path / f"{name}.qmap.tmp"), write_desc=False)
        (tmp_path / f"{name}.qmap.desc").write_bytes(b'QMAP DESC 10\nmaterials {\n "stone" { tex scale 0.5; }\n}\n')
    importer = extension.importers.qmap
    original, calls = importer.build_tmp_mesh, []

    def fail_on_second_file(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 2:
            raise extension.formats.errors.FormatError("simulated failure")
        return original(*args, **kwargs)

    monkeypatch.setattr(importer, "build_tmp_mesh", fail_on_second_file)
    before = data_state()
    with pytest.raises(RuntimeError, match="simulated failure"):
        bpy.ops.import_scene.qmap_tmp(directory=str(tmp_path), files=[{"name": "a.qmap.tmp"}, {"name": "b.qmap.tmp"}])
    assert bpy.data.materials["stone"].qmap.tex_scale == 3.0  # file a's desc was applied, then taken back
    assert data_state() == before


def test_names_too_long_for_blender_4_2_are_kept_and_written_back_in_full(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Blender 4.2 holds 63-byte names (5.x: 255): the file's names survive an import and export all the same."""
    material, obj = "M" * 200, "O" * 150
    source = tmp_path / "long.qmap.tmp"
    source.write_bytes(f'QMAP TMP 10\nobjects {{\n mesh "{obj}" {{\n  0,0,0 0,0,0 1,1,1 30 1\n'
                       f'  materials 1 {{ "{material}" }}\n  vertices 3 {{ 0,0,0 1,0,0 1,1,0 }}\n'
                       "  faces 1 { 3 0 0 0 0,0 1 1,0 2 1,1 }\n }\n}\n".encode())  # fmt: skip
    desc = f'QMAP DESC 10\nmaterials {{\n "{material}" {{ tex gen; }}\n}}\n'
    (tmp_path / "long.qmap.desc").write_bytes(desc.encode())
    assert bpy.ops.import_scene.qmap_tmp(filepath=str(source)) == {"FINISHED"}
    (blender_material,) = bpy.data.materials
    assert blender_material.qmap.tex_gen  # the desc entry found its material by the full name
    shortened = len(blender_material.name) < len(material)
    assert ("too long for this Blender" in capsys.readouterr().out) == shortened
    out = tmp_path / "again.qmap.tmp"
    assert bpy.ops.export_scene.qmap_tmp(filepath=str(out)) == {"FINISHED"}
    again = qc.parse_tmp(out.read_bytes())
    assert again.meshes[0].name == obj.encode() and again.meshes[0].materials == [material.encode()]
    assert material.encode() in qc.parse_desc((tmp_path / "again.qmap.desc").read_bytes()).entries


def test_a_mesh_without_materials_is_written_with_none_and_compiles_without_an_index_warning(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]  # noqa: E501
    cube("Box")
    bpy.context.scene.qmap.empty_slot.output_name = "Renamed"  # the desc entry of empty slots: not of no slots
    out = tmp_path / "box.qmap"
    assert bpy.ops.export_scene.qmap(filepath=str(out)) == {"FINISHED"}
    printed = capsys.readouterr().out
    assert "beyond" not in printed and "has no materials" in printed and 'material "" is used' in printed
    assert qc.parse_tmp((tmp_path / "box.qmap.tmp").read_bytes()).meshes[0].materials == []
    assert qc.read_qmap_file(out).materials == [b""]  # as compiled from a file with `materials 0`


def test_a_qmap_tmp_object_keeps_its_transform_as_written(tmp_path: Path) -> None:
    """A zero size keeps its rotation, angles beyond a half turn stay, and no number moves by a float step."""
    source = tmp_path / "z.qmap.tmp"
    source.write_text(
        'QMAP TMP 10\nobjects {\n\tmesh "Z" {\n\t\t0,3,0\n\t\t0.1,-5.1189,0.3\n\t\t1,0,0.25\n\t\t30\n\t\t0\n'
        '\t\tmaterials 0 {\n\t\t}\n\t\tvertices 3 {\n\t\t\t1,1,1\n\t\t\t-1,1,-1\n\t\t\t1,-1,0\n\t\t}\n'
        '\t\tfaces 1 {\n\t\t\t3 0 0 0 1 2\n\t\t}\n\t}\n\tlamp "L" {\n\t\t1,2,3\n\t\t1,0.25,-1\n\t\t0.5,2,1\n'
        "\t\tLamp\n\t\t10\n\t\t1,1,1\n\t}\n}\n"
    )
    assert bpy.ops.import_scene.qmap_tmp(filepath=str(source)) == {"FINISHED"}
    out = tmp_path / "out.qmap.tmp"
    assert bpy.ops.export_scene.qmap_tmp(filepath=str(out), write_desc=False) == {"FINISHED"}
    before, after = qc.parse_tmp(source.read_bytes()), qc.parse_tmp(out.read_bytes())
    for old, new in ((before.meshes[0], after.meshes[0]), (before.lamps[0], after.lamps[0])):
        for field in ("position", "orientation", "size"):
            assert np.float32(getattr(new, field)).tobytes() == np.float32(getattr(old, field)).tobytes(), field
    assert after.meshes[0].materials == []


def use_panel_paths(tmp_path: Path) -> None:
    settings = bpy.context.scene.qmap
    settings.tmp_path = str(tmp_path / "level.qmap.tmp")
    settings.qmap_path = str(tmp_path / "level.qmap")


def report_lines() -> list[str]:
    return [line.text for line in bpy.context.scene.qmap.report]


def test_panel_export_and_compile_replaces_all_three_files_or_none(tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    cube("Room").data.materials.append(material("stone"))
    use_panel_paths(tmp_path)
    assert bpy.ops.qmap.export_and_compile() == {"FINISHED"}
    assert extension.common.operators.LAST_SUMMARY[0].line("Exported and compiled").startswith(
        "Exported and compiled 3 files: 1 object, 6 polygons")
    written = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    assert sorted(written) == ["level.qmap", "level.qmap.desc", "level.qmap.tmp"]
    bpy.data.materials["stone"].qmap.skip = True  # every face skipped: the compile fails, "the map is empty"
    with pytest.raises(RuntimeError, match="empty"):
        bpy.ops.qmap.export_and_compile()
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == written
    assert report_lines()[0].startswith("error: compile failed: ") and "empty" in report_lines()[0]


def test_a_failed_compile_replaces_the_previous_report(tmp_path: Path) -> None:
    cube("Room")
    use_panel_paths(tmp_path)
    assert bpy.ops.qmap.export_and_compile() == {"FINISHED"}
    assert not report_lines()[0].startswith("error")
    (tmp_path / "level.qmap.tmp").write_bytes(b"QMAP TMP 11\nobjects {\n}\n")
    with pytest.raises(RuntimeError, match=r"level\.qmap\.tmp:1:"):
        bpy.ops.qmap.compile()
    lines = report_lines()
    assert lines[0].startswith("error: compile failed: ") and "level.qmap.tmp:1:" in lines[0]
    assert lines[1] == "level.qmap was not replaced"
    assert bpy.data.texts["QMAP compile report"].as_string().splitlines() == lines


def test_desc_import_counts_materials(tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    material("brick")
    desc = tmp_path / "m.qmap.desc"
    desc.write_bytes(b'QMAP DESC 10\nmaterials {\n "brick" { tex gen; }\n}\n')
    assert bpy.ops.qmap.import_desc(filepath=str(desc)) == {"FINISHED"}
    line = extension.common.operators.LAST_SUMMARY[0].line("Read the material options of")
    assert line.startswith("Read the material options of 1 file: 1 material in "), line


def test_octree_boxes_are_left_out_of_every_qmap_export(tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    cube("Room")
    use_panel_paths(tmp_path)
    assert bpy.ops.qmap.export_and_compile() == {"FINISHED"}
    assert bpy.ops.qmap.show_octrees() == {"FINISHED"}
    boxes = bpy.data.collections["QMAP Octrees"].objects
    assert len(boxes) and all(box.select_get() is False for box in boxes)
    for box in boxes:
        box.hide_select = False
        box.select_set(True)  # even chosen on purpose
    exports = [
        lambda: bpy.ops.qmap.export_source(),
        lambda: bpy.ops.qmap.export_and_compile(),
        lambda: bpy.ops.export_scene.qmap_tmp(filepath=str(tmp_path / "a.qmap.tmp")),
        lambda: bpy.ops.export_scene.qmap(filepath=str(tmp_path / "b.qmap"), export_selected_objects=True),
    ]
    cube("Pillar", location=(4, 0, 0)).select_set(True)
    for export in exports:
        assert export() == {"FINISHED"}
        assert not [text for text in extension.common.operators.LAST_SUMMARY[0].warnings if "octree" in text]
    for source in ("level.qmap.tmp", "a.qmap.tmp"):
        assert [mesh.name for mesh in parse(tmp_path / source).meshes] == [b"Room", b"Pillar"]
    assert [mesh.name for mesh in parse(tmp_path / "b.qmap.tmp").meshes] == [b"Pillar"]


BAD_BOUNDS = [((0, 0, 0), (1, -1, 1), "Bounds Min exceeds Bounds Max on Y 0 > -1"),
              ((0, 0, 0), (1, math.nan, 1), "every coordinate must be a finite number")]  # fmt: skip


@pytest.mark.parametrize(("low", "high", "message"), BAD_BOUNDS, ids=["inverted", "nan"])
def test_bad_fixed_bounds_are_refused_before_anything_is_written(
    low: tuple[float, ...], high: tuple[float, ...], message: str, tmp_path: Path
) -> None:
    cube("Room")
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.export_scene.qmap(filepath=str(tmp_path / "x.qmap"), use_bounds=True, bounds_min=low, bounds_max=high)
    settings = bpy.context.scene.qmap
    use_panel_paths(tmp_path)
    settings.use_bounds, settings.bounds_min, settings.bounds_max = True, low, high
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.qmap.export_and_compile()
    assert list(tmp_path.iterdir()) == []
    assert bpy.ops.qmap.export_source() == {"FINISHED"}  # the source alone takes no bounds
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.qmap.compile()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["level.qmap.desc", "level.qmap.tmp"]


def test_the_empty_slot_entry_of_a_desc_survives_import_and_export(tmp_path: Path) -> None:
    """A desc's `""` entry applies to faces in empty material slots: Blender has no material to hold it, so the
    scene's QMAP settings do, and the export writes it back."""
    source = tmp_path / "slots.qmap.tmp"
    source.write_bytes(b'QMAP TMP 10\nobjects {\n mesh "P" {\n  0,0,0 0,0,0 1,1,1 30 1\n  materials 2 { "M" "" }\n'
                       b"  vertices 4 { 0,0,0 1,0,0 1,1,0 0,1,0 }\n"
                       b"  faces 2 { 3 0 0 0 0,0 1 1,0 2 1,1 3 1 0 0 0,0 2 1,1 3 0,1 }\n }\n}\n")  # fmt: skip
    desc = b'QMAP DESC 10\nmaterials {\n "" { tex scale 2.0; name "EmptySlot"; }\n}\n'
    (tmp_path / "slots.qmap.desc").write_bytes(desc)
    assert bpy.ops.import_scene.qmap_tmp(filepath=str(source)) == {"FINISHED"}
    empty = bpy.context.scene.qmap.empty_slot
    assert (empty.tex_scale, empty.output_name) == (2.0, "EmptySlot")
    out = tmp_path / "again.qmap.tmp"
    assert bpy.ops.export_scene.qmap_tmp(filepath=str(out)) == {"FINISHED"}
    entry = qc.parse_desc((tmp_path / "again.qmap.desc").read_bytes()).entries[b""]
    assert (entry.tex_scale, entry.new_name) == (2.0, b"EmptySlot")
    assert qc.compile_bytes(out.read_bytes(), (tmp_path / "again.qmap.desc").read_bytes()) == qc.compile_bytes(
        source.read_bytes(), (tmp_path / "slots.qmap.desc").read_bytes())


def test_qmap_exports_raw_meshes_by_default_and_the_panel_can_take_hidden_objects_too(tmp_path: Path) -> None:
    """Spec 12.13: the original exported raw meshes (modifiers off by default) of every object, hidden ones too:
    the panel does by default; File > Export writes the visible objects, as every exporter does."""
    room = cube("Room")
    room.modifiers.new("Smooth", "SUBSURF")
    hidden = cube("Hidden", location=(5, 0, 0))
    hidden.hide_set(True)
    out = tmp_path / "level.qmap.tmp"
    assert bpy.ops.export_scene.qmap_tmp(filepath=str(out)) == {"FINISHED"}
    assert [(mesh.name, len(mesh.face_sizes)) for mesh in qc.parse_tmp(out.read_bytes()).meshes] == [(b"Room", 6)]
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "level.blend"))
    settings = bpy.context.scene.qmap
    assert not settings.apply_modifiers and settings.export_scope == "SCENE"
    assert bpy.ops.qmap.export_source() == {"FINISHED"}
    names = [mesh.name for mesh in qc.parse_tmp((tmp_path / "map.qmap.tmp").read_bytes()).meshes]
    assert names == [b"Room", b"Hidden"]
    settings.export_scope = "VISIBLE"
    assert bpy.ops.qmap.export_source() == {"FINISHED"}
    names = [mesh.name for mesh in qc.parse_tmp((tmp_path / "map.qmap.tmp").read_bytes()).meshes]
    assert names == [b"Room"]


def test_a_turn_added_to_an_object_far_from_the_origin_is_written(tmp_path: Path) -> None:
    """Delta transforms and constraints move an object away from its own channels; far from the origin the turn
    they add is small beside the location, and is still seen (the world matrix is written, not the channels)."""
    turned = cube("Turned", location=(20000, 0, 0))
    turned.delta_rotation_euler = (0, 0, 0.005)
    held = cube("Held", location=(2e6, 0, 0))
    limit = held.constraints.new("LIMIT_ROTATION")
    limit.use_limit_z, limit.min_z, limit.max_z = True, math.pi / 2, math.pi / 2
    bpy.context.view_layer.update()
    out = tmp_path / "far.qmap.tmp"
    assert bpy.ops.export_scene.qmap_tmp(filepath=str(out), write_desc=False) == {"FINISHED"}
    written = {mesh.name: mesh.orientation for mesh in qc.parse_tmp(out.read_bytes()).meshes}
    assert math.isclose(written[b"Turned"][2], 0.005, abs_tol=1e-6)
    assert math.isclose(written[b"Held"][2], math.pi / 2, abs_tol=1e-6)


def test_the_panel_paths_take_blend_relative_paths_without_a_warning() -> None:
    settings = bpy.context.scene.qmap
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (5.2 warns of "//" on a path property that does not say it takes it)
        settings.tmp_path = "//maps/level.qmap.tmp"
        settings.qmap_path = "//maps/level.qmap"
    assert (settings.tmp_path, settings.qmap_path) == ("//maps/level.qmap.tmp", "//maps/level.qmap")


MIXED_FACES = b"""QMAP TMP 10
objects {
 mesh "Mixed" {
  0,0,0 0,0,0 1,1,1 30 1
  materials 2 { "stone" "wood" }
  vertices 5 { 0,0,0 1,0,0 1,1,0 0,1,0 2,0,0 }
  faces 3 {
   4 1 1 0 0,0 1 1,0 2 1,1 3 0,1
   3 0 0 1 1,0 4 1,0 2 1,1
   3 1 0 4 1,0 2 1,1 1 0,0
  }
 }
}
"""


def test_source_faces_keep_their_smooth_flags_and_materials_both_ways(tmp_path: Path) -> None:
    """Per-face shading and material slots, set in bulk through the mesh's attributes, read back face by face and
    written out again as they were."""
    source = tmp_path / "mixed.qmap.tmp"
    source.write_bytes(MIXED_FACES)
    assert bpy.ops.import_scene.qmap_tmp(filepath=str(source)) == {"FINISHED"}
    (obj,) = bpy.data.objects
    polygons = obj.data.polygons
    assert [polygon.use_smooth for polygon in polygons] == [True, False, False]
    assert [obj.material_slots[polygon.material_index].name for polygon in polygons] == ["wood", "stone", "wood"]
    normals = np.empty(len(obj.data.loops) * 3, np.float32)
    obj.data.corner_normals.foreach_get("vector", normals)
    assert np.allclose(normals.reshape(-1, 3)[4:], [0.0, 0.0, 1.0], atol=1e-6)  # flat faces: their own normal
    again = tmp_path / "again.qmap.tmp"
    assert bpy.ops.export_scene.qmap_tmp(filepath=str(again)) == {"FINISHED"}
    (mesh,) = parse(again).meshes
    assert mesh.face_smooth.tolist() == [True, False, False] and mesh.materials == [b"stone", b"wood"]
    assert [mesh.materials[index] for index in mesh.face_materials.tolist()] == [b"wood", b"stone", b"wood"]


def test_a_face_material_past_the_32_bit_sign_reads_as_the_first_slot(tmp_path: Path) -> None:
    """A face's material is a 32-bit unsigned number in the file; one past 2**31 (negative as Blender's int) gets
    the first slot, as setting the property face by face did, and is written back as 0, never as a negative."""
    source = tmp_path / "wrapped.qmap.tmp"
    source.write_bytes(MIXED_FACES.replace(b"3 0 0 1 1,0", b"3 2147483648 0 1 1,0").replace(b"3 1 0 4", b"3 9 0 4"))
    assert bpy.ops.import_scene.qmap_tmp(filepath=str(source)) == {"FINISHED"}
    (obj,) = bpy.data.objects
    assert [polygon.material_index for polygon in obj.data.polygons] == [1, 0, 9]
    again = tmp_path / "again.qmap.tmp"
    assert bpy.ops.export_scene.qmap_tmp(filepath=str(again)) == {"FINISHED"}
    assert (parse(again).meshes[0].face_materials >= 0).all()


def test_an_object_placed_beyond_a_float_is_named(tmp_path: Path) -> None:
    obj = cube("Far")
    obj.location, obj.scale = (3.4e38, 0.0, 0.0), (3e38, 3e38, 3e38)  # (each finite; together not)
    cube("Near")
    out = tmp_path / "far.qmap.tmp"
    with pytest.raises(RuntimeError, match=r"object 'Far' is placed beyond what a float holds"):
        bpy.ops.export_scene.qmap_tmp(filepath=str(out))
    assert not out.exists()
