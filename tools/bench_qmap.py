"""Benchmark of the QMAP compiler (not a test): generates random scenes, compiles them, prints stage timings.

Scenes: ~100,000 faces (many transformed boxes, the kind of scene of spec §13.4; target <= 2.2 s) and
1,000,000 faces (quads and triangles, 20 materials, with a .qmap.desc; target < 20 s).

    .venv/bin/python tools/bench_qmap.py [--only 100k|1m] [--keep DIR] [--seed N]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from qmap_compiler import CompileReport, compile_map

MATERIALS = [f"Mat{i:02d}" for i in range(20)]


def _grid_box(steps: int) -> tuple[list[tuple[float, float, float]], list[list[int]]]:
    """A unit box whose six sides are `steps` x `steps` grids of quads, corners counter-clockwise."""
    vertices: list[tuple[float, float, float]] = []
    faces: list[list[int]] = []
    for axis in range(3):
        for side in (-1.0, 1.0):
            base = len(vertices)
            for i in range(steps + 1):
                for j in range(steps + 1):
                    a, b = -1 + 2 * i / steps, -1 + 2 * j / steps
                    point = [0.0, 0.0, 0.0]
                    point[axis], point[(axis + 1) % 3], point[(axis + 2) % 3] = side, a, b
                    vertices.append((point[0], point[1], point[2]))
            for i in range(steps):
                for j in range(steps):
                    quad = [base + i * (steps + 1) + j, base + (i + 1) * (steps + 1) + j,
                            base + (i + 1) * (steps + 1) + j + 1, base + i * (steps + 1) + j + 1]
                    faces.append(quad if side > 0 else quad[::-1])
    return vertices, faces


def _mesh_text(rng: random.Random, name: str, steps: int, spread: float, triangle_share: float) -> tuple[str, int]:
    vertices, quads = _grid_box(steps)
    lines = [f'\tmesh "{name}" {{']
    for low, high in ((-spread, spread), (-3.2, 3.2), (0.2, 3.0)):
        lines.append("\t\t" + ",".join(f"{rng.uniform(low, high):f}" for _ in range(3)))
    lines += ["\t\t30.000000", "\t\t1", f"\t\tmaterials {len(MATERIALS)} {{"]
    lines += [f'\t\t\t"{m}"' for m in MATERIALS]
    lines += ["\t\t}", f"\t\tvertices {len(vertices)} {{"]
    lines += [f"\t\t\t{x:f},{y:f},{z:f}" for x, y, z in vertices]
    face_lines = []
    for quad in quads:
        material = rng.randrange(len(MATERIALS))
        corners = [quad[:3], [quad[0], quad[2], quad[3]]] if rng.random() < triangle_share else [quad]
        for corner_list in corners:
            parts = [f"{len(corner_list)} {material} 0"]
            parts += [f"{c} {rng.random():f},{rng.random():f}" for c in corner_list]
            face_lines.append("\t\t\t" + " ".join(parts))
    lines += ["\t\t}", f"\t\tfaces {len(face_lines)} {{", *face_lines, "\t\t}", "\t}"]
    return "\n".join(lines), len(face_lines)


def generate_scene(folder: Path, stem: str, target_faces: int, steps: int, spread: float, triangle_share: float,
                   seed: int) -> tuple[Path, Path, int]:
    rng = random.Random(seed)
    chunks = ["QMAP TMP 10", "objects {"]
    total = 0
    number = 0
    while total < target_faces:
        text, count = _mesh_text(rng, f"Obj{number}", steps, spread, triangle_share)
        chunks.append(text)
        total += count
        number += 1
    chunks += ["}", ""]
    tmp = folder / f"{stem}.qmap.tmp"
    tmp.write_text("\n".join(chunks), encoding="ascii")
    desc = folder / f"{stem}.qmap.desc"
    desc.write_text(
        "QMAP DESC 10\nmaterials {\n"
        '\t"Mat00" { tex gen; tex scale 0.25; name "Floor"; }\n'
        '\t"Mat01" { name "Floor"; }\n'
        '\t"Mat02" { tex scale 2; }\n'
        '\t"Mat03" { name "Wall"; }\n'
        "}\n",
        encoding="ascii",
    )
    return tmp, desc, total


def run(folder: Path, stem: str, faces: int, steps: int, spread: float, triangle_share: float, seed: int,
        target: float) -> None:
    started = time.perf_counter()
    tmp, desc, count = generate_scene(folder, stem, faces, steps, spread, triangle_share, seed)
    generated = time.perf_counter() - started
    size_mb = tmp.stat().st_size / 1e6
    print(f"{stem}: {count} faces, {size_mb:.1f} MB .qmap.tmp (generated in {generated:.1f} s)")
    started = time.perf_counter()
    report: CompileReport = compile_map(tmp, desc, folder / f"{stem}.qmap")
    total = time.perf_counter() - started
    for stage in ("parse", "front end", "octrees", "write"):
        print(f"  {stage:<10} {report.timings.get(stage, 0.0):7.3f} s")
    verdict = "OK" if total <= target else "OVER TARGET"
    print(f"  {'total':<10} {total:7.3f} s   (target {target:.1f} s: {verdict})")
    print(f"  output {report.output_bytes / 1e6:.1f} MB, draw nodes {report.draw_tree.nodes} "
          f"(depth {report.draw_tree.depth}), collision nodes {report.collision_tree.nodes} "
          f"(depth {report.collision_tree.depth}), materials {len(report.materials)}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=("100k", "1m"))
    parser.add_argument("--keep", type=Path, help="folder to keep the generated files in")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        if args.only in (None, "100k"):
            run(folder, "bench100k", 100_000, 5, 60.0, 0.1, args.seed, 2.2)
        if args.only in (None, "1m"):
            run(folder, "bench1m", 1_000_000, 10, 200.0, 0.4, args.seed + 1, 20.0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
