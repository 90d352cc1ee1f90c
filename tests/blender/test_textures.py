"""Textures found on import: wired into the imported materials, loaded once, named when missing, optional, and
rolled back with a failed import."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import bpy
import numpy as np
import pytest

from formats import iqe, iqm
from tests import joe_fixtures as fx
from tests.blender.conftest import data_state

SKIN_IQE = b"""# Inter-Quake Export
mesh "body"
material "skin"
vp 0 0 0
vt 0 1
vp 1 0 0
vt 1 1
vp 1 1 0
vt 1 0
vp 0 1 0
vt 0 0
fm 0 1 2
fm 0 2 3
mesh "eyes"
material "missing_eyes"
vp 0 0 1
vt 0 0
vp 1 0 1
vt 0 0
vp 0 1 1
vt 0 0
fm 0 1 2
"""


def write_image(path: Path, rgba: tuple[float, float, float, float], size: int = 8) -> None:
    """A small image file written by Blender itself (PNG, TGA or BMP by the extension)."""
    image = bpy.data.images.new("temporary", size, size, alpha=True)
    pixels = np.tile(np.array(rgba, np.float32), size * size)
    pixels[: size * size * 2] *= 0.5  # a darker half, so the mapping shows in renders
    image.pixels.foreach_set(pixels)
    image.filepath_raw = str(path)
    image.file_format = {".png": "PNG", ".tga": "TARGA", ".bmp": "BMP"}[path.suffix.lower()]
    image.save()
    bpy.data.images.remove(image)


def image_links(material: bpy.types.Material) -> dict[str, str]:
    """Shader input name -> the image node output feeding it (none without nodes: Blender 4.x materials)."""
    if material.node_tree is None:
        return {}
    return {link.to_socket.name: link.from_socket.name for link in material.node_tree.links
            if link.from_node.type == "TEX_IMAGE"}  # fmt: skip


def test_iqe_material_gets_its_image_on_the_imported_uv_map(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_image(tmp_path / "Skin.PNG", (0.8, 0.3, 0.2, 1.0))
    (tmp_path / "model.iqe").write_bytes(SKIN_IQE)
    assert bpy.ops.import_scene.iqe(filepath=str(tmp_path / "model.iqe")) == {"FINISHED"}
    skin = bpy.data.materials["skin"]
    assert image_links(skin) == {"Base Color": "Color"}
    (image_node,) = [node for node in skin.node_tree.nodes if node.type == "TEX_IMAGE"]
    assert Path(image_node.image.filepath).name == "Skin.PNG"
    (uv_node,) = [node for node in skin.node_tree.nodes if node.type == "UVMAP"]
    assert uv_node.uv_map == bpy.data.objects["body"].data.uv_layers[0].name
    output = capsys.readouterr().out
    assert "1 texture found, 1 not found" in output
    assert "note: no image found for missing_eyes" in output and "warning" not in output


def test_an_iqm_cfg_beside_the_model_names_each_meshs_skin(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Red Eclipse, Tesseract and Sauerbraten skin an IQM by mesh in the iqm.cfg beside it, not by material."""
    write_image(tmp_path / "textures" / "All.png", (0.2, 0.8, 0.2, 1.0))
    write_image(tmp_path.parent / f"{tmp_path.name}_eyes.tga", (0.9, 0.9, 0.9, 1.0))
    (tmp_path / "iqm.cfg").write_text(f'iqmload "model.iqm"\niqmskin * "<dds>textures/all.png" "mask.png" 1 1\n'
                                      f'iqmskin eyes "../{tmp_path.name}_eyes.tga"\n')  # fmt: skip
    (tmp_path / "model.iqe").write_bytes(SKIN_IQE)
    assert bpy.ops.import_scene.iqe(filepath=str(tmp_path / "model.iqe")) == {"FINISHED"}
    images = {name: next(Path(node.image.filepath).name for node in bpy.data.materials[name].node_tree.nodes
                         if node.type == "TEX_IMAGE") for name in ("skin", "missing_eyes")}  # fmt: skip
    assert images == {"skin": "All.png", "missing_eyes": f"{tmp_path.name}_eyes.tga"}
    assert "2 textures found" in capsys.readouterr().out


