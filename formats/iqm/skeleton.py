"""Joints, quantised animation frames and per-frame bounds, as the reference compiler makes them.

Poses are translation, quaternion (x, y, z, w) and scale; the local matrix is T * R * S. Frames are stored per
pose channel as 16-bit steps between the channel's smallest and largest value over all frames (channels that
never change are not stored). Bounds are those of the skinned vertices in every frame.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..iqe.poses import oriented_quaternions

Float32Array = npt.NDArray[np.float32]
Float64Array = npt.NDArray[np.float64]

_CHANGING = np.float32(1e-10)  # a channel whose range is at least this is stored
_STEPS = np.float32(0xFFFF)
_CHUNK_VALUES = 1 << 18  # doubles per row block of the bounds' matrix product: small enough to stay in cache


def canonical_poses(poses: npt.ArrayLike) -> Float64Array:
    """(..., 10) poses with w <= 0; quaternions are not normalised, as the compiler never normalises them."""
    table = np.array(poses, np.float64)
    flat = table.reshape(-1, 10)
    flat[:, 3:7] = oriented_quaternions(flat[:, 3:7])[0]
    return table


@dataclass
class QuantisedFrames:
    masks: npt.NDArray[np.uint32]  # (P,) bit k set: channel k stored
    offsets: Float32Array  # (P, 10)
    scales: Float32Array  # (P, 10)
    frames: npt.NDArray[np.uint16]  # (F, stored channels)


def quantise_frames(frames: Float32Array) -> QuantisedFrames:
    """(F, P, 10) float32 channels to the compiler's offset, scale and 16-bit steps (float32 arithmetic)."""
    count, poses = frames.shape[:2]
    if not count:
        zeros = np.zeros((poses, 10), np.float32)
        return QuantisedFrames(np.zeros(poses, np.uint32), zeros, zeros.copy(), np.zeros((0, 0), np.uint16))
    offsets = frames.min(axis=0)
    ranges = frames.max(axis=0) - offsets
    stored = ranges >= _CHANGING
    scales = np.where(stored, ranges / _STEPS, np.float32(0.0)).astype(np.float32)
    masks = (stored.astype(np.uint32) << np.arange(10, dtype=np.uint32)).sum(axis=1).astype(np.uint32)
    safe = np.where(stored, scales, np.float32(1.0))
    steps = (frames - offsets) / safe + np.float32(0.5)
    return QuantisedFrames(masks, offsets, scales, steps[:, stored].astype(np.uint16))


# ---------------------------------------------------------------------------------------------- bounds


def pose_matrices(poses: Float64Array) -> Float64Array:
    """(..., 10) poses to (..., 3, 4) matrices [R * S | T] (rows), the compiler's Matrix3x4(orient, pos, scale)."""
    x, y, z, w = (poses[..., 3 + axis] for axis in range(4))
    tx, ty, tz = 2 * x, 2 * y, 2 * z
    txx, tyy, tzz, txy, txz, tyz = tx * x, ty * y, tz * z, tx * y, tx * z, ty * z
    twx, twy, twz = w * tx, w * ty, w * tz
    rows = np.stack(
        (
            np.stack((1 - (tyy + tzz), txy - twz, txz + twy), axis=-1),
            np.stack((txy + twz, 1 - (txx + tzz), tyz - twx), axis=-1),
            np.stack((txz - twy, tyz + twx, 1 - (txx + tyy)), axis=-1),
        ),
        axis=-2,
    )
    matrices = np.empty((*poses.shape[:-1], 3, 4))
    matrices[..., :3] = rows * poses[..., None, 7:10]
    matrices[..., 3] = poses[..., 0:3]
    return matrices


def _multiply(first: Float64Array, second: Float64Array) -> Float64Array:
    """first * second for (..., 3, 4) affine matrices."""
    result: Float64Array = first[..., :3] @ second
    result[..., 3] += first[..., 3]
    return result


def _invert(matrices: Float64Array) -> Float64Array:
    """Inverse of [R * S | T] by the compiler's method (transpose, rows divided by their squared length)."""
    rows = np.swapaxes(matrices[..., :3], -1, -2)
    rows = rows / np.sum(rows * rows, axis=-1, keepdims=True)
    result = np.empty_like(matrices)
    result[..., :3] = rows
    result[..., 3] = -(rows @ matrices[..., 3:4])[..., 0]
    return result


def _world(parents: list[int], local: Float64Array) -> Float64Array:
    world = np.empty_like(local)
    for joint, parent in enumerate(parents):
        world[..., joint, :, :] = (
            local[..., joint, :, :] if parent < 0 else _multiply(world[..., parent, :, :], local[..., joint, :, :])
        )
    return world


