"""IQM codec: IQE documents compile to IQM and read back; every header count and offset is checked against the
file before use; mutated files raise nothing but FormatError."""

from __future__ import annotations

import random
import re
import struct
from pathlib import Path

import numpy as np
import pytest

from formats import iqe, iqm
from formats.errors import FormatError, Warnings
from formats.iqm.layout import HEADER, HEADER_FIELDS, MAGIC
from tests.mutations import fuzz_count, mutate_counts, mutations
from tests.sample_paths import sample_files
from tests.unit.test_iqe_fuzz import FIXTURE
from tests.unit.test_structured_fuzz import IQE_FIXTURE

IQE_SAMPLES = sample_files("iqe", ".iqe")
DOCUMENTS = {"rig fixture": IQE_FIXTURE, "every command": FIXTURE}


def positions_by_mesh(document: iqe.IqeDocument) -> dict[tuple[str, str], np.ndarray]:
    """Each (mesh, material)'s corner positions, triangle by triangle."""
    found: dict[tuple[str, str], np.ndarray] = {}
    for mesh in document.meshes:
        corners = np.asarray(mesh.positions, np.float64)[np.asarray(mesh.face_corners, np.int64)]
        key = (mesh.name, mesh.material)
        found[key] = np.concatenate([found[key], corners]) if key in found else corners
    return found


@pytest.mark.parametrize("name", DOCUMENTS)
def test_fixtures_compile_and_read_back_with_joints_meshes_and_animations(name: str) -> None:
    document = iqe.read_iqe(DOCUMENTS[name])
    data = iqm.write_iqm(document)
    assert data.startswith(MAGIC) and struct.unpack_from("<II", data, 16) == (2, len(data))
    pieces = iqm.iqm_pieces(document)  # what the exporters write, piece after piece
    assert b"".join(pieces) == data and all(pieces)
    back = iqm.read_iqm(data)
    assert [(j.name, j.parent) for j in back.joints] == [(j.name, j.parent) for j in document.joints]
    assert [(a.name, a.framerate, a.loop, len(a.frames)) for a in back.animations] == [
        (a.name, a.framerate, a.loop, len(a.frames)) for a in document.animations]  # fmt: skip
    first, again = iqm.read_iqm_model(data), iqm.read_iqm_model(iqm.write_iqm(back))  # what was read compiles back
    np.testing.assert_array_equal(again.triangles, first.triangles)
    np.testing.assert_array_equal(again.vertex_arrays[0].values, first.vertex_arrays[0].values)


def test_arrays_laid_out_as_the_file_holds_them_are_written_from_the_model_itself() -> None:
    """A model's vertex arrays, triangles and adjacency become pieces that are views of them (no copy of a large
    model's arrays); an array not laid out so (strided, another byte order) is written from a copy, the same
    bytes as its own."""
    model = iqm.compile_document(iqe.read_iqe(IQE_FIXTURE))
    data = iqm.encode_model(model)
    pieces = iqm.encode_model_pieces(model)
    assert b"".join(pieces) == data
    for values in (model.triangles, model.adjacency, *(array.values for array in model.vertex_arrays)):
        assert values is not None and values.size
        assert any(isinstance(piece, memoryview) and np.shares_memory(np.asarray(piece), values) for piece in pieces)
    position = model.vertex_arrays[0]
    wide = np.concatenate([position.values, np.ones((len(position.values), 1), position.values.dtype)], axis=1)
    position.values = wide[:, :3]  # (the same numbers, strided)
    model.triangles = model.triangles.astype(">u4")  # (the same numbers, big-endian)
    assert iqm.encode_model(model) == data
    assert not any(isinstance(piece, memoryview) and np.shares_memory(np.asarray(piece), values)
                   for piece in iqm.encode_model_pieces(model) for values in (wide, model.triangles))  # fmt: skip