def test_a_model_without_a_config_gets_the_engines_default_skin(tmp_path: Path) -> None:
    write_image(tmp_path / "skin.png", (0.8, 0.3, 0.2, 1.0))
    write_image(tmp_path / "missing_eyes.png", (0.1, 0.1, 0.1, 1.0))
    (tmp_path / "claw.iqe").write_bytes(SKIN_IQE.replace(b'material "skin"', b'material "Material"'))
    iqm.save_iqm(tmp_path / "claw.iqm", iqe.load_iqe(tmp_path / "claw.iqe"))
    assert bpy.ops.import_scene.iqm(filepath=str(tmp_path / "claw.iqm")) == {"FINISHED"}
    images = {name: next(Path(node.image.filepath).name for node in bpy.data.materials[name].node_tree.nodes
                         if node.type == "TEX_IMAGE") for name in ("Material", "missing_eyes")}  # fmt: skip
    assert images == {"Material": "skin.png", "missing_eyes": "missing_eyes.png"}  # (its own name first)
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.iqe(filepath=str(tmp_path / "claw.iqe")) == {"FINISHED"}  # (the engines load IQMs)
    assert not image_links(bpy.data.materials["Material"])


def test_images_are_loaded_once_across_the_files_of_an_import(tmp_path: Path) -> None:
    write_image(tmp_path / "skin.tga", (0.2, 0.6, 0.2, 1.0))
    for name in ("a.iqe", "b.iqe"):
        (tmp_path / name).write_bytes(SKIN_IQE.replace(b'material "skin"', f'material "skin"\n# {name}'.encode()))
    bpy.ops.import_scene.iqe(directory=str(tmp_path), files=[{"name": "a.iqe"}, {"name": "b.iqe"}])
    assert [Path(image.filepath).name for image in bpy.data.images] == ["skin.tga"]


