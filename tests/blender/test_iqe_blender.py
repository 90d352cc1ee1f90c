"""IQE through Blender's operators: every sample round trip, hand-written fixtures, options, errors, safety."""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

import bpy
import numpy as np
import pytest

from formats import iqe, iqm
from tests.blender.conftest import data_state
from tests.blender.scene_dump import dump_scene
from tests.blender.scene_helpers import active_collection_holding, chain_rig, cube, grid_object, select_only, turn_keys
from tests.sample_paths import sample_dir, sample_files

IQE_SAMPLES = sample_files("iqe", ".iqe")
TOLERANCE = 1e-5


def import_iqe(*paths: Path, **options: object) -> set[str]:
    if len(paths) == 1:
        return bpy.ops.import_scene.iqe(filepath=str(paths[0]), **options)
    return bpy.ops.import_scene.iqe(directory=str(paths[0].parent), files=[{"name": p.name} for p in paths], **options)


def export_iqe(path: Path, **options: object) -> set[str]:
    return bpy.ops.export_scene.iqe(filepath=str(path), **options)


def write(tmp_path: Path, name: str, text: str, newline: str = "\n") -> Path:
    path = tmp_path / name
    path.write_bytes(text.replace("\n", newline).encode())
    return path


def dense_weights(mesh: iqe.IqeMesh, joints: int) -> np.ndarray:
    table = np.zeros((mesh.vertex_count, max(joints, 1)))
    if mesh.blend_indices is None or mesh.blend_weights is None:
        return table
    indices, weights = iqe.limit_blend_weights(mesh.blend_indices, mesh.blend_weights)
    rows = np.repeat(np.arange(mesh.vertex_count), indices.shape[1])
    np.add.at(table, (rows, indices.ravel()), weights.ravel())
    return table


def assert_poses_close(actual: np.ndarray, expected: np.ndarray) -> None:
    """(..., 10) poses: translation and scale within the tolerance, quaternions up to sign."""
    np.testing.assert_allclose(actual[..., 0:3], expected[..., 0:3], atol=TOLERANCE, rtol=1e-6)
    np.testing.assert_allclose(actual[..., 7:10], expected[..., 7:10], atol=TOLERANCE, rtol=1e-6)
    dots = np.abs((actual[..., 3:7].astype(np.float64) * expected[..., 3:7]).sum(axis=-1))
    norms = np.linalg.norm(expected[..., 3:7], axis=-1)
    np.testing.assert_allclose(dots, norms, atol=TOLERANCE)


def assert_same_document(again: iqe.IqeDocument, original: iqe.IqeDocument, normals: bool = True) -> None:
    assert [(j.name, j.parent) for j in again.joints] == [(j.name, j.parent) for j in original.joints]
    if original.joints:
        assert_poses_close(again.base_pose_array(), original.base_pose_array())
    blocks = {(m.name, m.material): m for m in again.meshes}
    assert sorted(blocks) == sorted((m.name, m.material) for m in original.meshes)
    for mesh in original.meshes:
        other = blocks[(mesh.name, mesh.material)]
        np.testing.assert_array_equal(other.positions, mesh.positions)
        np.testing.assert_array_equal(other.face_sizes, mesh.face_sizes)
        np.testing.assert_array_equal(other.face_corners, mesh.face_corners)
        if mesh.texcoords is not None:
            np.testing.assert_allclose(other.texcoords, mesh.texcoords, atol=1e-6)  # type: ignore[arg-type]
        if normals and mesh.normals is not None:
            np.testing.assert_allclose(other.normals, mesh.normals, atol=TOLERANCE)  # type: ignore[arg-type]
        if mesh.colors is not None:
            np.testing.assert_allclose(other.colors, mesh.colors, atol=TOLERANCE)  # type: ignore[arg-type]
        for slot, values in mesh.custom.items():
            np.testing.assert_allclose(other.custom[slot], values, atol=TOLERANCE)
        if mesh.blend_indices is not None:
            joints = len(original.joints)
            np.testing.assert_allclose(dense_weights(other, joints), dense_weights(mesh, joints), atol=TOLERANCE)
    animations = {a.name: a for a in again.animations}
    assert sorted(animations) == sorted(a.name for a in original.animations)
    for animation in original.animations:
        other = animations[animation.name]
        assert other.framerate == pytest.approx(animation.framerate, rel=1e-6)
        assert other.loop == animation.loop
        assert other.frames.shape == animation.frames.shape
        assert_poses_close(other.frames, animation.frames)


# ---------------------------------------------------------------------------------------------- samples


@pytest.mark.parametrize("path", IQE_SAMPLES, ids=lambda p: p.name)
def test_sample_round_trips_through_blender(path: Path, tmp_path: Path) -> None:
    original = iqe.load_iqe(path)
    assert import_iqe(path) == {"FINISHED"}
    armature = bpy.data.objects[path.stem]
    assert armature.type == "ARMATURE" and len(armature.data.bones) == len(original.joints)
    skinned = [obj for obj in bpy.data.objects if obj.type == "MESH"]
    assert all(obj.modifiers[0].object == armature for obj in skinned)
    assert len(bpy.data.actions) == len(original.animations)
    out = tmp_path / "again.iqe"
    assert export_iqe(out) == {"FINISHED"}
    again = iqe.load_iqe(out)
    assert not again.warnings
    assert_same_document(again, original)
    assert max(len(line) for line in out.read_bytes().splitlines()) < 512


def test_sample_imports_weights_normals_and_actions(extension: ModuleType) -> None:
    path = next((p for p in IQE_SAMPLES if p.name == "unv_drill.iqe"), None)
    if path is None:
        pytest.skip("unv_drill.iqe not available")
    import_iqe(path)
    mesh = bpy.data.objects["drill"].data
    assert mesh.has_custom_normals and len(mesh.uv_layers) == 1
    assert {g.name for g in bpy.data.objects["drill"].vertex_groups} == {"Bone_base", "Bone_arm"}
    action = bpy.data.actions["idle"]
    assert action["iqe_framerate"] == 60.0 and action.use_cyclic
    assert bpy.data.actions["Take 001"]["iqe_framerate"] == pytest.approx(30.1034)
    compat = extension.common.compat
    slots = compat.object_slots(action)  # one slot on 4.4+ (slotted actions), none before
    assert len(slots) == (1 if compat.has_slotted_actions() else 0)
    assert len(compat.action_fcurves(action, slots[0] if slots else None)) == 20


# ---------------------------------------------------------------------------------------------- fixtures

FIXTURE = """# Inter-Quake Export
vertexarray custom0 float 2 "wind"
vertexarray custom3 ubyte 1 "mask"
joint "root" -1
pm 0 0 0  1 0 0  0 1 0  0 0 1
joint "child" 0
pa 0 1 0  0.3 0.5 0.7
mesh "body"
material "skin"
vp 0 0 0
vt 0 0
vn 0 0 1
vc 1 0 0 1
v0 0.5 0.25
v3 7
vb 0 1
vp 1 0 0
vt 1 0
vn 0 0 1
vc 0 1 0 0.5
v0 0.1 0.2
v3 8
vb 0 0.5 1 0.5
vp 1 1 0
vt 1 1
vn 0 0 1
vc 0 0 1 1
v0 0.3 0.4
v3 9
vb 1 1
vp 0 1 0
vt 0 1
vn 0 0 1
vc 1 1 1 1
v0 0.7 0.8
v3 10
vb 1 0.75 0 0.25
fa 0 3 2 1
mesh "body"
material "cloth"
vp 0 0 1
vt 0 0
vn 0 0 1
vc 1 0 0 1
v0 0 0
v3 1
vb 0 1
vp 1 0 1
vt 1 0
vn 0 0 1
vc 1 0 0 1
v0 0 0
v3 2
vb 0 1
vp 0 1 1
vt 0 1
vn 0 0 1
vc 1 0 0 1
v0 0 0
v3 3
vb 1 1
fm 0 2 1
animation "wave"
framerate 24
loop
frame
pq 0 0 0 0 0 0 1
pq 0 1 0 0 0 0.5 0.8660254 1 2 1
frame
pm 0 0 0  0 -2 0  2 0 0  0 0 2
pa 0 1 0  0.3 0.5 0.7
comment
made by hand\r
second line
"""


def test_fixture_with_every_rare_feature_round_trips(tmp_path: Path) -> None:
    """fa with a quad, pm and pa poses, custom v0/v3 arrays with names, colours, comment, CRLF line ends."""
    path = write(tmp_path, "hand.iqe", FIXTURE, newline="\r\n")
    original = iqe.load_iqe(path)
    assert import_iqe(path, import_colors="LINEAR") == {"FINISHED"}
    body = bpy.data.objects["body"]
    assert [slot.material.name for slot in body.material_slots] == ["skin", "cloth"]
    mesh = body.data
    assert len(mesh.polygons) == 2 and [p.loop_total for p in mesh.polygons] == [4, 3]
    assert {"wind", "mask"} <= set(mesh.attributes.keys())
    assert mesh.attributes["wind"].data_type == "FLOAT2" and mesh.attributes["mask"].data_type == "FLOAT"
    assert "wind" in mesh.uv_layers  # 2 floats: a second UV map, V flipped back like vt's
    wind = np.empty(2 * len(mesh.loops), np.float32)
    mesh.uv_layers["wind"].uv.foreach_get("vector", wind)
    assert wind.reshape(-1, 2)[0].tolist() == [0.5, 0.75]  # v0 0.5 0.25 of vertex 0, the quad's first corner
    assert mesh.color_attributes.active_color.name == "Color"
    text = bpy.data.texts["hand.iqe comment"]
    assert text.as_string() == original.comment_section
    out = tmp_path / "again.iqe"
    assert export_iqe(out, export_colors="LINEAR", triangulate=False) == {"FINISHED"}
    again = iqe.load_iqe(out)
    assert_same_document(again, original)
    assert again.comment_section == original.comment_section
    assert [(v.kind, v.component, v.size, v.name) for v in again.vertex_arrays] == [
        ("custom0", "float", 2, "wind"),
        ("custom3", "ubyte", 1, "mask"),
    ]


