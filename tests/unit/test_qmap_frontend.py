"""Front-end and octree rules of the QMAP compiler on small hand-made maps (spec §5.3, §6, §7)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from qmap_compiler import CompileOptions, CompileReport, QmapModel, compile_bytes, read_qmap

FLT_MIN_BITS = 0x00800000


def mesh(faces: list[str], vertices: list[tuple[float, float, float]], materials: tuple[str, ...] = ("M",),
         has_uv: bool = True, position: tuple[float, ...] = (0, 0, 0), rotation: tuple[float, ...] = (0, 0, 0),
         scale: tuple[float, ...] = (1, 1, 1), name: str = "Obj") -> str:
    """One mesh block in the exporter's layout; `faces` are face lines without indentation."""
    lines = [f'\tmesh "{name}" {{']
    lines += ["\t\t" + ",".join(f"{v:.9g}" for v in vec) for vec in (position, rotation, scale)]
    lines += ["\t\t30", f"\t\t{1 if has_uv else 0}", f"\t\tmaterials {len(materials)} {{"]
    lines += [f'\t\t\t"{m}"' for m in materials]
    lines += ["\t\t}", f"\t\tvertices {len(vertices)} {{"]
    lines += ["\t\t\t" + ",".join(f"{c:.9g}" for c in v) for v in vertices]
    lines += ["\t\t}", f"\t\tfaces {len(faces)} {{", *("\t\t\t" + f for f in faces), "\t\t}", "\t}"]
    return "\n".join(lines)


def tmp_file(*meshes: str) -> bytes:
    return ("QMAP TMP 10\nobjects {\n" + "\n".join(meshes) + "\n}\n").encode("latin-1")


def desc_file(body: str) -> bytes:
    return f"QMAP DESC 10\nmaterials {{\n{body}\n}}\n".encode("latin-1")


def build(tmp: bytes, desc: bytes | None = None, report: CompileReport | None = None,
          **options: object) -> QmapModel:
    return read_qmap(compile_bytes(tmp, desc, CompileOptions(**options), report=report))  # type: ignore[arg-type]


SQUARE = [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (1.0, 1.0, 0.0), (0.0, 1.0, 0.0)]
QUAD_UV = "4 0 0 0 0,0 1 1,0 2 1,1 3 0,1"


def positions(model: QmapModel) -> np.ndarray:
    return model.draw_vertices[:, 0:3]


def test_axis_swap_translation_and_reversed_winding() -> None:
    tri = mesh(["3 0 0 0 0,0 1 0,0 2 0,0"], [(0, 0, 0), (1, 0, 0), (0, 1, 0)], position=(10, 20, 30))
    model = build(tmp_file(tri))
    # Blender (x, y, z) -> D3D (x, z, y), corners reversed: c, b, a.
    assert positions(model).tolist() == [[10, 30, 21], [11, 30, 20], [10, 30, 20]]
    assert model.draw_indices.tolist() == [0, 1, 2]
    assert model.collision_vertices.tolist() == positions(model).tolist()


def test_object_rotation_and_scale_follow_blender_xyz_euler() -> None:
    tri = mesh(["3 0 0 0 0,0 1 0,0 2 0,0"], [(1, 0, 0), (0, 1, 0), (0, 0, 1)],
               rotation=(0, 0, math.pi / 2), scale=(2, 3, 4))
    got = positions(build(tmp_file(tri)))
    # Scale first, then +90° about Blender Z: (2,0,0) -> (0,2,0), (0,3,0) -> (-3,0,0), (0,0,4) stays.
    expected_blender = [(0, 0, 4), (-3, 0, 0), (0, 2, 0)]
    np.testing.assert_allclose(got, [(x, z, y) for x, y, z in expected_blender], atol=1e-6)


def test_quad_uses_blender_diagonal_1_3_and_flips_v() -> None:
    model = build(tmp_file(mesh([QUAD_UV], SQUARE)))
    assert model.draw_indices.tolist() == [0, 1, 2, 0, 2, 3]
    # Final corners are Blender corners 3, 2, 1, 0, so triangles (3,2,1) and (3,1,0): the 1-3 diagonal.
    assert positions(model).tolist() == [[0, 0, 1], [1, 0, 1], [1, 0, 0], [0, 0, 0]]
    assert model.draw_vertices[:, 6:8].tolist() == [[0, 0], [1, 0], [1, 1], [0, 1]]  # (u, 1 - v)


