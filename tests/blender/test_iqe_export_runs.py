"""The IQE exporter makes the blocks of consecutive objects of one layout together (their arrays stacked, their
vertices split in one pass): the file and the warnings must be those of making each object's blocks on its own, on
varied scenes: merged file vertices, weights, colours, custom arrays, several materials, polygons, a mirrored
object, objects of different layouts side by side. Its renumbering of a vertex's distinct corner rows must give
the vertices the plain rule gives."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import bpy
import numpy as np
import pytest

from tests.blender.test_iqe_many_meshes import _varied_text


def _varied_scene(extension: ModuleType, path: Path, seed: int) -> None:
    """The varied file imported three times (objects of one layout side by side), then changed so that runs meet
    every case: a second material on some faces, a mirrored object, a colour attribute on one object alone (a
    layout of its own amid the others)."""
    bpy.ops.wm.read_homefile(use_empty=True)
    path.write_text(_varied_text(seed))
    importer = extension.importers.iqe
    for _ in range(3):
        importer.import_iqe_files(bpy.context, [str(path)], importer.IqeImportOptions())
    meshes = [obj for obj in bpy.data.objects if obj.type == "MESH"]
    for number, obj in enumerate(meshes):
        mesh = obj.data
        if number % 3 == 1 and len(mesh.polygons) > 1:
            mesh.materials.append(bpy.data.materials.new(f"second{number}"))
            indices = np.zeros(len(mesh.polygons), np.intc)
            indices[::2] = len(mesh.materials) - 1
            mesh.polygons.foreach_set("material_index", indices)
        if number % 4 == 2:
            obj.scale = (-1.0, 1.0, 1.0)
        if number == 1:
            colors = mesh.color_attributes.new("paint", "FLOAT_COLOR", "CORNER")
            colors.data.foreach_set("color", np.linspace(0.0, 1.0, len(mesh.loops) * 4, dtype=np.float32))
    bpy.context.view_layer.update()


def _exported(extension: ModuleType, path: Path, **options: object) -> tuple[bytes, list[str]]:
    assert bpy.ops.export_scene.iqe(filepath=str(path), **options) == {"FINISHED"}
    summary = extension.common.operators.LAST_SUMMARY[0]
    return path.read_bytes(), [*summary.warnings, *summary.notes, f"{summary.objects} {summary.faces}"]


@pytest.mark.parametrize("seed", range(16))
def test_blocks_made_in_runs_are_those_made_one_object_at_a_time(
    tmp_path: Path, extension: ModuleType, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:  # fmt: skip
    _varied_scene(extension, tmp_path / "varied.iqe", seed)
    options = [{}, {"triangulate": False}, {"export_colors": "LINEAR", "reverse_winding": False}][seed % 3]
    options["export_attributes"] = "ALL" if seed % 2 else "IQE"
    together = _exported(extension, tmp_path / "together.iqe", **options)
    monkeypatch.setattr(extension.exporters.iqe, "_RUN_CORNERS", 0)  # (every object a run of its own)
    assert _exported(extension, tmp_path / "alone.iqe", **options) == together


def test_the_varied_scenes_make_runs_of_several_objects_and_split_vertices(
    tmp_path: Path, extension: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    """(the comparison above would prove little if no run held several objects, or no vertex were split)"""
    exporter = extension.exporters.iqe
    runs: list[int] = []
    split: list[bool] = []
    original_runs, original_split = exporter._runs, exporter._split_vertices

    def counted_runs(objects: list) -> object:  # type: ignore[type-arg]
        for run in original_runs(objects):
            runs.append(len(run))
            yield run

    def counted_split(vertex: np.ndarray, columns: list) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[type-arg]
        first, new_vertex = original_split(vertex, columns)
        split.append(len(first) > len(np.unique(vertex)))
        return first, new_vertex

    monkeypatch.setattr(exporter, "_runs", counted_runs)
    monkeypatch.setattr(exporter, "_split_vertices", counted_split)
    for seed in range(16):
        _varied_scene(extension, tmp_path / "varied.iqe", seed)
        _exported(extension, tmp_path / "out.iqe")
    assert max(runs) >= 5 and sum(length == 1 for length in runs) >= 4 and sum(split) >= 8


def _split_by_whole_rows(vertex: np.ndarray, corner_data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The plain rule: new vertices ordered by Blender vertex, then by their corner rows' bytes; the rows of a new
    vertex (a representative's) and each corner's new vertex."""
    rows = [bytes(row) for row in np.ascontiguousarray(corner_data)]
    keys = sorted(set(zip(vertex.tolist(), rows, strict=True)))
    number = {key: index for index, key in enumerate(keys)}
    return np.array([key[0] for key in keys], np.int64), np.array(
        [number[key] for key in zip(vertex.tolist(), rows, strict=True)], np.int64
    )