RIGGED_TRIANGLE = """# Inter-Quake Export
joint "root" -1
pq 0 0 0 0 0 0 1
joint "tip" 0
pq 0 1 0 0 0 0 1
mesh "blade"
material "steel"
vp 0 0 0
vt 0 0
vb 0 1
vp 1 0 0
vt 1 0
vb 1 1
vp 0 1 0
vt 0 1
vb 0 0.5 1 0.5
fm 0 1 2
"""


def test_cr_only_line_ends_import_the_same_scene_as_lf(tmp_path: Path) -> None:
    dumps = []
    for folder, newline in (("lf", "\n"), ("old_mac", "\r")):
        (tmp_path / folder).mkdir()
        bpy.ops.wm.read_homefile(use_empty=True)
        assert import_iqe(write(tmp_path / folder, "rig.iqe", RIGGED_TRIANGLE, newline)) == {"FINISHED"}
        assert sorted(o.type for o in bpy.context.scene.objects) == ["ARMATURE", "MESH"]
        dumps.append(dump_scene())
    assert dumps[1] == dumps[0]


def test_srgb_colours_round_trip_exactly(tmp_path: Path) -> None:
    path = write(tmp_path, "hand.iqe", FIXTURE)
    original = iqe.load_iqe(path)
    import_iqe(path)
    out = tmp_path / "again.iqe"
    export_iqe(out, triangulate=False)
    assert_same_document(iqe.load_iqe(out), original)


def test_one_object_per_mesh_block_on_request(tmp_path: Path) -> None:
    import_iqe(write(tmp_path, "hand.iqe", FIXTURE), merge_by_name=False)
    assert sorted(o.name for o in bpy.data.objects if o.type == "MESH") == ["body", "body.001"]


SMOOTHING = """# Inter-Quake Export
mesh "roof"
vp 0 0 0
vp 1 0 0
vp 1 1 0
vp 0 1 0
vp 0.5 0.5 0.5
vp 0.5 0.5 0.5
smoothangle 30
fm 0 4 1
fm 1 4 2
smoothgroup 2
fm 2 5 3
fm 3 5 0
"""


def test_smoothing_commands_generate_normals_without_vn(tmp_path: Path) -> None:
    import_iqe(write(tmp_path, "roof.iqe", SMOOTHING))
    mesh = bpy.data.objects["roof"].data
    normals = np.empty(len(mesh.loops) * 3, np.float32)
    mesh.corner_normals.foreach_get("vector", normals)
    normals = normals.reshape(-1, 3)
    faces = np.array([p.normal[:] for p in mesh.polygons])
    # 30 degrees: the pyramid's faces (90 degrees apart) are not smoothed together: flat normals.
    np.testing.assert_allclose(normals, np.repeat(faces, 3, axis=0), atol=2e-3)
    assert (faces[:, 2] > 0).all()  # clockwise files become counter-clockwise faces pointing up


def test_smoothing_within_the_angle_averages_normals(tmp_path: Path) -> None:
    """Smoothing joins corners by position across mesh blocks: the roof's second half, with its own copy of the
    apex, is a mesh of its own, and still every apex corner gets the averaged (upward) normal."""
    text = SMOOTHING.replace("smoothangle 30", "smoothangle 180").replace("smoothgroup 2\n", "")
    text = text.replace("vp 0.5 0.5 0.5\nvp 0.5 0.5 0.5\n", "vp 0.5 0.5 0.5\n")
    second_mesh = 'mesh "roof2"\nvp 1 1 0\nvp 0 1 0\nvp 0 0 0\nvp 0.5 0.5 0.5\nfm 0 3 1\nfm 1 3 2\n'
    assert "fm 2 5 3\nfm 3 5 0\n" in text
    text = text.replace("fm 2 5 3\nfm 3 5 0\n", second_mesh)
    assert [(m.name, m.vertex_count) for m in iqe.read_iqe(text.encode()).meshes] == [("roof", 5), ("roof2", 4)]
    import_iqe(write(tmp_path, "roof.iqe", text))
    for name in ("roof", "roof2"):
        mesh = bpy.data.objects[name].data
        normals = np.empty(len(mesh.loops) * 3, np.float32)
        mesh.corner_normals.foreach_get("vector", normals)
        apex = normals.reshape(-1, 3)[[2, 5]]  # the apex corner of each triangle (Blender order a, c, b)
        np.testing.assert_allclose(apex, np.tile([0.0, 0.0, 1.0], (2, 1)), atol=2e-3)


# ----------------------------------------------------------------------------------------- failures, safety


def test_failed_import_leaves_blender_data_exactly_as_before(tmp_path: Path) -> None:
    good = write(tmp_path, "good.iqe", FIXTURE)
    bad = write(tmp_path, "bad.iqe", "# Inter-Quake Export\nvp 0 0 0\nvp 1 0 0\nvp 0 1 0\nfm 0 1 7\n")
    cube("Existing")
    before = data_state()
    with pytest.raises(RuntimeError, match=r"bad\.iqe, line 5, column \d+: 'fm' vertex index 7"):
        import_iqe(good, bad)
    assert data_state() == before


