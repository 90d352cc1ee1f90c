"""The command line refuses a mistake before doing any work, in one line with exit code 2 (run in this process:
nothing is imported, the scene keeps its sentinel object, and no file is written)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import bpy
import pytest

from tests import joe_fixtures as fx
from tests.blender.scene_helpers import cube

MISTAKES = [
    (["convert", "{model}", "--to", "iqe", "-o", "{out}/x.joe"], "x.joe has the extension of joe files, not iqe"),
    (["convert", "{model}", "--to", "obj", "-o", "{out}/x.obj"], "unknown format 'obj'"),
    (["convert", "{model}", "-o", "{out}/x.obj"], "unknown file type .obj"),
    (["convert", "{model}", "--to", "iqe", "-o", "{out}/x.txt"], "a iqe file should end with .iqe"),
    (["convert", "{model}", "-o", "{out}/x.qc"], "qc files cannot be written"),
    (["convert", "{model}", "--to", "qc", "-d", "{out}"], "qc files cannot be written"),
    (["convert", "{model}", "-d", "{out}"], "--to is needed with -d"),
    (["convert", "{model}", "-o", "{out}/x.iqe", "--set", "scale"], "--set needs KEY=VALUE, got 'scale'"),
    (["convert", "{model}", "-o", "{out}/x.iqe", "--set", "bogus=1"],
     "--set bogus: not an option of the exporter export_scene.iqe; valid: apply_modifiers, "),
    (["convert", "{model}", "-o", "{out}/x.iqe", "--set", "global_scale=big"],
     "--set global_scale='big': the exporter export_scene.iqe expects float"),
    (["convert", "{model}", "-o", "{out}/x.iqe", "--set", "export_scope=ALL"],
     "--set export_scope='ALL': the exporter export_scene.iqe expects one of SELECTED|VISIBLE|SCENE"),
    (["convert", "{model}", "-o", "{out}/x.iqe", "--import-set", "rewind_clockwise=1"],
     "--import-set rewind_clockwise=1: the importer import_scene.joe expects bool"),
    (["convert", "{model}", "-o", "{out}/x.iqe", "--import-set", "nope=1"],
     "--import-set nope: not an option of the importer import_scene.joe; valid: "),
    (["convert", "{out}/missing.joe", "-o", "{out}/x.iqe"], "missing.joe: no such file"),
    (["import", "{model}", "-o", "{out}/scene.joe"], "scene.joe: the scene is saved as a .blend file"),
    (["export", "{out}/missing.blend", "-o", "{out}/x.iqe"], "missing.blend: no such file"),
    (["options", "obj"], "unknown format 'obj'"),
]  # fmt: skip


@pytest.mark.parametrize(("arguments", "message"), MISTAKES, ids=[" ".join(a[:1] + a[2:4]) for a, _ in MISTAKES])
def test_a_mistake_is_refused_before_any_work_with_exit_code_2(
    arguments: list[str], message: str, tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "box.joe"
    model.write_bytes(fx.cube_bytes())
    out = tmp_path / "out"
    out.mkdir()
    sentinel = cube("Sentinel")
    argv = [a.format(model=model, out=out) for a in arguments]
    assert extension.cli.main(argv, prog="iogf") == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("iogf: error: ") and message in line, line
    assert list(bpy.context.scene.objects) == [sentinel]
    assert list(out.iterdir()) == []


def test_options_lists_each_option_with_type_default_and_description(
    extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert extension.cli.main(["options", "smd"], prog="iogf") == 0
    text = capsys.readouterr().out
    assert "smd import options" in text and "smd export options" in text
    assert "  flavour = 'SOURCE'  (one of SOURCE|GOLDSRC)" in text
    assert "  use_custom_normals = True  (bool)\n      Use the file's normals as custom split normals" in text
    assert "filepath" not in text and "filter_glob" not in text
    assert extension.cli.main(["options", "qc"], prog="iogf") == 0
    assert "qc: no export" in capsys.readouterr().out


def test_known_options_of_the_right_type_are_accepted(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "box.joe"
    model.write_bytes(fx.cube_bytes())
    out = tmp_path / "box.iqe"
    argv = ["convert", str(model), "-o", str(out), "--set", "global_scale=2", "--import-set", "rewind_clockwise=False"]
    assert extension.cli.main(argv, prog="iogf") == 0
    assert out.is_file()
    assert capsys.readouterr().out.splitlines()[-1] == f"1 file(s) -> {out}"
