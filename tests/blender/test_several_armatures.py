"""Several armatures in one IQE, IQM or SMD export (a file holds one skeleton): their bones are written as one
skeleton, a bone of one name shared where it stands alike (static props' `root`), the armatures other than the
animated one at rest; bones of one name standing differently, and several armatures with animations of their own,
are refused naming them."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import bpy
import numpy as np
import pytest

from formats import iqe, iqm, smd
from tests.blender.scene_helpers import cube, turn_keys

EXPORTS = {".iqe": bpy.ops.export_scene.iqe, ".iqm": bpy.ops.export_scene.iqm, ".smd": bpy.ops.export_scene.valve_smd}


def prop(name: str, bone: str, location: tuple[float, float, float]) -> bpy.types.Object:
    """A cube skinned wholly to the one bone of its own armature, both standing at `location`."""
    bpy.ops.object.armature_add(location=location)
    armature = bpy.context.active_object
    armature.name = f"{name}_rig"
    armature.data.bones[0].name = bone
    mesh = cube(name, size=1.0, location=location)
    group = mesh.vertex_groups.new(name=bone)
    group.add(list(range(len(mesh.data.vertices))), 1.0, "REPLACE")
    mesh.modifiers.new("Armature", "ARMATURE").object = armature
    mesh.parent = armature
    mesh.matrix_parent_inverse = armature.matrix_world.inverted()
    return armature


def read(path: Path) -> tuple[list[str], dict[str, np.ndarray]]:
    """The file's bone names and, per bone, the positions of the vertices wholly on it."""
    if path.suffix == ".smd":
        document = smd.load_smd(path)
        names = [node.name for node in document.nodes]
        triangles = document.triangles
        counts = triangles.link_counts.reshape(-1)
        first_link = triangles.link_bones[np.minimum(triangles.link_offsets()[:-1], len(triangles.link_bones) - 1)]
        bones = np.where(counts > 0, first_link, triangles.parent_bones.reshape(-1))
        positions = triangles.positions.reshape(-1, 3)
        return names, {names[b]: positions[bones == b] for b in np.unique(bones)}
    loaded = iqe.load_iqe(path) if path.suffix == ".iqe" else iqm.load_iqm(path)
    names = [joint.name for joint in loaded.joints]
    by_bone: dict[str, list[np.ndarray]] = {}
    for mesh in loaded.meshes:
        first = np.asarray(mesh.blend_indices)[:, 0]
        for joint in np.unique(first):
            by_bone.setdefault(names[joint], []).append(np.asarray(mesh.positions)[first == joint])
    return names, {name: np.concatenate(parts) for name, parts in by_bone.items()}


@pytest.mark.parametrize("suffix", EXPORTS)
def test_static_props_of_their_own_armatures_export_as_one_skeleton(suffix: str, tmp_path: Path) -> None:
    prop("Crate", "crate_bone", (0, 0, 0))
    prop("Barrel", "barrel_bone", (5, 0, 0))
    out = tmp_path / f"props{suffix}"
    assert EXPORTS[suffix](filepath=str(out)) == {"FINISHED"}
    names, on_bone = read(out)
    assert names == ["crate_bone", "barrel_bone"] or names == ["barrel_bone", "crate_bone"]
    assert np.allclose(on_bone["crate_bone"][:, 0].mean(), 0.0, atol=1e-5)
    assert np.allclose(on_bone["barrel_bone"][:, 0].mean(), 5.0, atol=1e-5)


@pytest.mark.parametrize("suffix", EXPORTS)
def test_a_bone_of_one_name_standing_alike_is_shared_and_standing_otherwise_is_refused(
    suffix: str, tmp_path: Path
) -> None:
    prop("Crate", "root", (0, 0, 0))
    barrel = prop("Barrel", "root", (0, 0, 0))
    out = tmp_path / f"props{suffix}"
    assert EXPORTS[suffix](filepath=str(out)) == {"FINISHED"}
    names, on_bone = read(out)
    assert names == ["root"] and len(on_bone["root"]) > 0
    barrel.location = (5, 0, 0)
    bpy.context.view_layer.update()
    with pytest.raises(RuntimeError, match="both have a bone 'root', standing differently"):
        EXPORTS[suffix](filepath=str(out))