@pytest.mark.parametrize("seed", range(24))
def test_split_vertices_are_those_of_the_plain_rule(extension: ModuleType, seed: int) -> None:
    """Each new vertex renumbered among its Blender vertex's (dense keys however many vertices split): the same
    vertices, in the same order, as numbering the distinct (vertex, row) pairs in sorted order."""
    rng = np.random.default_rng(seed)
    corners, width = int(rng.integers(1, 400)), int(rng.integers(0, 4))
    vertex = rng.integers(0, max(corners // int(rng.integers(1, 6)), 1), corners)
    if seed % 4 == 3:  # a corner a vertex, every vertex used (flat shading made every corner its own vertex)
        vertex = rng.permutation(corners)
    choices = np.array([0.0, -0.0, 1.0, 0.5, np.nan], np.float32)
    corner_data = rng.choice(choices[: int(rng.integers(1, 6))], (corners, width)).astype(np.float32)
    first, new_vertex = extension.exporters.iqe._split_vertices(vertex, corner_data)
    vertex_of_new, expected = _split_by_whole_rows(vertex, corner_data)
    np.testing.assert_array_equal(vertex[first], vertex_of_new)
    np.testing.assert_array_equal(new_vertex, expected)
    representative = np.unique(expected, return_index=True)[1]  # (any corner of a new vertex holds its row)
    np.testing.assert_array_equal(corner_data[first].view(np.uint32), corner_data[representative].view(np.uint32))


def test_counted_triangles_are_those_of_each_face(extension: ModuleType) -> None:
    """The summary's triangles, counted from the blocks' face sizes without int64 copies, as each face makes them
    (a size below 3, which no block should have, makes none)."""
    iqe = extension.formats.iqe
    counted = extension.exporters.iqe._counted_faces
    rng = np.random.default_rng(5)
    for low in (3, 0):
        blocks = []
        for _ in range(6):
            block = iqe.IqeMesh("m", "x", np.zeros((3, 3), np.float32))
            block.face_sizes = rng.integers(low, 9, rng.integers(0, 40)).astype(np.int32)
            blocks.append(block)
        sizes = np.concatenate([block.face_sizes for block in blocks]).astype(np.int64)
        assert counted(blocks, "triangles") == int(np.maximum(sizes - 2, 0).sum())
        assert counted(blocks, "polygons") == len(sizes)
    assert counted([], "triangles") == 0


def test_writing_keeps_freed_memory_for_a_small_file_only_meanwhile(
    tmp_path: Path, extension: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A small file's text is made and written with freed memory kept for reuse (memory.freed_memory_kept), and
    glibc's settings are restored afterwards; a large one's (made on several cores) is not."""
    memory = extension.qmap_compiler.memory
    exporter = extension.exporters.iqe
    _varied_scene(extension, tmp_path / "varied.iqe", 1)
    depths: list[int] = []
    pieces = exporter.iqe.iqe_pieces

    def recorded(*args: object, **kwargs: object) -> object:
        depths.append(memory._kept_depth)
        return pieces(*args, **kwargs)

    monkeypatch.setattr(exporter.iqe, "iqe_pieces", recorded)
    kept = _exported(extension, tmp_path / "kept.iqe")
    monkeypatch.setattr(exporter, "_THREADS_FROM_VERTICES", 0)  # (every file large)
    assert _exported(extension, tmp_path / "large.iqe") == kept
    expected = [1, 0] if memory._library().mallopt is not None else [0, 0]
    assert depths == expected and memory._kept_depth == 0


def test_normals_kept_per_point_give_the_file_of_normals_per_corner(
    tmp_path: Path, extension: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    """Unedited file normals stored per point are kept as a point layer (_unedited_point_normals), not spread to
    the corners: the IQE and IQM files and the warnings must be those of the normals per corner, with objects
    mirrored or moved (their normals transformed per corner), edited normals on some corners, and merged vertices
    (normals stored per corner) beside them. The point layer must have been taken, and turned down."""
    exporter = extension.exporters.iqe
    taken: list[bool] = []
    original = exporter._unedited_point_normals

    def recorded(*args: object) -> object:
        result = original(*args)
        taken.append(result is not None)
        return result

    monkeypatch.setattr(exporter, "_unedited_point_normals", recorded)
    for seed in range(12):
        _varied_scene(extension, tmp_path / "varied.iqe", seed)
        meshes = [obj for obj in bpy.data.objects if obj.type == "MESH"]
        for number, obj in enumerate(meshes):
            if number % 5 == 3:
                obj.location = (1.0, 2.0, 0.5)
                obj.rotation_euler = (0.3, 0.0, 1.1)
            if number % 4 == 0 and len(obj.data.loops):  # some corners' normals edited (more than 3 degrees)
                normals = np.tile(np.array([0.0, 0.0, 1.0], np.float32), (len(obj.data.loops), 1))
                normals[::2] = (1.0, 0.0, 0.0)
                obj.data.normals_split_custom_set(normals.tolist())
        bpy.context.view_layer.update()
        options = [{}, {"triangulate": False}, {"export_colors": "LINEAR", "reverse_winding": False}][seed % 3]
        monkeypatch.setattr(exporter, "_POINT_NORMALS", True)
        per_point = [_exported(extension, tmp_path / "point.iqe", **options),
                     _exported_iqm(extension, tmp_path / "point.iqm")]  # fmt: skip
        monkeypatch.setattr(exporter, "_POINT_NORMALS", False)
        per_corner = [_exported(extension, tmp_path / "corner.iqe", **options),
                      _exported_iqm(extension, tmp_path / "corner.iqm")]  # fmt: skip
        assert per_point == per_corner, seed
    assert any(taken) and not all(taken)


def _exported_iqm(extension: ModuleType, path: Path) -> tuple[bytes, list[str]]:
    assert bpy.ops.export_scene.iqm(filepath=str(path)) == {"FINISHED"}
    summary = extension.common.operators.LAST_SUMMARY[0]
    return path.read_bytes(), [*summary.warnings, *summary.notes, f"{summary.objects} {summary.faces}"]


def test_runs_made_as_their_objects_are_read_give_the_file_of_all_read_first(
    tmp_path: Path, extension: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    """Each run's blocks are made as soon as its objects are read (their arrays then freed for the next run's): the
    file and the warnings must be those of reading every object first, and runs must have been made before the
    last object was read."""
    exporter = extension.exporters.iqe
    events: list[str] = []
    read, made = exporter._object_data, exporter._run_blocks

    def recorded_read(*args: object, **kwargs: object) -> object:
        events.append("read")
        return read(*args, **kwargs)

    def recorded_made(*args: object, **kwargs: object) -> object:
        events.append("made")
        return made(*args, **kwargs)

    monkeypatch.setattr(exporter, "_object_data", recorded_read)
    monkeypatch.setattr(exporter, "_run_blocks", recorded_made)
    original = exporter._all_blocks
    for seed in range(8):
        _varied_scene(extension, tmp_path / "varied.iqe", seed)
        options = [{}, {"triangulate": False}][seed % 2]
        events.clear()
        streamed = [_exported(extension, tmp_path / "streamed.iqe", **options)]
        last_read = len(events) - 1 - events[::-1].index("read")
        assert "made" in events[:last_read]  # (a run made before the last object was read)
        streamed.append(_exported_iqm(extension, tmp_path / "streamed.iqm"))
        monkeypatch.setattr(exporter, "_all_blocks", lambda objects, taken: original(list(objects), taken))
        first = [_exported(extension, tmp_path / "first.iqe", **options),
                 _exported_iqm(extension, tmp_path / "first.iqm")]  # fmt: skip
        monkeypatch.setattr(exporter, "_all_blocks", original)
        assert streamed == first, seed


def _straight_scene(extension: ModuleType, folder: Path, seed: int) -> None:
    """The varied scene (one in three objects moved, some normals edited, as above) beside objects the exporter
    reads together (_reads_straight): small patches imported from an IQE (file normals on points, a UV map), one
    with two materials, one with edited normals, one named with a quote, one without UV map, Blender-made
    triangle meshes without file normals, one of them moved."""
    from tools.bench_cases import many_meshes_iqe

    _varied_scene(extension, folder / "varied.iqe", seed)
    many_meshes_iqe(folder / "patches.iqe", count=6, seed=seed)
    extension.importers.iqe.import_iqe_files(bpy.context, [str(folder / "patches.iqe")],
                                             extension.importers.iqe.IqeImportOptions())  # fmt: skip
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=2, location=(0.0, 0.0, 0.0))
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=1, location=(3.0, 0.0, 0.0))
    meshes = [obj for obj in bpy.data.objects if obj.type == "MESH"]
    rng = np.random.default_rng(seed)
    for number, obj in enumerate(meshes):
        mesh = obj.data
        if number % 5 == 3 and obj.name.startswith("part"):
            obj.location = (1.0, 2.0, 0.5)
        if number % 4 == 0 and len(mesh.loops):  # some corners' normals edited (more than 3 degrees)
            normals = np.tile(np.array([0.0, 0.0, 1.0], np.float32), (len(mesh.loops), 1))
            normals[:: int(rng.integers(2, 40))] = (1.0, 0.0, 0.0)
            mesh.normals_split_custom_set(normals.tolist())
        if number % 7 == 2 and len(mesh.polygons) > 1:
            mesh.materials.append(bpy.data.materials.new(f"other{number}"))
            indices = (rng.random(len(mesh.polygons)) < 0.5).astype(np.intc) * (len(mesh.materials) - 1)
            mesh.polygons.foreach_set("material_index", indices)
        if number % 6 == 5 and len(mesh.uv_layers):
            mesh.uv_layers.remove(mesh.uv_layers[0])
        if number % 9 == 4:
            obj.name = 'quoted "part"'
            if obj.material_slots and obj.material_slots[0].material is not None:
                obj.material_slots[0].material.name = 'quoted "material"'
    bpy.context.view_layer.update()


def test_objects_read_together_give_the_file_of_objects_read_one_by_one(
    tmp_path: Path, extension: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    """Consecutive objects that _reads_straight are read together (_straight_objects_data: one array per kind for
    all of them, their UVs flipped and their file normals checked at once): the IQE and IQM files and the warnings
    must be those of _object_data reading each, with other objects among them, on several export options and
    object counts (groups and checked chunks cut anywhere). The objects must have been read together, not all."""
    exporter = extension.exporters.iqe
    together: list[int] = []
    on_points: list[bool] = []  # (whether each object read together keeps its normals on points)
    one_at_a_time: list[str] = []
    original, read_alone = exporter._straight_objects_data, exporter._object_data

    def recorded(objects: list, *args: object) -> object:  # type: ignore[type-arg]
        together.append(len(objects))
        made = original(objects, *args)
        on_points.extend("normal" in data.layers.point for data in made)
        return made

    def recorded_alone(context: object, obj: bpy.types.Object, *args: object) -> object:
        one_at_a_time.append(obj.name)
        return read_alone(context, obj, *args)

    monkeypatch.setattr(exporter, "_straight_objects_data", recorded)
    monkeypatch.setattr(exporter, "_object_data", recorded_alone)
    counts: list[tuple[int, int]] = []  # (most objects read together, objects read alone) of each seed
    for seed in range(9):
        _straight_scene(extension, tmp_path, seed)
        options = [{}, {"triangulate": False, "flip_v": False}, {"export_normals": False},
                   {"export_uvs": False, "export_attributes": "NONE"},
                   {"reverse_winding": False}][seed % 5]  # fmt: skip
        monkeypatch.setattr(exporter, "_STRAIGHT_CORNERS", [1 << 16, 1, 500][seed % 3])
        monkeypatch.setattr(exporter, "_CHECKED_CORNERS", [1 << 13, 1, 300][seed % 3])
        monkeypatch.setattr(exporter, "_STRAIGHT", True)
        read_together = [_exported(extension, tmp_path / "together.iqe", **options),
                         _exported_iqm(extension, tmp_path / "together.iqm")]  # fmt: skip
        counts.append((max(together, default=0), len(one_at_a_time)))
        if options.get("export_normals", True):  # (edited normals on some: per corner)
            assert any(on_points) and not all(on_points), seed
        on_points.clear()
        together.clear()
        one_at_a_time.clear()
        monkeypatch.setattr(exporter, "_STRAIGHT", False)
        one_by_one = [_exported(extension, tmp_path / "alone.iqe", **options),
                      _exported_iqm(extension, tmp_path / "alone.iqm")]  # fmt: skip
        assert read_together == one_by_one, seed
    assert all(most >= 2 and alone for most, alone in counts[::3])  # (seeds 1, 2, ... read one object a group)


def test_stacked_arrays_are_views_only_of_consecutive_parts(extension: ModuleType) -> None:
    """_stacked gives a view of the base where the arrays are its consecutive parts in order (objects read
    together), and a copy otherwise (gaps, wrong order, strided columns, other bases, other row widths): the
    arrays of np.concatenate either way."""
    stacked = extension.exporters.iqe._stacked
    table = np.arange(60, dtype=np.float32).reshape(20, 3)
    flat = np.arange(40, dtype=np.intc)
    other = table.copy()
    cases = [([table[0:4], table[4:9], table[9:20]], True), ([table[0:4], table[4:4], table[4:6]], True),
             ([flat[2:10], flat[10:11]], True), ([table[0:4], table[5:9]], False), ([table[4:8], table[0:4]], False),
             ([table[0:4, :2], table[4:8, :2]], False), ([table[0:4], other[4:8]], False),
             ([table.reshape(-1)[0:6].reshape(3, 2), table.reshape(-1)[6:12].reshape(3, 2)], True),
             ([np.ascontiguousarray(table[:, 1]), table[:4, 1]], False)]  # fmt: skip
    for arrays, viewed in cases:
        result = stacked(arrays)
        assert np.array_equal(result, np.concatenate(arrays)) and result.dtype == arrays[0].dtype
        assert np.shares_memory(result, arrays[0]) == viewed
