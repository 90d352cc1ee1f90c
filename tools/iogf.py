"""The `blender --command io_game_formats` command line, run with the bpy module of the project's venv.

    .venv/bin/python tools/iogf.py convert a.joe b.joe --to jpk -o pack.jpk
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bpy_extension import enable_extension

if __name__ == "__main__":
    extension = enable_extension()
    sys.exit(extension.cli.main(sys.argv[1:], prog=sys.argv[0]))