def test_front_facing_normal_and_negated_tangent_convention() -> None:
    model = build(tmp_file(mesh([QUAD_UV], SQUARE)))
    vertex = model.draw_vertices[0]
    np.testing.assert_array_equal(vertex[3:6], [0, 1, 0])  # a CCW floor seen from +Z faces +Y
    np.testing.assert_array_equal(vertex[8:11], [-1, 0, 0])  # T points against increasing U
    np.testing.assert_array_equal(vertex[11:14], [0, 0, 1])  # B against increasing V (V grows towards -Z)


@pytest.mark.parametrize(
    ("corners", "row_uv"),
    [
        # floor (normal +Y): U = X, V = Z
        ([(0, 0, 0), (1, 0, 0), (0, 1, 0)], lambda p: (p[0], p[2])),
        # ceiling (normal -Y): U = X, V = -Z
        ([(0, 0, 0), (0, 1, 0), (1, 0, 0)], lambda p: (p[0], -p[2])),
        # wall facing Blender +X (D3D +X): U = Z, V = Y
        ([(0, 0, 0), (0, 1, 0), (0, 0, 1)], lambda p: (p[2], p[1])),
        # wall facing Blender -Y (D3D -Z): U = X, V = Y
        ([(0, 0, 0), (1, 0, 0), (0, 0, 1)], lambda p: (p[0], p[1])),
        # normal halfway between D3D -X and -Z: the tie goes to the earlier row, -X (U = -Z, V = Y)
        ([(0, 0, 0), (1, -1, 0), (0, 0, 1)], lambda p: (-p[2], p[1])),
    ],
)
def test_texgen_picks_the_first_best_axis_row(corners: list[tuple[float, float, float]], row_uv: object) -> None:
    shifted = [(x + 2, y + 3, z + 5) for x, y, z in corners]
    model = build(tmp_file(mesh(["3 0 0 0 1 2"], shifted, has_uv=False)))
    for vertex in model.draw_vertices:
        assert tuple(vertex[6:8]) == pytest.approx(row_uv(vertex[0:3]), abs=1e-6)  # type: ignore[operator]


def test_desc_tex_gen_and_scale_apply_after_the_flip() -> None:
    tmp = tmp_file(mesh(["3 0 0 0 0.25,0.75 1 0.5,0.75 2 0.25,1", "3 1 0 0 0,0 1 1,0 2 0,1"],
                        [(0, 0, 0), (2, 0, 0), (0, 2, 0)], materials=("Scaled", "Gen")))
    desc = desc_file('"Scaled" { tex scale 2; }\n"Gen" { tex gen; tex scale 0.5; }')
    model = build(tmp, desc)
    assert model.materials == [b"Gen", b"Scaled"]
    gen, scaled = model.draw_vertices[:3], model.draw_vertices[3:]
    # imported: (u, 1 - v) * 2, corners reversed
    assert scaled[:, 6:8].tolist() == [[0.5, 0.0], [1.0, 0.5], [0.5, 0.5]]
    # generated on the floor: (X, Z) * 0.5, ignoring the mesh's own UVs
    np.testing.assert_array_equal(gen[:, 6:8], gen[:, [0, 2]] * 0.5)


def test_rename_merges_materials_and_keeps_input_order() -> None:
    first = mesh(["3 0 0 0 0,0 1 0,0 2 0,0", "3 1 0 0 0,0 1 0,0 2 0,0"], [(0, 0, 0), (1, 0, 0), (0, 1, 0)],
                 materials=("Stone", "Wood"), name="A")
    second = mesh(["3 0 0 0 0,0 1 0,0 2 0,0"], [(5, 0, 0), (6, 0, 0), (5, 1, 0)], materials=("Brick",), name="B")
    desc = desc_file('"Stone" { name "Wall"; }\n"Brick" { name "Wall"; }\n"Stone" { skip; }')
    model = build(tmp_file(first, second), desc)
    assert model.materials == [b"Wall", b"Wood"]  # duplicate "Stone" entry ignored: first wins
    wall = model.draw_fragments
    assert wall.material.tolist() == [0, 1]
    assert positions(model)[:6, 0].tolist() == [0, 1, 0, 5, 6, 5]  # mesh A's face, then mesh B's


