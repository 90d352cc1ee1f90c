"""Convert Textures for GoldSrc: the image of each material's Image Texture node, when it breaks GoldSrc's rules
(not an 8-bit indexed BMP, sides not multiples of 8, over 512 x 512, a name over 63 characters), written beside the
SMD as an 8-bit BMP within them (formats/bmp8), and the SMD's material line naming that file. An image that keeps
the rules is named as it is, and copied beside the SMD when it is elsewhere. A texture whose alpha the material
uses (the node's Alpha output linked) and has pixels under 0.5 is masked: `{name}.bmp`, transparent pixels the
palette's last colour."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import bpy
import numpy as np

from ..common import mesh_io
from ..common.operators import Summary
from ..formats import bmp8
from ..formats.atomic import Content
from ..formats.errors import FormatError


@dataclass
class GoldsrcTexture:
    file_name: str  # the .bmp the material line names
    content: Content | None  # its bytes to write beside the SMD; None: it is there already
    masked: bool


def convert_textures(
    meshes: list[bpy.types.Object], material_names: list[list[str]], folder: str, summary: Summary
) -> tuple[list[list[str]], list[tuple[str, Content]], list[str]]:
    """Each mesh's material names (one list per mesh, as its corners name them) with GoldSrc texture files for
    those whose material has an image; the files to write; the masked textures' file names."""
    materials = {mesh_io.original_name(slot.material): slot.material for obj in meshes for slot in obj.material_slots
                 if slot.material is not None}  # fmt: skip
    chosen: dict[str, GoldsrcTexture] = {}
    by_image: dict[tuple[str, bool], GoldsrcTexture | None] = {}  # (materials sharing an image share its file)
    taken: set[str] = set()
    for name in dict.fromkeys(name for names in material_names for name in names):
        material = materials.get(name)
        image = base_image(material) if material is not None else None
        if material is None or image is None:
            continue
        key = (image.name, _alpha_used(material, image))
        if key not in by_image:
            by_image[key] = goldsrc_texture(material, image, folder, taken, summary)
        texture = by_image[key]
        if texture is not None:
            chosen[name] = texture
            taken.add(texture.file_name.lower())
    unique = {id(texture): texture for texture in chosen.values()}.values()
    files = [(os.path.join(folder, texture.file_name), texture.content) for texture in unique
             if texture.content is not None]  # fmt: skip
    if files:
        summary.notes.append(f"{len(files)} texture(s) written for GoldSrc beside the SMD: "
                             f"{', '.join(os.path.basename(path) for path, _ in files)}")  # fmt: skip
    renamed = [[chosen[name].file_name if name in chosen else name for name in names] for names in material_names]
    return renamed, files, [texture.file_name for texture in unique if texture.masked]


def rule_warnings(meshes: list[bpy.types.Object], material_names: list[list[str]]) -> list[str]:
    """Without Convert Textures: one warning naming the materials whose images break GoldSrc's texture rules (an
    image that is not an 8-bit indexed BMP of sides multiples of 8 up to 512, or a name over 63 characters)."""
    materials = {mesh_io.original_name(slot.material): slot.material for obj in meshes for slot in obj.material_slots
                 if slot.material is not None}  # fmt: skip
    broken = []
    for name in dict.fromkeys(name for names in material_names for name in names):
        material = materials.get(name)
        image = base_image(material) if material is not None else None
        if image is None:
            continue
        source = _image_file(image)
        data = _file_bytes(image, source)
        try:
            header = bmp8.bmp_header(data, source) if data is not None and source.lower().endswith(".bmp") else None
        except FormatError:
            header = None
        problems = bmp8.goldsrc_problems(header, os.path.basename(source) or image.name)
        if problems:
            broken.append(f"{name!r} ({'; '.join(problems)})")
    if not broken:
        return []
    return [f"GoldSrc's studiomdl takes textures as 8-bit indexed BMPs, sides multiples of 8 up to 512, named in at "
            f"most 63 characters; {len(broken)} material image(s) are not: {', '.join(broken[:5])}"
            f"{' ...' if len(broken) > 5 else ''} (Convert Textures for GoldSrc writes them as such)"]


