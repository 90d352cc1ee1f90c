"""Joints, quantised animation frames and per-frame bounds, as the reference compiler makes them.

Poses are translation, quaternion (x, y, z, w) and scale; the local matrix is T * R * S. Frames are stored per
pose channel as 16-bit steps between the channel's smallest and largest value over all frames (channels that
never change are not stored). Bounds are those of the skinned vertices in every frame.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    sits at the origin. Every vertex counts, used by a triangle or not.
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
    order = np.argsort(bones[:, 0], kind="stable")  # vertices of one joint together: blocks then use few joints
    lows = np.full((count, 3), np.inf)
    highs = np.full((count, 3), -np.inf)
    xy = np.zeros(count)
    full = np.zeros(count)
    block = max(16, _CHUNK_VALUES // max(3 * count, 4 * joint_count))
    for start in range(0, order.size, block):
        part = order[start : start + block]
        skinned = _skinned_block(columns, positions[part], bones[part], weights[part]).reshape(part.size, count, 3)
        np.minimum(lows, skinned.min(axis=0), out=lows)
        np.maximum(highs, skinned.max(axis=0), out=highs)
        squares = skinned[..., 0] ** 2 + skinned[..., 1] ** 2
        np.maximum(xy, squares.max(axis=0), out=xy)
        np.maximum(full, (squares + skinned[..., 2] ** 2).max(axis=0), out=full)
    result: Float32Array = np.concatenate((lows, highs, np.sqrt(xy)[:, None], np.sqrt(full)[:, None]), axis=1)
    return result.astype(np.float32)


def _skinned_block(
    columns: Float64Array, positions: Float64Array, bones: npt.NDArray[np.uint8], weights: Float32Array
) -> Float64Array:
    """(n, 3F) positions of n vertices in every frame: one dense matrix product over the joints they use.

    Each vertex's row holds weight * (x, y, z, 1) at its joints' four columns (a joint named twice adds up), as
    the compiler blends the joints' matrices by the weights before it transforms the vertex.
    """
    rows = positions.shape[0]
    used, slots = np.unique(bones, return_inverse=True)
    homogeneous = np.ones((rows, 4))
    homogeneous[:, :3] = positions
    width = 4 * used.size
    cells = (np.arange(rows) * width)[:, None, None] + (slots.reshape(bones.shape) * 4)[:, :, None] + np.arange(4)
    values = weights.astype(np.float64)[:, :, None] * homogeneous[:, None, :]
    spread = np.bincount(cells.ravel(), values.ravel(), minlength=rows * width).reshape(rows, width)
    skinned: Float64Array = spread @ columns[used].reshape(width, -1)
    return skinned
