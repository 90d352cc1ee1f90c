"""Textures found on import: an Image Texture node on the imported UV map, wired to Base Color (and Alpha where
the engine blends or masks with it), for the materials an import made. The search rules are `formats.textures`.
Blender cannot read Source's VTF textures: they are decoded (`formats.vtf`) into an image packed into the .blend."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import bpy
import numpy as np

from ..formats import textures, vtf
from ..formats.errors import FormatError
from . import compat
from .conventions import srgb_to_linear
from .mesh_io import ORIGINAL_NAME, original_name
from .operators import Summary

FIND_TEXTURES = {
    "name": "Find Textures",
    "default": True,
    "description": "Look for each material's image where the game engine looks for it: beside the model, or where "
    "the files the engine reads say (a QC's material folders, an iqm.cfg, a VDrift car's or track's lists), and "
    "wire it to Base Color (alpha too where the engine uses it)",
}


def use_texture(
    material: bpy.types.Material, texture: textures.Texture, summary: Summary, uv_map: str | None = None
) -> None:
    """Wire the image into the material (an image already loaded from that file is reused); a file that does not
    start as an image of its kind is left out, and said so. `uv_map`: the map to sample (else that of the first mesh
    using the material)."""
    if texture.path.lower().endswith(".vtf"):
        image = vtf_image(texture.path, summary)
    elif textures.looks_like_an_image(texture.path):
        image = bpy.data.images.load(texture.path, check_existing=True)
    else:
        unreadable(texture.path, "not an image (damaged or cut short)", summary)
        return
    if image is None:
        return
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
        vector = uv_node.outputs["UV"]
        if texture.uv_mapping is not None:
            vector = _mapping(nodes, links, vector, texture.uv_mapping, image_node)
        links.new(vector, image_node.inputs["Vector"])
    links.new(image_node.outputs["Color"], shader.inputs["Base Color"])
    if texture.key_color is not None:
        links.new(_key_color_alpha(nodes, links, image_node, texture.key_color), shader.inputs["Alpha"])
        compat.blend_with_alpha(material, masked=True)
    elif texture.use_alpha:
        links.new(image_node.outputs["Alpha"], shader.inputs["Alpha"])
        compat.blend_with_alpha(material, masked=texture.alpha_test)
    summary.textures_found.add(texture.path)


VTF_SOURCE = "iogf_vtf"  # an image decoded from a VTF: the file's path (the image is packed; its own path is not it)


def vtf_image(path: str, summary: Summary) -> bpy.types.Image | None:
    """The image decoded from a VTF, packed into the .blend (an image an earlier import decoded from the same file
    is reused); None, said once, for a VTF that cannot be read."""
    existing = next((image for image in bpy.data.images if image.get(VTF_SOURCE) == path), None)
    if existing is not None:
        return existing
    try:
        decoded = vtf.load_vtf(path)
    except FormatError as error:
        unreadable(path, f"not a VTF this can read ({error.message})", summary)
        return None
    stem = os.path.splitext(os.path.basename(path))[0]
    image = bpy.data.images.new(stem, decoded.width, decoded.height, alpha=True)
    pixels = np.flipud(decoded.rgba).astype(np.float32) / 255.0  # (VTF rows run top first, Blender's bottom first)
    image.pixels.foreach_set(pixels.ravel())
    image.filepath_raw = f"//textures/{stem}.png"  # (where Unpack writes it: never over the VTF)
    image.file_format = "PNG"
    image.pack()
    image[VTF_SOURCE] = path
    return image


def unreadable(path: str, why: str, summary: Summary) -> None:
    """Leave the file out, and say so once an import."""
    if path not in summary.textures_unreadable:
        summary.textures_unreadable.add(path)
        summary.warnings.append(f"{path}: {why}, left out")


def _mapping(
    nodes: bpy.types.Nodes, links: bpy.types.NodeLinks, vector: bpy.types.NodeSocket, mapping: textures.UvMapping,
    image_node: bpy.types.Node,
) -> bpy.types.NodeSocket:  # fmt: skip
    """A Mapping node moving the UVs as the material's texture transform does."""
    node = nodes.new("ShaderNodeMapping")
    node.vector_type = "POINT"
    node.label = "$basetexturetransform"
    node.location = (image_node.location.x - 200, image_node.location.y - 260)
    node.inputs["Location"].default_value = (*mapping.location, 0.0)
    node.inputs["Rotation"].default_value = (0.0, 0.0, mapping.rotation)
    node.inputs["Scale"].default_value = (*mapping.scale, 1.0)
    links.new(vector, node.inputs["Vector"])
    socket: bpy.types.NodeSocket = node.outputs["Vector"]
    return socket


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
def texturing_new_materials(
    model_path: str, enabled: bool, summary: Summary, search: textures.SourceSearch | None = None
) -> Iterator[None]:
    """Give every material made inside the block the image its name stands for, if it can be found (`search`: a
    Source or GoldSrc model's, by the engine's rules first). Materials the block's new meshes took from the file
    (same name) are the user's: they are left as they are, and counted."""
    # (sets of the blocks themselves, which hash and compare by their pointers: a fifth of the cost of as_pointer()
    # calls, and a QC's small SMDs each take four such passes over the .blend's materials and meshes)
    before = set(bpy.data.materials)
    if summary.materials_at_start is None:  # (a material an earlier file of the import made is not the user's)
        summary.materials_at_start = {material.as_pointer() for material in before}
        new_search()  # (once an import: the files of a QC share their folders)
    meshes_before = set(bpy.data.meshes)
    yield
    if not enabled:
        return
    for mesh in bpy.data.meshes:
        if mesh not in meshes_before:
            summary.materials_reused.update(original_name(material) for material in mesh.materials
                                            if material is not None
                                            and material.as_pointer() in summary.materials_at_start)  # fmt: skip
    skins = engine_skins(model_path, meshes_before) if search is None else {}
    for material in bpy.data.materials:
        if material in before:
            continue
        name = original_name(material)
        try:
            texture = skins.get(material.as_pointer()) or textures.find_texture(name, model_path, search, summary.notes)
        except FormatError as error:  # (a VMT that cannot be read: the engine would draw its checkerboard)
            unreadable(error.path or name, f"material {name!r} cannot be read ({error.message})", summary)
            texture = None
        if texture is None:
            summary.textures_missing.add(name)
        else:
            use_texture(material, texture, summary)


