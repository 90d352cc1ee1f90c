"""Source materials on QC/SMD import: the VMT found through the QC's $cdmaterials in the game's materials folder,
its VTF decoded into a packed image (rows the right way up), translucent and alpha-tested materials, the texture
transform, the Game Folder option, the summary's counts, and broken files said and left out."""

from __future__ import annotations

from pathlib import Path

import bpy
import numpy as np
import pytest

from tests import vtf_fixtures as fx

# 8x8 crate texture (top row first): the top half red, the bottom half blue, one white texel top left
CRATE = np.zeros((8, 8, 4), np.uint8)
CRATE[:4] = (255, 0, 0, 255)
CRATE[4:] = (0, 0, 255, 255)
CRATE[0, 0] = (255, 255, 255, 255)
GLASS = np.full((4, 4, 4), (40, 200, 90, 100), np.uint8)


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_bytes(data)
    return path


def crate_dxt1() -> bytes:
    """CRATE's four DXT1 blocks, row by row: white and red (pixel 0 white), red, blue, blue."""
    red, blue = fx.rgb565(255, 0, 0), fx.rgb565(0, 0, 255)
    top_left = fx.dxt_colour_block(0xFFFF, red, [0] + [1] * 15)
    return top_left + fx.dxt_colour_block(red, 0, [0] * 16) + fx.dxt_colour_block(blue, 0, [0] * 16) * 2


def reference_smd(*materials: str) -> str:
    """A Source reference SMD of one triangle per material, UVs spanning the texture."""
    lines = ["version 1", "nodes", '0 "root" -1', "end", "skeleton", "time 0", "0 0 0 0 0 0 0", "end", "triangles"]
    for index, material in enumerate(materials):
        x = 2 * index
        lines += [material, f"0 {x} 0 0 0 0 1 0 0", f"0 {x + 1} 0 0 0 0 1 1 0", f"0 {x} 1 0 0 0 1 0 1"]
    return "\n".join([*lines, "end", ""])


@pytest.fixture
def game(tmp_path: Path) -> Path:
    """`<game>/modelsrc/crate/crate.qc` naming two material folders; the VMTs and VTFs under `<game>/materials`."""
    root = tmp_path / "mygame"
    write(root / "modelsrc/crate/crate.qc", '$modelname "props/crate.mdl"\n$cdmaterials "models\\props\\old\\" '
          '"models\\props\\"\n$body crate "crate_ref.smd"\n')  # fmt: skip
    write(root / "modelsrc/crate/crate_ref.smd", reference_smd("crate", "glass", "nothing_here"))
    materials = root / "materials/models/props"
    write(materials / "crate.vmt", '"VertexLitGeneric"\n{\n\t"$basetexture" "models/props/crate"\n}\n')
    write(materials / "crate.vtf", fx.make_vtf(crate_dxt1(), 13, 8, 8, minor=2, mipmaps=4))
    write(materials / "glass.vmt", 'VertexLitGeneric { $basetexture "models/props/glass" $translucent 1 '
          '$basetexturetransform "center .5 .5 scale 2 2 rotate 0 translate 0 0" }')  # fmt: skip
    write(materials / "glass.vtf", fx.make_vtf(fx.encode_plain(GLASS, 12), 12, 4, 4, minor=5, mipmaps=3))
    return root


def image_of(material: bpy.types.Material) -> bpy.types.Image:
    (node,) = [node for node in material.node_tree.nodes if node.type == "TEX_IMAGE"]
    return node.image


def pixels_of(image: bpy.types.Image) -> np.ndarray:
    """(H, W, 4) 0-255, top row first (Blender's rows run bottom first)."""
    width, height = image.size
    values = np.empty(width * height * 4, np.float32)
    image.pixels.foreach_get(values)
    return np.flipud(np.round(values.reshape(height, width, 4) * 255).astype(np.int64))


