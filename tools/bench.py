"""Every benchmark in one run and one table: each format's import and export against Blender's C++ OBJ
importer/exporter on the same geometry, the QMAP compiler against the original Tools.exe, peak memory of each.

    .venv/bin/python tools/bench.py [--repeat 3] [--sizes 100k,1m] [--only smd,iqe,...]
                                    [--tools-exe PATH]        (or $IOGF_TOOLS_EXE; needs Wine)

Mesh cases, at each size: a smooth UV-mapped grid (vertices shared by their faces) and the same surface with every
triangle corner distinct (hard edges and UV seams everywhere). "floor" is how long the bpy calls alone take to
build the same mesh from ready arrays (vertices, corners, faces, UVs): our import time over it shows what the
format's parsing and conversions cost. JOE holds at most 32,000 faces per file, so JOE cases are JPK packs of
25,000-triangle members. QMAP compile: the generated scenes of tools/bench_qmap.py, ours in this process,
Tools.exe under Wine with the Wine server kept running (its start-up not counted); Tools.exe is never shipped:
take it from the TFQ repository. Without it no ratio is printed for the compiler.

Ratios are our time over the peer's: lower is better, 1.0 is as fast. Peak memory is the resident set above what
the process held before the case (ours), or the peer process's maximum resident set (Tools.exe).
Figures only, no asserts.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_timing import BenchRow, peak_memory_mb, release_free_memory, reset_peak_memory, resident_mb
from bpy_extension import enable_extension  # must come before `import bpy`

enable_extension()
import bpy  # noqa: E402
from bench_qmap import generate_scene  # noqa: E402

from qmap_compiler import compile_map  # noqa: E402

SIZES = {"100k": 100_000, "1m": 1_000_000}
MEMBER_TRIANGLES = 25_000  # JOE members of a JPK pack (a JOE file holds at most 32,000 faces)
# format: (extension, import operator, export operator, extra export options)
FORMATS: dict[str, tuple[str, str, str, dict[str, object]]] = {
    "JOE": (".jpk", "import_scene.joe", "export_scene.jpk", {}),
    "SMD": (".smd", "import_scene.valve_smd", "export_scene.valve_smd", {}),
    "IQE": (".iqe", "import_scene.iqe", "export_scene.iqe", {}),
    "IQM": (".iqm", "import_scene.iqm", "export_scene.iqm", {}),
    "QMAP": (".qmap.tmp", "import_scene.qmap_tmp", "export_scene.qmap_tmp", {"write_desc": False}),
}


def timed(repeat: int, setup: Callable[[], object], work: Callable[[], object]) -> tuple[float, float]:
    """Best time of `repeat` runs and the peak memory above the starting resident set over all of them."""
    best, peak = float("inf"), 0.0
    for _ in range(repeat):
        setup()
        os.sync()  # files written by earlier runs reach the disk now, not while this one is timed
        release_free_memory()
        base = resident_mb()
        reset_peak_memory()
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
        peak = max(peak, peak_memory_mb() - base)
    return best, peak


def operator(idname: str) -> Callable[..., set[str]]:
    module, name = idname.split(".")
    function: Callable[..., set[str]] = getattr(getattr(bpy.ops, module), name)
    return function


# ------------------------------------------------------------------------------------------------ geometry


def surface(triangles: int, distinct: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(positions, triangle corner indices, corner UVs) of a wavy grid with about `triangles` triangles; with
    `distinct`, every corner has its own vertex."""
    side = int(np.sqrt(triangles / 2))
    xs, ys = np.meshgrid(np.linspace(0, 10, side + 1), np.linspace(0, 10, side + 1))
    zs = np.sin(xs * 1.3) * np.cos(ys * 0.7)
    positions = np.stack([xs.ravel(), ys.ravel(), zs.ravel()], axis=1).astype(np.float32)
    corner = (np.arange(side)[:, None] * (side + 1) + np.arange(side)[None, :]).ravel()
    quads = np.stack([corner, corner + 1, corner + side + 2, corner + side + 1], axis=1)
    tris = np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]]).astype(np.intc)
    uvs = positions[tris.ravel(), :2] / 10
    if distinct:
        positions = positions[tris.ravel()]
        tris = np.arange(tris.size, dtype=np.intc).reshape(-1, 3)
        uvs = uvs + np.repeat(np.arange(len(tris)) % 7, 3)[:, None] * 0.001  # a seam at every edge
    return positions, tris, uvs.astype(np.float32)