def test_material_table_is_sorted_bytewise_with_empty_name_first() -> None:
    names = ("b", "B", "\xe9t\xe9", "a", "_x")
    faces = [f"3 {i} 0 0 0,0 1 0,0 2 0,0" for i in range(len(names) + 1)]  # the last index is out of range
    report = CompileReport()
    model = build(tmp_file(mesh(faces, [(0, 0, 0), (1, 0, 0), (0, 1, 0)], materials=names)), report=report)
    assert model.materials == [b"", b"B", b"_x", b"a", b"b", b"\xe9t\xe9"]
    assert any("beyond" in warning for warning in report.warnings)


def test_desc_for_empty_name_applies_to_empty_slot_only() -> None:
    tmp = tmp_file(mesh(["3 0 0 0 0,0 1 0,0 2 0,0", "3 7 0 0 0,0 1 0,0 2 0,0"], [(0, 0, 0), (1, 0, 0), (0, 1, 0)],
                        materials=("",)))
    model = build(tmp, desc_file('"" { name "Slot"; }'))
    assert model.materials == [b"", b"Slot"]  # the out-of-range face keeps "" and no desc


def test_skip_and_drop_remove_faces_from_geometry_and_bounds() -> None:
    far = [(100, 100, 100), (101, 100, 100), (100, 101, 100)]
    tmp = tmp_file(mesh(["3 0 0 0 0,0 1 0,0 2 0,0"], [(0, 0, 0), (1, 0, 0), (0, 1, 0)], name="Near"),
                   mesh(["3 0 0 0 0,0 1 0,0 2 0,0"], far, materials=("Far",), name="Far"),
                   mesh(["3 0 0 0 0,0 1 0,0 2 0,0"], far, materials=("Gone",), name="Gone"))
    model = build(tmp, desc_file('"Far" { skip; }\n"Gone" { drop; }'))
    assert model.materials == [b"M"]
    assert len(model.draw_vertices) == 3
    root_max = model.draw_nodes.boxes[0, 3:]
    assert root_max[[0, 2]].tolist() == [1, 1] and root_max[1:2].view(np.uint32)[0] == FLT_MIN_BITS


def test_root_max_starts_at_flt_min_unless_fixed() -> None:
    below = [(-3, -2, -5), (-1, -2, -5), (-3, -1, -5)]  # everything negative, floor-like at z = -5
    tmp = tmp_file(mesh(["3 0 0 0 0,0 1 0,0 2 0,0"], below))
    buggy = build(tmp).draw_nodes.boxes[0]
    assert buggy[3:].view(np.uint32).tolist() == [FLT_MIN_BITS] * 3
    fixed = build(tmp, fix_bounds=True).draw_nodes.boxes[0]
    assert fixed.tolist() == [-3, -5, -2, -1, -5, -1]


def test_user_bounds_replace_the_computed_root_box() -> None:
    tmp = tmp_file(mesh([QUAD_UV], SQUARE))
    model = build(tmp, bounds=(-60, -20, -60, 60, 40, 0))
    assert model.draw_nodes.boxes[0].tolist() == [-60, -20, -60, 60, 40, 0]
    assert model.collision_nodes.boxes[0].tolist() == [-60, -20, -60, 60, 40, 0]


def _scattered_triangles(count: int, materials: int = 1) -> bytes:
    """`count` small triangles spread over a 10 x 10 floor, material i % materials."""
    vertices = []
    faces = []
    for i in range(count):
        x, y = (i % 4) * 3.0, (i // 4) * 3.0
        vertices += [(x, y, 0), (x + 0.5, y, 0), (x, y + 0.5, 0)]
        faces.append(f"3 {i % materials} 0 {3 * i} 0,0 {3 * i + 1} 0,0 {3 * i + 2} 0,0")
    names = tuple(f"M{i}" for i in range(materials))
    return tmp_file(mesh(faces, vertices, materials=names))


def test_collision_tree_splits_above_ten_faces_and_emits_children_first() -> None:
    assert build(_scattered_triangles(10)).collision_nodes.count == 1
    model = build(_scattered_triangles(11))
    nodes = model.collision_nodes
    assert nodes.has_children[0] and nodes.count > 1
    ranges = model.collision_ranges
    assert ranges[0, 1] == len(model.collision_indices)  # the root's own faces come last
    assert model.draw_nodes.count == 1  # weight 1 never splits the draw tree


def test_draw_tree_splits_when_weight_exceeds_two() -> None:
    assert build(_scattered_triangles(12, materials=2)).draw_nodes.count == 1
    model = build(_scattered_triangles(12, materials=3))
    assert model.draw_nodes.count > 1 and model.draw_nodes.count % 8 == 1
    # fragments cover every index exactly once, and each fragment's vertices are its own block
    spans = sorted(zip(model.draw_fragments.index_begin.tolist(), model.draw_fragments.index_end.tolist(),
                       strict=True))
    assert spans[0][0] == 0 and spans[-1][1] == len(model.draw_indices)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))


