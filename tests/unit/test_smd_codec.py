"""SMD / VTA codec: samples, round trips, studiomdl's tolerance, helpers."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from formats.errors import FormatError
from formats.smd import (
    SkeletonFrame,
    SmdDocument,
    SmdNode,
    Triangles,
    balance_links,
    build_vta,
    dense_skeleton,
    dominant_bones,
    effective_links,
    links_from_padded,
    load_smd,
    normalize_links,
    numeric,
    read_smd,
    read_vta,
    save_smd,
    write_smd,
    write_vta,
)
from formats.smd.document import Flavour
from tests.sample_paths import sample_dir, sample_files

TOLERANCE = 1e-5


def parse(text: str, **options: str) -> SmdDocument:
    return read_smd(text.encode(), "fixture.smd", **options)


def assert_same_document(a: SmdDocument, b: SmdDocument) -> None:
    assert [(n.id, n.name, n.parent) for n in a.nodes] == [(n.id, n.name, n.parent) for n in b.nodes]
    assert [(f.time, f.comment) for f in a.skeleton] == [(f.time, f.comment) for f in b.skeleton]
    for fa, fb in zip(a.skeleton, b.skeleton, strict=True):
        np.testing.assert_array_equal(fa.bone_ids, fb.bone_ids)
        np.testing.assert_allclose(fa.positions, fb.positions, atol=TOLERANCE)
        np.testing.assert_allclose(fa.rotations, fb.rotations, atol=TOLERANCE)
    assert (a.triangles is None) == (b.triangles is None)
    if a.triangles is not None and b.triangles is not None:
        ta, tb = a.triangles, b.triangles
        assert [ta.material_names[i] for i in ta.material_indices] == [
            tb.material_names[i] for i in tb.material_indices
        ]
        for name in ("positions", "normals", "uvs", "link_weights"):
            np.testing.assert_allclose(getattr(ta, name), getattr(tb, name), atol=TOLERANCE, err_msg=name)
        for name in ("link_counts", "link_bones"):
            np.testing.assert_array_equal(getattr(ta, name), getattr(tb, name), err_msg=name)
    assert (a.vertex_animation is None) == (b.vertex_animation is None)
    for va, vb in zip(a.vertex_animation or [], b.vertex_animation or [], strict=True):
        assert va.time == vb.time
        np.testing.assert_array_equal(va.vertex_ids, vb.vertex_ids)
        np.testing.assert_allclose(va.positions, vb.positions, atol=TOLERANCE)
        np.testing.assert_allclose(va.normals, vb.normals, atol=TOLERANCE)


# ---- samples -----------------------------------------------------------------------------------------------------

SAMPLES = sample_files("smd", ".smd", ".vta")


@pytest.mark.parametrize("sample", SAMPLES, ids=[p.name for p in SAMPLES])
def test_sample_parses_and_round_trips(sample: Path) -> None:
    doc = load_smd(sample)
    assert doc.nodes and doc.skeleton
    again = read_smd(write_smd(doc))
    assert_same_document(doc, again)
    if doc.triangles is not None:
        np.testing.assert_array_equal(doc.triangles.parent_bones, again.triangles.parent_bones)  # type: ignore[union-attr]
        assert again.flavour == doc.flavour


def test_samples_present() -> None:
    folder = sample_dir("smd")
    assert {"Cone.smd", "Cube.vta", "idle.SMD"} <= {p.name for p in folder.iterdir()}


def test_sample_details() -> None:
    folder = sample_dir("smd")
    cone = load_smd(folder / "Cone.smd")
    assert cone.triangles is not None and len(cone.triangles) == 62 and cone.flavour == "source"
    stairs = load_smd(folder / "stairs001_phymodel.smd")  # CRLF, 8 decimals, 9 fields
    assert stairs.flavour == "goldsrc" and stairs.triangles is not None
    assert stairs.triangles.material_names == ["Material #152"]
    assert stairs.triangles.positions[0, 0, 2] == pytest.approx(0.00000191)
    assert stairs.skeleton[0].positions[0] == pytest.approx([-44.4444, -54, -7.33333])
    overlap = load_smd(folder / "Overlapping_DifferentWeights.smd")
    assert overlap.triangles is not None
    np.testing.assert_array_equal(overlap.triangles.link_counts, [[0, 0, 0], [1, 1, 1]])
    np.testing.assert_array_equal(overlap.triangles.link_bones, [1, 1, 1])
    assert overlap.skeleton[0].rotations[1, 0] == pytest.approx(1.570796)
    idle = load_smd(folder / "idle.SMD")
    assert idle.is_animation and idle.nodes == [SmdNode(0, "Box004", -1)]
    triangle = load_smd(folder / "triangle.smd")  # blank line after header, no final newline
    assert triangle.triangles is not None and triangle.triangles.material_names == ["none.quak"]
    vta = read_vta((folder / "Cube.vta").read_bytes())
    assert vta.shape_names() == {0: "0", 1: "Key 1"}
    assert vta.vertex_animation is not None and [len(f.vertex_ids) for f in vta.vertex_animation] == [36, 18]


# ---- fixtures: animation -----------------------------------------------------------------------------------------

SPARSE_ANIMATION = """version 1
nodes
0 "root" -1
1 "child bone" 0
2 "other's" 0
end
skeleton
time 5
0 1 0 0 0 0 0
1 0 2 0 0 0 0.5
2 0 0 3 0 0 0
time 6
0 1.5 0 0 0 0 0
time 8
1 0 2.5 0 0 0 1
end
"""


def test_animation_starting_at_time_5_with_sparse_frames() -> None:
    doc = parse(SPARSE_ANIMATION)
    assert doc.is_animation
    assert [f.time for f in doc.skeleton] == [5, 6, 8]
    assert [len(f.bone_ids) for f in doc.skeleton] == [3, 1, 1]
    assert any("skips 1 time number" in w for w in doc.warnings)
    dense = dense_skeleton(doc)
    assert dense.first_time == 5 and dense.frame_count == 4
    # bone 0 keyed at 5 and 6, held through the missing frame 7 and frame 8
    np.testing.assert_allclose(dense.positions[:, 0, 0], [1, 1.5, 1.5, 1.5])
    np.testing.assert_allclose(dense.positions[:, 1, 1], [2, 2, 2, 2.5])
    np.testing.assert_allclose(dense.rotations[:, 1, 2], [0.5, 0.5, 0.5, 1])
    np.testing.assert_allclose(dense.positions[:, 2, 2], [3, 3, 3, 3])
    np.testing.assert_array_equal(dense.keyed[:, 0], [True, True, False, False])
    assert_same_document(doc, read_smd(write_smd(doc)))


def test_dense_skeleton_is_zero_before_first_key_and_merges_repeats() -> None:
    doc = parse(
        'nodes\n0 "a" -1\n1 "b" -1\nend\nskeleton\ntime 0\n0 1 1 1 0 0 0\ntime 1\n1 2 2 2 0 0 0\n'
        "time 1\n1 3 3 3 0 0 0\nend\n"
    )
    dense = dense_skeleton(doc)
    assert dense.frame_count == 2
    np.testing.assert_allclose(dense.positions[:, 1, 0], [0, 3])


GOLDSRC_ANIMATION = (
    'version 1\nnodes\n0 "Bip01" -1\n1 "Bip01 Pelvis" 0\nend\nskeleton\n'
    + "".join(
        f"time {t}\n0 0.000000 0.000000 {t}.000000 0.000000 0.000000 0.000000\n1 1.000000 0.000000 0.000000 0.000000 "
        f"0.000000 0.{t}00000\n"
        for t in range(4)
    )
    + "end\n"
)


def test_goldsrc_animation_every_bone_every_frame() -> None:
    doc = parse(GOLDSRC_ANIMATION)
    dense = dense_skeleton(doc)
    assert dense.keyed.all() and dense.frame_count == 4
    np.testing.assert_allclose(dense.positions[:, 0, 2], [0, 1, 2, 3])
    np.testing.assert_allclose(dense.rotations[:, 1, 2], [0, 0.1, 0.2, 0.3])
    assert_same_document(doc, read_smd(write_smd(doc, "goldsrc")))


# ---- fixtures: reference meshes ----------------------------------------------------------------------------------

GOLDSRC_REFERENCE = """version 1
nodes
0 "Bip01 Head" -1
1 "second root" -1
end
skeleton
time 0
0 0.000000 0.000000 0.000000 0.000000 0.000000 0.000000
1 5.000000 0.000000 0.000000 0.000000 0.000000 1.570796
end
triangles
rock face's  texture.bmp
 0 0.000000 0.000000 0.000000 0.000000 0.000000 1.000000 0.000000 0.000000
 1 1.000000 0.000000 0.000000 0.000000 0.000000 1.000000 1.000000 0.000000
 1 1.000000 1.000000 0.000000 0.000000 0.000000 1.000000 1.000000 1.000000
