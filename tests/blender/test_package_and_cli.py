"""The built zip installs like "Install from Disk", and the headless command line works with the bpy module.

Each runs in a fresh Python process: an installed copy and the development copy must not share a session.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from tests import joe_fixtures as fx
from tests.sample_paths import sample_dir
from tools.bpy_extension import REPO_ROOT
from tools.package import build

IOGF = [sys.executable, str(REPO_ROOT / "tools" / "iogf.py")]


def run(command: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {"BLENDER_USER_RESOURCES": str(tmp_path / "user"), "PATH": "/usr/bin:/bin"}
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, check=False)


def test_built_zip_installs_enables_and_imports(tmp_path: Path) -> None:
    zip_path = build(tmp_path / "dist")
    names = zipfile.ZipFile(zip_path).namelist()
    assert "blender_manifest.toml" in names and "formats/joe.py" in names
    assert not any(n.startswith(("tests/", "tools/", ".git", ".venv")) for n in names)
    model = tmp_path / "box.joe"
    model.write_bytes(fx.cube_bytes())
    script = textwrap.dedent(f"""
        import bpy, sys
        result = bpy.ops.extensions.package_install_files(
            filepath={str(zip_path)!r}, repo="user_default", enable_on_install=True)
        assert result == {{"FINISHED"}}, result
        assert "bl_ext.user_default.io_game_formats" in sys.modules
        bpy.ops.wm.read_homefile(use_empty=True)
        assert bpy.ops.import_scene.joe(filepath={str(model)!r}) == {{"FINISHED"}}
        print("faces", len(bpy.data.objects["box"].data.polygons))
    """)
    result = run([sys.executable, "-c", script], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "faces 12" in result.stdout


def test_cli_converts_a_batch_and_exports_a_saved_scene(tmp_path: Path) -> None:
    folder = sample_dir("joe")
    inputs = [str(folder / "car_360_glass.joe"), str(folder / "trackparts_road_cone.joe")]
    pack = tmp_path / "pack.jpk"
    result = run([*IOGF, "convert", *inputs, "--to", "jpk", "-o", str(pack)], tmp_path)
    assert result.returncode == 0, result.stderr
    from formats import jpk

    assert sorted(m.name for m in jpk.load_jpk(str(pack)).members) == ["car_360_glass.joe", "trackparts_road_cone.joe"]

    blend = tmp_path / "scene.blend"
    result = run([*IOGF, "import", str(pack), "-o", str(blend)], tmp_path)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "merged.joe"
    result = run([*IOGF, "export", str(blend), "-o", str(out), "--set", "global_scale=2.0"], tmp_path)
    assert result.returncode == 0, result.stderr
    from formats import joe

    assert joe.load_joe(str(out)).first_frame.face_count == 556 + 60


def test_cli_batch_to_a_folder_reports_each_failure_and_exits_non_zero(tmp_path: Path) -> None:
    good = tmp_path / "good.joe"
    good.write_bytes(fx.cube_bytes())
    bad = tmp_path / "bad.joe"
    bad.write_bytes(b"IDP2")
    result = run([*IOGF, "convert", str(bad), str(good), "--to", "joe", "-d", str(tmp_path / "out")], tmp_path)
    assert result.returncode == 1
    assert "bad.joe, byte 0: file is 4 bytes" in result.stderr
    assert (tmp_path / "out" / "good.joe").is_file()


@pytest.mark.parametrize(
    ("arguments", "code", "message"),
    [
        (["--help"], 0, "convert"),
        ([], 2, "error: the following arguments are required: command (see --help)"),
        (["convert", "x.joe", "--to", "obj", "-d", "o"], 2, "unknown format 'obj'"),
        (["import", "missing.joe"], 2, "missing.joe: no such file"),
    ],
)
def test_cli_usage_and_errors(tmp_path: Path, arguments: list[str], code: int, message: str) -> None:
    result = run([*IOGF, *arguments], tmp_path)
    assert result.returncode == code
    assert message in result.stdout + result.stderr


def test_cli_help_names_the_program_as_invoked(tmp_path: Path) -> None:
    result = run([*IOGF, "--help"], tmp_path)
    assert result.stdout.startswith(f"usage: {IOGF[1]} ")


def test_cli_prints_an_error_once_and_blender_log_lines_only_when_verbose(tmp_path: Path) -> None:
    bad = tmp_path / "bad.joe"
    bad.write_bytes(b"IDP2")
    result = run([*IOGF, "convert", str(bad), "-o", str(tmp_path / "out.iqe")], tmp_path)
    assert result.returncode == 1
    assert re.fullmatch(r"0 converted, 0 skipped, 1 failed in [0-9.]+ s\n", result.stdout)  # (a summary always)
    expected = f"error: {bad}, byte 0: file is 4 bytes, too short for the 16-byte JOE header"
    assert result.stderr.splitlines() == [expected]
    model = tmp_path / "box.joe"
    model.write_bytes(fx.cube_bytes())
    blend = tmp_path / "box.blend"
    assert run([*IOGF, "import", str(model), "-o", str(blend)], tmp_path).returncode == 0
    quiet = run([*IOGF, "export", str(blend), "-o", str(tmp_path / "box.iqe")], tmp_path)
    verbose = run([*IOGF, "--verbose", "export", str(blend), "-o", str(tmp_path / "box.iqe")], tmp_path)
    assert "Read blend" not in quiet.stdout + quiet.stderr
    assert "Read blend" in verbose.stdout + verbose.stderr
    assert quiet.stdout.splitlines()[-1] == f"exported {tmp_path / 'box.iqe'}"


def test_cli_imports_a_reference_and_its_vertex_animation_together(tmp_path: Path) -> None:
    folder = sample_dir("smd")
    blend = tmp_path / "cube.blend"
    result = run([*IOGF, "import", str(folder / "Cube.smd"), str(folder / "Cube.vta"), "-o", str(blend)], tmp_path)
    assert result.returncode == 0, result.stderr
    script = f"import bpy; bpy.ops.wm.open_mainfile(filepath={str(blend)!r}); " \
             "print('keys', [k.name for k in bpy.data.objects['Cube'].data.shape_keys.key_blocks])"  # fmt: skip
    shown = run([sys.executable, "-c", script], tmp_path)
    assert "keys ['Basis', 'Key 1']" in shown.stdout, shown.stderr


def test_cli_batch_conversion_names_outputs_after_the_whole_extension(tmp_path: Path) -> None:
    source = tmp_path / "room.qmap.tmp"
    source.write_bytes(
        b'QMAP TMP 10\nobjects {\n mesh "Room" {\n 0,0,0\n 0,0,0\n 1,1,1\n 30\n 0\n materials 1 { "M" }\n'
        b" vertices 4 { 0,0,0 1,0,0 1,1,0 0,1,0 }\n faces 1 { 4 0 0 0 1 2 3 }\n }\n}\n"
    )
    result = run([*IOGF, "convert", str(source), "--to", "joe", "-d", str(tmp_path / "out")], tmp_path)
    assert result.returncode == 0, result.stderr
    from formats import joe

    assert joe.load_joe(str(tmp_path / "out" / "room.joe")).first_frame.face_count == 2


def test_the_example_script_runs_clean_and_reports_what_it_left_on_disk(tmp_path: Path) -> None:
    out, dist = tmp_path / "out", tmp_path / "dist"
    env_overrides = {"IOGF_EXAMPLE_OUT": str(out), "IOGF_EXAMPLE_DIST": str(dist)}
    env = {"BLENDER_USER_RESOURCES": str(tmp_path / "user"), "PATH": "/usr/bin:/bin", **env_overrides}
    result = subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "example.py")], capture_output=True,
                            text=True, timeout=600, env=env, check=False)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "unexpected warnings: 0" in result.stdout
    rows = [line.split() for line in result.stdout.splitlines() if line.strip().startswith(("joe ", "smd ", "qmap"))]
    assert len(rows) >= 4
    for row in rows:  # format, file, bytes, ...: the size printed is the size of the file left on disk
        assert (out / row[1]).stat().st_size == int(row[2]), row
    assert " faces" not in result.stdout
    picture = out / "example_views.png"
    assert picture.stat().st_size > 10_000
    assert list(dist.glob("io_game_formats-*.zip"))


def test_output_read_only_in_part_ends_quietly(tmp_path: Path) -> None:
    """`iogf.py options smd | head -1`: a reader that stops early ends the command without a traceback."""
    env = {"BLENDER_USER_RESOURCES": str(tmp_path / "user"), "PATH": "/usr/bin:/bin"}
    command = subprocess.Popen([*IOGF, "options", "smd"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert command.stdout is not None and command.stderr is not None
    command.stdout.close()  # the reader goes away before anything is written (Blender takes a second to start)
    errors = command.stderr.read().decode()
    assert command.wait(timeout=300) == 1 and "Traceback" not in errors and "BrokenPipe" not in errors, errors
