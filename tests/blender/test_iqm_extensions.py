"""FTE's IQM extensions and DarkPlaces framegroups through Blender: FTE_MESH and FTE_SKINS as custom properties of
the mesh objects, FTE_EVENT as pose markers of the actions, framegroups as one action per group; exported back
from the same places."""

from __future__ import annotations

from pathlib import Path

import bpy
import numpy as np
import pytest

from formats import iqm
from formats.iqe.document import IqeEvent
from formats.iqm.extensions import IqmExtensions
from tests.blender.conftest import data_state
from tests.unit.test_iqm_extensions import CORPUS, FTE_FILE, NUCLIDE_FILE, XONOTIC, assert_fte_reads, fte_document


def by_names(model: iqm.IqmModel) -> dict[str, object]:
    """The model's FTE values keyed by mesh and animation names (an export may order them differently)."""
    sections: IqmExtensions = model.extensions
    meshes = [f"{mesh.name}/{mesh.material}" for mesh in model.meshes]
    return {
        "meshes": dict(zip(meshes, sections.fte_meshes or [], strict=False)),
        "skins": dict(zip(meshes, sections.fte_skins or [], strict=False)),
        "events": sorted((model.anims[e.anim].name, e.time, e.code, e.data) for e in sections.fte_events),
    }


def export_model(path: Path, **options: object) -> iqm.IqmModel:
    bpy.ops.object.select_all(action="SELECT")
    assert bpy.ops.export_scene.iqm(filepath=str(path), **options) == {"FINISHED"}
    return iqm.read_iqm_model(path.read_bytes())


def test_fte_values_import_as_properties_and_markers_and_export_back_the_same(tmp_path: Path) -> None:
    source = tmp_path / "fte.iqm"
    source.write_bytes(iqm.write_iqm(fte_document()))
    assert bpy.ops.import_scene.iqm(filepath=str(source), merge_by_name=False) == {"FINISHED"}
    skin, metal = bpy.data.objects["body"], bpy.data.objects["body.001"]
    assert (skin["fte_contents"], skin["fte_surfaceflags"], skin["fte_body"], skin["fte_geomset"]) == (1, 0x80, 3, 2)
    assert (skin["fte_mindist"], skin["fte_maxdist"]) == (0.5, 250.25)
    assert metal["fte_geomset"] == -1 and "fte_skins" not in skin  # (0xFFFFFFFF, as a 32-bit signed property)
    assert [s["frames"][0]["material"] for s in metal["fte_skins"]] == ["metal_0", "rust"]
    idle = bpy.data.actions["idle"]
    assert sorted((m.name, m.frame) for m in idle.pose_markers) == [("footstep left", 2), ("sound/step.wav", 3)]
    assert [e["code"] for e in idle["fte_events"]] == [7, 8]
    exported = export_model(tmp_path / "back.iqm")
    assert by_names(exported) == by_names(iqm.read_iqm_model(source.read_bytes()))
    assert_fte_reads((tmp_path / "back.iqm").read_bytes())


def test_a_moved_marker_keeps_its_code_and_a_new_one_has_code_0(tmp_path: Path) -> None:
    source = tmp_path / "fte.iqm"
    document = fte_document()
    document.animations[0].events.append(IqeEvent(1e30, 5, "far"))  # (beyond Blender's last frame: kept)
    source.write_bytes(iqm.write_iqm(document))
    bpy.ops.import_scene.iqm(filepath=str(source))
    idle = bpy.data.actions["idle"]
    next(m for m in idle.pose_markers if m.name == "sound/step.wav").frame = 4
    idle.pose_markers.new("land").frame = 1
    events = by_names(export_model(tmp_path / "edited.iqm"))["events"]
    assert [(name, round(t, 6), code, data) for name, t, code, data in events if name == "idle"] == [
        ("idle", 0.0, 0, "land"), ("idle", 0.1, 7, "footstep left"), ("idle", 0.3, 8, "sound/step.wav")]  # fmt: skip
    assert ("wave", float(np.float32(1e30)), 5, "far") in events


@pytest.mark.skipif(not FTE_FILE.is_file(), reason="the FTE iqmtool file of /work/corpus/iqm_ext is not here")
def test_a_file_of_ftes_iqmtool_round_trips_through_blender(tmp_path: Path) -> None:
    assert bpy.ops.import_scene.iqm(filepath=str(FTE_FILE)) == {"FINISHED"}
    drill = bpy.data.objects["drill"]
    assert (drill["fte_contents"], drill["fte_surfaceflags"], drill["fte_body"], drill["fte_geomid"]) == (
        0x02000000, 0x80, 3, 2)  # fmt: skip
    assert sorted((m.name, m.frame) for m in bpy.data.actions["idle"].pose_markers) == [
        ("footstep left", 6), ("sound/drill.wav", 13)]  # fmt: skip
    exported = export_model(tmp_path / "drill.iqm")
    assert by_names(exported) == by_names(iqm.read_iqm_model(FTE_FILE.read_bytes()))


