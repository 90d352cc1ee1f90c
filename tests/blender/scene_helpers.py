"""Small scenes built with bpy for export tests, and readers of what Blender holds."""

from __future__ import annotations

import bpy
import numpy as np


def mesh_object(
    name: str, positions: list[tuple[float, float, float]], faces: list[tuple[int, ...]]
) -> bpy.types.Object:
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(positions, [], faces)
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.collection.objects.link(obj)
    return obj


def cube(name: str = "Cube", size: float = 2.0, location: tuple[float, float, float] = (0, 0, 0)) -> bpy.types.Object:
    bpy.ops.mesh.primitive_cube_add(size=size, location=location)
    obj = bpy.context.active_object
    obj.name = name
    return obj


def grid_object(name: str, quads_per_side: int) -> bpy.types.Object:
    """A flat grid of quads made with numpy: 2 * n * n triangles once triangulated."""
    n = quads_per_side
    xs, ys = np.meshgrid(np.arange(n + 1, dtype=np.float32), np.arange(n + 1, dtype=np.float32))
    positions = np.stack([xs.ravel(), ys.ravel(), np.zeros(xs.size, np.float32)], axis=1)
    corner = (np.arange(n)[:, None] * (n + 1) + np.arange(n)[None, :]).ravel()
    quads = np.stack([corner, corner + 1, corner + n + 2, corner + n + 1], axis=1)
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(len(positions))
    mesh.vertices.foreach_set("co", positions.ravel())
    mesh.loops.add(quads.size)
    mesh.loops.foreach_set("vertex_index", quads.ravel().astype(np.intc))
    mesh.polygons.add(len(quads))
    mesh.polygons.foreach_set("loop_start", (np.arange(len(quads)) * 4).astype(np.intc))
    mesh.update(calc_edges=True)
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.collection.objects.link(obj)
    return obj


def select_only(*objects: bpy.types.Object) -> None:
    for obj in bpy.context.scene.objects:
        obj.select_set(obj in objects)


def active_collection_holding(name: str, obj: bpy.types.Object) -> bpy.types.Collection:
    """A new scene collection that alone holds `obj`, made the active one (where exporter_add puts exporters)."""
    collection = bpy.data.collections.new(name)
    bpy.context.scene.collection.children.link(collection)
    for owner in list(obj.users_collection):
        owner.objects.unlink(obj)
    collection.objects.link(obj)
    bpy.context.view_layer.active_layer_collection = bpy.context.view_layer.layer_collection.children[name]
    return collection


def chain_rig(*names: str, deform: tuple[bool, ...] | None = None) -> bpy.types.Object:
    """An armature whose bones stand on one another along +Z, each 1 long; nothing selected but it."""
    bpy.ops.object.armature_add(location=(0, 0, 0))
    armature = bpy.context.active_object
    bpy.ops.object.mode_set(mode="EDIT")
    edit_bones = armature.data.edit_bones
    edit_bones.remove(edit_bones[0])
    parent = None
    for row, name in enumerate(names):
        bone = edit_bones.new(name)
        bone.head, bone.tail = (0, 0, row), (0, 0, row + 1)
        bone.parent = parent
        bone.use_deform = True if deform is None else deform[row]
        parent = bone
    bpy.ops.object.mode_set(mode="OBJECT")
    return armature


def turn_keys(armature: bpy.types.Object, bone_name: str, angles: dict[int, float]) -> None:
    bone = armature.pose.bones[bone_name]
    bone.rotation_mode = "XYZ"
    for frame, angle in angles.items():
        bone.rotation_euler = (angle, 0, 0)
        bone.keyframe_insert("rotation_euler", frame=frame)
