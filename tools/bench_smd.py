"""SMD import/export speed against Blender's C++ OBJ importer/exporter on the same geometry, in one run.

    .venv/bin/python tools/bench_smd.py [--repeat 3]

The case of specs/smd.md D.7: a 100,000-triangle cylinder (250 x 200 quads, 50,250 positions) skinned to a
50-bone chain with 1-3 weight links per vertex and 3 materials, plus a 100-frame animation of the 50 bones.
BST's figures on this machine class: import 7.6-8.1 s, export 7.1 s (mesh), 0.19 s / 0.46 s (animation).
Prints times and ratios (ours / OBJ); figures only, no asserts.
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
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
        filepath=str(folder / "out.smd"), export_scope="SCENE"))  # fmt: skip
    obj_export = best_of(args.repeat, select_mesh, lambda: bpy.ops.wm.obj_export(
        filepath=str(obj_file), export_selected_objects=True, export_materials=False))  # fmt: skip
    anim_import = best_of(
        args.repeat,
        lambda: [bpy.data.actions.remove(a) for a in list(bpy.data.actions)] and None,
        lambda: bpy.ops.import_scene.valve_smd(filepath=str(animation)),
    )
    anim_export = best_of(args.repeat, lambda: None, lambda: bpy.ops.export_scene.valve_smd(
        filepath=str(folder / "anim_out.smd"), export_scope="SCENE", export_mode="ANIMATION"))  # fmt: skip
    obj_import = best_of(args.repeat, empty, lambda: bpy.ops.wm.obj_import(filepath=str(obj_file)))
    rows += [
        ("import 100k-tri / 50-bone SMD", imported, obj_import),
        ("export 100k-tri / 50-bone SMD", exported, obj_export),
        ("import 100-frame animation", anim_import, None),
        ("export 100-frame animation", anim_export, None),
    ]
    print(f"\n{'case':<34}{'ours (s)':>10}{'OBJ (s)':>10}{'ratio':>8}{'vs BST':>9}")
    bst = {"import 100k": 7.6, "export 100k": 7.1, "import 100-": 0.19, "export 100-": 0.46}
    for label, ours, obj in rows:
        ratio = f"{ours / obj:8.2f}" if obj else f"{'-':>8}"
        obj_text = f"{obj:10.3f}" if obj else f"{'-':>10}"
        speedup = bst[label[:11]] / ours
        print(f"{label:<34}{ours:>10.3f}{obj_text}{ratio}{speedup:>8.1f}x")
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
