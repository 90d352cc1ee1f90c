"""Time the IQE codec on a generated file: a 100k-triangle grid skinned to 50 joints with a 100-frame animation.

Run from the repository root: `.venv/bin/python tools/bench_iqe_codec.py [--side 224] [--repeat 3]`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from formats.iqe import IqeAnimation, IqeDocument, IqeJoint, IqeMesh, read_iqe, write_iqe


def grid_document(side: int, joint_count: int = 50, frame_count: int = 100, seed: int = 1) -> IqeDocument:
    """A (side x side)-quad grid split in triangles, 4 influences per vertex, one animation."""
    random = np.random.default_rng(seed)
    ticks = np.linspace(0.0, 10.0, side + 1, dtype=np.float32)
    x, y = np.meshgrid(ticks, ticks, indexing="ij")
    positions = np.stack((x.ravel(), y.ravel(), random.random(x.size, np.float32)), axis=1)
    vertex_count = positions.shape[0]
    corner = (np.arange(side)[:, None] * (side + 1) + np.arange(side)[None, :]).ravel()
    quads = np.stack((corner, corner + side + 1, corner + side + 2, corner + 1), axis=1)
    triangles = np.concatenate((quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]), axis=1).reshape(-1, 3)
    weights = random.random((vertex_count, 4), np.float32)
    weights /= weights.sum(axis=1, keepdims=True)
    mesh = IqeMesh(
        "grid",
        "stone",
        positions,
        texcoords=positions[:, :2] / 10.0,
        normals=np.tile(np.array([0.0, 0.0, 1.0], np.float32), (vertex_count, 1)),
        blend_indices=random.integers(0, joint_count, (vertex_count, 4)).astype(np.int32),
        blend_weights=weights,
        face_corners=triangles.ravel().astype(np.int32),
        face_sizes=np.full(triangles.shape[0], 3, np.int32),
    )
    joints = [IqeJoint(f"bone{index}", index - 1, (0.0, 0.0, 1.0)) for index in range(joint_count)]
    frames = np.zeros((frame_count, joint_count, 10), np.float32)
    angles = random.random((frame_count, joint_count), np.float32)
    frames[:, :, 2] = 1.0
    frames[:, :, 5] = -np.sin(angles)
    frames[:, :, 6] = -np.cos(angles)
    frames[:, :, 7:] = 1.0
    animation = IqeAnimation("wave", 24.0, True, frames)
    return IqeDocument(meshes=[mesh], joints=joints, animations=[animation])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--side", type=int, default=224, help="quads per grid side (224 -> 100,352 triangles)")
    parser.add_argument("--repeat", type=int, default=3, help="runs; the best time is printed")
    options = parser.parse_args()
    document = grid_document(options.side)
    write_times, read_times = [], []
    data = b""
    for _ in range(options.repeat):
        start = time.perf_counter()
        data = write_iqe(document)
        write_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        parsed = read_iqe(data, "bench.iqe")
        read_times.append(time.perf_counter() - start)
    mesh = parsed.meshes[0]
    print(
        f"{mesh.face_count} triangles, {mesh.vertex_count} vertices, {len(parsed.joints)} joints, "
        f"{parsed.animations[0].frames.shape[0]} frames, {len(data) / 1e6:.1f} MB"
    )
    print(f"write: {min(write_times):.3f} s   parse: {min(read_times):.3f} s   (best of {options.repeat})")


if __name__ == "__main__":
    main()
