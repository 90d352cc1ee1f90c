"""The SMD importer's model extent (the size a skeleton's bone lengths fall back on), block by block for large
meshes, against the column-by-column reductions it replaces."""

from __future__ import annotations

from types import ModuleType

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