end
"""


def test_goldsrc_reference() -> None:
    doc = parse(GOLDSRC_REFERENCE)
    assert doc.flavour == "goldsrc"
    tris = doc.triangles
    assert tris is not None and tris.material_names == ["rock face's  texture.bmp"]
    np.testing.assert_array_equal(tris.parent_bones, [[0, 1, 1]])
    np.testing.assert_array_equal(tris.link_counts, [[0, 0, 0]])
    assert [n.parent for n in doc.nodes] == [-1, -1]
    text = write_smd(doc).decode()
    vertex_lines = text.split("triangles\n")[1].splitlines()[1:4]
    assert [len(line.split()) for line in vertex_lines] == [9, 9, 9]
    assert_same_document(doc, read_smd(text.encode()))


SKINNED = """version 1
nodes
0 "a" -1
1 "b" 0
2 "c" 1
end
skeleton
time 0
0 0 0 0 0 0 0
1 0 0 1 0 0 0
2 0 0 1 0 0 0
end
triangles
skin
0 0.000000 0.000000 0.000000 0.000000 0.000000 1.000000 0.000000 0.000000 2 1 0.250000 2 0.750000
0 1.000000 0.000000 0.000000 0.000000 0.000000 1.000000 1.000000 0.000000 1 2 1.000000
0 1.000000 1.000000 0.000000 0.000000 0.000000 1.000000 1.000000 1.000000 0
end
"""


CORNERS = SKINNED.split("skin\n")[1].split("end\n")[0]


def with_triangles(base: str, body: str) -> str:
    return base.split("triangles\n")[0] + "triangles\n" + body + "end\n"


def test_source_links_and_goldsrc_output_uses_heaviest_bone() -> None:
    doc = parse(SKINNED)
    tris = doc.triangles
    assert tris is not None and doc.flavour == "source"
    np.testing.assert_array_equal(tris.link_counts, [[2, 1, 0]])
    np.testing.assert_array_equal(tris.link_bones, [1, 2, 2])
    np.testing.assert_allclose(tris.link_weights, [0.25, 0.75, 1.0])
    bones, weights = tris.padded_links()
    np.testing.assert_array_equal(bones, [[[1, 2], [2, -1], [-1, -1]]])
    np.testing.assert_allclose(weights, [[[0.25, 0.75], [1, 0], [0, 0]]])
    gold = read_smd(write_smd(doc, "goldsrc"))
    assert gold.flavour == "goldsrc" and gold.triangles is not None
    np.testing.assert_array_equal(gold.triangles.parent_bones, [[2, 2, 0]])


@pytest.mark.parametrize("shared_lines", [False, True])
def test_float32_corners_write_the_text_of_their_exact_values(shared_lines: bool) -> None:
    """Exporters hand float32 corners over as Blender has them: the text is that of their exact (float64) values.
    1234.5677 as float32 is 1234.5677490234375; times 1e6 in float32 arithmetic it would read 1234.567680."""
    doc = parse(SKINNED)
    tris = doc.triangles
    assert tris is not None
    tris.positions = np.full((1, 3, 3), 1234.5677, np.float32)
    tris.normals = np.full((1, 3, 3), -0.1, np.float32)
    tris.uvs = np.full((1, 3, 2), 0.3, np.float32)
    tris.corner_lines = np.array([0, 1, 2]) if shared_lines else None
    text = write_smd(doc).decode()
    assert text.count("1234.567749 1234.567749 1234.567749  -0.100000 -0.100000 -0.100000  0.300000 0.300000") == 3
    tris.positions, tris.normals, tris.uvs = (values.astype(np.float64) for values in (tris.positions, tris.normals,
                                                                                          tris.uvs))  # fmt: skip
    assert write_smd(doc).decode() == text


def test_ten_weight_links() -> None:
    pairs = " ".join(f"{i} 0.100000" for i in range(10))
    text = SKINNED.replace("2 1 0.250000 2 0.750000", f"10 {pairs}")
    doc = parse(text)
    tris = doc.triangles
    assert tris is not None
    assert tris.link_counts[0, 0] == 10
    np.testing.assert_array_equal(tris.link_bones[:10], np.arange(10))
    np.testing.assert_allclose(tris.link_weights[:10], 0.1)
    assert_same_document(doc, read_smd(write_smd(doc)))
    counts, _bones, weights = balance_links(tris.link_counts, tris.link_bones, tris.link_weights)
    assert counts.tolist() == [3, 1, 0]
    np.testing.assert_allclose(weights[:3], 1 / 3)


def test_blank_material_line_drops_triangle_with_warning() -> None:
    text = with_triangles(SKINNED, "\n" + CORNERS + "skin\n" + CORNERS)
    doc = parse(text)
    assert doc.triangles is not None and len(doc.triangles) == 1
    assert any("blank material" in w for w in doc.warnings)
    kept = parse(text, blank_material="UndefinedMaterial")
    assert kept.triangles is not None and len(kept.triangles) == 2
    assert kept.triangles.material_names == ["UndefinedMaterial", "skin"]
    careful = parse(with_triangles(SKINNED, "skin\n" + CORNERS + "\n\n" + CORNERS + "\nskin\n" + CORNERS))
    assert careful.triangles is not None and len(careful.triangles) == 2


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["skin", "skin", "skin"], ["skin"]),  # one material: found without a line per triangle
        (["skin", "bone", "skin"], ["skin", "bone"]),  # of one length, different
        (["skin", "skin ", "skin"], ["skin"]),  # of other lengths, one name once stripped
        (["skin\r", "bone\r", "skin\r"], ["skin", "bone"]),  # Windows line ends
        (["metal_plate_01"] * 3, ["metal_plate_01"]),  # long: compared 8 bytes at a time
        (["metal_plate_01", "metal_plate_02", "metal_plate_01"], ["metal_plate_01", "metal_plate_02"]),  # last word
        (["metal_plate_01", "xetal_plate_01"], ["metal_plate_01", "xetal_plate_01"]),  # first word
        (["metal_plate_0123", "metal_Xlate_0123"], ["metal_plate_0123", "metal_Xlate_0123"]),  # a middle word
        (["abcdefg", "abcdefg"], ["abcdefg"]),  # 8 bytes with the line end
    ],
    ids=["one", "same length", "trailing space", "crlf", "long", "last word", "first word", "middle", "eight"],
)
def test_material_lines_of_the_quick_path(names: list[str], expected: list[str]) -> None:
    doc = parse(with_triangles(SKINNED, "".join(f"{name}\n{CORNERS}" for name in names)))
    assert doc.triangles is not None
    assert doc.triangles.material_names == expected
    assert [expected[i] for i in doc.triangles.material_indices] == [name.strip() for name in names]


def test_empty_triangles_block() -> None:
    doc = parse('version 1\nnodes\n0 "a" -1\nend\nskeleton\ntime 0\n0 0 0 0 0 0 0\nend\ntriangles\nend\n')
    assert doc.triangles is not None and len(doc.triangles) == 0
    assert doc.triangles.positions.shape == (0, 3, 3)
    assert not doc.warnings  # (a skeleton SMD, as games' shared skeletons are)
    assert_same_document(doc, read_smd(write_smd(doc)))


def test_tolerance_case_crlf_no_final_newline_comments_blank_lines() -> None:
    text = (
        '// made by hand\r\nVERSION 1\r\n\r\nNodes\r\n  0 "root bone" -1\r\n\r\n# a comment\r\n'
        '  1 "it\'s  spaced" 0 // trailing\r\nEnd \r\nSKELETON\r\nTime 0\r\n; comment\r\n\r\n'
        "0 0 0 0 0 0 0\r\n  1 1 2 3 0.1 0.2 0.3\r\n  end\r\nTriangles\r\nmat\r\n"
        + "\r\n".join(SKINNED.split("skin\n")[1].split("\nend\n")[0].splitlines())
        + "\r\nEND"
    )
    doc = parse(text)
    assert [n.name for n in doc.nodes] == ["root bone", "it's  spaced"]
    assert doc.skeleton[0].positions[1] == pytest.approx([1, 2, 3])
    assert doc.triangles is not None and len(doc.triangles) == 1
    assert doc.triangles.material_names == ["mat"]
    assert_same_document(doc, parse(text.replace("\r\n", "\r")))


def test_unquoted_bone_name_warns() -> None:
    doc = parse("version 1\nnodes\n0 root -1\nend\n")
    assert doc.nodes[0].name == "root"
    assert any("not in double quotes" in w for w in doc.warnings)


def test_misaligned_triangles_block_uses_careful_layout() -> None:
    spaced = CORNERS.replace("\n", "\n\n", 1)
    doc = parse(with_triangles(SKINNED, "// note\nskin\n" + CORNERS + "\n# between\nskin\n" + spaced))
    assert doc.triangles is not None and len(doc.triangles) == 2
    np.testing.assert_allclose(doc.triangles.positions[0], doc.triangles.positions[1])
    hashed = parse(with_triangles(SKINNED, "#5 metal\n" + CORNERS))
    assert hashed.triangles is not None and hashed.triangles.material_names == ["#5 metal"]


def test_number_notations_take_every_parsing_tier() -> None:
    reference = parse(SKINNED)
    eight_decimals = SKINNED.replace("0.000000", "0.00000000").replace("1.000000", "1.0")
    commented = SKINNED.replace(" 2 0.750000", " 2 0.750000 // two links")
    exponent = SKINNED.replace("0.250000", "2.5e-1")
    for text in (eight_decimals, commented, exponent):
        assert_same_document(reference, parse(text))


# ---- VTA ---------------------------------------------------------------------------------------------------------

GAPPED_VTA = """version 1
nodes
0 "root" -1
end
skeleton
time 0
0 0 0 0 0 0 0
time 1
0 0 0 0 0 0 0
time 2
0 0 0 0 0 0 0
time 5
0 0 0 0 0 0 0
end
vertexanimation
time 0
0 0.000000 0.000000 0.000000 0.000000 0.000000 1.000000
1 1.000000 0.000000 0.000000 0.000000 0.000000 1.000000
2 1.000000 1.000000 0.000000 0.000000 0.000000 1.000000
time 1
1 1.000000 0.000000 0.500000 0.000000 0.000000 1.000000
time 2
time 5
0 0.000000 0.000000 -0.250000 0.000000 0.000000 1.000000
2 1.000000 1.000000 0.750000 0.000000 0.000000 1.000000
end
"""


def test_vta_with_gaps_and_no_name_comments() -> None:
    doc = read_vta(GAPPED_VTA.encode())
    frames = doc.vertex_animation
    assert frames is not None and [f.time for f in frames] == [0, 1, 2, 5]
    assert doc.shape_names() == {0: "0", 1: "1", 2: "2", 5: "5"}
    assert [len(f.vertex_ids) for f in frames] == [3, 1, 0, 2]
    np.testing.assert_array_equal(frames[3].vertex_ids, [0, 2])
    np.testing.assert_allclose(frames[3].positions[:, 2], [-0.25, 0.75])
    assert_same_document(doc, read_vta(write_vta(doc)))


def test_build_vta_lists_only_moved_corners_and_names_shapes() -> None:
    base = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    normals = np.tile([0.0, 0, 1], (3, 1))
    moved = base.copy()
    moved[1, 2] = 0.5
    doc = build_vta(base, normals, [("smile", moved, normals)])
    again = read_vta(write_vta(doc))
    assert again.shape_names() == {0: "0", 1: "smile"}
    assert again.vertex_animation is not None
    np.testing.assert_array_equal(again.vertex_animation[1].vertex_ids, [1])


def test_build_vta_measures_float32_moves_in_float64() -> None:
    """A move of 1.0000000045e-4 (two axes, float32 values as an exporter holds them) passes the 1e-4 threshold,
    as its exact length does: in float32 arithmetic it would not (the reviewer's case)."""
    base = np.zeros((1, 3), np.float32)
    normals = np.array([[0.0, 0.0, 1.0]], np.float32)
    moved = np.array([[2.6161213e-05, 9.651731e-05, 0.0]], np.float32)
    wide = [array.astype(np.float64) for array in (base, normals, moved)]
    narrow_doc = build_vta(base, normals, [("k", moved, normals)])
    wide_doc = build_vta(wide[0], wide[1], [("k", wide[2], wide[1])])
    for doc in (narrow_doc, wide_doc):
        assert doc.vertex_animation is not None
        np.testing.assert_array_equal(doc.vertex_animation[1].vertex_ids, [0])


# ---- weights helpers ---------------------------------------------------------------------------------------------


def test_balance_links_mirrors_studiomdl() -> None:
    counts = np.array([4, 2, 2, 1])
    bones = np.array([3, 1, 3, 2, 5, 6, 7, 8, 9])
    weights = np.array([0.2, 0.3, 0.2, 0.01, 0.0, 0.0, 0.2, 0.2, 0.5])
    new_counts, new_bones, new_weights = balance_links(counts, bones, weights)
    # corner 0: bone 3 merged to 0.4, bone 1 0.3, bone 2 culled; renormalised. Corner 1: all below the cull, the
    # heaviest (first) stays with weight 1. Corner 2: two equal links.
    assert new_counts.tolist() == [2, 1, 2, 1]
    assert new_bones.tolist() == [3, 1, 5, 7, 8, 9]
    np.testing.assert_allclose(new_weights, [0.4 / 0.7, 0.3 / 0.7, 1.0, 0.5, 0.5, 1.0])
    capped = balance_links(np.array([4]), np.array([1, 2, 3, 4]), np.array([0.1, 0.4, 0.3, 0.2]))
    assert capped[0].tolist() == [3] and capped[1].tolist() == [2, 3, 4]
    np.testing.assert_allclose(capped[2], np.array([0.4, 0.3, 0.2]) / 0.9)
    np.testing.assert_allclose(normalize_links(np.array([2]), np.array([0.2, 0.2])), [0.5, 0.5])


def test_dominant_effective_and_padded_links() -> None:
    counts = np.array([2, 0, 1])
    bones = np.array([4, 5, 6])
    weights = np.array([0.3, 0.7, 1.0])
    assert dominant_bones(counts, bones, weights, np.array([9, 9, 9])).tolist() == [5, 9, 6]
    eff_counts, eff_bones, eff_weights = effective_links(counts, bones, weights, np.array([0, 2, 0]))
    assert eff_counts.tolist() == [2, 1, 1] and eff_bones.tolist() == [4, 5, 2, 6]
    np.testing.assert_allclose(eff_weights, [0.3, 0.7, 1.0, 1.0])
    # every corner rigid (GoldSrc): what the general path gives with one linked corner left out of the result
    parents = np.array([[3, 1, 3], [0, 0, 2]], np.int32)
    rigid = effective_links(np.zeros((2, 3), np.int32), np.zeros(0, np.int32), np.zeros(0), parents)
    mixed = effective_links(np.array([0, 0, 0, 0, 0, 0, 1]), np.array([7]), np.array([0.5]), np.r_[parents.ravel(), 9])
    for got, general in zip(rigid, mixed, strict=True):
        assert got.dtype == general.dtype and got.tolist() == general[:6].tolist()
    padded_counts, padded_bones, _padded_weights = links_from_padded(
        np.array([[1, 2, -1], [3, -1, -1]]), np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])
    )
    assert padded_counts.tolist() == [2, 1] and padded_bones.tolist() == [1, 2, 3]


