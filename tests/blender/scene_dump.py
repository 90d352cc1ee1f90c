"""A deterministic text dump of what an import put into Blender, compared with reference files in git.

The pattern of Blender's own IO tests: objects, transforms, mesh sizes with head and tail samples of positions
and UVs (rounded), materials, attributes, vertex groups, shape keys, bones and actions. Set
IOGF_UPDATE_REFERENCES=1 to rewrite the references after an intended change, then review the diff.
The same reference serves Blender 4.2 and 5.0: only what both versions store alike is dumped.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import bpy
import numpy as np

REFERENCE_ROOT = Path(__file__).resolve().parent / "reference"
SAMPLES_SHOWN = 3
VERSION_SPECIFIC_ATTRIBUTES = {"custom_normal", "sharp_face", "sharp_edge", "material_index"}


def numbers(values: np.ndarray, decimals: int) -> str:
    rounded = np.round(np.asarray(values, np.float64), decimals) + 0.0  # + 0.0 turns -0.0 into 0.0
    return " ".join(f"{v:.{decimals}f}" for v in rounded.ravel())


def head_tail(rows: np.ndarray, decimals: int) -> list[str]:
    if len(rows) <= 2 * SAMPLES_SHOWN:
        return [numbers(row, decimals) for row in rows]
    return [numbers(row, decimals) for row in rows[:SAMPLES_SHOWN]] + ["..."] + [
        numbers(row, decimals) for row in rows[-SAMPLES_SHOWN:]
    ]


def floats(collection: bpy.types.bpy_prop_collection, key: str, width: int) -> np.ndarray:
    values = np.empty(len(collection) * width, np.float64)
    collection.foreach_get(key, values)
    return values.reshape(-1, width)


def face_size_counts(sizes: np.ndarray) -> dict[int, int]:
    values, counts = np.unique(sizes, return_counts=True)
    return {int(v): int(c) for v, c in zip(values, counts, strict=True)}


def dump_mesh(mesh: bpy.types.Mesh) -> list[str]:
    sizes = np.empty(len(mesh.polygons), np.int64)
    mesh.polygons.foreach_get("loop_total", sizes)
    lines = [f"  mesh {mesh.name!r}: {len(mesh.vertices)} vertices, {len(mesh.polygons)} faces, "
             f"{len(mesh.loops)} corners, face sizes {face_size_counts(sizes)}"]  # fmt: skip
    positions = floats(mesh.vertices, "co", 3)
    lines.append(f"    positions sum {numbers(positions.sum(axis=0), 3)}")
    lines += [f"    position {text}" for text in head_tail(positions, 4)]
    lines.append(f"    materials {[m.name if m else None for m in mesh.materials]}")
    for layer in mesh.uv_layers:
        uvs = floats(layer.uv, "vector", 2)
        lines.append(f"    uv {layer.name!r} sum {numbers(uvs.sum(axis=0), 2)}")
        lines += [f"    uv {text}" for text in head_tail(uvs, 4)]
    # Normal values are not dumped: Blender 4.2 and 5.0 compress custom normals differently, and dedicated
    # tests check them against the files with a tolerance.
    lines.append(f"    custom normals {mesh.has_custom_normals}")
    names = sorted(
        f"{a.name}:{a.domain}:{a.data_type}"
        for a in mesh.attributes
        if not a.name.startswith(".") and a.name not in VERSION_SPECIFIC_ATTRIBUTES
        and a.name not in mesh.uv_layers and a.name != "position"
    )  # fmt: skip
    lines.append(f"    attributes {names}")
    if mesh.shape_keys:
        for key in mesh.shape_keys.key_blocks:
            lines.append(f"    shape key {key.name!r} value {key.value:g} sum "
                         f"{numbers(floats(key.data, 'co', 3).sum(axis=0), 3)}")
    return lines


def dump_object(obj: bpy.types.Object) -> list[str]:
    lines = [f"object {obj.name!r} {obj.type} parent={obj.parent.name if obj.parent else None}",
             f"  matrix {numbers(np.array(obj.matrix_world), 4)}"]  # fmt: skip
    if obj.vertex_groups:
        lines.append(f"  vertex groups {[g.name for g in obj.vertex_groups]}")
    lines += [f"  modifier {m.type} {getattr(getattr(m, 'object', None), 'name', '')}" for m in obj.modifiers]
    if obj.type == "MESH":
        lines += dump_mesh(obj.data)
    elif obj.type == "ARMATURE":
        for bone in obj.data.bones:
            parent = bone.parent.name if bone.parent else None
            lines.append(f"  bone {bone.name!r} parent={parent} head {numbers(bone.head_local, 4)} "
                         f"tail {numbers(bone.tail_local, 4)}")  # fmt: skip
    elif obj.type == "LIGHT":
        lines.append(f"  light {obj.data.type} colour {numbers(obj.data.color, 3)}")
    animation = obj.animation_data
    if animation and animation.action:
        lines.append(f"  action {animation.action.name!r} frames {numbers(animation.action.frame_range, 1)}")
    return lines


def dump_scene() -> str:
    lines = []
    for obj in sorted(bpy.context.scene.objects, key=lambda o: o.name):
        lines += dump_object(obj)
    lines += [f"action {a.name!r} frames {numbers(a.frame_range, 1)} users {a.users}" for a in bpy.data.actions]
    return "\n".join(lines) + "\n"


def compare_with_reference(name: str) -> None:
    """Assert the current scene dump equals tests/blender/reference/<name>.txt (or rewrite it on request)."""
    reference = REFERENCE_ROOT / f"{name}.txt"
    text = dump_scene()
    if os.environ.get("IOGF_UPDATE_REFERENCES") == "1" or not reference.exists():
        reference.parent.mkdir(parents=True, exist_ok=True)
        reference.write_text(text)
        if os.environ.get("IOGF_UPDATE_REFERENCES") != "1":
            raise AssertionError(f"{reference} did not exist; it was written now: review it and commit it")
        return
    expected = reference.read_text()
    if text != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True), "reference", "now"))
        raise AssertionError(f"scene differs from {reference} (IOGF_UPDATE_REFERENCES=1 rewrites it):\n{diff}")
