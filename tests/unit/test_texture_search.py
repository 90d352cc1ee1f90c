"""Where textures are found: the engines' rules on generated folder trees, never outside the model's folder."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from formats import textures


@pytest.fixture(autouse=True)
def fresh_listing() -> None:
    textures.clear_cache()


def touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"image")


def found(material: str, model: Path) -> str | None:
    texture = textures.find_texture(material, str(model))
    return None if texture is None else str(Path(texture.path).relative_to(model.parent))


def test_a_file_name_is_found_ignoring_case(tmp_path: Path) -> None:
    touch(tmp_path, "Barney_Face.BMP")
    assert found("barney_face.bmp", tmp_path / "barney.smd") == "Barney_Face.BMP"


def test_a_stem_gets_the_usual_image_extensions(tmp_path: Path) -> None:
    touch(tmp_path, "skin.tga", "skin.txt")
    assert found("skin", tmp_path / "m.iqe") == "skin.tga"
    assert found("skin.bmp", tmp_path / "m.iqe") == "skin.tga"  # the named file is missing: another extension


def test_source_paths_are_tried_under_materials_and_by_their_last_part(tmp_path: Path) -> None:
    touch(tmp_path, "materials/models/props/Sheet.png")
    assert found("models/props/sheet", tmp_path / "prop.smd") == "materials/models/props/Sheet.png"
    touch(tmp_path, "crate.png")
    textures.clear_cache()
    assert found("models\\props\\crate", tmp_path / "prop.smd") == "crate.png"


def test_names_with_dot_parts_and_a_leading_slash_are_found_as_before(tmp_path: Path) -> None:
    touch(tmp_path, "Skin.PNG", "materials/Sub/Wall.tga")
    model = tmp_path / "model.iqe"
    assert found("./skin", model) == "Skin.PNG"
    assert found("/skin", model) == "Skin.PNG"
    assert found("sub/./wall", model) == "materials/Sub/Wall.tga"
    assert found("../skin", model) == "Skin.PNG"  # (by its last part)
    assert found("", model) is None


def test_nothing_outside_the_models_folder_tree(tmp_path: Path) -> None:
    touch(tmp_path, "outside.png")
    (tmp_path / "model").mkdir()
    assert found("outside", tmp_path / "model" / "m.iqe") is None
    assert found("../outside", tmp_path / "model" / "m.iqe") is None


def test_goldsrc_masked_textures_use_their_alpha(tmp_path: Path) -> None:
    touch(tmp_path, "{leaves.bmp", "bark.bmp")
    masked = textures.find_texture("{leaves.bmp", str(tmp_path / "tree.smd"))
    plain = textures.find_texture("bark.bmp", str(tmp_path / "tree.smd"))
    assert masked is not None and masked.use_alpha and masked.alpha_test  # GoldSrc `{`: alpha-tested
    assert plain is not None and not plain.use_alpha


def test_a_cars_sections_name_mesh_and_diffuse_texture(tmp_path: Path) -> None:
    touch(tmp_path, "body00.png", "glass.png")
    (tmp_path / "360.car").write_text(
        "[body]\nmesh = body.joe\ntexture = body00.png, body-misc1.png\n\n"
        "[glass]\nmesh = glass.joe  # the windows\ntexture = glass.png\ndraw = transparent\n"
    )
    body = textures.joe_texture(str(tmp_path / "body.joe"))
    glass = textures.joe_texture(str(tmp_path / "glass.joe"))
    assert body is not None and Path(body.path).name == "body00.png" and not body.use_alpha
    assert glass is not None and Path(glass.path).name == "glass.png" and glass.use_alpha and not glass.alpha_test


def test_track_lists_name_each_objects_texture(tmp_path: Path) -> None:
    touch(tmp_path, "cone.png", "tree.png")
    fields = ["1", "0", "0", "0", "0", "0", "1", "1", "1", "1", "1", "0", "0", "0", "0"]  # 15 after model+texture
    blend = list(fields)
    blend[3] = "1"  # transparent_blend, the 6th parameter
    (tmp_path / "list.txt").write_text("\n".join(["17", "", "cone.joe", "cone.png", *fields, "tree.joe", "tree.png",
                                                  *blend]) + "\n")  # fmt: skip
    cone = textures.joe_texture(str(tmp_path / "objects.jpk"), "cone.joe")
    tree = textures.joe_texture(str(tmp_path / "objects.jpk"), "tree.joe")
    assert cone is not None and Path(cone.path).name == "cone.png" and not cone.use_alpha
    assert tree is not None and Path(tree.path).name == "tree.png" and tree.use_alpha


def test_objects_txt_bodies_and_the_stem_fallback(tmp_path: Path) -> None:
    touch(tmp_path, "wall.png", "rock.tga")
    body = "[object.wall.body]\ntexture = wall.png\nmodel = wall.joe\nalphablend = true\n"
    (tmp_path / "objects.txt").write_text(body)
    wall = textures.joe_texture(str(tmp_path / "wall.joe"))
    rock = textures.joe_texture(str(tmp_path / "rock.joe"))
    assert wall is not None and wall.use_alpha
    assert rock is not None and Path(rock.path).name == "rock.tga"
    assert textures.joe_texture(str(tmp_path / "unknown.joe")) is None


def test_short_or_malformed_lists_are_ignored() -> None:
    assert textures.parse_list("12\nmodel.joe\n") == []
    assert textures.parse_list("not a count\n") == []
    assert textures.parse_list("14\n" + "\n".join(["m.joe", "t.png", *["0"] * 12])) == [("m.joe", "t.png", False)]


def test_an_image_is_recognised_by_its_start(tmp_path: Path) -> None:
    tga = bytes([0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 0, 32, 0, 32, 8])  # RLE true-colour, 64 x 32, 32 bits
    files = {"a.png": b"\x89PNG\r\n\x1a\n....", "b.jpg": b"\xff\xd8\xff\xe0..", "c.bmp": b"BM....", "d.dds": b"DDS |",
             "e.tif": b"II*\0..", "f.tga": tga + b"pixels"}  # fmt: skip
    damaged = {"g.png": b"\x89PNG\r\n", "h.jpg": b"<html>", "i.tga": tga[:2] + b"\x07" + tga[3:],
               "j.tga": tga[:12] + b"\0\0" + tga[14:], "k.tga": tga[:10], "l.bmp": b""}  # fmt: skip
    for name, data in {**files, **damaged}.items():
        (tmp_path / name).write_bytes(data)
    files["m.tga"] = files["a.png"]  # mislabelled, but an image: read by its content, as Blender reads it
    files["n.png"] = tga + b"pixels"
    (tmp_path / "m.tga").write_bytes(files["m.tga"])
    (tmp_path / "n.png").write_bytes(files["n.png"])
    assert [name for name in {**files, **damaged} if textures.looks_like_an_image(str(tmp_path / name))] == list(files)
    assert not textures.looks_like_an_image(str(tmp_path / "absent.png"))


def paletted_bmp(key: tuple[int, int, int], pixels: tuple[int, ...] = (0, 255, 255, 0)) -> bytes:
    """A 2 x 2 8-bit BMP whose palette's last entry is `key` (GoldSrc's transparent colour), the others grey."""
    palette = b"".join(bytes((index, index, index, 0)) for index in range(255)) + bytes((key[2], key[1], key[0], 0))
    rows = bytes((*pixels[0:2], 0, 0)) + bytes((*pixels[2:4], 0, 0))  # (rows padded to 4 bytes)
    offset = 14 + 40 + len(palette)
    header = b"BM" + struct.pack("<IHHI", offset + len(rows), 0, 0, offset)
    info = struct.pack("<IiiHHIIiiII", 40, 2, 2, 1, 8, 0, len(rows), 2835, 2835, 256, 0)
    return header + info + palette + rows


def test_a_goldsrc_masked_bmp_names_its_key_colour(tmp_path: Path) -> None:
    (tmp_path / "{fence.bmp").write_bytes(paletted_bmp((0, 0, 255)))
    (tmp_path / "{grate.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(16))
    fence = textures.find_texture("{fence.bmp", str(tmp_path / "m.smd"))
    grate = textures.find_texture("{grate", str(tmp_path / "m.smd"))
    assert fence is not None and fence.alpha_test and fence.key_color == (0, 0, 255)
    assert grate is not None and grate.alpha_test and grate.key_color is None  # (an image with alpha of its own)
    (tmp_path / "{odd.bmp").write_bytes(paletted_bmp((10, 200, 30))[:60])  # cut short: no palette entry 255
    assert textures.bmp_key_color(str(tmp_path / "{odd.bmp")) is None
    assert textures.bmp_key_color(str(tmp_path / "missing.bmp")) is None


# ------------------------------------------------------------------------------------------------ Tesseract configs

IQM_CFG = """// Red Eclipse style
iqmload "lod1.iqm"
iqmskin main "../diffuse.png" "../mask.png" 1 1
iqmload "janitor.iqm"
iqmskin blades first.png
if 1 [
    iqmskin * "<grey><dds>other.png" // every mesh: replaces what was said before
]
iqmskin main "<dds>diffuse.png" "mask.png" 1 1 ; iqmskin blades blades.png
iqmskin "flesh part" "gib.png"
"""


def test_a_config_names_the_skins_of_the_part_it_loads() -> None:
    assert textures.parse_model_config(IQM_CFG, "janitor.iqm") == {"*": ("", "other.png"), "main": ("", "diffuse.png"),
                                                                   "blades": ("", "blades.png"),
                                                                   "flesh part": ("", "gib.png")}  # fmt: skip
    assert textures.parse_model_config(IQM_CFG, "LOD1.iqe") == {"main": ("", "../diffuse.png")}  # (same stem)
    assert textures.parse_model_config(IQM_CFG, "other.iqm") == {}
    md5 = 'md5load "a.md5mesh"\nmd5skin * skin.jpg'
    assert textures.parse_model_config(md5, "a.md5mesh") == {"*": ("", "skin.jpg")}


def test_exec_runs_another_config_and_iqmdir_moves_the_skins() -> None:
    shared = {"actors/player/player.cfg": 'iqmdir "actors/player"\nexec actors/player/player.cfg\niqmskin * body.png'}
    text = 'iqmload "male.iqm" player\nexec "actors/player/player.cfg"\nexec missing.cfg'
    assert textures.parse_model_config(text, "male.iqm", shared.get) == {"*": ("actors/player", "body.png")}
    assert textures.parse_model_config(text, "male.iqm") == {}  # (nothing read: no skin)
    read: list[str] = []
    twice = "exec self.cfg\nexec self.cfg"
    textures.parse_model_config(twice, "male.iqm", lambda path: read.append(path) or twice)  # type: ignore[func-returns-value]
    assert len(read) == textures.MAX_CONFIG_RUNS - 1  # (a config running itself twice stops, not 2 ** 8 runs)


def test_config_skins_are_found_beside_and_above_the_model(tmp_path: Path) -> None:
    touch(tmp_path, "diffuse.PNG", "lod1/x.png")
    (tmp_path / "lod1" / "iqm.cfg").write_text(IQM_CFG)
    skins = textures.model_config_skins(str(tmp_path / "lod1" / "lod1.iqm"))
    assert skins is not None and {mesh: Path(t.path).name for mesh, t in skins.items()} == {"main": "diffuse.PNG"}
    assert textures.model_config_skins(str(tmp_path / "lod1" / "unlisted.iqm")) is None  # (not its config)
    assert textures.model_config_skins(str(tmp_path / "model.iqm")) is None  # (no config)
    touch(tmp_path, "game/actors/player/Body.png", "game/actors/player/male/male.iqm")
    (tmp_path / "game/actors/player/player.cfg").write_text('iqmdir "actors/player"\niqmskin * "body.png"')
    (tmp_path / "game/actors/player/male/iqm.cfg").write_text('iqmload male.iqm\nexec "actors/player/player.cfg"')
    skins = textures.model_config_skins(str(tmp_path / "game/actors/player/male/male.iqm"))
    assert skins is not None and skins["*"].path == str(tmp_path / "game/actors/player/Body.png")


def test_without_a_config_the_default_skin_beside_or_above(tmp_path: Path) -> None:
    touch(tmp_path, "claw/skin.png", "parent/skin.jpg", "parent/child/model.iqm")
    assert Path(textures.default_skin(str(tmp_path / "claw" / "claw.iqm")).path).name == "skin.png"  # type: ignore[union-attr]
    default = textures.default_skin(str(tmp_path / "parent" / "child" / "model.iqm"))
    assert default is not None and default.path.endswith("parent/skin.jpg")
    assert textures.default_skin(str(tmp_path / "model.iqm")) is None
