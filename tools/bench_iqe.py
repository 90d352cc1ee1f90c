"""IQE or IQM import/export speed against Blender's C++ OBJ importer/exporter on the same geometry, in one run.

    .venv/bin/python tools/bench_iqe.py [--format iqe|iqm] [--side 224] [--repeat 3]

The scene: a 100,352-triangle grid skinned to 50 joints (4 random weights per vertex) with a 100-frame
animation, written with the IQE codec, imported with our operator and exported again; OBJ exports and imports
the same mesh (OBJ has no skeleton). Prints both times and the ratio (ours / OBJ; lower is better), and the export's
floor: the bpy calls alone that read what the exporter needs (evaluated mesh, positions, corners, corner normals,
UVs, material indices, every vertex group's weights). No asserts.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np
from bench_iqe_codec import grid_document
from bench_timing import best_of
from bpy_extension import enable_extension  # must come before `import bpy`

enable_extension()
import bpy  # noqa: E402

from formats.iqe import save_iqe  # noqa: E402
from formats.iqm import save_iqm  # noqa: E402


def empty_scene() -> None:
    bpy.ops.wm.read_homefile(use_empty=True)


def read_floor() -> None:
    """The bpy side of an export alone: every array the exporter reads, read once, with nothing done to it."""
    from bl_ext.dev.io_game_formats.common import armature  # the only bulk getter for vertex groups is ours

    for obj in [o for o in bpy.context.scene.objects if o.type == "MESH"]:
        reader = armature.vertex_weight_reader(obj, [group.name for group in obj.vertex_groups])
        saved = [(modifier, modifier.show_viewport) for modifier in obj.modifiers if modifier != reader.modifier]
        for modifier, _ in saved:
            modifier.show_viewport = False  # the rest pose, as the exporter reads it
        try:
            evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
            mesh = evaluated.to_mesh()
            # the fastest getters: attributes copy straight from their arrays (mesh.vertices "co" or
            # mesh.polygons "material_index" take 0.8 and 6-15 ms here)
            reads = (
                ("position", "vector", 3, np.float32),
                (".corner_vert", "value", 1, np.intc),
                ("material_index", "value", 1, np.intc),
            )
            for name, key, width, dtype in reads:
                if (attribute := mesh.attributes.get(name)) is not None:
                    attribute.data.foreach_get(key, np.empty(len(attribute.data) * width, dtype))
            mesh.corner_normals.foreach_get("vector", np.empty(len(mesh.loops) * 3, np.float32))
            for layer in mesh.uv_layers:
                layer.uv.foreach_get("vector", np.empty(len(mesh.loops) * 2, np.float32))
            reader.read(mesh)
            evaluated.to_mesh_clear()
        finally:
            for modifier, shown in saved:
                modifier.show_viewport = shown
            with contextlib.suppress(ReferenceError):
                reader.remove()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=224, help="quads per grid side (224 -> 100,352 triangles)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--format", choices=("iqe", "iqm"), default="iqe")
    parser.add_argument("--frames", type=int, default=100, help="animation frames (0: a rigged mesh, no animation)")
    args = parser.parse_args()
    fmt = args.format
    folder = Path(tempfile.mkdtemp(prefix="iogf-bench-iqe-"))
    source = folder / f"grid.{fmt}"
    (save_iqm if fmt == "iqm" else save_iqe)(source, grid_document(args.side, frame_count=args.frames))
    ours_out, obj_out = folder / f"out.{fmt}", folder / "out.obj"
    importer, exporter = getattr(bpy.ops.import_scene, fmt), getattr(bpy.ops.export_scene, fmt)
    print(f"Blender {bpy.app.version_string}, best of {args.repeat}")

    def import_ours() -> None:
        importer(filepath=str(source))

    def import_obj() -> None:
        bpy.ops.wm.obj_import(filepath=str(obj_out))

    def export_ours() -> None:
        exporter(filepath=str(ours_out))

    def export_obj() -> None:
        bpy.ops.wm.obj_export(filepath=str(obj_out), export_selected_objects=False, export_materials=False)

    timings = {"import ours": best_of(args.repeat, empty_scene, import_ours)}
    triangles = sum(len(o.data.polygons) for o in bpy.data.objects if o.type == "MESH")
    timings["export ours"] = best_of(args.repeat, lambda: None, export_ours)
    timings["export OBJ"] = best_of(args.repeat, lambda: None, export_obj)
    timings["export floor"] = best_of(args.repeat, lambda: None, read_floor)
    timings["import OBJ"] = best_of(args.repeat, empty_scene, import_obj)
    size_mb = ours_out.stat().st_size / 1e6
    print(f"{triangles:,} triangles, 50 joints, {args.frames} frames; {fmt.upper()} {size_mb:.1f} MB")
    print(f"\n{'step':<10}{fmt.upper() + ' (s)':>10}{'OBJ (s)':>10}{'ours/OBJ':>10}{'floor (s)':>11}{'ours/floor':>11}")
    for step in ("import", "export"):
        ours, obj = timings[f"{step} ours"], timings[f"{step} OBJ"]
        floor = timings.get(f"{step} floor")
        tail = f"{floor:>11.3f}{ours / floor:>11.2f}" if floor else f"{'-':>11}{'-':>11}"
        print(f"{step:<10}{ours:>10.3f}{obj:>10.3f}{ours / obj:>10.2f}{tail}")
    print("ours/OBJ: our time over Blender's C++ OBJ importer/exporter's on the same geometry (lower is better);")
    print("floor: the bpy calls alone that read what the export needs (see read_floor)")
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