# ---- writer limits and files -------------------------------------------------------------------------------------


def test_goldsrc_limits() -> None:
    many = SmdDocument(nodes=[SmdNode(i, f"b{i}", -1) for i in range(129)])
    with pytest.raises(FormatError, match="128 bones"):
        write_smd(many, "goldsrc")
    write_smd(many, "source")
    long_name = SmdDocument(nodes=[SmdNode(0, "x" * 32, -1)])
    with pytest.raises(FormatError, match="31 bytes"):
        write_smd(long_name, "goldsrc")


def test_writer_rejects_what_cannot_be_read_back() -> None:
    tris = parse(SKINNED).triangles
    assert tris is not None
    for bad in ("", " padded", "end", "two\nlines"):
        tris.material_names = [bad]
        with pytest.raises(FormatError):
            write_smd(SmdDocument(triangles=tris))
    with pytest.raises(FormatError):
        write_smd(SmdDocument(nodes=[SmdNode(0, 'say "hi"', -1)]))
    nan_frame = SkeletonFrame(0, np.array([0], dtype=np.int32), np.array([[np.nan, 0, 0]]), np.zeros((1, 3)))
    with pytest.raises(FormatError):
        write_smd(SmdDocument(nodes=[SmdNode(0, "a", -1)], skeleton=[nan_frame]))


