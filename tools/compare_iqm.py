"""Compare our IQM with the reference compiler's: both decoded, section by section.

    .venv/bin/python tools/compare_iqm.py REFERENCE_IQM_BINARY FILE.iqe...
    .venv/bin/python tools/compare_iqm.py REFERENCE_IQM_BINARY --scene

For each IQE file, the reference compiler (lsalzman/iqm's `iqm`, built by you, never shipped) compiles it and
`formats.iqm.write_iqm` writes it from the same IQE document; the two files are decoded and compared: joints,
meshes, triangles, every vertex array (float arrays within 1e-6, quantized arrays identical), pose
channels, frames, animations and bounds; not the triangle adjacency, which the reference computes from positions
looked up by the wrong index. Prints one line per file, and what differs; exit 1 if anything does.

`--scene` builds a rigged, animated Blender scene instead (two meshes and materials, UVs, a colour attribute,
three bones with blended weights, two actions), exports it with `export_scene.iqe` and `export_scene.iqm`, and
compares what the reference compiler makes of the first with the second.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from formats import iqe, iqm
from formats.iqm.layout import IqmModel

TOLERANCE = 1e-6


def differences(ours: IqmModel, ref: IqmModel) -> list[str]:
    found: list[str] = []

    def same(what: str, a: object, b: object, tolerance: float = 0.0) -> None:
        if a is None or b is None:
            if (a is None) != (b is None):
                found.append(f"{what}: present in only one")
            return
        x, y = np.asarray(a), np.asarray(b)
        if x.shape != y.shape:
            found.append(f"{what}: shape {x.shape} vs {y.shape}")
        elif x.dtype.kind == "f" and tolerance:
            worst = float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64)), initial=0.0))
            if worst > tolerance:
                found.append(f"{what}: differ by up to {worst:.3g}")
        elif not np.array_equal(x, y):
            found.append(f"{what}: {int(np.count_nonzero(x != y))} values differ")

    if ours.joint_names != ref.joint_names:
        found.append("joint names differ")
    same("joint parents", ours.joint_parents, ref.joint_parents)
    same("joint poses", ours.joint_poses, ref.joint_poses, TOLERANCE)
    meshes = [(m.name, m.material, m.first_vertex, m.vertex_count, m.first_triangle, m.triangle_count)
              for m in ours.meshes]  # fmt: skip
    ref_meshes = [(m.name, m.material, m.first_vertex, m.vertex_count, m.first_triangle, m.triangle_count)
                  for m in ref.meshes]  # fmt: skip
    if meshes != ref_meshes:
        found.append("meshes differ")
    kinds = [(a.kind, a.name, a.component) for a in ours.vertex_arrays]
    if kinds != [(a.kind, a.name, a.component) for a in ref.vertex_arrays]:
        found.append(f"vertex arrays differ: {kinds} vs {[(a.kind, a.name, a.component) for a in ref.vertex_arrays]}")
    elif meshes == ref_meshes:
        # The reference compiler reorders each mesh's triangles and vertices for the vertex cache: compare the
        # triangles of each mesh as sets of corner values, each triangle keeping its corner order.
        for mesh in ours.meshes:
            for line in _corner_differences(ours, ref, mesh.first_triangle, mesh.triangle_count):
                found.append(f"mesh {mesh.name!r}: {line}")
    same("pose parents", ours.pose_parents, ref.pose_parents)
    same("pose masks", ours.pose_masks, ref.pose_masks)
    same("channel offsets", ours.channel_offsets, ref.channel_offsets, TOLERANCE)
    same("channel scales", ours.channel_scales, ref.channel_scales, TOLERANCE)
    anims = [(a.name, a.first_frame, a.frame_count, a.framerate, a.flags) for a in ours.anims]
    if anims != [(a.name, a.first_frame, a.frame_count, a.framerate, a.flags) for a in ref.anims]:
        found.append("animations differ")
    same("frames", ours.frames, ref.frames)
    same("bounds", ours.bounds, ref.bounds, TOLERANCE)
    if ours.comment != ref.comment:
        found.append("comment differs")
    return found


def _sorted_corners(model: IqmModel, first: int, count: int) -> list[tuple[str, np.ndarray]]:
    """Each vertex array's values at each triangle's corners, (T, 3*width), triangles sorted by their corners'
    positions and texture coordinates (rounded, so that values 1e-6 apart sort alike)."""
    triangles = model.triangles[first : first + count].astype(np.int64)
    per_array = [(f"{a.kind} {a.name}".strip(), np.concatenate([a.values[triangles[:, k]] for k in range(3)], axis=1))
                 for a in model.vertex_arrays]  # fmt: skip
    keys = [values.astype(np.float64) for name, values in per_array if name in ("position", "texcoord")]
    order = np.lexsort(np.round(np.concatenate(keys, axis=1), 3).T[::-1]) if keys else np.arange(count)
    return [(name, values[order]) for name, values in per_array]


def _corner_differences(ours: IqmModel, ref: IqmModel, first: int, count: int) -> list[str]:
    found = []
    for (name, mine), (_, theirs) in zip(_sorted_corners(ours, first, count), _sorted_corners(ref, first, count),
                                         strict=True):  # fmt: skip
        if mine.dtype.kind == "f":
            worst = float(np.max(np.abs(mine.astype(np.float64) - theirs.astype(np.float64)), initial=0.0))
            if worst > TOLERANCE:
                found.append(f"{name} differs by up to {worst:.3g}")
        elif not np.array_equal(mine, theirs):
            found.append(f"{name}: {int(np.count_nonzero(mine != theirs))} values differ")
    return found


def compare(compiler: str, source: Path) -> tuple[list[str], bool, int]:
    with tempfile.TemporaryDirectory() as folder:
        reference = Path(folder) / "ref.iqm"
        subprocess.run([compiler, str(reference), str(source)], check=True, capture_output=True)
        ref_bytes = reference.read_bytes()
    ours = iqm.write_iqm(iqe.load_iqe(source))
    return differences(iqm.read_iqm_model(ours), iqm.read_iqm_model(ref_bytes)), ours == ref_bytes, len(ref_bytes)


def compare_scene(compiler: str) -> tuple[list[str], bool, int]:
    from bpy_extension import enable_extension  # bpy is loaded only for --scene

    enable_extension()
    from scene_for_iqm import export_rigged_scene

    with tempfile.TemporaryDirectory() as folder:
        iqe_path, iqm_path = export_rigged_scene(Path(folder))
        reference = Path(folder) / "ref.iqm"
        subprocess.run([compiler, str(reference), str(iqe_path)], check=True, capture_output=True)
        ref_bytes, ours = reference.read_bytes(), iqm_path.read_bytes()
    return differences(iqm.read_iqm_model(ours), iqm.read_iqm_model(ref_bytes)), ours == ref_bytes, len(ref_bytes)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    failed = 0
    for name in argv[1:]:
        found, identical, size = compare_scene(argv[0]) if name == "--scene" else compare(argv[0], Path(name))
        verdict = "byte-identical" if identical else ("same model" if not found else "DIFFERENT")
        print(f"{Path(name).name}: {verdict} ({size:,} bytes)")
        for line in found:
            print(f"  {line}")
        failed += bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
