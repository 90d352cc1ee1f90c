"""JOE/JPK through Blender's operators: every sample, round trips, options, errors and safety."""

from __future__ import annotations

import os
from pathlib import Path

import bpy
import numpy as np
import pytest

from formats import joe, jpk
from tests import joe_fixtures as fx
from tests.blender.conftest import data_state
from tests.blender.scene_helpers import active_collection_holding, cube, grid_object, mesh_object, select_only
from tests.sample_paths import sample_dir, sample_files

JOE_SAMPLES = sample_files("joe", ".joe")


def import_joe(*paths: Path, **options: object) -> set[str]:
    if len(paths) == 1:
        return bpy.ops.import_scene.joe(filepath=str(paths[0]), **options)
    return bpy.ops.import_scene.joe(
        directory=str(paths[0].parent), files=[{"name": p.name} for p in paths], **options
    )


def corner_arrays(mesh: bpy.types.Mesh) -> dict[str, np.ndarray]:
    corner_vert = np.empty(len(mesh.loops), np.intc)
    mesh.loops.foreach_get("vertex_index", corner_vert)
    positions = np.empty(len(mesh.vertices) * 3, np.float32)
    mesh.vertices.foreach_get("co", positions)
    normals = np.empty(len(mesh.loops) * 3, np.float32)
    mesh.corner_normals.foreach_get("vector", normals)
    return {"positions": positions.reshape(-1, 3)[corner_vert], "normals": normals.reshape(-1, 3)}


def mesh_data(mesh: bpy.types.Mesh) -> dict[str, np.ndarray]:
    """Per-corner positions, the file's stored normals and UVs (zeros when the mesh has no UV map)."""
    data = corner_arrays(mesh)
    stored = np.empty(len(mesh.loops) * 3, np.float32)
    mesh.attributes["joe_normal"].data.foreach_get("vector", stored)
    uvs = np.zeros(len(mesh.loops) * 2, np.float32)
    if mesh.uv_layers:
        mesh.uv_layers[0].uv.foreach_get("vector", uvs)
    return {"positions": data["positions"], "stored_normals": stored.reshape(-1, 3), "uvs": uvs.reshape(-1, 2)}


def original_corners(document: joe.JoeDocument) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The file's corner data as the importer keeps it: every face, CW faces turned."""
    frame = document.first_frame
    faces = joe.importable_faces(frame, rewind_clockwise=True)
    vertex, normals, texcoords = joe.corner_data(frame, faces)
    return frame.positions[vertex], normals, texcoords


def joined(documents: list[joe.JoeDocument]) -> joe.JoeDocument:
    """The parts of a split model as one document (indices offset into concatenated tables)."""
    if len(documents) == 1:
        return documents[0]
    frames = [document.first_frame for document in documents]
    tables = {}
    for table, indices in (("positions", "vertex_indices"), ("normals", "normal_indices"),
                           ("texcoords", "texcoord_indices")):  # fmt: skip
        offsets = np.cumsum([0] + [len(getattr(frame, table)) for frame in frames[:-1]])
        tables[table] = np.concatenate([getattr(frame, table) for frame in frames])
        tables[indices] = np.concatenate([getattr(frame, indices).astype(np.int64) + offset
                                          for frame, offset in zip(frames, offsets, strict=True)])  # fmt: skip
    return joe.JoeDocument(frames=[joe.JoeFrame(**tables)], magic=documents[0].magic)


def file_corners(document: joe.JoeDocument) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    frame = document.first_frame
    positions = frame.positions[frame.vertex_indices.astype(np.intp)].reshape(-1, 3)
    normals = frame.normals[frame.normal_indices.astype(np.intp)].reshape(-1, 3)
    texcoords = frame.texcoords[frame.texcoord_indices.astype(np.intp)].reshape(-1, 2)
    return positions, normals, texcoords


# -------------------------------------------------------------------------------------------------- import