def test_number_format_is_six_decimals() -> None:
    frame = SkeletonFrame(
        0, np.array([0], dtype=np.int32), np.array([[-0.5, 1234.5678914, 1e-9]]), np.array([[-1e-9, 2.0, -3.25]])
    )
    text = write_smd(SmdDocument(nodes=[SmdNode(0, "a", -1)], skeleton=[frame])).decode()
    assert "0  -0.500000 1234.567891 0.000000  0.000000 2.000000 -3.250000\n" in text


def test_save_and_load(tmp_path: Path) -> None:
    doc = parse(SKINNED)
    target = tmp_path / "out.smd"
    save_smd(target, doc)
    assert_same_document(doc, load_smd(target))
    with pytest.raises(FormatError) as caught:
        load_smd(tmp_path / "missing.smd")
    assert caught.value.path is not None


def test_triangles_default_is_empty() -> None:
    assert len(Triangles()) == 0


def shared_corner_text() -> str:
    """A closed strip whose corners repeat one another's lines, as exporters write them (a line per corner)."""
    corners = [f"0  {x}.000000 {x % 2}.000000 0.000000  0.000000 0.000000 1.000000  0.{x}00000 0.000000 "
               f"2 {x % 3} 0.500000 2 0.500000" for x in range(6)]  # fmt: skip
    triangles = [(0, 1, 2), (2, 1, 3), (2, 3, 4), (4, 3, 5), (5, 3, 1), (1, 0, 5)] * 3
    body = "".join(f"mat{t % 2}\n" + "".join(corners[c] + "\n" for c in triangle) for t, triangle in
                   enumerate(triangles))  # fmt: skip
    return with_triangles(SKINNED, body)


