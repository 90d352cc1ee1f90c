"""Animations onto an existing rig: an animation-only IQE or IQM adds actions to the armature imported with it or
the active one, joints matched by name (warnings for those missing on either side), in the rig's own bone frames
and rotation mode; an SMD animation plays on a rig imported from IQE with a turned bone axis, and the reverse."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import bpy
import numpy as np
import pytest

from formats import iqe, iqm
from tests.blender.conftest import data_state

RIG = """# Inter-Quake Export
joint "root" -1
pq 0 0 0 0 0 0 1
joint "arm" 0
pq 0 1 0 0 0 0 1
joint "hand" 1
pq 0 1 0 0 0 0 1
mesh "body"
material "skin"
vp 0 0 0
vb 0 1
vp 1 0 0
vb 1 1
vp 0 2 0
vb 2 1
fm 0 1 2
"""

# "hand" is not in the file; "tail" is not in the rig
ANIMATION = """# Inter-Quake Export
joint "root" -1
pq 0 0 0 0 0 0 1
joint "arm" 0
pq 0 1 0 0 0 0 1
joint "tail" 0
pq 0 -1 0 0 0 0 1
animation "wave"
framerate 12
frame
pq 0 0 0 0 0 0 1
pq 0 1 0 0 0 0.3826834 0.9238795
pq 0 -1 0 0 0 0 1
frame
pq 0.5 0 0.25 0 0 0 1
pq 0 1 0 0.3826834 0 0 0.9238795
pq 0 -1 0 0 0 0 1
animation "idle"
loop
frame
pq 0 0 0 0 0 0.7071068 0.7071068
pq 0 1 0 0 0 0 1
pq 0 -1 0 0 0 0 1
frame
pq 0 0 0 0 0 0 1
pq 0 1 0 0 0 0 1
pq 0 -1 0 0 0 0 1
"""

SMD_RIG = """version 1
nodes
0 "root" -1
1 "arm" 0
2 "hand" 1
end
skeleton
time 0
0 0 0 0 0 0 0
1 0 1 0 0 0 0
2 0 1 0 0 0 0
end
triangles
skin
0 0 0 0 0 0 1 0 0
1 1 0 0 0 0 1 1 0
2 0 2 0 0 0 1 0 1
end
"""

SMD_ANIMATION = """version 1
nodes
0 "root" -1
1 "arm" 0
end
skeleton
time 0
0 0 0 0 0 0 0
1 0 1 0 0 0 0.5
time 1
0 0.5 0 0 0.3 0 0
1 0 1 0 0 0.2 0.5
end
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def import_iqe(*paths: Path, **options: object) -> set[str]:
    return bpy.ops.import_scene.iqe(directory=str(paths[0].parent), files=[{"name": p.name} for p in paths],
                                    **options)  # fmt: skip


def armatures() -> list[bpy.types.Object]:
    return [obj for obj in bpy.data.objects if obj.type == "ARMATURE"]