@pytest.mark.parametrize("path", JOE_SAMPLES, ids=lambda p: p.name)
def test_sample_imports_with_file_normals_and_flipped_uvs(path: Path) -> None:
    document = joe.load_joe(str(path))
    assert import_joe(path) == {"FINISHED"}
    obj = bpy.data.objects[path.stem]
    mesh = obj.data
    positions, normals, texcoords = original_corners(document)
    assert len(mesh.polygons) == len(positions) // 3
    blender = corner_arrays(mesh)
    np.testing.assert_array_equal(blender["positions"], positions)
    unit = normals / np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-30)
    corners = positions.reshape(-1, 3, 3).astype(np.float64)
    area = np.linalg.norm(np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]), axis=1)
    usable = (np.linalg.norm(normals, axis=1) > 1e-6) & np.repeat(area > 0, 3)  # (no normal without an area)
    cosine = (blender["normals"][usable] * unit[usable]).sum(axis=1)
    assert cosine.min() > np.cos(np.radians(2.0))  # Blender stores custom normals compressed (about 1.2 deg)
    stored = np.empty(len(mesh.loops) * 3, np.float32)
    mesh.attributes["joe_normal"].data.foreach_get("vector", stored)
    np.testing.assert_array_equal(stored.reshape(-1, 3), normals)
    if texcoords is None:
        assert len(mesh.uv_layers) == 0
    else:
        uvs = np.empty(len(mesh.loops) * 2, np.float32)
        mesh.uv_layers[0].uv.foreach_get("vector", uvs)
        np.testing.assert_allclose(uvs.reshape(-1, 2)[:, 1], 1.0 - texcoords[:, 1].astype(np.float64), atol=1e-6)
    assert all(p.use_smooth for p in mesh.polygons)