def test_repeated_vertex_lines_are_read_once_with_the_same_result(monkeypatch: pytest.MonkeyPatch) -> None:
    from formats.smd import reader

    text = shared_corner_text()
    once = parse(text)
    monkeypatch.setattr(reader, "_MOST_DISTINCT", 0.0)  # every line read where it stands
    everywhere = parse(text)
    assert once.triangles is not None and everywhere.triangles is not None
    assert everywhere.triangles.corner_lines is None
    lines = once.triangles.corner_lines
    assert lines is not None and lines.max() == 5
    np.testing.assert_array_equal(lines[:6], [0, 1, 2, 2, 1, 3])
    assert_same_document(once, everywhere)
    for name in ("material_indices", "parent_bones", "positions", "normals", "uvs", "link_weights"):
        np.testing.assert_array_equal(getattr(once.triangles, name), getattr(everywhere.triangles, name))
    assert once.warnings == everywhere.warnings


def test_a_bad_repeated_vertex_line_is_reported_where_it_first_occurs() -> None:
    text = shared_corner_text().replace("2 1 0.500000 2 0.500000", "2 1 0.500000 2 x.500000")
    first_line = next(n for n, line in enumerate(text.split("\n"), 1) if "x.5" in line)
    with pytest.raises(FormatError) as failure:
        parse(text)
    assert failure.value.line == first_line


