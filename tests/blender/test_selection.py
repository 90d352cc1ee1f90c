"""Imports select what they made and make the main object active, as Blender's OBJ and glTF importers do, so that
an export with its default scope (the selection) works right after an import."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import bpy
import pytest

from qmap_compiler import compile_bytes
from tests import joe_fixtures as fx
from tests.blender.scene_helpers import cube
from tests.unit.test_structured_fuzz import IQE_FIXTURE, QMAP_FIXTURE, SMD_FIXTURE

Importer = Callable[..., set[str]]
CASES: dict[str, tuple[str, Callable[[], bytes], Importer, str]] = {
    # name: (file name, its bytes, importer, type of the main object)
    "joe": ("car.joe", fx.cube_bytes, bpy.ops.import_scene.joe, "MESH"),
    "jpk": ("parts.jpk", lambda: fx.pack_of({"a.joe": fx.cube_bytes(), "b.joe": fx.cube_bytes()}),
            bpy.ops.import_scene.joe, "MESH"),
    "smd": ("rig.smd", lambda: SMD_FIXTURE.replace(b"time 2\n1 1.000000 2.000000 0.000000 0.000000 0.000000 "
                                                   b"0.000000\n", b""), bpy.ops.import_scene.valve_smd, "ARMATURE"),
    "iqe": ("rig.iqe", lambda: IQE_FIXTURE, bpy.ops.import_scene.iqe, "ARMATURE"),
    "qmap_tmp": ("room.qmap.tmp", lambda: QMAP_FIXTURE, bpy.ops.import_scene.qmap_tmp, "MESH"),
    "qmap": ("room.qmap", lambda: compile_bytes(QMAP_FIXTURE), bpy.ops.import_scene.qmap, "MESH"),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_import_selects_what_it_made_and_activates_the_main_object(case: str, tmp_path: Path) -> None:
    name, data, importer, main_type = CASES[case]
    before = cube("Before")
    before.select_set(True)
    path = tmp_path / name
    path.write_bytes(data())
    assert importer(filepath=str(path)) == {"FINISHED"}
    created = [obj for obj in bpy.context.scene.objects if obj != before]
    assert created and not before.select_get()
    assert all(obj.select_get() for obj in created)
    active = bpy.context.view_layer.objects.active
    assert active in created and active.type == main_type
    if main_type == "ARMATURE":
        assert any(obj.type == "MESH" and obj.parent == active for obj in created)


EXPORTS = {"joe": bpy.ops.export_scene.joe, "smd": bpy.ops.export_scene.valve_smd, "iqe": bpy.ops.export_scene.iqe}


@pytest.mark.parametrize("case", EXPORTS)
def test_an_export_with_default_options_right_after_an_import_writes_what_was_imported(
    case: str, tmp_path: Path
) -> None:
    name, data, importer, _ = CASES[case]
    cube("Unrelated")  # selected, until the import
    path = tmp_path / name
    path.write_bytes(data())
    importer(filepath=str(path))
    out = tmp_path / f"again{path.suffix}"
    assert EXPORTS[case](filepath=str(out)) == {"FINISHED"}
    assert out.stat().st_size > 0


def test_the_main_object_is_the_first_made_not_the_first_by_name(tmp_path: Path) -> None:
    """bpy.data lists objects by name: a pack whose first member sorts last still makes that member active."""
    path = tmp_path / "parts.jpk"
    path.write_bytes(fx.pack_of({"zz_body.joe": fx.cube_bytes(), "aa_wheel.joe": fx.cube_bytes()}))
    assert bpy.ops.import_scene.joe(filepath=str(path)) == {"FINISHED"}
    assert bpy.context.view_layer.objects.active.name.startswith("zz_body")


ALL_EXPORTS = {
    "joe": (bpy.ops.export_scene.joe, ".joe"), "jpk": (bpy.ops.export_scene.jpk, ".jpk"),
    "smd": (bpy.ops.export_scene.valve_smd, ".smd"), "iqe": (bpy.ops.export_scene.iqe, ".iqe"),
    "iqm": (bpy.ops.export_scene.iqm, ".iqm"), "qmap_tmp": (bpy.ops.export_scene.qmap_tmp, ".qmap.tmp"),
}  # fmt: skip


@pytest.mark.parametrize("case", ALL_EXPORTS)
def test_exports_write_the_visible_objects_unless_selected_only(extension, case: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """As Blender's own exporters: the visible objects by default, with nothing selected too; Selected Only (and
    the option's former name, which scripts and presets still set) the selection."""
    summary = extension.common.operators.LAST_SUMMARY
    chosen, other, hidden = cube("Chosen"), cube("Other", location=(3, 0, 0)), cube("Hidden", location=(6, 0, 0))
    hidden.hide_set(True)
    bpy.ops.object.select_all(action="DESELECT")
    exporter, suffix = ALL_EXPORTS[case]
    out = tmp_path / f"scene{suffix}"
    assert exporter(filepath=str(out)) == {"FINISHED"}  # (nothing selected)
    assert summary[0].faces == 24 if case != "qmap_tmp" else summary[0].objects == 2
    chosen.select_set(True)
    for options in ({"export_selected_objects": True}, {"export_scope": "SELECTED"}):
        assert exporter(filepath=str(out), **options) == {"FINISHED"}
        assert summary[0].faces == 12 if case != "qmap_tmp" else summary[0].objects == 1
    del other