@pytest.mark.skipif(not NUCLIDE_FILE.is_file(), reason="Nuclide's logo.iqm of /work/corpus/iqm_ext is not here")
def test_a_public_file_of_ftes_iqmtool_round_trips_through_blender(tmp_path: Path) -> None:
    assert bpy.ops.import_scene.iqm(filepath=str(NUCLIDE_FILE)) == {"FINISHED"}
    (obj,) = [obj for obj in bpy.data.objects if obj.type == "MESH"]
    assert (obj["fte_contents"], obj["fte_geomset"], obj["fte_body"]) == (0x02000000, -1, 0)
    exported = export_model(tmp_path / "logo.iqm")
    assert by_names(exported) == by_names(iqm.read_iqm_model(NUCLIDE_FILE.read_bytes()))


def test_several_actions_write_framegroups_beside_the_file_and_import_splits_by_them(tmp_path: Path) -> None:
    source = tmp_path / "fte.iqm"
    source.write_bytes(iqm.write_iqm(fte_document()))
    bpy.ops.import_scene.iqm(filepath=str(source))
    out = tmp_path / "out.iqm"
    export_model(out, export_animations="ALL")
    groups = Path(iqm.framegroups_path(str(out)))
    assert groups.read_text() == "0 1 30 0 // wave\n1 3 10 1 // idle\n"
    groups.write_text("0 2 15 0 // start\n2 2 10 1 // end\n")
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.iqm(filepath=str(out)) == {"FINISHED"}
    assert sorted(a.name for a in bpy.data.actions) == ["end", "start"]
    assert bpy.data.actions["start"]["iqe_framerate"] == 15.0 and bpy.data.actions["end"].use_cyclic
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.iqm(filepath=str(out), use_framegroups=False) == {"FINISHED"}
    assert sorted(a.name for a in bpy.data.actions) == ["idle", "wave"]


def test_framegroups_are_written_only_for_several_animations_and_when_asked(tmp_path: Path) -> None:
    source = tmp_path / "fte.iqm"
    source.write_bytes(iqm.write_iqm(fte_document()))
    bpy.ops.import_scene.iqm(filepath=str(source))
    export_model(tmp_path / "off.iqm", export_animations="ALL", write_framegroups=False)
    export_model(tmp_path / "one.iqm", export_animations="ACTIVE")
    assert not list(tmp_path.glob("*.framegroups"))


@pytest.mark.skipif(not FTE_FILE.is_file() or not XONOTIC, reason="the real files of /work/corpus/iqm_ext are not here")
def test_a_real_framegroups_file_gives_actions_that_export_back_as_the_same_groups(tmp_path: Path) -> None:
    model_path = tmp_path / "h_crylink.iqm"
    model_path.write_bytes(FTE_FILE.read_bytes())
    text = (CORPUS / "xonotic" / "h_crylink.iqm.framegroups").read_text()  # 4 groups over frames 1..254
    Path(iqm.framegroups_path(str(model_path))).write_text(text)
    assert bpy.ops.import_scene.iqm(filepath=str(model_path)) == {"FINISHED"}
    assert sorted(a.name for a in bpy.data.actions) == ["h_crylink fire", "h_crylink fire.001", "h_crylink idle",
                                                        "h_crylink idle.001"]  # fmt: skip
    out = tmp_path / "out.iqm"
    export_model(out, export_animations="ALL")
    written = iqm.parse_framegroups(Path(iqm.framegroups_path(str(out))).read_text())
    expected = iqm.parse_framegroups(text)
    assert sorted((g.frame_count, g.fps, g.loop) for g in written) == sorted(
        (g.frame_count, g.fps, g.loop) for g in expected)  # fmt: skip
    assert sum(g.frame_count for g in written) == len(iqm.read_iqm_model(out.read_bytes()).frames)


def test_a_framegroups_file_that_is_not_one_fails_the_import_and_changes_nothing(tmp_path: Path) -> None:
    source = tmp_path / "fte.iqm"
    source.write_bytes(iqm.write_iqm(fte_document()))
    Path(iqm.framegroups_path(str(source))).write_text("0 2 15 0 // start\n2 two 10 1 // end\n")
    before = data_state()
    with pytest.raises(RuntimeError, match="line 2"):
        bpy.ops.import_scene.iqm(filepath=str(source))
    assert data_state() == before
    assert bpy.ops.import_scene.iqm(filepath=str(source), use_framegroups=False) == {"FINISHED"}