def test_writer_makes_each_line_of_corner_lines_once_after_checking_them(monkeypatch: pytest.MonkeyPatch) -> None:
    from formats.smd import writer

    monkeypatch.setattr(writer, "_POOLED_LINES_AT_A_TIME", 5)  # the lines copied into place in several blocks
    doc = parse(shared_corner_text())
    tris = doc.triangles
    assert tris is not None and tris.corner_lines is not None
    with_lines = write_smd(doc)
    good_lines = tris.corner_lines
    tris.corner_lines = None
    plain = write_smd(doc)
    assert with_lines == plain
    assert plain.split(b"triangles\n")[1] == shared_corner_text().encode().split(b"triangles\n")[1]
    negative = good_lines.copy()
    negative[1] = -1  # would index from the end
    for wrong in (np.zeros_like(good_lines), good_lines.max() - good_lines, negative, good_lines.astype(float)):
        tris.corner_lines = wrong
        assert write_smd(doc) == plain
    tris.corner_lines = good_lines.copy()
    tris.link_weights = tris.link_weights.copy()
    tris.link_weights[-1] = 0.25  # a corner's links now differ from its line's first corner
    assert write_smd(doc).count(b"0.250000\n") == 1
    assert write_smd(doc, "goldsrc") == write_smd(SmdDocument(doc.version, doc.flavour, doc.nodes, doc.skeleton,
        dataclasses.replace(tris, corner_lines=None)), "goldsrc")  # fmt: skip
    flat_lines = good_lines.ravel().tolist()
    repeated = next(c for c in range(len(flat_lines)) if flat_lines[c] in flat_lines[:c])  # (not its line's first)
    for name in ("positions", "normals", "uvs"):  # one number of that corner differs: every axis is compared
        kept = getattr(tris, name)
        for axis in range(kept.shape[-1]):
            changed = kept.copy()
            changed.reshape(-1, kept.shape[-1])[repeated, axis] += 0.5
            setattr(tris, name, changed)
            tris.corner_lines = None
            unshared = write_smd(doc)
            tris.corner_lines = good_lines
            assert write_smd(doc) == unshared != plain
        setattr(tris, name, kept)
    for bad in (np.nan, 1e13):  # a number that cannot be written, in every corner of one line: the same error
        tris.positions = tris.positions.copy()
        tris.positions.reshape(-1, 3)[good_lines.ravel() == good_lines.ravel()[4], 1] = bad
        messages = []
        for lines in (good_lines, None):
            tris.corner_lines = lines
            with pytest.raises(FormatError) as caught:
                write_smd(doc)
            messages.append(str(caught.value))
        assert messages[0] == messages[1] and "cannot write the number" in messages[0]


def _held_per_line(doc: SmdDocument) -> SmdDocument:
    """doc with its positions, normals and UVs held per line (the rows of each line's first corner), as the reader
    of a large mesh and the SMD exporter hand them over."""
    tris = doc.triangles
    assert tris is not None and tris.corner_lines is not None
    firsts = np.unique(tris.corner_lines, return_index=True)[1]
    held = _per_corner(tris)
    held.corner_lines = tris.corner_lines.copy()
    held.hold_per_line({name: getattr(tris, name).reshape(-1, width)[firsts]
                        for name, width in (("positions", 3), ("normals", 3), ("uvs", 2))})  # fmt: skip
    return SmdDocument(doc.version, doc.flavour, doc.nodes, doc.skeleton, held)


def _per_corner(tris: Triangles, **changes: object) -> Triangles:
    """A copy of tris with every column per corner (those held per line made) and `changes`."""
    return Triangles(**{**{field.name: getattr(tris, field.name) for field in dataclasses.fields(tris)}, **changes})


def _random_shared_document(rng: np.random.Generator, seams: float, links: bool) -> SmdDocument:
    """Triangles over a few vertices whose corners mostly repeat their vertex's line; `seams` of the corners get a
    normal or UV of their own; `links`: weights per vertex (else none anywhere)."""
    vertices, count = 40, 300
    corner_vertex = rng.integers(0, vertices, 3 * count)
    values = {"positions": rng.normal(size=(vertices, 3)), "normals": rng.normal(size=(vertices, 3)),
              "uvs": rng.random((vertices, 2))}  # fmt: skip
    corners = {name: table[corner_vertex].astype(np.float32) for name, table in values.items()}
    seam = rng.random(3 * count) < seams
    corners["uvs"][seam, 0] += 0.25
    key = np.column_stack([corner_vertex, seam])
    _, firsts, lines = np.unique(key, axis=0, return_index=True, return_inverse=True)
    rank = np.empty(firsts.size, np.int64)
    rank[np.argsort(firsts, kind="stable")] = np.arange(firsts.size)
    vertex_counts = rng.integers(1, 3, vertices) if links else np.zeros(vertices, np.int64)
    counts = vertex_counts[corner_vertex]
    vertex_bones = rng.integers(0, 2, (vertices, 2))
    vertex_weights = rng.random((vertices, 2)).round(3)
    rows = np.flatnonzero(np.arange(2)[None, :] < counts[:, None]) if links else np.zeros(0, np.int64)
    corner_of_link, rank_of_link = np.divmod(rows, 2)
    tris = Triangles(
        material_names=["skin", "metal"], material_indices=rng.integers(0, 2, count).astype(np.int32),
        parent_bones=rng.integers(0, 2, vertices)[corner_vertex].reshape(count, 3).astype(np.int32),
        positions=corners["positions"].reshape(count, 3, 3), normals=corners["normals"].reshape(count, 3, 3),
        uvs=corners["uvs"].reshape(count, 3, 2), link_counts=counts.reshape(count, 3).astype(np.int32),
        link_bones=vertex_bones[corner_vertex[corner_of_link], rank_of_link].astype(np.int32),
        link_weights=vertex_weights[corner_vertex[corner_of_link], rank_of_link],
        corner_lines=rank[lines.reshape(-1)],
    )  # fmt: skip
    return SmdDocument(nodes=[SmdNode(0, "root", -1), SmdNode(1, "arm", 0)],
                       skeleton=[SkeletonFrame(0, np.arange(2, dtype=np.int32), np.zeros((2, 3)), np.zeros((2, 3)))],
                       triangles=tris)  # fmt: skip


