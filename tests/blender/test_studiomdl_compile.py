"""Compile on the SMD export: the studiomdl of the preferences (or the command line's) builds the QC the export
wrote; its log goes into a text block, its errors into reports naming the QC's line.

A stand-in studiomdl (a Python script) checks the wiring everywhere. The real compile runs when IOGF_STUDIOMDL
names a GoldSrc studiomdl (the Half-Life SDK's, built by the developer, never shipped): the compiled model's
header must hold the scene's bones, sequences, body parts and textures. Without it that test is skipped.
"""

from __future__ import annotations

import os
import stat
import struct
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import bpy
import pytest

from formats.mdl_header import read_mdl_header_file
from tests.blender.test_smd_qc_export import rigged_scene

REAL_STUDIOMDL = os.environ.get("IOGF_STUDIOMDL", "")
PACKAGE = "bl_ext.dev.io_game_formats"
POSIX_ONLY = pytest.mark.skipif(os.name != "posix", reason="the stand-in studiomdl is a script run by its #! line")


def fake_studiomdl(folder: Path, body: str) -> str:
    path = folder / "fake_studiomdl"
    path.write_text(f"#!{sys.executable}\nimport os, sys\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


WRITES_THE_MODEL = """\
    assert sys.argv[1:] == ["model.qc"], sys.argv
    print("grabbing ./body.smd")
    print("writing model.mdl:")
    open("model.mdl", "wb").write(b"IDST")
    print("WARNING: 1 triangles with misdirected normals")
    """
FAILS = """\
    print("entering model.qc")
    print("\\n************ ERROR ************\\nunknown attachment link 'nowhere'\\n")
    sys.exit(1)
    """


@pytest.fixture
def settings() -> Iterator[bpy.types.AddonPreferences]:
    """The extension's preferences, emptied again after the test."""
    prefs = bpy.context.preferences.addons[PACKAGE].preferences
    yield prefs
    prefs.studiomdl_path = prefs.game_folder = ""


def goldsrc_scene() -> None:
    """The QC export's rigged scene, every mesh using the texture skin.bmp (GoldSrc reads materials as .bmp files)."""
    rigged_scene()
    skin = bpy.data.materials.new("skin.bmp")
    for obj in bpy.data.objects:
        if obj.type == "MESH":
            obj.data.materials.append(skin)


def export(folder: Path, **options: object) -> set[str]:
    chosen = {"export_mode": "ALL", "action_scope": "ALL", "write_qc": True, "flavour": "GOLDSRC", "compile_qc": True,
              **options}  # fmt: skip
    return bpy.ops.export_scene.valve_smd(filepath=str(folder / "model.smd"), **chosen)


@POSIX_ONLY
def test_compile_runs_the_preferences_studiomdl_and_keeps_its_log(settings, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                   extension: ModuleType) -> None:  # fmt: skip
    goldsrc_scene()
    settings.studiomdl_path = fake_studiomdl(tmp_path, WRITES_THE_MODEL)
    assert export(tmp_path) == {"FINISHED"}
    assert (tmp_path / "model.mdl").read_bytes() == b"IDST" and (tmp_path / "model.qc").is_file()
    log = bpy.data.texts["studiomdl.log"].as_string()
    assert "grabbing ./body.smd" in log and "(exit code 0," in log
    summary = extension.common.operators.LAST_SUMMARY[0]
    assert "studiomdl: 1 triangles with misdirected normals" in summary.warnings
    assert any(note.startswith("studiomdl compiled model.mdl in ") for note in summary.notes)


@POSIX_ONLY
def test_a_goldsrc_model_goes_into_the_game_folders_models(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    goldsrc_scene()
    game = tmp_path / "valve"
    game.mkdir()
    settings.studiomdl_path, settings.game_folder = fake_studiomdl(tmp_path, WRITES_THE_MODEL), str(game)
    assert export(tmp_path) == {"FINISHED"}
    assert (game / "models" / "model.mdl").is_file() and not (tmp_path / "model.mdl").exists()


@POSIX_ONLY
def test_source_studiomdl_gets_the_game_folder_and_writes_into_its_models(settings, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VPROJECT", raising=False)
    rigged_scene()
    game = tmp_path / "hl2mp"
    (game / "models").mkdir(parents=True)
    settings.studiomdl_path = fake_studiomdl(tmp_path, f"""\
        assert sys.argv[1:] == ["-nop4", "-game", {str(game)!r}, {str(tmp_path / "model.qc")!r}], sys.argv
        print("writing " + os.path.join(sys.argv[3], "models", "model.mdl") + ":")
        open(os.path.join(sys.argv[3], "models", "model.mdl"), "wb").write(b"IDST")
        """)
    with pytest.raises(RuntimeError, match="Source's studiomdl needs the game folder"):
        export(tmp_path, flavour="SOURCE")
    settings.game_folder = str(game)
    assert export(tmp_path, flavour="SOURCE") == {"FINISHED"}
    assert (game / "models" / "model.mdl").is_file()


@POSIX_ONLY
def test_studiomdl_errors_name_the_qc_line_and_the_files_stay_written(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    goldsrc_scene()
    settings.studiomdl_path = fake_studiomdl(tmp_path, FAILS)
    (tmp_path / "model.qc").write_text("")  # (replaced by the export's before the compile)
    with pytest.raises(RuntimeError) as caught:
        export(tmp_path)
    qc_lines = (tmp_path / "model.qc").read_text().splitlines()
    line = next(row for row, text in enumerate(qc_lines, 1) if text.startswith("$attachment"))
    # (a bone name the QC does not hold: the message is not placed on a line; a command it holds is)
    assert "studiomdl: unknown attachment link 'nowhere'; the exported files are written" in str(caught.value)
    settings.studiomdl_path = fake_studiomdl(tmp_path, FAILS.replace("unknown attachment link 'nowhere'",
                                                                     "unknown attachment link 'neck'"))  # fmt: skip
    with pytest.raises(RuntimeError, match=f"studiomdl: model.qc, line {line}: unknown attachment link 'neck'"):
        export(tmp_path)
    assert (tmp_path / "body.smd").is_file() and "(exit code 1," in bpy.data.texts["studiomdl.log"].as_string()


def test_without_a_studiomdl_compile_says_where_to_name_one(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    goldsrc_scene()
    with pytest.raises(RuntimeError, match="no studiomdl is set: name it in the extension's preferences"):
        export(tmp_path)
    assert (tmp_path / "model.qc").is_file()
    settings.studiomdl_path = str(tmp_path / "missing" / "studiomdl.exe")
    with pytest.raises(RuntimeError, match=r"studiomdl\.exe: no such studiomdl"):
        export(tmp_path)


def test_compile_without_write_qc_is_a_warning(tmp_path: Path, extension: ModuleType) -> None:
    goldsrc_scene()
    assert export(tmp_path, write_qc=False) == {"FINISHED"}
    assert "Compile needs Write QC: nothing was compiled" in extension.common.operators.LAST_SUMMARY[0].warnings


# ------------------------------------------------------------------------------------------------ the real one


def eight_bit_bmp(path: Path, width: int = 16, height: int = 16) -> None:
    """An uncompressed 8-bit BMP with a grey palette, as GoldSrc's studiomdl reads textures."""
    palette = b"".join(bytes((i, i, i, 0)) for i in range(256))
    pixels = bytes((x + y) % 256 for y in range(height) for x in range(width))
    start = 14 + 40 + len(palette)
    path.write_bytes(struct.pack("<2sIHHI", b"BM", start + len(pixels), 0, 0, start)
                     + struct.pack("<IiiHHIIiiII", 40, width, height, 1, 8, 0, len(pixels), 0, 0, 256, 0)
                     + palette + pixels)  # fmt: skip


@pytest.mark.skipif(not REAL_STUDIOMDL, reason="IOGF_STUDIOMDL (a GoldSrc studiomdl's path, e.g. one built from "
                    "the Half-Life SDK) is not set")  # fmt: skip
def test_goldsrc_studiomdl_builds_the_scene(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    goldsrc_scene()
    bpy.data.objects["head"].data.materials[0] = bpy.data.materials.new("face.bmp")
    eight_bit_bmp(tmp_path / "skin.bmp")
    eight_bit_bmp(tmp_path / "face.bmp", 32, 8)
    settings.studiomdl_path = REAL_STUDIOMDL
    assert export(tmp_path) == {"FINISHED"}
    header = read_mdl_header_file(str(tmp_path / "model.mdl"))
    armature = next(obj for obj in bpy.data.objects if obj.type == "ARMATURE")
    assert header.version == 10 and header.name == "model.mdl"
    assert [(bone.name, bone.parent) for bone in header.bones] == [(bone.name, -1 if bone.parent is None else 0)
                                                                   for bone in armature.data.bones]  # fmt: skip
    sequences = {seq.name: (seq.fps, seq.loop, seq.frames) for seq in header.sequences}
    walk, nod = bpy.data.actions["walk"], bpy.data.actions["nod"]
    assert sequences == {"walk": (24.0, True, int(walk.frame_range[1] - walk.frame_range[0]) + 1),
                         "nod": (bpy.context.scene.render.fps, False, int(nod.frame_range[1] - nod.frame_range[0]) + 1)}
    assert [(part.name, part.models) for part in header.body_parts] == [("body", 1), ("head", 1), ("hats", 2)]
    # (studiomdl crops each texture to the part its UVs use: sizes at most the BMP's)
    assert sorted(texture.name for texture in header.textures) == ["face.bmp", "skin.bmp"]
    sizes = {texture.name: (texture.width, texture.height) for texture in header.textures}
    assert 0 < sizes["face.bmp"][0] <= 32 and 0 < sizes["face.bmp"][1] <= 8 and sizes["skin.bmp"] == (16, 16)
    assert "writing model.mdl:" in bpy.data.texts["studiomdl.log"].as_string()


# ------------------------------------------------------------------------------------------------ the command line


@POSIX_ONLY
def test_the_cli_compiles_with_studiomdl_and_refuses_mistakes_before_any_work(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    goldsrc_scene()
    blend = str(tmp_path / "scene.blend")
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    out = tmp_path / "out"
    out.mkdir()
    main = extension.cli.main
    common = ["export", blend, "-o", str(out / "model.smd"), "--set", "flavour='GOLDSRC'", "--set", "export_mode='ALL'",
              "--set", "action_scope='ALL'", "--jobs", "1"]  # fmt: skip
    studiomdl = fake_studiomdl(tmp_path, WRITES_THE_MODEL)
    for mistake, words in (
        (["--studiomdl", str(tmp_path / "nowhere")], "--studiomdl " + str(tmp_path / "nowhere") + ": no such file"),
        (["--studiomdl-game", str(tmp_path)], "--studiomdl-game goes with --studiomdl PATH"),
        (["--studiomdl", studiomdl, "--set", "write_qc=False"], "it does not go with --set write_qc=False"),
        (["--studiomdl", studiomdl, "--studiomdl-game", str(tmp_path / "no")], ": no such folder"),
    ):
        assert main([*common, *mistake], prog="iogf") == 2
        assert words in capsys.readouterr().err
    assert not any(out.iterdir())
    joe = ["export", blend, "-o", str(out / "model.joe"), "--studiomdl", studiomdl]
    assert main(joe, prog="iogf") == 2 and "not joe files" in capsys.readouterr().err
    game = tmp_path / "valve"
    game.mkdir()
    assert main([*common, "--studiomdl", studiomdl, "--studiomdl-game", str(game)], prog="iogf") == 0
    assert (game / "models" / "model.mdl").read_bytes() == b"IDST" and (out / "model.qc").is_file()
    assert "Compiled " in capsys.readouterr().out
    failing = fake_studiomdl(tmp_path, FAILS.replace("'nowhere'", "'neck'"))
    assert main([*common, "--studiomdl", failing], prog="iogf") == 1
    assert "unknown attachment link 'neck'" in capsys.readouterr().err


@POSIX_ONLY
def test_cli_compile_errors_name_its_options_and_the_exports_warnings_are_printed(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the command line: --studiomdl-game instead of the preferences, --verbose instead of a text block, and the
    export's warnings printed also when the compile fails."""
    monkeypatch.delenv("VPROJECT", raising=False)
    goldsrc_scene()
    uv_layers = bpy.data.objects["body"].data.uv_layers
    while uv_layers:  # (a warning of the export: no UV map)
        uv_layers.remove(uv_layers[0])
    blend = str(tmp_path / "scene.blend")
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    source = ["export", blend, "-o", str(tmp_path / "model.smd"), "--studiomdl", fake_studiomdl(tmp_path, FAILS)]
    assert extension.cli.main(source, prog="iogf") == 1
    err = capsys.readouterr().err
    assert "where it writes models/: pass --studiomdl-game DIR, or set VPROJECT (the exported files" in err, err
    assert "preferences" not in err and "body: no UV map; texture coordinates written as 0" in err
    goldsrc = [*source, "--set", "flavour='GOLDSRC'"]
    assert extension.cli.main(goldsrc, prog="iogf") == 1
    err = capsys.readouterr().err
    assert "the exported files are written, --verbose shows studiomdl's log" in err and "text studiomdl.log" not in err
    assert "body: no UV map" in err
    assert extension.cli.main(["-v", *goldsrc], prog="iogf") == 1
    assert "studiomdl: unknown attachment link 'nowhere'" in capsys.readouterr().out  # (the log's lines)
