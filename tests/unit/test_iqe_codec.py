"""IQE codec: real samples round-trip, hand-written fixtures for every command, errors carry line and column."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from formats.errors import FormatError
from formats.iqe import (
    IqeAnimation,
    IqeDocument,
    IqeJoint,
    IqeMesh,
    limit_blend_weights,
    load_iqe,
    parent_first_order,
    read_iqe,
    sanitize_name,
    save_iqe,
    write_iqe,
)
from formats.iqe.poses import matrices_from_quaternions
from qmap_compiler import parallel
from tests.sample_paths import sample_files

SAMPLES = sample_files("iqe", ".iqe")
HEADER = "# Inter-Quake Export\n"


def parse(text: str) -> IqeDocument:
    return read_iqe(text.encode("utf-8"), "fixture.iqe")


def assert_same_document(first: IqeDocument, second: IqeDocument) -> None:
    assert [(m.name, m.material) for m in first.meshes] == [(m.name, m.material) for m in second.meshes]
    for a, b in zip(first.meshes, second.meshes, strict=True):
        np.testing.assert_array_equal(a.face_corners, b.face_corners)
        np.testing.assert_array_equal(a.face_sizes, b.face_sizes)
        for field in ("positions", "texcoords", "normals", "tangents", "bitangents", "colors", "blend_weights"):
            left, right = getattr(a, field), getattr(b, field)
            assert (left is None) == (right is None), field
            if left is not None:
                np.testing.assert_allclose(left, right, atol=1e-6, err_msg=field)
        for field in ("blend_indices", "smooth_indices", "edge_smooth", "face_smooth_groups", "face_smooth_uv"):
            left, right = getattr(a, field), getattr(b, field)
            assert (left is None) == (right is None), field
            if left is not None:
                np.testing.assert_array_equal(left, right, err_msg=field)
        assert sorted(a.custom) == sorted(b.custom)
        for slot in a.custom:
            np.testing.assert_allclose(a.custom[slot], b.custom[slot], atol=1e-6)
    assert [(j.name, j.parent) for j in first.joints] == [(j.name, j.parent) for j in second.joints]
    np.testing.assert_allclose(first.base_pose_array(), second.base_pose_array(), atol=1e-6)
    assert len(first.animations) == len(second.animations)
    for a, b in zip(first.animations, second.animations, strict=True):
        assert (a.name, a.loop) == (b.name, b.loop)
        assert a.framerate == pytest.approx(b.framerate, abs=1e-6)
        np.testing.assert_allclose(a.frames, b.frames, atol=1e-6)
    assert first.comments == second.comments
    assert first.comment_section == second.comment_section


# ---------------------------------------------------------------------------------------------------- samples


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_sample_parses_with_content(path: Path) -> None:
    document = load_iqe(path)
    assert document.meshes and document.joints
    assert not document.warnings
    for mesh in document.meshes:
        assert mesh.face_count and mesh.normals is not None and mesh.texcoords is not None
        assert mesh.blend_indices is not None and mesh.blend_weights is not None
        assert int(mesh.face_corners.max()) < mesh.vertex_count
    text = path.read_bytes()
    assert sum(m.vertex_count for m in document.meshes) == text.count(b"\nvp ")
    assert sum(m.face_count for m in document.meshes) == text.count(b"\nfm ")
    frame_lines = text.count(b"\nframe") - text.count(b"\nframerate")
    assert sum(a.frames.shape[0] for a in document.animations) == frame_lines


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_sample_round_trip(path: Path, tmp_path: Path) -> None:
    document = load_iqe(path)
    target = tmp_path / "copy.iqe"
    save_iqe(target, document)
    again = load_iqe(target)
    assert_same_document(document, again)
    assert max(len(line) for line in target.read_bytes().split(b"\n")) < 512


def test_sample_details() -> None:
    by_name = {p.name: p for p in SAMPLES}
    if "unv_drill.iqe" not in by_name:
        pytest.skip("shared samples absent")
    drill = load_iqe(by_name["unv_drill.iqe"])
    assert drill.animations[0].name == "Take 001"
    assert drill.animations[0].framerate == pytest.approx(30.1034)
    assert any(a.loop for a in drill.animations)
    assert [m.material for m in drill.meshes] == ["models/buildables/drill/drill"] * 2
    rocket = load_iqe(by_name["unv_rocket.iqe"])
    assert [(j.name, j.parent) for j in rocket.joints] == [("Bone_rocket", -1), ("Bone_nozzle", 0)]
    np.testing.assert_allclose(rocket.joints[1].translation, (-4.53096294, -9.53674316e-07, 0), rtol=1e-7)
    assert rocket.meshes[0].tangents is not None and rocket.meshes[0].tangents.shape[1] == 4
    assert [v.kind for v in rocket.vertex_arrays][:3] == ["position", "texcoord", "normal"]


# ---------------------------------------------------------------------------------------------------- fixtures

STATIC_FA = (
    HEADER
    + 'mesh "first mesh"\nmaterial "stone wall"\n'
    + "vp 0 0 0\nvp 1 0 0\nvp 1 1 0\nvp 0 1 0\nvp 0.5 2 0\n"
    + "fa 0 1 2 3 4\n"  # an n-gon with absolute indices
    + "fa -5 -3 -1\n"  # negative: relative to the last vertex so far
)


def test_fa_ngon_and_negative_indices() -> None:
    document = parse(STATIC_FA)
    (mesh,) = document.meshes
    assert (mesh.name, mesh.material) == ("first mesh", "stone wall")
    assert mesh.face_sizes.tolist() == [5, 3]
    assert mesh.face_corners.tolist() == [0, 1, 2, 3, 4, 0, 2, 4]
    assert mesh.blender_corners().tolist() == [0, 4, 3, 2, 1, 0, 4, 2]
    assert mesh.face_starts().tolist() == [0, 5]
    assert_same_document(document, read_iqe(write_iqe(document)))


def test_fm_is_relative_to_the_mesh_and_material_does_not_reset_it() -> None:
    text = (
        HEADER
        + "mesh a\nvp 0 0 0\nvp 1 0 0\nvp 0 1 0\nfm 0 1 2\n"
        + "mesh b\nmaterial m1\nvp 5 0 0\nvp 6 0 0\nvp 5 1 0\nvp 6 1 0\nfm 0 1 2\nmaterial m2\nfm 1 3 2\nfm -1 -2 -3\n"
    )
    document = parse(text)
    assert [(m.name, m.material, m.vertex_count) for m in document.meshes] == [
        ("a", "", 3),
        ("b", "m1", 3),
        ("b", "m2", 3),
    ]
    np.testing.assert_array_equal(document.meshes[1].positions[document.meshes[1].face_corners, 0], [5, 6, 5])
    np.testing.assert_array_equal(document.meshes[2].positions[document.meshes[2].face_corners, 0], [6, 6, 5, 6, 5, 6])
    assert_same_document(document, read_iqe(write_iqe(document)))


def test_crlf_bom_quoted_names_leading_space_and_hash_comments() -> None:
    text = (
        '\ufeff  # Inter-Quake Export (written by hand)\r\n# a note\r\n  joint "root bone" -1\r\n\tpq 1 2 3 0 0 0 1\r\n'
        '\tmesh "my mesh"\r\nmaterial "a b"\r\nvp 0 0 0 # trailing note\r\nvp 1 0 0\r\nvp 0 1 0\r\nvb 0 1\r\nvb 0 1\r\n'
        "vb 0 1\r\nfm 0 1 2\r\n"
    )
    document = read_iqe(text.encode("utf-8"))
    assert document.comments == [" a note"]
    assert document.joints[0].name == "root bone"
    assert document.joints[0].translation == (1.0, 2.0, 3.0)
    assert document.joints[0].rotation == (0.0, 0.0, 0.0, -1.0)  # w flipped to <= 0
    assert (document.meshes[0].name, document.meshes[0].material) == ("my mesh", "a b")
    assert document.meshes[0].face_corners.tolist() == [0, 1, 2]
    assert_same_document(document, read_iqe(write_iqe(document)))


CR_FIXTURE = (
    HEADER + 'joint "root" -1\npq 0 0 1 0 0 0 1\nmesh "box"\nmaterial "stone"\nvp 0 0 0\nvp 1 0 0\nvp 0 1 0\n'
    "vt 0 0\nvt 1 0\nvt 0 1\nvb 0 1\nvb 0 1\nvb 0 1\nfm 0 1 2\n"
)


def test_cr_only_line_ends_read_as_the_lf_file() -> None:
    lf = parse(CR_FIXTURE)
    old_mac = read_iqe(CR_FIXTURE.replace("\n", "\r").encode(), "mac.iqe")
    assert old_mac.warnings == lf.warnings == []
    assert [(j.name, j.parent, j.translation) for j in old_mac.joints] == [("root", -1, (0.0, 0.0, 1.0))]
    assert_same_document(old_mac, lf)
    np.testing.assert_array_equal(old_mac.meshes[0].texcoords, lf.meshes[0].texcoords)  # type: ignore[arg-type]
    long_line = CR_FIXTURE.replace("vp 1 0 0", "vp 1 0 0" + " " * 600).replace("\n", "\r").encode()
    assert any("longer than 511 bytes" in w for w in read_iqe(long_line).warnings)  # still told of real long lines


def test_pq_without_w_pm_and_pa() -> None:
    text = (
        HEADER
        + "joint a -1\njoint b 0\njoint c 1\njoint d 2\n"
        + "pq 0 0 0 0.6 0 0\n"  # w rebuilt as -0.8
        + "pm 1 2 3  0 -2 0  2 0 0  0 0 2\n"  # +90 degrees about Z, scale 2
        + "pm 0 0 0  -1 0 0  0 1 0  0 0 1\n"  # mirror in X
        + "pa 0 0 0 0.3 0.5 0.7 1 2 3\n"
    )
    joints = parse(text).joints
    np.testing.assert_allclose(joints[0].rotation, (0.6, 0, 0, -0.8), atol=1e-9)
    np.testing.assert_allclose(joints[1].translation, (1, 2, 3))
    half = math.sqrt(0.5)
    np.testing.assert_allclose(joints[1].rotation, (0, 0, -half, -half), atol=1e-9)
    np.testing.assert_allclose(joints[1].scale, (2, 2, 2), atol=1e-9)
    np.testing.assert_allclose(joints[2].scale, (-1, -1, -1), atol=1e-9)
    np.testing.assert_allclose(np.abs(joints[2].rotation), (1, 0, 0, 0), atol=1e-9)
    rx, ry, rz = 0.3, 0.5, 0.7
    rotation_x = np.array([[1, 0, 0], [0, math.cos(rx), -math.sin(rx)], [0, math.sin(rx), math.cos(rx)]])
    rotation_y = np.array([[math.cos(ry), 0, math.sin(ry)], [0, 1, 0], [-math.sin(ry), 0, math.cos(ry)]])
    rotation_z = np.array([[math.cos(rz), -math.sin(rz), 0], [math.sin(rz), math.cos(rz), 0], [0, 0, 1]])
    expected = rotation_z @ rotation_y @ rotation_x
    np.testing.assert_allclose(matrices_from_quaternions(np.array([joints[3].rotation]))[0], expected, atol=1e-9)
    assert joints[3].rotation[3] <= 0 and joints[3].scale == (1.0, 2.0, 3.0)


def test_unnormalised_quaternion_is_kept_as_written_with_a_warning() -> None:
    # The reference compiler never normalises a written quaternion (spec iqe.md, `pq`): IQM frames quantise the
    # values as written, so the document keeps them (turned to w <= 0); matrices are built from the normalised one.
    document = parse(HEADER + "joint a\npq 0 0 0 0.1 0.2 0.3 0.5\n")
    rotation = np.array(document.joints[0].rotation)
    np.testing.assert_allclose(rotation, -np.array([0.1, 0.2, 0.3, 0.5]))
    assert any("unit length" in warning for warning in document.warnings)
    assert "\npq 0 0 0 -0.1 -0.2 -0.3 -0.5\n" in write_iqe(document).decode()


def test_custom_arrays_colours_tangent_bitangent_and_smoothing() -> None:
    text = (
        HEADER
        + 'vertexarray custom3 ubyte 2 "wear mask"\n'
        + "smoothuv 1\nsmoothgroup 4\nsmoothangle 45\n"
        + "mesh m\n"
        + "vp 0 0 0\nvn 0 0 1\nvx 1 0 0 0 1 0\nvc 1 0 0\nv3 0.25 0.5 9 9\nv7 1 2 3 4\nvs 7\n"
        + "vp 1 0 0\nvn 0 0 1\nvx 1 0 0 0 -1 0\nvc 0 1 0 0.5\nv3 1\nv7\nvs 7\n"
        + "vp 0 1 0\nvn 0 0 1\nvx 1 0 0 1\nvc 0 0 1 1\nv3 0 1\nv7 0 0 0 1\nvs 8\n"
        + "fm 0 1 2\nfs 1 0 1\nsmoothgroup 5\nsmoothuv 0\nfm 2 1 0\nfs 0 0 0\n"
    )
    document = parse(text)
    mesh = document.meshes[0]
    assert document.custom_format(3).name == "wear mask"
    np.testing.assert_allclose(mesh.custom[3], [[0.25, 0.5], [1, 0], [0, 1]])
    np.testing.assert_allclose(mesh.custom[7], [[1, 2, 3, 4], [0, 0, 0, 0], [0, 0, 0, 1]])
    np.testing.assert_allclose(mesh.colors, [[1, 0, 0, 1], [0, 1, 0, 0.5], [0, 0, 1, 1]])
    assert mesh.tangents is not None and mesh.bitangents is not None
    np.testing.assert_allclose(mesh.tangents[:, 3], [1, -1, 1])
    np.testing.assert_allclose(mesh.bitangents, [[0, 1, 0], [0, -1, 0], [0, 1, 0]])
    assert mesh.smooth_indices is not None and mesh.smooth_indices.tolist() == [7, 7, 8]
    assert mesh.edge_smooth is not None and mesh.edge_smooth.tolist() == [1, 0, 1, 0, 0, 0]
    assert mesh.blender_edge_smooth() is not None
    assert mesh.face_smooth_groups is not None and mesh.face_smooth_groups.tolist() == [4, 5]
    assert mesh.face_smooth_angles is not None and mesh.face_smooth_angles.tolist() == [45, 45]
    assert mesh.face_smooth_uv is not None and mesh.face_smooth_uv.tolist() == [True, False]
    written = write_iqe(document)
    assert b'vertexarray custom3 ubyte 2 "wear mask"' in written
    assert_same_document(document, read_iqe(written))


def test_comment_section_is_kept_verbatim() -> None:
    text = HEADER + "mesh m\nvp 0 0 0\nvp 1 0 0\nvp 0 1 0\nfm 0 1 2\ncomment\nexporter notes\r\nvp 9 9 9\n"
    document = parse(text)
    assert document.comment_section == "exporter notes\r\nvp 9 9 9\n"
    assert document.meshes[0].vertex_count == 3
    assert write_iqe(document).endswith(b"comment\nexporter notes\r\nvp 9 9 9\n")


def test_animations_short_frames_padding_framerate_and_loop() -> None:
    text = (
        HEADER
        + "joint a -1\njoint b 0\npq 0 0 1 0 0 0 -1\npq 0 0 2 0 0 0 -1\n"
        + "animation run\nframerate 12\nloop\nframe\npq 1 0 0 0 0 0 -1\npq 2 0 0 0 0 0 -1\nframe\npq 3 0 0 0 0 0 -1\n"
        + "frame\nframe\npq 4 0 0 0 0 0 -1\npq 5 0 0 0 0 0 -1\n"
        + "animation\npq 6 0 0 0 0 0 -1\npq 7 0 0 0 0 0 -1\npq 8 0 0 0 0 0 -1\n"
    )
    document = parse(text)
    run, unnamed = document.animations
    assert (run.name, run.framerate, run.loop) == ("run", 12.0, True)
    assert (unnamed.name, unnamed.framerate, unnamed.loop) == ("", 0.0, False)
    assert run.frames.shape == (3, 2, 10)  # the empty frame is skipped
    np.testing.assert_allclose(run.frames[:, :, 0], [[1, 2], [3, 0], [4, 5]])
    np.testing.assert_allclose(run.frames[1, 1], (0, 0, 0, 0, 0, 0, -1, 1, 1, 1))  # identity, not the base pose
    np.testing.assert_allclose(unnamed.frames[:, :, 0], [[6, 7]])  # the extra pose is ignored
    assert any("fewer poses" in w for w in document.warnings)
    assert any("more poses" in w for w in document.warnings)
    assert_same_document(document, read_iqe(write_iqe(document)))


def test_more_than_four_influences_keeps_the_compilers_four() -> None:
    text = HEADER + "joint a\njoint b 0\nvp 0 0 0\nvb 0 .5 1 .25 0 .25 1 .0005 1 .1\nvp 1 0 0\nvb 1 1\nvp 0 1 0\nvb\n"
    document = parse(text + "fm 0 1 2\n")
    mesh = document.meshes[0]
    assert mesh.blend_indices is not None and mesh.blend_weights is not None
    assert mesh.blend_indices.tolist() == [[0, 1, 0, 1], [1, 0, 0, 0], [0, 0, 0, 0]]
    np.testing.assert_allclose(mesh.blend_weights, [[0.5, 0.25, 0.25, 0.1], [1, 0, 0, 0], [0, 0, 0, 0]])
    assert not any("influences" in w for w in document.warnings)  # only four weights exceed 1e-3
    document = parse(text + "vp 0 0 1\nvb 1 .3 0 .1 1 .2 0 .25 1 .15\nfm 0 1 3\n")
    assert document.meshes[0].blend_indices is not None and document.meshes[0].blend_weights is not None
    assert document.meshes[0].blend_indices[3].tolist() == [1, 0, 1, 1]
    np.testing.assert_allclose(document.meshes[0].blend_weights[3], [0.3, 0.25, 0.2, 0.15])
    assert any("more than 4 influences" in w for w in document.warnings)


def test_static_file_without_faces_keeps_vertices_and_warns() -> None:
    document = parse(HEADER + "vp 0 0 0\nvp 1 0 0\nvp 0 1 0\n")
    assert document.meshes[0].vertex_count == 3 and document.meshes[0].face_count == 0
    assert any("no faces" in w for w in document.warnings)


def test_repeated_mesh_block_is_merged_with_a_warning() -> None:
    text = HEADER + "mesh a\nvp 0 0 0\nvp 1 0 0\nvp 0 1 0\nfm 0 1 2\nmesh b\nvp 0 0 1\nvp 1 0 1\nvp 0 1 1\nfm 0 1 2\n"
    text += "mesh a\nvp 0 0 2\nvp 1 0 2\nvp 0 1 2\nfm 0 1 2\n"
    document = parse(text)
    assert [(m.name, m.vertex_count, m.face_count) for m in document.meshes] == [("a", 6, 2), ("b", 3, 1)]
    assert any("repeated" in w for w in document.warnings)
    with pytest.raises(FormatError, match="appears again"):
        write_iqe(IqeDocument(meshes=[document.meshes[0], document.meshes[1], document.meshes[0]]))


# ---------------------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("text", "line", "column", "words"),
    [
        ("#Inter-Quake Export\n", 1, 1, "not an IQE file"),
        ("", 1, 1, "not an IQE file"),
        (HEADER + "vp 0 0 0\nvp 1 0 0\nvp 0 1 0\nfm 0 1 3\n", 5, 8, "refers to vertex 3"),
        (HEADER + "vp 0 0 0\nvp 1 0 0\nvp 0 1 0\nfa 0 -4 1\n", 5, 6, "refers to vertex -1"),
        (HEADER + "vp 0 0 0\nvp 1 0 zero\n", 3, 8, "not a number"),
        (HEADER + "vp 0 0 nan\n", 2, 8, "not finite"),
        (HEADER + "vn 0 1e39 0\n", 2, 6, "too large"),
        (HEADER + "vp 0 0 0\nvp 1 0 0\nfm 0 1.5 1\n", 4, 6, "integer"),
        (HEADER + "mesh a\nvp 0 0 0\nvt 0 0\nvp 1 0 0\nmesh b\n", 5, 1, "one entry per vertex"),
        (HEADER + "joint a -1\njoint b 2\njoint c 0\n", 3, 9, "declared before"),
        (HEADER + "joint a -1\nvp 0 0 0\nvb 0 0.5 1 0.5\n", 4, 10, "out of range"),
        (HEADER + "vp 0 0 0\nvb 300 1\n", 3, 4, "exceeds 255"),
        (HEADER + "vertexarray custom0 floaty 2 x\n", 2, 21, "unknown"),
        (HEADER + "framerate fast\n", 2, 11, "not a number"),
        (HEADER + "smoothgroup -99999999999999999999\n", 2, 13, "-99999999999999999999 is outside the 32-bit"),
        (HEADER + "smoothgroup 4294967296\n", 2, 13, "4294967296 is outside the 32-bit integers"),
        (HEADER + "smoothgroup 9223372036854775808\n", 2, 13, "is outside the 32-bit integers"),
        (HEADER + "smoothgroup " + "9" * 100_000 + "\n", 2, 13, "a word of 100,000 characters is not an integer"),
        (HEADER + "joint a 2147483648\n", 2, 9, "joint parent: 2147483648 is outside"),
        (HEADER + "framerate " + "1" * 5000 + "x\n", 2, 11, "a word of 5,001 characters is not a number"),
    ],
)
def test_errors_carry_line_and_column(text: str, line: int, column: int, words: str) -> None:
    with pytest.raises(FormatError, match=words) as caught:
        parse(text)
    assert (caught.value.path, caught.value.line, caught.value.column) == ("fixture.iqe", line, column)


def test_fs_must_pair_with_faces() -> None:
    with pytest.raises(FormatError, match="flags") as caught:
        parse(HEADER + "vp 0 0 0\nvp 1 0 0\nvp 0 1 0\nfm 0 1 2\nfs 1 1\n")
    assert caught.value.line == 6


def test_load_missing_file_is_a_format_error(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="cannot read"):
        load_iqe(tmp_path / "absent.iqe")


# ---------------------------------------------------------------------------------------------------- writer


def triangle_mesh(name: str = "tri", material: str = "mat") -> IqeMesh:
    return IqeMesh(
        name,
        material,
        np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32),
        face_corners=np.array([0, 1, 2], np.int32),
        face_sizes=np.array([3], np.int32),
    )


def test_writer_refuses_unwritable_names_and_bad_hierarchy() -> None:
    with pytest.raises(FormatError, match="cannot represent"):
        write_iqe(IqeDocument(meshes=[triangle_mesh('say "hi"')]))
    with pytest.raises(FormatError, match="parents must come before"):
        write_iqe(IqeDocument(joints=[IqeJoint("child", 1), IqeJoint("parent", -1)]))
    assert sanitize_name('say "hi"\n') == ("say 'hi' ", True)
    assert parent_first_order([2, -1, 1]) == [1, 2, 0]
    bad = triangle_mesh()
    bad.positions[0, 0] = np.nan
    with pytest.raises(FormatError, match="NaN"):
        write_iqe(IqeDocument(meshes=[bad]))


def test_writer_splits_long_polygons_and_turns_quaternions_to_negative_w() -> None:
    sides = 400
    angles = np.linspace(0, 2 * np.pi, sides, endpoint=False)
    positions = np.stack((np.cos(angles), np.sin(angles), np.zeros(sides)), axis=1).astype(np.float32)
    mesh = IqeMesh("disc", "", positions, face_corners=np.arange(sides, dtype=np.int32), face_sizes=np.array([sides]))
    joints = [IqeJoint("root", -1, rotation=(0.0, 0.0, 0.0, 2.0), scale=(1.0, 1.0, 1.0))]
    frames = np.zeros((1, 1, 10), np.float32)
    frames[0, 0] = (0, 0, 0, 0, 0, 0.6, 0.8, 1, 1, 1)
    document = IqeDocument(meshes=[mesh], joints=joints, animations=[IqeAnimation("a", 30.0, False, frames)])
    data = write_iqe(document)
    assert max(len(line) for line in data.split(b"\n")) < 512
    again = read_iqe(data)
    corners = again.meshes[0].face_corners
    assert again.meshes[0].face_sizes.sum() < sides + 3 * len(again.meshes[0].face_sizes)
    assert set(corners.tolist()) == set(range(sides))
    assert again.joints[0].rotation == (0.0, 0.0, 0.0, -2.0)  # kept as given (lossless IQM <-> IQE)
    np.testing.assert_allclose(again.animations[0].frames[0, 0, 3:7], (0, 0, -0.6, -0.8), atol=1e-7)
    assert b"framerate 30\n" in data


def test_float32_values_round_trip_exactly() -> None:
    random = np.random.default_rng(7)
    mesh = triangle_mesh()
    mesh.positions = (random.standard_normal((3, 3)) * 10.0 ** random.integers(-20, 20, (3, 3))).astype(np.float32)
    again = read_iqe(write_iqe(IqeDocument(meshes=[mesh])))
    np.testing.assert_array_equal(again.meshes[0].positions, mesh.positions)


def test_limit_blend_weights() -> None:
    indices, weights = limit_blend_weights([[3, 1, 2, 5, 7], [0, 0, 0, 0, 0]], [[0.1, 0.4, 0.0, 0.3, 0.2], [0] * 5])
    assert indices.tolist() == [[1, 5, 7, 3], [0, 0, 0, 0]]
    np.testing.assert_allclose(weights, [[0.4, 0.3, 0.2, 0.1], [0, 0, 0, 0]])
    indices, weights = limit_blend_weights([[3, 1]], [[0.5, 1.5]], max_influences=1)
    assert indices.tolist() == [[1]] and weights.tolist() == [[1.0]]


def test_large_meshes_written_block_by_block_as_taken_give_the_text_made_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Vertex lines of a large mesh are made a block at a time while the file is written; the text, the filler
    smoothing indices of a later mesh (which count the vertices before it) included, is the same."""
    from formats.iqe import writer

    rng = np.random.default_rng(5)

    def mesh(name: str, count: int, smooth: bool) -> IqeMesh:
        return IqeMesh(
            name=name, material="m", positions=(rng.random((count, 3)) * 20 - 10).astype(np.float32),
            texcoords=rng.random((count, 2)).astype(np.float32), colors=rng.random((count, 4)).astype(np.float32),
            blend_indices=rng.integers(0, 3, (count, 4)).astype(np.int32),
            blend_weights=rng.random((count, 4)).astype(np.float32),
            custom={2: rng.random((count, 3)).astype(np.float32)},
            smooth_indices=rng.integers(0, 9, count).astype(np.int32) if smooth else None,
            face_corners=np.arange(count - count % 3, dtype=np.int32), face_sizes=np.full(count // 3, 3, np.int32),
        )  # fmt: skip

    document = IqeDocument(meshes=[mesh("a", 70_001, True), mesh("b", 40_000, False)])
    document.joints = [IqeJoint("j0", -1), IqeJoint("j1", 0), IqeJoint("j2", 1)]
    pieces = writer.iqe_pieces(document)
    assert not isinstance(pieces, list)  # made as taken
    monkeypatch.setattr(parallel, "cores", lambda: 3)  # (on any machine)
    on_cores = b"".join(writer.iqe_pieces(document, make_blocks=parallel.made_on_cores))
    monkeypatch.setattr(writer, "_VERTEX_BLOCK", 1 << 20)  # one block: made whole
    whole = writer.iqe_pieces(document)
    assert isinstance(whole, list)
    assert b"".join(pieces) == b"".join(whole) == on_cores
    assert b"\nvs -70002\n" in b"".join(whole)  # the second mesh's first filler index counts the first mesh


@pytest.mark.parametrize(
    "sizes",
    [[3, 3, 3], [4, 4], [3, 5, 4, 3, 6], [7], []],
    ids=["triangles", "quads", "mixed", "one n-gon", "none"],
)
def test_reverse_face_order_keeps_each_first_corner_and_turns_the_rest(sizes: list[int]) -> None:
    from formats.iqe.document import reverse_face_order

    face_sizes = np.array(sizes, np.int32)
    corners = np.arange(100, 100 + sum(sizes), dtype=np.int32)
    expected: list[int] = []
    start = 0
    for size in sizes:
        face = corners[start : start + size].tolist()
        expected += [face[0], *reversed(face[1:])]
        start += size
    assert reverse_face_order(corners, face_sizes).tolist() == expected


@pytest.mark.parametrize("width", [3, 4, 1, 9])
def test_faces_of_one_size_are_reversed_as_each_corner_s_source_gives(width: int) -> None:
    """Faces of one size reverse as a table of faces (its columns in reversed order): the arrays of gathering each
    corner's source, for corner numbers and for per-corner rows (normals), in their own dtypes."""
    from formats.iqe.document import _reversed_corner_sources, reverse_face_order

    rng = np.random.default_rng(width)
    sizes = np.full(int(rng.integers(1, 500)), width, np.int32)
    sources = _reversed_corner_sources(np.concatenate([sizes, [width + 1]]))[: len(sizes) * width]  # (the general way)
    for values in (rng.integers(0, 1000, len(sizes) * width).astype(np.int32),
                   rng.random((len(sizes) * width, 3)).astype(np.float32)):  # fmt: skip
        turned = reverse_face_order(values, sizes)
        assert turned.dtype == values.dtype and turned.shape == values.shape and turned.flags.c_contiguous
        assert np.array_equal(turned, values[sources])


@pytest.mark.parametrize("letters_looked_at", [10_000, 2, 0], ids=["letters", "then the pattern", "pattern"])
def test_the_comment_command_is_found_as_the_pattern_finds_it(
    monkeypatch: pytest.MonkeyPatch, letters_looked_at: int
) -> None:
    from formats.iqe import scan

    monkeypatch.setattr(scan, "_LETTERS_LOOKED_AT", letters_looked_at)
    rng = np.random.default_rng(3)
    words = [b"comment", b"\n", b" ", b"\t", b"o", b"comments", b"#comment", b"\r", b"\x0b", b"c", b"omment",
             b"\ncomment", b"\n comment\n", b"joint", b"vp 1 2 3\n"]  # fmt: skip
    for _ in range(3000):
        data = b"".join(words[i] for i in rng.integers(0, len(words), int(rng.integers(0, 14))))
        expected = scan._COMMENT_COMMAND.search(data)
        found = scan._first_comment_command(data)
        assert (found is None) == (expected is None), data
        assert found is None or expected is None or found.span() == expected.span(), data