@pytest.mark.parametrize("flavour", ["source", "goldsrc"])
def test_lines_held_per_line_write_what_the_corners_write(flavour: Flavour, monkeypatch: pytest.MonkeyPatch) -> None:
    """A document whose float columns are held per line (Triangles.hold_per_line: the SMD exporter's, a large read
    file's) writes the bytes of the same corners held per corner, with corner_lines or without, and the held
    columns are not made per corner on the way where the lines are written once each."""
    from formats.smd import writer

    monkeypatch.setattr(writer, "_CORNERS_AT_A_TIME", 64)  # (the check in several blocks)
    monkeypatch.setattr(writer, "_POOLED_LINES_AT_A_TIME", 28)  # (7 triangles a block: the last one short)
    rng = np.random.default_rng(12)
    for seams, links in ((0.0, True), (0.2, True), (0.1, False), (0.9, True)):
        doc = _random_shared_document(rng, seams, links)
        held = _held_per_line(doc)
        tris = held.triangles
        assert tris is not None and doc.triangles is not None
        expected = write_smd(doc, flavour)
        without = _per_corner(doc.triangles, corner_lines=None)
        assert expected == write_smd(replace_triangles(doc, without), flavour)
        assert write_smd(held, flavour) == expected
        if seams < 0.5:  # (most lines repeat: written once each, from the held rows)
            assert all(name not in tris.__dict__ for name in ("positions", "normals", "uvs"))
    doc = _random_shared_document(rng, 0.1, True)
    plain = write_smd(doc, flavour)
    assert doc.triangles is not None
    for change in ("links", "parents", "order"):  # a corner unlike its line's first, or lines out of order
        held = _held_per_line(doc)
        tris = held.triangles
        assert tris is not None and tris.corner_lines is not None
        if change == "links":
            tris.link_weights = tris.link_weights.copy()
            tris.link_weights[-1] += 0.5
        elif change == "parents":
            tris.parent_bones = tris.parent_bones.copy()
            tris.parent_bones[-1, -1] = 1 - tris.parent_bones[-1, -1]
        else:
            tris.corner_lines[[0, 1]] = tris.corner_lines[[1, 0]]  # (the lines the rows are held with)
        written = write_smd(held, flavour)
        assert written == write_smd(replace_triangles(doc, _per_corner(tris, corner_lines=None)), flavour)
        if flavour == "source":  # (GoldSrc writes a linked corner's heaviest bone, which may not change)
            assert written != plain
    for bad in (np.nan, 1e13):  # a number that cannot be written in a held row: the error of the corners
        held = _held_per_line(doc)
        tris = held.triangles
        assert tris is not None
        rows = tris.line_rows("normals")
        assert rows is not None
        rows[3, 2] = bad
        messages = []
        for document in (held, replace_triangles(doc, _per_corner(tris, corner_lines=None))):
            with pytest.raises(FormatError) as caught:
                write_smd(document, flavour)
            messages.append(str(caught.value))
        assert messages[0] == messages[1] and "cannot write the number" in messages[0]
    held = _held_per_line(doc)
    tris = held.triangles
    assert tris is not None
    rows = tris.line_rows("uvs")
    assert rows is not None
    tris.__dict__["_per_line"][1]["uvs"] = rows[:-1]  # a line without its row
    with pytest.raises((FormatError, IndexError)):
        write_smd(held, flavour)


def replace_triangles(doc: SmdDocument, triangles: Triangles) -> SmdDocument:
    return SmdDocument(doc.version, doc.flavour, doc.nodes, doc.skeleton, triangles)


def test_a_block_of_distinct_lines_is_read_where_it_stands() -> None:
    corners = [f"0  {x}.000000 0.000000 0.000000  0.000000 0.000000 1.000000  0.000000 0.000000 1 0 1.000000"
               for x in range(30)]  # fmt: skip
    body = "".join("skin\n" + "".join(line + "\n" for line in corners[t : t + 3]) for t in range(0, 30, 3))
    doc = parse(with_triangles(SKINNED, body))
    assert doc.triangles is not None and doc.triangles.corner_lines is None
    np.testing.assert_array_equal(doc.triangles.positions.reshape(-1, 3)[:, 0], np.arange(30))


# ---- numeric blocks longer than one parsing segment ---------------------------------------------------------------

NUMERIC_LINE = "0 1.000000 2.000000 3.000000 4.000000 5.000000 6.000000"


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["LF", "CRLF"])
@pytest.mark.parametrize("frame_count", [4681, 4682, 4683, 9364])
def test_long_animation_whose_segment_boundary_falls_in_its_last_line(newline: str, frame_count: int) -> None:
    # 4,682 frames put the 256 KiB segment boundary inside the last line of the skeleton block (LF)
    frames = "".join(f"time {i}{newline}{NUMERIC_LINE}{newline}" for i in range(frame_count))
    text = f"version 1{newline}nodes{newline}0 \"root\" -1{newline}end{newline}skeleton{newline}{frames}end{newline}"
    doc = parse(text)
    assert len(doc.skeleton) == frame_count
    np.testing.assert_allclose(doc.skeleton[-1].rotations, [[4, 5, 6]])


def test_micro_unit_parse_with_the_segment_boundary_at_every_byte_of_a_line() -> None:
    segment = 1 << 18
    line = NUMERIC_LINE.encode()
    body_lines = segment // (len(line) + 1)
    for shift in range(-3, len(line) + 3):
        head = b" " * (len(line) + shift) + b"7"  # the first line's length moves the boundary through the last one
        lines = [head] + [line] * body_lines
        for extra in (0, body_lines):  # the first boundary, then the second one
            data = b"\n".join(lines + [line] * extra)
            parsed = numeric.parse_micro_units(data, len(lines) + extra)
            assert parsed is not None
            assert parsed.counts.tolist() == [1] + [7] * (len(lines) + extra - 1)
            assert parsed.values[-1] == 6.0


def test_distinct_lines_copied_into_a_padded_text() -> None:
    from formats.smd import numeric, reader

    text = b"triangles\nskin\n0 1 2\nskin\n3 4 5\n0.500000 1 2 3\nx 0.250000 -7.125000\n"
    buffer = np.frombuffer(memoryview(text)[10:], np.uint8)  # a block: a view of the file's bytes
    pad = numeric.PAD

    def joined(starts: list[int], ends: list[int]) -> tuple[bytes, list[int]]:
        padded, text_starts = reader._padded_lines(buffer, np.array(starts), np.array(ends))
        assert padded[:pad].tobytes() == b" " * pad and padded[-3:].tobytes() == b" 0 "  # the parser's frame
        return padded[pad:-3].tobytes(), text_starts.tolist()

    assert joined([5, 16], [10, 21]) == (b"0 1 2\n3 4 5", [0, 6])  # short lines: joined as bytes
    long_lines = ([22, 37], [36, 57])  # 8 bytes or more: copied a word at a time, the last word ending at the end
    assert joined(*long_lines) == (b"0.500000 1 2 3\nx 0.250000 -7.125000", [0, 15])
    assert joined([37, 22, 37], [57, 36, 57]) == (b"x 0.250000 -7.125000\n0.500000 1 2 3\nx 0.250000 -7.125000",
                                                  [0, 21, 36])  # fmt: skip


