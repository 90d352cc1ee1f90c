"""studiomdl's command line, its log read into messages naming the QC's lines, and a run of a stand-in studiomdl (a
Python script) for the exit code, the files it wrote, the move into a game folder and the time limit. The GoldSrc
logs are those the Half-Life SDK's studiomdl printed for these mistakes."""

from __future__ import annotations

import os
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from formats.errors import FormatError
from formats.studiomdl import compile_qc, modelname_of, native_path, outputs_in_log, parse_log, studiomdl_command

QC = """$modelname "model.mdl"
$cd "."
$cdtexture "."
$scale 1.0
$frobnicate 3

$body "body" "body"
$body "head" "head"

$attachment 0 "necky" 0 1 0

$sequence "nod" "model_nod" fps 24
$sequence "walk" "model_walk" fps 24 loop
"""
QC_PATH = "/models/src/model.qc"
GRABBED = "entering model.qc\ngrabbing ./body.smd\ngrabbing ./head.smd\ngrabbing ./model_nod.smd\n"


def _messages(log: str) -> list[tuple[str, str, int | None]]:
    return [(m.severity, str(m), m.line) for m in parse_log(log, QC_PATH, QC)]


@pytest.mark.parametrize(("log", "expected"), [
    ("entering model.qc\n\n************ ERROR ************\nbad command $frobnicate\n\n",
     ("error", "model.qc, line 5: bad command $frobnicate", 5)),
    ("entering model.qc\n\n************ ERROR ************\n./head.smd doesn't exist\n",
     ("error", "model.qc, line 8: ./head.smd doesn't exist", 8)),
    (GRABBED + "BMP skin.bmp [16 16] (100%)    1024 bytes\n\n************ ERROR ************\n"
     "unknown attachment link 'necky'\n\n", ("error", "model.qc, line 10: unknown attachment link 'necky'", 10)),
    (GRABBED + "\n************ ERROR ************\nError(7) : 0 0 0 0 0 0 zz\n\n",
     ("error", "model.qc, line 12: model_nod.smd, line 7: 0 0 0 0 0 0 zz", 12)),
    ("\n************ ERROR ************\nLine 9 is incomplete\n",
     ("error", "model.qc, line 9: Line 9 is incomplete", 9)),
    (GRABBED + "\n************ ERROR ************\n./skin.bmp not found\n", ("error", "./skin.bmp not found", None)),
])  # fmt: skip
def test_goldsrc_errors_name_the_qc_line(log: str, expected: tuple[str, str, int | None]) -> None:
    assert _messages(log) == [expected]


def test_the_texrendermode_banner_is_read_too() -> None:
    qc = '$modelname "x.mdl"\n$texrendermode\n'
    log = "*********ERROR!!!*************\nmissing texturename after $texrendermode\n"
    assert [str(m) for m in parse_log(log, QC_PATH, qc)] == ["model.qc, line 2: missing texturename after "
                                                            "$texrendermode"]  # fmt: skip


def test_two_cd_lines_name_the_second() -> None:
    qc = '$modelname "x.mdl"\n$cd "."\n$cd "."\n'
    messages = parse_log("\n************ ERROR ************\nTwo $cd in one model\n", QC_PATH, qc)
    assert [(m.line, m.text) for m in messages] == [(3, "Two $cd in one model")]


def test_source_errors_keep_the_line_the_log_gives_and_drop_the_abort_line() -> None:
    log = textwrap.dedent("""\
        qdir:    "z:\\models\\src\\"
        WARNING: z:\\models\\src\\model.qc(12): - sequence "nod" has no loop
        ERROR: z:\\models\\src\\model.qc(7): - could not load file 'body.smd'
        ERROR: Aborted Processing on 'model.mdl'
        """)
    messages = parse_log(log, QC_PATH, QC)
    assert [(m.severity, m.file, m.line, m.text) for m in messages] == [
        ("warning", QC_PATH, 12, 'sequence "nod" has no loop'),
        ("error", QC_PATH, 7, "could not load file 'body.smd'"),
    ]


def test_an_unlocated_source_error_is_found_by_the_file_it_names() -> None:
    messages = parse_log("ERROR: could not load file 'head.smd'\n", QC_PATH, QC)
    assert [(m.line, str(m)) for m in messages] == [(8, "model.qc, line 8: could not load file 'head.smd'")]


def test_a_clean_log_has_no_messages_and_names_its_outputs() -> None:
    log = GRABBED + "---------------------\nwriting model.mdl:\nbones        556 bytes (2)\ntotal       4532\n"
    assert parse_log(log, QC_PATH, QC) == []
    assert outputs_in_log(log) == ["model.mdl"]
    assert outputs_in_log("writing Z:\\game\\models\\props\\crate.mdl:\n") == ["Z:\\game\\models\\props\\crate.mdl"]


@pytest.mark.skipif(os.name != "posix", reason="Wine's Z: drive is the root of a POSIX system")
def test_wine_paths_are_read_back_as_this_systems() -> None:
    assert native_path("Z:\\game\\models\\crate.mdl") == "/game/models/crate.mdl"
    assert native_path("models\\crate.mdl") == "models/crate.mdl"


def test_the_modelname_is_read_from_the_qc() -> None:
    assert modelname_of(QC) == "model.mdl"
    assert modelname_of('$modelname "props\\crate.mdl"') == "props/crate.mdl"
    assert modelname_of("$cd .") is None


# ------------------------------------------------------------------------------------------------ the command