def base_image(material: bpy.types.Material) -> bpy.types.Image | None:
    """The image of the Image Texture node feeding a shader's Base Color, else of the first one with an image."""
    tree = material.node_tree
    if tree is None:
        return None
    nodes = [node for node in tree.nodes if node.type == "TEX_IMAGE" and node.image is not None]
    for link in tree.links:
        if link.from_node in nodes and link.to_socket.name in ("Base Color", "Color"):
            return link.from_node.image
    return nodes[0].image if nodes else None


def goldsrc_texture(
    material: bpy.types.Material, image: bpy.types.Image, folder: str, taken: set[str], summary: Summary
) -> GoldsrcTexture | None:
    source = _image_file(image)
    data = _file_bytes(image, source)
    stem = os.path.splitext(os.path.basename(source))[0] if source else image.name
    if data is not None and source.lower().endswith(".bmp"):
        try:
            header: bmp8.BmpHeader | None = bmp8.bmp_header(data, source)
        except FormatError:
            header = None
        name = os.path.basename(source)
        if not bmp8.goldsrc_problems(header, name) and name.lower() not in taken:
            beside = os.path.join(folder, name)
            there = os.path.exists(beside) and os.path.exists(source) and os.path.samefile(beside, source)
            return GoldsrcTexture(name, None if there else data, name.startswith("{"))
    rgba = _pixels(image)
    if rgba is None:
        summary.warnings.append(f"{material.name}: its image {image.name!r} has no pixels; not converted for "
                                "GoldSrc")  # fmt: skip
        return None
    masked = _alpha_used(material, image) and bool((rgba[..., 3] < 0.5).any())
    name = _file_name(stem, masked, taken)
    return GoldsrcTexture(name, bmp8.write_bmp8(bmp8.goldsrc_bitmap(rgba, masked)), masked)


def _image_file(image: bpy.types.Image) -> str:
    if image.source != "FILE" or not image.filepath:
        return ""
    return str(bpy.path.abspath(image.filepath, library=image.library))


def _file_bytes(image: bpy.types.Image, path: str) -> bytes | None:
    if image.packed_file is not None:
        return bytes(image.packed_file.data)
    try:
        with open(path, "rb") as stream:
            return stream.read()
    except OSError:
        return None


def _pixels(image: bpy.types.Image) -> np.ndarray | None:
    """(H, W, 4) RGBA in 0..1, top row first (Blender keeps the bottom row first)."""
    width, height = image.size
    channels = image.channels
    if not width or not height or channels not in (1, 3, 4):
        return None
    flat = np.empty(width * height * channels, np.float32)
    image.pixels.foreach_get(flat)
    pixels = flat.reshape(height, width, channels)[::-1]
    if channels == 4:
        return pixels
    rgba = np.ones((height, width, 4), np.float32)
    rgba[..., :3] = pixels[..., :3] if channels == 3 else pixels
    return rgba


def _alpha_used(material: bpy.types.Material, image: bpy.types.Image) -> bool:
    tree = material.node_tree
    return tree is not None and any(link.from_node.type == "TEX_IMAGE" and link.from_node.image == image
                                    and link.from_socket.name == "Alpha" for link in tree.links)  # fmt: skip


def _file_name(stem: str, masked: bool, taken: set[str]) -> str:
    """`stem` as a GoldSrc texture file name: ASCII letters, digits, `_` and `-`; `{` first when masked; at most 63
    characters with `.bmp`; not one already taken (ignoring case)."""
    prefix = "{" if masked else ""
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", stem.lstrip("{")) or "texture"
    room = bmp8.GOLDSRC_MAX_NAME - len(prefix) - len(".bmp")
    name, number = cleaned[:room], 1
    while f"{prefix}{name}.bmp".lower() in taken:
        number += 1
        suffix = f"_{number}"
        name = cleaned[: room - len(suffix)] + suffix
    return f"{prefix}{name}.bmp"
