"""Faults a hostile review found: meshes without vertices or faces, full disks, files that cannot be replaced."""

from __future__ import annotations

import errno
import re
from pathlib import Path
from types import ModuleType

import bpy
import numpy as np
import pytest
from mathutils import Matrix

from formats import joe
from tests import joe_fixtures as fx
from tests.blender.scene_helpers import cube, mesh_object

EMPTY_TMP_MESH = """\
QMAP TMP 10
objects {
  mesh "nothing" {
    0,0,0
    0,0,0
    1,1,1
    30
    0
    materials 0 { }
    vertices 0 { }
    faces 0 { }
  }
}
"""


def empty_joe() -> bytes:
    frame = joe.JoeFrame(
        vertex_indices=np.zeros((0, 3), np.uint16),
        normal_indices=np.zeros((0, 3), np.uint16),
        texcoord_indices=np.zeros((0, 3), np.uint16),
        positions=np.zeros((0, 3), np.float32),
        normals=np.zeros((0, 3), np.float32),
        texcoords=np.zeros((0, 2), np.float32),
    )
    return joe.write_joe(joe.JoeDocument(frames=[frame], magic=joe.MAGIC_IDP2))


def test_joe_with_zero_counts_imports_an_empty_object(tmp_path: Path) -> None:
    path = tmp_path / "empty.joe"
    path.write_bytes(empty_joe())
    assert bpy.ops.import_scene.joe(filepath=str(path)) == {"FINISHED"}
    (obj,) = bpy.context.scene.objects
    assert obj.type == "MESH" and len(obj.data.vertices) == 0 and len(obj.data.polygons) == 0


def test_qmap_tmp_mesh_with_zero_counts_imports_an_empty_object(tmp_path: Path) -> None:
    path = tmp_path / "empty.qmap.tmp"
    path.write_text(EMPTY_TMP_MESH)
    assert bpy.ops.import_scene.qmap_tmp(filepath=str(path)) == {"FINISHED"}
    (obj,) = bpy.context.scene.objects
    assert obj.name == "nothing" and len(obj.data.vertices) == 0


# ---- one rule for objects without faces, in every exporter -----------------------------------------------------

EXPORTERS = {
    "joe": (bpy.ops.export_scene.joe, ".joe"),
    "jpk": (bpy.ops.export_scene.jpk, ".jpk"),
    "smd": (bpy.ops.export_scene.valve_smd, ".smd"),
    "iqe": (bpy.ops.export_scene.iqe, ".iqe"),
    "qmap_tmp": (bpy.ops.export_scene.qmap_tmp, ".qmap.tmp"),
}


def points_only(name: str) -> bpy.types.Object:
    return mesh_object(name, [(0, 0, 0), (1, 0, 0), (0, 1, 0)], [])


