"""A rigged, animated Blender scene exported as IQE and as IQM, for comparing with the reference compiler.

Two meshes with their own materials (a UV sphere with a colour attribute, skinned to a three-bone chain with
weights blended between neighbouring bones, and a cube on the top bone), two actions of different lengths,
frame rate and loop flag. Both files come from the extension's operators: enable the extension first.
"""

from __future__ import annotations

import math
from pathlib import Path

import bpy
import numpy as np

BONES = (("root", None, 0.0, 1.0), ("spine", "root", 1.0, 2.0), ("head", "spine", 2.0, 3.0))


def _armature() -> bpy.types.Object:
    data = bpy.data.armatures.new("rig")
    rig = bpy.data.objects.new("rig", data)
    bpy.context.scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    for name, parent, bottom, top in BONES:
        bone = data.edit_bones.new(name)
        bone.head, bone.tail = (0.0, 0.0, bottom), (0.0, 0.0, top)
        bone.roll = 0.3 * bottom  # bone axes that are not the world's
        if parent:
            bone.parent = data.edit_bones[parent]
            bone.use_connect = True
    bpy.ops.object.mode_set(mode="OBJECT")
    return rig


def _material(name: str, color: tuple[float, float, float, float]) -> bpy.types.Material:
    material = bpy.data.materials.new(name)
    material.diffuse_color = color
    return material


def _skinned_sphere(rig: bpy.types.Object) -> None:
    bpy.ops.mesh.primitive_uv_sphere_add(segments=24, ring_count=12, radius=0.8, location=(0.0, 0.0, 1.5))
    sphere = bpy.context.active_object
    sphere.name = "body"
    sphere.scale = (1.0, 0.7, 1.9)
    bpy.ops.object.transform_apply(location=True, rotation=True, scale=True)
    sphere.data.materials.append(_material("skin", (0.8, 0.6, 0.5, 1.0)))
    heights = np.array([v.co.z for v in sphere.data.vertices])
    colours = sphere.data.color_attributes.new("paint", "BYTE_COLOR", "CORNER")
    shades = np.random.default_rng(3).random((len(sphere.data.loops), 4))
    shades[:, 3] = 1.0
    colours.data.foreach_set("color", shades.ravel())
    groups = [sphere.vertex_groups.new(name=name) for name, *_ in BONES]
    for index, height in enumerate(heights.tolist()):  # a few hundred vertices: a loop is clear enough here
        position = min(max(height - 0.5, 0.0), 1.999)
        lower = int(position)
        blend = position - lower
        groups[lower].add([index], 1.0 - blend, "REPLACE")
        if blend > 0.0:
            groups[lower + 1].add([index], blend, "REPLACE")
    sphere.parent = rig
    sphere.modifiers.new("rig", "ARMATURE").object = rig


def _cube_on_head(rig: bpy.types.Object) -> None:
    bpy.ops.mesh.primitive_cube_add(size=0.5, location=(0.0, 0.0, 3.3))
    cube = bpy.context.active_object
    cube.name = "hat"
    cube.data.materials.append(_material("felt", (0.2, 0.2, 0.6, 1.0)))
    cube.vertex_groups.new(name="head").add(list(range(len(cube.data.vertices))), 1.0, "REPLACE")
    cube.parent = rig
    cube.modifiers.new("rig", "ARMATURE").object = rig


def _action(rig: bpy.types.Object, name: str, frames: int, swing: float) -> bpy.types.Action:
    rig.animation_data_create()
    action = bpy.data.actions.new(name)
    rig.animation_data.action = action
    for frame in range(1, frames + 1):
        phase = 2.0 * math.pi * (frame - 1) / frames
        for index, bone in enumerate(rig.pose.bones):
            bone.rotation_mode = "XYZ"
            bone.rotation_euler = (swing * math.sin(phase + index), 0.5 * swing * math.cos(phase), 0.1 * index)
            bone.location = (0.0, 0.05 * math.sin(phase) * index, 0.0)
            bone.scale = (1.0, 1.0 + 0.1 * math.sin(phase), 1.0)
            for path in ("rotation_euler", "location", "scale"):
                bone.keyframe_insert(path, frame=frame)
    return action


def build_rigged_scene() -> None:
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.context.scene.render.fps = 24
    rig = _armature()
    _skinned_sphere(rig)
    _cube_on_head(rig)
    _action(rig, "sway", 12, 0.4)
    walk = _action(rig, "nod", 20, 0.8)
    walk.use_frame_range, walk.frame_start, walk.frame_end = True, 1, 21  # a cycle of 20 frames: 21 is 1 again
    walk.use_cyclic = True  # the loop flag
    bpy.context.scene.frame_set(1)


def export_rigged_scene(folder: Path) -> tuple[Path, Path]:
    """Build the scene and export it; returns the IQE and the IQM path."""
    build_rigged_scene()
    iqe_path, iqm_path = folder / "scene.iqe", folder / "scene.iqm"
    assert bpy.ops.export_scene.iqe(filepath=str(iqe_path)) == {"FINISHED"}
    assert bpy.ops.export_scene.iqm(filepath=str(iqm_path)) == {"FINISHED"}
    return iqe_path, iqm_path