@pytest.mark.parametrize("sample", IQE_SAMPLES, ids=[p.name for p in IQE_SAMPLES])
def test_samples_keep_their_geometry_through_iqm(sample: Path) -> None:
    document = iqe.load_iqe(sample)
    back = iqm.read_iqm(iqm.write_iqm(document))
    assert [j.name for j in back.joints] == [j.name for j in document.joints]
    before, after = positions_by_mesh(document), positions_by_mesh(back)
    assert before.keys() == after.keys()
    for key in before:  # triangles keep their corners (degenerate ones aside, which IQM drops)
        assert len(after[key]) <= len(before[key])
        np.testing.assert_allclose(np.unique(after[key], axis=0), np.unique(before[key], axis=0), atol=1e-6)


def header_offsets() -> list[int]:
    return [16 + 4 * index for index in range(len(HEADER_FIELDS))]


def test_every_header_field_is_checked_against_the_file() -> None:
    data = iqm.write_iqm(iqe.read_iqe(IQE_FIXTURE))
    rng = random.Random(7)
    outcomes = set()
    for _ in range(fuzz_count(3000)):
        mutant = mutate_counts(data, header_offsets(), rng)
        try:
            iqm.read_iqm(mutant)
            outcomes.add("accepted")
        except FormatError as error:
            assert error.offset is None or 0 <= error.offset <= len(mutant)
            outcomes.add("rejected")
    assert "rejected" in outcomes


def pointing_fields() -> list[str]:
    """Every count, and the offsets the fixture sets (a zero offset points nowhere; extensions are not read)."""
    values = HEADER.unpack_from(iqm.write_iqm(iqe.read_iqe(IQE_FIXTURE)), 0)[1:]
    return [name for name, value in zip(HEADER_FIELDS, values, strict=True)
            if name not in ("flags", "num_extensions") and (value or not name.startswith("ofs"))]  # fmt: skip


@pytest.mark.parametrize("field", pointing_fields())
def test_a_count_or_offset_past_the_end_is_a_format_error(field: str) -> None:
    data = bytearray(iqm.write_iqm(iqe.read_iqe(IQE_FIXTURE)))
    values = list(HEADER.unpack_from(data, 0))
    values[1 + HEADER_FIELDS.index(field)] = 0xFFFFFFF0
    HEADER.pack_into(data, 0, *values)
    with pytest.raises(FormatError):
        iqm.read_iqm(bytes(data))


def _patched(data: bytes, field: str, offset: int, value: float) -> bytes:
    """The file with the float32 at `offset` bytes into the section that header field `field` points to set."""
    patched = bytearray(data)
    struct.pack_into("<f", patched, HEADER.unpack_from(data, 0)[1 + HEADER_FIELDS.index(field)] + offset, value)
    return bytes(patched)


@pytest.mark.parametrize(("field", "offset", "value", "message"), [
    ("ofs_joints", 8 + 4 * 0, float("inf"), "joint 0 base pose: the number inf is not finite"),
    ("ofs_joints", 8 + 4 * 8, float("nan"), "joint 0 base pose: the number nan is not finite"),
    ("ofs_poses", 8 + 4 * 2, float("nan"), "pose 0 channel offsets: the number nan is not finite"),
    ("ofs_poses", 8 + 4 * 12, float("-inf"), "pose 0 channel scales (offset + 65535 x scale): the number inf is not"),
    ("ofs_poses", 8 + 4 * 12, 1e38, "pose 0 channel scales (offset + 65535 x scale): the number inf is not finite"),
    ("ofs_poses", 8 + 4 * 12, float("nan"), "pose 0 channel scales (offset + 65535 x scale): the number nan is not"),
    ("ofs_anims", 12, float("nan"), "animation 0 framerate: the number nan is not finite"),
])  # fmt: skip
def test_numbers_that_are_not_finite_are_format_errors_at_their_byte(field: str, offset: int, value: float,
                                                                        message: str) -> None:  # fmt: skip
    """As the IQE reader refuses them: Blender would take them silently, and no export could write them back.
    (Pose 0 of the fixture stores channel 2: its scale is read; see the next test for one that is not.)"""
    data = iqm.write_iqm(iqe.read_iqe(FIXTURE))
    with pytest.raises(FormatError, match=re.escape(message)) as raised:
        iqm.read_iqm(_patched(data, field, offset, value))
    start = HEADER.unpack_from(data, 0)[1 + HEADER_FIELDS.index(field)]
    assert raised.value.offset is not None and start <= raised.value.offset <= start + offset + 4 * 10