def frame_bounds(
    parents: list[int],
    base_poses: Float64Array,
    frames: Float64Array,
    positions: Float64Array,
    bones: npt.NDArray[np.uint8],
    weights: Float32Array,
) -> Float32Array:
    """(F, 8) bbmin, bbmax, xy radius and radius of the skinned vertices in each of the (F, J, 10) frames.

    Weights are the compiler's normalised ones (in float32, as it multiplies them); a vertex without weight
    sits at the origin. Every vertex counts, used by a triangle or not. The skinning is exact (float64) for the
    vertices that a quicker float32 pass finds at or near an extreme in some frame, which are the only ones that
    can set a bound (see _screened).
    """
    local_inverse = _invert(pose_matrices(base_poses))
    inverse_bind = np.empty_like(local_inverse)
    for joint, parent in enumerate(parents):  # inverse(world) = inverse(local) * inverse(parent's world)
        inverse = local_inverse[joint]
        inverse_bind[joint] = inverse if parent < 0 else _multiply(inverse, inverse_bind[parent])
    skinning = _multiply(_world(parents, pose_matrices(frames)), inverse_bind)  # (F, J, 3, 4)
    count, joint_count = skinning.shape[:2]
    # Row 4j + c, column 3f + i: element (i, c) of joint j's matrix in frame f, so that a vertex's weights times
    # its homogeneous position, spread over its joints' four rows, multiplied by this gives it skinned in every frame.
    columns = np.ascontiguousarray(skinning.transpose(1, 3, 0, 2).reshape(joint_count, 4, 3 * count))
    vertices = Vertices(positions, bones, weights)
    if positions.shape[0] * count >= _SCREEN_FROM_VALUES:
        kept = _screened(columns, vertices, _float32_error(skinning, vertices))
        if kept is not None:
            vertices = Vertices(positions[kept], bones[kept], weights[kept])
    extremes = _Extremes(count, np.float64)
    for _vertex_ids, skinned in _skinned_blocks(columns, vertices):
        extremes.add(skinned)
    return extremes.bounds()


_SCREEN_FROM_VALUES = 1 << 16  # vertices times frames from which the float32 pass pays


@dataclass
class Vertices:
    positions: Float64Array  # (n, 3)
    bones: npt.NDArray[np.uint8]  # (n, 4)
    weights: Float32Array  # (n, 4)


class _Extremes:
    """Running per-frame extremes of skinned vertices: lowest and highest x, y, z, largest squared xy and full
    radius."""

    def __init__(self, frame_count: int, dtype: type[np.floating[Any]]) -> None:
        self.lows = np.full((frame_count, 3), np.inf, dtype)
        self.highs = np.full((frame_count, 3), -np.inf, dtype)
        self.radii = np.zeros((frame_count, 2), dtype)  # squared: xy, full

    def add(self, skinned: npt.NDArray[np.floating[Any]]) -> tuple[npt.NDArray[Any], ...]:
        """Take in (n, F, 3) skinned vertices; their (n, F, 2) squared radii and their own extremes."""
        squares = skinned**2
        radii = np.empty((*skinned.shape[:2], 2), skinned.dtype)
        np.add(squares[..., 0], squares[..., 1], out=radii[..., 0])
        np.add(radii[..., 0], squares[..., 2], out=radii[..., 1])
        lows, highs, largest = skinned.min(axis=0), skinned.max(axis=0), radii.max(axis=0)
        np.minimum(self.lows, lows, out=self.lows)
        np.maximum(self.highs, highs, out=self.highs)
        np.maximum(self.radii, largest, out=self.radii)
        return radii, lows, highs, largest

    def bounds(self) -> Float32Array:
        radii = np.sqrt(self.radii.astype(np.float64))
        result: Float32Array = np.concatenate((self.lows, self.highs, radii), axis=1).astype(np.float32)
        return result


def _float32_error(skinning: Float64Array, vertices: Vertices) -> Float64Array | None:
    """(F,) a bound on how far a float32 skinned coordinate can be from the exact one in each frame, with room to
    spare (None when float32 cannot hold the values and their squares): at most 16 products of weight, matrix
    element and coordinate are summed per coordinate, each rounded a few times, none larger than `reach`."""
    magnitudes = np.abs(skinning)
    if np.any((magnitudes > 0) & (magnitudes < _FLOAT32_NORMAL)):  # (float32 would hold them with too few bits)
        return None
    largest_row = magnitudes.sum(axis=-1).max(axis=(1, 2))  # (F,) over joints and rows
    largest_coordinate = max(float(np.abs(vertices.positions).max(initial=0.0)), 1.0)
    largest_weight_sum = float(np.abs(vertices.weights.astype(np.float64)).sum(axis=1).max(initial=0.0))
    reach = largest_row * largest_coordinate * max(largest_weight_sum, 1.0)
    if not np.all(np.isfinite(reach)) or float(reach.max(initial=0.0)) > 1e18:
        return None
    # (relative rounding; and a product below float32's normal range, rounded or flushed to zero, is off by up to
    # that range's bottom whatever its size: an absolute term)
    error: Float64Array = reach * (64 * 2.0**-24) + 64 * _FLOAT32_NORMAL * max(largest_weight_sum, 1.0)
    return error