def engine_skins(model_path: str, meshes_before: set[bpy.types.Mesh]) -> dict[int, textures.Texture]:
    """The image an IQM's (or IQE's) engine config names for each new material (by pointer), from the meshes using
    it (`iqmskin MESH IMAGE`, "*" for every mesh): Red Eclipse, Tesseract and Sauerbraten skin by mesh, not by
    material. An IQM without a config: the engines' default `skin` image, for a material its own name finds nothing
    for."""
    if not model_path.lower().endswith((".iqm", ".iqe")):
        return {}
    configured = textures.model_config_skins(model_path)
    is_iqm = model_path.lower().endswith(".iqm")  # (the engines load IQMs, not IQEs: no default skin for an IQE)
    default = textures.default_skin(model_path) if configured is None and is_iqm else None
    found: dict[int, textures.Texture] = {}
    for mesh in bpy.data.meshes:
        if mesh in meshes_before:
            continue
        skin = (configured.get(_file_mesh_name(mesh)) or configured.get("*")) if configured else default
        for material in mesh.materials:
            if skin is None or material is None or material.as_pointer() in found:
                continue
            if configured or textures.find_texture(original_name(material), model_path) is None:
                found[material.as_pointer()] = skin
    return found


def _file_mesh_name(mesh: bpy.types.Mesh) -> str:
    """The model's own name of the mesh (Blender numbers a repeated one: `body.001`)."""
    name = original_name(mesh)
    stem, dot, number = name.rpartition(".")
    return stem if dot and number.isdigit() and len(number) == 3 and mesh.get(ORIGINAL_NAME) is None else name


