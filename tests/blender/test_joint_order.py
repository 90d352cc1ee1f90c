"""Engines refer to joints by index (animations in separate files, attachments, game code): a re-export keeps
the imported file's joint order, even where Blender lists the bones in another order."""

from __future__ import annotations

from pathlib import Path

import bpy

from formats import iqe
from formats.smd import read_smd

# Parent-first, but not in the depth-first order Blender lists bones in (root, arm, hand, leg, foot).
IQE_RIG = b"""# Inter-Quake Export
joint "root" -1
pq 0 0 0 0 0 0 1
joint "arm" 0
pq 0 1 0 0 0 0 1
joint "leg" 0
pq 0 -1 0 0 0 0 1
joint "hand" 1
pq 0 1 0 0 0 0 1
joint "foot" 2
pq 0 -1 0 0 0 0 1
mesh "body"
vp 0 0 0
vb 3 1
vp 1 0 0
vb 4 1
vp 0 1 0
vb 0 1
fm 0 1 2
"""
SMD_RIG = b"""version 1
nodes
0 "root" -1
1 "arm" 0
2 "leg" 0
3 "hand" 1
4 "foot" 2
end
skeleton
time 0
0 0.000000 0.000000 0.000000 0.000000 0.000000 0.000000
1 0.000000 1.000000 0.000000 0.000000 0.000000 0.000000
2 0.000000 -1.000000 0.000000 0.000000 0.000000 0.000000
3 0.000000 1.000000 0.000000 0.000000 0.000000 0.000000
4 0.000000 -1.000000 0.000000 0.000000 0.000000 0.000000
end
triangles
skin
3 0.000000 0.000000 0.000000 0.000000 0.000000 1.000000 0.000000 0.000000
4 1.000000 0.000000 0.000000 0.000000 0.000000 1.000000 1.000000 0.000000
0 0.000000 1.000000 0.000000 0.000000 0.000000 1.000000 0.000000 1.000000
end
"""
FILE_ORDER = ["root", "arm", "leg", "hand", "foot"]


def armature_order() -> list[str]:
    (armature,) = [obj for obj in bpy.context.scene.objects if obj.type == "ARMATURE"]
    return [bone.name for bone in armature.data.bones]


def test_iqe_export_keeps_the_imported_joint_order(tmp_path: Path) -> None:
    source = tmp_path / "rig.iqe"
    source.write_bytes(IQE_RIG)
    bpy.ops.import_scene.iqe(filepath=str(source))
    assert armature_order() != FILE_ORDER  # Blender's own order differs: the test means something
    out = tmp_path / "again.iqe"
    assert bpy.ops.export_scene.iqe(filepath=str(out)) == {"FINISHED"}
    joints = iqe.load_iqe(str(out)).joints
    assert [(j.name, j.parent) for j in joints] == [("root", -1), ("arm", 0), ("leg", 0), ("hand", 1), ("foot", 2)]


def test_smd_export_keeps_the_imported_node_ids(tmp_path: Path) -> None:
    source = tmp_path / "rig.smd"
    source.write_bytes(SMD_RIG)
    bpy.ops.import_scene.valve_smd(filepath=str(source))
    assert armature_order() != FILE_ORDER
    out = tmp_path / "again.smd"
    assert bpy.ops.export_scene.valve_smd(filepath=str(out)) == {"FINISHED"}
    nodes = read_smd(out.read_bytes()).nodes
    assert [(n.id, n.name, n.parent) for n in nodes] == [
        (0, "root", -1), (1, "arm", 0), (2, "leg", 0), (3, "hand", 1), (4, "foot", 2)]  # fmt: skip


def test_bones_added_in_blender_follow_the_file_order_with_parents_first(tmp_path: Path) -> None:
    source = tmp_path / "rig.iqe"
    source.write_bytes(IQE_RIG)
    bpy.ops.import_scene.iqe(filepath=str(source))
    armature = bpy.context.view_layer.objects.active
    bpy.ops.object.mode_set(mode="EDIT")
    finger = armature.data.edit_bones.new("finger")
    finger.tail = (0, 0.2, 0)
    finger.parent = armature.data.edit_bones["hand"]
    bpy.ops.object.mode_set(mode="OBJECT")
    out = tmp_path / "again.iqe"
    bpy.ops.export_scene.iqe(filepath=str(out))
    assert [j.name for j in iqe.load_iqe(str(out)).joints] == [*FILE_ORDER, "finger"]


def test_bone_names_made_unique_beforehand_are_the_ones_blender_gives(extension) -> None:  # type: ignore[no-untyped-def]
    """Bones are named before Blender sees them (its own search for a free name is quadratic in repeats): the same
    names it would give, for repeats, numbered names and names that need cutting."""
    names = ["a", "a", "a.001", "b", "a", "b.007", "b.007", "c.001", "c", "c", "c", "d.999", "d.999", "x" * 70,
             "x" * 70, "y" * 60, "y" * 60]
    armature = bpy.data.armatures.new("Names")
    obj = bpy.data.objects.new("Names", armature)
    bpy.context.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    given = [armature.edit_bones.new(name).name for name in names]
    bpy.ops.object.mode_set(mode="OBJECT")
    assert extension.common.armature.unique_bone_names(names) == [
        given[i] if len(names[i].encode()) <= 59 else names[i] for i in range(len(names))
    ]