def test_max_depth_zero_and_k_option() -> None:
    tmp = _scattered_triangles(12, materials=3)
    flat = build(tmp, max_depth=0)
    assert flat.draw_nodes.count == 1 and flat.collision_nodes.count == 1
    plain = build(tmp, k=0.0).collision_nodes.boxes
    loose = build(tmp).collision_nodes.boxes
    assert plain[1, 3] < loose[1, 3]  # K stretches the low child past the centre


def test_degenerate_faces_get_nan_frames_as_x87_indefinite_or_are_dropped() -> None:
    tmp = tmp_file(mesh(["3 0 0 0 0,0 0 0,0 0 0,0", QUAD_UV], SQUARE))
    report = CompileReport()
    model = build(tmp, report=report)
    bits = model.draw_vertices.view(np.uint32)
    assert (bits[:3, 3:6] == 0xFFC00000).all()
    assert report.degenerate_faces == 1 and any("zero-area" in w for w in report.warnings)
    assert len(build(tmp, drop_degenerate=True).draw_vertices) == 4


def test_report_lists_counts_and_stage_timings() -> None:
    report = CompileReport()
    compile_bytes(_scattered_triangles(11, materials=3), report=report)
    assert report.triangles == 11 and report.quads == 0
    assert report.materials == [b"M0", b"M1", b"M2"] and report.faces_per_material == [4, 4, 3]
    assert sum(report.collision_tree.faces_per_level) == 11
    assert set(report.timings) >= {"parse", "front end", "octrees"}


def test_non_planar_quads_are_reported() -> None:
    bent = [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (1.0, 1.0, 0.5), (0.0, 1.0, 0.0)]
    report = CompileReport()
    build(tmp_file(mesh([QUAD_UV], bent)), report=report)
    assert any("1 non-planar quad" in w for w in report.warnings)
    flat = CompileReport()
    build(tmp_file(mesh([QUAD_UV], SQUARE)), report=flat)
    assert not any("non-planar" in w for w in flat.warnings)


def test_object_matrices_of_many_meshes_have_the_bits_of_one_at_a_time() -> None:
    from qmap_compiler.f32math import object_matrices, object_matrix

    rng = np.random.default_rng(3)
    specials = [0.0, -0.0, 1e38, 3.4e38, -1e39, math.pi, math.inf, -math.inf, math.nan]
    placements = []
    for index in range(3000):
        vectors = [tuple(float(np.float32(v)) for v in rng.normal(size=3) * 10.0 ** rng.integers(-3, 6, 3))
                   for _ in range(3)]  # fmt: skip
        if index % 3:  # overflowing steps, infinities and NaNs somewhere: those go one at a time
            vectors[index % 3] = tuple(rng.choice(specials, 3).tolist())
        placements.append(tuple(vectors))
    for placement, matrix in zip(placements, object_matrices(placements), strict=True):
        assert np.array(matrix).tobytes() == np.array(object_matrix(*placement)).tobytes(), placement


