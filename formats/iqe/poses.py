"""Pose math: turn `pq`, `pm` and `pa` rows into one (N, 10) representation, vectorised.

The representation is translation, unit quaternion (x, y, z, w) with w <= 0, scale, with the local transform
T * R * S in the column-vector convention, as the reference compiler stores every pose.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Float64Array = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_TINY = 1e-12


def canonical_quaternions(quats: Float64Array) -> tuple[Float64Array, BoolArray]:
    """Normalise (N, 4) quaternions and flip them to w <= 0; zero-length ones become identity.

    Returns the quaternions and a mask of the rows that were zero-length.
    """
    lengths = np.sqrt(np.einsum("ij,ij->i", quats, quats))
    degenerate = ~(lengths > _TINY)
    result = np.divide(quats, lengths[:, None], out=np.zeros_like(quats), where=~degenerate[:, None])
    result[degenerate] = (0.0, 0.0, 0.0, -1.0)
    result[result[:, 3] > 0.0] *= -1.0
    return result, degenerate


def poses_from_pq(rows: Float64Array, counts: npt.NDArray[np.int64]) -> tuple[Float64Array, BoolArray]:
    """`pq Tx Ty Tz Qx Qy Qz [Qw] [Sx Sy Sz]` rows padded to 10 columns (scale padding must be 1).

    A missing Qw is rebuilt as the negative root that makes the quaternion unit length. A written quaternion is
    kept as written, only turned to w <= 0, as the reference compiler keeps it (its loader's `normalize()` call
    drops its result), so that IQM frames quantise the same values; whoever builds matrices normalises.
    """
    poses = rows.copy()
    xyz = poses[:, 3:6]
    missing_w = counts < 7
    poses[missing_w, 6] = -np.sqrt(np.maximum(1.0 - np.einsum("ij,ij->i", xyz, xyz), 0.0))[missing_w]
    poses[:, 3:7], degenerate = oriented_quaternions(poses[:, 3:7])
    return poses, degenerate


def oriented_quaternions(quats: Float64Array) -> tuple[Float64Array, BoolArray]:
    """Quaternions turned to w <= 0 without normalising them; zero-length ones become identity."""
    lengths = np.sqrt(np.einsum("ij,ij->i", quats, quats))
    degenerate = ~(lengths > _TINY)
    result = np.where(quats[:, 3:4] > 0.0, -quats, quats)
    result[degenerate] = (0.0, 0.0, 0.0, -1.0)
    return result, degenerate


def poses_from_pm(rows: Float64Array) -> tuple[Float64Array, BoolArray]:
    """`pm T(3) a(3) b(3) c(3) [S(3)]` rows padded to 15 columns: a, b, c are the matrix rows of v' = R v.

    The scale is the column lengths, negated when the determinant is negative (a mirror), times the extra S.
    """
    matrices = rows[:, 3:12].reshape(-1, 3, 3)
    scales = np.linalg.norm(matrices, axis=1)  # column lengths
    mirrored = np.linalg.det(matrices) < 0.0
    scales[mirrored] *= -1.0
    degenerate = ~(np.abs(scales) > _TINY).all(axis=1)
    safe_scales = np.where(degenerate[:, None], 1.0, scales)
    rotations = matrices / safe_scales[:, None, :]
    rotations[degenerate] = np.eye(3)
    quats, zero = canonical_quaternions(quaternions_from_matrices(rotations))
    poses = np.empty((rows.shape[0], 10))
    poses[:, 0:3] = rows[:, 0:3]
    poses[:, 3:7] = quats
    poses[:, 7:10] = rows[:, 12:15] * scales
    return poses, degenerate | zero


def poses_from_pa(rows: Float64Array) -> tuple[Float64Array, BoolArray]:
    """`pa T(3) Rx Ry Rz [S(3)]` rows padded to 9 columns: radians, R = Rz * Ry * Rx (Blender Euler 'XYZ')."""
    half = rows[:, 3:6] * 0.5
    cx, cy, cz = np.cos(half).T
    sx, sy, sz = np.sin(half).T
    quats = np.stack(
        (
            sx * cy * cz - cx * sy * sz,
            cx * sy * cz + sx * cy * sz,
            cx * cy * sz - sx * sy * cz,
            cx * cy * cz + sx * sy * sz,
        ),
        axis=1,
    )
    poses = np.empty((rows.shape[0], 10))
    poses[:, 0:3] = rows[:, 0:3]
    poses[:, 3:7], degenerate = canonical_quaternions(quats)
    poses[:, 7:10] = rows[:, 6:9]
    return poses, degenerate


def quaternions_from_matrices(matrices: Float64Array) -> Float64Array:
    """(N, 3, 3) rotation matrices (column-vector convention) to (N, 4) quaternions x, y, z, w."""
    m = matrices
    trace = m[:, 0, 0] + m[:, 1, 1] + m[:, 2, 2]
    # Each row uses the largest of w, x, y, z as pivot, which keeps the square root well away from zero.
    pivots = np.stack((trace, m[:, 0, 0], m[:, 1, 1], m[:, 2, 2]), axis=1).argmax(axis=1)
    quats = np.empty((m.shape[0], 4))
    for pivot, (a, b, c) in enumerate(((0, 1, 2), (0, 1, 2), (1, 2, 0), (2, 0, 1))):
        rows = pivots == pivot
        if not rows.any():
            continue
        r = m[rows]
        if pivot == 0:
            s = np.sqrt(np.maximum(trace[rows] + 1.0, _TINY)) * 2.0
            quats[rows] = np.stack(
                ((r[:, 2, 1] - r[:, 1, 2]) / s, (r[:, 0, 2] - r[:, 2, 0]) / s, (r[:, 1, 0] - r[:, 0, 1]) / s, s / 4),
                axis=1,
            )
            continue
        s = np.sqrt(np.maximum(1.0 + r[:, a, a] - r[:, b, b] - r[:, c, c], _TINY)) * 2.0
        axes = np.empty((r.shape[0], 4))
        axes[:, a] = s / 4
        axes[:, b] = (r[:, a, b] + r[:, b, a]) / s
        axes[:, c] = (r[:, a, c] + r[:, c, a]) / s
        axes[:, 3] = (r[:, c, b] - r[:, b, c]) / s
        quats[rows] = axes
    return quats


def matrices_from_quaternions(quats: Float64Array) -> Float64Array:
    """(N, 4) unit quaternions x, y, z, w to (N, 3, 3) rotation matrices (column-vector convention)."""
    x, y, z, w = quats.T
    return np.stack(
        (
            np.stack((1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)), axis=1),
            np.stack((2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)), axis=1),
            np.stack((2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)), axis=1),
        ),
        axis=1,
    )
