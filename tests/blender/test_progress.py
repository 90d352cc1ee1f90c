"""Long imports and exports move Blender's progress cursor a step per file and per object or action, and tell
listeners what each step works on; the command line prints a line per file on a terminal, none when piped."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import bpy
import pytest

from tests import joe_fixtures as fx
from tests.blender.scene_helpers import chain_rig, cube, turn_keys


def steps_of(extension: ModuleType, work: object) -> list[tuple[int, int, str, str]]:
    seen: list[tuple[int, int, str, str]] = []
    progress = extension.common.progress
    with progress.listening(lambda step: seen.append((step.done, step.total, step.kind, step.label))):
        assert work() == {"FINISHED"}  # type: ignore[operator]
    return seen


def joe_files(folder: Path, *names: str) -> list[Path]:
    paths = [folder / name for name in names]
    for path in paths:
        path.write_bytes(fx.cube_bytes())
    return paths


def test_an_import_steps_through_reading_and_building_each_file(tmp_path: Path, extension: ModuleType) -> None:
    paths = joe_files(tmp_path, "a.joe", "b.joe", "c.joe")
    files = [{"name": path.name} for path in paths]
    seen = steps_of(extension, lambda: bpy.ops.import_scene.joe(directory=str(tmp_path), files=files))
    assert [(done, total, label) for done, total, kind, label in seen if kind == "file"] == [
        (number, 3, str(path)) for number, path in enumerate(paths, 1)
    ]
    stages = [(done, total) for done, total, kind, _ in seen if kind == "stage"]
    assert stages == [(step, 6) for step in range(1, 7)]


def test_exports_step_through_their_objects_and_actions(tmp_path: Path, extension: ModuleType) -> None:
    for name, x in (("Left", 0), ("Middle", 3), ("Right", 6)):
        cube(name, location=(x, 0, 0))
    seen = steps_of(extension, lambda: bpy.ops.export_scene.jpk(filepath=str(tmp_path / "parts.jpk")))
    assert seen == [(1, 3, "stage", "Left"), (2, 3, "stage", "Middle"), (3, 3, "stage", "Right")]

    bpy.ops.wm.read_homefile(use_empty=True)
    rig = chain_rig("root", "arm")
    for name, angle in (("wave", 1.0), ("nod", 0.5)):
        rig.animation_data_create()
        rig.animation_data.action = bpy.data.actions.new(name)
        turn_keys(rig, "arm", {1: 0.0, 5: angle})
    body = cube("Body")
    body.modifiers.new("Armature", "ARMATURE").object = rig
    seen = steps_of(extension, lambda: bpy.ops.export_scene.iqe(filepath=str(tmp_path / "rig.iqe")))
    assert (1, 1, "stage", "Body") in seen
    assert [label for _, total, _, label in seen if total == 2] == ["nod", "wave"]  # (one step per action)


@pytest.mark.parametrize("on_terminal", [True, False])
def test_the_cli_prints_a_line_per_file_on_a_terminal_only(
    on_terminal: bool, tmp_path: Path, extension: ModuleType, monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setattr(extension.cli, "progress_wanted", lambda: on_terminal)
    a, b = joe_files(tmp_path, "a.joe", "b.joe")
    assert extension.cli.main(["convert", str(a), str(b), "-o", str(tmp_path / "both.jpk")], prog="iogf") == 0
    assert extension.cli.main(["convert", str(a), str(b), "--to", "iqe", "-d", str(tmp_path / "out")],
                              prog="iogf") == 0  # fmt: skip
    err = capfd.readouterr().err
    lines = [f"[1/2] reading {a}", f"[2/2] reading {b}", f"[1/2] converting {a}", f"[2/2] converting {b}"]
    if on_terminal:
        assert [line for line in err.splitlines() if line.startswith("[")] == lines
    else:
        assert "[1/2]" not in err
