"""Write QC: an SMD export writes each mesh as its own SMD and the QC that builds the model; importing that QC gives
the scene back (meshes named as they were, bones, actions with their frame ranges, rates and loop flags)."""

from __future__ import annotations

from pathlib import Path

import bpy
import numpy as np
import pytest

from tests.blender.scene_helpers import chain_rig, cube, turn_keys


def rigged_scene() -> bpy.types.Object:
    """Two bones; a body and a head (with a shape key) skinned to them; two hats, alternatives in a nested
    collection; an empty on the head bone; two actions, one cyclic at 24 fps."""
    rig = chain_rig("root", "neck")
    for name, z in (("body", 0.5), ("head", 1.5)):
        mesh = cube(name, size=1.0, location=(0, 0, z))
        group = mesh.vertex_groups.new(name="root" if name == "body" else "neck")
        group.add(list(range(len(mesh.data.vertices))), 1.0, "REPLACE")
        mesh.modifiers.new("Armature", "ARMATURE").object = rig
    head = bpy.data.objects["head"]
    head.shape_key_add(name="Basis")
    smile = head.shape_key_add(name="smile")
    smile.data[0].co.z += 0.3
    model = bpy.data.collections.new("model")
    bpy.context.scene.collection.children.link(model)
    hats = bpy.data.collections.new("hats")  # (nested: a bodygroup)
    model.children.link(hats)
    for name, x in (("cap", 0.0), ("helmet", 0.3)):
        hat = cube(name, size=0.5, location=(x, 0, 2.2))
        group = hat.vertex_groups.new(name="neck")
        group.add(list(range(len(hat.data.vertices))), 1.0, "REPLACE")
        hat.modifiers.new("Armature", "ARMATURE").object = rig
        for owner in list(hat.users_collection):
            owner.objects.unlink(hat)
        hats.objects.link(hat)
    empty = bpy.data.objects.new("muzzle", None)
    bpy.context.scene.collection.objects.link(empty)
    empty.parent, empty.parent_type, empty.parent_bone = rig, "BONE", "neck"
    for name, frames, rate, cyclic in (("walk", {1: 0.0, 9: 0.8}, 24.0, True), ("nod", {3: 0.0, 7: 0.4}, None, False)):
        rig.animation_data_create()
        rig.animation_data.action = bpy.data.actions.new(name)
        turn_keys(rig, "neck", frames)
        action = rig.animation_data.action
        action.use_frame_range = True
        action.frame_start, action.frame_end = min(frames), max(frames)
        action.use_cyclic = cyclic
        if rate is not None:
            action["iqe_framerate"] = rate
    bpy.ops.object.select_all(action="DESELECT")
    return rig


@pytest.mark.parametrize("flavour", ["SOURCE", "GOLDSRC"])
def test_the_written_qc_builds_the_scene_back(flavour: str, tmp_path: Path) -> None:
    rigged_scene()
    out = tmp_path / "model.smd"
    assert bpy.ops.export_scene.valve_smd(filepath=str(out), export_mode="ALL", action_scope="ALL", write_qc=True,
                                          flavour=flavour, qc_surface_prop="metal") == {"FINISHED"}  # fmt: skip
    qc = (tmp_path / "model.qc").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["model.qc", "body.smd", "head.smd", "cap.smd", "helmet.smd", "model_walk.smd", "model_nod.smd",
         "head.vta"])  # fmt: skip  (GoldSrc's too, with a warning: it has no vertex animation)
    assert '$modelname "model.mdl"' in qc and '$bodygroup "hats"' in qc
    assert '$sequence "walk" "model_walk' in qc and " fps 24 loop" in qc
    assert ('$attachment "muzzle" "neck"' in qc) == (flavour == "SOURCE")
    assert ('$surfaceprop "metal"' in qc) == (flavour == "SOURCE")
    before = {a.name: (tuple(a.frame_range), a.get("iqe_framerate"), a.use_cyclic) for a in bpy.data.actions}
    bpy.context.scene.frame_set(1)
    muzzle_at = np.array(bpy.data.objects["muzzle"].matrix_world.translation)
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.valve_smd(filepath=str(tmp_path / "model.qc")) == {"FINISHED"}
    muzzle = bpy.data.objects["muzzle" if flavour == "SOURCE" else "attachment0"]  # (GoldSrc numbers them)
    assert (muzzle.type, muzzle.parent_type, muzzle.parent_bone) == ("EMPTY", "BONE", "neck")
    bpy.context.scene.frame_set(1)
    np.testing.assert_allclose(np.array(muzzle.matrix_world.translation), muzzle_at, atol=1e-5)
    meshes = {obj.name: len(obj.data.polygons) for obj in bpy.data.objects if obj.type == "MESH"}
    assert meshes == {"body": 12, "head": 12, "cap": 12, "helmet": 12}
    armature = next(obj for obj in bpy.data.objects if obj.type == "ARMATURE")
    assert [bone.name for bone in armature.data.bones] == ["root", "neck"]
    if flavour == "SOURCE":
        assert [key.name for key in bpy.data.objects["head"].data.shape_keys.key_blocks] == ["Basis", "smile"]
    after = {a.name: (tuple(a.frame_range), a.get("iqe_framerate"), a.use_cyclic) for a in bpy.data.actions}
    assert after["walk"][1:] == (24.0, True) and after["nod"][1] == pytest.approx(bpy.context.scene.render.fps)
    assert after["nod"][0] == before["nod"][0] and not after["nod"][2]
    assert after["walk"][0][0] == before["walk"][0][0]