@pytest.mark.parametrize("path", JOE_SAMPLES, ids=lambda p: p.name)
def test_sample_round_trips_through_blender(path: Path, tmp_path: Path) -> None:
    """Import, export, read back: positions exact, UVs within 1e-7, normals within 1e-6, same faces."""
    document = joe.load_joe(str(path))
    import_joe(path)
    out = tmp_path / "again.joe"
    if document.first_frame.face_count > joe.VDRIFT_MAX_FACES:
        with pytest.raises(RuntimeError, match=r"more than 32000 \(Split Large Models, split_large_models=True"):
            bpy.ops.export_scene.joe(filepath=str(out), split_large_models=False)
        assert not out.exists()
    assert bpy.ops.export_scene.joe(filepath=str(out)) == {"FINISHED"}
    parts = [out, *sorted(tmp_path.glob("again_*.joe"))]  # (a model over VDrift's limits: numbered parts)
    assert len(parts) == -(-document.first_frame.face_count // joe.VDRIFT_MAX_FACES)
    again = joined([joe.load_joe(str(part)) for part in parts])
    assert again.magic == joe.MAGIC_IDP2 and not again.warnings
    positions, normals, texcoords = original_corners(document)
    new_positions, new_normals, new_texcoords = file_corners(again)
    np.testing.assert_array_equal(new_positions, positions)
    np.testing.assert_allclose(new_normals, normals, atol=1e-6, rtol=0)
    if texcoords is None:
        assert len(again.first_frame.texcoords) == 1 and not again.first_frame.texcoord_indices.any()
    else:
        np.testing.assert_allclose(new_texcoords, texcoords, atol=1e-7, rtol=0)
    assert not joe.clockwise_faces(again.first_frame).any()
    assert joe.normal_swap_would_fire(again) == joe.normal_swap_would_fire(document)
    # ... and importing the exported file gives Blender the same mesh as the first import.
    first = bpy.data.objects[path.stem].data
    if len(parts) > 1:
        assert import_joe(*parts) == {"FINISHED"}
        assert sum(len(bpy.data.objects[part.stem].data.polygons) for part in parts) == len(first.polygons)
        return
    assert import_joe(out) == {"FINISHED"}
    second = bpy.data.objects["again"].data
    assert len(second.polygons) == len(first.polygons)
    for name in ("positions", "stored_normals", "uvs"):
        np.testing.assert_allclose(mesh_data(second)[name], mesh_data(first)[name], atol=1e-7, rtol=0)


def test_jpk_import_makes_one_object_per_member() -> None:
    path = sample_dir("joe") / "track_garage_objects.jpk"
    assert import_joe(path) == {"FINISHED"}
    pack = jpk.load_jpk(str(path))
    assert sorted(bpy.data.objects.keys()) == sorted(m.name.removesuffix(".joe") for m in pack.members)
    assert len(bpy.data.objects["joist.007"].data.polygons) == 10


def test_many_files_in_one_import() -> None:
    folder = sample_dir("joe")
    paths = [folder / "car_360_glass.joe", folder / "trackparts_road_cone.joe", folder / "track_garage_objects.jpk"]
    assert import_joe(*paths) == {"FINISHED"}
    assert len(bpy.data.objects) == 2 + 37


def test_files_imported_at_once_make_the_meshes_each_makes_alone(tmp_path: Path) -> None:
    """The models of all the files of an import are made into mesh arrays together: the same as file by file."""
    folder = sample_dir("joe")
    (tmp_path / "cw.joe").write_bytes(joe.write_joe(fx.clockwise_cube()))
    (tmp_path / "dof.joe").write_bytes(joe.write_joe(fx.dof2joe_cube()))
    (tmp_path / "box.joe").write_bytes(fx.cube_bytes(with_texcoords=False))
    paths = [tmp_path / "cw.joe", tmp_path / "dof.joe", tmp_path / "box.joe"]
    for name in ("car_360_glass.joe", "trackparts_road_cone.joe", "track_garage_objects.jpk"):
        (tmp_path / name).write_bytes((folder / name).read_bytes())
        paths.append(tmp_path / name)
    alone = {}
    for path in paths:
        bpy.ops.wm.read_homefile(use_empty=True)
        assert import_joe(path) == {"FINISHED"}
        alone.update({obj.name: mesh_data(obj.data) for obj in bpy.data.objects})
    bpy.ops.wm.read_homefile(use_empty=True)
    assert import_joe(*paths) == {"FINISHED"}
    together = {obj.name: mesh_data(obj.data) for obj in bpy.data.objects}
    assert together.keys() == alone.keys()
    for name, arrays in together.items():
        for key, values in arrays.items():
            np.testing.assert_array_equal(values, alone[name][key], err_msg=f"{name}: {key}")


def test_clockwise_faces_are_turned_unless_asked_not_to(tmp_path: Path) -> None:
    path = tmp_path / "cw.joe"
    path.write_bytes(joe.write_joe(fx.clockwise_cube()))
    import_joe(path)
    turned = bpy.data.objects["cw"].data
    outward = np.array([p.normal.dot(p.center) for p in turned.polygons])
    assert (outward > 0).all()
    bpy.data.objects.remove(bpy.data.objects["cw"])
    import_joe(path, rewind_clockwise=False)
    kept = bpy.data.objects["cw"].data
    assert (np.array([p.normal.dot(p.center) for p in kept.polygons]) < 0).all()


def test_normal_swap_is_warned_about_and_applied_on_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "dof.joe"
    path.write_bytes(joe.write_joe(fx.dof2joe_cube()))
    import_joe(path)
    assert "normal-swap heuristic fires" in capsys.readouterr().out
    bpy.data.objects.remove(bpy.data.objects["dof"])
    import_joe(path, apply_normal_swap=True)
    mesh = bpy.data.objects["dof"].data
    normals = corner_arrays(mesh)["normals"]
    face_normals = np.repeat([p.normal[:] for p in mesh.polygons], 3, axis=0)
    assert ((normals * face_normals).sum(axis=1) > 0.999).all()  # repaired: normals match the faces again


def test_file_without_texcoords_gets_no_uv_map(tmp_path: Path) -> None:
    path = tmp_path / "box.joe"
    path.write_bytes(fx.cube_bytes(with_texcoords=False))
    import_joe(path)
    assert len(bpy.data.objects["box"].data.uv_layers) == 0


def test_scale_and_axes_options(tmp_path: Path) -> None:
    path = tmp_path / "box.joe"
    path.write_bytes(fx.cube_bytes())
    import_joe(path, global_scale=2.0, forward_axis="NEGATIVE_Z", up_axis="Y")
    mesh = bpy.data.objects["box"].data
    corners = np.array([v.co[:] for v in mesh.vertices])
    assert np.abs(corners).max() == pytest.approx(2.0)


# ----------------------------------------------------------------------------------------- failures, safety


def test_failed_import_leaves_blender_data_exactly_as_before(tmp_path: Path) -> None:
    good = tmp_path / "good.joe"
    good.write_bytes(fx.cube_bytes())
    bad = tmp_path / "bad.joe"
    bad.write_bytes(fx.cube_bytes()[:100])
    cube("Existing")
    before = data_state()
    with pytest.raises(RuntimeError, match=r"bad\.joe, byte 16: frame 0: 12 faces needs"):
        import_joe(good, bad)
    assert data_state() == before


def test_failure_while_building_rolls_back_what_was_created(tmp_path: Path, extension, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    paths = []
    for name in ("a", "b"):
        paths.append(tmp_path / f"{name}.joe")
        paths[-1].write_bytes(fx.cube_bytes())
    importer = extension.importers.joe
    original = importer.build_model_mesh
    calls = []

    def failing_second(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 2:
            raise extension.formats.errors.FormatError("simulated failure", path="b.joe")
        return original(*args, **kwargs)

    monkeypatch.setattr(importer, "build_model_mesh", failing_second)
    before = data_state()
    with pytest.raises(RuntimeError, match="simulated failure"):
        import_joe(*paths)
    assert data_state() == before


def test_failed_export_keeps_the_existing_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "model.joe"
    target.write_bytes(b"precious")
    grid_object("Big", 127)  # 32,258 triangles: over VDrift's limit
    with pytest.raises(RuntimeError, match="32258 triangles: VDrift refuses"):
        bpy.ops.export_scene.joe(filepath=str(target), split_large_models=False)
    assert target.read_bytes() == b"precious"
    assert os.listdir(tmp_path) == ["model.joe"]


def test_export_of_nothing_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="no mesh objects"):
        bpy.ops.export_scene.joe(filepath=str(tmp_path / "x.joe"), export_selected_objects=True)
    assert not (tmp_path / "x.joe").exists()


# ------------------------------------------------------------------------------------------------- export


def test_export_triangulates_ngons_keeps_sharp_edges_and_applies_the_transform(tmp_path: Path) -> None:
    obj = cube("Box", size=2.0, location=(10, 0, 0))  # flat shaded: 6 distinct normals
    out = tmp_path / "box.joe"
    assert bpy.ops.export_scene.joe(filepath=str(out)) == {"FINISHED"}
    frame = joe.load_joe(str(out)).first_frame
    assert frame.face_count == 12 and len(frame.normals) == 6 and len(frame.positions) == 8
    assert frame.positions[:, 0].min() == pytest.approx(9.0)
    assert not joe.clockwise_faces(frame).any()
    hexagon = mesh_object("Hex", [(np.cos(a), np.sin(a), 0.0) for a in np.linspace(0, 2 * np.pi, 7)[:-1]],
                          [tuple(range(6))])  # fmt: skip
    select_only(hexagon)
    bpy.ops.export_scene.joe(filepath=str(out), export_selected_objects=True, apply_transform=False)
    assert joe.load_joe(str(out)).first_frame.face_count == 4
    obj.select_set(True)
    bpy.ops.export_scene.joe(filepath=str(out), export_selected_objects=True, apply_transform=False)
    assert joe.load_joe(str(out)).first_frame.positions[:, 0].max() == pytest.approx(1.0)


def test_modifiers_are_applied_or_not(tmp_path: Path) -> None:
    obj = cube("Box")
    obj.modifiers.new("Sub", "SUBSURF").levels = 1
    out = tmp_path / "box.joe"
    bpy.ops.export_scene.joe(filepath=str(out), apply_modifiers=True)
    assert joe.load_joe(str(out)).first_frame.face_count == 48
    bpy.ops.export_scene.joe(filepath=str(out), apply_modifiers=False)
    assert joe.load_joe(str(out)).first_frame.face_count == 12


def test_edited_normals_are_exported_instead_of_the_stored_ones(tmp_path: Path) -> None:
    path = tmp_path / "box.joe"
    path.write_bytes(fx.cube_bytes())
    import_joe(path)
    mesh = bpy.data.objects["box"].data
    mesh.normals_split_custom_set([(0.0, 0.0, 1.0)] * len(mesh.loops))
    out = tmp_path / "edited.joe"
    bpy.ops.export_scene.joe(filepath=str(out))
    frame = joe.load_joe(str(out)).first_frame
    assert np.abs(frame.normals - [0.0, 0.0, 1.0]).max() < 1e-3


def test_jpk_export_writes_one_member_per_object(tmp_path: Path) -> None:
    cube("First")
    cube("Second", location=(3, 0, 0))
    out = tmp_path / "objects.jpk"
    assert bpy.ops.export_scene.jpk(filepath=str(out)) == {"FINISHED"}
    pack = jpk.load_jpk(str(out))
    assert sorted(m.name for m in pack.members) == ["First.joe", "Second.joe"]
    assert all(joe.read_joe(m.data).first_frame.face_count == 12 for m in pack.members)


def test_jpk_export_refuses_non_ascii_names(tmp_path: Path) -> None:
    cube("Caf\u00e9")
    with pytest.raises(RuntimeError, match="not ASCII"):
        bpy.ops.export_scene.jpk(filepath=str(tmp_path / "p.jpk"))


def test_collection_exporter_exports_only_its_collection(tmp_path: Path) -> None:
    inside = cube("Inside")
    cube("Outside", location=(5, 0, 0))
    collection = active_collection_holding("Export", inside)
    assert bpy.ops.collection.exporter_add(name="IOGF_FH_joe") == {"FINISHED"}
    out = tmp_path / "collection.joe"
    exporter = collection.exporters[0]
    exporter.export_properties.filepath = str(out)
    exporter.export_properties.global_scale = 10.0
    assert bpy.ops.collection.exporter_export(index=0) == {"FINISHED"}
    frame = joe.load_joe(str(out)).first_frame
    assert frame.face_count == 12
    assert np.abs(frame.positions).max() == pytest.approx(10.0)


def test_degenerate_and_doubled_faces_are_imported_and_written_back(extension, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    document = fx.cube()
    frame = document.first_frame
    frame.vertex_indices[:6, 1] = frame.vertex_indices[:6, 0]  # six faces use a vertex twice
    frame.vertex_indices[7] = frame.vertex_indices[6, ::-1]  # and one is the back of another (a doubled card)
    path = tmp_path / "flat.joe"
    path.write_bytes(joe.write_joe(document))
    assert import_joe(path) == {"FINISHED"}
    assert last_warnings(extension) == []
    mesh = bpy.data.objects["flat"].data
    assert len(mesh.polygons) == 12  # every face of the file, the odd ones with vertices of their own
    used = {loop.vertex_index for loop in mesh.loops}
    assert len(used) == len(mesh.vertices) > 8  # (none left loose)
    assert not mesh.validate()  # (a mesh Blender holds as it is)
    out = tmp_path / "again.joe"
    assert bpy.ops.export_scene.joe(filepath=str(out)) == {"FINISHED"}
    again = joe.load_joe(str(out)).first_frame
    assert (again.face_count, len(again.positions)) == (12, 8)
    written = np.sort(again.positions[again.vertex_indices.astype(np.intp)], axis=1)
    np.testing.assert_array_equal(written, np.sort(frame.positions[frame.vertex_indices.astype(np.intp)], axis=1))


def test_nan_texcoords_and_normals_are_read_as_zero_and_the_import_exports_with_defaults(  # type: ignore[no-untyped-def]
    extension, tmp_path: Path
) -> None:
    data = bytearray(fx.cube_bytes())  # 12 faces, then 8 positions, 6 normals and 4 texcoords
    normals = 16 + 18 * 12 + 12 + 12 * 8
    for at in (normals, normals + 12 * 6 + 8 + 4):  # (patched in the bytes: the writer refuses NaN)
        data[at : at + 4] = np.float32(np.nan).tobytes()
    path = tmp_path / "bldg.joe"
    path.write_bytes(bytes(data))
    assert import_joe(path) == {"FINISHED"}
    assert last_warnings(extension) == ["bldg: 1 of 6 normals are NaN or infinite: read as 0",
                                        "bldg: 1 of 4 texcoords are NaN or infinite: read as 0"]  # fmt: skip
    out = tmp_path / "again.jpk"
    assert bpy.ops.export_scene.jpk(filepath=str(out)) == {"FINISHED"}
    again = joe.read_joe(jpk.load_jpk(str(out)).members[0].data).first_frame
    assert again.face_count == 12 and np.isfinite(again.texcoords).all() and np.isfinite(again.normals).all()


def test_export_leaves_out_faceless_objects_and_keeps_the_others_uvs(tmp_path: Path) -> None:
    cube("Box")
    edges = mesh_object("Guide", [(0, 0, 0), (1, 0, 0)], [])
    edges.data.edges.add(1)
    edges.data.edges[0].vertices = (0, 1)
    bpy.ops.curve.primitive_bezier_curve_add()
    out = tmp_path / "all.joe"
    assert bpy.ops.export_scene.joe(filepath=str(out)) == {"FINISHED"}
    frame = joe.load_joe(str(out)).first_frame
    assert frame.face_count == 12 and frame.has_uv_map
    with pytest.raises(RuntimeError, match="nothing to export: none of the 1 mesh object has faces"):
        select_only(edges)
        bpy.ops.export_scene.jpk(filepath=str(tmp_path / "p.jpk"), export_selected_objects=True)


def test_mirrored_objects_export_facing_outwards(tmp_path: Path) -> None:
    obj = cube("Mirror")
    obj.scale = (-1, 1, 1)
    out = tmp_path / "mirror.joe"
    bpy.ops.export_scene.joe(filepath=str(out))
    frame = joe.load_joe(str(out)).first_frame
    corners = frame.positions[frame.vertex_indices.astype(np.intp)].astype(np.float64)
    outward = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    assert ((outward * corners.mean(axis=1)).sum(axis=1) > 0).all()
    assert not joe.clockwise_faces(frame).any()


# ------------------------------------------------------------------------------------------------ names


def last_warnings(extension) -> list[str]:  # type: ignore[no-untyped-def]
    return list(extension.common.operators.LAST_SUMMARY[0].warnings)


def member_names_of(path: Path) -> list[str]:
    return sorted(member.name for member in jpk.load_jpk(str(path)).members)


def test_a_member_whose_name_is_taken_is_written_back_under_it(tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    cube("Cube")
    pack = tmp_path / "objects.jpk"
    pack.write_bytes(fx.pack_of({"Cube.joe": fx.cube_bytes(), "Wheel.joe": fx.cube_bytes()}))
    assert import_joe(pack, find_textures=False) == {"FINISHED"}
    assert sorted(obj.name for obj in bpy.context.selected_objects) == ["Cube.001", "Wheel"]
    assert last_warnings(extension) == ["objects.jpk: 1 object name already taken in this .blend ('Cube' shown as "
                                        "'Cube.001'); written back under the file's names"]  # fmt: skip
    assert import_joe(pack, find_textures=False) == {"FINISHED"}  # again: one line for the pack, not one per member
    assert last_warnings(extension) == ["objects.jpk: 2 object names already taken in this .blend ('Cube' shown as "
                                        "'Cube.002' and 1 more); written back under the file's names"]  # fmt: skip
    bpy.data.objects.remove(bpy.data.objects["Cube.002"])
    bpy.data.objects.remove(bpy.data.objects["Wheel.001"])
    bpy.ops.object.select_all(action="DESELECT")
    for name in ("Cube.001", "Wheel"):
        bpy.data.objects[name].select_set(True)
    again = tmp_path / "again.jpk"
    assert bpy.ops.export_scene.jpk(filepath=str(again), export_selected_objects=True) == {"FINISHED"}
    assert member_names_of(again) == ["Cube.joe", "Wheel.joe"]
    bpy.data.objects["Cube.001"].name = "Lid"  # renamed by the user: the new name counts
    assert bpy.ops.export_scene.jpk(filepath=str(again), export_selected_objects=True) == {"FINISHED"}
    assert member_names_of(again) == ["Lid.joe", "Wheel.joe"]


def test_two_objects_wanting_one_member_name_get_two(tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    pack = tmp_path / "objects.jpk"
    pack.write_bytes(fx.pack_of({"Cube.joe": fx.cube_bytes()}))
    assert import_joe(pack, find_textures=False) == {"FINISHED"}
    bpy.data.objects["Cube"].name = "Body"
    cube("Cube")  # a new object takes the name back
    assert import_joe(pack, find_textures=False) == {"FINISHED"}  # "Cube.001", written back as "Cube"
    out = tmp_path / "again.jpk"
    assert bpy.ops.export_scene.jpk(filepath=str(out)) == {"FINISHED"}
    assert member_names_of(out) == ["Body.joe", "Cube.001.joe", "Cube.joe"]
    assert "Cube.001: pack member 'Cube.joe' is another object's; written as 'Cube.001.joe'" in (
        last_warnings(extension))


def test_a_member_name_too_long_for_blender_is_written_back_in_full(tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    """Blender 4.2 holds 63-byte names (5.x: 255)."""
    name = "track_object_" + "x" * 60 + ".dof-00"
    pack = tmp_path / "long.jpk"
    pack.write_bytes(fx.pack_of({f"{name}.joe": fx.cube_bytes()}))
    assert import_joe(pack, find_textures=False) == {"FINISHED"}
    (obj,) = bpy.data.objects
    assert (obj.name != name) == any("too long for this Blender" in text for text in last_warnings(extension))
    out = tmp_path / "again.jpk"
    assert bpy.ops.export_scene.jpk(filepath=str(out)) == {"FINISHED"}
    assert member_names_of(out) == [f"{name}.joe"]


def triangle_soup(name: str, count: int) -> bpy.types.Object:
    """`count` separate triangles: 3 * count distinct positions."""
    corners = np.repeat(np.arange(count, dtype=np.float32)[:, None] * [1.0, 0.0, 0.0], 3, axis=0)
    corners += np.tile(np.array([[0, 0, 0], [0.5, 1, 0], [0, 1, 0]], np.float32), (count, 1))
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(len(corners))
    mesh.vertices.foreach_set("co", corners.astype(np.float32).ravel())
    mesh.loops.add(len(corners))
    mesh.loops.foreach_set("vertex_index", np.arange(len(corners), dtype=np.intc))
    mesh.polygons.add(count)
    mesh.polygons.foreach_set("loop_start", np.arange(0, len(corners), 3, dtype=np.intc))
    mesh.update(calc_edges=True)
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.collection.objects.link(obj)
    return obj


@pytest.mark.parametrize(("make", "message"), [
    (lambda: grid_object("Big", 127), r"Big \(pack member 'Big\.joe'\): 32258 triangles: VDrift refuses"),
    (lambda: triangle_soup("Big", 22000), r"Big \(pack member 'Big\.joe'\): 66000 distinct vertices"),
], ids=["faces", "indices"])  # fmt: skip
def test_jpk_limit_errors_name_the_object_and_member(make, message: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cube("Small")
    make()
    out = tmp_path / "p.jpk"
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.export_scene.jpk(filepath=str(out), split_large_models=False)
    assert not out.exists()


@pytest.mark.parametrize(("make", "parts"), [
    (lambda: grid_object("Big", 127), [16129, 16129]),
    (lambda: triangle_soup("Big", 22000), [11000, 11000]),  # (66,000 distinct vertices: halved to fit 16 bits)
], ids=["faces", "indices"])  # fmt: skip
def test_a_model_over_vdrifts_limits_is_split_into_numbered_members(  # type: ignore[no-untyped-def]
    make, parts: list[int], tmp_path: Path, extension
) -> None:
    cube("Small")
    big = make()
    cube("Big_2")  # (a member name a part must not take)
    out = tmp_path / "p.jpk"
    assert bpy.ops.export_scene.jpk(filepath=str(out)) == {"FINISHED"}
    members = jpk.load_jpk(str(out)).members
    assert [member.name for member in members] == ["Small.joe", "Big.joe", "Big_3.joe", "Big_2.joe"]
    faces = [joe.read_joe(member.data).first_frame.face_count for member in members]
    assert faces == [12, *parts, 12]
    assert any(w.startswith(f"Big: {sum(parts):,} triangles, over what VDrift loads from one model: written as 2 "
                            "models under its limits (Big.joe, Big_3.joe)") for w in last_warnings(extension))
    assert extension.common.operators.LAST_SUMMARY[0].faces == sum(parts) + 24
    del big


def test_jpk_members_made_side_by_side_keep_the_order_of_their_warnings_and_errors(
    tmp_path: Path, extension  # type: ignore[no-untyped-def]
) -> None:
    for index in range(6):
        triangle_soup(f"M{index}", 10923 + index)  # over 32,767 vertices: a warning per member
    out = tmp_path / "soups.jpk"
    assert bpy.ops.export_scene.jpk(filepath=str(out)) == {"FINISHED"}
    members = [member.name for member in jpk.load_jpk(str(out)).members]
    assert last_warnings(extension) == [
        f"{name[:-4]} (pack member {name!r}): indices up to {32768 + 3 * index}: VDrift before 2014 and the old "
        "Blender scripts read indices as signed 16-bit and break above 32767"
        for index, name in enumerate(members)
    ]
    triangle_soup("M2b", 22000)  # two members over VDrift's limits: the first in the pack's order is reported
    triangle_soup("M4b", 22000)
    with pytest.raises(RuntimeError, match=r"M2b \(pack member 'M2b\.joe'\): 66000 distinct vertices"):
        bpy.ops.export_scene.jpk(filepath=str(out), split_large_models=False)


def test_pack_warnings_name_the_pack(tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    pack = tmp_path / "mixed.jpk"
    pack.write_bytes(fx.pack_of({"joist.joe": fx.cube_bytes(), "readme.txt": b"notes"}))
    assert import_joe(pack, find_textures=False) == {"FINISHED"}
    assert last_warnings(extension) == ["mixed.jpk: pack member 'readme.txt' is not a .joe model and was skipped"]
    notes = tmp_path / "notes.jpk"
    notes.write_bytes(fx.pack_of({"readme.txt": b"notes"}))
    assert import_joe(notes) == {"FINISHED"}
    assert last_warnings(extension) == ["notes.jpk: pack member 'readme.txt' is not a .joe model and was skipped",
                                        "notes.jpk: the pack has no .joe member; nothing imported from it"]  # fmt: skip


def test_a_warning_many_pack_members_share_is_said_once_naming_them(tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    dof = joe.write_joe(fx.dof2joe_cube())
    members = {f"cone{index:03d}.dof-00.joe": dof for index in range(7)}
    pack = tmp_path / "objects.jpk"
    pack.write_bytes(fx.pack_of({**members, "joist.joe": fx.cube_bytes()}))
    assert import_joe(pack, find_textures=False) == {"FINISHED"}
    shown = "cone000.dof-00, cone001.dof-00, cone002.dof-00, cone003.dof-00, cone004.dof-00, ..."
    assert last_warnings(extension) == [
        f"7 members ({shown}): VDrift's normal-swap heuristic fires on this file: the game swaps its normals (turn on "
        "VDrift Normal Swap to see it shaded as in the game)",
    ]
    assert extension.common.operators.LAST_SUMMARY[0].notes == [
        f"7 members ({shown}): magic is 0x00000000, not IDP2: made by dof2joe"]  # (normal for dof2joe: a note)
    assert bpy.ops.export_scene.jpk(filepath=str(tmp_path / "again.jpk")) == {"FINISHED"}  # (and so does the export)
    assert last_warnings(extension) == [
        f"7 members ({shown}): VDrift's normal-swap heuristic would fire on this model and swap its normals"]


def test_a_joe_and_a_jpk_dropped_together_are_both_imported(tmp_path: Path) -> None:
    """Blender hands each FileHandler only its own extensions: one handler takes both kinds, so neither file of a
    mixed drop is lost (the JPK handler is the pack's Collection Exporter only)."""
    from tests.blender.test_qmap_blender import drop

    cube("Body")
    cube("Wheel", location=(3, 0, 0))
    bpy.ops.export_scene.joe(filepath=str(tmp_path / "body.joe"))
    bpy.ops.export_scene.jpk(filepath=str(tmp_path / "parts.jpk"))
    bpy.ops.wm.read_homefile(use_empty=True)
    assert drop(tmp_path, "body.joe", "parts.jpk") == {"FINISHED"}
    assert len([obj for obj in bpy.data.objects if obj.type == "MESH"]) == 3  # the model and the two members
    bpy.ops.wm.read_homefile(use_empty=True)
    assert drop(tmp_path, "parts.jpk") == {"FINISHED"}
    assert len(bpy.data.objects) == 2


def test_the_jpk_collection_exporter_writes_a_pack(tmp_path: Path) -> None:
    inside = cube("Inside")
    collection = active_collection_holding("Export", inside)
    assert bpy.ops.collection.exporter_add(name="IOGF_FH_jpk") == {"FINISHED"}
    out = tmp_path / "collection.jpk"
    collection.exporters[0].export_properties.filepath = str(out)
    assert bpy.ops.collection.exporter_export(index=0) == {"FINISHED"}
    assert out.is_file()
