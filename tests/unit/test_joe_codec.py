"""JOE v3 codec: the real samples, the F.5 fixtures, malformed input, the writer's limits and VDrift's heuristics."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from formats import dedup, joe
from formats.errors import FormatError
from tests import joe_fixtures as fx
from tests.sample_paths import sample_dir, sample_files

JOE_SAMPLES = sample_files("joe", ".joe")

# Expected per spec joe.md F.3: faces, verts, normals, uvs, swap fires, degenerate, duplicate faces.
SAMPLE_FACTS = {
    "car_360_body.joe": (7726, 3981, 3697, 4987, False, 0, 0),
    "car_360_glass.joe": (556, 345, 339, 362, False, 0, 0),
    "car_CT_glass_notexcoords.joe": (414, 295, 298, 0, False, 4, 0),
    "carparts_wheel_5_spoke_m.joe": (350, 211, 211, 211, False, 0, 0),
    "jpkmember_zandvoort_cone000.dof-00.joe": (28, 72, 72, 72, True, 0, 0),
    "trackeditor_test3_test_43280faces.joe": (43280, 27407, 42548, 3, False, 0, 3),
    "trackparts_road_cone.joe": (60, 40, 31, 58, False, 0, 0),
}


def test_every_listed_sample_is_present() -> None:
    folder = sample_dir("joe")
    assert sorted(SAMPLE_FACTS) == sorted(p.name for p in folder.glob("*.joe"))


@pytest.mark.parametrize("path", JOE_SAMPLES, ids=lambda p: p.name)
def test_sample_reads_with_the_documented_counts_and_rewrites_byte_identical(path: Path) -> None:
    data = path.read_bytes()
    document = joe.read_joe(data, str(path))
    frame = document.first_frame
    faces, verts, normals, uvs, swap, degenerate, duplicate = SAMPLE_FACTS[path.name]
    assert (frame.face_count, len(frame.positions), len(frame.normals), len(frame.texcoords)) == (
        faces, verts, normals, uvs,
    )  # fmt: skip
    assert joe.normal_swap_would_fire(document) is swap
    assert spoiled_faces(frame) == (degenerate, duplicate)
    assert int(frame.normal_indices.max()) > joe.SIGNED_INDEX_LIMIT or faces != 43280  # unsigned reads
    if faces <= joe.VDRIFT_MAX_FACES:
        assert joe.write_joe(document) == data


def test_sample_warnings_name_the_known_oddities() -> None:
    folder = sample_dir("joe")
    dof = joe.load_joe(str(folder / "jpkmember_zandvoort_cone000.dof-00.joe"))
    assert dof.magic == 0 and dof.notes == ["magic is 0x00000000, not IDP2: made by dof2joe"]
    assert not any("IDP2" in w for w in dof.warnings)  # (normal for dof2joe: a note; the swap check warns)
    big = joe.load_joe(str(folder / "trackeditor_test3_test_43280faces.joe"))
    assert any("43280 faces" in w for w in big.warnings)
    with pytest.raises(FormatError, match="more than 32000"):
        joe.write_joe(big)


def test_winding_classification_of_the_samples() -> None:
    folder = sample_dir("joe")
    glass = joe.load_joe(str(folder / "car_360_glass.joe")).first_frame
    wheel = joe.load_joe(str(folder / "carparts_wheel_5_spoke_m.joe")).first_frame
    assert joe.clockwise_faces(glass).all()
    assert not joe.clockwise_faces(wheel).any()


def spoiled_faces(frame: joe.JoeFrame) -> tuple[int, int]:
    """Faces repeating a vertex index, and faces with the vertices of an earlier one (counted apart)."""
    corners, sizes = frame.vertex_indices.ravel(), np.full(frame.face_count, 3)
    repeating = dedup.faces_repeating_a_vertex(corners, sizes)
    return int(repeating.sum()), int((dedup.later_duplicate_faces(corners, sizes) & ~repeating).sum())


# ------------------------------------------------------------------------------------------------ fixtures


def test_cube_fixture_is_counter_clockwise_and_round_trips() -> None:
    data = fx.cube_bytes()
    document = joe.read_joe(data)
    assert not joe.clockwise_faces(document.first_frame).any()
    assert not joe.normal_swap_would_fire(document)
    assert joe.write_joe(document) == data
    assert len(data) == 16 + 18 * 12 + 12 + 12 * 8 + 12 * 6 + 8 * 4


def test_clockwise_file_is_detected_and_rewound() -> None:
    frame = fx.clockwise_cube().first_frame
    assert joe.clockwise_faces(frame).all()
    faces = joe.importable_faces(frame, rewind_clockwise=True)
    assert faces.flipped.all()
    vertex, _, _ = joe.corner_data(frame, faces)
    np.testing.assert_array_equal(vertex.reshape(-1, 3), fx.cube_frame().vertex_indices)
    kept_order = joe.importable_faces(frame, rewind_clockwise=False)
    assert not kept_order.flipped.any()


def test_normal_swap_repairs_dof2joe_output() -> None:
    document = fx.dof2joe_cube()
    assert joe.normal_swap_would_fire(document)
    joe.swap_normals(document)
    assert not joe.normal_swap_would_fire(document)
    assert not joe.clockwise_faces(document.first_frame).any()


def test_normal_swap_fires_on_an_authored_file_with_perpendicular_normals() -> None:
    assert joe.normal_swap_would_fire(fx.perpendicular_normals_cube())


def test_normal_swap_uses_integer_quarter_of_faces() -> None:
    # 12 faces: the frame votes when more than 12 // 4 = 3 faces are perpendicular.
    for perpendicular, fires in ((3, False), (4, True)):
        document = fx.cube()
        frame = document.first_frame
        frame.normals = np.concatenate([frame.normals, np.roll(frame.normals, 1, axis=1)]).astype(np.float32)
        frame.normal_indices[:perpendicular] += 6
        assert joe.normal_swap_would_fire(document) is fires


def test_any_frame_voting_swaps_every_frame() -> None:
    document = fx.cube()
    document.frames.append(fx.perpendicular_normals_cube().first_frame)
    assert joe.normal_swap_would_fire(document)
    before = [f.normals.copy() for f in document.frames]
    joe.swap_normals(document)
    for old, frame in zip(before, document.frames, strict=True):
        np.testing.assert_array_equal(frame.normals, np.stack((old[:, 0], -old[:, 2], old[:, 1]), axis=1))


def test_collision_box_without_texcoords() -> None:
    document = joe.read_joe(fx.cube_bytes(with_texcoords=False))
    assert not document.first_frame.has_texcoords
    assert joe.texcoord_index_warning(document.first_frame) is None


def test_no_texcoords_but_nonzero_texcoord_indices_is_sanitised_with_a_warning() -> None:
    document = fx.cube(with_texcoords=False)
    document.first_frame.texcoord_indices[2:4] = 7
    frame = joe.read_joe(joe.write_joe(document)).first_frame
    message = joe.texcoord_index_warning(frame)
    assert message is not None and "2 faces" in message
    _, _, texcoords = joe.corner_data(frame, joe.importable_faces(frame, True))
    assert texcoords is None


def test_multi_frame_file_with_different_counts_per_frame() -> None:
    first = fx.cube_frame()
    second = fx.cube_frame(with_texcoords=False)
    second.positions = (second.positions * 2).astype(np.float32)
    document = joe.JoeDocument(frames=[first, second])
    data = joe.write_joe(document)
    again = joe.read_joe(data)
    assert len(again.frames) == 2 and any("only frame 0" in w for w in again.warnings)
    np.testing.assert_array_equal(again.frames[1].positions, second.positions)
    assert len(again.frames[1].texcoords) == 0


def test_degenerate_duplicate_unused_and_zero_normals_are_handled() -> None:
    frame = fx.cube_frame()
    frame.positions = np.concatenate([frame.positions, [[9, 9, 9]]]).astype(np.float32)  # unused vertex
    frame.normals[0] = 0.0  # zero-length normal
    frame.vertex_indices = np.concatenate([frame.vertex_indices, [[0, 0, 1], [3, 1, 0]]]).astype(np.uint16)
    frame.normal_indices = np.concatenate([frame.normal_indices, [[0, 0, 0], [0, 0, 0]]]).astype(np.uint16)
    frame.texcoord_indices = np.concatenate([frame.texcoord_indices, [[0, 0, 0], [0, 0, 0]]]).astype(np.uint16)
    document = joe.read_joe(joe.write_joe(joe.JoeDocument(frames=[frame])))
    faces = joe.importable_faces(document.first_frame, rewind_clockwise=True)
    assert spoiled_faces(document.first_frame) == (1, 1) and len(faces.flipped) == 14  # (every face is kept)
    assert not joe.normal_swap_would_fire(document)


# ---------------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("data", "message", "offset"),
    [
        (b"IDP2", "too short", 0),
        (struct.pack("<4I", joe.MAGIC_IDP2, 2, 0, 1), "version 2", 4),
        (struct.pack("<4I", joe.MAGIC_IDP2, 3, 0, 0), "no frames", 12),
        (fx.raw_joe(header=(joe.MAGIC_IDP2, 3, 0xFFFFFFFF, 1)), "faces needs", 16),
        (fx.raw_joe(counts=(0x40000000, 0, 1), floats=0), "vertices", 34),
        (fx.raw_joe(floats=5), "needs", 34),
        (fx.raw_joe(counts=(2, 0, 1)), "vertex index 2", 16),
        (fx.raw_joe(faces=[(0, 1, 2, 0, 0, 1, 0, 0, 0)]), "normal index 1", 22),
        (fx.raw_joe(faces=[(0, 1, 2, 0, 0, 0, 0, 0, 1)], counts=(3, 1, 1)), "texcoord index 1", 28),
    ],
    ids=["short-header", "version", "zero-frames", "huge-face-count", "huge-vertex-count", "truncated-arrays",
         "vertex-index", "normal-index", "texcoord-index"],
)  # fmt: skip
def test_bad_input_is_a_format_error_with_its_byte_offset(data: bytes, message: str, offset: int) -> None:
    with pytest.raises(FormatError, match=message) as caught:
        joe.read_joe(data, "bad.joe")
    assert caught.value.offset == offset
    assert str(caught.value).startswith(f"bad.joe, byte {offset}: ")


def test_trailing_bytes_are_a_warning() -> None:
    document = joe.read_joe(fx.cube_bytes() + b"\0" * 7)
    assert any("7 trailing bytes" in w for w in document.warnings)


def test_any_magic_is_accepted_with_a_warning() -> None:
    document = fx.cube(magic=0x12345678)
    again = joe.read_joe(joe.write_joe(document))
    assert again.magic == 0x12345678 and any("not IDP2" in w for w in again.warnings)


# ------------------------------------------------------------------------------------------------- writing


def test_build_frame_deduplicates_by_exact_value_in_first_seen_order() -> None:
    positions = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 0], [-0.0, 1, 0]], np.float32)
    normals = np.tile(np.array([[0, 0, 1]], np.float32), (6, 1))
    frame = joe.build_frame(positions, normals, None)
    np.testing.assert_array_equal(frame.vertex_indices, [[0, 1, 2], [1, 0, 3]])  # -0.0 stays distinct
    assert len(frame.normals) == 1
    np.testing.assert_array_equal(frame.texcoords, [[0, 0]])
    assert not frame.texcoord_indices.any()


def test_document_from_triangles_writes_ccw_and_flips_v() -> None:
    positions = np.array([[0, 0, 0], [0, 1, 0], [1, 0, 0]], np.float32)  # CW seen from +Z
    normals = np.tile(np.array([[0, 0, 1]], np.float32), (3, 1))
    uvs = np.array([[0, 0], [0, 1], [1, 0.25]], np.float32)
    frame = joe.document_from_triangles(positions, normals, uvs).first_frame
    corners = frame.positions[frame.vertex_indices[0]]
    np.testing.assert_array_equal(corners, positions[[0, 2, 1]])
    np.testing.assert_array_equal(frame.texcoords[frame.texcoord_indices[0]], [[0, 1], [1, 0.75], [0, 0]])


def test_writer_refuses_more_than_32000_faces_and_warns_above_signed_indices() -> None:
    count = 32001
    positions = np.random.default_rng(1).random((3 * count, 3), dtype=np.float32)
    normals = np.tile(np.array([[0, 0, 1]], np.float32), (3 * count, 1))
    with pytest.raises(FormatError, match="32001 triangles"):
        joe.write_joe(joe.document_from_triangles(positions, normals, None))
    warnings: list[str] = []
    small = joe.document_from_triangles(positions[: 3 * 12000], normals[: 3 * 12000], None)
    joe.write_joe(small, warnings)
    assert any("signed" in w for w in warnings)


def test_more_than_65536_distinct_values_is_refused() -> None:
    count = 22000  # 66000 distinct positions
    positions = np.random.default_rng(2).random((3 * count, 3), dtype=np.float32)
    normals = np.tile(np.array([[0, 0, 1]], np.float32), (3 * count, 1))
    with pytest.raises(FormatError, match="16-bit"):
        joe.document_from_triangles(positions, normals, None)


def test_placeholder_texcoord_written_for_meshes_without_uvs_reads_back_as_no_uv_map() -> None:
    positions = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32)
    normals = np.tile(np.array([[0, 0, 1]], np.float32), (3, 1))
    frame = joe.read_joe(joe.write_joe(joe.document_from_triangles(positions, normals, None))).first_frame
    assert frame.has_texcoords and not frame.has_uv_map
    faces = joe.importable_faces(frame, rewind_clockwise=True)
    assert joe.corner_data(frame, faces)[2] is None
    assert fx.cube_frame().has_uv_map


def test_vertex_table_gives_the_same_corners_as_per_corner_positions() -> None:
    rng = np.random.default_rng(3)
    table = rng.integers(0, 4, (50, 3)).astype(np.float32)  # with duplicate rows and unused vertices
    corner_vertices = rng.integers(0, 40, 300)
    positions = table[corner_vertices]
    normals = rng.normal(size=(300, 3)).astype(np.float32)
    plain = joe.document_from_triangles(positions, normals, None).first_frame
    indexed = joe.document_from_triangles(positions, normals, None, (table, corner_vertices)).first_frame
    np.testing.assert_array_equal(
        indexed.positions[indexed.vertex_indices.astype(np.intp)], plain.positions[plain.vertex_indices.astype(np.intp)]
    )
    assert len(indexed.positions) == len(plain.positions)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_numbers_are_read_as_they_are_zeroed_for_import_and_refused_on_write(bad: float) -> None:
    document = fx.cube()
    document.first_frame.positions[3, 1] = bad
    with pytest.raises(FormatError, match="1 of 8 positions are NaN or infinite"):
        joe.write_joe(document)
    data = bytearray(fx.cube_bytes())
    offset = data.find(np.asarray(fx.cube().first_frame.positions[3], "<f4").tobytes())
    data[offset + 4 : offset + 8] = np.float32(bad).tobytes()
    document = joe.read_joe(bytes(data))
    frame = document.first_frame
    assert not document.warnings and np.isnan(frame.positions[3, 1]) == np.isnan(bad)  # (read as the file has it)
    frame.texcoords[[0, 2]] = np.inf
    assert joe.zero_non_finite(frame) == ["1 of 8 positions are NaN or infinite: read as 0",
                                          "2 of 4 texcoords are NaN or infinite: read as 0"]  # fmt: skip
    assert frame.positions[3, 1] == 0.0 and (frame.texcoords[[0, 2]] == 0.0).all()
    assert joe.write_joe(document)  # (writable again)
    assert joe.zero_non_finite(frame) == []


def test_a_file_of_another_kind_is_called_so() -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(64)  # an image given the .joe extension
    with pytest.raises(FormatError, match="not a JOE file: it starts with bytes 89 50 4E 47, not IDP2 and version 3"):
        joe.read_joe(png)
    other_version = bytearray(fx.cube_bytes())
    struct.pack_into("<i", other_version, 4, 2)  # a JOE of another version is still called a JOE
    with pytest.raises(FormatError, match="JOE version 2 is not supported"):
        joe.read_joe(bytes(other_version))