def pose_frames(armature: bpy.types.Object, action: bpy.types.Action, bones: list[str], frames: list[int],
                turn: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """(F, B, 4, 4) armature-space pose matrices of `bones` as `action` plays them; `turn` undone (file frames)."""
    armature.animation_data.action = action
    undo = np.identity(4) if turn is None else np.linalg.inv(turn)
    out = []
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        out.append([np.array(armature.pose.bones[name].matrix) @ undo for name in bones])
    return np.array(out)


def file_poses(path: Path, action_name: str, bones: list[str], frames: list[int]) -> np.ndarray:
    """The same animation imported alone into an empty scene: the reference the rig must show."""
    bpy.ops.wm.read_homefile(use_empty=True)
    assert import_iqe(path) == {"FINISHED"}
    (armature,) = armatures()
    return pose_frames(armature, bpy.data.actions[action_name], bones, frames)


def test_animation_file_adds_actions_to_the_rig_imported_before(tmp_path: Path) -> None:
    rig_path, animation_path = write(tmp_path, "rig.iqe", RIG), write(tmp_path, "moves.iqe", ANIMATION)
    expected = file_poses(animation_path, "wave", ["root", "arm"], [1, 2])
    bpy.ops.wm.read_homefile(use_empty=True)
    assert import_iqe(rig_path) == {"FINISHED"}
    (rig,) = armatures()
    assert bpy.context.view_layer.objects.active == rig
    objects_before = set(bpy.data.objects.keys())
    assert import_iqe(animation_path) == {"FINISHED"}
    assert set(bpy.data.objects.keys()) == objects_before  # no new armature
    assert {"wave", "idle"} <= set(bpy.data.actions.keys())
    assert rig.animation_data.action.name == "wave"  # the first one plays
    np.testing.assert_allclose(pose_frames(rig, bpy.data.actions["wave"], ["root", "arm"], [1, 2]), expected,
                               atol=1e-5)  # fmt: skip
    # "hand", which the file lacks, follows its parent at rest
    hand = pose_frames(rig, bpy.data.actions["wave"], ["arm", "hand"], [2])[0]
    np.testing.assert_allclose(np.linalg.inv(hand[0]) @ hand[1], np.array(rig.data.bones["arm"].matrix_local.inverted()
                                                                      @ rig.data.bones["hand"].matrix_local), atol=1e-5)
    idle = bpy.data.actions["idle"]
    assert idle.use_cyclic and (idle.frame_start, idle.frame_end) == (1.0, 3.0)
    assert bpy.context.scene.render.fps == 12


def test_missing_joints_and_bones_are_named_in_the_report(tmp_path: Path, extension: ModuleType) -> None:
    rig_path, animation_path = write(tmp_path, "rig.iqe", RIG), write(tmp_path, "moves.iqe", ANIMATION)
    assert import_iqe(rig_path) == {"FINISHED"}
    summary = extension.importers.iqe.import_iqe_files(
        bpy.context, [str(animation_path)], extension.importers.iqe.IqeImportOptions())
    messages = summary.warnings
    assert any("1 joint(s) are not bones of armature" in text and "'tail'" in text for text in messages), messages
    assert any("1 bone(s) of armature" in text and "'hand'" in text for text in messages), messages
    assert any("animations added to armature" in text for text in summary.notes)


def test_both_files_in_one_import_share_one_armature(tmp_path: Path) -> None:
    rig_path, animation_path = write(tmp_path, "rig.iqe", RIG), write(tmp_path, "moves.iqe", ANIMATION)
    assert import_iqe(rig_path, animation_path) == {"FINISHED"}
    (rig,) = armatures()
    assert {"wave", "idle"} <= set(bpy.data.actions.keys())
    assert rig.animation_data.action.name == "wave"


def test_option_off_builds_an_armature_of_its_own(tmp_path: Path) -> None:
    rig_path, animation_path = write(tmp_path, "rig.iqe", RIG), write(tmp_path, "moves.iqe", ANIMATION)
    assert import_iqe(rig_path) == {"FINISHED"}
    assert import_iqe(animation_path, animation_armature="NEW") == {"FINISHED"}
    assert len(armatures()) == 2


def test_a_file_with_meshes_joins_the_active_rig_only_when_asked_and_where_it_is_that_rig(tmp_path: Path) -> None:
    rig_path = write(tmp_path, "rig.iqe", RIG)
    with_animation = write(tmp_path, "again.iqe", RIG + ANIMATION.split("\n", 7)[7].replace('"tail"', '"hand"'))
    assert import_iqe(rig_path) == {"FINISHED"}
    assert import_iqe(with_animation) == {"FINISHED"}
    assert len(armatures()) == 2  # Auto: a model of its own
    bpy.ops.wm.read_homefile(use_empty=True)
    assert import_iqe(rig_path) == {"FINISHED"}
    assert import_iqe(with_animation, animation_armature="ACTIVE") == {"FINISHED"}
    (rig,) = armatures()  # the same rig at the same rest: its mesh skinned to it
    meshes = [obj for obj in bpy.data.objects if obj.type == "MESH"]
    assert len(meshes) == 2 and all(obj.find_armature() == rig for obj in meshes)
    arm_moved = RIG.replace('pq 0 1 0 0 0 0 1\njoint "hand"', 'pq 0 3 0 0 0 0 1\njoint "hand"')
    moved = write(tmp_path, "moved.iqe", arm_moved + 'animation "a"\nframe\npq 0 0 0 0 0 0 1\npq 0 3 0 0 0 0 1\n'
                  "pq 0 1 0 0 0 0 1\n")  # fmt: skip
    bpy.context.view_layer.objects.active = rig
    assert import_iqe(moved, animation_armature="ACTIVE") == {"FINISHED"}
    assert len(armatures()) == 2  # another rest pose: an armature of its own


def test_a_file_sharing_no_joint_gets_an_armature_of_its_own(tmp_path: Path) -> None:
    """(An IQM of frames without joints names them joint_0, joint_1...: it must still import.)"""
    assert import_iqe(write(tmp_path, "rig.iqe", RIG)) == {"FINISHED"}
    other = ANIMATION.replace('"root"', '"x"').replace('"arm"', '"y"').replace('"tail"', '"z"')
    assert import_iqe(write(tmp_path, "other.iqe", other)) == {"FINISHED"}
    assert len(armatures()) == 2


def test_a_failed_import_onto_the_rig_changes_nothing(tmp_path: Path) -> None:
    assert import_iqe(write(tmp_path, "rig.iqe", RIG)) == {"FINISHED"}
    # the second animation fails, after the first was made and given to the rig
    broken = ANIMATION.replace("pq 0 0 0 0 0 0.7071068 0.7071068\npq 0 1 0 0 0 0 1",
                               "pq 0 0 0 0 0 0 1 1e38 1e38 1e38\npq 0 1 0 0 0 0 1 1e38 1e38 1e38")  # fmt: skip
    rig = armatures()[0]
    before, action_before = data_state(), rig.animation_data
    assert action_before is None
    with pytest.raises(RuntimeError, match="placed beyond what a float holds"):
        import_iqe(write(tmp_path, "broken.iqe", broken))
    assert data_state() == before
    assert rig.animation_data is None or rig.animation_data.action is None


def test_iqm_animation_goes_onto_the_rig(tmp_path: Path) -> None:
    rig_path = write(tmp_path, "rig.iqe", RIG)
    iqm_path = tmp_path / "moves.iqm"
    iqm_path.write_bytes(iqm.write_iqm(iqe.load_iqe(write(tmp_path, "moves.iqe", ANIMATION))))
    expected = file_poses(tmp_path / "moves.iqe", "wave", ["root", "arm"], [1, 2])
    bpy.ops.wm.read_homefile(use_empty=True)
    assert import_iqe(rig_path) == {"FINISHED"}
    assert bpy.ops.import_scene.iqm(filepath=str(iqm_path)) == {"FINISHED"}
    (rig,) = armatures()
    np.testing.assert_allclose(pose_frames(rig, bpy.data.actions["wave"], ["root", "arm"], [1, 2]), expected,
                               atol=1e-4)  # fmt: skip


def test_exported_animation_of_the_rig_gives_the_file_back(tmp_path: Path) -> None:
    rig_path, animation_path = write(tmp_path, "rig.iqe", RIG), write(tmp_path, "moves.iqe", ANIMATION)
    assert import_iqe(rig_path, animation_path) == {"FINISHED"}
    out = tmp_path / "out.iqe"
    assert bpy.ops.export_scene.iqe(filepath=str(out), export_selected_objects=False) == {"FINISHED"}
    written, original = iqe.load_iqe(out), iqe.load_iqe(animation_path)
    names = [joint.name for joint in written.joints]
    wave = next(animation for animation in written.animations if animation.name == "wave")
    source = next(animation for animation in original.animations if animation.name == "wave")
    for name in ("root", "arm"):
        np.testing.assert_allclose(wave.frames[:, names.index(name), 0:3], source.frames[:, [j.name for j in
                                   original.joints].index(name), 0:3], atol=1e-5)  # fmt: skip


def test_iqe_animation_onto_an_smd_rig_keeps_its_euler_keys(tmp_path: Path, extension: ModuleType) -> None:
    animation_path = write(tmp_path, "moves.iqe", ANIMATION)
    expected = file_poses(animation_path, "wave", ["root", "arm"], [1, 2])
    bpy.ops.wm.read_homefile(use_empty=True)
    smd_rig, smd_animation = write(tmp_path, "rig.smd", SMD_RIG), write(tmp_path, "rig_move.smd", SMD_ANIMATION)
    assert bpy.ops.import_scene.valve_smd(directory=str(tmp_path), files=[{"name": smd_rig.name},
                                          {"name": smd_animation.name}], bone_axis="X") == {"FINISHED"}  # fmt: skip
    (rig,) = armatures()
    keyed = [rig.pose.bones["root"], rig.pose.bones["arm"]]
    assert all(bone.rotation_mode == "XYZ" for bone in keyed)  # (the SMD animation's keys)
    assert import_iqe(animation_path) == {"FINISHED"}
    assert len(armatures()) == 1
    assert all(bone.rotation_mode == "XYZ" for bone in keyed)
    action = bpy.data.actions["wave"]
    turn = extension.common.armature.joint_turn(rig)
    np.testing.assert_allclose(pose_frames(rig, action, ["root", "arm"], [1, 2], turn), expected, atol=1e-5)


def test_smd_animation_onto_an_iqe_rig_with_a_turned_bone_axis(tmp_path: Path, extension: ModuleType) -> None:
    smd_rig, smd_animation = write(tmp_path, "rig.smd", SMD_RIG), write(tmp_path, "rig_move.smd", SMD_ANIMATION)
    assert bpy.ops.import_scene.valve_smd(filepath=str(smd_rig)) == {"FINISHED"}
    assert bpy.ops.import_scene.valve_smd(filepath=str(smd_animation)) == {"FINISHED"}
    (reference,) = armatures()
    expected = pose_frames(reference, reference.animation_data.action, ["root", "arm"], [0, 1],
                           extension.common.armature.joint_turn(reference))  # fmt: skip
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.valve_smd(filepath=str(smd_rig)) == {"FINISHED"}
    out = tmp_path / "rig.iqe"
    assert bpy.ops.export_scene.iqe(filepath=str(out)) == {"FINISHED"}
    bpy.ops.wm.read_homefile(use_empty=True)
    assert import_iqe(out, bone_axis="-X") == {"FINISHED"}
    (rig,) = armatures()
    assert rig.data["iqe_bone_axis"] == "-X"
    assert bpy.ops.import_scene.valve_smd(filepath=str(smd_animation)) == {"FINISHED"}
    assert len(armatures()) == 1
    turn = extension.common.armature.joint_turn(rig)
    np.testing.assert_allclose(pose_frames(rig, rig.animation_data.action, ["root", "arm"], [0, 1], turn), expected,
                               atol=1e-5)  # fmt: skip


def numbered_animation(path: Path, source: Path) -> Path:
    """`source`'s animations as an IQM of poses without joints, as the reference compiler writes animation files."""
    document = iqe.load_iqe(source)
    document.meshes = []
    model = iqm.compile_document(document)
    model.joint_names, model.joint_parents = [], np.zeros(0, np.int32)
    model.joint_poses = np.zeros((0, 10), np.float32)
    path.write_bytes(iqm.encode_model(model))
    return path


NUMBERED = ANIMATION.replace('"tail" 0', '"hand" 1').replace("pq 0 -1 0 0 0 0 1", "pq 0 1 0 0 0 0 1")


def test_an_iqm_of_numbered_joints_goes_onto_a_rig_of_as_many_bones(tmp_path: Path, extension: ModuleType) -> None:
    """Engines match such a file's poses to the model's joints by number (the count alone is checked)."""
    animation = numbered_animation(tmp_path / "moves.iqm", write(tmp_path, "moves.iqe", NUMBERED))
    expected = file_poses(tmp_path / "moves.iqe", "wave", ["root", "arm", "hand"], [1, 2])
    bpy.ops.wm.read_homefile(use_empty=True)
    assert import_iqe(write(tmp_path, "rig.iqe", RIG)) == {"FINISHED"}
    assert bpy.ops.import_scene.iqm(filepath=str(animation)) == {"FINISHED"}
    (rig,) = armatures()
    summary = extension.common.operators.LAST_SUMMARY[0]
    assert summary.warnings == []
    assert any("joints matched by number" in note for note in summary.notes)
    assert not any("joint_0" in note for note in summary.notes)  # (no joints were made)
    np.testing.assert_allclose(pose_frames(rig, bpy.data.actions["wave"], ["root", "arm", "hand"], [1, 2]), expected,
                               atol=1e-4)  # fmt: skip


def test_numbered_joints_play_under_the_rig_s_own_parents(tmp_path: Path, extension: ModuleType) -> None:
    flat = NUMBERED.replace('joint "hand" 1', 'joint "hand" 0')  # (hand under root in the file, under arm in the rig)
    animation = numbered_animation(tmp_path / "moves.iqm", write(tmp_path, "moves.iqe", flat))
    assert import_iqe(write(tmp_path, "rig.iqe", RIG)) == {"FINISHED"}
    assert bpy.ops.import_scene.iqm(filepath=str(animation)) == {"FINISHED"}
    assert len(armatures()) == 1
    notes = extension.common.operators.LAST_SUMMARY[0].notes
    assert any("1 joint(s) hang from other joints than in armature 'rig'" in note for note in notes), notes


def test_numbered_joints_of_another_count_get_an_armature_of_their_own(tmp_path: Path, extension: ModuleType) -> None:
    animation = numbered_animation(tmp_path / "moves.iqm", write(tmp_path, "moves.iqe", ANIMATION))
    assert import_iqe(write(tmp_path, "rig.iqe", RIG.replace('joint "hand" 1\npq 0 1 0 0 0 0 1\n', "").replace(
        "vb 2 1", "vb 1 1"))) == {"FINISHED"}  # fmt: skip  (a rig of 2 bones; the file has 3 joints)
    assert bpy.ops.import_scene.iqm(filepath=str(animation)) == {"FINISHED"}
    assert len(armatures()) == 2
    assert any("no armature has as many bones as it has joints" in note
               for note in extension.common.operators.LAST_SUMMARY[0].notes)  # fmt: skip
