"""The zip installed headless, as `blender --command extension install-file -r user_default -e ZIP` does, here with
the bpy module (bpy.ops.extensions.package_install_files into the user_default repository, enabled on install), then
a batch `convert --jobs 2` run by the installed extension: its worker processes load the installed copy, not this
source tree, and give the bytes of `--jobs 1`.

Each step is a fresh Python process with BLENDER_USER_RESOURCES in a temporary folder (the real user configuration
is never touched), run outside the repository."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tools.bench_throughput import make_inputs
from tools.package import build

MODULE = "bl_ext.user_default.io_game_formats"

INSTALL = textwrap.dedent("""
    import sys
    import bpy
    result = bpy.ops.extensions.package_install_files(filepath=sys.argv[1], repo="user_default",
                                                      enable_on_install=True)
    assert result == {"FINISHED"}, result
    assert "bl_ext.user_default.io_game_formats" in sys.modules
""")

# The installed extension, enabled as Blender enables it at start (the bpy module reads no preferences), runs the
# command line; then says which worker command it starts.
CONVERT = textwrap.dedent("""
    import importlib, json, sys
    import bpy
    import addon_utils

    def fail(error):
        raise error

    addon_utils.enable("bl_ext.user_default.io_game_formats", default_set=True, handle_error=fail)
    extension = importlib.import_module("bl_ext.user_default.io_game_formats")
    status = extension.cli.main(sys.argv[1:], prog="iogf")
    print("WORKER " + json.dumps(extension.cli.worker_command()[3:]))
    sys.exit(status)
""")


def run(tmp_path: Path, *command: str) -> subprocess.CompletedProcess[str]:
    env = {"BLENDER_USER_RESOURCES": str(tmp_path / "user"), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, *command], capture_output=True, text=True, timeout=300, env=env,
                          cwd=tmp_path, check=False)  # fmt: skip


def test_an_installed_zip_converts_in_worker_processes_of_the_installed_copy(tmp_path: Path) -> None:
    zip_path = build(tmp_path / "dist")
    installed = run(tmp_path, "-c", INSTALL, str(zip_path))
    assert installed.returncode == 0, installed.stderr
    folder = tmp_path / "user" / "extensions" / "user_default" / "io_game_formats"
    assert (folder / "blender_manifest.toml").is_file() and not (folder / "tools").exists()

    files = make_inputs(tmp_path / "in", 4, triangles=100, bones=4)
    outputs = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        result = run(tmp_path, "-c", CONVERT, "convert", *files, "--to", "iqm", "-d", str(out), "--jobs", jobs,
                     "--report", str(tmp_path / f"report{jobs}.jsonl"))  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines()[-2].startswith("4 converted, 0 skipped, 0 failed"), result.stdout
        worker = json.loads(result.stdout.splitlines()[-1].removeprefix("WORKER "))
        assert worker == [MODULE, str(folder.resolve())]  # (the installed copy, by its module and its folder)
        outputs[jobs] = {path.name: path.read_bytes() for path in sorted(out.glob("*.iqm"))}
        entries = [json.loads(line) for line in (tmp_path / f"report{jobs}.jsonl").read_text().splitlines()]
        assert [(e["input"], e["status"]) for e in entries] == [(path, "ok") for path in files]
    assert sorted(outputs["2"]) == [f"model{index:04d}.iqm" for index in range(4)]
    assert outputs["2"] == outputs["1"]