def test_the_option_turns_the_search_off(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_image(tmp_path / "skin.png", (0.8, 0.3, 0.2, 1.0))
    (tmp_path / "model.iqe").write_bytes(SKIN_IQE)
    bpy.ops.import_scene.iqe(filepath=str(tmp_path / "model.iqe"), find_textures=False)
    assert not bpy.data.images and not image_links(bpy.data.materials["skin"])
    assert "texture" not in capsys.readouterr().out


def test_materials_already_in_blender_are_left_as_they_are_and_said_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An import reuses the user's material of the same name: its nodes are the user's, no image is wired into
    them, and the summary says so (a second import of a model whose images came since would otherwise look
    untextured for no reason)."""
    write_image(tmp_path / "skin.png", (0.8, 0.3, 0.2, 1.0))
    (tmp_path / "model.iqe").write_bytes(SKIN_IQE)
    (tmp_path / "again.iqe").write_bytes(SKIN_IQE)
    bpy.data.materials.new("skin").use_fake_user = True
    bpy.ops.import_scene.iqe(directory=str(tmp_path), files=[{"name": "model.iqe"}, {"name": "again.iqe"}])
    assert not image_links(bpy.data.materials["skin"])
    output = capsys.readouterr().out  # (the second file's use of the first one's new material is no reuse)
    assert "0 textures found, 1 not found; 1 existing material used as it is" in output
    assert "without looking for their images: skin\n" in output


def test_a_damaged_image_is_left_out_with_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "skin.png").write_bytes(b"\x89PNG\r\n")  # cut short: Blender would draw the material pink
    (tmp_path / "model.iqe").write_bytes(SKIN_IQE)
    assert bpy.ops.import_scene.iqe(filepath=str(tmp_path / "model.iqe")) == {"FINISHED"}
    assert not image_links(bpy.data.materials["skin"]) and not bpy.data.images
    output = capsys.readouterr().out
    assert "0 textures found, 1 not found; 1 image unreadable (1 warning, see the console)" in output
    assert f"warning: {tmp_path / 'skin.png'}: not an image (damaged or cut short), left out" in output


def goldsrc_triangle(material: str) -> str:
    """A GoldSrc reference SMD of one triangle of `material`."""
    return ('version 1\nnodes\n0 "root" -1\nend\nskeleton\ntime 0\n0 0 0 0 0 0 0\nend\ntriangles\n'
            f"{material}\n0 0 0 0 0 0 1 0 0\n0 1 0 0 0 0 1 1 0\n0 0 1 0 0 0 1 0 1\nend\n")  # fmt: skip


def test_goldsrc_masked_texture_wires_alpha(tmp_path: Path) -> None:
    write_image(tmp_path / "{leaves.bmp", (0.1, 0.5, 0.1, 1.0))
    (tmp_path / "tree.smd").write_text(goldsrc_triangle("{leaves.bmp"))
    assert bpy.ops.import_scene.valve_smd(filepath=str(tmp_path / "tree.smd")) == {"FINISHED"}
    leaves = bpy.data.materials["{leaves.bmp"]
    assert image_links(leaves) == {"Base Color": "Color", "Alpha": "Alpha"}
    # alpha-tested in the engine: each pixel drawn or not (dithered), no blending to sort
    assert getattr(leaves, "surface_render_method", "DITHERED") == "DITHERED"


def test_vdrift_car_and_track_conventions(tmp_path: Path) -> None:
    write_image(tmp_path / "body00.png", (0.7, 0.1, 0.1, 1.0))
    (tmp_path / "car.car").write_text("[body]\nmesh = body.joe\ntexture = body00.png\n")
    (tmp_path / "body.joe").write_bytes(fx.cube_bytes())
    assert bpy.ops.import_scene.joe(filepath=str(tmp_path / "body.joe")) == {"FINISHED"}
    body = bpy.data.objects["body"]
    assert body.data.materials[0].name == "body00"
    assert image_links(body.data.materials[0]) == {"Base Color": "Color"}
    track = tmp_path / "track"
    track.mkdir()
    write_image(track / "cone.png", (1.0, 0.5, 0.0, 1.0))
    fields = ["1", "0", "0", "1", "0", "0", "1", "1", "1", "1", "1", "0", "0", "0", "0"]
    listed = [line for name in ("cone", "cone2", "cone3") for line in (f"{name}.joe", "cone.png", *fields)]
    (track / "list.txt").write_text("\n".join(["17", *listed]) + "\n")
    (track / "objects.jpk").write_bytes(fx.pack_of({f"{name}.joe": fx.cube_bytes() for name in ("cone", "cone2",
                                                                                              "cone3")}))  # fmt: skip
    materials_before = len(bpy.data.materials)
    assert bpy.ops.import_scene.joe(filepath=str(track / "objects.jpk")) == {"FINISHED"}
    cone = bpy.data.objects["cone"]
    assert image_links(cone.data.materials[0]) == {"Base Color": "Color", "Alpha": "Alpha"}
    # (members of one texture and alpha share one material, as they look alike)
    assert len(bpy.data.materials) == materials_before + 1
    assert {bpy.data.objects[name].data.materials[0] for name in ("cone", "cone2", "cone3")} == {cone.data.materials[0]}


def test_a_car_folder_imported_at_once_reads_its_car_file_once_and_again_on_the_next_import(
    tmp_path: Path, extension: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ("body", "hood", "door")
    for name in names:
        write_image(tmp_path / f"{name}.png", (0.2, 0.4, 0.6, 1.0))
        (tmp_path / f"{name}.joe").write_bytes(fx.cube_bytes())
    sections = "".join(f"[{name}]\nmesh = {name}.joe\ntexture = {name}.png\n" for name in names)
    (tmp_path / "car.car").write_text(sections)
    textures = extension.formats.textures
    parse, parsed = textures.parse_sections, []
    monkeypatch.setattr(textures, "parse_sections", lambda text: parsed.append(text) or parse(text))
    files = [{"name": f"{name}.joe"} for name in names]
    assert bpy.ops.import_scene.joe(directory=str(tmp_path), files=files) == {"FINISHED"}
    assert len(parsed) == 1  # (not once per model: a car has tens)
    assert [bpy.data.objects[name].data.materials[0].name for name in names] == list(names)
    (tmp_path / "car.car").write_text(sections.replace("texture = hood.png", "texture = door.png"))
    assert bpy.ops.import_scene.joe(directory=str(tmp_path), files=files[1:2]) == {"FINISHED"}
    assert len(parsed) == 2  # a new import sees the file as it is now
    assert bpy.data.objects["hood.001"].data.materials[0].name == "door.001"  # (named after its texture)


def test_a_failed_import_leaves_no_image_behind(
    tmp_path: Path, extension: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_image(tmp_path / "skin.png", (0.8, 0.3, 0.2, 1.0))
    (tmp_path / "a.iqe").write_bytes(SKIN_IQE)
    (tmp_path / "b.iqe").write_bytes(SKIN_IQE)
    importer = extension.importers.iqe
    build = importer.build_document

    def fail_on_the_second_file(context, path, *args):  # type: ignore[no-untyped-def]
        if path.endswith("b.iqe"):
            assert bpy.data.images  # the first file's texture was loaded
            raise extension.formats.errors.FormatError("broken on purpose", path=path)
        return build(context, path, *args)

    monkeypatch.setattr(importer, "build_document", fail_on_the_second_file)
    before = data_state()
    with pytest.raises(RuntimeError, match="broken on purpose"):
        bpy.ops.import_scene.iqe(directory=str(tmp_path), files=[{"name": "a.iqe"}, {"name": "b.iqe"}])
    assert data_state() == before and not bpy.data.images


def test_a_textured_import_renders_with_its_texture(tmp_path: Path) -> None:
    """Workbench in Texture colour mode shows the image's colour on the imported mesh."""
    write_image(tmp_path / "skin.png", (0.9, 0.2, 0.1, 1.0))
    (tmp_path / "model.iqe").write_bytes(SKIN_IQE)
    bpy.ops.import_scene.iqe(filepath=str(tmp_path / "model.iqe"))
    scene = bpy.context.scene
    camera = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
    scene.collection.objects.link(camera)
    camera.location = (0.5, 0.5, 3.0)
    scene.camera = camera
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.display.shading.color_type = "TEXTURE"
    scene.display.shading.light = "FLAT"
    scene.render.resolution_x = scene.render.resolution_y = 32
    scene.render.filepath = str(tmp_path / "render.png")
    bpy.ops.render.render(write_still=True)
    render = bpy.data.images.load(str(tmp_path / "render.png"))
    pixels = np.empty(32 * 32 * 4, np.float32)
    render.pixels.foreach_get(pixels)
    red = pixels.reshape(-1, 4)[:, 0] - pixels.reshape(-1, 4)[:, 1]
    assert red.max() > 0.3  # the image's red shows; untextured, Workbench draws grey


def test_goldsrc_masked_bmp_is_transparent_where_it_shows_its_key_colour(tmp_path: Path) -> None:
    """GoldSrc `{` textures are 8-bit BMPs whose palette's last colour (usually blue) is drawn transparent: the
    alpha comes from that colour, the image file stays as it is (found by a new-user trial)."""
    from tests.unit.test_texture_search import paletted_bmp

    (tmp_path / "{fence.bmp").write_bytes(paletted_bmp((0, 0, 255)))
    (tmp_path / "fence.smd").write_text(goldsrc_triangle("{fence.bmp"))
    assert bpy.ops.import_scene.valve_smd(filepath=str(tmp_path / "fence.smd")) == {"FINISHED"}
    fence = bpy.data.materials["{fence.bmp"]
    nodes = fence.node_tree.nodes
    image_node = next(node for node in nodes if node.type == "TEX_IMAGE")
    key = next(node for node in nodes if node.type == "VECT_MATH")
    assert image_node.interpolation == "Closest" and key.operation == "DISTANCE"
    assert tuple(key.inputs[1].default_value) == pytest.approx((0.0, 0.0, 1.0))
    alpha = next(node for node in nodes if node.type == "BSDF_PRINCIPLED").inputs["Alpha"].links[0].from_node
    assert alpha.operation == "GREATER_THAN" and alpha.inputs[0].links[0].from_node == key
    pixels = np.array(image_node.image.pixels[:]).reshape(-1, 4)  # Blender reads the palette: the key is blue
    assert any(np.allclose(pixel[:3], (0, 0, 1)) for pixel in pixels)
    assert getattr(fence, "surface_render_method", "DITHERED") == "DITHERED"


def test_a_packs_images_are_those_blender_would_reuse(tmp_path: Path) -> None:
    """A JPK import loads each texture once and reuses an image the .blend already has of that file (as
    check_existing does), whether the image came before the import, from an earlier one, or from a member
    with the same texture blended otherwise."""
    track = tmp_path / "objects"
    track.mkdir()
    names = ("a", "b", "c", "d")
    for texture in ("one.png", "two.png", "three.png"):
        write_image(track / texture, (0.3, 0.5, 0.7, 1.0))
    fields = ["1", "0", "0", "{blend}", "1.0", "0", "0", "1", "1.0", "0.9", "1.0", "0.0", "0", "0", "0"]
    textures = {"a": ("one.png", "0"), "b": ("two.png", "0"), "c": ("two.png", "1"), "d": ("three.png", "0")}
    listed = [line for name in names for line in (f"{name}.joe", textures[name][0],
                                                 *[f.format(blend=textures[name][1]) for f in fields])]  # fmt: skip
    (track / "list.txt").write_text("\n".join(["17", *listed]) + "\n")
    (track / "objects.jpk").write_bytes(fx.pack_of({f"{name}.joe": fx.cube_bytes() for name in names}))
    before = bpy.data.images.load(str(track / "three.png"))  # (the user's, before the import)
    for _ in range(2):
        assert bpy.ops.import_scene.joe(filepath=str(track / "objects.jpk")) == {"FINISHED"}
    assert sorted(image.name for image in bpy.data.images) == ["one.png", "three.png", "two.png"]
    used = {node.image.name for material in bpy.data.materials for node in material.node_tree.nodes
            if node.type == "TEX_IMAGE"}  # fmt: skip
    assert used == {"one.png", "two.png", "three.png"} and before.users == 2  # (a material of each import)
