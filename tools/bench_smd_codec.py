"""Time the SMD codec on generated files like spec D.7's: a 100,000-triangle cylinder skinned to a 50-bone chain
(1-3 links per corner, 3 materials) and a 100-frame, 50-bone animation.

Run from the repository root: .venv/bin/python tools/bench_smd_codec.py [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from formats.smd import SkeletonFrame, SmdDocument, SmdNode, Triangles, read_smd, write_smd

BONES = 50


def chain_nodes() -> list[SmdNode]:
    return [SmdNode(i, f"bone{i:02d}", i - 1) for i in range(BONES)]


def cylinder_document(around: int = 250, rings: int = 200) -> SmdDocument:
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
        nodes=chain_nodes(),
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
    return SmdDocument(nodes=chain_nodes(), skeleton=skeleton)


def best_of(repeat: int, job: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best is printed")
    repeat = parser.parse_args().repeat
    for label, doc in (
        ("100k triangles / 50 bones", cylinder_document()),
        ("100 frames x 50 bones", animation_document()),
    ):
        data = write_smd(doc)
        write_time = best_of(repeat, lambda doc=doc: write_smd(doc))
        read_time = best_of(repeat, lambda data=data: read_smd(data))
        print(f"{label}: {len(data) / 1e6:.1f} MB  parse {read_time:.3f} s  write {write_time:.3f} s")


if __name__ == "__main__":
    main()
