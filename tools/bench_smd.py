"""SMD import/export speed against Blender's C++ OBJ importer/exporter on the same geometry, in one run.

    .venv/bin/python tools/bench_smd.py [--repeat 3] [--bst FOLDER]

The case of specs/smd.md D.7: a 100,000-triangle cylinder (250 x 200 quads, 50,250 positions) skinned to a
50-bone chain with 1-3 weight links per vertex and 3 materials, plus a 100-frame animation of the 50 bones.
Blender Source Tools is run in the same process, on the same files, only when its folder is given (`--bst`, or
$IOGF_BST: the folder holding `io_scene_valvesource`; it is never shipped); otherwise no ratio against it is
printed. Prints times and ratios; figures only, no asserts.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_timing import best_of
from bpy_extension import enable_extension  # must come before `import bpy`

enable_extension()
import bpy  # noqa: E402
from bench_smd_codec import animation_document  # noqa: E402  (the generators live in the bpy-free codec bench)
from bench_smd_codec import cylinder_document as reference_document  # noqa: E402

from formats.smd import write_smd  # noqa: E402


def empty() -> None:
    bpy.ops.wm.read_homefile(use_empty=True)


def cell(value: float | None, width: int, decimals: int) -> str:
    return f"{value:>{width}.{decimals}f}" if value else f"{'-':>{width}}"


def bst_times(bst_folder: str, repeat: int, reference: Path, folder: Path) -> dict[str, float]:
    """Blender Source Tools importing and exporting the same reference SMD in this process."""
    sys.path.insert(0, bst_folder)
    import io_scene_valvesource  # type: ignore[import-not-found]

    io_scene_valvesource.register()
    times = {"import": best_of(repeat, empty, lambda: bpy.ops.import_scene.smd(filepath=str(reference)))}
    out = folder / "bst"
    out.mkdir()
    bpy.context.scene.vs.export_path = str(out)
    bpy.context.scene.vs.export_format = "SMD"
    times["export"] = best_of(repeat, lambda: None, lambda: bpy.ops.export_scene.smd(export_scene=True))
    io_scene_valvesource.unregister()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--bst", default=os.environ.get("IOGF_BST"),
                        help="folder holding Blender Source Tools' io_scene_valvesource, to run it side by side")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="iogf-bench-smd-"))
    reference, animation = folder / "cylinder.smd", folder / "anim.smd"
    reference.write_bytes(write_smd(reference_document()))
    animation.write_bytes(write_smd(animation_document()))
    obj_file = folder / "cylinder.obj"
    print(f"Blender {bpy.app.version_string}, best of {args.repeat}; reference {reference.stat().st_size / 1e6:.1f} MB")

    rows: list[tuple[str, float, float | None]] = []
    imported = best_of(args.repeat, empty, lambda: bpy.ops.import_scene.valve_smd(filepath=str(reference)))
    mesh = bpy.data.objects["cylinder"].data
    print(f"imported: {len(mesh.vertices):,} vertices, {len(mesh.polygons):,} faces, "
          f"{len(bpy.data.objects['cylinder'].vertex_groups)} vertex groups")  # fmt: skip

    def select_mesh() -> None:
        for obj in bpy.context.scene.objects:
            obj.select_set(obj.name == "cylinder")

    select_mesh()
    exported = best_of(args.repeat, lambda: None, lambda: bpy.ops.export_scene.valve_smd(
        filepath=str(folder / "out.smd")))  # fmt: skip
    obj_export = best_of(args.repeat, select_mesh, lambda: bpy.ops.wm.obj_export(
        filepath=str(obj_file), export_selected_objects=True, export_materials=False))  # fmt: skip
    anim_import = best_of(
        args.repeat,
        lambda: [bpy.data.actions.remove(a) for a in list(bpy.data.actions)] and None,
        lambda: bpy.ops.import_scene.valve_smd(filepath=str(animation)),
    )
    anim_export = best_of(args.repeat, lambda: None, lambda: bpy.ops.export_scene.valve_smd(
        filepath=str(folder / "anim_out.smd"), export_mode="ANIMATION"))  # fmt: skip
    obj_import = best_of(args.repeat, empty, lambda: bpy.ops.wm.obj_import(filepath=str(obj_file)))
    bst = bst_times(args.bst, args.repeat, reference, folder) if args.bst else {}
    rows = [
        ("import 100k-tri / 50-bone SMD", imported, obj_import, bst.get("import")),
        ("export 100k-tri / 50-bone SMD", exported, obj_export, bst.get("export")),
        ("import 100-frame animation", anim_import, None, None),
        ("export 100-frame animation", anim_export, None, None),
    ]
    print(f"\n{'case':<32}{'ours s':>8}{'OBJ s':>8}{'ours/OBJ':>10}{'BST s':>8}{'BST/ours':>10}")
    for label, ours, obj, peer in rows:
        print(f"{label:<32}{ours:>8.3f}{cell(obj, 8, 3)}{cell(obj and ours / obj, 10, 2)}"
              f"{cell(peer, 8, 3)}{cell(peer and peer / ours, 10, 1)}")  # fmt: skip
    print("ours/OBJ: our time over Blender's C++ OBJ importer/exporter's (lower is better); BST/ours: how many "
          "times faster than Blender Source Tools (higher is better)" + ("" if bst else "; BST not run (--bst)"))
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