@pytest.mark.parametrize("ids", [[0, 1, 2, 3], [3, 4, 5], [7], [0, 2, 3], [1, 5, 9], [], list(range(10)),
                                 list(range(3, 10))])  # fmt: skip
@pytest.mark.parametrize("wide", [True, False], ids=["some ids far out", "ids 3 to 9"])
def test_unknown_bone_warnings_by_range_test_are_those_of_a_membership_test(ids: list[int], wide: bool) -> None:
    """Node ids without a gap are checked by a range test (every array's least and largest id first, when every id
    is known): the same warnings as the general membership test."""
    from formats.smd import reader

    used = [np.array([[0, 1, 2], [3, 4, 9]], np.int32), np.array([-1, 5, 6, 2, 2**31 - 1], np.int32)]
    if not wide:
        used = [np.array([[3, 9, 4], [5, 5, 3]], np.int32), np.zeros(0, np.int32), np.array([8, 7, 6], np.int32)]
    node_ids = np.array(ids, np.int64)
    fast: list[str] = []
    reader._warn_unknown(node_ids, used, "vertex bone reference(s) name", fast)
    flat = np.concatenate([a.reshape(-1) for a in used]).astype(np.int64)
    unknown = flat[~np.isin(flat, node_ids)]
    expected = [f"{unknown.size} vertex bone reference(s) name bone ids missing from 'nodes' (e.g. "
                f"{', '.join(str(i) for i in np.unique(unknown)[:5])})"] if unknown.size else []  # fmt: skip
    assert fast == expected


def test_a_repeated_short_block_is_read_once_with_each_file_its_own_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    from formats.smd import reader

    text = ('version 1\nnodes\n0 root -1\n1 "b" 7\n1 "b2" 0\nend\nskeleton\ntime 0\n0 1.5 -0.000000 2 0.1 0.2 0.3\n'
            "1 0 0 1.250000 0 0 0\ntime 2\n0 1e1 0 0 0 0 0\nend\n" + SKINNED.split("end\n", 2)[2])  # fmt: skip
    reader._small_block.cache_clear()
    monkeypatch.setattr(reader, "_REPEATED_BLOCK_CHARACTERS", -1)  # every block read where it stands
    alone = parse(text)
    monkeypatch.undo()
    first, second = parse(text), parse(text)
    assert reader._small_block.cache_info().hits == 2  # (nodes and skeleton, by the second file)
    for doc in (first, second):
        assert doc.warnings == alone.warnings and len(doc.warnings) >= 3  # (unquoted, defined twice, parent)
        assert [(n.id, n.name, n.parent) for n in doc.nodes] == [(n.id, n.name, n.parent) for n in alone.nodes]
        assert [(f.time, f.comment, f.line) for f in doc.skeleton] == [(f.time, f.comment, f.line)
                                                                        for f in alone.skeleton]  # fmt: skip
        for frame, expected in zip(doc.skeleton, alone.skeleton, strict=True):
            for name in ("bone_ids", "positions", "rotations"):
                value, wanted = getattr(frame, name), getattr(expected, name)
                assert value.dtype == wanted.dtype and value.flags.writeable
                np.testing.assert_array_equal(value, wanted)
                assert value.tobytes() == wanted.tobytes()  # (-0.0 as the file's parse gives it)
    first.nodes[0].name, first.skeleton[0].positions[0, 0] = "changed", 9.0
    assert second.nodes[0].name == "root" and second.skeleton[0].positions[0, 0] == 1.5
    assert parse(text).skeleton[0].positions[0, 0] == 1.5
    assert_same_document(parse(text.replace("version 1\n", "version 1\n\n")), alone)  # (another line: read again)
    broken = text.replace("1.250000", "1.2x")
    for _ in range(2):  # an error is raised for every file, naming it
        with pytest.raises(FormatError) as failure:
            parse(broken)
        assert failure.value.path == "fixture.smd" and failure.value.line == 10


@pytest.mark.parametrize("window", [16, 64, 1 << 13])
def test_a_block_end_is_found_where_the_expression_alone_finds_it(window: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from formats.smd import reader

    monkeypatch.setattr(reader, "_WINDOW", window)
    rng = np.random.default_rng(window)
    pieces = ["0 1.000000 2.000000", " end", "END ", "\tEnd\t", "endx", "e", "  ", "end", "extra 1", ""]
    for _ in range(200):
        lines = [pieces[i] for i in rng.integers(0, len(pieces), int(rng.integers(0, 3 * window // 8 + 4)))]
        text = "\n".join(["triangles", *lines]).encode() + (b"\n" if rng.random() < 0.5 else b"")
        for start in {0, len(b"triangles"), min(len(text), window)}:
            found, _ = reader._Cursor(text)._find_end(start)
            expected = reader._END_LINE_BYTES.search(text, start)
            assert (found and found.span()) == (expected and expected.span()), (text, start)


def test_select_links_of_corners_without_links() -> None:
    """Corners that have no links select none, whether or not other corners have some (the quick answer), and with
    links the flat positions of each chosen corner's links in order."""
    from formats.smd.weights import select_links

    counts = np.array([2, 0, 1, 0, 3, 0], np.int32)
    for corners in ([1, 3, 5, 1], [], [0, 2, 4, 2, 1]):
        chosen = np.array(corners, np.int64)
        starts = np.cumsum(counts) - counts
        expected = [start + rank for corner in corners for start in [starts[corner]] for rank in range(counts[corner])]
        for first in (None, starts.astype(np.int64)):
            found = select_links(counts, chosen, first)
            assert found.dtype == np.int64 and found.tolist() == expected
    assert select_links(np.zeros(4, np.int64), np.arange(4)).tolist() == []
