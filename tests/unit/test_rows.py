"""Row reductions done a column at a time give exactly numpy's answers, whatever the shape."""

from __future__ import annotations

import numpy as np
import pytest

from formats.rows import all_per_row, any_per_row, count_per_row

SHAPES = [(0, 3), (5, 0), (1000, 1), (1000, 3), (1000, 4, 2), (1000, 8), (7, 2, 3)]


@pytest.mark.parametrize("shape", SHAPES, ids=[str(shape) for shape in SHAPES])
@pytest.mark.parametrize("density", [0.0, 0.02, 0.5, 1.0])
def test_row_reductions_match_numpy(shape: tuple[int, ...], density: float) -> None:
    mask = np.random.default_rng(len(shape)).random(shape) < density
    axes = tuple(range(1, len(shape)))
    np.testing.assert_array_equal(any_per_row(mask), mask.any(axis=axes))
    np.testing.assert_array_equal(all_per_row(mask), mask.all(axis=axes))
    np.testing.assert_array_equal(count_per_row(mask), [np.count_nonzero(row) for row in mask])


def test_a_strided_view_is_read_as_it_looks() -> None:
    table = np.random.default_rng(1).random((100, 16)) < 0.1
    view = table[:, ::2]  # eight columns, not contiguous
    np.testing.assert_array_equal(any_per_row(view), view.any(axis=1))


@pytest.mark.parametrize("rows", [0, 1, 500])
def test_the_compilers_nan_rows_match_numpy(rows: int) -> None:
    from qmap_compiler.arrays import nan_in_rows

    rng = np.random.default_rng(rows)
    uvs, normals = rng.random((rows, 4, 2)), rng.random((rows, 3))
    uvs[rng.random((rows, 4, 2)) < 0.01] = np.nan
    normals[rng.random((rows, 3)) < 0.01] = np.nan
    expected = np.isnan(uvs).any(axis=(1, 2)) | np.isnan(normals).any(axis=1)
    np.testing.assert_array_equal(nan_in_rows(uvs, normals), expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(0, 3), (1000, 1), (1000, 2), (1000, 3), (1000, 4), (10, 20, 3), (100, 9)])
def test_row_lengths_are_numpys_norms_bit_for_bit(dtype: type, shape: tuple[int, ...]) -> None:
    from formats.rows import row_lengths

    rng = np.random.default_rng(sum(shape))
    vectors = (rng.normal(size=shape) * rng.uniform(1e-3, 1e3, size=(*shape[:-1], 1))).astype(dtype)
    if vectors.size:
        vectors.reshape(-1)[::97] = 0.0
    for keepdims in (False, True):
        expected = np.linalg.norm(vectors, axis=-1, keepdims=keepdims)
        got = row_lengths(vectors, keepdims=keepdims)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        assert np.array_equal(got, expected)


@pytest.mark.parametrize("shape", [(0, 3), (50, 0), (1000,), (1000, 2), (1000, 5), (30, 4, 2)])
def test_rows_at_gathers_what_fancy_indexing_gathers(shape: tuple[int, ...]) -> None:
    from formats.rows import rows_at

    rng = np.random.default_rng(len(shape))
    table = rng.normal(size=shape).astype(np.float32)
    for indices in (rng.integers(-shape[0], shape[0], 700) if shape[0] else np.zeros(0, np.int64),
                    np.arange(shape[0], dtype=np.int32), np.zeros(0, np.intc), np.arange(shape[0], dtype=np.uint64),
                    [], list(range(shape[0]))):  # fmt: skip
        got = rows_at(table, indices)
        assert got.dtype == table.dtype and got.flags.c_contiguous
        np.testing.assert_array_equal(got, table[indices])
    with pytest.raises(IndexError):
        rows_at(table, [shape[0]])


def _plain_prepared(corner_verts: np.ndarray, unit: np.ndarray, vertex_count: int) -> np.ndarray | None:
    per_vertex = np.zeros((vertex_count, 3), np.float32)
    per_vertex[corner_verts] = unit
    return per_vertex if np.array_equal(per_vertex[corner_verts], unit) else None


@pytest.mark.parametrize("case", ["shared", "split", "signed zero", "nan", "float64", "empty"])
def test_prepared_unit_normals_are_those_of_plain_row_indexing(case: str) -> None:
    from formats.rows import prepared_unit_normals

    rng = np.random.default_rng(3)
    vertex_count = 0 if case == "empty" else 40
    corner_verts = rng.integers(0, max(vertex_count, 1), 0 if case == "empty" else 120)
    per_vertex = rng.normal(size=(vertex_count, 3)).astype(np.float32)
    unit = per_vertex[corner_verts] if vertex_count else np.zeros((0, 3), np.float32)
    if case == "split":
        unit[5] += 1
    elif case == "signed zero":
        per_vertex[corner_verts[0]] = (-0.0, 0.0, -0.0)
        unit = per_vertex[corner_verts]
    elif case == "nan":
        unit[7, 1] = np.nan
    elif case == "float64":
        unit = unit.astype(np.float64)
    prepared = prepared_unit_normals(corner_verts, unit, vertex_count)
    expected = _plain_prepared(corner_verts, unit, vertex_count)
    assert prepared.unit is unit
    assert (prepared.per_vertex is None) == (expected is None)
    if expected is not None:
        assert prepared.per_vertex is not None and prepared.per_vertex.dtype == np.float32
        assert prepared.per_vertex.tobytes() == expected.tobytes()
    assert (expected is None) == (case in ("split", "nan"))
