"""GoldSrc export: a mesh over studiomdl's limits split into SMDs within them (Split Over Limits), a $body each in
the QC; an import of that QC gives every triangle back."""

from __future__ import annotations

from pathlib import Path

import bpy
import numpy as np
import pytest

from tests.blender.scene_helpers import grid_object


def _smd_module(extension):  # type: ignore[no-untyped-def]
    return extension.formats.smd


@pytest.mark.parametrize(("quads", "parts"), [(46, 2), (101, 6)])  # (2,209 vertices; 20,402 triangles)
def test_a_mesh_over_the_limits_is_split_into_bodies_within_them(quads: int, parts: int, tmp_path: Path,
                                                                  extension) -> None:  # type: ignore[no-untyped-def]
    grid_object("floor", quads)
    out = tmp_path / "model.smd"
    assert bpy.ops.export_scene.valve_smd(filepath=str(out), flavour="GOLDSRC", write_qc=True,
                                          split_over_limits=True) == {"FINISHED"}  # fmt: skip
    summary = extension.common.operators.LAST_SUMMARY[0]
    assert (summary.objects, summary.faces, summary.files) == (1, 2 * quads * quads, parts + 1)
    names = [f"floor_part{number}.smd" for number in range(1, parts + 1)]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["model.qc", *names])
    assert not [w for w in summary.warnings if "studiomdl takes" in w]
    assert summary.notes == [f"floor.smd: over GoldSrc's limits per SMD, split into {parts} parts (floor_part1.smd "
                             f"to floor_part{parts}.smd)"]  # fmt: skip
    smd = _smd_module(extension)
    limits = extension.formats.smd.limits
    counts, positions = [], []
    for name in names:
        document = smd.read_smd((tmp_path / name).read_bytes())
        positions.append(document.triangles.positions.reshape(-1, 3))
        assert limits.limit_warnings(document, "goldsrc", name) == []
        assert max(int(labels.max()) + 1 for labels in limits.goldsrc_labels(document.triangles)) <= 2048
        counts.append(len(document.triangles))
    assert sum(counts) == 2 * quads * quads and max(counts) <= 20000
    qc = (tmp_path / "model.qc").read_text()
    assert [line for line in qc.splitlines() if line.startswith("$body")] == [
        f'$body "floor_part{number}" "floor_part{number}"' for number in range(1, parts + 1)]
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.valve_smd(filepath=str(tmp_path / "model.qc")) == {"FINISHED"}
    meshes = {obj.name: len(obj.data.polygons) for obj in bpy.data.objects if obj.type == "MESH"}
    assert sorted(meshes) == [name.removesuffix(".smd") for name in sorted(names)]
    assert sum(meshes.values()) == 2 * quads * quads
    assert np.unique(np.concatenate(positions), axis=0).shape == ((quads + 1) ** 2, 3)  # (every vertex in a part)