def test_failure_while_building_rolls_back(tmp_path: Path, extension, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    paths = [write(tmp_path, f"{name}.iqe", FIXTURE) for name in ("a", "b")]
    importer = extension.importers.iqe
    original = importer.build_document
    calls = []

    def failing_second(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 2:
            raise extension.formats.errors.FormatError("simulated failure", path="b.iqe")
        return original(*args, **kwargs)

    monkeypatch.setattr(importer, "build_document", failing_second)
    before = data_state()
    with pytest.raises(RuntimeError, match="simulated failure"):
        import_iqe(*paths)
    assert data_state() == before


def test_failed_export_keeps_the_existing_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "model.iqe"
    target.write_bytes(b"precious")
    cube("Box")["iqe_name"] = "n" * 600  # the file's own name, written back: too long for an IQE line
    with pytest.raises(RuntimeError, match="too long for an IQE line"):
        export_iqe(target)
    assert target.read_bytes() == b"precious"
    assert os.listdir(tmp_path) == ["model.iqe"]


def test_export_of_nothing_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="nothing to export"):
        export_iqe(tmp_path / "x.iqe", export_selected_objects=True)
    assert not (tmp_path / "x.iqe").exists()


# ------------------------------------------------------------------------------------------------- export


def test_static_export_splits_materials_and_keeps_lines_short(tmp_path: Path) -> None:
    box = cube("Box", location=(10, 0, 0))
    for name in ("red", "blue"):
        box.data.materials.append(bpy.data.materials.new(name))
    box.data.polygons[0].material_index = 1
    grid = grid_object("Grid", 4)
    select_only(box, grid)
    out = tmp_path / "static.iqe"
    assert export_iqe(out, export_selected_objects=True, triangulate=False) == {"FINISHED"}
    document = iqe.load_iqe(out)
    assert [(m.name, m.material) for m in document.meshes] == [("Box", "red"), ("Box", "blue"), ("Grid", "")]
    assert document.meshes[1].face_count == 1 and document.meshes[0].face_count == 5
    assert document.meshes[0].positions[:, 0].min() == pytest.approx(9.0)
    assert not document.joints and document.meshes[0].blend_indices is None


def test_weights_are_sorted_limited_and_normalised(tmp_path: Path) -> None:
    bpy.ops.object.armature_add()
    armature = bpy.context.active_object
    bpy.ops.object.mode_set(mode="EDIT")
    for index in range(5):
        bone = armature.data.edit_bones.new(f"b{index}")
        bone.head, bone.tail = (index, 0, 0), (index, 1, 0)
    bpy.ops.object.mode_set(mode="OBJECT")
    box = cube("Box")
    box.modifiers.new("Armature", "ARMATURE").object = armature
    for index, weight in enumerate((0.1, 0.5, 0.2, 0.0, 0.4)):
        box.vertex_groups.new(name=f"b{index}").add(list(range(8)), weight, "REPLACE")
    box.vertex_groups.new(name="not a bone").add(list(range(8)), 1.0, "REPLACE")
    out = tmp_path / "skinned.iqe"
    assert export_iqe(out) == {"FINISHED"}
    document = iqe.load_iqe(out)
    names = [j.name for j in document.joints]
    mesh = document.meshes[0]
    assert mesh.blend_weights is not None and mesh.blend_indices is not None
    np.testing.assert_allclose(mesh.blend_weights[0], np.array([0.5, 0.4, 0.2, 0.1]) / 1.2, atol=1e-6)
    assert [names[i] for i in mesh.blend_indices[0]] == ["b1", "b4", "b2", "b0"]


def test_collection_exporter_exports_only_its_collection(tmp_path: Path) -> None:
    inside = cube("Inside")
    cube("Outside", location=(5, 0, 0))
    collection = active_collection_holding("Export", inside)
    assert bpy.ops.collection.exporter_add(name="IOGF_FH_iqe") == {"FINISHED"}
    out = tmp_path / "collection.iqe"
    exporter = collection.exporters[0]
    exporter.export_properties.filepath = str(out)
    exporter.export_properties.global_scale = 10.0
    assert bpy.ops.collection.exporter_export(index=0) == {"FINISHED"}
    document = iqe.load_iqe(out)
    assert [m.name for m in document.meshes] == ["Inside"]
    assert np.abs(document.meshes[0].positions).max() == pytest.approx(10.0)


def test_active_action_only_and_scene_sampling(tmp_path: Path) -> None:
    path = write(tmp_path, "hand.iqe", FIXTURE)
    import_iqe(path)
    armature = bpy.data.objects["hand"]
    original = iqe.load_iqe(path)
    out = tmp_path / "active.iqe"
    export_iqe(out, export_animations="ACTIVE", triangulate=False)
    assert [a.name for a in iqe.load_iqe(out).animations] == ["wave"]
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 2
    export_iqe(out, export_animations="NLA", triangulate=False)
    sampled = iqe.load_iqe(out).animations[0]
    assert sampled.name == scene.name
    assert_poses_close(sampled.frames, original.animations[0].frames)
    assert armature.data.pose_position == "POSE"


def test_active_action_export_without_an_active_action_says_so(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    import_iqe(write(tmp_path, "hand.iqe", FIXTURE))
    bpy.data.objects["hand"].animation_data.action = None
    out = tmp_path / "active.iqe"
    assert export_iqe(out, export_animations="ACTIVE") == {"FINISHED"}
    assert not iqe.load_iqe(out).animations
    assert "has no active action: no animation written" in capsys.readouterr().out


def test_bone_axis_option_keeps_the_skeleton_on_export(tmp_path: Path) -> None:
    path = write(tmp_path, "hand.iqe", FIXTURE)
    original = iqe.load_iqe(path)
    import_iqe(path)
    joint_x_axis = np.array(bpy.data.objects["hand"].data.bones["child"].matrix_local)[:3, 0]
    bpy.ops.wm.read_homefile(use_empty=True)
    import_iqe(path, bone_axis="X")
    child = bpy.data.objects["hand"].data.bones["child"]
    np.testing.assert_allclose(
        np.array(child.matrix_local)[:3, 1], joint_x_axis, atol=1e-6
    )  # bones point along the joint's X
    assert bpy.data.objects["hand"].data["iqe_bone_axis"] == "X"
    out = tmp_path / "again.iqe"
    export_iqe(out, triangulate=False)
    assert_same_document(iqe.load_iqe(out), original)


def test_scale_option_and_a_drop_through_invoke(tmp_path: Path) -> None:
    path = write(tmp_path, "hand.iqe", FIXTURE)
    result = bpy.ops.import_scene.iqe(
        "INVOKE_DEFAULT", filepath=str(path), directory=str(tmp_path), files=[{"name": path.name}], global_scale=2.0
    )
    assert result == {"FINISHED"}
    assert bpy.data.objects["hand"].matrix_world.to_scale()[0] == pytest.approx(2.0)


def test_many_files_in_one_import(tmp_path: Path) -> None:
    paths = [write(tmp_path, "one.iqe", FIXTURE), write(tmp_path, "two.iqe", SMOOTHING)]
    assert import_iqe(*paths) == {"FINISHED"}
    assert {"one", "body", "roof"} <= set(bpy.data.objects.keys())


def test_animation_made_in_blender_exports_at_its_frame_range_and_scene_rate(tmp_path: Path) -> None:
    bpy.ops.object.armature_add()
    armature = bpy.context.active_object
    bone = armature.pose.bones[0]
    bone.rotation_mode = "XYZ"
    for frame, angle in ((3, 0.0), (7, 1.0)):
        bone.rotation_euler = (0.0, 0.0, angle)
        bone.location = (0.0, angle, 0.0)
        bone.keyframe_insert("rotation_euler", frame=frame)
        bone.keyframe_insert("location", frame=frame)
    bpy.context.scene.render.fps, bpy.context.scene.render.fps_base = 30, 1.001
    out = tmp_path / "anim.iqe"
    assert export_iqe(out) == {"FINISHED"}
    animation = iqe.load_iqe(out).animations[0]
    assert animation.frames.shape == (5, 1, 10)
    assert animation.framerate == pytest.approx(30 / 1.001)
    bpy.context.scene.frame_set(5)
    matrix = np.array(bone.matrix)
    rotation = animation.frames[2, 0, 3:7]
    angle = 2 * np.arccos(min(1.0, abs(float(rotation[3]))))
    assert angle == pytest.approx(np.arccos(np.clip((np.trace(matrix[:3, :3]) - 1) / 2, -1, 1)), abs=1e-5)
    np.testing.assert_allclose(animation.frames[2, 0, 0:3], matrix[:3, 3], atol=1e-5)


def test_too_many_joints_for_a_skinned_mesh_is_refused(tmp_path: Path) -> None:
    bpy.ops.object.armature_add()
    armature = bpy.context.active_object
    bpy.ops.object.mode_set(mode="EDIT")
    for index in range(257):
        bone = armature.data.edit_bones.new(f"b{index}")
        bone.head, bone.tail = (0, 0, index), (0, 1, index)
    bpy.ops.object.mode_set(mode="OBJECT")
    box = cube("Box")
    box.modifiers.new("Armature", "ARMATURE").object = armature
    box.vertex_groups.new(name="b0").add([0], 1.0, "REPLACE")
    with pytest.raises(RuntimeError, match="at most 256 joints"):
        export_iqe(tmp_path / "many.iqe")
    assert not (tmp_path / "many.iqe").exists()


def test_long_polygons_are_split_under_512_bytes(tmp_path: Path) -> None:
    from tests.blender.scene_helpers import mesh_object

    corners = 300
    mesh_object("Disc", [(np.cos(a), np.sin(a), 0.0) for a in np.linspace(0, 2 * np.pi, corners + 1)[:-1]],
                [tuple(range(corners))])  # fmt: skip
    out = tmp_path / "disc.iqe"
    assert export_iqe(out, triangulate=False) == {"FINISHED"}
    assert max(len(line) for line in out.read_bytes().splitlines()) < 512
    assert iqe.load_iqe(out).meshes[0].face_sizes.sum() > corners


def test_cli_converts_iqe(tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    source = write(tmp_path, "hand.iqe", FIXTURE)
    out = tmp_path / "out.iqe"
    code = extension.cli.main(["convert", str(source), "--to", "iqe", "-o", str(out), "--set", "triangulate=False"])
    assert code == 0
    assert_same_document(iqe.load_iqe(out), iqe.load_iqe(source))


def test_float_weights_become_exact_vertex_groups(tmp_path: Path) -> None:
    """Many distinct weights per joint (the attribute-conversion path) and few (one `add` per weight) give the
    groups that one `add(..., "ADD")` per pair would: duplicates summed, clamped to 1, zeros left out."""
    random = np.random.default_rng(5)
    count = 900
    lines = ["# Inter-Quake Export", 'joint "many"', "joint few 0", "joint unused 0", "pq 0 0 0 0 0 0 -1"]
    expected = np.zeros((count, 3), np.float32)
    for vertex in range(count):
        many = np.float32(random.random())
        few = np.float32(0.25 if vertex % 2 else 0.5)
        pairs = [(0, many), (1, few)]
        if vertex % 5 == 0:
            pairs.append((0, np.float32(0.75)))  # the same joint again
        if vertex % 7 == 0:
            pairs.append((1, np.float32(0.0)))
        lines.append(f"vp {vertex} 0 0")
        lines.append("vb " + " ".join(f"{joint} {float(weight)!r}" for joint, weight in pairs))
        for joint, weight in sorted(pairs, key=lambda pair: (pair[0], pair[1])):
            if weight > 0.0:
                expected[vertex, joint] = min(np.float32(expected[vertex, joint] + weight), np.float32(1.0))
    lines.extend(f"fa {index} {index + 1} {index + 2}" for index in range(0, count - 2, 3))
    path = write(tmp_path, "weights.iqe", "\n".join(lines) + "\n")
    assert import_iqe(path) == {"FINISHED"}
    obj = next(o for o in bpy.data.objects if o.type == "MESH")
    assert [group.name for group in obj.vertex_groups] == ["many", "few", "unused"]
    assert obj.vertex_groups.active_index == 2
    assert not [a.name for a in obj.data.attributes if a.name.startswith(".iqe")]
    found = np.zeros((count, 3), np.float32)
    for vertex in obj.data.vertices:
        assert [element.group for element in vertex.groups] == sorted(element.group for element in vertex.groups)
        for element in vertex.groups:
            found[vertex.index, element.group] = element.weight
    np.testing.assert_array_equal(found, expected)
    assert obj.parent is not None and obj.name in bpy.context.scene.objects
    assert len(bpy.data.scenes) == 1  # the scratch scene of the conversion is gone


# ------------------------------------------------------------------------------------------ review fixes

SINGULAR_JOINT = {
    "pq": "pq 0 1 0  0 0 0 1  0 0 0",
    "pm": "pm 0 1 0  1 0 0  1 0 0  0 0 1",
}


@pytest.mark.parametrize("form", sorted(SINGULAR_JOINT))
def test_singular_base_pose_imports_with_a_warning(form: str, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    text = f"""# Inter-Quake Export
joint "root" -1
pq 0 0 0  0 0 0 1
joint "flat" 0
{SINGULAR_JOINT[form]}
joint "tip" 1
pq 0 1 0  0 0 0 1
mesh "m"
vp 0 0 0
vb 1 1
vp 1 0 0
vb 0 1
vp 0 1 0
vb 2 1
fm 0 1 2
animation "a"
frame
pq 0 0 0  0 0 0 1
pq 0 1 0  0 0 0 1
pq 0 1 0  0 0 0 1
frame
pq 0 0 0  0 0 0 1
pq 0 1 0  0 0 0 1  0 0 0
pq 0 1 0  0 0 0 1
"""
    path = write(tmp_path, "singular.iqe", text)
    assert import_iqe(path) == {"FINISHED"}
    assert "'flat'" in capsys.readouterr().out
    assert len(bpy.data.actions) == 1
    out = tmp_path / "again.iqe"
    assert export_iqe(out) == {"FINISHED"}
    again = iqe.load_iqe(out)
    assert [j.name for j in again.joints] == ["root", "flat", "tip"]
    assert np.isfinite(again.animations[0].frames).all()


RESERVED_CUSTOMS = """# Inter-Quake Export
vertexarray custom0 float 1 "material_index"
vertexarray custom1 float 3 "position"
vertexarray custom2 float 2 "UVMap"
vertexarray custom3 float 1 "sharp_face"
vertexarray custom4 float 1 ".corner_vert"
vertexarray custom5 float 1 "plain"
mesh "m"
vp 0 0 0
vt 0 0
v0 1
v1 1 2 3
v2 0.5 0.25
v3 1
v4 7
v5 9
vp 1 0 0
vt 1 0
v0 2
v1 4 5 6
v2 0.75 0.5
v3 0
v4 8
v5 10
vp 0 1 0
vt 0 1
v0 3
v1 7 8 9
v2 0.125 1
v3 1
v4 9
v5 11
fm 0 1 2
"""


def test_reserved_custom_array_names_get_a_prefix_and_export_back(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, "reserved.iqe", RESERVED_CUSTOMS)
    original = iqe.load_iqe(path)
    assert import_iqe(path) == {"FINISHED"}
    output = capsys.readouterr().out
    mesh = bpy.data.objects["m"].data
    names = set(mesh.attributes.keys())
    for declared in ("material_index", "position", "UVMap", "sharp_face", ".corner_vert"):
        assert f"iqe_{declared}" in names
        assert repr(declared) in output
    assert "plain" in names and "iqe_plain" not in names
    assert not [name for name in names if name.endswith(".001")]
    out = tmp_path / "again.iqe"
    assert export_iqe(out) == {"FINISHED"}
    again = iqe.load_iqe(out)
    assert [(v.kind, v.size, v.name) for v in again.vertex_arrays] == [
        (v.kind, v.size, v.name) for v in original.vertex_arrays
    ]
    assert_same_document(again, original)


def test_objects_without_faces_are_left_out_with_a_warning(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    cube("Box")
    mesh = bpy.data.meshes.new("Edges")
    mesh.from_pydata([(0, 0, 0), (1, 0, 0), (1, 1, 0)], [(0, 1), (1, 2)], [])
    bpy.context.collection.objects.link(bpy.data.objects.new("Edges", mesh))
    bpy.ops.curve.primitive_bezier_curve_add()
    bpy.context.active_object.name = "Curve"
    out = tmp_path / "mixed.iqe"
    assert export_iqe(out) == {"FINISHED"}
    assert [m.name for m in iqe.load_iqe(out).meshes] == ["Box"]
    output = capsys.readouterr().out
    assert "Edges: no faces" in output and "Curve: no faces" in output


def file_face_normals(mesh: iqe.IqeMesh) -> tuple[np.ndarray, np.ndarray]:
    """(face normals by the file's winding taken as counter-clockwise, face centres) of a triangle block."""
    corners = mesh.positions[mesh.face_corners.reshape(-1, 3)].astype(np.float64)
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    return normals, corners.mean(axis=1)


@pytest.mark.parametrize("scale", [(1, 1, 1), (-1, 1, 1), (-1, -1, -1)])
def test_mirrored_objects_export_with_outward_faces(scale: tuple[int, int, int], tmp_path: Path) -> None:
    box = cube("Box")
    box.scale = scale
    out = tmp_path / "box.iqe"
    assert export_iqe(out) == {"FINISHED"}
    block = iqe.load_iqe(out).meshes[0]
    normals, centres = file_face_normals(block)
    assert ((normals * centres).sum(axis=1) < 0).all()  # clockwise front faces: reversed winding points inward
    written = block.normals[block.face_corners.reshape(-1, 3)[:, 0]]  # type: ignore[index]
    assert ((written * centres).sum(axis=1) > 0).all()


def test_winding_and_v_flip_options(tmp_path: Path) -> None:
    box = cube("Box")
    uvs = np.empty(len(box.data.loops) * 2, np.float32)
    box.data.uv_layers.active.uv.foreach_get("vector", uvs)
    out = tmp_path / "box.iqe"
    assert export_iqe(out, reverse_winding=False, flip_v=False) == {"FINISHED"}
    block = iqe.load_iqe(out).meshes[0]
    normals, centres = file_face_normals(block)
    assert ((normals * centres).sum(axis=1) > 0).all()  # Blender's counter-clockwise order kept
    assert block.texcoords is not None
    written = {tuple(uv) for uv in block.texcoords.round(5).tolist()}
    assert written == {tuple(uv) for uv in uvs.reshape(-1, 2).round(5).tolist()}
    assert export_iqe(out) == {"FINISHED"}
    flipped = iqe.load_iqe(out).meshes[0].texcoords
    assert flipped is not None
    assert {(u, round(1.0 - v, 5)) for u, v in flipped.round(5).tolist()} == written


def test_quotes_in_names_are_replaced_with_a_warning(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    box = cube('Bad "quoted" name')
    box.data.materials.append(bpy.data.materials.new('mat "one"'))
    bpy.ops.object.armature_add()
    armature = bpy.context.active_object
    armature.data.bones[0].name = 'bone "a"'
    box.modifiers.new("Armature", "ARMATURE").object = armature
    box.vertex_groups.new(name='bone "a"').add(list(range(8)), 1.0, "REPLACE")
    out = tmp_path / "quoted.iqe"
    assert export_iqe(out) == {"FINISHED"}
    document = iqe.load_iqe(out)
    assert [(m.name, m.material) for m in document.meshes] == [("Bad 'quoted' name", "mat 'one'")]
    assert [j.name for j in document.joints] == ["bone 'a'"]
    assert "quoted" in capsys.readouterr().out


def test_unkeyed_channels_export_at_the_rest_pose(tmp_path: Path) -> None:
    bpy.ops.object.armature_add()
    armature = bpy.context.active_object
    bpy.ops.object.mode_set(mode="EDIT")
    child = armature.data.edit_bones.new("child")
    child.head, child.tail = (0, 1, 0), (0, 2, 0)
    child.parent = armature.data.edit_bones[0]
    bpy.ops.object.mode_set(mode="OBJECT")
    root = armature.pose.bones[0]
    for frame, angle in ((1, 0.0), (3, 0.5)):
        root.rotation_quaternion = (np.cos(angle / 2), 0.0, 0.0, np.sin(angle / 2))
        root.keyframe_insert("rotation_quaternion", frame=frame)
    out = tmp_path / "rest.iqe"
    assert export_iqe(out) == {"FINISHED"}
    expected = iqe.load_iqe(out).animations[0].frames
    posed = armature.pose.bones["child"]
    posed.location = (0.3, 0.2, 0.1)
    posed.rotation_quaternion = (0.8, 0.6, 0.0, 0.0)
    posed.scale = (2.0, 2.0, 2.0)
    assert export_iqe(out) == {"FINISHED"}
    frames = iqe.load_iqe(out).animations[0].frames
    assert_poses_close(frames, expected)
    document = iqe.load_iqe(out)
    assert_poses_close(frames[:, 1], np.broadcast_to(document.base_pose_array()[1], frames[:, 1].shape))


def test_constraints_are_baked_into_each_action(tmp_path: Path) -> None:
    armature = chain_rig("Root", "Arm")
    turn_keys(armature, "Root", {1: 0.0, 5: 0.8})
    limit = armature.pose.bones["Root"].constraints.new("LIMIT_ROTATION")
    limit.use_limit_x, limit.min_x, limit.max_x, limit.owner_space = True, -0.3, 0.3, "LOCAL"
    turned = []
    for bake in (True, False):
        out = tmp_path / f"rig_{bake}.iqe"
        assert export_iqe(out, export_animations="ACTIVE", bake_pose=bake) == {"FINISHED"}
        frames = iqe.load_iqe(out).animations[0].frames
        assert len(frames) == 5
        first, last = frames[0, 0, 3:7].astype(np.float64), frames[-1, 0, 3:7].astype(np.float64)
        turned.append(2 * float(np.arccos(min(1.0, abs(float(first @ last))))))  # angle between the root's turns
    assert turned == pytest.approx([0.3, 0.8], abs=1e-4)  # the limit holds only when baked


QUAD = """# Inter-Quake Export
mesh "plate"
vp 0 0 0
vp 0 1 0
vp 1 1 0
vp 1 0 0
{normals}
fm 0 1 2 3
"""


@pytest.mark.parametrize(
    ("normal", "custom"),
    [("0 0 1", False), ("0 0.0871557 0.9961947", True)],  # Blender's own normal; 5 degrees off it
)
def test_custom_normals_only_where_blender_would_point_elsewhere(tmp_path: Path, normal: str, custom: bool) -> None:
    # Custom normals equal to Blender's own would change nothing visible and cost most of a large import;
    # the file's exact vectors are written back either way.
    path = write(tmp_path, "plate.iqe", QUAD.format(normals="\n".join([f"vn {normal}"] * 4)))
    assert import_iqe(path) == {"FINISHED"}
    mesh = bpy.data.objects["plate"].data
    assert mesh.has_custom_normals == custom
    corner_normals = np.empty(len(mesh.loops) * 3, np.float32)
    mesh.corner_normals.foreach_get("vector", corner_normals)
    expected = np.array([float(v) for v in normal.split()])
    assert np.degrees(np.arccos(np.clip(corner_normals.reshape(-1, 3) @ expected, -1, 1))).max() < 1.0
    out = tmp_path / "again.iqe"
    assert export_iqe(out) == {"FINISHED"}
    written = [[float(v) for v in line.split()[1:]] for line in out.read_text().splitlines() if line.startswith("vn ")]
    assert np.array_equal(np.array(written, np.float32), np.tile(expected.astype(np.float32), (4, 1)))


@pytest.mark.parametrize("extension_name", ["iqe", "iqm"])
def test_a_second_uv_map_comes_back_as_a_uv_map_with_its_values(tmp_path: Path, extension_name: str) -> None:
    obj = cube("Box")
    second = obj.data.uv_layers.new(name="Lightmap")
    values = np.random.default_rng(3).random(2 * len(obj.data.loops)).astype(np.float32)
    second.uv.foreach_set("vector", values)
    out = tmp_path / f"box.{extension_name}"
    exporter, importer = getattr(bpy.ops.export_scene, extension_name), getattr(bpy.ops.import_scene, extension_name)
    assert exporter(filepath=str(out)) == {"FINISHED"}
    if extension_name == "iqe":
        assert 'vertexarray custom0 float 2 "Lightmap"' in out.read_text()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert importer(filepath=str(out)) == {"FINISHED"}
    mesh = bpy.data.objects["Box"].data
    assert [uv.name for uv in mesh.uv_layers][1:] == ["Lightmap"]
    back = np.empty(2 * len(mesh.loops), np.float32)
    mesh.uv_layers["Lightmap"].uv.foreach_get("vector", back)
    corners = np.empty(len(mesh.loops), np.intc)
    mesh.attributes[".corner_vert"].data.foreach_get("value", corners)
    positions = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.vertices.foreach_get("co", positions)

    def pairs(uvs: np.ndarray, points: np.ndarray) -> set[tuple[float, ...]]:
        return {tuple(np.round(row, 5).tolist()) for row in np.hstack([points, uvs.reshape(-1, 2)])}

    original = cube("Again")  # the same (position, UV) pairs, whatever order the corners come back in
    original_corners = np.empty(len(original.data.loops), np.intc)
    original.data.attributes[".corner_vert"].data.foreach_get("value", original_corners)
    original_points = np.array([v.co for v in original.data.vertices], np.float32)[original_corners]
    assert pairs(back, positions.reshape(-1, 3)[corners]) == pairs(values, original_points)
    again = tmp_path / f"again.{extension_name}"
    bpy.data.objects.remove(original)
    assert exporter(filepath=str(again)) == {"FINISHED"}
    assert again.read_bytes() == out.read_bytes()  # and out again as it was


def test_actions_of_one_file_name_get_unique_names_on_export(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Two actions of the rig that both came as "wave" from the file (one a copy of the other)."""
    path = write(tmp_path, "hand.iqe", FIXTURE)
    assert import_iqe(path) == {"FINISHED"}
    copy = bpy.data.actions["wave"].copy()
    copy.use_fake_user, copy["iqe_name"] = True, "wave"  # (as a second import of the file leaves it)
    assert sorted(action.name for action in bpy.data.actions) == ["wave", "wave.001"]
    out = tmp_path / "again.iqe"
    assert export_iqe(out, export_selected_objects=True) == {"FINISHED"}
    assert [animation.name for animation in iqe.load_iqe(out).animations] == ["wave", "wave.001"]
    assert "its file name 'wave' is taken: written as 'wave.001'" in capsys.readouterr().out


SEAM = """# Inter-Quake Export
mesh "sheet"
vp 0 0 0
vt 0 0
vp 1 0 0
vt 1 0
vp 1 1 0
vt 1 1
vp 1 0 0
vt 0.5 0
vp 1 1 0
vt 0.5 1
vp 2 1 0
vt 1 1
vp 2 1 0
vt 0 0
fm 0 1 2
fm 3 5 4
fm 5 6 4
"""


@pytest.mark.parametrize("merge", [True, False])
def test_vertices_split_at_a_seam_are_merged_and_written_back_as_in_the_file(tmp_path: Path, merge: bool) -> None:
    """Two triangles meeting at a UV seam (file vertices 1-3 and 2-4 share positions) and a flat triangle whose
    corners 5 and 6 share one: merged, the sheet is one piece; the flat triangle keeps its own vertices."""
    path = write(tmp_path, "seam.iqe", SEAM)
    assert import_iqe(path, merge_vertices=merge) == {"FINISHED"}
    mesh = bpy.data.objects["sheet"].data
    assert len(mesh.vertices) == (5 if merge else 7) and len(mesh.polygons) == 3
    assert len(mesh.edges) == (7 if merge else 8)  # merged: the seam edge is one edge of both triangles
    uvs = np.empty(2 * len(mesh.loops), np.float32)
    mesh.uv_layers[0].uv.foreach_get("vector", uvs)
    assert uvs.reshape(-1, 2)[3].tolist() == [0.5, 1.0]  # (V flipped back) the UVs stay per corner
    out = tmp_path / "again.iqe"
    assert export_iqe(out) == {"FINISHED"}
    again, original = iqe.load_iqe(out), iqe.load_iqe(path)
    np.testing.assert_array_equal(again.meshes[0].positions, original.meshes[0].positions)
    np.testing.assert_array_equal(again.meshes[0].texcoords, original.meshes[0].texcoords)  # type: ignore[arg-type]
    np.testing.assert_array_equal(again.meshes[0].face_corners, original.meshes[0].face_corners)


def test_the_scene_plays_the_imported_animation_at_the_file_rate(tmp_path: Path, extension, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end, scene.render.fps, scene.render.fps_base = 10, 20, 25, 1.0
    scene.frame_current = 15
    path = write(tmp_path, "hand.iqe", FIXTURE.replace("framerate 24", "framerate 29.97"))
    assert import_iqe(path) == {"FINISHED"}
    assert (scene.frame_start, scene.frame_end, scene.frame_current) == (1, 2, 1)  # "wave": 2 frames, from its first
    assert scene.render.fps == 30 and scene.render.fps / scene.render.fps_base == pytest.approx(29.97)
    scene.frame_start, scene.frame_end, scene.render.fps, scene.render.fps_base = 10, 20, 25, 1.0
    scene.frame_current = 15

    def failing(*_arguments: object) -> None:  # after the armature and its action were made
        raise extension.formats.errors.FormatError("simulated failure")

    monkeypatch.setattr(extension.importers.iqe, "_skin", failing)
    with pytest.raises(RuntimeError, match="simulated failure"):
        import_iqe(path)
    assert (scene.frame_start, scene.frame_end, scene.render.fps, scene.render.fps_base) == (10, 20, 25, 1.0)
    assert scene.frame_current == 15


@pytest.mark.parametrize("rate", ["1e30", "1e-9"])
def test_a_frame_rate_blender_cannot_play_leaves_the_scene_rate_with_a_warning(
    tmp_path: Path, rate: str, capsys: pytest.CaptureFixture[str]
) -> None:
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 25, 1.0
    path = write(tmp_path, "hand.iqe", FIXTURE.replace("framerate 24", f"framerate {rate}"))
    assert import_iqe(path) == {"FINISHED"}
    assert (scene.render.fps, scene.render.fps_base) == (25, 1.0)
    assert f"runs at {float(rate):g} frames per second, beyond what Blender's scene can play" in capsys.readouterr().out
    assert bpy.data.actions["wave"]["iqe_framerate"] == pytest.approx(float(rate), rel=1e-6)  # written back as read


DOUBLE_SIDED = """# Inter-Quake Export
mesh "card"
vp 0 0 0
vn 0 0 {front}
vp 1 0 0
vn 0 0 {front}
vp 0 1 0
vn 0 0 {front}
vp 0 0 0
vn 0 0 -1
vp 1 0 0
vn 0 0 -1
vp 0 1 0
vn 0 0 -1
fm 0 1 2
fm 3 5 4
"""


@pytest.mark.parametrize("front", ["1", "-1"], ids=["opposite normals", "one normal"])
def test_a_double_sided_card_keeps_both_faces_and_their_normals(tmp_path: Path, front: str) -> None:
    """The back face would use the front face's vertices once merged: it keeps its own (a Blender mesh cannot hold
    two faces on one vertex set)."""
    path = write(tmp_path, "card.iqe", DOUBLE_SIDED.format(front=front))
    assert import_iqe(path) == {"FINISHED"}
    mesh = bpy.data.objects["card"].data
    assert len(mesh.vertices) == 6 and len(mesh.polygons) == 2
    assert not mesh.validate()  # nothing to fix
    out = tmp_path / "again.iqe"
    assert export_iqe(out) == {"FINISHED"}
    again, original = iqe.load_iqe(out).meshes[0], iqe.load_iqe(path).meshes[0]
    np.testing.assert_array_equal(again.normals, original.normals)  # type: ignore[arg-type]
    np.testing.assert_array_equal(again.face_corners, original.face_corners)


def custom_arrays_file(count: int, component: str = "float", with_vt: bool = True) -> str:
    lines = ["# Inter-Quake Export"]
    lines += [f'vertexarray custom{slot} {component} 2 "map{slot}"' for slot in range(count)]
    lines.append('mesh "sheet"')
    for x, y in ((0, 0), (1, 0), (0, 1)):
        lines.append(f"vp {x} {y} 0")
        if with_vt:
            lines.append(f"vt {x} {y}")
        lines += [f"v{slot} 0.2 0.4" for slot in range(count)]
    lines.append("fm 0 2 1")
    return "\n".join(lines) + "\n"


def test_two_float_arrays_beyond_blenders_eight_uv_maps_stay_attributes(tmp_path: Path) -> None:
    assert import_iqe(write(tmp_path, "many.iqe", custom_arrays_file(9))) == {"FINISHED"}
    mesh = bpy.data.objects["sheet"].data
    assert len(mesh.uv_layers) == 8 and mesh.attributes["map7"].domain == "POINT"
    out = tmp_path / "again.iqe"
    assert export_iqe(out) == {"FINISHED"}
    for slot, values in iqe.load_iqe(out).meshes[0].custom.items():
        np.testing.assert_allclose(values, np.tile([0.2, 0.4], (3, 1)), atol=1e-6, err_msg=f"custom{slot}")


@pytest.mark.parametrize(("component", "with_vt"), [("float", False), ("ubyte", True)])
def test_custom_two_component_arrays_come_back_as_they_were(tmp_path: Path, component: str, with_vt: bool) -> None:
    """A lightmap without texture coordinates stays a custom array (not the vt); a ubyte pair is not a UV map and
    keeps its V."""
    path = write(tmp_path, "lightmap.iqe", custom_arrays_file(1, component, with_vt))
    assert import_iqe(path) == {"FINISHED"}
    out = tmp_path / "again.iqe"
    assert export_iqe(out) == {"FINISHED"}
    again = iqe.load_iqe(out)
    assert [(v.kind, v.component, v.size, v.name) for v in again.vertex_arrays] == [("custom0", component, 2, "map0")]
    assert (again.meshes[0].texcoords is not None) == with_vt
    expected = iqe.load_iqe(path).meshes[0].custom[0]
    np.testing.assert_allclose(again.meshes[0].custom[0], expected, atol=1 / 255)


HARD_EDGE = """# Inter-Quake Export
mesh "fold"
vp 0 0 0
vn 0 0 1
vp 1 0 0
vn 0 0 1
vp 1 1 0
vn 0 0 1
vp 0 1 0
vn 0 0 1
vp 1 0 0
vn 1 0 0
vp 1 0 -1
vn 1 0 0
vp 1 1 -1
vn 1 0 0
vp 1 1 0
vn 1 0 0
fm 0 3 2 1
fm 4 7 6 5
"""


def test_without_custom_normals_a_hard_edge_stays_hard(tmp_path: Path) -> None:
    """Merged, the fold's shared edge would be smoothed by Blender's own normals: the vertices stay apart."""
    assert import_iqe(write(tmp_path, "fold.iqe", HARD_EDGE), use_custom_normals=False) == {"FINISHED"}
    mesh = bpy.data.objects["fold"].data
    normals = np.empty(3 * len(mesh.loops), np.float32)
    mesh.corner_normals.foreach_get("vector", normals)
    axes = np.abs(normals.reshape(-1, 3)).max(axis=1)
    assert np.allclose(axes, 1.0, atol=1e-5), normals.reshape(-1, 3)  # every corner along an axis: no blend


SECOND_COLOUR = """# Inter-Quake Export
vertexarray custom0 ubyte 4 "dirt"
mesh "card"
vp 0 0 0
vp 1 0 0
vp 0 1 0
v0 0.5 0.25 1 1
v0 0.5 0.25 1 1
v0 0 0 0 0.5
fm 0 2 1
"""


@pytest.mark.parametrize("operator", ["iqe", "iqm"])
def test_a_second_colour_goes_out_as_four_bytes_and_comes_back_a_colour(tmp_path: Path, operator: str) -> None:
    """A further colour attribute is written as IQE exporters write second colour layers (`ubyte 4`, sRGB like vc)
    and read back into a colour attribute with its values; a file's ubyte-4 custom array comes in as a colour."""
    import_iqe(write(tmp_path, "card.iqe", SECOND_COLOUR))
    mesh = bpy.data.objects["card"].data
    dirt = mesh.color_attributes["dirt"]
    assert dirt.data_type == "FLOAT_COLOR" and len(mesh.color_attributes) == 1
    values = np.empty(len(dirt.data) * 4, np.float32)
    dirt.data.foreach_get("color", values)
    assert np.allclose(values.reshape(-1, 4)[0], [0.2140, 0.0508, 1.0, 1.0], atol=1e-3)  # sRGB 0.5, 0.25 as linear
    paint = mesh.color_attributes.new("paint", "FLOAT_COLOR", "POINT")  # the main colour: `vc`
    paint.data.foreach_set("color", np.full(len(paint.data) * 4, 0.2, np.float32))
    out = tmp_path / f"again.{operator}"
    assert getattr(bpy.ops.export_scene, operator)(filepath=str(out)) == {"FINISHED"}
    document = iqe.load_iqe(out) if operator == "iqe" else iqm.load_iqm(out)
    customs = [(a.component, a.size, a.name) for a in document.vertex_arrays if a.kind.startswith("custom")]
    assert customs == [("ubyte", 4, "dirt")]
    without = tmp_path / f"no_colours.{operator}"
    exporter = getattr(bpy.ops.export_scene, operator)
    assert exporter(filepath=str(without), export_colors="NONE") == {"FINISHED"}
    plain = iqe.load_iqe(without) if operator == "iqe" else iqm.load_iqm(without)
    assert plain.meshes[0].colors is None and not plain.meshes[0].custom  # no colours: not even as custom arrays
    assert document.meshes[0].colors is not None
    bpy.ops.wm.read_homefile(use_empty=True)
    assert getattr(bpy.ops.import_scene, operator)(filepath=str(out)) == {"FINISHED"}
    again = next(o for o in bpy.data.objects if o.type == "MESH").data
    assert sorted(attribute.name for attribute in again.color_attributes) == ["Color", "dirt"]
    back = np.empty(len(again.color_attributes["dirt"].data) * 4, np.float32)
    again.color_attributes["dirt"].data.foreach_get("color", back)
    assert np.allclose(np.sort(back.reshape(-1, 4), axis=0), np.sort(values.reshape(-1, 4), axis=0), atol=3e-3)


@pytest.mark.parametrize(("operator", "counted"), [("iqe", "6 polygons"), ("iqm", "12 triangles")])
def test_the_summary_counts_what_is_written_without_triangulation(
    tmp_path: Path, operator: str, counted: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cube("Box")
    exporter = getattr(bpy.ops.export_scene, operator)
    assert exporter(filepath=str(tmp_path / f"box.{operator}"), triangulate=False) == {"FINISHED"}
    assert f"1 object, {counted} in" in capsys.readouterr().out


def test_weights_beyond_the_influence_limit_are_said_to_be_cut(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    armature = chain_rig("a", "b", "c", "d", "e", "f")
    body = cube("Body")
    for index, bone in enumerate("abcdef"):
        group = body.vertex_groups.new(name=bone)
        group.add([0], 0.1 + index * 0.1, "REPLACE")  # vertex 0 on six bones; vertex 1 on two
        if bone in "ab":
            group.add([1], 0.5, "REPLACE")
    body.parent = armature
    body.modifiers.new("Armature", "ARMATURE").object = armature
    assert export_iqe(tmp_path / "body.iqe", max_influences=4) == {"FINISHED"}
    assert "Body: 1 vertex(es) have more than 4 bone weights" in capsys.readouterr().out



def test_channels_the_file_holds_still_are_written_still_across_animations(tmp_path: Path) -> None:
    """Joints an animation leaves alone come back through Blender's matrices with round-off in every frame; such
    channels are written with one value in every frame of every animation, so IQM stores them once (as the
    reference compiler does from the source) instead of in every frame."""
    path = sample_dir("iqe") / "unv_lgun_view.iqe"
    import_iqe(path)
    out = tmp_path / "again.iqe"
    assert export_iqe(out) == {"FINISHED"}
    source = np.concatenate([a.frames for a in iqe.load_iqe(path).animations])
    ours = np.concatenate([a.frames for a in iqe.load_iqe(out).animations])
    still = np.ptp(source, axis=0) == 0
    assert still.sum() > 100 and (np.ptp(ours, axis=0)[still] == 0).all()
    assert (np.ptp(ours, axis=0)[~still] > 0).sum() >= (~still).sum() - 2  # what moves still moves


def test_a_colour_and_plain_numbers_of_one_name_share_a_float_array(tmp_path: Path) -> None:
    """A further colour is written as bytes, but when another object has plain numbers under its name the shared
    custom array is float, so neither is clamped."""
    painted = cube("Painted")
    dirt = painted.data.color_attributes.new("dirt", "FLOAT_COLOR", "POINT")
    dirt.data.foreach_set("color", np.full(len(dirt.data) * 4, 0.5, np.float32))
    painted.data.color_attributes.new("paint", "FLOAT_COLOR", "POINT")
    painted.data.color_attributes.render_color_index = 1
    other = cube("Other", location=(3, 0, 0))
    numbers = other.data.attributes.new("dirt", "QUATERNION", "POINT")
    numbers.data.foreach_set("value", np.full(len(numbers.data) * 4, 7.5, np.float32))
    out = tmp_path / "mixed.iqm"
    assert bpy.ops.export_scene.iqm(filepath=str(out), export_attributes="ALL") == {"FINISHED"}
    document = iqm.load_iqm(out)
    assert [(a.component, a.name) for a in document.vertex_arrays if a.kind == "custom0"] == [("float", "dirt")]
    assert np.allclose({m.name: m.custom[0] for m in document.meshes}["Other"], 7.5)


def test_a_loop_is_a_cycle_that_ends_on_its_first_pose_and_exports_without_it(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, "hand.iqe", FIXTURE)  # "wave": 2 frames, loop
    assert import_iqe(path) == {"FINISHED"}
    assert "Imported 1 file: 2 objects, 2 polygons, 1 action in " in capsys.readouterr().out
    action = bpy.data.actions["wave"]
    assert action.use_cyclic and tuple(action.frame_range) == (1.0, 3.0)
    armature = next(obj for obj in bpy.data.objects if obj.type == "ARMATURE")
    poses = []
    for frame in (1, 3):
        bpy.context.scene.frame_set(frame)
        poses.append(np.array([np.array(bone.matrix) for bone in armature.pose.bones]))
    np.testing.assert_allclose(poses[1], poses[0], atol=1e-6)  # the cycle's end is its start
    assert (bpy.context.scene.frame_start, bpy.context.scene.frame_end) == (1, 2)  # each pose shown once
    out = tmp_path / "again.iqe"
    assert export_iqe(out, export_animations="ACTIVE") == {"FINISHED"}
    (again,) = iqe.load_iqe(out).animations
    original = iqe.load_iqe(path).animations[0]
    assert again.loop and again.frames.shape == original.frames.shape
    action.use_cyclic = False  # the artist's choice is the flag written, and the whole range then plays
    assert export_iqe(out, export_animations="ACTIVE") == {"FINISHED"}
    (again,) = iqe.load_iqe(out).animations
    assert not again.loop and len(again.frames) == 3


def _rig_not_inheriting_in_full(inheritance: str) -> bpy.types.Object:
    """Root turns and grows from frame 1 to 3, both move; Arm does not take Root's rotation, scale or space (or
    Root moves along the armature's axes)."""
    armature = chain_rig("Root", "Arm")
    bone = armature.data.bones["Arm"]
    if inheritance == "rotation":
        bone.use_inherit_rotation = False
    elif inheritance == "scale":
        bone.inherit_scale = "NONE"
    elif inheritance == "location":
        bone.use_local_location = False
    else:
        armature.data.bones["Root"].use_local_location = False
    root, arm = armature.pose.bones["Root"], armature.pose.bones["Arm"]
    root.rotation_mode = arm.rotation_mode = "XYZ"
    for frame, amount in ((1, 0.0), (3, 1.0)):
        root.rotation_euler = (0.0, 0.0, amount)
        root.scale = (1.0 + amount,) * 3
        arm.location = (amount, 0.0, 0.0)
        root.location = (0.0, amount, 0.0)  # (along the bone: up in armature space, sideways if that is used)
        for pose_bone in (root, arm):
            for path in ("rotation_euler", "scale", "location"):
                pose_bone.keyframe_insert(path, frame=frame)
    return armature


@pytest.mark.parametrize("inheritance", ["rotation", "scale", "location", "root location"])
@pytest.mark.parametrize("bake", [True, False])
def test_bones_that_do_not_inherit_in_full_export_the_pose_blender_shows(
    inheritance: str, bake: bool, tmp_path: Path
) -> None:
    armature = _rig_not_inheriting_in_full(inheritance)
    bpy.context.scene.frame_set(3)
    shown, shown_root = (np.array(armature.pose.bones[name].matrix) for name in ("Arm", "Root"))
    out = tmp_path / "rig.iqe"
    assert export_iqe(out, export_animations="ACTIVE", bake_pose=bake) == {"FINISHED"}
    assert len(iqe.load_iqe(out).animations[0].frames) == 3
    bpy.ops.wm.read_homefile(use_empty=True)
    assert import_iqe(out) == {"FINISHED"}
    imported = next(obj for obj in bpy.data.objects if obj.type == "ARMATURE")
    bpy.context.scene.frame_set(3)
    np.testing.assert_allclose(np.array(imported.pose.bones["Arm"].matrix), shown, atol=1e-4)
    np.testing.assert_allclose(np.array(imported.pose.bones["Root"].matrix), shown_root, atol=1e-4)


def test_an_actions_frames_are_its_armatures_keys_rounded_outwards(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    armature = chain_rig("Root", "Arm")
    turn_keys(armature, "Root", {1: 0.0, 10: 0.5})
    root = armature.pose.bones["Root"]
    root.rotation_euler = (1.0, 0.0, 0.0)
    root.keyframe_insert("rotation_euler", frame=10.5)  # a key between frames: its pose is written too
    armature.location = (0.0, 0.0, 0.0)
    armature.keyframe_insert("location", frame=1)
    armature.location = (5.0, 0.0, 0.0)
    armature.keyframe_insert("location", frame=10)  # root motion on the object: left out on request, and said
    out = tmp_path / "rig.iqe"
    assert export_iqe(out, export_animations="ACTIVE", object_motion=False) == {"FINISHED"}
    assert len(iqe.load_iqe(out).animations[0].frames) == 11
    assert "armature object's own location keys are not written (Object Motion" in capsys.readouterr().out


def test_on_slotted_actions_another_objects_keys_do_not_lengthen_the_animation(tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    if not extension.common.compat.has_slotted_actions():
        pytest.skip("Blender before 4.4 has no action slots: an action's keys all belong to one object")
    armature = chain_rig("Root", "Arm")
    turn_keys(armature, "Root", {1: 0.0, 10: 0.5})
    prop = cube("Prop")
    prop.animation_data_create().action = armature.animation_data.action  # a slot of its own, keyed 1..50
    for frame, x in ((1, 0.0), (50, 5.0)):
        prop.location = (x, 0.0, 0.0)
        prop.keyframe_insert("location", frame=frame)
    select_only(armature)
    out = tmp_path / "rig.iqe"
    assert export_iqe(out, export_animations="ACTIVE", export_selected_objects=True) == {"FINISHED"}
    assert len(iqe.load_iqe(out).animations[0].frames) == 10


@pytest.mark.parametrize("scaling", ["even", "uneven", "to nothing"])
def test_a_sheared_bone_is_written_without_the_shear_and_said(scaling: str, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    armature = chain_rig("Root", "Arm")
    armature.data.bones["Arm"].use_inherit_rotation = False
    root, arm = armature.pose.bones["Root"], armature.pose.bones["Arm"]
    root.rotation_mode = "XYZ"
    for frame, amount in ((1, 0.0), (3, 1.0)):
        root.rotation_euler = (amount, 0.0, 0.0)  # (about an axis across the uneven scale's)
        root.scale = (1.0, 1.0 + amount, 1.0) if scaling == "uneven" else (1.0 + amount,) * 3
        arm.scale = (1.0 - amount,) * 3 if scaling == "to nothing" else (1.0, 1.0, 1.0)  # (a part hidden so)
        for bone, path in ((root, "rotation_euler"), (root, "scale"), (arm, "scale")):
            bone.keyframe_insert(path, frame=frame)
    assert export_iqe(tmp_path / "rig.iqe", export_animations="ACTIVE") == {"FINISHED"}
    said = "1 bone(s) sheared relative to their parent in some frames ('Arm')" in capsys.readouterr().out
    assert said == (scaling == "uneven")


def test_a_manual_range_is_rounded_outwards_and_cyclic_needs_it(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    armature = chain_rig("Root", "Arm")
    turn_keys(armature, "Root", {1: 0.0, 12: 0.5})
    action = armature.animation_data.action
    out = tmp_path / "rig.iqe"
    counts = []
    for end, cyclic in ((10.5, False), (11.5, False), (10.5, True), (11.5, True)):
        action.use_frame_range, action.frame_start, action.frame_end, action.use_cyclic = True, 1.0, end, cyclic
        assert export_iqe(out, export_animations="ACTIVE") == {"FINISHED"}
        (animation,) = iqe.load_iqe(out).animations
        counts.append((len(animation.frames), animation.loop))
    assert counts == [(11, False), (12, False), (10, True), (11, True)]  # (never Python's round-half-to-even)
    assert "1 action in " in capsys.readouterr().out  # the export's summary counts what it wrote
    action.use_frame_range = False  # Blender ignores Cyclic Animation now: so does the export, saying so
    assert export_iqe(out, export_animations="ACTIVE") == {"FINISHED"}
    assert not iqe.load_iqe(out).animations[0].loop
    assert "Cyclic Animation is on but Manual Frame Range is off" in capsys.readouterr().out


@pytest.mark.parametrize("operator", ["iqe", "valve_smd"])
def test_motion_keyed_on_the_armature_object_is_carried_by_the_root_bones(operator: str, tmp_path: Path) -> None:
    armature = chain_rig("Root", "Arm", "Hand")
    body = cube("Body", size=0.5)
    body.parent = armature
    body.vertex_groups.new(name="Hand").add(list(range(8)), 1.0, "REPLACE")
    body.modifiers.new("Armature", "ARMATURE").object = armature
    turn_keys(armature, "Arm", {1: 0.0, 9: 0.6})
    armature.rotation_mode = "XYZ"
    for frame, amount in ((1, 0.0), (9, 1.0)):
        armature.location = (5.0 * amount, 1.0, 0.0)
        armature.rotation_euler = (0.0, 0.0, 1.2 * amount)
        for path in ("location", "rotation_euler"):
            armature.keyframe_insert(path, frame=frame)
    heads = {}
    for frame in (1, 5, 9):
        bpy.context.scene.frame_set(frame)
        heads[frame] = [np.array(armature.matrix_world @ bone.head) for bone in armature.pose.bones]
    bpy.context.scene.frame_set(1)
    out = tmp_path / ("rig.iqe" if operator == "iqe" else "rig.smd")
    exporter = getattr(bpy.ops.export_scene, operator)
    options = {"export_animations": "ACTIVE"} if operator == "iqe" else {"export_mode": "ALL"}
    assert exporter(filepath=str(out), **options) == {"FINISHED"}
    bpy.ops.wm.read_homefile(use_empty=True)
    importer = getattr(bpy.ops.import_scene, operator)
    files = [out] if operator == "iqe" else [out, *tmp_path.glob("rig_*.smd")]
    assert importer(directory=str(tmp_path), files=[{"name": f.name} for f in files]) == {"FINISHED"}
    imported = next(obj for obj in bpy.data.objects if obj.type == "ARMATURE")
    first = int(min(imported.animation_data.action.frame_range))
    for frame in (1, 5, 9):  # (the heads: bone lengths are the importer's own)
        bpy.context.scene.frame_set(first + frame - 1)
        got = [np.array(imported.matrix_world @ imported.pose.bones[name].head) for name in ("Root", "Arm", "Hand")]
        np.testing.assert_allclose(got, heads[frame], atol=1e-4)


@pytest.mark.parametrize(("along", "expected"), [((0, 0, 1), "Z"), ((-1, 0, 0), "-X"), ((0, 1, 0), None)])
def test_bone_axis_auto_turns_the_bones_to_where_the_joints_point(
    tmp_path: Path, along: tuple[int, int, int], expected: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exporters write joints along +Y (Blender's), +Z or +X: Auto picks the axis most joints point at their
    children along, so that the bones point along the limbs (found by a new-user trial: real Tremulous files)."""
    x, y, z = along
    text = (f'# Inter-Quake Export\njoint "root" -1\npq 0 0 0 0 0 0 1\njoint "mid" 0\npq {x} {y} {z} 0 0 0 1\n'
            f'joint "tip" 1\npq {x} {y} {z} 0 0 0 1\n')  # fmt: skip
    assert import_iqe(write(tmp_path, "chain.iqe", text), bone_axis="AUTO") == {"FINISHED"}
    armature = next(obj for obj in bpy.data.objects if obj.type == "ARMATURE")
    assert armature.data.get("iqe_bone_axis", None) == expected
    root, mid = armature.data.bones["root"], armature.data.bones["mid"]
    assert (root.tail_local - root.head_local).normalized().dot((mid.head_local - root.head_local).normalized()) > 0.99
    assert ("the joints point along" in capsys.readouterr().out) == (expected is not None)


@pytest.mark.skipif(not IQE_SAMPLES, reason="the shared samples folder is absent")
def test_bone_axis_auto_on_a_real_file() -> None:
    path = next((p for p in IQE_SAMPLES if p.name == "unv_lgun_view.iqe"), None)
    if path is None:
        pytest.skip("unv_lgun_view.iqe is not among the samples")
    assert import_iqe(path, bone_axis="AUTO") == {"FINISHED"}
    armature = next(obj for obj in bpy.data.objects if obj.type == "ARMATURE")
    assert armature.data["iqe_bone_axis"] == "Z"  # (25 of its 28 parent joints point at their first child along +Z)


@pytest.mark.skipif(bpy.app.version < (4, 4), reason="actions name the object they were made for from 4.4 (slots)")
def test_a_second_import_of_a_rig_keeps_its_actions_to_itself(tmp_path: Path) -> None:
    """One model imported twice: exporting the first writes its own animations, not the copy's too (found by a
    new-user trial: 10 animations and 5 warnings for a model of 5)."""
    path = write(tmp_path, "hand.iqe", FIXTURE)
    assert import_iqe(path) == {"FINISHED"}
    first = next(obj for obj in bpy.data.objects if obj.type == "ARMATURE")
    assert import_iqe(path) == {"FINISHED"}
    assert len([a for a in bpy.data.actions]) == 2 * len(iqe.load_iqe(path).animations)
    out = tmp_path / "first.iqe"
    select_only(first)
    assert export_iqe(out, export_selected_objects=True) == {"FINISHED"}
    assert [a.name for a in iqe.load_iqe(out).animations] == [a.name for a in iqe.load_iqe(path).animations]


def test_bone_axis_auto_keeps_y_when_only_a_few_hub_bones_disagree(tmp_path: Path) -> None:
    """A +Y chain (as this extension writes) with four control joints whose children sit above them: +Y stays (the
    four +Z votes against three +Y ones are not enough to turn every bone; found by a new-user trial)."""
    lines = ['# Inter-Quake Export', 'joint "root" -1', "pq 0 0 0 0 0 0 1"]
    for index, parent in enumerate((0, 1, 2)):
        lines += [f'joint "c{index + 1}" {parent}', "pq 0 1 0 0 0 0 1"]
    for hub in range(4):
        lines += [f'joint "h{hub}" 0', f"pq {hub + 1} 0 0 0 0 0 1", f'joint "k{hub}" {4 + 2 * hub}', "pq 0 0 1 0 0 0 1"]
    assert import_iqe(write(tmp_path, "rig.iqe", "\n".join(lines) + "\n"), bone_axis="AUTO") == {"FINISHED"}
    armature = next(obj for obj in bpy.data.objects if obj.type == "ARMATURE")
    assert "iqe_bone_axis" not in armature.data


def test_batched_matrix_solve_matches_lapack_and_falls_back_for_what_it_cannot_take() -> None:
    """iqe_rig.solve inverts stacks of affine matrices in closed form: the same results as LAPACK's solve to
    rounding, and LAPACK (or the pseudo-inverse) still decides for non-affine, singular and ill-conditioned ones."""
    from bl_ext.dev.io_game_formats.common import iqe_rig  # type: ignore[import-not-found]

    random = np.random.default_rng(7)

    def affine(count: int, scale: float = 1.0) -> np.ndarray:
        """Joint-like transforms: a rotation, scales of 0.5-2 along its axes times `scale`, a translation."""
        rotations = np.linalg.qr(random.normal(size=(count, 3, 3)))[0]
        matrices = np.zeros((count, 4, 4))
        matrices[:, :3, :3] = rotations * random.uniform(0.5, 2.0, (count, 1, 3)) * scale
        matrices[:, :3, 3] = random.normal(size=(count, 3))
        matrices[:, 3, 3] = 1.0
        return matrices

    for scale in (1e-3, 1.0, 1e3):
        a, b = affine(500, scale), affine(500)
        assert iqe_rig._affine_inverses(a) is not None
        expected = np.linalg.solve(a, b)
        assert np.allclose(iqe_rig.solve(a, b), expected, rtol=1e-11, atol=1e-11 * np.abs(expected).max())
    general = np.zeros((2000, 4, 4))  # any 3x3 parts: some too ill-conditioned for the closed form
    general[:, :3, :] = random.normal(size=(2000, 3, 4))
    general[:, 3, 3] = 1.0
    expected = np.linalg.solve(general, b[:1])
    assert np.allclose(iqe_rig.solve(general, b[:1]), expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())
    a, b = affine(4), affine(4)
    a[2, :3, :3] = 0.0  # a joint scaled to zero
    assert iqe_rig._affine_inverses(a) is None
    assert np.allclose(iqe_rig.solve(a, b)[2], np.linalg.pinv(a[2]) @ b[2])
    a[2] = affine(1)[0]
    a[1, :3, 0] *= 1e-9  # nearly singular
    assert iqe_rig._affine_inverses(a) is None
    a[1] = affine(1)[0]
    a[3, 3, 0] = 0.5  # not affine
    assert iqe_rig._affine_inverses(a) is None
    assert np.allclose(iqe_rig.solve(a, b), np.linalg.solve(a, b))
