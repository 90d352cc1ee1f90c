"""SMD/VTA through Blender's operators: every sample round trips, fixtures for what samples lack, errors, safety."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import bpy
import numpy as np
import pytest

from formats import iqe, smd
from tests.blender.conftest import data_state
from tests.blender.scene_helpers import active_collection_holding, chain_rig, cube, select_only, turn_keys
from tests.sample_paths import sample_files

SAMPLES = sample_files("smd", ".smd", ".vta")
TOLERANCE = 1e-5


def import_smd(*paths: Path, **options: object) -> set[str]:
    if len(paths) == 1:
        return bpy.ops.import_scene.valve_smd(filepath=str(paths[0]), **options)
    return bpy.ops.import_scene.valve_smd(
        directory=str(paths[0].parent), files=[{"name": p.name} for p in paths], **options
    )


def export_smd(path: Path, **options: object) -> set[str]:
    return bpy.ops.export_scene.valve_smd(filepath=str(path), **options)


# ------------------------------------------------------------------------------------------------ comparisons


def euler_matrix(rotations: np.ndarray) -> np.ndarray:
    x, y, z = np.moveaxis(np.asarray(rotations, np.float64), -1, 0)
    cx, sx, cy, sy, cz, sz = np.cos(x), np.sin(x), np.cos(y), np.sin(y), np.cos(z), np.sin(z)
    return np.stack(
        [
            np.stack([cy * cz, sx * sy * cz - cx * sz, cx * sy * cz + sx * sz], -1),
            np.stack([cy * sz, sx * sy * sz + cx * cz, cx * sy * sz - sx * cz], -1),
            np.stack([-sy, sx * cy, cx * cy], -1),
        ],
        -2,
    )


def local_poses(doc: smd.SmdDocument) -> tuple[int, dict[str, np.ndarray]]:
    """First time and, per bone name, (F, 4, 4) parent-relative matrices with held values."""
    dense = smd.dense_skeleton(doc)
    matrices = np.zeros((dense.frame_count, len(doc.nodes), 4, 4))
    matrices[..., :3, :3] = euler_matrix(dense.rotations)
    matrices[..., :3, 3] = dense.positions
    matrices[..., 3, 3] = 1
    return dense.first_time, {node.name: matrices[:, row] for row, node in enumerate(doc.nodes)}


def world_rest(doc: smd.SmdDocument) -> dict[str, np.ndarray]:
    _, local = local_poses(doc)
    by_id = {node.id: node for node in doc.nodes}
    result: dict[str, np.ndarray] = {}

    def world(node: smd.SmdNode) -> np.ndarray:
        if node.name not in result:
            own = local[node.name][0]
            result[node.name] = own if node.parent not in by_id else world(by_id[node.parent]) @ own
        return result[node.name]

    for node in doc.nodes:
        world(node)
    return result


def corner_weights(doc: smd.SmdDocument) -> list[dict[str, float]]:
    t = doc.triangles
    assert t is not None
    counts, bones, weights = smd.effective_links(t.link_counts, t.link_bones, t.link_weights, t.parent_bones)
    weights = smd.normalize_links(counts, weights)
    names = {node.id: node.name for node in doc.nodes}
    out: list[dict[str, float]] = []
    start = 0
    for count in counts.tolist():
        links: dict[str, float] = {}
        chosen = slice(start, start + count)
        for bone, weight in zip(bones[chosen].tolist(), weights[chosen].tolist(), strict=True):
            links[names[bone]] = links.get(names[bone], 0.0) + weight
        out.append({k: v for k, v in links.items() if v > 0})
        start += count
    return out


def assert_same_reference(original: smd.SmdDocument, again: smd.SmdDocument) -> None:
    a, b = original.triangles, again.triangles
    assert a is not None and b is not None
    assert len(a) == len(b)
    np.testing.assert_allclose(b.positions, a.positions, atol=TOLERANCE, rtol=0)
    np.testing.assert_allclose(b.uvs, a.uvs, atol=TOLERANCE, rtol=0)
    np.testing.assert_allclose(b.normals, a.normals, atol=TOLERANCE, rtol=0)
    assert [b.material_names[i] for i in b.material_indices] == [a.material_names[i] for i in a.material_indices]
    for before, after in zip(corner_weights(original), corner_weights(again), strict=True):
        if set(before) != set(after):  # a rigid corner may now be bound to the motionless implicit bone
            assert set(before) == {original.nodes[0].name} or after.keys() == {"blender_implicit"}, (before, after)
            continue
        for name, weight in before.items():
            assert after[name] == pytest.approx(weight, abs=TOLERANCE)
    assert_same_rest(original, again)


def assert_same_rest(original: smd.SmdDocument, again: smd.SmdDocument) -> None:
    before, after = world_rest(original), world_rest(again)
    for name, matrix in before.items():
        np.testing.assert_allclose(after[name], matrix, atol=TOLERANCE, rtol=0)


def assert_same_animation(original: smd.SmdDocument, again: smd.SmdDocument) -> None:
    first, before = local_poses(original)
    first_again, after = local_poses(again)
    assert first_again == first
    for name, matrices in before.items():
        np.testing.assert_allclose(after[name], matrices, atol=TOLERANCE, rtol=0)


def vta_corner_positions(doc: smd.SmdDocument) -> dict[str, np.ndarray]:
    frames = sorted(doc.vertex_animation or [], key=lambda f: f.time)
    base = frames[0]
    names = doc.shape_names()
    order = np.argsort(base.vertex_ids)
    result = {}
    for frame in frames[1:]:
        positions = base.positions[order].copy()
        rows = np.searchsorted(base.vertex_ids[order], frame.vertex_ids)
        positions[rows] = frame.positions
        result[names[frame.time]] = positions
    return result


# ------------------------------------------------------------------------------------------------ samples


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_sample_round_trips(path: Path, tmp_path: Path) -> None:
    if path.suffix.lower() == ".vta":
        reference = path.with_suffix(".smd")
        assert import_smd(reference, path) == {"FINISHED"}
        assert_shows_its_basis(bpy.data.objects[reference.stem])
        out = tmp_path / "again.vta"
        assert export_smd(out) == {"FINISHED"}
        original, again = smd.load_vta(path), smd.load_vta(out)
        before, after = vta_corner_positions(original), vta_corner_positions(again)
        assert before.keys() == after.keys()
        for name in before:
            np.testing.assert_allclose(after[name], before[name], atol=TOLERANCE, rtol=0)
        bpy.ops.wm.read_homefile(use_empty=True)
        copy = tmp_path / reference.name
        copy.write_bytes(reference.read_bytes())
        assert import_smd(copy, out) == {"FINISHED"}
        assert bpy.data.objects[reference.stem].data.shape_keys.key_blocks.keys() == ["Basis", *before]
        return
    original = smd.load_smd(path)
    assert import_smd(path) == {"FINISHED"}
    out = tmp_path / f"again{path.suffix}"
    if original.triangles is None:
        assert export_smd(out, export_mode="ANIMATION") == {"FINISHED"}
        again = smd.load_smd(out)
        assert_same_animation(original, again)
    else:
        assert export_smd(out) == {"FINISHED"}
        again = smd.load_smd(out)
        assert_same_reference(original, again)
        meshes = [o for o in bpy.data.objects if o.type == "MESH"]
        counts = [len(o.data.vertices) for o in meshes]
        bpy.ops.wm.read_homefile(use_empty=True)
        assert import_smd(out) == {"FINISHED"}
        assert [len(o.data.vertices) for o in bpy.data.objects if o.type == "MESH"] == counts


def test_overlapping_positions_with_different_weights_stay_apart() -> None:
    path = next((p for p in SAMPLES if p.name == "Overlapping_DifferentWeights.smd"), None)
    if path is None:
        pytest.skip("sample missing")
    import_smd(path)
    assert len(bpy.data.objects["Overlapping_DifferentWeights"].data.vertices) == 6


# ------------------------------------------------------------------------------------------------ fixtures

CHAIN = """version 1
nodes
0 "root" -1
1 "arm bone" 0
2 "hand" 1
end
"""


REST = """skeleton
time 0
0 0 0 0 0 0 0
1 0 0 1 0.5 0 0
2 0 1 0 0 0 0.3
end
"""


def reference_text(links: str = "1 1 1.0", material: str = "skin") -> str:
    return CHAIN + REST + f"""triangles
{material}
0 0 0 0 0 0 1 0 0 {links}
0 1 0 0 0 0 1 1 0 {links}
0 0 1 0 0 0 1 0 1 1 2 1.0
metal dark
0 1 1 0 0 0 1 1 1 2 1 0.25 2 0.75
0 0 1 0 0 0 1 0 1 1 2 1.0
0 1 0 0 0 0 1 1 0 {links}
end
"""


ANIMATION_TIME_5 = CHAIN + """skeleton
time 5
0 0 0 0 0 0 0
1 0 0 1 0.5 0 0
2 0 1 0 0 0 0.3
time 6
1 0 0 1.5 0.6 0 0
time 9
2 0 2 0 0 0.2 0.4
time 10
0 1 0 0 0 0 0.1
end
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def vertex_weights(obj: bpy.types.Object) -> list[list[tuple[str, float]]]:
    names = [group.name for group in obj.vertex_groups]
    return [sorted((names[g.group], round(g.weight, 6)) for g in v.groups) for v in obj.data.vertices]


def test_corners_read_from_one_line_share_vertices_as_when_compared_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bl_ext.dev.io_game_formats.formats.smd import reader  # type: ignore[import-not-found]

    text = reference_text(links="2 1 0.5 2 0.5").replace("metal dark", "skin")
    text = text.replace("1 1 0 0 0 1 1 1 2 1 0.25 2 0.75", "1 0 0 0 0 1 1 1 2 1 0.25 2 0.75")  # (1, 0, 0) twice
    path = write(tmp_path, "model.smd", text)
    results = []
    for most_distinct in (1.0, 0.0):  # repeated lines read once (and grouped by line), then every line read
        monkeypatch.setattr(reader, "_MOST_DISTINCT", most_distinct)
        bpy.ops.wm.read_homefile(use_empty=True)
        assert import_smd(path) == {"FINISHED"}
        mesh_object = bpy.data.objects["model"]
        positions = [tuple(v.co) for v in mesh_object.data.vertices]
        corners = [loop.vertex_index for loop in mesh_object.data.loops]
        results.append((positions, corners, vertex_weights(mesh_object)))
    assert results[0] == results[1]
    assert len(results[0][0]) == 4  # (1, 0, 0) has two weightings: two vertices