def test_meshes_made_in_batches_give_the_bits_of_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Consecutive meshes are transformed and gathered together; the faces, warnings and counts are those of one
    mesh at a time, with UVs and without, skipped, renamed and out-of-range materials, mixed sizes, empty meshes,
    and a mesh with infinite vertices (its whole batch then computed with the x87's NaN signs)."""
    from qmap_compiler import frontend
    from qmap_compiler.desc_parser import parse_desc
    from qmap_compiler.tmp_parser import parse_tmp

    rng = np.random.default_rng(11)

    def random_mesh(index: int, with_nan: bool = False) -> str:
        vertices = [tuple(float(c) for c in row) for row in rng.normal(0, 5, (9, 3))]
        if with_nan:
            vertices[2] = (1e39, 1.0, -1e39)  # infinite in float32
        has_uv = index % 3 != 1
        faces = []
        for _ in range(int(rng.integers(0, 7))):
            size = int(rng.integers(3, 5))
            slot = int(rng.integers(0, 4))  # slot 3 is beyond the three materials of most meshes
            corners = [f"{c} {rng.random():.6f},{rng.random():.6f}" if has_uv else str(c)
                       for c in rng.choice(9, size, replace=False).tolist()]  # fmt: skip
            faces.append(f"{size} {slot} 0 " + " ".join(corners))
        materials = () if index % 5 == 4 else ("Keep", "Skip", "Renamed")
        placement = tuple(float(v) for v in rng.normal(0, 2, 9))
        return mesh(faces, vertices, materials, has_uv=has_uv, position=placement[:3], rotation=placement[3:6],
                    scale=placement[6:], name=f"M{index}")  # fmt: skip

    text = tmp_file(*(random_mesh(i) for i in range(40)), random_mesh(40, with_nan=True),
                    *(random_mesh(i) for i in range(41, 60)))  # fmt: skip
    desc = parse_desc(desc_file('\t"Skip" { skip; }\n\t"Renamed" { name "Other"; tex scale 2; }'))
    results = []
    for per_batch in (1 << 16, 1):  # all meshes together (but the NaN's batch), then one at a time
        monkeypatch.setattr(frontend, "_FACES_PER_PIECE", per_batch)
        with np.errstate(all="ignore"):
            results.append(frontend.run_front_end(parse_tmp(text), desc))
    together, alone = results
    assert together.warnings == alone.warnings and together.skipped_faces == alone.skipped_faces > 0
    for field in ("materials", "material", "sizes", "positions", "uvs", "normals", "tangents", "binormals"):
        assert np.asarray(getattr(together.faces, field)).tobytes() == np.asarray(getattr(alone.faces, field)).tobytes()


def test_out_of_range_materials_are_counted_per_mesh_in_a_batch_ending_with_empty_meshes() -> None:
    beyond = mesh([QUAD_UV, QUAD_UV.replace("4 0 0", "4 5 0", 1)], SQUARE, ("M",), name="A")
    empty = mesh([], [], ("M",), name="E")
    report = CompileReport()
    build(tmp_file(beyond, mesh([QUAD_UV], SQUARE, ("M",), name="B"), beyond.replace('"A"', '"C"'), empty, empty),
          report=report)  # fmt: skip
    counted = [w for w in report.warnings if "beyond" in w]
    assert counted == [f"mesh '{name}': 1 face(s) use a material index beyond its 1 material(s); they get the "
                       'material name ""' for name in "AC"]  # fmt: skip


def test_concave_quads_are_reported() -> None:
    """The game splits a quad on its written corners 1-3 (Blender's order): a quad notched at corner 1 or 3 keeps
    that diagonal inside, one notched at corner 0 or 2 has it outside, and its two triangles overlap."""
    dart = [(0.0, 0.0, 0.0), (1.0, 0.5, 0.0), (2.0, 0.0, 0.0), (1.0, 2.0, 0.0)]  # notched at corner 1
    reports = []
    for corners in (SQUARE, dart, dart[1:] + dart[:1]):  # the dart started one corner on: notched at corner 0
        report = CompileReport()
        build(tmp_file(mesh([QUAD_UV], corners)), report=report)
        reports.append(any("1 concave quad(s)" in w for w in report.warnings))
    # corners 1-3 of the dart run from its notch up through it; started one corner on, they run below it, outside
    assert reports == [False, False, True]


def _odd_quads_one_corner_at_a_time(faces: object, tolerance: float = 1e-4) -> tuple[int, int]:
    """odd_quads as it was: each corner gathered on its own, every difference made where it is used."""
    sizes, positions, normals = faces.sizes, faces.positions, faces.normals  # type: ignore[attr-defined]
    quads = np.flatnonzero(sizes == 4)
    corners = [positions[quads, corner].astype(np.float64) for corner in range(4)]
    with np.errstate(invalid="ignore", over="ignore"):
        from qmap_compiler.f32math import dot3

        offset = np.abs(dot3(corners[3] - corners[0], normals[quads].astype(np.float64)))
        size = np.linalg.norm(corners[2] - corners[0], axis=1)
        first = np.cross(corners[1] - corners[0], corners[2] - corners[0])
        second = np.cross(corners[2] - corners[0], corners[3] - corners[0])
        folded = np.einsum("ij,ij->i", first, second) < 0
    return int(np.count_nonzero(offset > tolerance * size)), int(np.count_nonzero(folded))


@pytest.mark.parametrize("seed", range(4))
def test_odd_quads_counts_as_one_corner_at_a_time(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The quads' corners gathered as one item each and widened per corner count the same bent and folded quads as
    corners gathered one at a time: near-planar quads on the tolerance, folded ones, NaN and infinite corners,
    pieces of faces (several, side by side)."""
    from types import SimpleNamespace

    from qmap_compiler import frontend

    monkeypatch.setattr(frontend, "_FACES_PER_PIECE", 257)
    rng = np.random.default_rng(seed)
    count = 2000
    positions = rng.uniform(-3, 3, (count, 4, 3)).astype(np.float32)
    flat = rng.random(count) < 0.5  # corner 3 on the plane of 0-2 (nearly: the tolerance decides)
    positions[flat, 3] = (positions[flat, 0] + positions[flat, 2] - positions[flat, 1]
                          + rng.normal(0, 1e-4, (int(flat.sum()), 3))).astype(np.float32)  # fmt: skip
    positions[rng.integers(0, count, 5), rng.integers(0, 4, 5), rng.integers(0, 3, 5)] = np.nan
    positions[rng.integers(0, count, 3), 1, 0] = np.inf
    edge1, edge2 = positions[:, 1] - positions[:, 0], positions[:, 2] - positions[:, 0]
    with np.errstate(invalid="ignore", over="ignore"):
        normals = np.cross(edge1, edge2)
        normals = (normals / np.linalg.norm(normals, axis=1)[:, None]).astype(np.float32)
    sizes = np.where(rng.random(count) < 0.8, 4, 3).astype(np.int8)
    faces = SimpleNamespace(sizes=sizes, positions=np.ascontiguousarray(positions), normals=normals)
    bent, folded = frontend.odd_quads(faces)  # type: ignore[arg-type]
    assert (bent, folded) == _odd_quads_one_corner_at_a_time(faces)
    assert 0 < bent < np.count_nonzero(sizes == 4) and folded > 0


@pytest.mark.parametrize("seed", range(3))
def test_skipped_faces_compile_as_if_they_were_not_in_the_map(seed: int) -> None:
    """A batch with skipped faces masks its tables; one without any hands them on unmasked: the same bytes as the
    same map written without the skipped faces (quads and triangles, UVs and none, several meshes)."""
    rng = np.random.default_rng(seed)
    grid = [(float(x), float(y), float(rng.uniform(-0.2, 0.2))) for y in range(4) for x in range(4)]

    def face_line(material: int) -> str:
        x, y = int(rng.integers(0, 3)), int(rng.integers(0, 3))
        corners = [y * 4 + x, y * 4 + x + 1, (y + 1) * 4 + x + 1, (y + 1) * 4 + x][: int(rng.integers(3, 5))]
        uvs = " ".join(f"{c} {rng.random():.6f},{rng.random():.6f}" for c in corners)
        return f"{len(corners)} {material} 0 {uvs}"

    meshes = [[face_line(int(rng.integers(0, 3))) for _ in range(int(rng.integers(1, 30)))] for _ in range(5)]
    desc = desc_file('"Skip" { skip; }')
    materials = ("A", "Skip", "B")
    with_skipped = tmp_file(*(mesh(faces, grid, materials, name=f"O{i}", position=(i, 0, 0))
                              for i, faces in enumerate(meshes)))  # fmt: skip
    kept = [[line for line in faces if line.split()[1] != "1"] for faces in meshes]
    without = tmp_file(*(mesh(faces, grid, materials, name=f"O{i}", position=(i, 0, 0))
                         for i, faces in enumerate(kept) if faces))  # fmt: skip
    assert any(len(a) != len(b) for a, b in zip(meshes, kept, strict=True))
    assert compile_bytes(with_skipped, desc) == compile_bytes(without, desc)
