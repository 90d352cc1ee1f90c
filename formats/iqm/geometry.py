"""Triangles from polygons, tangents and triangle adjacency, computed as the reference compiler computes them
(same formulas, same order of floating-point operations, in double precision)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .layout import NO_NEIGHBOUR

Int64Array = npt.NDArray[np.int64]
Float64Array = npt.NDArray[np.float64]
Columns = list[Float64Array]  # x, y (, z): one array each


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
    positions: npt.ArrayLike, texcoords: npt.ArrayLike, normals: npt.ArrayLike, triangles: npt.ArrayLike,
    dtype: type[np.floating[Any]] = np.float64,
) -> npt.NDArray[np.floating[Any]]:  # fmt: skip
    """(V, 4) tangents with the bitangent sign in w: per triangle the area-weighted texture-space directions,
    summed per vertex in triangle order, made perpendicular to the normal. Computed in double; `dtype` float32
    gives the result rounded as `astype(np.float32)` of the double one would.

    Where the sum vanishes (texcoords that do not span the triangles, such as a mesh without a UV map) the
    compiler writes NaN; here the tangent is then any unit vector perpendicular to the normal, with w = 1.
    """
    p, uv, n = np.asarray(positions), np.asarray(texcoords), np.asarray(normals)
    tri = np.asarray(triangles, np.int64)
    count = p.shape[0]
    # (one contiguous array per coordinate: the arithmetic runs on whole rows of numbers, never on strided columns)
    point = [np.asarray(p[:, axis], np.float64) for axis in range(3)]  # (exact doubles of the corners)
    texture = [np.asarray(uv[:, axis], np.float64) for axis in range(2)]
    s_dir = np.empty((3, tri.shape[0]))
    t_dir = np.empty((3, tri.shape[0]))
    for part in _blocks(tri.shape[0]):  # (row by row arithmetic: blocks of rows give the same bits)
        _directions(point, texture, tri[part], s_dir[:, part], t_dir[:, part])
    del point, texture
    corners = tri.ravel()
    # bincount adds in input order: triangle by triangle, corner by corner, as the compiler
    tangent: Columns = [np.bincount(corners, np.repeat(s_dir[axis], 3), count).astype(np.float64, copy=False)
                        for axis in range(3)]  # fmt: skip
    del s_dir
    bitangent: Columns = [np.bincount(corners, np.repeat(t_dir[axis], 3), count).astype(np.float64, copy=False)
                          for axis in range(3)]  # fmt: skip
    del t_dir
    result = np.empty((count, 4), dtype)
    vanished = np.zeros(count, bool)
    for part in _blocks(count):
        normal = [np.asarray(n[part, axis], np.float64) for axis in range(3)]
        _finish(normal, [t[part] for t in tangent], [b[part] for b in bitangent], result[part], vanished[part])
    if vanished.any():
        result[vanished, :3] = _any_perpendicular(np.asarray(n[vanished], np.float64))
        result[vanished, 3] = 1.0
    return result


_BLOCK = 1 << 14  # rows at a time: the temporaries stay in the CPU caches and are never handed back to the system


def _blocks(rows: int) -> list[slice]:
    return [slice(start, start + _BLOCK) for start in range(0, rows, _BLOCK)]


def _dot3(a: Columns, b: Columns) -> Float64Array:
    """x*x' + y*y' + z*z', summed left to right like the compiler's Vec3::dot."""
    total = a[0] * b[0]
    total += a[1] * b[1]
    total += a[2] * b[2]
    return total


def _cross3(a: Columns, b: Columns) -> Columns:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _directions(point: Columns, texture: Columns, tri: Int64Array, s_dir: Float64Array, t_dir: Float64Array) -> None:
    """The area-weighted texture-space directions of these triangles (corners given as exact doubles), into
    s_dir and t_dir (3, n)."""
    first, second, third = tri[:, 0], tri[:, 1], tri[:, 2]
    e1, e2 = [], []
    for column in point:
        origin = column[first]
        e1.append(column[second] - origin)
        e2.append(column[third] - origin)
    u, v = texture
    u0, v0 = u[first], v[first]
    u1, v1 = u[second] - u0, v[second] - v0
    u2, v2 = u[third] - u0, v[third] - v0
    for axis in range(3):
        np.subtract(e2[axis] * v1, e1[axis] * v2, out=s_dir[axis])
        np.subtract(e2[axis] * u1, e1[axis] * u2, out=t_dir[axis])
    flip = _dot3(_cross3(e2, e1), _cross3(list(t_dir), list(s_dir))) < 0.0
    np.multiply(s_dir, -1.0, out=s_dir, where=flip)
    np.multiply(t_dir, -1.0, out=t_dir, where=flip)


def _finish(n: Columns, tangent: Columns, bitangent: Columns, result: npt.NDArray[np.floating[Any]],
            vanished: npt.NDArray[np.bool_]) -> None:  # fmt: skip
    """The summed tangents made perpendicular to the normals and unit length, the bitangent sign in w; `vanished`
    marks the rows left without a direction (not finite)."""
    along_normal = _dot3(n, tangent)
    along = [tangent[axis] - n[axis] * along_normal for axis in range(3)]
    length = np.sqrt(_dot3(along, along))
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = 1.0 / length
        for axis in range(3):
            unit = along[axis] * scale
            vanished |= ~np.isfinite(unit)
            result[:, axis] = unit
    result[:, 3] = np.where(_dot3(_cross3(n, tangent), bitangent) < 0.0, -1.0, 1.0)


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
    following = ends[:, [1, 2, 0]]  # edge k runs from corner k to corner k + 1
    low, high = np.minimum(ends, following).ravel(), np.maximum(ends, following).ravel()
    del ends, following
    width = int(classes.max(initial=0)) + 1
    sides = 3 * count
    if width < 2**31:  # (one key per edge; a stable sort keeps an edge's sides in order. Triangles as meshes list
        edge = np.multiply(low, width, out=low)  # them make long ordered runs, which the stable sort (a merge
        edge += high  # of runs) sorts many times faster than a quicksort)
        order = np.argsort(edge, kind="stable")
        edge = edge[order]
    else:
        order = np.lexsort((high, low))
        edge = (low * width + high)[order]
    del low, high
    same = np.zeros(sides + 1, bool)  # same[i]: side order[i] has the edge of order[i - 1]
    np.equal(edge[1:], edge[:-1], out=same[1:sides])
    del edge
    pairs = np.flatnonzero(same[1:sides] & ~same[: sides - 1] & ~same[2:])  # runs of exactly two sides
    first, second = order[pairs], order[pairs + 1]
    flat = result.reshape(-1)
    flat[first] = second // 3
    flat[second] = first // 3
    return result