def varied_reference(seed: int, per_vertex_normals: bool, unit: bool) -> str:
    """A bumpy grid whose vertex lines repeat (a vertex is written for each triangle using it): normals per vertex
    or per corner, unit length or not, two materials, weights on two bones."""
    rng = np.random.default_rng(seed)
    side = 6
    grid = np.stack(np.meshgrid(np.arange(side + 1), np.arange(side + 1), indexing="ij"), -1).reshape(-1, 2)
    heights = rng.random(len(grid)) * 0.5
    vertex_normals = rng.normal(size=(len(grid), 3)) * (1 if unit else 3)
    if unit:
        vertex_normals /= np.linalg.norm(vertex_normals, axis=1, keepdims=True)
    lines = []
    for row in range(side):
        for column in range(side):
            at = row * (side + 1) + column
            quad = [at, at + side + 1, at + side + 2, at + 1]
            for triangle in ([quad[0], quad[1], quad[2]], [quad[0], quad[2], quad[3]]):
                lines.append("skin" if (row + column) % 3 else "metal dark")
                for vertex in triangle:
                    normal = vertex_normals[vertex] if per_vertex_normals else rng.normal(size=3)
                    x, y = grid[vertex]
                    weight = round(float(x) / side, 2)
                    lines.append(f"0 {x:.6f} {y:.6f} {heights[vertex]:.6f} {normal[0]:.6f} {normal[1]:.6f} "
                                 f"{normal[2]:.6f} {x / side:.6f} {y / side:.6f} 2 1 {weight:.6f} 2 "
                                 f"{1 - weight:.6f}")  # fmt: skip
    return CHAIN + REST + "triangles\n" + "\n".join(lines) + "\nend\n"


def mesh_state(obj: bpy.types.Object) -> tuple[object, ...]:
    """What an import makes of a mesh: vertices, corners, weights, UVs, materials, shading, normals (Blender's, the
    custom ones as stored, and the file's kept for export)."""
    mesh = obj.data

    def corner_floats(collection: object, key: str, width: int) -> list[float]:
        values = np.empty(len(mesh.loops) * width, np.float32)
        collection.foreach_get(key, values)  # type: ignore[attr-defined]
        return values.tolist()

    attributes = {a.name: (a.domain, a.data_type) for a in mesh.attributes}
    stored = mesh.attributes.get("smd_normal")
    sharp = mesh.attributes.get("sharp_face")
    custom = mesh.attributes.get("custom_normal")
    return (
        [tuple(v.co) for v in mesh.vertices], [loop.vertex_index for loop in mesh.loops], vertex_weights(obj),
        corner_floats(mesh.uv_layers[0].uv, "vector", 2), [p.material_index for p in mesh.polygons],
        [m.name for m in mesh.materials], sorted(attributes.items()),
        corner_floats(stored.data, "vector", 3) if stored is not None else None,
        [d.value for d in sharp.data] if sharp is not None else None,
        [tuple(d.value) for d in custom.data] if custom is not None else None,
        corner_floats(mesh.corner_normals, "vector", 3),
    )  # fmt: skip


@pytest.mark.parametrize("per_vertex_normals", [True, False], ids=["normals per vertex", "normals per corner"])
@pytest.mark.parametrize("unit", [True, False], ids=["unit normals", "long normals"])
@pytest.mark.parametrize("options", [{}, {"up_axis": "Y", "global_scale": 0.5}, {"use_custom_normals": False}],
                         ids=["defaults", "Y up, scaled", "no custom normals"])  # fmt: skip
def test_normals_made_once_a_distinct_line_are_those_made_for_each_corner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, per_vertex_normals: bool, unit: bool, options: dict[str, object]
) -> None:
    """Where the reader reads each distinct vertex line once, the import turns and normalises each line's normal
    once (for a mesh of any size here): the same mesh as when every line is read (and every corner's normal made
    on its own)."""
    from bl_ext.dev.io_game_formats.formats.smd import mesh_arrays, reader  # type: ignore[import-not-found]

    monkeypatch.setattr(mesh_arrays, "NORMALS_BY_LINE_FROM", 0)
    path = write(tmp_path, "model.smd", varied_reference(7, per_vertex_normals, unit))
    results = []
    for most_distinct in (1.0, 0.0):  # repeated lines read once (corners grouped by line), then every line read
        monkeypatch.setattr(reader, "_MOST_DISTINCT", most_distinct)
        assert (reader.read_smd(path.read_bytes()).triangles.corner_lines is None) == (most_distinct == 0.0)
        bpy.ops.wm.read_homefile(use_empty=True)
        assert import_smd(path, **options) == {"FINISHED"}
        results.append(mesh_state(bpy.data.objects["model"]))
    assert results[0] == results[1]


@pytest.mark.parametrize("most_distinct", [1.0, 0.0], ids=["lines read once", "every line read"])
def test_degenerate_and_doubled_triangles_arrive_weighted_and_are_written_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, most_distinct: float
) -> None:
    from bl_ext.dev.io_game_formats.formats.smd import reader  # type: ignore[import-not-found]

    monkeypatch.setattr(reader, "_MOST_DISTINCT", most_distinct)
    corner = "0 0 0 0 0 0 1 0 0 1 1 1.0"
    extra = (f"skin\n{corner}\n{corner}\n0 0 1 0 0 0 1 0 1 1 2 1.0\n"  # (0, 0, 0) twice
             "metal dark\n0 0 1 0 0 0 1 0 1 1 2 1.0\n0 1 1 0 0 0 1 1 1 2 1 0.25 2 0.75\n0 1 0 0 0 0 1 1 0 1 1 1.0\n")
    text = reference_text()[: -len("end\n")] + extra + "end\n"  # (the last: the second triangle again)
    path = write(tmp_path, "model.smd", text)
    original = smd.load_smd(str(path))
    assert len(original.triangles) == 4  # two triangles, one using a vertex twice, and the second one again
    assert import_smd(path) == {"FINISHED"}
    from bl_ext.dev.io_game_formats.common.operators import LAST_SUMMARY  # type: ignore[import-not-found]

    assert LAST_SUMMARY[0].warnings == []
    mesh = bpy.data.objects["model"].data
    assert len(mesh.polygons) == 4 and not mesh.validate()
    assert [g.name for g in bpy.data.objects["model"].vertex_groups]
    out = tmp_path / "again.smd"
    assert export_smd(out) == {"FINISHED"}
    assert_same_reference(original, smd.load_smd(str(out)))


def test_animation_keeps_its_time_numbers_and_holds_missing_bones(tmp_path: Path) -> None:
    reference = write(tmp_path, "model.smd", reference_text())
    animation = write(tmp_path, "walk.smd", ANIMATION_TIME_5)
    assert import_smd(reference, animation) == {"FINISHED"}
    action = bpy.data.actions["walk"]
    assert tuple(action.frame_range) == (5.0, 10.0)
    armature = bpy.data.objects["model_skeleton"]
    assert armature.animation_data.action == action
    scene = bpy.context.scene
    scene.frame_set(8)  # "hand" is held from time 5, "arm bone" from time 6
    hand = armature.pose.bones["hand"]
    assert np.allclose(np.array(hand.matrix_basis), np.identity(4), atol=1e-5)
    out = tmp_path / "again.smd"
    assert export_smd(out, export_mode="ANIMATION") == {"FINISHED"}
    assert_same_animation(smd.read_smd(animation.read_bytes()), smd.load_smd(out))


@pytest.mark.parametrize("together", [True, False], ids=["in one import", "one after another"])
def test_two_animations_onto_one_armature(tmp_path: Path, together: bool) -> None:
    """Both become actions; the armature plays the first of one import (as for IQE), and a later import's animation
    replaces the one it played (Blender 4.2 could not say where an object's animation data is, which the import
    must know to put the first back should it fail)."""
    reference = write(tmp_path, "model.smd", reference_text())
    walk, idle = (write(tmp_path, f"{name}.smd", ANIMATION_TIME_5) for name in ("walk", "idle"))
    if together:
        assert import_smd(reference, walk, idle) == {"FINISHED"}
    else:
        for path in (reference, walk, idle):
            assert import_smd(path) == {"FINISHED"}
    armature = bpy.data.objects["model_skeleton"]
    assert {"walk", "idle"} <= set(bpy.data.actions.keys())
    assert armature.animation_data.action == bpy.data.actions["walk" if together else "idle"]


@pytest.mark.parametrize("rotation_mode", ["XYZ", "QUATERNION"])
def test_animation_rotation_keys(tmp_path: Path, rotation_mode: str) -> None:
    animation = write(tmp_path, "walk.smd", ANIMATION_TIME_5)
    assert import_smd(animation, rotation_mode=rotation_mode) == {"FINISHED"}
    armature = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    assert armature.pose.bones["hand"].rotation_mode == rotation_mode
    out = tmp_path / "again.smd"
    export_smd(out, export_mode="ANIMATION")
    assert_same_animation(smd.read_smd(animation.read_bytes()), smd.load_smd(out))


def test_blank_material_lines_are_dropped_or_kept(tmp_path: Path) -> None:
    path = write(tmp_path, "blank.smd", reference_text(material=""))
    import_smd(path)
    assert len(bpy.data.objects["blank"].data.polygons) == 1
    bpy.ops.wm.read_homefile(use_empty=True)
    import_smd(path, keep_blank_materials=True)
    mesh = bpy.data.objects["blank"].data
    assert len(mesh.polygons) == 2 and mesh.materials[0].name == "UndefinedMaterial"


def test_ten_weight_links_raw_or_as_studiomdl(tmp_path: Path) -> None:
    nodes = "".join(f'{i} "b{i}" {i - 1}\n' for i in range(10))
    poses = "".join(f"{i} 0 0 1 0 0 0\n" for i in range(10))
    links = "10 " + " ".join(f"{i} {0.01 + i * 0.02:.2f}" for i in range(10))
    lines = "".join(f"0 {x} {y} 0 0 0 1 0 0 {links}\n" for x, y in ((0, 0), (1, 0), (0, 1)))
    text = f"version 1\nnodes\n{nodes}end\nskeleton\ntime 0\n{poses}end\ntriangles\nmat\n{lines}end\n"
    path = write(tmp_path, "ten.smd", text)
    import_smd(path)
    assert len(bpy.data.objects["ten"].vertex_groups) == 10
    out = tmp_path / "again.smd"
    export_smd(out)
    assert_same_reference(smd.read_smd(text.encode()), smd.load_smd(out))
    export_smd(out, limit_weights=True)
    assert int(smd.load_smd(out).triangles.link_counts.max()) == 3
    bpy.ops.wm.read_homefile(use_empty=True)
    import_smd(path, weight_mode="STUDIOMDL")
    assert len(bpy.data.objects["ten"].vertex_groups) == 3


def test_empty_triangles_block_makes_no_mesh(tmp_path: Path) -> None:
    path = write(tmp_path, "empty.smd", CHAIN + "skeleton\ntime 0\n0 0 0 0 0 0 0\nend\ntriangles\nend\n")
    assert import_smd(path) == {"FINISHED"}
    assert [o.type for o in bpy.data.objects] == ["ARMATURE"]