@pytest.mark.parametrize("suffix", [".iqe", ".smd"])
def test_the_animated_armature_moves_and_the_others_stay_at_rest(suffix: str, tmp_path: Path) -> None:
    rig = prop("Arm", "arm_bone", (0, 0, 0))
    turn_keys(rig, "arm_bone", {1: 0.0, 5: 1.0})
    prop("Crate", "crate_bone", (5, 0, 0))
    out = tmp_path / f"both{suffix}"
    options = {"export_mode": "ALL"} if suffix == ".smd" else {}
    assert EXPORTS[suffix](filepath=str(out), **options) == {"FINISHED"}
    bpy.ops.wm.read_homefile(use_empty=True)
    importer = bpy.ops.import_scene.iqe if suffix == ".iqe" else bpy.ops.import_scene.valve_smd
    files = sorted(p.name for p in tmp_path.iterdir())
    assert importer(directory=str(tmp_path), files=[{"name": name} for name in files]) == {"FINISHED"}
    armature = next(obj for obj in bpy.context.scene.objects if obj.type == "ARMATURE")
    action = next(a for a in bpy.data.actions)
    armature.animation_data.action = action
    for frame, angle in ((1, 0.0), (5, 1.0)):
        bpy.context.scene.frame_set(frame)
        arm, crate = armature.pose.bones["arm_bone"], armature.pose.bones["crate_bone"]
        assert (arm.bone.matrix_local.inverted() @ arm.matrix).to_euler().x == pytest.approx(angle, abs=1e-4)
        assert np.allclose(np.array(crate.matrix), np.array(crate.bone.matrix_local), atol=1e-4)


@pytest.mark.parametrize("suffix", [".iqe", ".smd"])
def test_several_armatures_with_animations_of_their_own_are_refused(suffix: str, tmp_path: Path) -> None:
    first, second = prop("A", "a_bone", (0, 0, 0)), prop("B", "b_bone", (5, 0, 0))
    turn_keys(first, "a_bone", {1: 0.0, 5: 1.0})
    turn_keys(second, "b_bone", {1: 0.0, 9: 1.0})
    options = {"export_mode": "ALL"} if suffix == ".smd" else {}
    with pytest.raises(RuntimeError, match="several armatures with animations of their own \\('A_rig', 'B_rig'\\)"):
        EXPORTS[suffix](filepath=str(tmp_path / f"x{suffix}"), **options)
    # Without the animations, the two are one skeleton at rest.
    options = {"export_mode": "REFERENCE"} if suffix == ".smd" else {"export_animations": "NONE"}
    assert EXPORTS[suffix](filepath=str(tmp_path / f"x{suffix}"), **options) == {"FINISHED"}


STATIC_SMD = """version 1
nodes
0 "{bone}" -1
end
skeleton
time 0
0 {x} 0 0 0 0 0
end
triangles
mat
0 {x} 0 0 0 0 1 0 0
0 {x1} 0 0 0 0 1 1 0
0 {x} 1 0 0 0 1 0 1
end
"""


def test_cli_converts_static_smds_of_different_skeletons_into_one_iqe(tmp_path: Path, extension: ModuleType) -> None:
    for name, bone, x in (("crate", "static_prop", 0), ("barrel", "joint0", 4)):
        (tmp_path / f"{name}.smd").write_text(STATIC_SMD.format(bone=bone, x=x, x1=x + 1))
    out = tmp_path / "props.iqe"
    argv = ["convert", str(tmp_path / "crate.smd"), str(tmp_path / "barrel.smd"), "-o", str(out)]
    assert extension.cli.main(argv, prog="iogf") == 0
    names, on_bone = read(out)
    assert sorted(names) == ["joint0", "static_prop"]
    assert on_bone["joint0"][:, 0].min() == pytest.approx(4.0)
    assert on_bone["static_prop"][:, 0].min() == pytest.approx(0.0)