@pytest.mark.parametrize("format_name", EXPORTERS)
def test_objects_without_faces_are_left_out_with_a_warning(
    format_name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    operator, extension = EXPORTERS[format_name]
    cube("Box")
    points_only("Dots")
    mesh_object("Nothing", [], [])  # not even a vertex: the mesh has no position attribute at all
    target = tmp_path / f"out{extension}"
    assert operator(filepath=str(target)) == {"FINISHED"}
    assert target.stat().st_size > 0
    output = capsys.readouterr().out
    assert "Dots: no faces; left out" in output and "Nothing: no faces; left out" in output


@pytest.mark.parametrize("format_name", EXPORTERS)
def test_an_export_where_no_object_has_faces_is_refused_and_writes_nothing(format_name: str, tmp_path: Path) -> None:
    operator, extension = EXPORTERS[format_name]
    points_only("Dots")
    target = tmp_path / f"out{extension}"
    with pytest.raises(RuntimeError, match="nothing to export: none of the 1 mesh object has faces"):
        operator(filepath=str(target))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("format_name", EXPORTERS)
def test_a_full_disk_is_reported_with_the_file_name(
    format_name: str, tmp_path: Path, extension: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(*_: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(extension.formats.atomic, "write_content", full_disk)
    operator, suffix = EXPORTERS[format_name]
    cube("Box")
    target = tmp_path / f"out{suffix}"
    with pytest.raises(RuntimeError, match=f"{re.escape(str(target))}: No space left on device"):
        operator(filepath=str(target))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("format_name", ["joe", "jpk"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_joe_and_jpk_refuse_non_finite_positions_naming_the_object(
    format_name: str, bad: float, tmp_path: Path
) -> None:
    operator, suffix = EXPORTERS[format_name]
    cube("Fine")
    break_a_position(cube("Broken", location=(4, 0, 0)).data, bad)
    target = tmp_path / f"out{suffix}"
    with pytest.raises(RuntimeError, match="object 'Broken' has vertex positions that are NaN or infinite"):
        operator(filepath=str(target))
    assert list(tmp_path.iterdir()) == []


def break_a_position(mesh: bpy.types.Mesh, bad: float) -> None:
    positions = np.zeros(len(mesh.vertices) * 3, np.float32)
    mesh.attributes["position"].data.foreach_get("vector", positions)
    positions[6] = bad  # foreach_set, as scripts do: `co` would clamp infinity to the largest float
    mesh.attributes["position"].data.foreach_set("vector", positions)
    mesh.update()  # Blender 4.2 re-evaluates the mesh only when told


@pytest.mark.parametrize("format_name", [*EXPORTERS, "iqm"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_every_exporter_names_the_object_with_non_finite_positions_and_keeps_the_old_file(
    format_name: str, bad: float, tmp_path: Path
) -> None:
    operator, suffix = EXPORTERS.get(format_name) or (bpy.ops.export_scene.iqm, ".iqm")
    cube("Fine")
    break_a_position(cube("Prop", location=(4, 0, 0)).data, bad)
    target = tmp_path / f"out{suffix}"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError, match=r"(object|mesh) 'Prop'"):
        operator(filepath=str(target))
    assert [path.name for path in tmp_path.iterdir()] == [target.name] and target.read_bytes() == b"old"


def test_joe_import_warns_of_non_finite_positions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = fx.cube()
    document.first_frame.positions[0] = np.nan
    data = bytearray(fx.cube_bytes())
    clean = fx.cube().first_frame.positions[0].astype("<f4").tobytes()
    offset = data.find(clean)
    data[offset : offset + 12] = document.first_frame.positions[0].astype("<f4").tobytes()
    path = tmp_path / "holes.joe"
    path.write_bytes(bytes(data))
    assert bpy.ops.import_scene.joe(filepath=str(path)) == {"FINISHED"}
    assert "holes: 1 of 8 positions are NaN or infinite" in capsys.readouterr().out


@pytest.mark.parametrize("operator", ["valve_smd", "iqe", "iqm"])
def test_an_object_on_a_bone_is_written_at_the_rest_pose_whatever_the_frame(tmp_path: Path, operator: str) -> None:
    """A hat parented to the head bone goes into the reference mesh where it sits at rest, like the skinned body,
    not where the current frame's pose has moved it."""
    from tests.blender.scene_helpers import chain_rig, cube, turn_keys

    armature = chain_rig("root", "head")
    turn_keys(armature, "head", {1: 0.0, 10: 1.2})
    hat = cube("Hat", size=0.5, location=(0, 0, 2.2))
    hat.parent, hat.parent_type, hat.parent_bone = armature, "BONE", "head"
    hat.matrix_parent_inverse = (armature.matrix_world @ armature.data.bones["head"].matrix_local
                                 @ Matrix.Translation((0, 1, 0))).inverted()  # fmt: skip
    bpy.context.scene.frame_set(1)
    exporter = getattr(bpy.ops.export_scene, operator)
    extension = ".smd" if operator == "valve_smd" else f".{operator}"
    at_rest, posed = tmp_path / f"rest{extension}", tmp_path / f"posed{extension}"
    assert exporter(filepath=str(at_rest)) == {"FINISHED"}
    bpy.context.scene.frame_set(10)
    assert hat.matrix_world.translation.y < -0.5  # the pose has moved it
    assert exporter(filepath=str(posed)) == {"FINISHED"}
    assert posed.read_bytes() == at_rest.read_bytes()
    assert armature.data.pose_position == "POSE"


@pytest.mark.parametrize("operator", ["iqe", "iqm"])
def test_an_object_on_a_bone_is_bound_to_it_and_unweighted_skinned_vertices_are_said(
    tmp_path: Path, operator: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hat on the head bone moves with it in an engine (every vertex wholly on that joint, not on none); a prop
    on no bone at all is named in a warning, vertices of a skinned mesh left out of every bone group in a note
    (engines take them differently; real models have them)."""
    from formats import iqe, iqm
    from tests.blender.scene_helpers import chain_rig

    armature = chain_rig("root", "head")
    hat = cube("Hat", size=0.5, location=(0, 0, 2.2))
    hat.parent, hat.parent_type, hat.parent_bone = armature, "BONE", "head"
    body = cube("Body", size=0.5, location=(0, 0, 0.5))
    body.vertex_groups.new(name="root").add([0, 1, 2, 3, 4, 5, 6], 1.0, "REPLACE")  # vertex 7 on no bone
    body.parent = armature
    body.modifiers.new("Armature", "ARMATURE").object = armature
    cube("Crate", size=0.5, location=(2, 0, 0))  # neither skinned nor on a bone
    prop = cube("Prop", size=0.5, location=(-2, 0, 0))  # skinned, weighted nowhere: a rigid part (real files have)
    prop.parent = armature
    prop.modifiers.new("Armature", "ARMATURE").object = armature
    path = tmp_path / f"rig.{operator}"
    assert getattr(bpy.ops.export_scene, operator)(filepath=str(path)) == {"FINISHED"}
    out = capsys.readouterr().out
    assert "note: Body: 1 vertex(es) have no weight on any bone" in out and "Prop:" not in out
    assert "Crate: neither skinned by the armature nor parented to a bone; written with zero blend weights" in out
    document = (iqm.read_iqm if operator == "iqm" else iqe.read_iqe)(path.read_bytes())
    meshes = {mesh.name: mesh for mesh in document.meshes}
    assert meshes["Hat"].blend_indices is not None and meshes["Hat"].blend_weights is not None
    assert set(meshes["Hat"].blend_indices[:, 0].tolist()) == {1}  # the head joint
    assert np.allclose(meshes["Hat"].blend_weights[:, 0], 1.0) and not meshes["Hat"].blend_weights[:, 1:].any()



@pytest.mark.parametrize("operator", ["iqe", "iqm"])
def test_an_object_on_a_bone_of_a_rig_beyond_256_bones_is_exported(tmp_path: Path, operator: str) -> None:
    """Blend indices name at most 256 joints: an object on one of them exports (bound to it), one on a later bone
    exports without weights and a warning; only skinning by such a rig is refused."""
    from formats import iqe, iqm
    from tests.blender.scene_helpers import chain_rig

    armature = chain_rig(*[f"b{index}" for index in range(300)])
    for name, bone in (("Hat", "b2"), ("Tail", "b280")):
        prop = cube(name, size=0.5)
        prop.parent, prop.parent_type, prop.parent_bone = armature, "BONE", bone
    path = tmp_path / f"long.{operator}"
    assert getattr(bpy.ops.export_scene, operator)(filepath=str(path)) == {"FINISHED"}
    meshes = {m.name: m for m in (iqm.read_iqm if operator == "iqm" else iqe.read_iqe)(path.read_bytes()).meshes}
    assert meshes["Hat"].blend_indices is not None and set(meshes["Hat"].blend_indices[:, 0].tolist()) == {2}
    weights = meshes["Tail"].blend_weights
    assert weights is None or not weights.any()


RIGGED_IQE = """# Inter-Quake Export
joint "root" -1
pq 0 0 0 0 0 0 1
mesh "m"
vp 0 0 0
vb 0 1
vp 1 0 0
vb 0 1
vp 0 1 0
vb 0 1
fm 0 1 2
"""


@pytest.mark.parametrize("failure", ["bad SMD", "late IQE failure"])
def test_a_failed_import_leaves_the_user_in_the_mode_they_were_in(
    failure: str, tmp_path: Path, extension: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    editing = cube("Editing")
    bpy.context.view_layer.objects.active = editing
    bpy.ops.object.mode_set(mode="EDIT")
    if failure == "bad SMD":
        path = tmp_path / "bad.smd"
        path.write_text('version 1\nnodes\n0 "root" -1\nend\nskeleton\ntime 0\n0 0 0 0 x 0 0\n')
        operator = bpy.ops.import_scene.valve_smd
    else:  # after the armature (built in Object Mode) exists
        path = tmp_path / "rig.iqe"
        path.write_text(RIGGED_IQE)
        operator = bpy.ops.import_scene.iqe

        def failing(*_arguments: object) -> None:
            raise extension.formats.errors.FormatError("simulated failure")

        monkeypatch.setattr(extension.importers.iqe, "_skin", failing)
    with pytest.raises(RuntimeError):
        operator(filepath=str(path))
    assert bpy.context.mode == "EDIT_MESH" and bpy.context.view_layer.objects.active == editing
    assert [obj.name for obj in bpy.data.objects] == ["Editing"]


@pytest.mark.parametrize("where", ["base pose", "animation"])
def test_joints_placed_beyond_a_float_are_refused_and_leave_nothing_behind(where: str, tmp_path: Path) -> None:
    """Finite numbers whose products overflow Blender's float32 matrices (a scale of 1e38 on a parent): a clear
    error naming the joint, not a linear-algebra traceback, and the scene as it was."""
    huge = "pq 0 0 0 0 0 0 1 1e38 1e38 1e38"
    rig = RIGGED_IQE.replace("pq 0 0 0 0 0 0 1\n", (huge if where == "base pose" else "pq 0 0 0 0 0 0 1") +
                             '\njoint "child" 0\npq 0 0 10 0 0 0 1\n')  # fmt: skip
    if where == "animation":
        rig += f"animation \"a\"\nframe\n{huge}\npq 0 0 10 0 0 0 1\n"
    path = tmp_path / "huge.iqe"
    path.write_text(rig)
    cube("Kept")
    counts = (len(bpy.data.objects), len(bpy.data.meshes), len(bpy.data.armatures), len(bpy.data.actions))
    with pytest.raises(RuntimeError, match=r"joint 1 'child' is placed beyond what a float holds") as raised:
        bpy.ops.import_scene.iqe(filepath=str(path))
    assert str(path) in str(raised.value)  # (the file, found while building: not only its stem)
    if where == "base pose":
        assert f"{path}, line 4: the base pose: joint 1" in str(raised.value)  # (its `joint` line)
    assert (len(bpy.data.objects), len(bpy.data.meshes), len(bpy.data.armatures), len(bpy.data.actions)) == counts


@pytest.mark.parametrize(
    ("operator", "extension", "expected"),
    [
        ("joe", "joe", "JOE files cannot hold its UV map 'Lightmap' (only the active one is written); colour "
                       "attribute 'Dirt'; shape keys (their current mix is written): left out"),
        ("jpk", "jpk", "JOE files cannot hold its UV map 'Lightmap'"),
        ("valve_smd", "smd", "SMD files cannot hold its UV map 'Lightmap' (only the active one is written); colour "
                             "attribute 'Dirt': left out"),
        ("iqe", "iqe", "IQE files cannot hold its shape keys (their current mix is written): left out"),
        ("iqm", "iqm", "IQM files cannot hold its shape keys (their current mix is written): left out"),
        ("qmap", "qmap", "QMAP files cannot hold its UV map 'Lightmap' (only the active one is written); colour "
                         "attribute 'Dirt'; shape keys (the basis is written): left out"),
    ],
)  # fmt: skip
def test_what_a_format_cannot_hold_is_named_in_a_warning(
    tmp_path: Path, operator: str, extension: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second UV map, a colour attribute and shape keys are never dropped unsaid (found by a new-user trial)."""
    box = cube("Box")
    box.data.uv_layers.new(name="Lightmap")
    box.data.color_attributes.new("Dirt", "BYTE_COLOR", "CORNER")
    box.shape_key_add(name="Basis")
    box.shape_key_add(name="Lift")
    exporter = getattr(bpy.ops.export_scene, operator)
    assert exporter(filepath=str(tmp_path / f"box.{extension}")) == {"FINISHED"}
    out = capsys.readouterr().out
    assert f"Box: {expected}" in out, out
    if operator == "valve_smd":
        assert "Box: shape keys are written to a .vta, which the Reference mode leaves out" in out


@pytest.mark.parametrize("operator", ["valve_smd", "iqe"])
def test_a_bone_name_with_double_quotes_is_written_with_apostrophes_and_a_warning(
    tmp_path: Path, operator: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """SMD and IQE quote their names and have no escape: both write `"` as `'` and say so (SMD refused the whole
    export; found by a new-user trial)."""
    from formats import iqe, smd
    from tests.blender.scene_helpers import chain_rig

    armature = chain_rig("root", 'spine "upper"')
    cube("Box").parent = armature
    extension = "smd" if operator == "valve_smd" else "iqe"
    path = tmp_path / f"rig.{extension}"
    assert getattr(bpy.ops.export_scene, operator)(filepath=str(path)) == {"FINISHED"}
    assert "'spine \"upper\"' written as \"spine 'upper'\"" in capsys.readouterr().out
    if operator == "valve_smd":
        assert [node.name for node in smd.load_smd(path).nodes][:2] == ["root", "spine 'upper'"]
    else:
        assert [joint.name for joint in iqe.load_iqe(path).joints] == ["root", "spine 'upper'"]


@pytest.mark.parametrize("operator", ["iqe", "iqm"])
def test_deform_bones_only_leaves_out_controls_and_keeps_every_pose(
    tmp_path: Path, operator: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A control bone between two deforming bones: left out, its child hangs from its parent, and the child's
    world pose in every frame is what the full skeleton gives (found by a new-user trial: a rig of 300 bones,
    most of them controls, could not be exported at all)."""
    from formats import iqe, iqm
    from formats.iqm.skeleton import pose_matrices
    from tests.blender.scene_helpers import chain_rig, turn_keys

    armature = chain_rig("root", "ctrl", "spine", "tip", deform=(True, False, True, True))
    turn_keys(armature, "ctrl", {1: 0.0, 5: 0.8})
    turn_keys(armature, "spine", {1: 0.3, 5: -0.4})
    body = cube("Body", size=0.5, location=(0, 0, 2.5))
    for name in ("root", "spine", "tip"):
        body.vertex_groups.new(name=name).add(list(range(8)), 1.0 / 3, "REPLACE")
    body.parent = armature
    body.modifiers.new("Armature", "ARMATURE").object = armature
    hat = cube("Hat", size=0.2, location=(0, 0, 1.5))
    hat.parent, hat.parent_type, hat.parent_bone = armature, "BONE", "ctrl"
    export = getattr(bpy.ops.export_scene, operator)
    read = iqm.read_iqm if operator == "iqm" else iqe.read_iqe

    def world(document: iqe.IqeDocument, joint_name: str) -> np.ndarray:
        names = [joint.name for joint in document.joints]
        frames = np.asarray(document.animations[0].frames, np.float64)
        local = np.zeros((*frames.shape[:2], 4, 4))
        local[..., :3, :] = pose_matrices(frames)
        local[..., 3, 3] = 1.0
        joint = names.index(joint_name)
        result = local[:, joint]
        parent = document.joints[joint].parent
        while parent >= 0:
            result = local[:, parent] @ result
            parent = document.joints[parent].parent
        return result

    full_path, kept_path = tmp_path / f"full.{operator}", tmp_path / f"deform.{operator}"
    assert export(filepath=str(full_path)) == {"FINISHED"}
    capsys.readouterr()
    assert export(filepath=str(kept_path), deform_only=True) == {"FINISHED"}
    assert "Hat: its parent bone 'ctrl' does not deform and is not written; bound to 'root'" in capsys.readouterr().out
    full, kept = read(full_path.read_bytes()), read(kept_path.read_bytes())
    assert [(j.name, j.parent) for j in kept.joints] == [("root", -1), ("spine", 0), ("tip", 1)]
    for name in ("spine", "tip"):
        np.testing.assert_allclose(world(kept, name), world(full, name), atol=2e-5)
    meshes = {mesh.name: mesh for mesh in kept.meshes}
    assert set(meshes["Hat"].blend_indices[:, 0].tolist()) == {0}  # on root, the control's deforming parent
    assert set(np.unique(meshes["Body"].blend_indices[meshes["Body"].blend_weights > 0]).tolist()) == {0, 1, 2}


def test_deform_bones_only_binds_a_prop_on_a_control_root_to_the_first_joint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A prop on a rig's control root (no deforming bone above it) is bound to the first joint, not left on none
    (found by a review)."""
    from formats import iqe
    from tests.blender.scene_helpers import chain_rig

    armature = chain_rig("root", "spine", deform=(False, True))
    prop = cube("Prop", size=0.2)
    prop.parent, prop.parent_type, prop.parent_bone = armature, "BONE", "root"
    body = cube("Body", size=0.5, location=(0, 0, 1.5))
    body.vertex_groups.new(name="spine").add(list(range(8)), 1.0, "REPLACE")
    body.parent = armature
    body.modifiers.new("Armature", "ARMATURE").object = armature
    path = tmp_path / "rig.iqe"
    assert bpy.ops.export_scene.iqe(filepath=str(path), deform_only=True) == {"FINISHED"}
    out = capsys.readouterr().out
    assert "Prop: its parent bone 'root' does not deform and is not written, nor is any bone above it; bound to " \
           "'spine', the first joint" in out and "neither skinned" not in out  # fmt: skip
    meshes = {mesh.name: mesh for mesh in iqe.load_iqe(path).meshes}
    assert set(meshes["Prop"].blend_indices[:, 0].tolist()) == {0}


def test_bone_names_that_clean_to_one_name_stay_distinct_in_smd(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`arm "L"` and `arm 'L'` would both be written `arm 'L'`; studiomdl matches bones by name (found by a review)."""
    from formats import smd
    from tests.blender.scene_helpers import chain_rig

    armature = chain_rig("root", 'arm "L"', "arm 'L'")
    cube("Box").parent = armature
    path = tmp_path / "rig.smd"
    assert bpy.ops.export_scene.valve_smd(filepath=str(path)) == {"FINISHED"}
    assert "bone 'arm \"L\"' written as \"arm 'L'_\"" in capsys.readouterr().out
    assert [node.name for node in smd.load_smd(path).nodes][:3] == ["root", "arm 'L'_", "arm 'L'"]