def test_the_cli_writes_the_qc_and_refuses_a_build_over_its_inputs(tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    rigged_scene()
    source = tmp_path / "src"
    source.mkdir()
    assert bpy.ops.export_scene.valve_smd(filepath=str(source / "model.smd"), export_mode="ALL", action_scope="ALL",
                                          write_qc=True) == {"FINISHED"}  # fmt: skip
    qc = str(source / "model.qc")
    main = extension.cli.main
    settings = ["--set", "export_mode=ALL", "--set", "action_scope=ALL", "--set", "write_qc=True", "--jobs", "1"]
    again = str(tmp_path / "again" / "model.smd")
    assert main(["convert", qc, "-o", again, *settings], prog="iogf") == 2  # (its folder is missing)
    (tmp_path / "again").mkdir()
    assert main(["convert", qc, "-o", again, *settings], prog="iogf") == 0
    assert (tmp_path / "again" / "model.qc").read_text() == (source / "model.qc").read_text()  # (its attachment too)
    for name in ("body.smd", "head.vta", "model_walk.smd"):
        assert (tmp_path / "again" / name).is_file()
    assert main(["convert", qc, "-o", str(source / "copy.smd"), *settings], prog="iogf") == 2  # (over its inputs)


def test_the_engines_limits_are_said_before_the_files_are_written(tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    from tests.blender.scene_helpers import grid_object

    grid_object("floor", 46)  # 47 x 47 = 2,209 vertices: over GoldSrc's 2,048 per SMD
    assert bpy.ops.export_scene.valve_smd(filepath=str(tmp_path / "floor.smd"), flavour="GOLDSRC",
                                          write_qc=True) == {"FINISHED"}  # fmt: skip
    warnings = extension.common.operators.LAST_SUMMARY[0].warnings
    assert "floor.smd: 2,209 distinct vertices; GoldSrc's studiomdl takes at most 2,048 per SMD (split the mesh " \
        "into several: Split Over Limits)" in warnings  # fmt: skip
    assert bpy.ops.export_scene.valve_smd(filepath=str(tmp_path / "floor.smd")) == {"FINISHED"}  # (Source: none)
    assert not [w for w in extension.common.operators.LAST_SUMMARY[0].warnings if "studiomdl takes" in w]


def test_source_flexed_vertices_over_the_limit_are_said(tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    from tests.blender.scene_helpers import grid_object

    face = grid_object("face", 100)  # 10,201 vertices, every one moved by the shape key
    face.shape_key_add(name="Basis")
    lift = face.shape_key_add(name="lift")
    places = np.empty(3 * len(face.data.vertices), np.float32)
    face.data.vertices.foreach_get("co", places)
    places[2::3] += 0.5
    lift.data.foreach_set("co", places)
    assert bpy.ops.export_scene.valve_smd(filepath=str(tmp_path / "face.vta")) == {"FINISHED"}
    warnings = extension.common.operators.LAST_SUMMARY[0].warnings
    assert "face.vta: the shape keys move 10,201 distinct vertices; Source's studiomdl takes at most 10,000 " \
        "(MAXSTUDIOFLEXVERTS, \"Too many flexed verts\")" in warnings  # fmt: skip
    assert bpy.ops.export_scene.valve_smd(filepath=str(tmp_path / "m.smd"), export_mode="ALL",
                                          write_qc=True) == {"FINISHED"}  # fmt: skip
    assert any(w.startswith("face.vta: the shape keys move 10,201") for w in
               extension.common.operators.LAST_SUMMARY[0].warnings)  # fmt: skip


def _tri(bone: int, z: float) -> str:
    return "".join(f"{bone} {x} 0 {z} 0 -1 0 {x} 0\n" for x in (0, 1)) + f"{bone} 0 0 {z + 1} 0 -1 0 0 1\n"


def write_engine_qc(folder: Path, flavour: str) -> Path:
    """A model whose QC has what Write QC writes again: the engine's names, a blank bodygroup choice between two
    meshes, a turned attachment, a sequence's activity, and what it leaves out ($hbox, an event, LX)."""
    skeleton = 'nodes\n0 "root" -1\n1 "neck" 0\nend\nskeleton\ntime 0\n0 0 0 0 0 0 0\n1 0 0 10 0 0 0\n'
    for name, bone, z in (("body", 0, 0.0), ("cap", 1, 11.0), ("hat", 1, 12.0)):
        (folder / f"{name}.smd").write_text(f"version 1\n{skeleton}end\ntriangles\nmat\n{_tri(bone, z)}end\n")
    (folder / "walk.smd").write_text(f"version 1\n{skeleton}time 1\n0 1 0 0 0 0 0\n1 0 0 10 0 0 0.5\nend\n")
    names = ('$modelname "props/Thing.mdl"\n$cdmaterials "models\\props\\thing\\" "models/shared"\n'
             '$surfaceprop "metal"\n') if flavour == "SOURCE" else '$modelname "thing.mdl"\n$cdtexture "tex"\n'
    rotate = " rotate -90 -90 0" if flavour == "SOURCE" else ""
    label = '"muzzle"' if flavour == "SOURCE" else "0"  # (GoldSrc numbers them)
    qc = folder / "thing.qc"
    qc.write_text(f'{names}$body "body" "body"\n$bodygroup "hats"\n{{\n\tstudio "cap"\n\tblank\n\tstudio "hat"\n}}\n'
                  f'$attachment {label} "neck" 1 2 3{rotate}\n$hbox 0 "root" 0 0 0 1 1 1\n'
                  '$sequence "walk" "walk" fps 15 loop LX ACT_WALK 2 { event 1004 1 "step" }\n')  # fmt: skip
    return qc


@pytest.mark.parametrize("flavour", ["SOURCE", "GOLDSRC"])
def test_an_imported_qc_is_written_again_with_its_names_blanks_rotations_and_activities(
    flavour: str, tmp_path: Path, extension  # type: ignore[no-untyped-def]
) -> None:
    source = tmp_path / "src"
    source.mkdir()
    assert bpy.ops.import_scene.valve_smd(filepath=str(write_engine_qc(source, flavour))) == {"FINISHED"}
    muzzle = bpy.data.objects["muzzle" if flavour == "SOURCE" else "attachment0"]
    bpy.context.scene.frame_set(0)
    muzzle_at = np.array(muzzle.matrix_world)
    out = tmp_path / "out"
    out.mkdir()
    settings = {"export_mode": "ALL", "action_scope": "ALL", "write_qc": True, "flavour": flavour}
    assert bpy.ops.export_scene.valve_smd(filepath=str(out / "thing.smd"), **settings) == {"FINISHED"}
    warnings = extension.common.operators.LAST_SUMMARY[0].warnings
    qc = (out / "thing.qc").read_text()
    if flavour == "SOURCE":
        assert '$modelname "props/Thing.mdl"' in qc and '$surfaceprop "metal"' in qc
        assert '$cdmaterials "models/props/thing/"\n$cdmaterials "models/shared/"' in qc
        assert '$attachment "muzzle" "neck" 1 2 3 rotate -90 -90 0' in qc
        assert '"walk" "thing_walk.smd" fps 15 loop activity ACT_WALK 2' in qc
        assert not [w for w in warnings if "rotation" in w]
    else:
        assert '$modelname "thing.mdl"' in qc and '$cdtexture "../src/tex"' in qc and "$cdmaterials" not in qc
        assert '"walk" "thing_walk" fps 15 loop ACT_WALK 2' in qc
    assert '$bodygroup "hats"\n{\n\tstudio "cap' in qc and '"\n\tblank\n\tstudio "hat' in qc
    left_out = [w for w in warnings if "are not written to this QC" in w]
    assert len(left_out) == 1 and "$hbox" in left_out[0] and "sequence events" in left_out[0]
    assert "motion extraction" in left_out[0]
    # the export's own options win
    assert bpy.ops.export_scene.valve_smd(filepath=str(out / "thing.smd"), qc_model_name="other.mdl",
                                          qc_materials="a;b", qc_surface_prop="wood", **settings) == {"FINISHED"}
    qc = (out / "thing.qc").read_text()
    assert '$modelname "other.mdl"' in qc
    assert ('$cdmaterials "a"\n$cdmaterials "b"' in qc and '$surfaceprop "wood"' in qc) == (flavour == "SOURCE")
    # the round trip gives the attachment back where it was, turned as it was (GoldSrc: its place)
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.valve_smd(filepath=str(out / "thing.qc")) == {"FINISHED"}
    again = bpy.data.objects["muzzle" if flavour == "SOURCE" else "attachment0"]
    bpy.context.scene.frame_set(0)
    np.testing.assert_allclose(np.array(again.matrix_world), muzzle_at, atol=1e-5)
    assert [(o.name, o.users_collection[0].name) for o in bpy.data.objects if o.type == "MESH"] == [
        ("body", "Scene Collection"), ("cap", "hats"), ("hat", "hats")]  # fmt: skip


def test_goldsrc_says_an_attachment_rotation_is_not_written(tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    rigged_scene()
    bpy.data.objects["muzzle"].rotation_euler = (0.0, 0.0, 0.5)
    for flavour in ("SOURCE", "GOLDSRC"):
        assert bpy.ops.export_scene.valve_smd(filepath=str(tmp_path / "m.smd"), write_qc=True,
                                              flavour=flavour) == {"FINISHED"}  # fmt: skip
        said = [w for w in extension.common.operators.LAST_SUMMARY[0].warnings if "rotation" in w]
        assert len(said) == (flavour == "GOLDSRC")
        assert ("rotate" in (tmp_path / "m.qc").read_text()) == (flavour == "SOURCE")
