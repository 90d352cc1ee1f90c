"""The all-members-at-once JOE path gives exactly the documents (and bytes) of the one-member path."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from formats import joe


def _member(rng: np.random.Generator, kind: str) -> joe.Member:
    faces = int(rng.integers(0 if kind == "empty" else 1, 40))
    vertex_count = max(int(rng.integers(1, 30)), 1)
    table = rng.integers(-2, 3, (vertex_count, 3)).astype(np.float32)  # (few values: many equal rows)
    corner_vertices = rng.integers(0, vertex_count, 3 * faces)
    if kind == "degenerate":
        corner_vertices[:] = corner_vertices[0] if faces else 0
    positions = table[corner_vertices]
    normals = rng.integers(-1, 2, (3 * faces, 3)).astype(np.float32)
    uvs: npt.NDArray[np.float32] | None = rng.integers(0, 3, (3 * faces, 2)).astype(np.float32) / 2
    if kind == "nan":
        normals[:: 4] = np.nan
        assert uvs is not None
        uvs[1::5] = np.inf
        table[0] = np.nan
        positions = table[corner_vertices]
    if kind == "signed zeros":
        normals[::2] *= -0.0
    if rng.random() < 0.3:
        uvs = None
    vertex_table: tuple[npt.NDArray[np.float32], npt.NDArray[np.integer[Any]]] | None = (table, corner_vertices)
    if rng.random() < 0.3:
        vertex_table = None
    return positions, normals, uvs, vertex_table


def _same(a: joe.JoeDocument, b: joe.JoeDocument) -> None:
    fa, fb = a.first_frame, b.first_frame
    for name in ("vertex_indices", "normal_indices", "texcoord_indices", "positions", "normals", "texcoords"):
        x, y = getattr(fa, name), getattr(fb, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert x.tobytes() == y.tobytes(), name


@pytest.mark.parametrize("seed", range(12))
def test_many_members_match_one_member_at_a_time(seed: int) -> None:
    rng = np.random.default_rng(seed)
    kinds = ["plain", "plain", "degenerate", "nan", "signed zeros", "empty"]
    members = [_member(rng, kinds[int(rng.integers(0, len(kinds)))]) for _ in range(int(rng.integers(1, 30)))]
    many = joe.documents_from_many_triangles(members)
    for member, document in zip(members, many, strict=True):
        assert document is not None
        one = joe.document_from_triangles(*member)
        _same(document, one)
        assert joe.non_finite_warnings(document.first_frame) == joe.non_finite_warnings(one.first_frame)
        if not joe.non_finite_warnings(one.first_frame):
            assert joe.write_joe(document) == joe.write_joe(one)


def test_large_members_use_the_hash_table_and_match() -> None:
    rng = np.random.default_rng(99)
    members = []
    for _ in range(3):
        table = rng.integers(-50, 50, (3000, 3)).astype(np.float32)
        corners = rng.integers(0, 3000, 3 * 2000)
        normals = rng.integers(-3, 4, (len(corners), 3)).astype(np.float32)
        uvs = rng.integers(0, 40, (len(corners), 2)).astype(np.float32) / 8
        members.append((table[corners], normals, uvs, (table, corners)))
    for document, member in zip(joe.documents_from_many_triangles(members), members, strict=True):
        assert document is not None
        _same(document, joe.document_from_triangles(*member))


def test_member_over_the_face_limit_is_left_to_the_one_member_path() -> None:
    big = np.zeros((3 * (joe.VDRIFT_MAX_FACES + 1), 3), np.float32)
    small = np.eye(3, dtype=np.float32)
    many = joe.documents_from_many_triangles([(big, big, None, None), (small, small, None, None)])
    assert many[0] is None and many[1] is not None
    with pytest.raises(joe.OverLimit):
        joe.document_from_triangles(big, big, None)


@pytest.mark.parametrize("seed", range(8))
def test_many_documents_checks_match_the_one_document_checks(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    kinds = ["plain", "degenerate", "nan", "signed zeros", "empty"]
    members = [_member(rng, kinds[int(rng.integers(0, len(kinds)))]) for _ in range(int(rng.integers(1, 25)))]
    documents = [joe.document_from_triangles(*member) for member in members]
    if seed % 2:  # (several frames: every frame votes and is checked)
        documents[0].frames.append(documents[-1].first_frame)
    assert joe.finite_documents(documents) == [not any(joe.non_finite_warnings(f) for f in d.frames)
                                               for d in documents]  # fmt: skip
    assert joe.normal_swaps_would_fire(documents) == [joe.normal_swap_would_fire(d) for d in documents]


def test_perpendicular_normals_fire_in_many_as_in_one() -> None:
    positions = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]] * 4, np.float32)
    flat = np.tile(np.array([0, 0, 1], np.float32), (12, 1))
    sideways = np.tile(np.array([1, 0, 0], np.float32), (12, 1))
    documents = [joe.document_from_triangles(positions, n, None) for n in (flat, sideways, flat)]
    assert joe.normal_swaps_would_fire(documents) == [False, True, False]
    assert [joe.normal_swap_would_fire(d) for d in documents] == [False, True, False]


@pytest.mark.parametrize("seed", range(12))
def test_many_files_are_the_one_member_bytes_and_swap_votes(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    kinds = ["plain", "plain", "degenerate", "nan", "signed zeros", "empty"]
    members = [_member(rng, kinds[int(rng.integers(0, len(kinds)))]) for _ in range(int(rng.integers(1, 30)))]
    if seed % 3 == 0:  # (perpendicular normals: the swap vote fires)
        positions = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]] * 4, np.float32)
        members.insert(0, (positions, np.tile(np.array([1, 0, 0], np.float32), (12, 1)), None, None))
    for member, made in zip(members, joe.files_from_many_triangles(members), strict=True):
        one = joe.document_from_triangles(*member)
        warnings: list[str] = []
        if joe.non_finite_warnings(one.first_frame):
            assert made is None
            continue
        data = joe.write_joe(one, warnings)
        assert made == (data, joe.normal_swap_would_fire(one)) and not warnings


def test_many_files_leave_members_over_the_limits_and_signed_indices_to_the_one_member_path() -> None:
    big = np.zeros((3 * (joe.VDRIFT_MAX_FACES + 1), 3), np.float32)
    soup = np.arange(3 * 3 * 11000, dtype=np.float32).reshape(-1, 3)  # 33,000 distinct vertices: a warning
    small = np.eye(3, dtype=np.float32)
    made = joe.files_from_many_triangles([(big, big, None, None), (soup, soup, None, None), (small, small, None, None)])
    assert made[0] is None and made[1] is None
    warnings: list[str] = []
    assert made[2] == (joe.write_joe(joe.document_from_triangles(small, small, None), warnings), False)
    joe.write_joe(joe.document_from_triangles(soup, soup, None), warnings)
    assert warnings and "signed 16-bit" in warnings[0]


def _perpendicular_by_columns(corners: npt.NDArray[np.float32], normals: npt.NDArray[np.float32]) -> Any:
    """VDrift's NeedsNormalSwap test in float32, on (F, 3) columns as it was first written (the reference)."""

    def cross(a: Any, b: Any) -> Any:
        return np.stack((a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1], a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                         a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]), axis=1).astype(np.float32)  # fmt: skip

    def length(v: Any) -> Any:
        return np.sqrt((v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1]) + v[:, 2] * v[:, 2]).astype(np.float32)

    normal_sum = (normals[:, 0] + normals[:, 1]) + normals[:, 2]
    geometric = cross(corners[:, 2] - corners[:, 0], corners[:, 1] - corners[:, 0])
    geometric_length, sum_length = length(geometric), length(normal_sum)
    usable = (geometric_length.astype(np.float64) > 0.0001) & (sum_length.astype(np.float64) > 0.0001)
    unit_sum, unit_geometric = normal_sum / sum_length[:, None], geometric / geometric_length[:, None]
    cosine = (unit_sum[:, 0] * unit_geometric[:, 0] + unit_sum[:, 1] * unit_geometric[:, 1]) + (
        unit_sum[:, 2] * unit_geometric[:, 2])  # fmt: skip
    return usable & (cosine < 0.5) & (cosine > -0.5)


@pytest.mark.parametrize("seed", range(6))
def test_perpendicular_faces_are_the_column_by_column_test(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    corners = (rng.normal(size=(5000, 3, 3)) * 10.0 ** rng.integers(-6, 6, (5000, 1, 1))).astype(np.float32)
    normals = rng.normal(size=(5000, 3, 3)).astype(np.float32)
    normals[::7] = 0.0
    normals[3::11, 1] = -normals[3::11, 0]
    corners[::13, 1] = corners[::13, 0]
    corners[5::17, 2, 1] = np.nan
    normals[6::19, 0, 2] = np.inf
    corners[7::23] *= np.float32(1e30)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        expected = _perpendicular_by_columns(corners, normals)
        assert np.array_equal(joe.perpendicular_faces(corners, normals), expected)
        assert np.array_equal(joe.perpendicular_faces(corners[::2], normals[::2]), expected[::2])  # (not contiguous)