@pytest.mark.parametrize("value", [1e35, float("nan")])
def test_the_scale_of_a_channel_the_mask_does_not_store_is_never_read(value: float) -> None:
    data = iqm.write_iqm(iqe.read_iqe(FIXTURE))
    assert iqm.read_iqm_model(data).pose_masks[0] == 0b100  # channel 0 is not stored: frames never scale it
    model = iqm.read_iqm_model(_patched(data, "ofs_poses", 8 + 4 * 10, value))
    assert np.isfinite(model.decoded_frames()).all()


def test_nan_in_a_vertex_array_is_read_as_zero_with_a_warning_but_in_tangents_silently() -> None:
    data = iqm.write_iqm(iqe.read_iqe(IQE_FIXTURE))
    model = iqm.read_iqm_model(data)
    position, tangent = model.array("position"), model.array("tangent")
    assert position is not None and tangent is not None
    patched = bytearray(data)
    struct.pack_into("<f", patched, position.offset + 4 * 4, float("nan"))  # vertex 1, y
    for vertex in range(2):  # as the reference compiler writes them where the UVs give no tangent
        struct.pack_into("<4f", patched, tangent.offset + 16 * vertex, *[float("nan")] * 4)
    document = iqm.read_iqm(bytes(patched))
    assert list(document.warnings) == ["1 of 3 vertices have NaN or infinite numbers in their position: read as 0"]
    mesh = document.meshes[0]
    assert mesh.positions[1, 1] == 0.0 and np.isfinite(mesh.positions).all()
    assert mesh.tangents is not None and np.isfinite(mesh.tangents).all()


def test_a_negative_framerate_reads_as_none_given_with_a_warning() -> None:
    data = iqm.write_iqm(iqe.read_iqe(IQE_FIXTURE))
    document = iqm.read_iqm(_patched(data, "ofs_anims", 12, -5.0))
    assert document.animations[0].framerate == 0.0
    assert any("negative framerate -5 read as 0" in warning for warning in document.warnings)


def test_truncated_files_are_format_errors() -> None:
    data = iqm.write_iqm(iqe.read_iqe(IQE_FIXTURE))
    for size in range(0, len(data) - 1, 7):
        with pytest.raises(FormatError):
            iqm.read_iqm(data[:size])


def test_byte_mutants_raise_only_format_error() -> None:
    seeds = [iqm.write_iqm(iqe.read_iqe(text)) for text in DOCUMENTS.values()]
    seeds += [iqm.write_iqm(iqe.load_iqe(p)) for p in IQE_SAMPLES if p.stat().st_size < 100_000]
    accepted = rejected = 0
    with np.errstate(all="ignore"):
        for mutant in mutations(seeds, fuzz_count(3000), seed=20261125):
            try:
                iqm.read_iqm(mutant)
                accepted += 1
            except FormatError:
                rejected += 1
    assert accepted and rejected


