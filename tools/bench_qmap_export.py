""".qmap.tmp export/import speed against Blender's C++ OBJ exporter/importer on the same geometry, in one run.

    .venv/bin/python tools/bench_qmap_export.py [--side 316] [--repeat 3]

The scene: one grid of (side + 1) x (side + 1) quads (316: 100,489 quads) with a UV map. Exported with
`export_scene.qmap_tmp` (the text the compiler reads; compiling is measured by tools/bench_qmap.py) and imported
back with `import_scene.qmap_tmp`; OBJ exports and imports the same mesh. Prints times and ratios (ours / OBJ).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_timing import best_of
from bpy_extension import enable_extension  # must come before `import bpy`

enable_extension()
import bpy  # noqa: E402


def grid_scene(side: int) -> None:
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=side + 1, y_subdivisions=side + 1, size=10)
    bpy.ops.mesh.uv_texture_add()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=316)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="iogf-bench-qmap-"))
    tmp, obj = folder / "grid.qmap.tmp", folder / "grid.obj"
    grid_scene(args.side)
    faces = len(bpy.context.object.data.polygons)
    exported = best_of(args.repeat, lambda: None, lambda: bpy.ops.export_scene.qmap_tmp(filepath=str(tmp)))
    obj_export = best_of(args.repeat, lambda: None, lambda: bpy.ops.wm.obj_export(
        filepath=str(obj), export_materials=False))  # fmt: skip
    empty = lambda: bpy.ops.wm.read_homefile(use_empty=True)  # noqa: E731
    imported = best_of(args.repeat, empty, lambda: bpy.ops.import_scene.qmap_tmp(filepath=str(tmp)))
    obj_import = best_of(args.repeat, empty, lambda: bpy.ops.wm.obj_import(filepath=str(obj)))
    print(f"\n{faces:,} quads, Blender {bpy.app.version_string}, best of {args.repeat}")
    print(f"{'step':<8}{'.qmap.tmp (s)':>15}{'OBJ (s)':>10}{'ours/OBJ':>10}")
    for label, ours, theirs in (("export", exported, obj_export), ("import", imported, obj_import)):
        print(f"{label:<8}{ours:>15.3f}{theirs:>10.3f}{ours / theirs:>10.2f}")
    print("ours/OBJ: our time over Blender's C++ OBJ importer/exporter's on the same geometry (lower is better)")
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