def test_goldsrc_reference_and_animation(tmp_path: Path) -> None:
    text = CHAIN + """skeleton
time 0
0 0 0 0 0 0 0
1 0 0 1 0 0 0
2 0 1 0 0 0 0
end
triangles
wall.bmp
1 0 0 0 0 0 1 0 0
2 1 0 0 0 0 1 1 0
2 0 1 0 0 0 1 0 1
end
"""
    reference = write(tmp_path, "gold.smd", text)
    frames = "".join(f"time {t}\n0 0 0 0 0 0 0\n1 0 0 {t} 0 0 0\n2 0 1 0 0 0 {t / 10}\n" for t in range(4))
    animation = write(tmp_path, "gold_anim.smd", CHAIN + f"skeleton\n{frames}end\n")
    assert import_smd(reference, animation) == {"FINISHED"}
    out = tmp_path / "out.smd"
    assert export_smd(out, export_mode="ALL", flavour="GOLDSRC") == {"FINISHED"}
    again = smd.load_smd(out)
    assert again.flavour == "goldsrc"
    assert_same_reference(smd.read_smd(text.encode()), again)
    assert_same_animation(smd.read_smd(animation.read_bytes()), smd.load_smd(tmp_path / "out_gold_anim.smd"))


def assert_shows_its_basis(obj: bpy.types.Object) -> None:
    """Every shape key at 0 and the evaluated mesh where the basis is: an import leaves the model as modelled (new
    keys start at 1.0 on Blender 5.0+)."""
    keys = obj.data.shape_keys.key_blocks
    assert [key.value for key in keys[1:]] == [0.0] * (len(keys) - 1)
    basis = np.empty(len(obj.data.vertices) * 3, np.float32)
    keys[0].data.foreach_get("co", basis)
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).to_mesh()
    shown = np.empty(len(evaluated.vertices) * 3, np.float32)
    evaluated.vertices.foreach_get("co", shown)
    obj.to_mesh_clear()
    np.testing.assert_allclose(shown, basis, atol=TOLERANCE, rtol=0)  # (the Armature modifier at rest adds ~1e-7)
    moved = np.empty_like(basis)
    keys[-1].data.foreach_get("co", moved)
    assert not np.array_equal(moved, basis)  # the last shape would show if it were on


def test_vta_with_gaps_and_no_names(tmp_path: Path) -> None:
    reference = write(tmp_path, "face.smd", reference_text())
    corners = [(0, 0), (1, 0), (0, 1), (1, 1), (0, 1), (1, 0)]
    base = "".join(f"{i} {x} {y} 0 0 0 1\n" for i, (x, y) in enumerate(corners))
    vta = write(tmp_path, "face.vta", CHAIN + "skeleton\ntime 0\ntime 1\ntime 2\ntime 5\nend\nvertexanimation\n"
                f"time 0\n{base}time 1\n0 0 0 0.5 0 0 1\ntime 2\ntime 5\n3 1 1 -0.25 0 0 1\nend\n")  # fmt: skip
    assert import_smd(reference, vta) == {"FINISHED"}
    keys = bpy.data.objects["face"].data.shape_keys.key_blocks
    assert keys.keys() == ["Basis", "1", "2", "5"]
    coords = np.array([v.co[:] for v in keys["5"].data])
    assert coords[:, 2].min() == pytest.approx(-0.25)
    assert_shows_its_basis(bpy.data.objects["face"])
    assert not [o for o in bpy.data.objects if o.name.startswith("VTA")]


def test_a_qc_imports_what_it_names_with_its_shape_names_and_up_axis(tmp_path: Path) -> None:
    write(tmp_path, "Face_Reference.smd", reference_text())
    corners = [(0, 0), (1, 0), (0, 1), (1, 1), (0, 1), (1, 0)]
    base = "".join(f"{i} {x} {y} 0 0 0 1\n" for i, (x, y) in enumerate(corners))
    write(tmp_path, "expressions.vta", CHAIN + "skeleton\ntime 0\ntime 1\ntime 5\nend\nvertexanimation\n"
          f"time 0\n{base}time 1\n0 0 0 0.5 0 0 1\ntime 5\n3 1 1 -0.25 0 0 1\nend\n")  # fmt: skip
    write(tmp_path, "idle.smd", ANIMATION_TIME_5)
    qc = write(tmp_path, "face.qc", """$upaxis Y
$model "face" "face_reference" {
    flexfile "Expressions.vta" { defaultflex frame 0 flex "smile" frame 1 flexpair "frown" 1 frame 5 }
}
$bodygroup "hats" { studio "hat" blank }
$sequence "idle" "idle" fps 30
""")
    write(tmp_path, "hat.smd", reference_text(material="felt"))
    assert import_smd(qc) == {"FINISHED"}
    face = bpy.data.objects["Face_Reference"]
    assert face.data.shape_keys.key_blocks.keys() == ["Basis", "smile", "frown"]
    assert_shows_its_basis(face)
    armature = bpy.data.objects["Face_Reference_skeleton"]
    assert armature.animation_data.action.name == "idle"
    assert [o.name for o in bpy.data.objects if o.type == "ARMATURE"] == [armature.name]  # one skeleton
    assert bpy.data.objects["hat"].parent == armature
    # Y up: the file's +Y is Blender's +Z
    assert max(v.co.z for v in face.data.vertices) == pytest.approx(1.0)
    assert max(v.co.y for v in face.data.vertices) == pytest.approx(0.0, abs=1e-6)


def test_a_qc_that_cannot_be_read_changes_nothing(tmp_path: Path) -> None:
    write(tmp_path, "ref.smd", reference_text())
    qc = write(tmp_path, "bad.qc", '$body "b" "ref"\n$include "bad.qc"\n')
    cube("Existing")
    bpy.ops.object.mode_set(mode="EDIT")
    before = data_state()
    with pytest.raises(RuntimeError, match=r"\$include loop"):
        import_smd(qc)
    assert data_state() == before and bpy.context.object.mode == "EDIT"


def test_a_missing_include_is_left_out_with_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """studiomdl stops at a missing $include; an import brings in what it can find and names what it could not."""
    write(tmp_path, "ref.smd", reference_text())
    qc = write(tmp_path, "model.qc", '$include "missing.qci"\n$body "b" "ref"\n')
    assert import_smd(qc) == {"FINISHED"}
    assert any(obj.type == "MESH" for obj in bpy.data.objects)
    assert "model.qc line 1: $include file 'missing.qci' not found" in capsys.readouterr().out


def test_normals_that_are_not_unit_length_still_shape_the_mesh(tmp_path: Path) -> None:
    """Hand-written files hold normals such as (0, 2, 2); Blender 4.2 ignores custom normals that are not unit
    length, so they are normalised before being set (4.3+ normalise them themselves)."""
    text = reference_text().replace(" 0 0 1 0 0 ", " 0 2 2 0 0 ").replace(" 0 0 1 1 0 ", " 0 2 2 1 0 ")
    text = text.replace(" 0 0 1 0 1 ", " 0 2 2 0 1 ").replace(" 0 0 1 1 1 ", " 0 2 2 1 1 ")
    assert import_smd(write(tmp_path, "tilted.smd", text)) == {"FINISHED"}
    mesh = bpy.data.objects["tilted"].data
    normals = np.empty(len(mesh.loops) * 3, np.float32)
    mesh.corner_normals.foreach_get("vector", normals)
    np.testing.assert_allclose(normals.reshape(-1, 3), [[0, 0.5**0.5, 0.5**0.5]] * len(mesh.loops), atol=1e-4)


def test_upper_case_keywords(tmp_path: Path) -> None:
    path = write(tmp_path, "shout.smd", reference_text().replace("nodes", "NODES").replace("triangles", "Triangles")
                 .replace("end", "END").replace("time", "TIME"))  # fmt: skip
    assert import_smd(path) == {"FINISHED"}
    assert len(bpy.data.objects["shout"].data.polygons) == 2


def test_y_up_files_turn_upright(tmp_path: Path) -> None:
    path = write(tmp_path, "yup.smd", reference_text())
    import_smd(path, up_axis="Y")
    co = np.array([v.co[:] for v in bpy.data.objects["yup"].data.vertices])
    assert co[:, 1].max() == pytest.approx(0.0) and co[:, 2].max() == pytest.approx(1.0)
    out = tmp_path / "again.smd"
    export_smd(out, up_axis="Y")
    assert_same_reference(smd.read_smd(path.read_bytes()), smd.load_smd(out))


def test_bone_axis_correction_round_trips(tmp_path: Path) -> None:
    reference = write(tmp_path, "model.smd", reference_text())
    animation = write(tmp_path, "walk.smd", ANIMATION_TIME_5)
    import_smd(reference, animation, bone_axis="X")
    out = tmp_path / "out.smd"
    export_smd(out, export_mode="ALL")
    assert_same_reference(smd.read_smd(reference.read_bytes()), smd.load_smd(out))
    assert_same_animation(smd.read_smd(animation.read_bytes()), smd.load_smd(tmp_path / "out_walk.smd"))