@pytest.mark.parametrize("screened", [False, True], ids=["every vertex exact", "float32 screening first"])
@pytest.mark.parametrize("small_blocks", [False, True])
def test_frame_bounds_agree_with_skinning_vertex_by_vertex(small_blocks: bool, screened: bool,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    from formats.iqm import skeleton

    if small_blocks:  # blocks of 16 vertices, some of them using a single joint
        monkeypatch.setattr(skeleton, "_CHUNK_VALUES", 1)
    kept_counts: list[int] = []
    if screened:  # however few vertices: and the screening must have left some out
        monkeypatch.setattr(skeleton, "_SCREEN_FROM_VALUES", 0)
        screen = skeleton._screened

        def counted(*args: object) -> np.ndarray:
            kept = screen(*args)
            kept_counts.append(len(kept))
            return kept

        monkeypatch.setattr(skeleton, "_screened", counted)
    else:
        monkeypatch.setattr(skeleton, "_SCREEN_FROM_VALUES", 1 << 62)

    rng = np.random.default_rng(5)
    parents = [-1, 0, 1, 1, 0]
    joints, vertices, frame_count = len(parents), 200, 4

    def poses(count: int) -> np.ndarray:
        table = np.zeros((count, joints, 10))
        table[..., :3] = rng.normal(size=(count, joints, 3))
        rotation = rng.normal(size=(count, joints, 4))
        table[..., 3:7] = rotation / np.linalg.norm(rotation, axis=-1, keepdims=True)
        table[..., 7:] = 1 + 0.1 * rng.random((count, joints, 3))
        return table

    base, frames = poses(1)[0], poses(frame_count)
    positions = rng.normal(size=(vertices, 3))
    bones = rng.integers(0, joints, size=(vertices, 4)).astype(np.uint8)
    bones[0] = [2, 2, 3, 0]  # a joint named twice
    bones[24:] = 4  # a block of vertices on one joint
    weights = rng.random((vertices, 4)).astype(np.float32)
    weights[1] = 0  # no weight: stays at the origin
    positions[100:110] = positions[99]  # ties
    bounds = skeleton.frame_bounds(parents, base, frames, positions, bones, weights)
    if screened:
        assert len(kept_counts) == 1 and 0 < kept_counts[0] < vertices
        monkeypatch.setattr(skeleton, "_SCREEN_FROM_VALUES", 1 << 62)  # the screening keeps the very extremes
        assert np.array_equal(bounds.view(np.uint32),
                              skeleton.frame_bounds(parents, base, frames, positions, bones, weights).view(np.uint32))

    def world(table: np.ndarray) -> list[np.ndarray]:
        local = skeleton.pose_matrices(table)
        out: list[np.ndarray] = []
        for joint, parent in enumerate(parents):
            matrix = np.vstack([local[joint], [0, 0, 0, 1]])
            out.append(matrix if parent < 0 else out[parent] @ matrix)
        return out

    inverse_bind = [np.linalg.inv(matrix) for matrix in world(base)]
    for frame in range(frame_count):
        skinning = [matrix @ inverse for matrix, inverse in zip(world(frames[frame]), inverse_bind, strict=True)]
        moved = np.array([sum(float(w) * skinning[b][:3] for b, w in zip(bones[v], weights[v], strict=True))
                          @ np.append(positions[v], 1.0) for v in range(vertices)])  # fmt: skip
        expected = [*moved.min(axis=0), *moved.max(axis=0), np.sqrt((moved[:, :2] ** 2).sum(axis=1).max()),
                    np.sqrt((moved**2).sum(axis=1).max())]  # fmt: skip
        np.testing.assert_allclose(bounds[frame], expected, rtol=1e-6, atol=1e-6)


def test_frame_bounds_screening_is_exact_with_matrices_below_float32s_normal_range(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Matrix elements of 2e-45 are float32 subnormals, held with a bit or two: the float32 screening must not
    drop the vertex at the extreme (found by a review)."""
    from formats.iqm import skeleton

    angle = np.arctan2(-2.2, 2.0)
    base = np.zeros((1, 10))
    base[0, 6] = base[0, 7:] = 1
    frames = np.zeros((2, 1, 10))
    frames[:, 0, 6] = 1
    frames[0, 0, 7:] = 1e-30
    frames[1, 0, 5:7] = np.sin(angle / 2), np.cos(angle / 2)
    frames[1, 0, 7:] = np.hypot(2.0, 2.2) * 1e-45
    positions = np.array([[1.1, 0, 0], [0, 0.95, 0], [2, -2, 2], [-2, 2, -2]]) * 1e26
    bones = np.zeros((4, 4), np.uint8)
    weights = np.zeros((4, 4), np.float32)
    weights[:, 0] = 1
    found = {}
    for label, limit in (("screened", 0), ("exact", 1 << 62)):
        monkeypatch.setattr(skeleton, "_SCREEN_FROM_VALUES", limit)
        found[label] = skeleton.frame_bounds([-1], base, frames, positions, bones, weights)
    assert np.array_equal(found["screened"].view(np.uint32), found["exact"].view(np.uint32))


def test_arrays_filled_in_for_meshes_without_them_are_noted_as_the_iqe_writer_notes_them() -> None:
    from formats.errors import Warnings

    triangle = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32)
    corners, sizes = np.array([0, 1, 2], np.int32), np.array([3], np.int32)
    document = iqe.IqeDocument(meshes=[
        iqe.IqeMesh("a", "m", triangle, texcoords=triangle[:, :2], face_corners=corners, face_sizes=sizes),
        iqe.IqeMesh("b", "m", triangle + 1, face_corners=corners, face_sizes=sizes),
    ])  # fmt: skip
    iqm_notes, iqe_notes = Warnings(), Warnings()
    iqm.write_iqm(document, warnings=iqm_notes)
    iqe.write_iqe(document, iqe_notes)
    expected = "texcoords written as defaults for meshes without them: b"
    assert expected in list(iqm_notes) and expected in list(iqe_notes)


WELDED_TRIANGLE = """# Inter-Quake Export
mesh "m"
vp 0 0 0
vp 1 0 0
vp 0 1 0
vp 1 0 0
vp 1 0 0
vt 0 0
vt 1 0
vt 0 1
vt 1 0
vt 0.5 0
vn 0 0 1
vn 0 0 1
vn 0 0 1
vn 0 0 1
vn 0 0 1
fm 0 1 2
fm 0 1 3
fm 0 1 4
"""


def test_triangles_the_compiler_welds_shut_are_left_out_and_counted_in_a_warning() -> None:
    notes = Warnings()
    model = iqm.compile_document(iqe.read_iqe(WELDED_TRIANGLE.encode()), notes=notes)
    # vertex 3 is vertex 1 again: the second triangle is left out; vertex 4 has its own UV: the third stays
    assert model.triangles.shape[0] == 2
    assert list(notes) == ["1 of 3 triangles left out, as the reference iqm compiler leaves them out: two of their "
                           "corners are one vertex (the same position, UV, normal, colour and weights), so they "
                           "have no area and nothing visible is lost"]  # fmt: skip


def test_triangles_using_another_meshs_vertices_read_silently_with_copies() -> None:
    """Engines index the whole vertex array; real files (Red Eclipse's) have meshes using each other's vertices."""
    other = 'mesh "n"\nvp 5 5 5\nvp 6 5 5\nvp 5 6 5\nvt 0 0\nvt 1 0\nvt 0 1\n' + 'vn 0 0 1\n' * 3 + 'fm 0 1 2\n'
    text = WELDED_TRIANGLE.replace("fm 0 1 3\nfm 0 1 4\n", other)
    model = iqm.compile_document(iqe.read_iqe(text.encode()))
    second = model.meshes[1]
    model.triangles[second.first_triangle] = [0, 1, second.first_vertex]  # two of mesh "m"'s vertices
    document = iqm.read_iqm(iqm.encode_model(model))
    assert list(document.warnings) == []
    mesh = document.meshes[1]
    np.testing.assert_array_equal(mesh.positions[mesh.face_corners], [[0, 0, 0], [1, 0, 0], [5, 5, 5]])


def test_a_vertex_count_without_arrays_meshes_or_triangles_is_none_as_engines_read_it() -> None:
    """A real animation file (Red Eclipse's reload_pistol.iqm) says 3,110 vertices and holds nothing of them."""
    document = iqe.read_iqe(FIXTURE)
    document.meshes = []
    data = _with_header_field(iqm.write_iqm(document), "num_vertexes", 3110)
    assert HEADER.unpack_from(data, 0)[1 + HEADER_FIELDS.index("num_vertexes")] == 3110
    again = iqm.read_iqm(bytes(data))
    assert again.meshes == [] and [a.name for a in again.animations] == [a.name for a in document.animations]
    with_mesh = _with_header_field(iqm.write_iqm(iqe.read_iqe(FIXTURE)), "num_vertexarrays", 0)
    with pytest.raises(FormatError, match="vertices but no position array"):
        iqm.read_iqm(with_mesh)


def _with_header_field(data: bytes, field: str, value: int) -> bytes:
    patched = bytearray(data)
    struct.pack_into("<I", patched, HEADER.size - 4 * len(HEADER_FIELDS) + 4 * HEADER_FIELDS.index(field), value)
    return bytes(patched)