_FLOAT32_NORMAL = 2.0**-126  # the smallest normal float32


def _screened(columns: Float64Array, vertices: Vertices, error: Float64Array | None) -> npt.NDArray[np.int64] | None:
    """The vertices that can set a bound in some frame: those whose float32 value (coordinate or radius) is
    within twice its float32 error of that frame's float32 extreme. A vertex further off is beaten, exactly too,
    by the one at the extreme. A block of vertices is searched only in the frames where it comes that near.
    None when float32 is no help (values too large, or not finite)."""
    if error is None:
        return None
    near = 2 * error[:, None]  # (F, 1)
    extremes = _Extremes(columns.shape[2] // 3, np.float32)
    kept = []
    for part, skinned in _skinned_blocks(columns.astype(np.float32), vertices):
        radii, lows, highs, largest = extremes.add(skinned)
        if not (np.all(np.isfinite(extremes.lows)) and np.all(np.isfinite(extremes.highs))):
            return None
        candidate = np.zeros(part.size, bool)
        low_limits = (extremes.lows + near).astype(np.float32)
        high_limits = (extremes.highs - near).astype(np.float32)
        radius = np.sqrt(extremes.radii.astype(np.float64))
        # (the radii's own float32 rounding: 2**-21 of them; the vector's error: sqrt(3) times a coordinate's)
        radius_limits = (np.maximum(radius * (1 - 2.0**-20) - np.sqrt(3) * near, 0.0) ** 2 * (1 - 2.0**-20)).astype(
            np.float32
        )
        for values, own, limits, below in ((skinned, lows, low_limits, True), (skinned, highs, high_limits, False),
                                           (radii, largest, radius_limits, False)):  # fmt: skip
            frames, axes = np.nonzero(own <= limits if below else own >= limits)
            if frames.size:
                found, limit = values[:, frames, axes], limits[frames, axes]
                candidate |= (found <= limit if below else found >= limit).any(axis=1)
        kept.append(part[candidate])
    return np.sort(np.concatenate(kept)) if kept else None


def _skinned_blocks(
    columns: npt.NDArray[np.floating[Any]], vertices: Vertices
) -> Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.floating[Any]]]]:
    """(vertex ids, (n, F, 3) skinned) a block of vertices at a time, in the precision of `columns`."""
    count = columns.shape[2] // 3
    order = np.argsort(vertices.bones[:, 0], kind="stable")  # vertices of one joint together: blocks use few joints
    block = max(16, _CHUNK_VALUES // max(3 * count, 4 * columns.shape[0]))
    for start in range(0, order.size, block):
        part = order[start : start + block]
        skinned = _skinned_block(columns, vertices.positions[part], vertices.bones[part], vertices.weights[part])
        yield part, skinned.reshape(part.size, count, 3)


def _skinned_block(
    columns: npt.NDArray[np.floating[Any]], positions: Float64Array, bones: npt.NDArray[np.uint8],
    weights: Float32Array,
) -> npt.NDArray[np.floating[Any]]:
    """(n, 3F) positions of n vertices in every frame: one dense matrix product over the joints they use.

    Each vertex's row holds weight * (x, y, z, 1) at its joints' four columns (a joint named twice adds up), as
    the compiler blends the joints' matrices by the weights before it transforms the vertex.
    """
    rows = positions.shape[0]
    present = np.zeros(256, bool)
    present[bones] = True
    used = np.flatnonzero(present)
    slots = (np.cumsum(present) - 1)[bones]  # of each vertex's joints among those used
    homogeneous = np.ones((rows, 4), columns.dtype)
    homogeneous[:, :3] = positions
    width = 4 * used.size
    spread = np.zeros((rows, width), columns.dtype)
    row = np.arange(rows)[:, None]
    for influence in range(bones.shape[1]):  # (one influence at a time: a joint named twice adds up)
        spread[row, slots[:, influence, None] * 4 + np.arange(4)] += weights[:, influence, None] * homogeneous
    skinned: npt.NDArray[np.floating[Any]] = spread @ columns[used].reshape(width, -1)
    return skinned
