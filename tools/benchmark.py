"""Import/export speed against Blender's own C++ OBJ importer/exporter on the same geometry, in one run.

    .venv/bin/python tools/benchmark.py [--repeat 3] [--batch-files 40]

Prints, per case, our time, OBJ's time and the ratio (ours / OBJ; lower is better). Figures only, no asserts.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_timing import best_of
from bpy_extension import enable_extension  # must come before `import bpy`

enable_extension()
import bpy  # noqa: E402


def wavy_grid(name: str, triangles: int, seed: int) -> bpy.types.Object:
    """A smooth, UV-mapped, bumpy grid with about `triangles` triangles (quads, triangulated on export)."""
    side = int(np.sqrt(triangles / 2))
    xs, ys = np.meshgrid(np.linspace(0, 10, side + 1), np.linspace(0, 10, side + 1))
    rng = np.random.default_rng(seed)
    zs = np.sin(xs * 1.3) * np.cos(ys * 0.7) + rng.normal(0, 0.01, xs.shape)
    positions = np.stack([xs.ravel(), ys.ravel(), zs.ravel()], axis=1).astype(np.float32)
    corner = (np.arange(side)[:, None] * (side + 1) + np.arange(side)[None, :]).ravel()
    quads = np.stack([corner, corner + 1, corner + side + 2, corner + side + 1], axis=1).astype(np.intc)
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(len(positions))
    mesh.vertices.foreach_set("co", positions.ravel())
    mesh.loops.add(quads.size)
    mesh.loops.foreach_set("vertex_index", quads.ravel())
    mesh.polygons.add(len(quads))
    mesh.polygons.foreach_set("loop_start", np.arange(len(quads), dtype=np.intc) * 4)
    mesh.update(calc_edges=True)
    mesh.polygons.foreach_set("use_smooth", np.ones(len(quads), bool))
    uv = mesh.uv_layers.new(name="UVMap")
    uv.uv.foreach_set("vector", (positions[quads.ravel(), :2] / 10).ravel())
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def clear_objects() -> None:
    bpy.data.batch_remove(list(bpy.data.objects) + list(bpy.data.meshes) + list(bpy.data.materials))


def build_scene(files: int, triangles: int) -> list[bpy.types.Object]:
    bpy.ops.wm.read_homefile(use_empty=True)
    return [wavy_grid(f"part{index:03d}", triangles, index) for index in range(files)]


def export_each(objects: list[bpy.types.Object], folder: Path, extension: str) -> list[Path]:
    """One file per object, through the operator of the given format."""
    paths = []
    for obj in objects:
        for other in objects:
            other.select_set(other is obj)
        path = folder / f"{obj.name}{extension}"
        if extension == ".obj":
            bpy.ops.wm.obj_export(filepath=str(path), export_selected_objects=True, export_materials=False)
        else:
            bpy.ops.export_scene.joe(filepath=str(path), export_selected_objects=True)
        paths.append(path)
    return paths


def import_all(paths: list[Path]) -> None:
    files = [{"name": p.name} for p in paths]
    if paths[0].suffix == ".obj":
        bpy.ops.wm.obj_import(directory=str(paths[0].parent), files=files)
    else:
        bpy.ops.import_scene.joe(directory=str(paths[0].parent), files=files)


def measure(label: str, files: int, triangles: int, repeat: int, folder: Path) -> list[tuple[str, float, float]]:
    rows = []
    timings: dict[str, float] = {}
    paths: dict[str, list[Path]] = {}
    for extension in (".joe", ".obj"):
        out = folder / extension.strip(".")
        out.mkdir(parents=True, exist_ok=True)
        objects = build_scene(files, triangles)
        total = sum(len(o.data.polygons) * 2 for o in objects)
        timings[f"export{extension}"] = best_of(
            repeat, lambda: None, lambda objs=objects, ext=extension, o=out: export_each(objs, o, ext)
        )
        paths[extension] = sorted(out.glob(f"*{extension}"))
    print(f"\n{label}: {files} file(s), {total:,} triangles in total")
    for extension in (".joe", ".obj"):
        timings[f"import{extension}"] = best_of(repeat, clear_objects, lambda ext=extension: import_all(paths[ext]))
    for step in ("import", "export"):
        ours, obj = timings[f"{step}.joe"], timings[f"{step}.obj"]
        rows.append((f"{label} {step}", ours, obj))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batch-files", type=int, default=40)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="iogf-bench-"))
    print(f"Blender {bpy.app.version_string}, best of {args.repeat}")
    rows = measure("JOE 32,000 faces", 1, 32000, args.repeat, folder / "single")
    batch_triangles = 1_000_000 // args.batch_files
    rows += measure("JOE batch 1M triangles", args.batch_files, batch_triangles, args.repeat, folder / "batch")
    print(f"\n{'case':<34}{'ours (s)':>10}{'OBJ (s)':>10}{'ours/OBJ':>10}")
    for label, ours, obj in rows:
        print(f"{label:<34}{ours:>10.3f}{obj:>10.3f}{ours / obj:>10.2f}")
    print("ours/OBJ: our time over Blender's C++ OBJ importer/exporter's on the same geometry (lower is better)")
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