def test_an_import_and_export_writes_the_animation_files_own_names_back(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    reference = write(source, "model.smd", reference_text())
    animation = write(source, "model_walk.smd", ANIMATION_TIME_5)  # (the name an export gives action "walk")
    import_smd(reference, animation)
    assert bpy.data.actions[0].name == "model_walk"
    assert export_smd(tmp_path / "model.smd", export_mode="ALL", action_scope="ALL") == {"FINISHED"}
    assert sorted(p.name for p in tmp_path.glob("*.smd")) == ["model.smd", "model_walk.smd"]  # not model_model_walk
    assert_same_animation(smd.read_smd(animation.read_bytes()), smd.load_smd(tmp_path / "model_walk.smd"))


def test_of_several_animations_the_first_plays_as_for_iqe(tmp_path: Path) -> None:
    reference = write(tmp_path, "model.smd", reference_text())
    walk = write(tmp_path, "walk.smd", ANIMATION_TIME_5)
    later = {"time 5\n": "time 20\n", "time 6\n": "time 21\n", "time 9\n": "time 24\n", "time 10\n": "time 25\n"}
    run = write(tmp_path, "run.smd", "".join(later.get(line, line) for line in ANIMATION_TIME_5.splitlines(True)))
    assert import_smd(reference, walk, run) == {"FINISHED"}
    armature = next(obj for obj in bpy.data.objects if obj.type == "ARMATURE")
    assert armature.animation_data.action.name == "walk" and {a.name for a in bpy.data.actions} == {"walk", "run"}
    assert (bpy.context.scene.frame_start, bpy.context.scene.frame_end) == (5, 10)  # the first plays, not the last
    assert bpy.context.scene.frame_current == 5  # its first pose shows (the frame was 1, outside the range)


# ------------------------------------------------------------------------------------------------ export


def test_blender_made_armature_exports_its_action_range(tmp_path: Path) -> None:
    body = cube("Body")
    bpy.ops.object.armature_add(location=(0, 0, 0))
    armature = bpy.context.active_object
    body.parent = armature
    body.modifiers.new("Armature", "ARMATURE").object = armature
    group = body.vertex_groups.new(name="Bone")
    group.add([0, 1, 2, 3], 1.0, "REPLACE")
    bone = armature.pose.bones["Bone"]
    bone.location = (0, 0, 0)
    bone.keyframe_insert("location", frame=10)
    bone.location = (0, 2, 0)
    bone.keyframe_insert("location", frame=20)
    out = tmp_path / "rig.smd"
    assert export_smd(out, export_mode="ALL") == {"FINISHED"}
    reference = smd.load_smd(out)
    assert [n.name for n in reference.nodes] == ["Bone", "blender_implicit"]
    action = armature.animation_data.action
    animation = smd.load_smd(tmp_path / f"rig_{action.name}.smd")
    assert [f.time for f in animation.skeleton] == list(range(10, 21))
    np.testing.assert_allclose(animation.skeleton[-1].positions[0], [0, 0, 2], atol=1e-5)  # bone Y is world Z


def test_faces_without_material_warn_and_static_meshes_get_a_root(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    cube("Box")
    out = tmp_path / "box.smd"
    assert export_smd(out) == {"FINISHED"}
    assert "without a material" in capsys.readouterr().out
    doc = smd.load_smd(out)
    assert [n.name for n in doc.nodes] == ["root"] and doc.triangles.material_names == ["no_material"]
    assert len(doc.triangles) == 12


def test_shape_keys_export_as_vta(tmp_path: Path) -> None:
    obj = cube("Box")
    obj.shape_key_add(name="Basis")
    key = obj.shape_key_add(name="grow")
    key.data[0].co = (3, 3, 3)
    out = tmp_path / "box.smd"
    assert export_smd(out, export_mode="ALL") == {"FINISHED"}
    vta = smd.load_vta(tmp_path / "box.vta")
    assert vta.shape_names() == {0: "0", 1: "grow"}
    assert len(vta.vertex_animation[1].vertex_ids) > 0
    assert len(smd.load_smd(out).triangles) == 12


def test_animated_shape_key_values_are_said_to_stay_behind(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    obj = cube("Box")
    obj.shape_key_add(name="Basis")
    key = obj.shape_key_add(name="grow")
    key.data[0].co = (3, 3, 3)
    assert export_smd(tmp_path / "still.smd", export_mode="ALL") == {"FINISHED"}
    assert "shape key values are animated" not in capsys.readouterr().out
    key.value = 1.0
    key.keyframe_insert("value", frame=5)
    assert export_smd(tmp_path / "box.smd", export_mode="ALL") == {"FINISHED"}
    assert "Box: shape key values are animated" in capsys.readouterr().out


def test_a_goldsrc_export_says_its_vta_is_for_source(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    obj = cube("Box")
    obj.shape_key_add(name="Basis")
    obj.shape_key_add(name="grow").data[0].co = (3, 3, 3)
    assert export_smd(tmp_path / "box.smd", export_mode="ALL", flavour="GOLDSRC") == {"FINISHED"}
    assert "GoldSrc has no vertex animation" in capsys.readouterr().out


def test_collection_exporter_exports_only_its_collection(tmp_path: Path) -> None:
    inside = cube("Inside")
    cube("Outside", location=(5, 0, 0))
    collection = active_collection_holding("Export", inside)
    assert bpy.ops.collection.exporter_add(name="IOGF_FH_smd") == {"FINISHED"}
    out = tmp_path / "collection.smd"
    collection.exporters[0].export_properties.filepath = str(out)
    assert bpy.ops.collection.exporter_export(index=0) == {"FINISHED"}
    assert len(smd.load_smd(out).triangles) == 12


# ------------------------------------------------------------------------------------------------ safety


def test_failed_import_leaves_blender_data_exactly_as_before(tmp_path: Path) -> None:
    good = write(tmp_path, "good.smd", reference_text())
    bad = write(tmp_path, "bad.smd", reference_text().replace("0 0 1 0 0 0 1 0 1 1 2 1.0", "0 0 x", 1))
    cube("Existing")
    before = data_state()
    with pytest.raises(RuntimeError, match=r"bad\.smd, line 17, column 5"):
        import_smd(good, bad)
    assert data_state() == before


@pytest.mark.parametrize("text", ["", "\n\n   \n", "// exported by nothing\n"])
def test_an_empty_file_is_refused_and_changes_nothing(tmp_path: Path, text: str) -> None:
    empty = write(tmp_path, "empty.smd", text)
    cube("Existing")
    before = data_state()
    with pytest.raises(RuntimeError, match=r"empty\.smd, line 1: empty file: an SMD or VTA file starts with a "):
        import_smd(empty)
    assert data_state() == before


def test_failure_while_building_rolls_back(tmp_path: Path) -> None:
    reference = write(tmp_path, "model.smd", reference_text())
    text = CHAIN + "skeleton\ntime 0\nend\nvertexanimation\ntime 0\n0 9 9 9 0 0 1\nend\n"
    orphan = write(tmp_path, "orphan.vta", text)
    before = data_state()
    with pytest.raises(RuntimeError, match="no VTA vertex matches"):
        import_smd(reference, orphan)
    assert data_state() == before


def test_failed_export_keeps_the_existing_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = write(tmp_path, "model.smd", reference_text().replace('"hand"', '"' + "h" * 40 + '"'))
    import_smd(path)
    target = tmp_path / "out.smd"
    target.write_bytes(b"precious")
    with pytest.raises(RuntimeError, match="GoldSrc bone names"):
        export_smd(target, flavour="GOLDSRC")
    assert target.read_bytes() == b"precious"
    assert sorted(os.listdir(tmp_path)) == ["model.smd", "out.smd"]


def test_failed_import_onto_existing_objects_takes_its_changes_back(tmp_path: Path) -> None:
    reference = write(tmp_path, "model.smd", reference_text())
    import_smd(reference)
    mesh_object = bpy.data.objects["model"]
    armature = bpy.data.objects["model_skeleton"]
    modes = [b.rotation_mode for b in armature.pose.bones]
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 250
    vta = write(tmp_path, "model.vta", CHAIN + "skeleton\ntime 0\nend\nvertexanimation\ntime 0\n"
                "0 0 0 0 0 0 1\n1 0 1 0 0 0 1\ntime 1\n0 0 0 1 0 0 1\nend\n")  # fmt: skip
    animation = write(tmp_path, "walk.smd", ANIMATION_TIME_5)
    broken_text = CHAIN + "skeleton\ntime 0\nend\nvertexanimation\ntime 0\n0 9 9 9 0 0 1\nend\n"
    broken = write(tmp_path, "broken.vta", broken_text)
    for obj in bpy.context.scene.objects:
        obj.select_set(obj in (mesh_object, armature))
    bpy.context.view_layer.objects.active = mesh_object
    before = data_state()
    with pytest.raises(RuntimeError, match="no VTA vertex matches"):
        import_smd(vta, animation, broken, rotation_mode="QUATERNION")
    assert data_state() == before
    assert mesh_object.data.shape_keys is None
    assert armature.animation_data is None or armature.animation_data.action is None
    assert [b.rotation_mode for b in armature.pose.bones] == modes
    assert (scene.frame_start, scene.frame_end) == (1, 250)


def test_duplicate_links_to_one_bone_add_up(tmp_path: Path) -> None:
    path = write(tmp_path, "dup.smd", reference_text(links="3 1 0.25 1 0.25 0 0.5"))
    import_smd(path)
    obj = bpy.data.objects["dup"]
    root_bone = smd.read_smd(path.read_bytes()).nodes[0].name
    first = obj.data.loops[0].vertex_index
    weights = {obj.vertex_groups[g.group].name: g.weight for g in obj.data.vertices[first].groups}
    arm_bone = smd.read_smd(path.read_bytes()).nodes[1].name
    assert weights == pytest.approx({arm_bone: 0.5, root_bone: 0.5})


def test_mirrored_and_faceless_objects_export_correctly(tmp_path: Path) -> None:
    obj = cube("Mirror")
    obj.scale = (-1, 1, 1)
    guide = bpy.data.meshes.new("Guide")
    guide.from_pydata([(0, 0, 0), (1, 0, 0)], [(0, 1)], [])
    bpy.context.collection.objects.link(bpy.data.objects.new("Guide", guide))
    out = tmp_path / "mirror.smd"
    assert export_smd(out) == {"FINISHED"}
    triangles = smd.load_smd(out).triangles
    assert triangles is not None and len(triangles.positions) == 12
    corners = triangles.positions.astype(np.float64)
    outward = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    assert ((outward * corners.mean(axis=1)).sum(axis=1) > 0).all()


def test_material_names_longer_than_blender_holds_round_trip(tmp_path: Path) -> None:
    long_name = "materials/models/props/" + "x" * 56  # 79 bytes: more than Blender 4.2's 63
    path = write(tmp_path, "long.smd", reference_text(material=long_name))
    import_smd(path)
    out = tmp_path / "again.smd"
    export_smd(out)
    assert long_name in smd.load_smd(out).triangles.material_names
    bpy.ops.wm.read_homefile(use_empty=True)
    import_smd(path, out)
    assert len([m for m in bpy.data.materials if m.name.startswith("materials/")]) == 1


def test_a_material_blender_renamed_is_found_by_the_file_name_it_keeps(tmp_path: Path) -> None:
    """existing_material: a material holding the file's name (as one Blender had shortened does) is the file's
    material, on every release; other custom properties do not count."""
    from bl_ext.dev.io_game_formats.common import mesh_io  # type: ignore[import-not-found]

    other = bpy.data.materials.new("other")
    other["note"] = "skin"
    shown = bpy.data.materials.new("shown as")
    shown[mesh_io.ORIGINAL_NAME] = "skin"
    import_smd(write(tmp_path, "kept.smd", reference_text(material="skin")))
    assert bpy.data.objects["kept"].material_slots[0].material == shown
    assert "skin" not in bpy.data.materials


def test_export_numbers_corner_lines_by_vertex_normal_and_uv() -> None:
    from bl_ext.dev.io_game_formats.exporters.smd import corner_lines  # type: ignore[import-not-found]

    rng = np.random.default_rng(5)
    corner_vertices = rng.integers(0, 40, 600).astype(np.intc)
    normals = np.repeat(np.eye(3, dtype=np.float32), 200, axis=0)[rng.permutation(600)]
    flat = rng.normal(size=(600, 3)).astype(np.float32)  # a normal per corner, as flat shading gives
    assert corner_lines(corner_vertices, flat, np.zeros((600, 2), np.float32)) is None  # not worth numbering
    normals[corner_vertices % 5 != 0] = (0, 0, 1)  # smooth vertices: every corner the same normal
    uvs = np.zeros((600, 2), np.float32)
    uvs[corner_vertices % 7 == 0] = rng.integers(0, 2, (int(np.sum(corner_vertices % 7 == 0)), 2))  # seams
    uvs[5] = (-0.0, 0.0)  # compared by bits: -0.0 and 0.0 are told apart (they only cost a second line)
    seen: dict[tuple[object, ...], int] = {}
    expected = [seen.setdefault((int(v), n.tobytes(), uv.tobytes()), len(seen))
                for v, n, uv in zip(corner_vertices, normals, uvs, strict=True)]  # fmt: skip
    lines = corner_lines(corner_vertices, normals, uvs)
    assert lines is not None and lines.tolist() == expected


@pytest.mark.parametrize("shared", [True, False])
def test_export_holds_the_lines_per_line_only_where_they_repeat(
    shared: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A smooth grid's corners repeat their vertices' lines: its document holds the lines' values once each (the
    writer writes each line once). Triangles of their own vertices are lines of their own, which the writer writes
    corner by corner: nothing held (no per-line copy of every corner). The text is the same either way."""
    from bl_ext.dev.io_game_formats.formats.smd.document import Triangles  # type: ignore[import-not-found]

    held: list[int] = []
    original = Triangles.hold_per_line
    monkeypatch.setattr(Triangles, "hold_per_line",
                        lambda self, columns: held.append(len(columns)) or original(self, columns))  # fmt: skip
    bpy.ops.wm.read_homefile(use_empty=True)
    side = 12
    grid = [(x, y, 0.1 * ((x * y) % 3)) for y in range(side) for x in range(side)]
    quads = [(y * side + x, y * side + x + 1, (y + 1) * side + x + 1) for y in range(side - 1) for x in range(side - 1)]
    points = grid if shared else [grid[i] for triangle in quads for i in triangle]
    faces = quads if shared else [tuple(range(3 * t, 3 * t + 3)) for t in range(len(quads))]
    mesh = bpy.data.meshes.new("m")
    mesh.from_pydata(points, [], faces)
    mesh.polygons.foreach_set("use_smooth", [shared] * len(faces))  # (flat triangles of their own otherwise)
    obj = bpy.data.objects.new("m", mesh)
    bpy.context.scene.collection.objects.link(obj)
    path = tmp_path / "m.smd"
    assert export_smd(path) == {"FINISHED"}
    assert held == ([3] if shared else [])
    text = path.read_bytes()
    held.clear()
    monkeypatch.setattr(Triangles, "hold_per_line", lambda self, columns: None)  # (nothing held: per corner)
    assert export_smd(path) == {"FINISHED"} and path.read_bytes() == text


@pytest.mark.parametrize("block", [7, 1 << 16])
def test_corner_lines_a_block_at_a_time_as_numbered_one_by_one(block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Corners compared with their vertex's first a block at a time, blocks splitting a vertex's corners; smooth
    meshes (every corner its vertex's line: numbered without the per-corner ranks), seams, unused vertices and
    vertices first used out of order, against numbering each (vertex, normal, UV) in turn."""
    from bl_ext.dev.io_game_formats.exporters import smd as smd_export  # type: ignore[import-not-found]

    monkeypatch.setattr(smd_export, "_CORNERS_AT_A_TIME", block)
    rng = np.random.default_rng(9)
    for vertices, corners, seams in ((50, 300, 0.0), (50, 300, 0.05), (1000, 300, 0.0), (8, 3000, 0.3), (1, 3, 0.0),
                                     (10, 0, 0.0)):  # fmt: skip
        corner_vertices = rng.permutation(vertices)[rng.integers(0, vertices, corners)].astype(np.intc)
        normals = rng.normal(size=(vertices, 3)).astype(np.float32)[corner_vertices]
        uvs = rng.random((vertices, 2)).astype(np.float32)[corner_vertices]
        seam = rng.random(corners) < seams
        uvs[seam, 1] = rng.integers(0, 3, int(seam.sum()))
        seen: dict[tuple[object, ...], int] = {}
        expected = [seen.setdefault((int(v), n.tobytes(), uv.tobytes()), len(seen))
                    for v, n, uv in zip(corner_vertices, normals, uvs, strict=True)]  # fmt: skip
        lines = smd_export.corner_lines(corner_vertices, normals, uvs)
        assert lines is not None and lines.dtype == np.int64 and lines.tolist() == expected


def test_constraints_are_baked_frame_by_frame_and_the_scene_is_left_as_it_was(tmp_path: Path) -> None:
    armature, _limit = limited_root_rig()
    bpy.context.scene.frame_set(3)
    armature.animation_data.use_nla = True
    baked, keys_only = tmp_path / "baked.smd", tmp_path / "keys.smd"
    assert export_smd(baked, export_mode="ANIMATION") == {"FINISHED"}
    assert export_smd(keys_only, export_mode="ANIMATION", bake_pose=False) == {"FINISHED"}
    assert bpy.context.scene.frame_current == 3 and armature.animation_data.use_nla
    assert armature.animation_data.action is not None
    assert [f.time for f in smd.load_smd(baked).skeleton] == [1, 2, 3, 4, 5]
    # the limit holds only when baked
    assert (turned_by(baked), turned_by(keys_only)) == pytest.approx((0.3, 0.8), abs=1e-5)


def limited_root_rig() -> tuple[bpy.types.Object, bpy.types.Constraint]:
    """Root keyed to turn 0.8 between frames 1 and 5; a Limit Rotation constraint holds it to 0.3."""
    armature = chain_rig("Root", "Arm")
    turn_keys(armature, "Root", {1: 0.0, 5: 0.8})
    limit = armature.pose.bones["Root"].constraints.new("LIMIT_ROTATION")
    limit.use_limit_x, limit.min_x, limit.max_x, limit.owner_space = True, -0.3, 0.3, "LOCAL"
    return armature, limit


def turned_by(path: Path) -> float:
    """How far Arm turned between the animation's first and last frames (radians)."""
    doc = smd.load_smd(path)
    first, last = (world_matrices(doc, frame)["Arm"] for frame in (doc.skeleton[0], doc.skeleton[-1]))
    relative = first[:3, :3].T @ last[:3, :3]
    return float(np.arccos(np.clip((np.trace(relative) - 1) / 2, -1, 1)))


def test_a_constraint_keyed_off_on_the_current_frame_is_still_baked(tmp_path: Path) -> None:
    _armature, limit = limited_root_rig()
    limit.influence = 0.0
    limit.keyframe_insert("influence", frame=1)
    limit.influence = 1.0
    limit.keyframe_insert("influence", frame=3)
    bpy.context.scene.frame_set(1)
    assert export_smd(tmp_path / "a.smd", export_mode="ANIMATION") == {"FINISHED"}
    assert turned_by(tmp_path / "a.smd") == pytest.approx(0.3, abs=1e-5)


@pytest.mark.parametrize("how", ["hidden", "tweak mode"])
def test_a_rig_that_cannot_be_played_writes_its_keys_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    armature, _limit = limited_root_rig()
    scope: dict[str, object] = {}
    if how == "hidden":  # (exported through a collection: hidden objects are not among the visible ones)
        armature.hide_viewport = True
        rig = bpy.data.collections.new("Rig")
        bpy.context.scene.collection.children.link(rig)
        rig.objects.link(armature)
        scope["collection"] = "Rig"
    else:
        animation = armature.animation_data
        track = animation.nla_tracks.new()
        track.strips.new("Strip", 1, animation.action).select = True
        animation.action = None
        with bpy.context.temp_override(active_object=armature):
            animation.use_tweak_mode = True
        assert animation.use_tweak_mode
    assert export_smd(tmp_path / "a.smd", export_mode="ANIMATION", **scope) == {"FINISHED"}
    assert "not baked" in capsys.readouterr().out
    assert turned_by(tmp_path / "a.smd") == pytest.approx(0.8, abs=1e-5)


def test_a_bone_scaled_to_nothing_does_not_stop_baking(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    armature, _limit = limited_root_rig()
    arm = armature.pose.bones["Arm"]
    arm.scale = (0, 0, 0)
    arm.keyframe_insert("scale", frame=3)
    assert export_smd(tmp_path / "a.smd", export_mode="ANIMATION") == {"FINISHED"}
    assert "scale cannot be stored" in capsys.readouterr().out


def test_frame_by_frame_and_key_sampling_agree_without_constraints() -> None:
    from bl_ext.dev.io_game_formats.common import animation  # type: ignore[import-not-found]

    armature = chain_rig("Root", "Arm", "Hand")
    turn_keys(armature, "Arm", {0: 0.1, 4: -0.7})
    armature.pose.bones["Hand"].rotation_mode = "QUATERNION"
    armature.pose.bones["Hand"].rotation_quaternion = (0.9, 0.1, 0.3, 0.0)
    armature.pose.bones["Hand"].keyframe_insert("rotation_quaternion", frame=2)
    armature.pose.bones["Root"].location = (0.5, 0, 0)
    armature.pose.bones["Root"].keyframe_insert("location", frame=4)
    source = animation.active_action(armature)
    names = [bone.name for bone in armature.data.bones]
    frames = list(range(5))
    evaluated = animation.sample_evaluated_pose(bpy.context, armature, source, names, frames)
    samples = animation.sample_bone_action(source, names, [armature.pose.bones[n].rotation_mode for n in names])
    rest = np.array([np.array(bone.matrix_local) for bone in armature.data.bones])
    keyed = animation.pose_matrices([-1, 0, 1], rest, samples.basis)
    np.testing.assert_allclose(evaluated, keyed, atol=1e-5)
    assert animation.pose_needs_evaluation(armature) is None


def test_deform_bones_only_leaves_out_control_bones_in_reference_and_animation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    armature = chain_rig("Root", "Control", "Tip", deform=(True, False, True))
    body = cube("Body", location=(0, 0, 2.5))
    body.parent = armature
    body.modifiers.new("Armature", "ARMATURE").object = armature
    body.vertex_groups.new(name="Tip").add(list(range(8)), 1.0, "REPLACE")
    body.vertex_groups.new(name="Control").add([0], 0.5, "REPLACE")
    turn_keys(armature, "Control", {0: 0.0, 2: 0.5})
    everything, deforming = tmp_path / "all.smd", tmp_path / "deform.smd"
    assert export_smd(everything, export_mode="ALL") == {"FINISHED"}
    assert export_smd(deforming, export_mode="ALL", deform_only=True) == {"FINISHED"}
    assert "do not deform" in capsys.readouterr().out
    action = armature.animation_data.action.name
    full, reduced = smd.load_smd(everything), smd.load_smd(deforming)
    assert [(n.name, n.parent) for n in reduced.nodes] == [("Root", -1), ("Tip", 0)]
    assert [n.name for n in full.nodes] == ["Root", "Control", "Tip"]
    assert set(reduced.triangles.link_bones.tolist()) == {1}  # only Tip: Control's group left out
    prop = cube("Prop")
    prop.parent, prop.parent_type, prop.parent_bone = armature, "BONE", "Control"
    assert export_smd(tmp_path / "prop.smd", deform_only=True) == {"FINISHED"}
    assert "'Control' does not deform; bound to 'Root'" in capsys.readouterr().out
    for full_doc, reduced_doc in ((full, reduced), *[(smd.load_smd(tmp_path / f"{stem}_{action}.smd"),
                                  smd.load_smd(tmp_path / f"deform_{action}.smd")) for stem in ["all"]]):  # fmt: skip
        for full_frame, reduced_frame in zip(full_doc.skeleton, reduced_doc.skeleton, strict=True):
            full_world = world_matrices(full_doc, full_frame)
            reduced_world = world_matrices(reduced_doc, reduced_frame)
            np.testing.assert_allclose(reduced_world["Tip"], full_world["Tip"], atol=1e-5)  # Tip where it was


def world_matrices(doc: smd.SmdDocument, frame: smd.SkeletonFrame) -> dict[str, np.ndarray]:
    local = np.zeros((len(doc.nodes), 4, 4))
    local[:, :3, :3] = euler_matrix(frame.rotations)
    local[:, :3, 3] = frame.positions
    local[:, 3, 3] = 1
    world: dict[int, np.ndarray] = {}
    for row, node in enumerate(doc.nodes):
        world[node.id] = local[row] if node.parent < 0 else world[node.parent] @ local[row]
    return {node.name: world[node.id] for node in doc.nodes}


def test_unweighted_vertices_go_to_the_motionless_bone_or_to_the_root(tmp_path: Path) -> None:
    armature = chain_rig("Root", "Arm")
    body = cube("Body")
    body.parent = armature
    body.modifiers.new("Armature", "ARMATURE").object = armature
    body.vertex_groups.new(name="Arm").add([0, 1], 1.0, "REPLACE")
    with_bone, without = tmp_path / "with.smd", tmp_path / "without.smd"
    assert export_smd(with_bone) == {"FINISHED"}
    assert export_smd(without, motionless_bone=False) == {"FINISHED"}
    kept, rooted = smd.load_smd(with_bone), smd.load_smd(without)
    assert [n.name for n in kept.nodes] == ["Root", "Arm", "blender_implicit"]
    assert [n.name for n in rooted.nodes] == ["Root", "Arm"]
    unweighted = rooted.triangles.link_counts.reshape(-1) == 0
    assert unweighted.any()
    assert set(kept.triangles.parent_bones.reshape(-1)[unweighted].tolist()) == {2}
    assert set(rooted.triangles.parent_bones.reshape(-1)[unweighted].tolist()) == {0}


ROOF = CHAIN + REST + """triangles
roof
0 0 0 0 0 0 1 0 0
0 1 0 0 0 0 1 1 0
0 0 1 0 0 0 1 0 1
roof
0 1 0 0 0 -1 0 1 0
0 0 0 0 0 -1 0 0 0
0 0 0 -1 0 -1 0 0 1
end
"""


def test_flat_normals_become_flat_faces_and_go_back_out_exactly(tmp_path: Path) -> None:
    # Every corner's normal is its face's: flat shading shows exactly that, without custom normals.
    assert import_smd(write(tmp_path, "roof.smd", ROOF)) == {"FINISHED"}
    mesh = bpy.data.objects["roof"].data
    assert len(mesh.vertices) == 4  # the shared edge is shared
    assert not mesh.has_custom_normals and not any(face.use_smooth for face in mesh.polygons)
    normals = np.empty(len(mesh.loops) * 3, np.float32)
    mesh.corner_normals.foreach_get("vector", normals)
    face_of_corner = np.repeat(np.arange(len(mesh.polygons)), 3)
    expected = np.array([[0, 0, 1], [0, -1, 0]], np.float32)[face_of_corner]
    np.testing.assert_allclose(normals.reshape(-1, 3), expected, atol=1e-6)
    out = tmp_path / "again.smd"
    assert export_smd(out) == {"FINISHED"}
    again = smd.load_smd(out).triangles
    assert again is not None
    np.testing.assert_array_equal(np.unique(again.normals.reshape(-1, 3), axis=0), [[0, -1, 0], [0, 0, 1]])


def test_names_studiomdl_would_trip_over_are_warned_about(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    reference = write(tmp_path, "model.smd", reference_text(material="métal"))
    assert import_smd(reference) == {"FINISHED"}
    capsys.readouterr()
    assert export_smd(tmp_path / "source.smd") == {"FINISHED"}
    printed = capsys.readouterr().out
    assert "1 name(s) outside ASCII" in printed and "'métal'" in printed and ".bmp" not in printed
    assert export_smd(tmp_path / "goldsrc.smd", flavour="GOLDSRC") == {"FINISHED"}
    printed = capsys.readouterr().out
    assert "reads each material as a .bmp texture file; 2 material(s) are not: 'métal', 'metal dark'" in printed


def test_bones_whose_names_blender_shortens_keep_their_animation_and_file_names(
    tmp_path: Path, extension: ModuleType
) -> None:
    """Two bones of 80 bytes sharing their first 70: Blender cuts both to 63 bytes and must number the second;
    the animation still finds both, and export writes the file's names."""
    long_names = ["b" * 70 + "_upper_arm", "b" * 70 + "_lower_arm"]
    nodes = f'version 1\nnodes\n0 "root" -1\n1 "{long_names[0]}" 0\n2 "{long_names[1]}" 1\nend\n'
    reference = write(tmp_path, "model.smd", nodes + REST + "triangles\nskin\n"
                      "0 0 0 0 0 0 1 0 0 1 2 1.0\n0 1 0 0 0 0 1 1 0 1 2 1.0\n0 0 1 0 0 0 1 0 1 1 2 1.0\nend\n")
    animation = write(tmp_path, "wave.smd", nodes + "skeleton\ntime 0\n0 0 0 0 0 0 0\n1 0 0 1 0.5 0 0\n"
                      "2 0 1 0 0 0 0.3\ntime 1\n0 0 0 0 0 0 0\n1 0 0 1 0.9 0 0\n2 0 1 0 0 0 0.8\nend\n")
    assert import_smd(reference, animation) == {"FINISHED"}
    armature = bpy.data.objects["model_skeleton"]
    assert len({bone.name for bone in armature.data.bones}) == 3
    compat, action = extension.common.compat, bpy.data.actions["wave"]
    slots = compat.object_slots(action)
    keyed = {curve.data_path.split('"')[1] for curve in compat.action_fcurves(action, slots[0] if slots else None)}
    assert keyed == {bone.name for bone in armature.data.bones}  # all three bones, the renamed two included
    out = tmp_path / "again.smd"
    assert export_smd(out) == {"FINISHED"}
    assert [node.name for node in smd.load_smd(out).nodes][:3] == ["root", *long_names]



def test_with_only_the_armature_selected_its_meshes_are_the_reference(tmp_path: Path) -> None:
    """As Blender Source Tools users export: the rig selected, its skinned (and bone-parented) meshes come along."""
    armature = chain_rig("root", "arm")
    body = cube("Body")
    body.modifiers.new("Armature", "ARMATURE").object = armature
    cube("Unrelated", location=(5, 0, 0))
    select_only(armature)
    out = tmp_path / "rig.smd"
    assert export_smd(out, export_selected_objects=True) == {"FINISHED"}
    assert len(smd.load_smd(out).triangles) == 12  # the body's, not the unrelated cube's


def test_a_collision_model_from_the_body_smd_gets_its_own_wireframe_object(tmp_path: Path) -> None:
    """A simple prop names one SMD for $body and $collisionmodel: the physics hull is an object of its own."""
    write(tmp_path, "crate.smd", reference_text())
    qc = write(tmp_path, "crate.qc", '$body "body" "crate.smd"\n$collisionmodel "crate.smd" { $concave }\n')
    assert import_smd(qc) == {"FINISHED"}
    body, hull = bpy.data.objects["crate"], bpy.data.objects["crate_collision"]
    assert body.display_type != "WIRE" and not body.hide_render
    assert hull.display_type == "WIRE" and hull.hide_render
    assert len(hull.data.polygons) == len(body.data.polygons) == 2
    assert [o.name for o in bpy.data.objects if o.type == "ARMATURE"] == ["crate_skeleton"]  # one skeleton


def test_a_collision_model_is_left_out_of_the_exported_reference_unless_exported_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a QC import selects (the model and its hull) exports back as the model: merged, the hull would become
    part of the reference. Alone, the hull is its own physics SMD."""
    write(tmp_path, "crate.smd", reference_text())
    qc = write(tmp_path, "crate.qc", '$body "body" "crate.smd"\n$collisionmodel "crate.smd" { $concave }\n')
    assert import_smd(qc) == {"FINISHED"}
    out = tmp_path / "out.smd"
    assert export_smd(out, export_selected_objects=True) == {"FINISHED"}
    assert len(smd.load_smd(out).triangles) == 2  # the body's 2 triangles, not the hull's as well
    said = capsys.readouterr().out  # (a note: every Source prop has a collision model)
    assert "note: crate_collision: a QC's collision model, left out of the reference (the All mode writes it" in said
    assert "warning:" not in said
    select_only(bpy.data.objects["crate_collision"])
    hull = tmp_path / "hull.smd"
    assert export_smd(hull, export_selected_objects=True) == {"FINISHED"}
    assert len(smd.load_smd(hull).triangles) == 2


def test_the_all_mode_writes_a_collision_model_as_its_physics_smd_beside_the_reference(tmp_path: Path) -> None:
    from bl_ext.dev.io_game_formats.common.operators import LAST_SUMMARY  # type: ignore[import-not-found]

    write(tmp_path, "crate.smd", reference_text())
    write(tmp_path, "crate_phys.smd", reference_text().replace("0 1 1 0 0 0 1 1 1", "0 2 2 0 0 0 1 1 1"))
    qc = write(tmp_path, "crate.qc", '$body "body" "crate.smd"\n$collisionmodel "crate_phys.smd" { $concave }\n')
    assert import_smd(qc) == {"FINISHED"}
    out = tmp_path / "out" / "crate.smd"
    out.parent.mkdir()
    assert export_smd(out, export_mode="ALL") == {"FINISHED"}
    assert sorted(p.name for p in out.parent.iterdir()) == ["crate.smd", "crate_phys.smd"]
    assert LAST_SUMMARY[0].warnings == [] and LAST_SUMMARY[0].faces == 4
    again = smd.load_smd(str(out.parent / "crate_phys.smd"))
    assert_same_reference(smd.load_smd(str(tmp_path / "crate_phys.smd")), again)
    bpy.ops.wm.read_homefile(use_empty=True)  # the files imported together: parts of one skeleton share it
    assert import_smd(*sorted(out.parent.iterdir())) == {"FINISHED"}
    assert [obj.type for obj in bpy.data.objects].count("ARMATURE") == 1


def test_a_qc_sequence_names_the_action_of_its_one_smd(tmp_path: Path) -> None:
    write(tmp_path, "model.smd", reference_text())
    write(tmp_path, "Walk_Anim01.smd", ANIMATION_TIME_5)
    write(tmp_path, "blend_a.smd", ANIMATION_TIME_5)
    write(tmp_path, "blend_b.smd", ANIMATION_TIME_5)
    qc = write(tmp_path, "model.qc", '$body "body" "model.smd"\n$sequence "walk" "Walk_Anim01" fps 30\n'
                                     '$sequence "strafe" { "blend_a" "blend_b" blend move_x -1 1 }\n')  # fmt: skip
    assert import_smd(qc) == {"FINISHED"}
    assert {"walk", "blend_a", "blend_b"} <= set(bpy.data.actions.keys())  # a blend's SMDs keep their own names
    assert "Walk_Anim01" not in bpy.data.actions


def test_a_qc_sequence_gives_its_action_its_frame_rate_and_the_scene_plays_the_first(tmp_path: Path) -> None:
    """SMD has no frame rate; a QC's sequence has (`fps`, inline or in braces; studiomdl's default 30). The action
    keeps it, and its `loop`, so an IQE or IQM export writes them; a second sequence of one SMD is an action too."""
    write(tmp_path, "model.smd", reference_text())
    for name in ("idle", "walk", "run"):
        write(tmp_path, f"{name}.smd", ANIMATION_TIME_5)
    qc = write(tmp_path, "model.qc", '$body "body" "model.smd"\n$sequence "idle" "idle" fps 15 loop\n'
                                     '$sequence "walk" {\n "walk"\n fps 24\n}\n$sequence "run" "run"\n'
                                     '$sequence "sprint" "RUN.smd" fps 60 loop\n')  # fmt: skip
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 25, 1.0
    assert import_smd(qc) == {"FINISHED"}
    names = ("idle", "walk", "run", "sprint")  # (sprint: a second sequence of run.smd, an action of its own)
    assert {name: bpy.data.actions[name]["iqe_framerate"] for name in names} == {
        "idle": 15.0, "walk": 24.0, "run": 30.0, "sprint": 60.0}  # fmt: skip
    assert [name for name in names if bpy.data.actions[name].use_cyclic] == ["idle", "sprint"]  # `loop`
    assert scene.render.fps / scene.render.fps_base == pytest.approx(15.0)  # the first sequence plays
    out = tmp_path / "model.iqe"
    assert bpy.ops.export_scene.iqe(filepath=str(out)) == {"FINISHED"}
    exported = {a.name: (a.framerate, a.loop) for a in iqe.load_iqe(out).animations}
    assert exported == {"idle": (15.0, True), "run": (30.0, False), "walk": (24.0, False), "sprint": (60.0, True)}
    # a loop whose last frame is not its first keeps every frame (the wrap to the first is the engine's)
    counts = {a.name: len(a.frames) for a in iqe.load_iqe(out).animations}
    assert counts["idle"] == counts["sprint"] == counts["run"] == counts["walk"] == 6


def test_shortened_bone_names_key_only_their_own_bones_and_follow_a_rename(
    tmp_path: Path, extension: ModuleType
) -> None:
    """Two bones cut to one prefix: an animation of the second keys only the second (its cut name is the first
    bone's Blender name); a bone renamed after import is written under its new name."""
    long_names = ["A" * 70 + "1", "A" * 70 + "2"]
    nodes = f'version 1\nnodes\n0 "root" -1\n1 "{long_names[0]}" 0\n2 "{long_names[1]}" 0\nend\n'
    reference = write(tmp_path, "model.smd", nodes + REST + "triangles\nskin\n"
                      "0 0 0 0 0 0 1 0 0 1 1 1.0\n0 1 0 0 0 0 1 1 0 1 2 1.0\n0 0 1 0 0 0 1 0 1 1 1 1.0\nend\n")
    only_second = 'version 1\nnodes\n0 "root" -1\n1 "' + long_names[1] + '" 0\nend\n'
    animation = write(tmp_path, "wave.smd", only_second + "skeleton\ntime 0\n0 0 0 0 0 0 0\n1 0 1 0 0.5 0 0\n"
                      "time 1\n0 0 0 0 0 0 0\n1 0 1 0 0.9 0 0\nend\n")
    assert import_smd(reference, animation) == {"FINISHED"}
    armature = bpy.data.objects["model_skeleton"]
    first, second = (bone.name for bone in armature.data.bones if bone.name != "root")
    compat, action = extension.common.compat, bpy.data.actions["wave"]
    slots = compat.object_slots(action)
    keyed = {curve.data_path.split('"')[1] for curve in compat.action_fcurves(action, slots[0] if slots else None)}
    assert keyed == {"root", second}, (keyed, first)
    armature.data.bones[second].name = "hand"
    out = tmp_path / "again.smd"
    assert export_smd(out) == {"FINISHED"}
    assert [node.name for node in smd.load_smd(out).nodes][:3] == ["root", long_names[0], "hand"]


@pytest.mark.skipif(bpy.app.version < (4, 4), reason="actions name the object they were made for from 4.4 (slots)")
def test_a_second_import_of_a_rig_keeps_its_animations_to_itself_in_smd(tmp_path: Path) -> None:
    """One model and its animation imported twice: an All Actions export of the first writes its own animation
    only (found by a new-user trial, for IQE)."""
    reference = write(tmp_path, "model.smd", reference_text())
    walk = write(tmp_path, "walk.smd", ANIMATION_TIME_5)
    assert import_smd(reference, walk) == {"FINISHED"}
    first = next(obj for obj in bpy.data.objects if obj.type == "ARMATURE")
    assert import_smd(reference, walk) == {"FINISHED"}
    assert len(bpy.data.actions) == 2
    select_only(first)
    out = tmp_path / "out" / "model.smd"
    out.parent.mkdir()
    assert export_smd(out, export_mode="ANIMATION", action_scope="ALL", export_selected_objects=True) == {"FINISHED"}
    assert sorted(path.name for path in out.parent.iterdir()) == ["model_walk.smd"]


def test_a_loop_that_ends_on_its_first_pose_wraps_there(tmp_path: Path) -> None:
    """Source loops usually end on their first pose: that frame is the wrap, written once by an IQE export."""
    write(tmp_path, "model.smd", reference_text())
    poses = ["0 0 0 0 0 0 0\n1 0 0 1 0 0 0\n2 0 1 0 0 0 0\n", "0 0 0 0 0 0 0.5\n1 0 0 1 0 0 0\n2 0 1 0 0 0 0\n"]
    frames = "".join(f"time {time}\n{poses[pose]}" for time, pose in enumerate((0, 1, 0)))
    write(tmp_path, "spin.smd", CHAIN + "skeleton\n" + frames + "end\n")
    qc = write(tmp_path, "model.qc", '$body "body" "model.smd"\n$sequence "spin" "spin" loop\n')
    assert import_smd(qc) == {"FINISHED"}
    action = bpy.data.actions["spin"]
    assert action.use_cyclic and (action.frame_start, action.frame_end) == (0.0, 2.0)
    out = tmp_path / "model.iqe"
    assert bpy.ops.export_scene.iqe(filepath=str(out)) == {"FINISHED"}
    (spin,) = iqe.load_iqe(out).animations
    assert spin.loop and len(spin.frames) == 2


LOOP_POSES = ["0 0 0 0 0 0 0\n1 0 0 1 0 0 0\n2 0 1 0 0 0 0\n", "0 0 0 0 0 0 0.5\n1 0 0 1 0.2 0 0\n2 0 1 0 0 0 0\n",
              "0 0 -0.5 0 0 0 0.9\n1 0 0 1 0.4 0 0\n2 0 1 0 0 0.3 0\n"]  # fmt: skip


def looping_qc(folder: Path, order: tuple[int, ...]) -> Path:
    """A model and its looping sequence `spin` of these LOOP_POSES, one a frame."""
    folder.mkdir(exist_ok=True)
    write(folder, "model.smd", reference_text())
    write(folder, "spin.smd", CHAIN + "skeleton\n" + "".join(f"time {time}\n{LOOP_POSES[pose]}"
                                                           for time, pose in enumerate(order)) + "end\n")  # fmt: skip
    return write(folder, "model.qc", '$body "body" "model.smd"\n$sequence "spin" "spin" loop\n')


def exported_with_its_qc(folder: Path) -> Path:
    folder.mkdir()
    assert export_smd(folder / "model.smd", write_qc=True, export_mode="ALL", action_scope="ALL") == {"FINISHED"}
    (sequence,) = [line for line in (folder / "model.qc").read_text().splitlines() if line.startswith("$sequence")]
    assert '"model_spin.smd"' in sequence and "loop" in sequence.split()
    return folder / "model.qc"


@pytest.mark.parametrize("order", [(0, 1, 2, 1), (0, 1, 2, 0)], ids=["open", "closing"])
def test_a_looping_sequence_keeps_its_frames_through_export_and_import(tmp_path: Path, order: tuple[int, ...]) -> None:
    """A loop whose last pose is not its first is a cycle one frame longer in Blender (the wrap is Blender's): the
    export leaves that wrap out, so its frames come back the same, trip after trip (each grew by one); one that
    ends on its first pose keeps that frame, the wrap it already holds."""
    qc = looping_qc(tmp_path / "source", order)
    original = smd.load_smd(tmp_path / "source" / "spin.smd")
    for trip in range(3):
        bpy.ops.wm.read_homefile(use_empty=True)
        assert import_smd(qc) == {"FINISHED"}
        action = bpy.data.actions["spin"]
        assert action.use_cyclic and action.frame_range[1] == (4.0 if order[-1] != order[0] else 3.0)
        qc = exported_with_its_qc(tmp_path / f"trip{trip}")
        again = smd.load_smd(qc.parent / "model_spin.smd")
        assert [frame.time for frame in again.skeleton] == [0, 1, 2, 3]
        assert_same_animation(original, again)


@pytest.mark.parametrize("order", [(0, 1, 2, 1), (0, 1, 2, 0)], ids=["open", "closing"])
def test_a_looping_sequence_through_iqe_comes_back_as_its_cycle(tmp_path: Path, order: tuple[int, ...]) -> None:
    """SMD to IQE to SMD: the IQE holds the cycle's frames without the wrap and keys the wrap on import, which an
    SMD export writes as a Valve loop's last frame. A loop that ended on its first pose comes back as it was; one
    that did not comes back ending on its first pose, as studiomdl would make its last frame anyway."""
    assert import_smd(looping_qc(tmp_path / "source", order)) == {"FINISHED"}
    iqe_path = tmp_path / "model.iqe"
    assert bpy.ops.export_scene.iqe(filepath=str(iqe_path)) == {"FINISHED"}
    (spin,) = iqe.load_iqe(iqe_path).animations
    closing = order[-1] == order[0]
    assert spin.loop and len(spin.frames) == (3 if closing else 4)
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.iqe(filepath=str(iqe_path)) == {"FINISHED"}
    out = tmp_path / "out"
    out.mkdir()
    assert export_smd(out / "model.smd", export_mode="ANIMATION", action_scope="ALL") == {"FINISHED"}
    (written,) = out.glob("*.smd")
    again = smd.load_smd(written)
    again.skeleton = [replace(frame, time=frame.time - 1) for frame in again.skeleton]  # (IQE's actions start at 1)
    original = smd.load_smd(tmp_path / "source" / "spin.smd")
    wrap = replace(original.skeleton[0], time=len(original.skeleton))
    expected = original if closing else smd.SmdDocument(nodes=original.nodes, skeleton=[*original.skeleton, wrap])
    assert len(again.skeleton) == len(expected.skeleton)
    assert_same_animation(expected, again)


def test_a_reference_qc_of_a_bodygroup_model_with_an_action_writes_an_idle_sequence(tmp_path: Path) -> None:
    """studiomdl needs a sequence: the Reference mode writes no action, so the QC gets `idle` of the reference,
    here a $bodygroup's, as a model without a $body has (Valve's sky_camera QC)."""
    write(tmp_path, "model.smd", reference_text())
    write(tmp_path, "walk.smd", ANIMATION_TIME_5)
    qc = write(tmp_path, "model.qc", '$bodygroup "studio"\n{\n studio "model.smd"\n}\n$sequence "walk" "walk"\n')
    assert import_smd(qc) == {"FINISHED"}
    out = tmp_path / "out"
    out.mkdir()
    assert export_smd(out / "model.smd", write_qc=True, flavour="GOLDSRC") == {"FINISHED"}
    sequences = [line for line in (out / "model.qc").read_text().splitlines() if line.startswith("$sequence")]
    assert sequences == ['$sequence "idle" "model" fps 30']
    assert "$body " not in (out / "model.qc").read_text()  # (the reference is the group's)


def test_links_to_unknown_bones_are_dropped_and_counted_per_corner(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A vertex line written in several triangles is read once, but each corner using it counts in the warning,
    and every vertex keeps only its links to bones the file names."""
    head = 'version 1\nnodes\n0 "root" -1\n1 "a" 0\nend\nskeleton\ntime 0\n0 0 0 0 0 0 0\n1 0 0 1 0 0 0\nend\n'
    lines = ["0 0 0 0 0 0 1 0 0 2 1 0.500000 7 0.500000", "0 1 0 0 0 0 1 1 0 1 1 1.000000",
             "0 0 1 0 0 0 1 0 1 1 9 1.000000", "0 1 1 0 0 0 1 1 1 0"]  # fmt: skip  (the reader's quickest path)
    faces = [(0, 1, 2), (1, 2, 3), (0, 2, 3), (0, 1, 3)]
    body = "".join("mat\n" + "".join(lines[i] + "\n" for i in face) for face in faces)
    assert import_smd(write(tmp_path, "unknown.smd", head + "triangles\n" + body + "end\n")) == {"FINISHED"}
    assert "6 weight link(s) to unknown bones dropped" in capsys.readouterr().out  # (2 lines, 3 corners each)
    obj = next(obj for obj in bpy.data.objects if obj.type == "MESH")
    # (vertices in order of first use: the lines' order)
    assert vertex_weights(obj) == [[("a", 0.5)], [("a", 1.0)], [], [("root", 1.0)]]  # bones 7 and 9 are gone


def test_an_animation_smd_imported_exports_with_defaults_as_the_animation_it_is(tmp_path: Path) -> None:
    from bl_ext.dev.io_game_formats.common.operators import LAST_SUMMARY  # type: ignore[import-not-found]

    source = write(tmp_path, "walk.smd", ANIMATION_TIME_5)
    assert import_smd(source) == {"FINISHED"}
    out = tmp_path / "again.smd"
    assert bpy.ops.export_scene.valve_smd(filepath=str(out)) == {"FINISHED"}  # (defaults: Reference, Active)
    assert LAST_SUMMARY[0].actions == 1 and LAST_SUMMARY[0].warnings == []
    assert_same_animation(smd.load_smd(str(source)), smd.load_smd(str(out)))
    assert bpy.ops.export_scene.iqe(filepath=str(tmp_path / "walk.iqe")) == {"FINISHED"}
    assert LAST_SUMMARY[0].warnings == []  # (no mesh was left out: the scene has none)


def test_a_qcs_meshes_of_different_skeletons_share_one_armature_of_all_their_bones(tmp_path: Path) -> None:
    """studiomdl makes one skeleton of a model's meshes, bones merged by name: so does the import, and the
    model exports again as one SMD and one IQE."""
    write(tmp_path, "body.smd", reference_text())
    other = reference_text().replace('2 "hand" 1\n', '2 "hand" 1\n3 "gun" 2\n').replace(
        "2 0 1 0 0 0 0.3\n", "2 0 1 0 0 0 0.3\n3 0 0 2 0 0 0\n").replace("1 2 1.0\n", "1 3 1.0\n")  # fmt: skip
    write(tmp_path, "gun.smd", other)
    write(tmp_path, "walk.smd", ANIMATION_TIME_5)
    qc = write(tmp_path, "model.qc", '$body "body" "body"\n$body "gun" "gun"\n$sequence walk "walk"\n')
    assert import_smd(qc) == {"FINISHED"}
    armatures = [obj for obj in bpy.data.objects if obj.type == "ARMATURE"]
    assert len(armatures) == 1
    assert [bone.name for bone in armatures[0].data.bones] == ["root", "arm bone", "hand", "gun"]
    assert armatures[0].data.bones["gun"].parent.name == "hand"
    gun = bpy.data.objects["gun"]
    assert gun.find_armature() == armatures[0] and "gun" in gun.vertex_groups
    assert bpy.ops.export_scene.valve_smd(filepath=str(tmp_path / "out.smd")) == {"FINISHED"}  # (the selection)
    assert [node.name for node in smd.load_smd(str(tmp_path / "out.smd")).nodes] == ["root", "arm bone", "hand",
                                                                                       "gun"]  # fmt: skip
    assert bpy.ops.export_scene.iqe(filepath=str(tmp_path / "out.iqe")) == {"FINISHED"}


def test_a_time_span_too_long_to_expand_names_the_file_and_the_line(tmp_path: Path) -> None:
    source = write(tmp_path, "far.smd", ANIMATION_TIME_5.replace("time 10\n", "time 1000000004\n"))
    with pytest.raises(RuntimeError, match=r"far\.smd, line 16: skeleton time numbers span 1,000,000,000 frames"):
        import_smd(source)


def test_a_qc_of_animations_whose_bones_the_model_lacks_imports_and_exports_all_it_has(tmp_path: Path) -> None:
    """studiomdl drops a sequence's bones the model lacks, and compiles a sequence of none: so the import goes on
    (a note, no action for it); an animation-only scene exports in the All mode as its animations."""
    from bl_ext.dev.io_game_formats.common.operators import LAST_SUMMARY  # type: ignore[import-not-found]

    animation = CHAIN + REST.replace("end\n", "time 1\n0 0 0 1 0 0 0\nend\n")
    write(tmp_path, "model.smd", reference_text())
    write(tmp_path, "idle.smd", animation.replace('"root"', '"polymsh"').replace('"arm bone"', '"a"')
          .replace('"hand"', '"b"'))  # fmt: skip
    write(tmp_path, "walk.smd", animation)
    qc = write(tmp_path, "model.qc", '$body "body" "model"\n$sequence idle "idle"\n$sequence walk "walk"\n')
    assert import_smd(qc) == {"FINISHED"}
    assert LAST_SUMMARY[0].warnings == [] and sorted(bpy.data.actions.keys()) == ["walk"]
    assert any("none of the animation's 3 bones is in armature" in note for note in LAST_SUMMARY[0].notes)
    bpy.ops.wm.read_homefile(use_empty=True)
    anims = write(tmp_path, "anims.qc", '$sequence walk "walk"\n$sequence run "walk" fps 60\n')
    assert import_smd(anims) == {"FINISHED"}
    out = tmp_path / "out" / "anims.smd"
    out.parent.mkdir()
    assert export_smd(out, export_mode="ALL", action_scope="ALL") == {"FINISHED"}
    assert sorted(p.name for p in out.parent.iterdir()) == ["anims_run.smd", "anims_walk.smd"]


@pytest.mark.parametrize(("bone", "warned"), [(3, False), (129, True)])
def test_the_bone_limit_counts_the_bones_studiomdl_keeps(tmp_path: Path, bone: int, warned: bool) -> None:
    """Real sources hold more than 128 bones; studiomdl keeps those the meshes are weighted to and their parents."""
    from bl_ext.dev.io_game_formats.common.operators import LAST_SUMMARY  # type: ignore[import-not-found]

    nodes = "".join(f'{i} "b{i}" {i - 1}\n' for i in range(130))  # a chain: each bone the parent of the next
    rest = "".join(f"{i} 0 0 {1 if i else 0} 0 0 0\n" for i in range(130))
    corners = "".join(f"{bone} {x} {y} 0 0 0 1 0 0\n" for x, y in ((0, 0), (1, 0), (0, 1)))
    path = write(tmp_path, "long.smd", f"version 1\nnodes\n{nodes}end\nskeleton\ntime 0\n{rest}end\n"
                                       f"triangles\nskin\n{corners}end\n")  # fmt: skip
    assert import_smd(path) == {"FINISHED"}
    assert export_smd(tmp_path / "out.smd") == {"FINISHED"}
    said = [w for w in LAST_SUMMARY[0].warnings if "studiomdl keeps at most 128" in w]
    assert said == (["long_skeleton: the meshes are weighted to 130 bones (with their parents); studiomdl keeps at "
                     "most 128 per model"] if warned else [])  # fmt: skip


def test_a_skeleton_smd_imports_as_a_lone_armature_and_exports_again(tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    """Games ship shared skeletons as reference SMDs of bones and an empty triangles block."""
    source = tmp_path / "shared_skel.smd"
    source.write_text('version 1\nnodes\n0 "pelvis" -1\n1 "spine" 0\nend\nskeleton\ntime 0\n0 0 0 1 0 0 0\n'
                      "1 0 0 4 0 0 0.5\nend\ntriangles\nend\n")  # fmt: skip
    assert bpy.ops.import_scene.valve_smd(filepath=str(source)) == {"FINISHED"}
    summary = extension.common.operators.LAST_SUMMARY[0]
    assert summary.warnings == [] and any("a skeleton SMD" in note for note in summary.notes)
    assert [obj.type for obj in bpy.data.objects] == ["ARMATURE"]
    out = tmp_path / "again.smd"
    assert bpy.ops.export_scene.valve_smd(filepath=str(out)) == {"FINISHED"}
    assert extension.common.operators.LAST_SUMMARY[0].warnings == []
    written = extension.formats.smd.read_smd(out.read_bytes())
    assert [node.name for node in written.nodes] == ["pelvis", "spine"]
    assert written.triangles is not None and len(written.triangles) == 0
    np.testing.assert_allclose(written.skeleton[0].positions, [[0, 0, 1], [0, 0, 4]], atol=1e-6)
