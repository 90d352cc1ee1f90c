"""Textures found on import: an Image Texture node on the imported UV map, wired to Base Color (and Alpha where
the engine blends or masks with it), for the materials an import made. The search rules are `formats.textures`."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import bpy
import numpy as np

from ..formats import textures
from . import compat
from .conventions import srgb_to_linear
from .mesh_io import original_name
from .operators import Summary

FIND_TEXTURES = {
    "name": "Find Textures",
    "default": True,
    "description": "Look in the model's folder tree for each material's image, by the game engine's rules, and "
    "wire it to Base Color (alpha too where the engine uses it)",
}


def use_texture(
    material: bpy.types.Material, texture: textures.Texture, summary: Summary, uv_map: str | None = None
) -> None:
    """Wire the image into the material (an image already loaded from that file is reused); a file that does not
    start as an image of its kind is left out, and said so. `uv_map`: the map to sample (else that of the first mesh
    using the material)."""
    if not textures.looks_like_an_image(texture.path):
        if texture.path not in summary.textures_unreadable:
            summary.textures_unreadable.add(texture.path)
            summary.warnings.append(f"{texture.path}: not an image (damaged or cut short), left out")
        return
    image = bpy.data.images.load(texture.path, check_existing=True)
    tree = compat.material_node_tree(material)
    nodes, links = tree.nodes, tree.links
    if any(node.type == "TEX_IMAGE" for node in nodes):
        return  # the material already has its image
    shader = next((node for node in nodes if node.type == "BSDF_PRINCIPLED"), None)
    if shader is None:
        shader = nodes.new("ShaderNodeBsdfPrincipled")
        output = next((node for node in nodes if node.type == "OUTPUT_MATERIAL"), None) or nodes.new(
            "ShaderNodeOutputMaterial")  # fmt: skip
        links.new(shader.outputs["BSDF"], output.inputs["Surface"])
    image_node = nodes.new("ShaderNodeTexImage")
    image_node.image = image
    image_node.location = (shader.location.x - 320, shader.location.y)
    uv_map = uv_map if uv_map is not None else uv_map_of(material)
    if uv_map is not None:
        uv_node = nodes.new("ShaderNodeUVMap")
        uv_node.uv_map = uv_map
        uv_node.location = (image_node.location.x - 220, image_node.location.y - 120)
        links.new(uv_node.outputs["UV"], image_node.inputs["Vector"])
    links.new(image_node.outputs["Color"], shader.inputs["Base Color"])
    if texture.key_color is not None:
        links.new(_key_color_alpha(nodes, links, image_node, texture.key_color), shader.inputs["Alpha"])
        compat.blend_with_alpha(material, masked=True)
    elif texture.use_alpha:
        links.new(image_node.outputs["Alpha"], shader.inputs["Alpha"])
        compat.blend_with_alpha(material, masked=texture.alpha_test)
    summary.textures_found.add(texture.path)


def _key_color_alpha(
    nodes: bpy.types.Nodes, links: bpy.types.NodeLinks, image_node: bpy.types.Node, key: tuple[int, int, int]
) -> bpy.types.NodeSocket:
    """Alpha 0 where the image shows the key colour, else 1, as GoldSrc draws a `{` texture: nodes, so that the
    image file stays as it is. Sampled texel by texel (Closest), as the key must be met exactly."""
    image_node.interpolation = "Closest"
    distance = nodes.new("ShaderNodeVectorMath")
    distance.operation = "DISTANCE"
    distance.label = "GoldSrc key colour"
    distance.location = (image_node.location.x + 60, image_node.location.y - 300)
    links.new(image_node.outputs["Color"], distance.inputs[0])
    distance.inputs[1].default_value = srgb_to_linear(np.array(key) / 255.0).tolist()  # (the node's colour: linear)
    opaque = nodes.new("ShaderNodeMath")
    opaque.operation = "GREATER_THAN"
    opaque.inputs[1].default_value = 1e-3
    opaque.location = (distance.location.x + 180, distance.location.y)
    links.new(distance.outputs["Value"], opaque.inputs[0])
    socket: bpy.types.NodeSocket = opaque.outputs["Value"]
    return socket


def uv_map_of(material: bpy.types.Material) -> str | None:
    """The UV map of the first mesh using the material (each import makes one per mesh)."""
    for mesh in bpy.data.meshes:
        if mesh.uv_layers and any(slot == material for slot in mesh.materials):
            active = mesh.uv_layers.active
            return str(active.name if active is not None else mesh.uv_layers[0].name)
    return None


@contextmanager
def texturing_new_materials(model_path: str, enabled: bool, summary: Summary) -> Iterator[None]:
    """Give every material made inside the block the image its name stands for, if it can be found. Materials the
    block's new meshes took from the file (same name) are the user's: they are left as they are, and counted."""
    before = {material.as_pointer() for material in bpy.data.materials}
    if summary.materials_at_start is None:  # (a material an earlier file of the import made is not the user's)
        summary.materials_at_start = before
    meshes_before = {mesh.as_pointer() for mesh in bpy.data.meshes}
    new_search()
    yield
    if not enabled:
        return
    for mesh in bpy.data.meshes:
        if mesh.as_pointer() not in meshes_before:
            summary.materials_reused.update(original_name(material) for material in mesh.materials
                                            if material is not None
                                            and material.as_pointer() in summary.materials_at_start)  # fmt: skip
    for material in bpy.data.materials:
        if material.as_pointer() in before:
            continue
        name = original_name(material)
        texture = textures.find_texture(name, model_path)
        if texture is None:
            summary.textures_missing.add(name)
        else:
            use_texture(material, texture, summary)


def new_search() -> None:
    """Folders are listed once per file imported, not once per session: files may have changed since."""
    textures.clear_cache()


def texture_joe_object(
    obj: bpy.types.Object, model_path: str, member: str | None, summary: Summary,
    made: dict[tuple[str, bool], bpy.types.Material],
) -> None:
    """A JOE model has no material: one named after its texture, if VDrift's conventions find one, shared by the
    models of the import with the same texture and alpha (`made`: those made so far). Call `new_search` before each
    file (a pack's members share its folder's listing)."""
    texture = textures.joe_texture(model_path, member)
    if texture is None:  # (not said: a JOE names no material or image, so a user has nothing to act on)
        return
    key = (texture.path, texture.use_alpha)
    material = made.get(key)
    if material is None:
        material = made[key] = bpy.data.materials.new(os.path.splitext(os.path.basename(texture.path))[0])
        active = obj.data.uv_layers.active  # (every JOE import names its map alike: one serves all the models)
        use_texture(material, texture, summary, active.name if active is not None else None)
    obj.data.materials.append(material)
