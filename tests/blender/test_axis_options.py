"""Forward Axis and Up Axis are named and valued as Blender's OBJ options (`forward_axis`, `up_axis`: X ...
NEGATIVE_Z) on every importer and exporter that has them; their former names (`axis_forward`, `axis_up`: X ... -Z)
are still read from scripts, saved presets and the CLI's `--set`."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import bpy
import numpy as np
import pytest

from tests.blender.scene_helpers import mesh_object

AXIS_OPERATORS = (
    "import_scene.iqe", "import_scene.iqm", "import_scene.joe",
    "export_scene.iqe", "export_scene.iqm", "export_scene.joe", "export_scene.jpk",
)  # fmt: skip
EXPORTS = {"iqe": bpy.ops.export_scene.iqe, "iqm": bpy.ops.export_scene.iqm, "joe": bpy.ops.export_scene.joe}
IMPORTS = {"iqe": bpy.ops.import_scene.iqe, "iqm": bpy.ops.import_scene.iqm, "joe": bpy.ops.import_scene.joe}


def rna_properties(idname: str) -> bpy.types.bpy_prop_collection:
    module, name = idname.split(".")
    return getattr(getattr(bpy.ops, module), name).get_rna_type().properties


@pytest.mark.parametrize("idname", AXIS_OPERATORS)
def test_axis_options_are_named_and_valued_as_blenders_obj_options(idname: str) -> None:
    ours, obj = rna_properties(idname), rna_properties("wm.obj_export")
    for name in ("forward_axis", "up_axis"):
        assert ours[name].name == obj[name].name
        assert ours[name].enum_items.keys() == obj[name].enum_items.keys()
    assert (ours["forward_axis"].default, ours["up_axis"].default) == ("Y", "Z")  # the formats' own axes
    assert ours["axis_forward"].is_hidden and ours["axis_up"].is_hidden


def a_point() -> bpy.types.Object:
    """One triangle whose first corner stands at (1, 2, 3)."""
    obj = mesh_object("Tri", [(1, 2, 3), (1, 3, 3), (2, 2, 3)], [(0, 1, 2)])
    obj.select_set(True)
    return obj


def first_corner_after_import(path: Path, fmt: str, **options: object) -> np.ndarray:
    bpy.ops.wm.read_homefile(use_empty=True)
    assert IMPORTS[fmt](filepath=str(path), **options) == {"FINISHED"}
    mesh = next(obj for obj in bpy.context.scene.objects if obj.type == "MESH")
    return np.array([mesh.matrix_world @ v.co for v in mesh.data.vertices])


@pytest.mark.parametrize("fmt", EXPORTS)
def test_axes_turn_the_file_and_the_former_names_write_the_same_bytes(fmt: str, tmp_path: Path) -> None:
    a_point()
    new, old, plain = tmp_path / f"new.{fmt}", tmp_path / f"old.{fmt}", tmp_path / f"plain.{fmt}"
    assert EXPORTS[fmt](filepath=str(new), forward_axis="NEGATIVE_Z", up_axis="Y") == {"FINISHED"}
    assert EXPORTS[fmt](filepath=str(old), axis_forward="-Z", axis_up="Y") == {"FINISHED"}
    assert EXPORTS[fmt](filepath=str(plain)) == {"FINISHED"}
    assert new.read_bytes() == old.read_bytes() != plain.read_bytes()
    # Read back without turning: Blender's Y (forward) was written as -Z, its Z (up) as Y.
    written = first_corner_after_import(new, fmt)
    assert np.allclose(sorted(map(tuple, written)), sorted([(1, 3, -2), (1, 3, -3), (2, 3, -2)]), atol=1e-5)
    # Read back with the same axes, new or former names: the scene as it was.
    for options in ({"forward_axis": "NEGATIVE_Z", "up_axis": "Y"}, {"axis_forward": "-Z", "axis_up": "Y"}):
        back = first_corner_after_import(new, fmt, **options)
        assert np.allclose(sorted(map(tuple, back)), sorted([(1, 2, 3), (1, 3, 3), (2, 2, 3)]), atol=1e-5)


def test_one_axis_for_both_is_refused_naming_them(tmp_path: Path) -> None:
    """(The options themselves turn the other axis when one is set to it, as Blender's OBJ options do; the former
    names are plain text.)"""
    a_point()
    out = tmp_path / "x.iqe"
    with pytest.raises(RuntimeError, match="Forward Axis Z and Up Axis Z are one axis"):
        bpy.ops.export_scene.iqe(filepath=str(out), axis_forward="Z", axis_up="Z")
    with pytest.raises(RuntimeError, match=re.escape("axis 'W': one of X|Y|Z|-X|-Y|-Z")):
        bpy.ops.export_scene.iqe(filepath=str(out), axis_forward="W")
    assert not out.exists()


def test_the_former_names_are_read_by_the_cli_with_a_note(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    a_point()
    scene = tmp_path / "scene.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(scene))
    new, old = tmp_path / "new.iqe", tmp_path / "old.iqe"
    main = extension.cli.main
    assert main(["export", str(scene), "-o", str(new), "--set", "forward_axis=NEGATIVE_Z", "--set", "up_axis=Y"],
                prog="iogf") == 0  # fmt: skip
    assert main(["export", str(scene), "-o", str(old), "--set", "axis_forward=-Z", "--set", "axis_up=Y"],
                prog="iogf") == 0  # fmt: skip
    err = capsys.readouterr().err
    assert "note: --set axis_forward is now forward_axis: forward_axis=NEGATIVE_Z" in err
    assert "note: --set axis_up is now up_axis: up_axis=Y" in err
    assert new.read_bytes() == old.read_bytes()
    assert main(["export", str(scene), "-o", str(tmp_path / "bad.iqe"), "--set", "axis_up=W"], prog="iogf") == 2
    assert "--set axis_up='W': axis 'W': one of X|Y|Z|-X|-Y|-Z (the former name of up_axis)" in capsys.readouterr().err
