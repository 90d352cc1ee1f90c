"""The SMD importer's model extent (the size a skeleton's bone lengths fall back on), block by block for large
meshes, against the column-by-column reductions it replaces; and a large mesh whose positions, normals and UVs the
reader holds per distinct vertex line, built as from per-corner arrays."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import bpy
import numpy as np
import pytest


@pytest.mark.parametrize("rows", [1, 4095, 4096, 4097, 3 * 4096 + 5, 100_000])
@pytest.mark.parametrize("layout", ["contiguous", "view of a table", "nan", "infinite"])
def test_column_spans_are_the_columns_reductions(extension: ModuleType, rows: int, layout: str) -> None:
    rng = np.random.default_rng(rows)
    table = rng.uniform(-1000, 1000, (rows, 10))
    points = table[:, 1:4] if layout == "view of a table" else np.ascontiguousarray(table[:, 1:4])
    if layout in ("nan", "infinite"):
        points[rng.integers(0, rows), rng.integers(0, 3)] = np.nan if layout == "nan" else -np.inf
    with np.errstate(invalid="ignore"):  # (infinity less infinity: NaN, as each way gives it)
        expected = [points[:, axis].max() - points[:, axis].min() for axis in range(3)]
        spans = extension.importers.smd.column_spans(points)
    np.testing.assert_array_equal(spans, expected)


def _grid_smd(side: int) -> str:
    """A wavy grid of side x side quads, each vertex line written once per triangle using it (as exporters do),
    two bones and a seam of UVs; its normals are not Blender's own (custom normals are set)."""
    lines = []
    for y in range(side + 1):
        for x in range(side + 1):
            z = np.sin(x * 0.3) * np.cos(y * 0.2)
            normal = np.array([0.3 * np.cos(x * 0.3), 0.1, 1.0])
            normal /= np.linalg.norm(normal)
            u = (x % (side // 2 + 1)) / side  # (a seam of UVs halfway)
            links = f"2 0 {x / side:.6f} 1 {1 - x / side:.6f}" if x % 3 else "0"
            lines.append(f"0 {x:.6f} {y:.6f} {z:.6f} {normal[0]:.6f} {normal[1]:.6f} {normal[2]:.6f} {u:.6f} "
                         f"{y / side:.6f} {links}")  # fmt: skip
    body = []
    for y in range(side):
        for x in range(side):
            a, b, c, d = (
                y * (side + 1) + x,
                y * (side + 1) + x + 1,
                (y + 1) * (side + 1) + x + 1,
                (y + 1) * (side + 1) + x,
            )
            for corners in ((a, b, c), (a, c, d)):
                body.append("skin\n" + "".join(lines[k] + "\n" for k in corners))
    return ('version 1\nnodes\n0 "root" -1\n1 "tip" 0\nend\nskeleton\ntime 0\n0 0 0 0 0 0 0\n1 1 0 0 0 0 0\nend\n'
            f"triangles\n{''.join(body)}end\n")  # fmt: skip


def _mesh_arrays(mesh: bpy.types.Mesh) -> dict[str, bytes]:
    found = {"corner_normals": np.array([tuple(n.vector) for n in mesh.corner_normals], np.float32).tobytes()}
    kinds = {"FLOAT_VECTOR": (3, "vector", np.float32), "FLOAT2": (2, "vector", np.float32),
             "FLOAT": (1, "value", np.float32), "INT": (1, "value", np.int32), "BOOLEAN": (1, "value", np.bool_),
             "INT32_2D": (2, "value", np.int32), "INT16_2D": (2, "value", np.int16)}  # fmt: skip
    for attribute in mesh.attributes:
        if attribute.name.startswith(".select"):  # (5.0.1 leaves `.select_edge` as it finds the memory: run to run)
            continue
        if attribute.data_type not in kinds:  # (a kind the import does not make)
            found[attribute.name] = attribute.data_type.encode()
            continue
        width, key, dtype = kinds[attribute.data_type]
        values = np.empty(len(attribute.data) * width, dtype)
        attribute.data.foreach_get(key, values)
        found[attribute.name] = values.tobytes()
    return found


def test_a_large_mesh_of_repeated_lines_held_per_line_builds_the_same_mesh(
    extension: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "grid.smd"
    path.write_text(_grid_smd(80))  # 12,800 triangles: 38,400 corners, over the reader's _PER_LINE_FROM
    meshes = []
    for held_from in (1 << 40, 1):  # every column made at once, then held per line
        monkeypatch.setattr(extension.formats.smd.reader, "_PER_LINE_FROM", held_from)
        bpy.ops.wm.read_homefile(use_empty=True)
        bpy.ops.import_scene.valve_smd(filepath=str(path))
        obj = bpy.data.objects["grid"]
        groups = [[(g.group, g.weight) for g in vertex.groups] for vertex in obj.data.vertices]
        meshes.append((_mesh_arrays(obj.data), groups, [b.length for b in bpy.data.armatures[0].bones]))
    assert meshes[0] == meshes[1]
