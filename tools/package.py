"""Validate the manifest and build the installable zip with Blender's own extension command line.

    .venv/bin/python tools/package.py [--output-dir dist]

The CLI (blender_ext.py) ships inside the bpy wheel; it runs with plain Python, no Blender binary needed. The
Python that runs this script picks the release whose CLI validates and builds; a warning fails the build.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def blender_scripts() -> Path:
    spec = importlib.util.find_spec("bpy")
    if spec is None or spec.origin is None:
        raise SystemExit("the bpy module is not installed in this Python")
    wheel_root = Path(spec.origin).parent
    versions = sorted(p for p in wheel_root.iterdir() if (p / "scripts").is_dir())
    return versions[-1] / "scripts"


def extension_cli(*arguments: str) -> str:
    scripts = blender_scripts()
    command = [
        sys.executable,
        str(scripts / "addons_core" / "bl_pkg" / "cli" / "blender_ext.py"),
        *arguments,
        "--valid-tags",
        str(scripts / "modules" / "_bpy_internal" / "extensions" / "tags.py"),
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    output = result.stdout + result.stderr
    if result.returncode != 0 or re.search(r"^(WARN|ERROR|FATAL_ERROR):", output, re.MULTILINE):
        raise SystemExit(f"{' '.join(arguments[:1])} failed or warned:\n{output}")
    return result.stdout


def build(output_dir: Path) -> Path:
    """Validate, then build; returns the zip's path."""
    extension_cli("validate", str(REPO_ROOT))
    output_dir.mkdir(parents=True, exist_ok=True)
    extension_cli("build", "--source-dir", str(REPO_ROOT), "--output-dir", str(output_dir))
    zips = sorted(output_dir.glob("io_game_formats-*.zip"), key=lambda p: p.stat().st_mtime)
    if not zips:
        raise SystemExit("the build reported success but wrote no zip")
    return zips[-1]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", default=str(REPO_ROOT / "dist"))
    print(build(Path(parser.parse_args().output_dir)))
