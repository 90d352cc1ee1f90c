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
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bpy_extension import enable_extension  # must come before `import bpy`

enable_extension()
import bpy  # noqa: E402

from formats.smd import SkeletonFrame, SmdDocument, SmdNode, Triangles, write_smd  # noqa: E402

BONES = 50


def chain() -> list[SmdNode]:
    return [SmdNode(i, f"bone{i:02d}", i - 1) for i in range(BONES)]


def reference_document(around: int = 250, rings: int = 200) -> SmdDocument:
    rng = np.random.default_rng(1)
    angle = np.linspace(0, 2 * np.pi, around, endpoint=False)
    height = np.linspace(0, 100, rings + 1)
    grid = np.stack(np.meshgrid(angle, height, indexing="xy"), axis=-1).reshape(-1, 2)
    points = np.column_stack([10 * np.cos(grid[:, 0]), 10 * np.sin(grid[:, 0]), grid[:, 1]])
    normals = np.column_stack([np.cos(grid[:, 0]), np.sin(grid[:, 0]), np.zeros(len(grid))])
    uv = np.column_stack([grid[:, 0] / (2 * np.pi), grid[:, 1] / 100])
    a = (np.arange(rings)[:, None] * around + np.arange(around)[None, :]).reshape(-1)
    b = (np.arange(rings)[:, None] * around + (np.arange(around)[None, :] + 1) % around).reshape(-1)
    corners = np.concatenate([np.stack([a, b, b + around], 1), np.stack([a, b + around, a + around], 1)])
    # weights per position (so equal positions share a vertex): 1-3 neighbouring bones along the height
    count = len(points)
    links = rng.integers(1, 4, size=count)
    base = np.minimum((points[:, 2] / 100 * (BONES - 1)).astype(np.int64), BONES - 3)
    bones = np.concatenate([base[links > k] + k for k in range(3)])
    owner = np.concatenate([np.flatnonzero(links > k) for k in range(3)])
    order = np.argsort(owner, kind="stable")
    bones, owner = bones[order], owner[order]
    weights = np.round(rng.random(owner.size) + 0.1, 6)
    offsets = np.concatenate([[0], np.cumsum(links)])
    corner_links = links[corners.reshape(-1)]
    rows = np.repeat(offsets[corners.reshape(-1)], corner_links) + (
        np.arange(int(corner_links.sum())) - np.repeat(np.cumsum(corner_links) - corner_links, corner_links)
    )
    triangles = len(corners)
    return SmdDocument(
        nodes=chain(),
        skeleton=[
            SkeletonFrame(
                0,
                np.arange(BONES, dtype=np.int32),
                np.tile([0.0, 0.0, 2.0], (BONES, 1)),
                np.tile([0.0, 0.0, 0.05], (BONES, 1)),
            )
        ],
        triangles=Triangles(
            material_names=["metal", "metal dark", "skin"],
            material_indices=rng.integers(0, 3, size=triangles).astype(np.int32),
            parent_bones=np.zeros((triangles, 3), dtype=np.int32),
            positions=points[corners],
            normals=normals[corners],
            uvs=uv[corners],
            link_counts=corner_links.reshape(-1, 3).astype(np.int32),
            link_bones=bones[rows].astype(np.int32),
            link_weights=weights[rows],
        ),
    )


def animation_document(frames: int = 100) -> SmdDocument:
    rng = np.random.default_rng(2)
    skeleton = []
    for t in range(frames):
        rotations = np.column_stack([np.zeros(BONES), 0.1 * np.sin(t / 10 + np.arange(BONES)), np.full(BONES, 0.05)])
        positions = np.tile([0.0, 0.0, 2.0], (BONES, 1)) + rng.normal(0, 0.01, (BONES, 3))
        skeleton.append(SkeletonFrame(t, np.arange(BONES, dtype=np.int32), positions, rotations))
    return SmdDocument(nodes=chain(), skeleton=skeleton)


def timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def best_of(repeat: int, setup: Callable[[], None], work: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        setup()
        times.append(timed(work))
    return min(times)


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