@pytest.fixture
def programs(tmp_path: Path) -> dict[str, str]:
    made = {}
    for name in ("studiomdl", "studiomdl.exe"):
        (tmp_path / name).write_text("")
        made[name] = str(tmp_path / name)
    (tmp_path / "game").mkdir()
    made["game"] = str(tmp_path / "game")
    return made


def test_goldsrc_gets_the_qc_name_and_source_the_game_folder(programs: dict[str, str]) -> None:
    native = programs["studiomdl"]
    assert studiomdl_command(native, "/m/model.qc", "goldsrc", platform="linux") == [native, "model.qc"]
    assert studiomdl_command(native, "/m/model.qc", "source", programs["game"], platform="linux") == [
        native, "-nop4", "-game", programs["game"], "/m/model.qc"]  # fmt: skip
    assert studiomdl_command(native, "/m/model.qc", "source", platform="linux", environment={"VPROJECT": "/g"}) == [
        native, "-nop4", "/m/model.qc"]  # fmt: skip
    with pytest.raises(FormatError, match="needs the game folder"):
        studiomdl_command(native, "/m/model.qc", "source", platform="linux", environment={})
    with pytest.raises(FormatError, match="the game folder does not exist"):
        studiomdl_command(native, "/m/model.qc", "source", programs["game"] + "x", platform="linux")


def test_a_windows_program_runs_through_wine_elsewhere(programs: dict[str, str]) -> None:
    exe = programs["studiomdl.exe"]
    command = studiomdl_command(exe, "/m/model.qc", "source", programs["game"], platform="linux",
                                which=lambda name: "/usr/bin/" + name)  # fmt: skip
    assert command == ["/usr/bin/wine", exe, "-nop4", "-game", "Z:" + programs["game"].replace("/", "\\"),
                       "Z:\\m\\model.qc"]  # fmt: skip
    with pytest.raises(FormatError, match="is a Windows program: running it on this system needs Wine"):
        studiomdl_command(exe, "/m/model.qc", "goldsrc", platform="darwin", which=lambda name: None)
    assert studiomdl_command(exe, "C:/m/model.qc", "goldsrc", platform="win32") == [exe, "model.qc"]


def test_a_missing_studiomdl_is_named() -> None:
    with pytest.raises(FormatError, match="/nowhere/studiomdl: no such studiomdl"):
        studiomdl_command("/nowhere/studiomdl", "/m/model.qc", "goldsrc")


# ------------------------------------------------------------------------------------------------ running


def fake_studiomdl(folder: Path, body: str) -> str:
    """An executable Python script standing in for studiomdl."""
    path = folder / "fake_studiomdl"
    path.write_text(f"#!{sys.executable}\nimport os, sys, time\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.mark.skipif(os.name != "posix", reason="the stand-in is a script run through its #! line")
def test_a_goldsrc_run_gives_the_model_and_moves_it_into_the_game(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    qc = tmp_path / "src" / "model.qc"
    qc.write_text('$modelname "models/props/crate.mdl"\n$cd "."\n$body "body" "body"\n')
    studiomdl = fake_studiomdl(tmp_path, """\
        assert sys.argv[1:] == ["model.qc"] and os.path.isdir("models/props"), (sys.argv, os.getcwd())
        print("grabbing ./body.smd")
        print("writing models/props/crate.mdl:")
        open("models/props/crate.mdl", "wb").write(b"IDST")
        print("WARNING: 2 triangles with misdirected normals")
        """)
    run = compile_qc(studiomdl, str(qc), "goldsrc")
    assert run.ok and run.exit_code == 0 and run.outputs == [str(tmp_path / "src/models/props/crate.mdl")]
    assert [str(w) for w in run.warnings] == ["2 triangles with misdirected normals"]
    assert "grabbing ./body.smd" in run.log
    game = tmp_path / "valve"
    game.mkdir()
    run = compile_qc(studiomdl, str(qc), "goldsrc", str(game))
    assert run.outputs == [str(game / "models/props/crate.mdl")] and (game / "models/props/crate.mdl").is_file()
    assert not (tmp_path / "src/models/props/crate.mdl").exists()


@pytest.mark.skipif(os.name != "posix", reason="the stand-in is a script run through its #! line")
def test_a_failed_run_gives_its_errors_and_exit_code(tmp_path: Path) -> None:
    qc = tmp_path / "model.qc"
    qc.write_text(QC)
    studiomdl = fake_studiomdl(tmp_path, """\
        print("entering model.qc")
        print("\\n************ ERROR ************\\nbad command $frobnicate\\n")
        sys.exit(1)
        """)
    run = compile_qc(studiomdl, str(qc), "goldsrc")
    assert not run.ok and run.exit_code == 1 and run.outputs == []
    assert [str(e) for e in run.errors] == ["model.qc, line 5: bad command $frobnicate"]
    silent = fake_studiomdl(tmp_path, "sys.exit(3)\n")
    assert [str(e) for e in compile_qc(silent, str(qc), "goldsrc").errors] == [
        "model.qc: studiomdl stopped with exit code 3"]  # fmt: skip


@pytest.mark.skipif(os.name != "posix", reason="the stand-in is a script run through its #! line")
def test_a_studiomdl_that_hangs_is_stopped(tmp_path: Path) -> None:
    qc = tmp_path / "model.qc"
    qc.write_text(QC)
    studiomdl = fake_studiomdl(tmp_path, "time.sleep(30)\n")
    with pytest.raises(FormatError, match=r"did not finish within 0.5 s"):
        compile_qc(studiomdl, str(qc), "goldsrc", timeout=0.5)
