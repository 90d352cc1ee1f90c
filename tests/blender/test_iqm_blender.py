"""IQM through Blender's operators: export a rigged, animated scene and import it back; menus, Collection
Exporter, command line, and an unreadable file that changes nothing."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import bpy
import numpy as np
import pytest

from formats import iqe, iqm
from tests.blender.conftest import data_state
from tests.blender.scene_helpers import active_collection_holding, cube
from tests.blender.test_joint_order import IQE_RIG

ANIMATED_RIG = IQE_RIG + b"""animation "wave"
framerate 24
loop
frame
pq 0 0 0 0 0 0 1
pq 0 1 0 0 0 0.3826834 0.9238795
pq 0 -1 0 0 0 0 1
pq 0 1 0 0 0 0 1
pq 0 -1 0 0 0 0 1
frame
pq 0 0 0.5 0 0 0 1
pq 0 1 0 0 0 0.7071068 0.7071068
pq 0 -1 0 0 0 0 1
pq 0 1 0 0 0 0 1
pq 0 -1 0 0 0 0 1
"""


def test_export_then_import_keeps_joints_meshes_and_the_animation(tmp_path: Path) -> None:
    source = tmp_path / "rig.iqe"
    source.write_bytes(ANIMATED_RIG)
    assert bpy.ops.import_scene.iqe(filepath=str(source)) == {"FINISHED"}
    out = tmp_path / "rig.iqm"
    assert bpy.ops.export_scene.iqm(filepath=str(out)) == {"FINISHED"}
    document = iqm.load_iqm(out)
    assert [j.name for j in document.joints] == ["root", "arm", "leg", "hand", "foot"]
    (animation,) = document.animations
    assert (animation.name, animation.framerate, animation.loop, len(animation.frames)) == ("wave", 24.0, True, 2)
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.iqm(filepath=str(out)) == {"FINISHED"}
    armature = bpy.context.view_layer.objects.active
    assert armature.type == "ARMATURE" and next(b.name for b in armature.data.bones) == "root"
    (mesh,) = [obj for obj in bpy.context.scene.objects if obj.type == "MESH"]
    assert len(mesh.data.polygons) == 1 and mesh.select_get()
    action = bpy.data.actions["wave"]
    assert action["iqe_framerate"] == 24.0 and action.use_cyclic and tuple(action.frame_range) == (1.0, 3.0)


def test_iqm_and_iqe_exports_of_one_scene_decode_to_the_same_model(tmp_path: Path) -> None:
    source = tmp_path / "rig.iqe"
    source.write_bytes(ANIMATED_RIG)
    bpy.ops.import_scene.iqe(filepath=str(source))
    bpy.ops.export_scene.iqe(filepath=str(tmp_path / "a.iqe"))
    bpy.ops.export_scene.iqm(filepath=str(tmp_path / "a.iqm"))
    expected = iqm.write_iqm(iqe.load_iqe(tmp_path / "a.iqe"))
    assert (tmp_path / "a.iqm").read_bytes() == expected


def test_collection_exporter_writes_iqm(tmp_path: Path) -> None:
    inside = cube("Inside")
    cube("Outside", location=(5, 0, 0))
    collection = active_collection_holding("Export", inside)
    assert bpy.ops.collection.exporter_add(name="IOGF_FH_iqm") == {"FINISHED"}
    out = tmp_path / "collection.iqm"
    collection.exporters[0].export_properties.filepath = str(out)
    assert bpy.ops.collection.exporter_export(index=0) == {"FINISHED"}
    document = iqm.load_iqm(out)
    assert [m.name for m in document.meshes] == ["Inside"]
    assert np.abs(document.meshes[0].positions).max() == pytest.approx(1.0)


def test_cli_converts_iqe_to_iqm_and_back(tmp_path: Path, extension: ModuleType) -> None:
    source = tmp_path / "rig.iqe"
    source.write_bytes(ANIMATED_RIG)
    binary, text = tmp_path / "rig.iqm", tmp_path / "again.iqe"
    assert extension.cli.main(["convert", str(source), "-o", str(binary)], prog="iogf") == 0
    assert extension.cli.main(["convert", str(binary), "-o", str(text)], prog="iogf") == 0
    document = iqe.load_iqe(text)
    assert [j.name for j in document.joints] == ["root", "arm", "leg", "hand", "foot"]
    assert [a.name for a in document.animations] == ["wave"]


def test_an_unreadable_iqm_changes_nothing(tmp_path: Path) -> None:
    good = iqm.write_iqm(iqe.read_iqe(ANIMATED_RIG))
    bad = tmp_path / "bad.iqm"
    bad.write_bytes(good[: len(good) // 2])
    cube("Before")
    before = data_state()
    with pytest.raises(RuntimeError, match=r"bad\.iqm"):
        bpy.ops.import_scene.iqm(filepath=str(bad))
    assert data_state() == before


def test_an_iqe_with_a_welded_triangle_exports_to_iqm_counting_what_is_written(
    tmp_path: Path, extension: ModuleType
) -> None:
    from tests.unit.test_iqm_codec import WELDED_TRIANGLE

    source = tmp_path / "welded.iqe"
    source.write_text(WELDED_TRIANGLE)
    assert bpy.ops.import_scene.iqe(filepath=str(source)) == {"FINISHED"}
    assert len(bpy.data.objects["m"].data.polygons) == 3  # every face of the file arrives
    out = tmp_path / "welded.iqm"
    assert bpy.ops.export_scene.iqm(filepath=str(out)) == {"FINISHED"}
    summary = extension.common.operators.LAST_SUMMARY[0]
    assert summary.faces == 2 == iqm.read_iqm_model(out.read_bytes()).triangles.shape[0]
    assert [w for w in summary.warnings if "left out, as the reference iqm compiler" in w] == [
        "1 of 3 triangles left out, as the reference iqm compiler leaves them out: two of their corners are one "
        "vertex (the same position, UV, normal, colour and weights), so they have no area and nothing visible is lost"
    ]
    again = tmp_path / "again.iqe"
    assert bpy.ops.export_scene.iqe(filepath=str(again)) == {"FINISHED"}  # IQE keeps every triangle
    assert iqe.read_iqe(again.read_bytes()).meshes[0].face_sizes.shape[0] == 3


def test_an_animation_only_iqm_imports_as_a_numbered_rig_with_its_action_and_exports_again(
    tmp_path: Path, extension: ModuleType
) -> None:
    """The reference compiler writes no joints without meshes: an animation file has poses and frames only."""
    document = iqe.read_iqe(ANIMATED_RIG)
    document.meshes = []
    document.animations[0].frames[:, 1, 7:10] = (2.0, 1.0, 1.0)  # an uneven scale above a turned joint: no shear
    model = iqm.compile_document(document)
    model.joint_names, model.joint_parents = [], np.zeros(0, np.int32)
    model.joint_poses = np.zeros((0, 10), np.float32)
    source = tmp_path / "wave.iqm"
    source.write_bytes(iqm.encode_model(model))
    assert iqm.read_iqm_model(source.read_bytes()).joint_names == []
    assert bpy.ops.import_scene.iqm(filepath=str(source)) == {"FINISHED"}
    summary = extension.common.operators.LAST_SUMMARY[0]
    assert summary.warnings == []
    assert any("holds animations but no joints" in note and "5 joints named joint_0... were made, placed as" in note
               for note in summary.notes)  # fmt: skip
    rig = bpy.data.objects["wave"]
    assert sorted(bone.name for bone in rig.data.bones) == [f"joint_{index}" for index in range(5)]
    assert rig.data.bones["joint_3"].parent.name == "joint_1" and "wave" in bpy.data.actions
    assert iqm.read_iqm(source.read_bytes()).joints[1].scale == (1.0, 1.0, 1.0)  # (a rest holds no scale)
    out = tmp_path / "again.iqm"
    assert bpy.ops.export_scene.iqm(filepath=str(out)) == {"FINISHED"}
    assert extension.common.operators.LAST_SUMMARY[0].warnings == []  # (no mesh left out; no shear)
    again = iqm.read_iqm(out.read_bytes())
    assert len(again.joints) == 5 and [a.name for a in again.animations] == ["wave"]
    np.testing.assert_allclose(again.animations[0].frames, document.animations[0].frames, atol=1e-4)