def build_mesh(name: str, positions: np.ndarray, tris: np.ndarray, uvs: np.ndarray, smooth: bool) -> bpy.types.Mesh:
    """The bpy calls alone: the floor every importer stands on."""
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(len(positions))
    mesh.vertices.foreach_set("co", positions.ravel())
    mesh.loops.add(tris.size)
    mesh.loops.foreach_set("vertex_index", tris.ravel())
    mesh.polygons.add(len(tris))
    mesh.polygons.foreach_set("loop_start", np.arange(len(tris), dtype=np.intc) * 3)
    mesh.update(calc_edges=True)
    mesh.polygons.foreach_set("use_smooth", np.full(len(tris), smooth))
    mesh.uv_layers.new(name="UVMap").uv.foreach_set("vector", uvs.ravel())
    return mesh


def scene(triangles: int, distinct: bool, member_triangles: int | None) -> None:
    """An empty scene holding the surface: one object, or objects of `member_triangles` (JPK members)."""
    bpy.ops.wm.read_homefile(use_empty=True)
    parts = 1 if member_triangles is None else max(1, triangles // member_triangles)
    for index in range(parts):
        positions, tris, uvs = surface(triangles // parts, distinct)
        positions = positions + np.float32([index * 11, 0, 0])
        mesh = build_mesh(f"part{index:02d}", positions, tris, uvs, smooth=not distinct)
        bpy.context.scene.collection.objects.link(bpy.data.objects.new(f"part{index:02d}", mesh))


def empty() -> None:
    bpy.ops.wm.read_homefile(use_empty=True)


# ------------------------------------------------------------------------------------------------ cases


def mesh_rows(name: str, size: str, distinct: bool, repeat: int, folder: Path) -> list[BenchRow]:
    extension, import_id, export_id, options = FORMATS[name]
    triangles = SIZES[size]
    kind = "every corner distinct" if distinct else "grid"
    members = MEMBER_TRIANGLES if name == "JOE" else None
    ours_file, obj_file = folder / f"bench{extension}", folder / "bench.obj"
    export_ours = operator(export_id)
    import_ours = operator(import_id)

    def make_scene() -> None:
        scene(triangles, distinct, members)

    ours_export = timed(repeat, make_scene, lambda: export_ours(filepath=str(ours_file),
                                                               **options))  # fmt: skip
    obj_export = timed(repeat, make_scene, lambda: bpy.ops.wm.obj_export(
        filepath=str(obj_file), export_selected_objects=False, export_materials=False))  # fmt: skip
    ours_import = timed(repeat, empty, lambda: import_ours(filepath=str(ours_file)))
    made = sum(len(o.data.polygons) for o in bpy.data.objects if o.type == "MESH")
    obj_import = timed(repeat, empty, lambda: bpy.ops.wm.obj_import(filepath=str(obj_file)))
    positions, tris, uvs = surface(triangles, distinct)
    floor, _ = timed(repeat, empty, lambda: build_mesh("floor", positions, tris, uvs, smooth=not distinct))
    case = f"{size} triangles, {kind}"
    return [
        BenchRow(name, f"import {case} ({made:,} made)", ours_import[0], ours_import[1], "OBJ", obj_import[0],
                 obj_import[1], floor),
        BenchRow(name, f"export {case}", ours_export[0], ours_export[1], "OBJ", obj_export[0], obj_export[1]),
    ]


def tools_exe_run(tools_exe: str, tmp: Path, desc: Path, out: Path) -> tuple[float, float]:
    """Tools.exe under Wine: wall time and the maximum resident set (MB) of the process. Output goes to files,
    not pipes: Wine's server and devices inherit the pipes and would keep them open."""
    measured = out.with_suffix(".time")
    command = ["/usr/bin/time", "-o", str(measured), "-f", "%M", "wine", tools_exe, "/Map", f"/i={tmp}",
               f"/d={desc}", f"/o={out}"]  # fmt: skip
    with open(out.with_suffix(".log"), "w") as log:
        started = time.perf_counter()
        result = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env={**os.environ, "WINEDEBUG": "-all"}, check=False)  # fmt: skip
        elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"Tools.exe failed ({result.returncode}); see {out.with_suffix('.log')}")
    peak_kb = int(measured.read_text().strip().splitlines()[-1])
    return elapsed, peak_kb / 1000


def compile_rows(size: str, repeat: int, folder: Path, tools_exe: str | None) -> list[BenchRow]:
    faces = SIZES[size]
    steps, spread, share = (5, 60.0, 0.1) if faces <= 100_000 else (10, 200.0, 0.4)
    tmp, desc, count = generate_scene(folder, f"compile{size}", faces, steps, spread, share, 2024)
    ours_out, peer_out = folder / f"ours{size}.qmap", folder / f"peer{size}.qmap"
    ours = timed(repeat, lambda: None, lambda: compile_map(tmp, desc, ours_out))
    row = BenchRow("QMAP compile", f"{count:,} faces", ours[0], ours[1])
    if tools_exe:
        runs = [tools_exe_run(tools_exe, tmp, desc, peer_out) for _ in range(repeat)]
        row.peer, row.peer_time, row.peer_peak_mb = "Tools.exe", min(r[0] for r in runs), max(r[1] for r in runs)
        if ours_out.read_bytes() != peer_out.read_bytes():
            row.case += " (OUTPUT DIFFERS)"
    return [row]


