"""Float arithmetic that reproduces the original x87 build bit for bit (spec §13.1).

The original evaluates every expression in double precision and rounds to float32 at each assignment.
Arrays here are float64 holding float32-representable values; `f32` is that rounding step.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np

from .arrays import Array

FLT_MAX = float(np.finfo(np.float32).max)
FLT_MIN = float(np.finfo(np.float32).tiny)  # 1.17549435e-38, the original's (buggy) start for maxima
NAN_BITS = np.uint32(0xFFC00000)  # x87 "real indefinite", the NaN an invalid operation makes

Matrix = list[list[float]]


def f32(values: Array) -> Array:
    """Round float64 values to float32 and back (one x87 store to a float variable)."""
    return values.astype(np.float32).astype(np.float64)


_FLOAT32 = struct.Struct("<f")


def f32_scalar(value: float) -> float:
    """Round one double to float32 (overflow to infinity, like the x87 store)."""
    try:
        return float(_FLOAT32.unpack(_FLOAT32.pack(value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def matrix_product(a: Matrix, b: Matrix) -> Matrix:
    """D3DX-style 4x4 product, each element `F(((a0*b0 + a1*b1) + a2*b2) + a3*b3)`."""
    if all(math.isfinite(value) for row in (*a, *b) for value in row):
        def element(i: int, j: int) -> float:
            return f32_scalar(((a[i][0] * b[0][j] + a[i][1] * b[1][j]) + a[i][2] * b[2][j]) + a[i][3] * b[3][j])

        return [[element(i, j) for j in range(4)] for i in range(4)]
    left, right = x87_nans(np.array(a, dtype=np.float64)), x87_nans(np.array(b, dtype=np.float64))
    with np.errstate(invalid="ignore", over="ignore"):
        terms = [left[:, k:k + 1] * right[k:k + 1, :] for k in range(4)]
        product = f32(((terms[0] + terms[1]) + terms[2]) + terms[3])
    return [[float(value) for value in row] for row in np.asarray(product)]


def _cos_sin(angle: float) -> tuple[float, float]:
    """float32 cos and sin of an angle; an infinite angle gives NaN (the x87's invalid result)."""
    if not math.isfinite(angle):
        return math.nan, math.nan
    return f32_scalar(math.cos(angle)), f32_scalar(math.sin(angle))


def object_matrix(position: tuple[float, float, float], euler: tuple[float, float, float],
                  size: tuple[float, float, float]) -> Matrix:
    """Row-vector matrix Scaling · RotationX · RotationY · RotationZ · Translation (Blender XYZ Euler, radians)."""
    sx, sy, sz = size
    result: Matrix = [[sx, 0.0, 0.0, 0.0], [0.0, sy, 0.0, 0.0], [0.0, 0.0, sz, 0.0], [0.0, 0.0, 0.0, 1.0]]
    cx, snx = _cos_sin(euler[0])
    cy, sny = _cos_sin(euler[1])
    cz, snz = _cos_sin(euler[2])
    rot_x = [[1.0, 0.0, 0.0, 0.0], [0.0, cx, snx, 0.0], [0.0, -snx, cx, 0.0], [0.0, 0.0, 0.0, 1.0]]
    rot_y = [[cy, 0.0, -sny, 0.0], [0.0, 1.0, 0.0, 0.0], [sny, 0.0, cy, 0.0], [0.0, 0.0, 0.0, 1.0]]
    rot_z = [[cz, snz, 0.0, 0.0], [-snz, cz, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
    translation = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [*position, 1.0]]
    for factor in (rot_x, rot_y, rot_z, translation):
        result = matrix_product(result, factor)
    return result


def object_matrices(placements: list[tuple[tuple[float, float, float], ...]]) -> list[Matrix]:
    """object_matrix of many (position, euler, size) at once, with the same bits: every product is the same double
    arithmetic, rounded the same way. A placement whose numbers or steps are not all finite is done alone."""
    if not placements:
        return []
    table = np.array([[value for vector in placement for value in vector] for placement in placements], np.float64)
    count = len(table)
    cos_sin = np.array([_cos_sin(angle) for angle in table[:, 3:6].ravel().tolist()]).reshape(count, 3, 2)
    c, s = cos_sin[..., 0], cos_sin[..., 1]
    factors = np.zeros((5, count, 4, 4))
    factors[:, :, 3, 3] = 1.0
    factors[0, :, [0, 1, 2], [0, 1, 2]] = table[:, 6:9].T  # scaling
    # Rotations about x, y, z: the 2 x 2 block of the other two axes, [[c, s], [-s, c]] ([[c, -s], [s, c]] for y).
    for axis, (first, second), sign in ((0, (1, 2), 1.0), (1, (0, 2), -1.0), (2, (0, 1), 1.0)):
        rotation = factors[1 + axis]
        rotation[:, axis, axis] = 1.0
        rotation[:, first, first] = rotation[:, second, second] = c[:, axis]
        rotation[:, first, second] = sign * s[:, axis]
        rotation[:, second, first] = -sign * s[:, axis]
    factors[4, :, [0, 1, 2], [0, 1, 2]] = 1.0  # translation
    factors[4, :, 3, 0:3] = table[:, 0:3]
    finite = np.isfinite(table).all(axis=1) & np.isfinite(cos_sin).all(axis=(1, 2))
    result = factors[0]
    with np.errstate(invalid="ignore", over="ignore"):
        for factor in factors[1:]:
            terms = result[:, :, :, None] * factor[:, None, :, :]  # [mesh, i, k, j]
            result = f32(((terms[:, :, 0] + terms[:, :, 1]) + terms[:, :, 2]) + terms[:, :, 3])
            finite &= np.isfinite(result).all(axis=(1, 2))
    matrices: list[Matrix] = result.tolist()
    for index in np.flatnonzero(~finite).tolist():
        matrices[index] = object_matrix(*placements[index])
    return matrices


def transform_points(points: Array, matrix: Matrix | Array, counts: Array | None = None) -> Array:
    """`F(((x*m1c + y*m2c) + z*m3c) + m4c)` per column c for (n, 3) points, by one matrix or (n, 4, 4) matrices,
    one per point (the same arithmetic element by element); float32 result. With `counts`, `matrix` holds (M, 4, 4)
    matrices, the first for the first counts[0] points and so on: each entry is repeated for its points as a
    column of its own instead of repeating the whole matrices (16 doubles a point, read strided)."""
    coordinates = points.astype(np.float64)
    rows = np.asarray(matrix, np.float64)
    if not (np.isfinite(coordinates).all() and np.isfinite(rows).all()):
        coordinates = x87_nans(coordinates)

    def entry(row: int, column: int) -> Array:
        values: Array = rows[..., row, column] if counts is None else np.repeat(rows[:, row, column], counts)
        return values

    x, y, z = (coordinates[:, i] for i in range(3))
    out = np.empty((len(points), 3), dtype=np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        for c in range(3):
            out[:, c] = ((x * entry(0, c) + y * entry(1, c)) + z * entry(2, c)) + entry(3, c)
    return out


# One operation whose operands are float32 values and whose result is rounded to float32 gives the same bits
# in double then rounded (as the x87 does) and in float32 arithmetic: double has more than 2 x 24 + 2 bits, so
# the double rounding is innocuous for +, -, *, / and sqrt. Such steps run on float32 arrays; expressions of
# several operations (dot and cross products) are evaluated in double and rounded once.


def dot3(a: Array, b: Array) -> Array:
    """`((ax*bx + ay*by) + az*bz)` along the last axis, in double (not rounded)."""
    with np.errstate(invalid="ignore", over="ignore"):
        x, y, z = (np.multiply(a[..., i], b[..., i], dtype=np.float64) for i in range(3))
        result: Array = (x + y) + z
    return result


def cross3(a: Array, b: Array) -> Array:
    """Component-wise `F(a*b - c*d)` cross product, evaluated in double; float32 result."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=np.float32)
    if isinstance(a, X87NanArray) or isinstance(b, X87NanArray):
        out = out.view(X87NanArray)

    def product(i: int, j: int) -> Array:  # exact in double
        result: Array = np.multiply(a[..., i], b[..., j], dtype=np.float64)
        return result

    with np.errstate(invalid="ignore", over="ignore"):
        out[..., 0] = product(1, 2) - product(2, 1)
        out[..., 1] = product(2, 0) - product(0, 2)
        out[..., 2] = product(0, 1) - product(1, 0)
    return out


def normalize3(v: Array) -> Array:
    """lsq = F(x²+y²+z²), L = F(sqrt(lsq)), r = F(1/L), each component F(c·r); zero length gives NaN. float32."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        length = np.sqrt(dot3(v, v).astype(np.float32))
        reciprocal = np.float32(1.0) / length
        result: Array = v * reciprocal[..., None]
        return result


_BINARY_ARITHMETIC = (np.add, np.subtract, np.multiply, np.true_divide)


class X87NanArray(np.ndarray[Any, np.dtype[np.floating[Any]]]):
    """Float array whose arithmetic gives NaNs the x87's sign where numpy's SSE arithmetic differs.

    With two NaN operands SSE returns the first; the x87 returns the one with the larger significand and, on a
    tie, the positive one. Every NaN here has the same significand (all come from invalid operations), so the
    result is negative only when both operands are. One NaN operand, invalid operations, negation and sqrt
    already behave alike. Slow; meant for the few faces whose frames contain NaN.
    """

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: object, **kwargs: object) -> object:
        plain = [np.asarray(x) if isinstance(x, X87NanArray) else x for x in inputs]
        result = getattr(ufunc, method)(*plain, **kwargs)
        if method == "__call__" and ufunc in _BINARY_ARITHMETIC and "out" not in kwargs:
            a, b = (np.asarray(x, dtype=np.float64) for x in plain)
            both = np.isnan(a) & np.isnan(b)
            if both.any():
                result = np.array(result)
                result[both] = np.where(np.signbit(a) & np.signbit(b), -np.nan, np.nan)[both]
        return result.view(X87NanArray) if isinstance(result, np.ndarray) else result


def x87_nans(values: Array) -> Array:
    """`values` (same dtype) with the x87's NaN signs in all arithmetic that follows."""
    return np.asarray(values).view(X87NanArray)


def canonical_nan(values: Array) -> Array:
    """float32 copy, NaNs with the sign bit the arithmetic gave them (spec 13.1): invalid operations make the
    x87's real indefinite 0xFFC00000 (numpy's SSE arithmetic makes the same pattern), negation flips a NaN's
    sign, and sin/cos of an infinite angle give a positive NaN (`_cos_sin`). Every other NaN bit is normalised
    to the quiet NaN of its sign, as the x87 stores them."""
    out = np.ascontiguousarray(values, dtype=np.float32).copy()
    bits = out.view(np.uint32)
    nan = np.isnan(out)
    if nan.any():
        bits[nan] = (bits[nan] & np.uint32(0x80000000)) | np.uint32(0x7FC00000)
    return out