def test_without_the_option_or_the_qc(tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    grid_object("floor", 46)
    assert bpy.ops.export_scene.valve_smd(filepath=str(tmp_path / "a.smd"), flavour="GOLDSRC") == {"FINISHED"}
    assert [p.name for p in tmp_path.iterdir()] == ["a.smd"]  # (off: one SMD, and the warning)
    assert any("2,209 distinct vertices" in w for w in extension.common.operators.LAST_SUMMARY[0].warnings)
    (tmp_path / "a.smd").unlink()
    assert bpy.ops.export_scene.valve_smd(filepath=str(tmp_path / "a.smd"), flavour="GOLDSRC",
                                          split_over_limits=True) == {"FINISHED"}  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_part1.smd", "a_part2.smd"]
    assert bpy.ops.export_scene.valve_smd(filepath=str(tmp_path / "s.smd"), split_over_limits=True) == {"FINISHED"}
    assert (tmp_path / "s.smd").is_file()  # (Source: its limits are others; nothing split)


def _textured(obj: bpy.types.Object, material_name: str, image: bpy.types.Image, alpha: bool) -> None:
    material = bpy.data.materials.new(material_name)
    if material.node_tree is None:  # (nodes: on for a new material on 5.0+, turned on before)
        material.use_nodes = True
    tree = material.node_tree
    shader = next(node for node in tree.nodes if node.type == "BSDF_PRINCIPLED")
    node = tree.nodes.new("ShaderNodeTexImage")
    node.image = image
    tree.links.new(node.outputs["Color"], shader.inputs["Base Color"])
    if alpha:
        tree.links.new(node.outputs["Alpha"], shader.inputs["Alpha"])
    obj.data.materials.append(material)


def test_textures_are_converted_for_goldsrc(tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    bmp8 = extension.formats.bmp8
    rng = np.random.default_rng(3)
    leaf = bpy.data.images.new("leaf texture", 100, 60, alpha=True)  # (generated: no file; sides not multiples of 8)
    pixels = np.ones((60, 100, 4), np.float32)
    pixels[..., :3] = rng.random((60, 100, 3))
    pixels[:, :40, 3] = 0.0  # (the left 40 columns transparent)
    leaf.pixels.foreach_set(pixels.ravel())
    source = tmp_path / "src"
    source.mkdir()
    good = bmp8.Bitmap8(rng.integers(0, 256, (16, 24), dtype=np.uint8), rng.integers(0, 256, (256, 3), np.uint8))
    (source / "skin.bmp").write_bytes(bmp8.write_bmp8(good))
    skin = bpy.data.images.load(str(source / "skin.bmp"))
    obj = grid_object("sheet", 2)
    _textured(obj, "leaves", leaf, alpha=True)
    _textured(obj, "body", skin, alpha=False)
    obj.data.polygons.foreach_set("material_index", [0, 0, 1, 1])
    out = tmp_path / "out"
    out.mkdir()
    assert bpy.ops.export_scene.valve_smd(filepath=str(out / "model.smd"), flavour="GOLDSRC", write_qc=True,
                                          convert_textures=True) == {"FINISHED"}  # fmt: skip
    summary = extension.common.operators.LAST_SUMMARY[0]
    assert (summary.objects, summary.faces) == (1, 8)
    assert sorted(p.name for p in out.iterdir()) == ["model.qc", "sheet.smd", "skin.bmp", "{leaf_texture.bmp"]
    assert summary.notes == ["2 texture(s) written for GoldSrc beside the SMD: {leaf_texture.bmp, skin.bmp"]
    assert not [w for w in summary.warnings if ".bmp texture file" in w]
    assert (out / "skin.bmp").read_bytes() == (source / "skin.bmp").read_bytes()  # (it keeps the rules: copied)
    converted = bmp8.read_bmp8((out / "{leaf_texture.bmp").read_bytes())
    assert converted.indices.shape == (64, 104)  # (60 -> 64, 100 -> 104)
    assert tuple(converted.palette[255]) == (0, 0, 255)
    assert (converted.indices[:, :40] == 255).all() and (converted.indices[:, 44:] != 255).all()
    document = extension.formats.smd.read_smd((out / "sheet.smd").read_bytes())
    assert sorted(document.triangles.material_names) == ["skin.bmp", "{leaf_texture.bmp"]
    assert '$texrendermode "{leaf_texture.bmp" masked' in (out / "model.qc").read_text()
    assert bpy.ops.export_scene.valve_smd(filepath=str(source / "model.smd"), flavour="GOLDSRC",
                                          convert_textures=True) == {"FINISHED"}  # fmt: skip
    assert extension.common.operators.LAST_SUMMARY[0].notes == [
        "1 texture(s) written for GoldSrc beside the SMD: {leaf_texture.bmp"]  # (skin.bmp is there: not rewritten)
    assert bpy.ops.export_scene.valve_smd(filepath=str(out / "source.smd"), convert_textures=True) == {"FINISHED"}
    assert sorted(extension.formats.smd.read_smd((out / "source.smd").read_bytes()).triangles.material_names) == [
        "body", "leaves"]  # (Source: its materials are VMTs; nothing converted)


def test_without_convert_textures_images_breaking_the_rules_are_named(tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    bmp8 = extension.formats.bmp8
    leaf = bpy.data.images.new("leaf texture", 100, 60)  # (no file: not a BMP; sides not multiples of 8)
    rng = np.random.default_rng(5)
    good = bmp8.Bitmap8(rng.integers(0, 256, (16, 24), dtype=np.uint8), rng.integers(0, 256, (256, 3), np.uint8))
    (tmp_path / "skin.bmp").write_bytes(bmp8.write_bmp8(good))
    obj = grid_object("sheet", 2)
    _textured(obj, "leaves", leaf, alpha=False)
    _textured(obj, "skin.bmp", bpy.data.images.load(str(tmp_path / "skin.bmp")), alpha=False)
    obj.data.polygons.foreach_set("material_index", [0, 0, 1, 1])
    assert bpy.ops.export_scene.valve_smd(filepath=str(tmp_path / "model.smd"), flavour="GOLDSRC") == {"FINISHED"}
    rules = [w for w in extension.common.operators.LAST_SUMMARY[0].warnings if "8-bit indexed BMPs" in w]
    assert rules == ["GoldSrc's studiomdl takes textures as 8-bit indexed BMPs, sides multiples of 8 up to 512, "
                     "named in at most 63 characters; 1 material image(s) are not: 'leaves' (not a BMP) (Convert "
                     "Textures for GoldSrc writes them as such)"]  # (skin.bmp keeps the rules)
    assert bpy.ops.export_scene.valve_smd(filepath=str(tmp_path / "source.smd")) == {"FINISHED"}  # (Source: none)
    assert not [w for w in extension.common.operators.LAST_SUMMARY[0].warnings if "8-bit indexed BMPs" in w]
