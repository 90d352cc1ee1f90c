"""The compiled map's entry in the game's Resources.dat from the QMAP panel (Register, Copy Line, Register After
Compile) and from the command line (export/convert --register)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType, SimpleNamespace

import bpy
import pytest

from qmap_compiler.resources import parse_resources
from tests.blender.scene_helpers import cube
from tests.blender.test_qmap_blender import FakeLayout
from tests.sample_paths import sample_dir

LISTING = (b'texture "Wall" "Game\\\\Textures\\\\Wall.tga";\r\n'
           b'QMap "Town" LOAD "Game\\\\Town.qmap";\r\n'
           b'QMesh "Gun" "Game\\\\Models\\\\Gun.qmsh";\r\n')
SOURCE = (b'QMAP TMP 10\nobjects {\n mesh "P" {\n  0,0,0 0,0,0 1,1,1 30 1\n  materials 1 { "M" }\n'
          b"  vertices 4 { 0,0,0 1,0,0 1,1,0 0,1,0 }\n  faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 }\n }\n}\n")


def game(tmp_path: Path, listing: bytes = LISTING) -> Path:
    """A game folder with Game/Resources.dat, and the panel set to compile Game/Maps/Dungeon.qmap into it."""
    (tmp_path / "Game" / "Maps").mkdir(parents=True)
    (tmp_path / "src").mkdir()
    resources = tmp_path / "Game" / "Resources.dat"
    resources.write_bytes(listing)
    settings = bpy.context.scene.qmap
    settings.tmp_path = str(tmp_path / "src" / "Dungeon.qmap.tmp")
    settings.qmap_path = str(tmp_path / "Game" / "Maps" / "Dungeon.qmap")
    settings.resources_path = str(resources)
    cube("Room")
    return resources


def entries(path: Path) -> list[tuple[bytes, bytes, bytes | None, bytes | None]]:
    return [(r.kind, r.name, r.state, r.file) for r in parse_resources(path.read_bytes(), str(path)).resources]


def test_register_adds_the_compiled_map_after_the_last_map(tmp_path: Path) -> None:
    resources = game(tmp_path)
    assert bpy.ops.qmap.export_and_compile() == {"FINISHED"}
    bpy.context.scene.qmap.resource_state = "LOCK"
    assert bpy.ops.qmap.register_map() == {"FINISHED"}
    new = b'QMap "Dungeon" LOCK "Game\\\\Maps\\\\Dungeon.qmap";\r\n'
    at = LISTING.index(b"QMesh")
    assert resources.read_bytes() == LISTING[:at] + new + LISTING[at:]
    assert bpy.context.scene.qmap.report[-1].text == f'{resources}:3: added {new.decode().strip()}'
    bpy.context.scene.qmap.resource_state = "KEEP"
    assert bpy.ops.qmap.register_map() == {"FINISHED"}  # nothing to change
    assert resources.read_bytes() == LISTING[:at] + new + LISTING[at:]
    assert "already up to date" in bpy.context.scene.qmap.report[-1].text


def test_register_updates_the_entry_of_its_name_in_place(tmp_path: Path) -> None:
    resources = game(tmp_path)
    settings = bpy.context.scene.qmap
    settings.resource_name = "Town"
    settings.qmap_path = str(tmp_path / "Game" / "Town2.qmap")
    assert bpy.ops.qmap.export_and_compile() == {"FINISHED"}
    assert bpy.ops.qmap.register_map() == {"FINISHED"}  # the state LOAD is kept
    assert resources.read_bytes() == LISTING.replace(b"Town.qmap", b"Town2.qmap")


def test_register_after_compile(tmp_path: Path) -> None:
    resources = game(tmp_path)
    bpy.context.scene.qmap.register_after_compile = True
    assert bpy.ops.qmap.export_and_compile() == {"FINISHED"}
    assert (b"QMap", b"Dungeon", None, b"Game\\Maps\\Dungeon.qmap") in entries(resources)
    assert bpy.context.scene.qmap.report[-1].text.startswith(f"{resources}:3: added QMap \"Dungeon\"")
    assert bpy.ops.qmap.compile() == {"FINISHED"}  # a compile alone registers too (here: nothing new)
    assert "already up to date" in bpy.context.scene.qmap.report[-1].text


def test_a_list_the_game_could_not_read_stops_the_compile_before_anything_is_written(tmp_path: Path) -> None:
    broken = LISTING + b'texture "Floor" "Game\\\\Floor.tga"\r\n'
    resources = game(tmp_path, broken)
    bpy.context.scene.qmap.register_after_compile = True
    with pytest.raises(RuntimeError, match=r"Resources.dat:4:1: the texture resource has no ';'"):
        bpy.ops.qmap.export_and_compile()
    assert not (tmp_path / "Game" / "Maps" / "Dungeon.qmap").exists()
    assert list((tmp_path / "src").iterdir()) == []
    assert resources.read_bytes() == broken


@pytest.mark.parametrize("problem, message", [
    ("not compiled", "no such map: compile it first"),
    ("no list", "set the Resources.dat path in the QMAP panel first"),
    ("outside the game", "is not inside the game folder"),
    ("name", "cannot encode"),
])  # fmt: skip
def test_register_refuses_and_changes_nothing(tmp_path: Path, problem: str, message: str) -> None:
    resources = game(tmp_path)
    settings = bpy.context.scene.qmap
    if problem != "not compiled":
        assert bpy.ops.qmap.export_and_compile() == {"FINISHED"}
    if problem == "no list":
        settings.resources_path = ""
    if problem == "outside the game":
        settings.game_folder = str(tmp_path / "src")
    if problem == "name":
        settings.resource_name = "Дом"
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.qmap.register_map()
    assert resources.read_bytes() == LISTING


def test_copy_line_gives_the_entry_and_changes_no_file(tmp_path: Path, extension: ModuleType) -> None:
    resources = game(tmp_path)
    settings = bpy.context.scene.qmap
    settings.resource_state = "LOAD"
    panel = extension.ui.qmap_panel
    assert panel.resource_line(bpy.context) == 'QMap "Dungeon" LOAD "Game\\\\Maps\\\\Dungeon.qmap";'
    assert bpy.ops.qmap.copy_resource_line() == {"FINISHED"}
    settings.resource_name, settings.resource_state = "Town", "KEEP"
    assert panel.resource_line(bpy.context) == 'QMap "Town" LOAD "Game\\\\Maps\\\\Dungeon.qmap";'  # its state kept
    settings.resources_path = ""
    with pytest.raises(RuntimeError, match=r"set the Resources\.dat or the Game Folder"):
        bpy.ops.qmap.copy_resource_line()
    settings.game_folder = str(tmp_path)
    assert panel.resource_line(bpy.context) == 'QMap "Town" "Game\\\\Maps\\\\Dungeon.qmap";'
    assert resources.read_bytes() == LISTING


def test_the_shipped_list_takes_a_new_map(tmp_path: Path) -> None:
    shipped = (sample_dir("qmap") / "Resources.dat").read_bytes()
    resources = game(tmp_path, shipped)
    bpy.context.scene.qmap.register_after_compile = True
    assert bpy.ops.qmap.export_and_compile() == {"FINISHED"}
    after = resources.read_bytes()
    line = b'QMap "Dungeon" "Game\\\\Maps\\\\Dungeon.qmap";\n'
    at = shipped.index(b'QMap "FppMap" "Game\\\\Fpp.qmap";\n') + len(b'QMap "FppMap" "Game\\\\Fpp.qmap";\n')
    assert after == shipped[:at] + line + shipped[at:]


def test_the_resources_panel_draws_real_properties() -> None:
    drawn: list[tuple[object, str]] = []
    bpy.types.VIEW3D_PT_qmap_resources.draw(SimpleNamespace(layout=FakeLayout(drawn)), bpy.context)
    assert [name for _, name in drawn] == ["resources_path", "game_folder", "resource_name", "resource_state",
                                          "register_after_compile"]  # fmt: skip
    for data, name in drawn:
        assert name in data.bl_rna.properties, name


# ------------------------------------------------------------------------------------------- the command line


def test_convert_registers_the_compiled_map(tmp_path: Path, extension: ModuleType,
                                           capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    resources = game(tmp_path)
    source = tmp_path / "src" / "Dungeon.qmap.tmp"
    source.write_bytes(SOURCE)
    output = tmp_path / "Game" / "Maps" / "Dungeon.qmap"
    argv = ["convert", str(source), "-o", str(output), "--register", str(resources), "--resource-state", "lock"]
    assert extension.cli.main(argv, prog="iogf") == 0
    assert output.is_file()
    assert (b"QMap", b"Dungeon", b"LOCK", b"Game\\Maps\\Dungeon.qmap") in entries(resources)
    assert capsys.readouterr().out.splitlines()[-1] == (f'{resources}:3: added QMap "Dungeon" LOCK '
                                                        '"Game\\\\Maps\\\\Dungeon.qmap";')  # fmt: skip
    assert extension.cli.main([*argv, "--resource-name", "DungeonMap"], prog="iogf") == 0
    assert f"{output}: warning: {resources}:3:1 already names this file as QMap 'Dungeon'" in capsys.readouterr().err


def test_export_of_a_blend_registers_the_map(tmp_path: Path, extension: ModuleType) -> None:
    resources = game(tmp_path)
    blend = tmp_path / "src" / "level.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    output = tmp_path / "Game" / "Town.qmap"
    argv = ["export", str(blend), "-o", str(output), "--register", str(resources), "--resource-state", "none"]
    assert extension.cli.main(argv, prog="iogf") == 0
    assert resources.read_bytes() == LISTING.replace(b"LOAD ", b"")  # the entry of this file, now with no state


@pytest.mark.parametrize("extra, message", [
    (["--register", "{out}/missing.dat"], "missing.dat: no such file"),
    (["--register", "{list}", "--resource-state", "locked"], "invalid choice: 'locked'"),
    (["--resource-name", "X"], "--resource-name goes with --register"),
    (["--register", "{list}", "--game-folder", "{out}"], "not inside the game folder"),
])  # fmt: skip
def test_command_line_mistakes_exit_2_and_write_nothing(tmp_path: Path, extension: ModuleType,
                                                       capsys: pytest.CaptureFixture[str], extra: list[str],
                                                       message: str) -> None:  # fmt: skip
    resources = game(tmp_path)
    source = tmp_path / "src" / "Dungeon.qmap.tmp"
    source.write_bytes(SOURCE)
    output = tmp_path / "Game" / "Maps" / "Dungeon.qmap"
    values = {"list": str(resources), "out": str(tmp_path / "src")}
    argv = ["convert", str(source), "-o", str(output)] + [arg.format(**values) for arg in extra]
    assert extension.cli.main(argv, prog="iogf") == 2
    assert message in capsys.readouterr().err
    assert not output.exists() and resources.read_bytes() == LISTING


def test_register_is_for_maps_only(tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    resources = game(tmp_path)
    source = tmp_path / "src" / "Dungeon.qmap.tmp"
    source.write_bytes(SOURCE)
    output = tmp_path / "src" / "Dungeon.iqe"
    assert extension.cli.main(["convert", str(source), "-o", str(output), "--register", str(resources)],
                              prog="iogf") == 2  # fmt: skip
    assert "--register lists compiled maps (.qmap), not iqe files" in capsys.readouterr().err
    assert not output.exists()


def test_register_after_compile_under_a_second_name_for_a_listed_map_warns_naming_its_entry(tmp_path: Path) -> None:
    resources = game(tmp_path)
    settings = bpy.context.scene.qmap
    settings.register_after_compile = True
    assert bpy.ops.qmap.export_and_compile() == {"FINISHED"}  # registered as "Dungeon"
    settings.resource_name = "DungeonMap"
    assert bpy.ops.qmap.compile() == {"FINISHED"}
    names = [name for kind, name, _, file in entries(resources) if file == b"Game\\Maps\\Dungeon.qmap"]
    assert names == [b"Dungeon", b"DungeonMap"]  # (legal: a second name; the warning says so)
    warning = f"{resources}:3:1 already names this file as QMap 'Dungeon'"
    assert any(line.text.startswith(f"warning: {warning}") for line in settings.report)
    assert bpy.ops.qmap.register_map() == {"FINISHED"}  # (the Register button: the same warning, as a report)