def start_wine(tools_exe: str, folder: Path) -> bool:
    """Keep the Wine server running and warm it up, so that Wine's start-up is not counted. Whether this started
    it (no Wine server was running; without pgrep to tell, one is assumed to be)."""
    running = shutil.which("pgrep") is None or subprocess.run(["pgrep", "-x", "wineserver"], check=False,
                                                              stdout=subprocess.DEVNULL).returncode == 0  # fmt: skip
    subprocess.Popen(["wineserver", "-p"], env={**os.environ, "WINEDEBUG": "-all"}, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    tmp, desc, _ = generate_scene(folder, "warmup", 10, 2, 5.0, 0.0, 1)
    tools_exe_run(tools_exe, tmp, desc, folder / "warmup.qmap")
    return not running


# ------------------------------------------------------------------------------------------------ table


def print_table(rows: list[BenchRow]) -> None:
    header = (f"{'format':<13}{'case':<60}{'ours s':>8}{'peak MB':>9}{'peer':>10}{'peer s':>8}{'peak MB':>9}"
              f"{'ours/peer':>10}{'ours/floor':>11}")  # fmt: skip
    print("\n" + header)
    for row in rows:
        peer = f"{row.peer:>10}{row.peer_time:>8.3f}{row.peer_peak_mb or 0:>9.0f}" if row.peer_time else f"{'-':>27}"
        ratio = f"{row.ratio:>10.2f}" if row.ratio else f"{'-':>10}"
        floor = f"{row.ours / row.floor:>11.1f}" if row.floor else f"{'-':>11}"
        print(f"{row.format:<13}{row.case:<60}{row.ours:>8.3f}{row.peak_mb or 0:>9.0f}{peer}{ratio}{floor}")
    print("ours/peer: our time over the peer's in this run (lower is better); ours/floor: our import time over the "
          "bpy calls alone that build the same mesh from ready arrays")


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--repeat", type=int, default=3, help="runs of each case; the best time is shown (default: 3)")
    parser.add_argument("--sizes", default="100k", help="comma-separated: 100k, 1m (default: 100k)")
    parser.add_argument("--only", default="", help="comma-separated formats: joe, smd, iqe, iqm, qmap, compile "
                        "(default: all)")  # fmt: skip
    parser.add_argument("--tools-exe", default=os.environ.get("IOGF_TOOLS_EXE"),
                        help="Tools.exe, run under Wine (default: $IOGF_TOOLS_EXE)")  # fmt: skip
    args = parser.parse_args()
    sizes = [size.strip().lower() for size in args.sizes.split(",") if size.strip()]
    chosen = {name.strip().upper() for name in args.only.split(",") if name.strip()}
    if unknown := [size for size in sizes if size not in SIZES]:
        parser.error(f"unknown size {unknown[0]!r}; known: {', '.join(SIZES)}")
    if unknown_formats := sorted(chosen - {*FORMATS, "COMPILE"}):
        parser.error(f"unknown format {unknown_formats[0].lower()!r}; known: {', '.join(FORMATS).lower()}, compile")
    if chosen and "COMPILE" not in chosen:
        args.tools_exe = None  # (no compile row: Tools.exe is not needed, nor Wine)
    if args.tools_exe and shutil.which("wine") is None:
        parser.error("--tools-exe needs Wine (Debian: apt-get install wine wine32:i386)")
    folder = Path(tempfile.mkdtemp(prefix="iogf-bench-"))
    print(f"Blender {bpy.app.version_string}, best of {args.repeat}; Tools.exe: {args.tools_exe or 'not given'}")
    rows: list[BenchRow] = []
    started_wine = False
    try:
        for size in sizes:
            for name in FORMATS:
                if chosen and name not in chosen:
                    continue
                for distinct in (False, True):
                    rows += mesh_rows(name, size, distinct, args.repeat, folder)
                    print(f"done: {name} {size} {'distinct' if distinct else 'grid'}", flush=True)
        if not chosen or "COMPILE" in chosen:
            if args.tools_exe:
                started_wine = start_wine(args.tools_exe, folder)
            for size in sizes:
                rows += compile_rows(size, args.repeat, folder, args.tools_exe)
    finally:
        if started_wine:  # the Wine server this run started goes down with it (one running before stays up)
            subprocess.run(["wineserver", "-k"], env={**os.environ, "WINEDEBUG": "-all"}, check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        shutil.rmtree(folder, ignore_errors=True)
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