def new_search() -> None:
    """Folders are listed once an import (or a file), not once a session: files may have changed since."""
    textures.clear_cache()


@dataclass
class JoeMaterials:
    """The materials an import made for JOE models: by (texture, alpha), and the first of each kind (alpha, UV map)
    with its image node, whose copy makes the next of that kind (copying the nodes takes half the time of making
    them: a track has hundreds of textures)."""

    by_texture: dict[tuple[str, bool], bpy.types.Material] = field(default_factory=dict)
    first_of_kind: dict[tuple[bool, str | None], tuple[bpy.types.Material, str]] = field(default_factory=dict)
    # (with the name of its image node: a copy's node is looked up by name, not by walking its nodes)
    image_names: set[str] = field(default_factory=lambda: _image_file_names(bpy.data.images))
    # (the file names of the images in the .blend: those it had, and those loaded since)


def _image_file_names(images: Iterable[bpy.types.Image]) -> set[str]:
    return {_file_name(image.filepath) for image in images}


def _file_name(path: str) -> str:
    """A path's last part, case-folded (a name Blender might see as the same file's on any system)."""
    return re.split(r"[\\/]", path)[-1].casefold()


def _load_image(path: str, made: JoeMaterials) -> bpy.types.Image:
    """bpy.data.images.load(path, check_existing=True), without its pass over every image of the .blend when
    none has the file's name, so cannot be the file's (a track loads hundreds: the passes took as long as the
    loads themselves)."""
    name = _file_name(path)
    maybe_loaded = name in made.image_names
    made.image_names.add(name)
    return bpy.data.images.load(path, check_existing=maybe_loaded)


def texture_joe_mesh(
    mesh: bpy.types.Mesh, model_path: str, member: str | None, summary: Summary, made: JoeMaterials
) -> None:
    """A JOE model has no material: one named after its texture, if VDrift's conventions find one, shared by the
    models of the import with the same texture and alpha (`made`: those made so far). Call `new_search` once before
    the import (its files and a pack's members share their folders' listings and lists)."""
    texture = textures.joe_texture(model_path, member)
    if texture is None:  # (not said: a JOE names no material or image, so a user has nothing to act on)
        return
    key = (texture.path, texture.use_alpha)
    material = made.by_texture.get(key)
    if material is None:
        active = mesh.uv_layers.active  # (every JOE import names its map alike: one serves all the models)
        material = made.by_texture[key] = joe_material(texture, active.name if active is not None else None,
                                                        summary, made)  # fmt: skip
    mesh.materials.append(material)


def joe_material(
    texture: textures.Texture, uv_map: str | None, summary: Summary, made: JoeMaterials
) -> bpy.types.Material:
    """A new material named after the texture, wired to it (`uv_map`: the map it samples): a copy of the first of
    its kind that `made` holds where it can be, else made anew, and held for the next."""
    name = os.path.splitext(os.path.basename(texture.path))[0]
    kind = (texture.use_alpha, uv_map)
    like = made.first_of_kind.get(kind)
    plain = texture.key_color is None and texture.uv_mapping is None and not texture.alpha_test
    if like is not None and plain and textures.looks_like_an_image(texture.path):
        material = like[0].copy()
        material.name = name
        image_node = compat.material_node_tree(material).nodes[like[1]]
        image_node.image = _load_image(texture.path, made)
        summary.textures_found.add(texture.path)
        return material
    material = bpy.data.materials.new(name)
    use_texture(material, texture, summary, uv_map)
    made.image_names.add(_file_name(texture.path))  # (the one file use_texture may have loaded)
    image_node = next((node for node in compat.material_node_tree(material).nodes if node.type == "TEX_IMAGE"), None)
    if plain and image_node is not None:
        made.first_of_kind.setdefault(kind, (material, image_node.name))
    return material