def test_a_qcs_materials_are_found_in_the_game_and_decoded(game: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qc = game / "modelsrc/crate/crate.qc"
    assert bpy.ops.import_scene.valve_smd(filepath=str(qc)) == {"FINISHED"}
    crate = image_of(bpy.data.materials["crate"])
    assert tuple(crate.size) == (8, 8) and crate.packed_file is not None
    np.testing.assert_array_equal(pixels_of(crate), CRATE)  # (the white texel top left: not upside down)
    glass_material = bpy.data.materials["glass"]
    np.testing.assert_array_equal(pixels_of(image_of(glass_material)), GLASS)
    links = {link.to_socket.name: link.from_socket.name for link in glass_material.node_tree.links
             if link.from_node.type == "TEX_IMAGE"}  # fmt: skip
    assert links == {"Base Color": "Color", "Alpha": "Alpha"}
    assert getattr(glass_material, "surface_render_method", "BLENDED") == "BLENDED"
    (mapping,) = [node for node in glass_material.node_tree.nodes if node.type == "MAPPING"]
    assert tuple(mapping.inputs["Scale"].default_value) == (2.0, 2.0, 1.0)
    assert tuple(mapping.inputs["Location"].default_value) == (-0.5, -0.5, 0.0)
    output = capsys.readouterr().out
    assert "2 textures found, 1 not found" in output and "warning" not in output


def test_the_images_survive_saving_and_a_second_import_reuses_them(game: Path, tmp_path: Path) -> None:
    qc = game / "modelsrc/crate/crate.qc"
    bpy.ops.import_scene.valve_smd(filepath=str(qc))
    bpy.ops.import_scene.valve_smd(filepath=str(qc))
    assert len(bpy.data.images) == 2
    for image in bpy.data.images:
        image.use_fake_user = True  # (kept when saved though the file's objects are deleted below)
    saved = tmp_path / "saved.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(saved))
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=str(saved))
    np.testing.assert_array_equal(pixels_of(bpy.data.images["crate"]), CRATE)


def test_the_game_folder_option(tmp_path: Path, game: Path, capsys: pytest.CaptureFixture[str]) -> None:
    elsewhere = tmp_path / "work"
    write(elsewhere / "crate.qc", '$cdmaterials "models/props"\n$body crate "crate_ref.smd"\n')
    write(elsewhere / "crate_ref.smd", reference_smd("crate"))
    bpy.ops.import_scene.valve_smd(filepath=str(elsewhere / "crate.qc"))
    assert "0 textures found, 1 not found" in capsys.readouterr().out
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_scene.valve_smd(filepath=str(elsewhere / "crate.qc"), game_folder=str(game))
    np.testing.assert_array_equal(pixels_of(image_of(bpy.data.materials["crate"])), CRATE)


def test_an_smd_alone_looks_its_material_up_by_name(game: Path) -> None:
    write(game / "models_src/lone.smd", reference_smd("models/props/crate"))
    assert bpy.ops.import_scene.valve_smd(filepath=str(game / "models_src/lone.smd")) == {"FINISHED"}
    np.testing.assert_array_equal(pixels_of(image_of(bpy.data.materials["models/props/crate"])), CRATE)


def test_broken_vtf_and_vmt_are_said_and_left_out(game: Path, capsys: pytest.CaptureFixture[str]) -> None:
    materials = game / "materials/models/props"
    write(materials / "crate.vtf", b"VTF\0" + bytes(10))
    write(materials / "glass.vmt", '"VertexLitGeneric" { "$basetexture" ')
    assert bpy.ops.import_scene.valve_smd(filepath=str(game / "modelsrc/crate/crate.qc")) == {"FINISHED"}
    assert not bpy.data.images
    output = capsys.readouterr().out
    assert f"{materials / 'crate.vtf'}: not a VTF this can read (file is 14 bytes, too short" in output
    assert f"{materials / 'glass.vmt'}: material 'glass' cannot be read (the block opened at line 1" in output
    assert "0 textures found, 2 not found; 2 images unreadable" in output


def test_goldsrc_cdtexture_folder_is_searched_first(tmp_path: Path) -> None:
    """A GoldSrc QC's `$cdtexture` names the folder its BMPs are in (relative to the QC); a `{` texture there keeps
    its key-colour transparency."""
    from tests.unit.test_texture_search import paletted_bmp

    write(tmp_path / "model/fence.qc", '$cd "."\n$cdtexture "..\\skins"\n$body body "fence_ref.smd"\n')
    write(tmp_path / "model/fence_ref.smd", reference_smd("{fence.bmp"))
    write(tmp_path / "skins/{Fence.bmp", paletted_bmp((0, 0, 255)))
    write(tmp_path / "model/{fence.bmp", b"BM-not-this-one")
    assert bpy.ops.import_scene.valve_smd(filepath=str(tmp_path / "model/fence.qc")) == {"FINISHED"}
    material = bpy.data.materials["{fence.bmp"]
    assert Path(image_of(material).filepath).name == "{Fence.bmp"
    assert any(node.type == "VECT_MATH" and node.operation == "DISTANCE" for node in material.node_tree.nodes)


def test_a_game_folder_relative_to_the_blend(tmp_path: Path, game: Path) -> None:
    write(tmp_path / "work/crate.qc", '$cdmaterials "models/props"\n$body crate "crate_ref.smd"\n')
    write(tmp_path / "work/crate_ref.smd", reference_smd("crate"))
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "scene.blend"))
    bpy.ops.import_scene.valve_smd(filepath=str(tmp_path / "work/crate.qc"), game_folder="//mygame")
    np.testing.assert_array_equal(pixels_of(image_of(bpy.data.materials["crate"])), CRATE)
