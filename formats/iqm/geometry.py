"""Triangles from polygons, tangents and triangle adjacency, computed as the reference compiler computes them
(same formulas, same order of floating-point operations, in double precision)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..rows import any_per_row
from .layout import NO_NEIGHBOUR

Int64Array = npt.NDArray[np.int64]
Float64Array = npt.NDArray[np.float64]


def fan_triangles(corners: npt.ArrayLike, sizes: npt.ArrayLike) -> Int64Array:
    """(T, 3) triangles of polygons fanned from their first corner: (c0, c1, c2), (c0, c2, c3), ..."""
    corner_table = np.asarray(corners, np.int64)
    size_table = np.asarray(sizes, np.int64)
    if size_table.shape[0] and (size_table == 3).all():
        return corner_table.reshape(-1, 3)
    starts = np.cumsum(size_table) - size_table
    per_face = np.maximum(size_table - 2, 0)
    first = np.repeat(starts, per_face)
    step = np.arange(int(per_face.sum())) - np.repeat(np.cumsum(per_face) - per_face, per_face)
    sources = np.stack((first, first + step + 1, first + step + 2), axis=1)
    triangles: Int64Array = corner_table[sources]
    return triangles


def _dot(a: Float64Array, b: Float64Array) -> Float64Array:
    """Row-wise x*x' + y*y' + z*z', summed left to right like the compiler's Vec3::dot."""
    return np.asarray(a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1] + a[:, 2] * b[:, 2], np.float64)


def _cross(a: Float64Array, b: Float64Array) -> Float64Array:
    x = a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1]
    y = a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2]
    z = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return np.stack((x, y, z), axis=1)


def compiler_tangents(
    positions: npt.ArrayLike, texcoords: npt.ArrayLike, normals: npt.ArrayLike, triangles: npt.ArrayLike
) -> Float64Array:
    """(V, 4) tangents with the bitangent sign in w: per triangle the area-weighted texture-space directions,
    summed per vertex in triangle order, made perpendicular to the normal.

    Where the sum vanishes (texcoords that do not span the triangles, such as a mesh without a UV map) the
    compiler writes NaN; here the tangent is then any unit vector perpendicular to the normal, with w = 1.
    """
    p, uv, n = np.asarray(positions), np.asarray(texcoords), np.asarray(normals)  # (made double a block at a time)
    tri = np.asarray(triangles, np.int64)
    count = p.shape[0]
    s_dir = np.empty((tri.shape[0], 3))
    t_dir = np.empty((tri.shape[0], 3))
    for part in _blocks(tri.shape[0]):  # (row by row arithmetic: blocks of rows give the same bits)
        _directions(p, uv, tri[part], s_dir[part], t_dir[part])
    corners = tri.ravel()
    tangent = np.empty((count, 3))
    bitangent = np.empty((count, 3))
    for axis in range(3):  # bincount adds in input order: triangle by triangle, corner by corner, as the compiler
        tangent[:, axis] = np.bincount(corners, np.repeat(s_dir[:, axis], 3), count)
        bitangent[:, axis] = np.bincount(corners, np.repeat(t_dir[:, axis], 3), count)
    del s_dir, t_dir
    result = np.empty((count, 4))
    for part in _blocks(count):
        _finish(np.asarray(n[part], np.float64), tangent[part], bitangent[part], result[part])
    vanished = any_per_row(~np.isfinite(result[:, :3]))
    if vanished.any():
        result[vanished, :3] = _any_perpendicular(np.asarray(n[vanished], np.float64))
        result[vanished, 3] = 1.0
    return result


_BLOCK = 1 << 16  # rows at a time: the temporaries stay in the CPU caches and are never handed back to the system


def _blocks(rows: int) -> list[slice]:
    return [slice(start, start + _BLOCK) for start in range(0, rows, _BLOCK)]


def _directions(
    p: npt.NDArray[np.floating[Any]], uv: npt.NDArray[np.floating[Any]], tri: Int64Array, s_dir: Float64Array,
    t_dir: Float64Array,
) -> None:
    """The area-weighted texture-space directions of these triangles (of float32 or double corners, computed in
    double), into s_dir and t_dir."""
    corners = np.asarray(p[tri], np.float64)  # (n, 3, 3): exact doubles of the corners
    texture = np.asarray(uv[tri], np.float64)
    e1, e2 = corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]
    u1, v1 = texture[:, 1, 0] - texture[:, 0, 0], texture[:, 1, 1] - texture[:, 0, 1]
    u2, v2 = texture[:, 2, 0] - texture[:, 0, 0], texture[:, 2, 1] - texture[:, 0, 1]
    np.subtract(e2 * v1[:, None], e1 * v2[:, None], out=s_dir)
    np.subtract(e2 * u1[:, None], e1 * u2[:, None], out=t_dir)
    flip = _dot(_cross(e2, e1), _cross(t_dir, s_dir)) < 0.0
    s_dir[flip] *= -1.0
    t_dir[flip] *= -1.0


def _finish(n: Float64Array, tangent: Float64Array, bitangent: Float64Array, result: Float64Array) -> None:
    """The summed tangents made perpendicular to the normals and unit length, the bitangent sign in w."""
    along = tangent - n * _dot(n, tangent)[:, None]
    length = np.sqrt(_dot(along, along))
    with np.errstate(divide="ignore", invalid="ignore"):
        result[:, :3] = along * (1.0 / length)[:, None]
    result[:, 3] = np.where(_dot(_cross(n, tangent), bitangent) < 0.0, -1.0, 1.0)


def _any_perpendicular(normals: Float64Array) -> Float64Array:
    axis = np.zeros_like(normals)
    axis[np.arange(normals.shape[0]), np.argmin(np.abs(normals), axis=1)] = 1.0
    side = _cross(normals, axis)
    length = np.sqrt(_dot(side, side))
    safe = np.where(length > 0.0, length, 1.0)
    result: Float64Array = np.where(length[:, None] > 0.0, side / safe[:, None], np.array([1.0, 0.0, 0.0]))
    return result


def adjacency(triangles: npt.ArrayLike, vertex_class: npt.ArrayLike) -> npt.NDArray[np.uint32]:
    """(T, 3): the triangle across edge k -> k+1 of each triangle, or NO_NEIGHBOUR.

    Edges meet when their ends are of the same classes (the compiler: equal positions and blend weights); an
    edge shared by exactly two triangle sides links them, an edge with one side or more than two has none.
    """
    tri = np.asarray(triangles, np.int64)
    classes = np.asarray(vertex_class, np.int64)
    count = tri.shape[0]
    result = np.full((count, 3), NO_NEIGHBOUR, np.uint32)
    if not count:
        return result
    ends = classes[tri]  # (T, 3)
    start, end = ends, np.roll(ends, -1, axis=1)  # edge k runs from corner k to corner k + 1
    low, high = np.minimum(start, end).ravel(), np.maximum(start, end).ravel()
    width = int(classes.max(initial=0)) + 1
    sides = 3 * count
    keys = (low * width + high) * sides + np.arange(sides)  # the edge, then the side: one sort orders both
    if width * width * sides >= 2**63:
        order = np.lexsort((np.arange(sides), high, low))
        edge = (low * width + high)[order]
    else:
        keys.sort()
        order = keys % sides
        edge = keys // sides
    starts = np.flatnonzero(np.diff(edge, prepend=-1))
    run = np.diff(np.append(starts, sides))
    pairs = starts[run == 2]
    first, second = order[pairs], order[pairs + 1]
    flat = result.reshape(-1)
    flat[first] = second // 3
    flat[second] = first // 3
    return result
