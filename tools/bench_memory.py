"""Peak memory of imports, each in a fresh process: what the import needs above the process's own memory.

    .venv/bin/python tools/bench_memory.py [--size 1m|100k] [FILE ...]

Without files it writes two at the given size in a temporary folder: an IQE grid (`bench_iqe_codec`, 4 weights
per vertex) and an SMD cylinder (`bench_smd_codec`). For each file it prints the file size, the import's peak
resident set above the process's before the import (`VmHWM` after resetting it), what stays after it (Blender's
mesh, armature and actions; freed memory handed back first), and for IQE files the peak of the bpy calls alone
that build the same mesh from the document's arrays (vertices, corners, faces, UVs, custom normals): Blender's own
cost. Figures only, no asserts.
"""

from __future__ import annotations

import argparse
import gc
import subprocess
import sys
import tempfile
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS))
sys.path.insert(0, str(TOOLS.parent))
from bench_timing import peak_memory_mb, release_free_memory, reset_peak_memory, resident_mb  # noqa: E402

OPERATORS = {".iqe": "iqe", ".iqm": "iqm", ".smd": "valve_smd", ".joe": "joe", ".jpk": "joe", ".tmp": "qmap_tmp"}
SIDES = {"100k": (224, 250, 200), "1m": (707, 1000, 500)}  # grid side; cylinder around, rings


def settle() -> float:
    """Hand freed memory back to the system and return the resident set."""
    gc.collect()
    release_free_memory()
    return resident_mb()


def measure_import(path: str) -> None:
    """Child process: import one file and print `peak kept` in MB."""
    from bpy_extension import enable_extension

    enable_extension()
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    operator = getattr(bpy.ops.import_scene, OPERATORS[Path(path).suffix.lower()])
    base = settle()
    reset_peak_memory()
    operator(filepath=path)
    peak = peak_memory_mb() - base
    print(f"{peak:.0f} {settle() - base:.0f}")


def measure_floor(path: str) -> None:
    """Child process: build the IQE file's mesh from ready arrays with the bpy calls alone; print the peak."""
    import numpy as np

    from formats.iqe import load_iqe

    document = load_iqe(path)
    offsets = np.cumsum([0] + [mesh.vertex_count for mesh in document.meshes])
    corners = np.concatenate([m.blender_corners() + o for m, o in zip(document.meshes, offsets, strict=False)])
    sizes = np.concatenate([mesh.face_sizes for mesh in document.meshes]).astype(np.int64)
    positions = np.concatenate([mesh.positions for mesh in document.meshes]).astype(np.float32).ravel()
    uvs = np.concatenate([mesh.blender_texcoords() for mesh in document.meshes])[corners].astype(np.float32).ravel()
    normals = np.concatenate([mesh.normals for mesh in document.meshes]).astype(np.float64)
    starts, corners = (np.cumsum(sizes) - sizes).astype(np.intc), corners.astype(np.intc)
    del document
    from bpy_extension import enable_extension

    enable_extension()
    import bpy

    base = settle()
    reset_peak_memory()
    mesh = bpy.data.meshes.new("floor")
    mesh.vertices.add(len(positions) // 3)
    mesh.attributes["position"].data.foreach_set("vector", positions)
    mesh.loops.add(len(corners))
    mesh.attributes[".corner_vert"].data.foreach_set("value", corners)
    mesh.polygons.add(len(starts))
    mesh.polygons.foreach_set("loop_start", starts)
    mesh.update(calc_edges=True)
    mesh.uv_layers.new(name="UVMap", do_init=False).uv.foreach_set("vector", uvs)
    mesh.normals_split_custom_set_from_vertices(normals)
    print(f"{peak_memory_mb() - base:.0f}")


def write_samples(folder: Path, size: str) -> list[Path]:
    from bench_iqe_codec import grid_document
    from bench_smd_codec import cylinder_document

    from formats.iqe import save_iqe
    from formats.smd import save_smd

    side, around, rings = SIDES[size]
    iqe_path, smd_path = folder / f"grid{size}.iqe", folder / f"cylinder{size}.smd"
    save_iqe(iqe_path, grid_document(side, frame_count=10))
    save_smd(smd_path, cylinder_document(around, rings))
    return [iqe_path, smd_path]


def child(mode: str, path: Path) -> list[str]:
    done = subprocess.run([sys.executable, __file__, f"--{mode}", str(path)], capture_output=True, text=True,
                          check=True)  # fmt: skip
    return done.stdout.strip().splitlines()[-1].split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--size", choices=sorted(SIDES), default="1m", help="of the generated files")
    parser.add_argument("--import", dest="import_file", help=argparse.SUPPRESS)
    parser.add_argument("--floor", dest="floor_file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.import_file:
        return measure_import(args.import_file)
    if args.floor_file:
        return measure_floor(args.floor_file)
    with tempfile.TemporaryDirectory(prefix="iogf-memory-") as folder:
        files = args.files or write_samples(Path(folder), args.size)
        print(f"{'file':<28}{'MB':>8}{'peak MB':>9}{'x file':>8}{'kept MB':>9}{'bpy build peak MB':>19}")
        for path in files:
            size = path.stat().st_size / 1e6
            peak, kept = (float(v) for v in child("import", path))
            floor = f"{float(child('floor', path)[0]):>19.0f}" if path.suffix.lower() == ".iqe" else f"{'-':>19}"
            print(f"{path.name:<28}{size:>8.0f}{peak:>9.0f}{peak / size:>8.2f}{kept:>9.0f}{floor}")
    print("peak: the import's peak resident set above the process's; kept: what stays after it (Blender's data); "
          "bpy build: the same IQE mesh built from ready arrays by the bpy calls alone")
    return None


if __name__ == "__main__":
    main()
