"""Files of many small meshes: the importer works out every mesh's faces, UVs and merged vertices in one pass over
the whole file. The Blender data (and the warnings) must be those of working on one object at a time, on varied
inputs: merged names, several materials, polygons, faces that use a vertex twice, vertices to merge, weights,
colours, custom arrays, generated normals."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from types import ModuleType

import bpy
import numpy as np
import pytest

from tests.unit.test_iqe_many_meshes import _many_meshes_text

_ATTRIBUTE_READS = {"FLOAT": ("value", 1, np.float32), "INT": ("value", 1, np.int32),
                    "FLOAT_VECTOR": ("vector", 3, np.float32), "FLOAT2": ("vector", 2, np.float32),
                    "FLOAT_COLOR": ("color", 4, np.float32), "BYTE_COLOR": ("color", 4, np.float32),
                    "BOOLEAN": ("value", 1, np.bool_), "QUATERNION": ("value", 4, np.float32),
                    "INT16_2D": ("value", 2, np.int32), "INT32_2D": ("value", 2, np.int32)}  # fmt: skip


def _varied_text(seed: int) -> str:
    """Meshes as the codec test makes them, with shared positions (vertices to merge), faces that use a vertex
    twice, and for some seeds no normals (generated from smoothing) or polygons only."""
    rng = random.Random(seed)
    lines = []
    for line in _many_meshes_text(rng, rng.randint(2, 14)).split("\n"):
        if line.startswith("vp ") and rng.random() < 0.6:
            line = "vp " + rng.choice(["0 0 0", "1 0 0", "0 1 0", "1 1 0.5"])
        if line.startswith("fm ") and rng.random() < 0.1:
            numbers = line.split()
            line = " ".join([numbers[0], numbers[1], numbers[1], *numbers[3:]])
        if seed % 4 == 1 and line.startswith("vn "):
            continue
        lines.append(line)
    if seed % 8 == 1:
        lines.insert(1, "smoothangle 40")
    return "\n".join(lines)


def _digest(values: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(values).tobytes()).hexdigest()


def _full_state() -> list[str]:
    """Every object, mesh attribute (whole), corner normal, material, vertex weight and custom property."""
    lines = []
    for obj in bpy.data.objects:
        lines.append(f"{obj.name!r} {obj.type} {obj.parent and obj.parent.name} {sorted(obj.keys())} "
                     f"{[group.name for group in obj.vertex_groups]} {[m.type for m in obj.modifiers]}")  # fmt: skip
        if obj.type != "MESH":
            continue
        mesh = obj.data
        tags = mesh.get("iqe_custom")
        lines.append(f"  {mesh.name!r} {len(mesh.vertices)} {len(mesh.edges)} {len(mesh.polygons)} {len(mesh.loops)} "
                     f"{[m.name if m else None for m in mesh.materials]} {tags.to_dict() if tags else None} "
                     f"{[uv.name for uv in mesh.uv_layers]} {mesh.color_attributes.active_color_name} "
                     f"{mesh.color_attributes.render_color_index} {dict(mesh.items()).keys()}")  # fmt: skip
        for attribute in mesh.attributes:
            if attribute.name.startswith(".select"):
                continue
            key, width, dtype = _ATTRIBUTE_READS[attribute.data_type]
            values = np.empty(len(attribute.data) * width, dtype)
            attribute.data.foreach_get(key, values)
            lines.append(f"  {attribute.name} {attribute.domain} {attribute.data_type} {_digest(values)}")
        normals = np.empty(len(mesh.loops) * 3, np.float32)
        mesh.corner_normals.foreach_get("vector", normals)
        lines.append(f"  normals {_digest(normals)}")
        weights = [(v.index, g.group, g.weight) for v in mesh.vertices for g in v.groups]
        lines.append(f"  weights {hashlib.sha1(repr(weights).encode()).hexdigest()}")
    lines += [f"material {m.name!r} {sorted(m.keys())}" for m in bpy.data.materials]
    return lines


def _one_mesh_at_a_time(importer: ModuleType) -> object:
    """`_mesh_parts` worked out for each mesh on its own."""
    original = importer._mesh_parts

    def parts(meshes: list) -> object:  # type: ignore[type-arg]
        each = [original([mesh]) for mesh in meshes]
        return importer._MeshParts(*([getattr(part, name)[0] for part in each]
                                     for name in ("corners", "sizes", "kept_corners", "texcoords")))  # fmt: skip

    return parts


def _imported(extension: ModuleType, path: Path, **options: object) -> tuple[list[str], list[str], list[str]]:
    bpy.ops.wm.read_homefile(use_empty=True)
    importer = extension.importers.iqe
    summary = importer.import_iqe_files(bpy.context, [str(path)], importer.IqeImportOptions(**options))
    return _full_state(), summary.warnings, summary.notes


OPTIONS = [{}, {"merge_by_name": False}, {"merge_vertices": False}, {"use_custom_normals": False}]


@pytest.mark.parametrize("seed", range(16))
def test_meshes_worked_out_together_import_as_one_at_a_time(
    tmp_path: Path, extension: ModuleType, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:  # fmt: skip
    path = tmp_path / "many.iqe"
    path.write_text(_varied_text(seed))
    options = OPTIONS[seed % len(OPTIONS)]
    together = _imported(extension, path, **options)
    importer = extension.importers.iqe
    monkeypatch.setattr(importer, "_mesh_parts", _one_mesh_at_a_time(importer))
    monkeypatch.setattr(importer, "_first_equal_vertices", lambda *arguments: None)
    assert _imported(extension, path, **options) == together


def test_the_varied_files_merge_vertices_and_drop_faces(tmp_path: Path, extension: ModuleType) -> None:
    """(the comparison above would prove little if nothing were merged or left out)"""
    merged = dropped = 0
    for seed in range(16):
        path = tmp_path / f"many{seed}.iqe"
        path.write_text(_varied_text(seed))
        state, warnings, _ = _imported(extension, path)
        merged += sum(" iqe_vertex CORNER " in line for line in state)
        dropped += any("same vertex twice" in text for text in warnings)
    assert merged >= 4 and dropped >= 4


EXPORT_OPTIONS = [{}, {"triangulate": False}, {"export_attributes": "ALL", "export_tangents": True},
                  {"apply_modifiers": False, "flip_v": False, "reverse_winding": False}]  # fmt: skip


@pytest.mark.parametrize("seed", range(12))
def test_objects_split_together_export_the_bytes_of_one_at_a_time(
    tmp_path: Path, extension: ModuleType, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:  # fmt: skip
    """The exporter splits the vertices of several objects at once: the file must be that of one object at a
    time (here: objects imported from the varied files, one mirrored, one with a modifier making quads)."""
    path = tmp_path / "many.iqe"
    path.write_text(_varied_text(seed))
    _imported(extension, path)
    meshes = [obj for obj in bpy.data.objects if obj.type == "MESH"]
    if len(meshes) > 2 and seed % 3:
        meshes[1].scale = (-1.0, 1.0, 1.0)
        meshes[2].modifiers.new("more", "SUBSURF").levels = 1
    options = EXPORT_OPTIONS[seed % len(EXPORT_OPTIONS)]
    together, apart = tmp_path / "together.iqe", tmp_path / "apart.iqe"
    assert bpy.ops.export_scene.iqe(filepath=str(together), **options) == {"FINISHED"}
    monkeypatch.setattr(extension.exporters.iqe, "_CORNERS_TOGETHER", 1)  # (each object's blocks on its own)
    assert bpy.ops.export_scene.iqe(filepath=str(apart), **options) == {"FINISHED"}
    assert together.read_bytes() == apart.read_bytes()


def test_objects_split_together_are_split_as_one_at_a_time(extension: ModuleType) -> None:
    """`_split_together` itself, on objects of shared and split vertices, against `_split_vertices` of each."""
    exporter = extension.exporters.iqe
    rng = np.random.default_rng(7)
    objects = []
    for _ in range(9):
        vertices, corners = int(rng.integers(3, 40)), 3 * int(rng.integers(1, 30))
        corner_vert = rng.integers(0, vertices, corners).astype(np.intc)
        normals = rng.choice(np.eye(3, dtype=np.float32), corners)  # (a few distinct rows: some vertices split)
        layers = exporter._Layers(corner={"normal": normals})
        objects.append(exporter._ObjectData("o", np.zeros((vertices, 3), np.float32), corner_vert, layers,
                                            np.arange(corners, dtype=np.intc), np.full(corners // 3, 3), np.zeros(
                                                corners // 3, np.intc), ["m"], None))  # fmt: skip
    splits = exporter._split_together(objects)
    for data, split in zip(objects, splits, strict=True):
        alone_first, alone_vertex = exporter._split_vertices(data.corner_vert, exporter._corner_tables(data).split)
        first, vertex = split
        np.testing.assert_array_equal(vertex, alone_vertex)  # the same new vertex of every corner
        table = exporter._corner_tables(data).split
        np.testing.assert_array_equal(data.corner_vert[first], data.corner_vert[alone_first])
        np.testing.assert_array_equal(table[first], table[alone_first])  # standing for the same data
