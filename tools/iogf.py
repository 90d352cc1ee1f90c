"""The `blender --command io_game_formats` command line, run with the bpy module of the project's venv.

    .venv/bin/python tools/iogf.py convert a.joe b.joe --to jpk -o pack.jpk
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from held_signals import signals_held  # (first, and nothing heavier before it: a stop is held from here on)

if __name__ == "__main__":
    with signals_held() as caught:
        from bpy_extension import enable_extension

        extension = enable_extension()
    if caught:  # (Ctrl-C or SIGTERM while Blender started: nothing was begun)
        print("interrupted: no file was written", file=sys.stderr)
        sys.exit(130)
    status = extension.cli.main(sys.argv[1:], prog=sys.argv[0])
    if not extension.cli.BlenderOutput.verbose:  # Blender's exit chatter ("Not freed memory blocks"): hidden
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
    sys.exit(status)
