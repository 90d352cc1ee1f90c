"""IQE skeletons and animations in Blender: pose math shared by the importer and the exporter, armature
creation, vertex groups from blend weights, and actions from animation frames (slotted on 4.4+, legacy on 4.2).

Spaces. B_j is a joint's base (bind) pose in model space, the product of its parents' local T*R*S poses. The
Blender rest matrix R_j (`Bone.matrix_local`) is B_j without scale, times an optional bone-axis correction C.
An animated joint A_j becomes the Blender pose matrix P_j = A_j * B_j^-1 * R_j, so a skinned vertex moves by
P_j * R_j^-1 = A_j * B_j^-1 exactly as the IQE skinning says. The exporter inverts these steps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import bpy
import numpy as np

from ..formats.iqe.poses import canonical_quaternions, matrices_from_quaternions, quaternions_from_matrices
from . import armature as armature_helpers

BASE_SCALE = "iqe_base_scale"  # bone property: world scale of the base pose when it is not 1
BONE_AXIS = armature_helpers.IQE_BONE_AXIS_PROPERTY  # armature: the file axis bones were turned to (+Y: none)
FRAMERATE = "iqe_framerate"  # action properties
ORDER = "iqe_order"
ORIGINAL_NAME = "iqe_name"  # the IQE name when Blender had to change it (empty, too long, taken)

BONE_AXES = (
    ("Y", "+Y (none)", "Joints point along +Y, as Blender bones do: no correction"),
    ("X", "+X", "Joints point along +X"),
    ("-X", "-X", "Joints point along -X"),
    ("Z", "+Z", "Joints point along +Z"),
    ("-Z", "-Z", "Joints point along -Z"),
    ("-Y", "-Y", "Joints point along -Y"),
)


def detected_bone_axis(base_world: np.ndarray, parents: list[int]) -> str:
    """The axis (of BONE_AXES) along which most joints point at their children in the base pose: each child a
    joint has, within 30 degrees of one of its six axes, is a vote for that axis; +Y unless another axis has more
    than twice its votes. Exporters write joints with +Y along the bone (Blender's convention), others with +Z or
    +X."""
    rest, _ = without_scale(np.asarray(base_world, np.float64))
    children = np.array([joint for joint, parent in enumerate(parents) if parent >= 0], np.int64)
    if not children.size:
        return "Y"
    owners = np.asarray(parents, np.int64)[children]
    offsets = rest[children, :3, 3] - rest[owners, :3, 3]
    local = np.einsum("nji,nj->ni", rest[owners, :3, :3], offsets)  # (the joint's rotation is orthonormal)
    lengths = np.linalg.norm(local, axis=1)
    local = local[lengths > 1e-6] / lengths[lengths > 1e-6, None]
    names = [name for name, _label, _description in BONE_AXES]
    axes = np.array([armature_helpers.AXIS_VECTORS[name] for name in names], np.float64)
    cosines = local @ axes.T
    votes = np.bincount(np.argmax(cosines, axis=1)[cosines.max(axis=1, initial=-1.0) > np.cos(np.radians(30))],
                        minlength=len(names))  # fmt: skip
    best = int(np.argmax(votes))  # (BONE_AXES starts with +Y: a tie keeps it)
    # +Y (Blender's, and so what this extension writes) holds unless another axis has more than twice its votes: a
    # rig's few hub or control bones, whose children sit off their axis, must not turn every bone
    return names[best] if votes[best] > 2 * votes[0] else "Y"


def axis_correction(axis: str) -> np.ndarray:
    """4x4 C with R = B * C: Blender's bone Y axis laid onto the file's joint axis.

    Not `common.armature.correction`: IQE offers six axes (also -X, -Y, -Z), stored as `iqe_bone_axis` on
    imported armatures; for X and Z the two give the same turn."""
    return armature_helpers.signed_axis_correction(axis)


# ---------------------------------------------------------------------------------------------- pose math


def pose_matrices(poses: np.ndarray) -> np.ndarray:
    """(..., 10) poses (T, quaternion xyzw, S) to (..., 4, 4) matrices T*R*S."""
    flat = np.asarray(poses, np.float64).reshape(-1, 10)
    quats = flat[:, 3:7]
    lengths = np.linalg.norm(quats, axis=1, keepdims=True)
    quats = np.divide(quats, lengths, out=np.tile([0.0, 0.0, 0.0, 1.0], (len(flat), 1)), where=lengths > 1e-12)
    matrices = np.zeros((len(flat), 4, 4))
    matrices[:, :3, :3] = matrices_from_quaternions(quats) * flat[:, None, 7:10]
    matrices[:, :3, 3] = flat[:, 0:3]
    matrices[:, 3, 3] = 1.0
    return matrices.reshape(*np.shape(poses)[:-1], 4, 4)


def decompose(matrices: np.ndarray) -> np.ndarray:
    """(..., 4, 4) matrices to (..., 10) poses; a mirrored matrix gets all three scales negative, as pm does."""
    flat = np.asarray(matrices, np.float64).reshape(-1, 4, 4)
    linear = flat[:, :3, :3]
    scales = np.linalg.norm(linear, axis=1)
    scales[np.linalg.det(linear) < 0.0] *= -1.0
    safe = np.where(np.abs(scales) > 1e-12, scales, 1.0)
    rotations = linear / safe[:, None, :]
    quats, _ = canonical_quaternions(quaternions_from_matrices(rotations))
    poses = np.concatenate((flat[:, :3, 3], quats, scales), axis=1)
    return poses.reshape(*np.shape(matrices)[:-2], 10)


_SHEAR = 1e-4  # cosine between two of a matrix's unit axes above which it is sheared (round-off stays far below)


def sheared_joints(local: np.ndarray) -> list[int]:
    """Joints whose (..., J, 4, 4) matrices are sheared in any of them: axes not at right angles, which a pose of
    translation, rotation and scale cannot hold."""
    linear = np.asarray(local, np.float64)[..., :3, :3]
    lengths = np.linalg.norm(linear, axis=-2, keepdims=True)
    axes = linear / np.where(lengths > 1e-12, lengths, 1.0)  # (an axis scaled to nothing stays 0: at right angles)
    cosines = np.abs(np.swapaxes(axes, -1, -2) @ axes)
    cosines[..., [0, 1, 2], [0, 1, 2]] = 0.0  # only the cosines between different axes
    with np.errstate(invalid="ignore"):
        sheared = (cosines > _SHEAR).any(axis=(-1, -2)).reshape(-1, linear.shape[-3]).any(axis=0)
    return [int(joint) for joint in np.flatnonzero(sheared)]


def local_matrices(world: np.ndarray, parents: list[int]) -> np.ndarray:
    """Parent-local matrices of (..., J, 4, 4) model-space ones (the inverse of `armature.world_from_local`).

    Not `armature.local_from_world`: IQE joints carry scale (and may be singular), so the parent is inverted in
    general, not as a rigid transform."""
    local = np.array(world, np.float64, copy=True)
    children = [joint for joint, parent in enumerate(parents) if parent >= 0]
    if children:  # one batched solve: the same per-matrix LAPACK calls as a loop over the joints
        chosen = [parents[joint] for joint in children]
        local[..., children, :, :] = solve(world[..., chosen, :, :], world[..., children, :, :])
    return local


def solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a^-1 b for stacks of matrices; a singular `a` (a joint scaled to zero) uses its pseudo-inverse."""
    inverted = _affine_inverses(a)
    if inverted is not None:
        return np.asarray(inverted @ b)
    try:
        result: np.ndarray = np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        result = np.linalg.pinv(a) @ b
    return result


def _affine_inverses(matrices: np.ndarray) -> np.ndarray | None:
    """Inverses of a stack of affine 4x4 matrices (last row 0 0 0 1) in closed form, a few array operations for
    the whole stack instead of a LAPACK call per matrix (5,000 matrices: 8 ms -> under 1); None when one is not
    affine or is singular or badly conditioned, which LAPACK then handles. The 3x3 part's inverse is its
    adjugate over its determinant: rows of cross products of its columns."""
    matrices = np.asarray(matrices, np.float64)
    if matrices.shape[-2:] != (4, 4) or not np.array_equal(
        matrices[..., 3, :], np.broadcast_to(_LAST_ROW, matrices.shape[:-1])
    ):
        return None
    columns = [matrices[..., :3, index] for index in range(3)]
    rows = np.stack([np.cross(columns[1], columns[2]), np.cross(columns[2], columns[0]),
                     np.cross(columns[0], columns[1])], axis=-2)  # fmt: skip
    determinants = np.einsum("...i,...i->...", columns[0], rows[..., 0, :])
    with np.errstate(all="ignore"):
        inverse_linear = rows / determinants[..., None, None]
        condition = np.abs(matrices[..., :3, :3]).sum(axis=(-1, -2)) * np.abs(inverse_linear).sum(axis=(-1, -2))
    if not (np.isfinite(condition).all() and bool((condition < _WELL_CONDITIONED).all())):
        return None
    inverses = np.zeros_like(matrices)
    inverses[..., :3, :3] = inverse_linear
    inverses[..., :3, 3] = -np.einsum("...ij,...j->...i", inverse_linear, matrices[..., :3, 3])
    inverses[..., 3, 3] = 1.0
    return inverses


_LAST_ROW = np.array([0.0, 0.0, 0.0, 1.0])
# Below this (norm times inverse norm, summed absolute values) the closed form stays within 1e-11 of LAPACK (5e-12
# measured up to 1e4; its error grows with the square of the condition: 4e-8 near 1e6). Rigs' rotations with even
# scales measure 9 to 27.
_WELL_CONDITIONED = 1e4


def inverse(matrices: np.ndarray) -> np.ndarray:
    """Inverses of a stack of matrices; singular ones get their pseudo-inverse (see `singular`)."""
    try:
        result: np.ndarray = np.linalg.inv(matrices)
    except np.linalg.LinAlgError:
        result = np.linalg.pinv(matrices)
    return result


def singular(matrices: np.ndarray) -> np.ndarray:
    """(...,) whether each (..., 4, 4) affine matrix cannot be inverted (a zero scale, a flat `pm` matrix)."""
    linear = np.asarray(matrices, np.float64)[..., :3, :3]
    size = np.abs(linear).max(axis=(-2, -1))
    result: np.ndarray = np.abs(np.linalg.det(linear)) <= 1e-12 * np.maximum(size, 1e-300) ** 3
    return result


def without_scale(matrices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Matrices with unit-length axes (translation kept), and the removed per-axis scale. A singular matrix gets
    the nearest rotation instead (from its singular value decomposition; the identity for a zero matrix)."""
    result = np.array(matrices, np.float64, copy=True)
    scales = np.linalg.norm(result[..., :3, :3], axis=-2)
    safe = np.where(scales > 1e-12, scales, 1.0)
    result[..., :3, :3] /= safe[..., None, :]
    flat = singular(matrices)
    if flat.any():
        u, _, vt = np.linalg.svd(result[flat, :3, :3])
        rotations = u @ vt
        rotations[np.linalg.det(rotations) < 0.0, :, 2] *= -1.0  # u @ vt is a reflection: turn it into a rotation
        rotations[np.abs(result[flat, :3, :3]).max(axis=(-2, -1)) == 0.0] = np.identity(3)
        result[flat, :3, :3] = rotations
    return result, scales


# ------------------------------------------------------------------------------------------------ building


def build_armature(
    context: bpy.types.Context,
    name: str,
    joint_names: list[str],
    parents: list[int],
    base_world: np.ndarray,
    bone_axis: str,
    warnings: list[str],
) -> tuple[bpy.types.Object, list[str]]:
    """An armature whose rest pose is the base pose; returns the object and each joint's bone name.

    The bones are made by `common.armature.build_armature`; IQE adds its six bone axes, its bone lengths, and what
    export needs to give the file back: the base pose's scale and names Blender had to change."""
    rest, scales = without_scale(base_world)
    skeleton = armature_helpers.Skeleton([joint or "joint" for joint in joint_names], list(parents), rest)
    obj, bone_names = armature_helpers.build_armature(
        context, name, skeleton, axis_correction=axis_correction(bone_axis),
        lengths=_bone_lengths(rest @ axis_correction(bone_axis), parents), sticks=False,
    )  # fmt: skip
    armature = obj.data
    assert isinstance(armature, bpy.types.Armature)
    renamed = [f"{a!r} -> {b!r}" for a, b in zip(joint_names, bone_names, strict=True) if a != b]
    if renamed:
        warnings.append(f"{len(renamed)} joints renamed for Blender: {', '.join(renamed[:5])}")
    for index, bone_name in enumerate(bone_names):
        bone = armature.bones[bone_name]
        if joint_names[index] != bone_name:
            bone[ORIGINAL_NAME] = joint_names[index]
        if np.abs(scales[index] - 1.0).max() > 1e-6:
            bone[BASE_SCALE] = scales[index].tolist()
    if bone_axis != "Y":
        armature[BONE_AXIS] = bone_axis
    return obj, bone_names


def _bone_lengths(rest: np.ndarray, parents: list[int]) -> np.ndarray:
    """Distance to the first child ahead of the bone, else half the parent's, else a tenth of the model size."""
    heads = rest[:, :3, 3]
    extent = float(np.ptp(heads, axis=0).max()) if len(heads) > 1 else 0.0
    fallback = max(extent * 0.1, 0.01)
    lengths = np.zeros(len(parents))
    child_length: dict[int, float] = {}
    for joint, parent in enumerate(parents):
        if parent >= 0 and parent not in child_length:
            distance = float(np.linalg.norm(heads[joint] - heads[parent]))
            if distance > 1e-4:
                child_length[parent] = distance
    for joint, parent in enumerate(parents):
        if joint in child_length:
            lengths[joint] = child_length[joint]
        elif parent >= 0:
            lengths[joint] = max(lengths[parent] * 0.5, fallback * 0.1)
        else:
            lengths[joint] = fallback
    return np.maximum(lengths, 1e-3)


def add_vertex_groups(obj: bpy.types.Object, bone_names: list[str], indices: np.ndarray, weights: np.ndarray) -> None:
    """One vertex group per joint, in joint order, from (V, K) joint indices and weights; never per-vertex Python.

    Not `common.armature.add_vertex_weights` (SMD): a `vb` joint listed twice adds up and a zero weight is no
    link (SMD replaces and keeps zero-weight members), every joint gets a group even when unused, and the
    conversion runs in a scratch scene (much faster at 100k vertices than in the user's scene).

    The result is what one `VertexGroup.add(..., "ADD")` per (joint, vertex, weight) would give: weights clamped
    to 1, a joint listed twice for a vertex summed in ascending order (float32, clamped to 1), zero weights
    skipped. A joint with few distinct weights (byte-quantised files) gets one `add` call per distinct weight;
    one with many (float weights) gets its weights as a float attribute that `geometry.attribute_convert` turns
    into the group in one step (about 15 times faster than one `add` per distinct float weight).
    """
    joints, vertices, values = _summed_weights(np.asarray(indices), np.asarray(weights))
    bounds = np.searchsorted(joints, np.arange(len(bone_names) + 1)).tolist()
    with _attribute_converter(obj, bone_names) as converter:
        _fill_groups(obj, bone_names, bounds, vertices, values, converter)


def _fill_groups(
    obj: bpy.types.Object,
    bone_names: list[str],
    bounds: list[int],
    vertices: np.ndarray,
    values: np.ndarray,
    convert: Callable[[str, np.ndarray], bool] | None,
) -> None:
    for joint, name in enumerate(bone_names):
        start, end = bounds[joint], bounds[joint + 1]
        joint_values = values[start:end]
        if convert is not None and _many_distinct(joint_values):
            dense = np.zeros(len(obj.data.vertices), np.float32)
            dense[vertices[start:end]] = joint_values
            if convert(name, dense):
                continue
            convert = None
        group = obj.vertex_groups.new(name=name)
        if end > start:
            distinct, inverse = np.unique(joint_values, return_inverse=True)
            order = np.argsort(inverse, kind="stable")
            vertex_list = vertices[start:end][order].tolist()
            splits = np.searchsorted(inverse[order], np.arange(1, distinct.shape[0])).tolist()
            for first, last, value in zip([0, *splits], [*splits, end - start], distinct.tolist(), strict=True):
                group.add(vertex_list[first:last], value, "ADD")


_ADD_CALLS_PER_CONVERSION = 128  # one attribute conversion costs about this many `add` calls (4.2-5.2, 2 cores)


def _many_distinct(values: np.ndarray) -> bool:
    """More distinct values than `add` calls are worth; a sample usually decides without sorting them all."""
    if values.shape[0] <= _ADD_CALLS_PER_CONVERSION:
        return False
    if np.unique(values[: 4 * _ADD_CALLS_PER_CONVERSION]).shape[0] > _ADD_CALLS_PER_CONVERSION:
        return True
    return bool(np.unique(values).shape[0] > _ADD_CALLS_PER_CONVERSION)


def _summed_weights(indices: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(joint, vertex, weight) of every positive weight, sorted by joint then vertex, one row per pair."""
    used = weights > 0.0
    values = np.where(used, np.minimum(weights.astype(np.float32), np.float32(1.0)), np.float32(0.0))
    joints = np.where(used, indices.astype(np.int64), -1 - np.arange(indices.shape[1]))  # unused: never equal
    width = joints.shape[1]
    repeated = np.zeros(joints.shape[0], np.bool_)
    for left in range(width):
        for right in range(left + 1, width):
            repeated |= joints[:, left] == joints[:, right]
    if repeated.any():  # a joint twice in a vertex: add up in ascending order, as successive `add` calls would
        rows = np.flatnonzero(repeated)
        joints[rows], values[rows] = _summed_rows(joints[rows], values[rows])
    vertices = np.nonzero(joints >= 0)[0]
    joint_list, value_list = joints[joints >= 0], values[joints >= 0]
    small = joint_list.astype(np.int16) if joint_list.shape[0] and joint_list.max() < 1 << 15 else joint_list
    by_joint = np.argsort(small, kind="stable")
    return joint_list[by_joint], vertices[by_joint], value_list[by_joint]


def _summed_rows(joints: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows with a joint listed more than once: its weights summed into one entry, the others marked unused."""
    order = np.lexsort((values, joints))  # per row, by joint then weight
    joints, values = np.take_along_axis(joints, order, 1), np.take_along_axis(values, order, 1)
    repeated = joints[:, 1:] == joints[:, :-1]
    rows = np.arange(joints.shape[0])
    head = np.zeros(joints.shape[0], np.int64)
    for column in range(1, joints.shape[1]):
        same = repeated[:, column - 1]
        head = np.where(same, head, column)
        summed = np.minimum(values[rows[same], head[same]] + values[same, column], np.float32(1.0))
        values[rows[same], head[same]] = summed
    joints[:, 1:][repeated] = -1  # any negative joint is unused
    return joints, values


@contextmanager
def _attribute_converter(obj: bpy.types.Object, names: list[str]) -> Iterator[Callable[[str, np.ndarray], bool] | None]:
    """A function making vertex group `name` from one float per vertex (False when the operator cannot run).

    The operator runs in an empty scratch scene: `bpy.ops` updates the context's view layer around every call,
    which costs far more in the user's scene.
    """
    mesh = obj.data
    if not isinstance(mesh, bpy.types.Mesh) or not len(mesh.vertices):
        yield None
        return
    prefix = ".iqe_weights"
    taken = [*names, *(attribute.name for attribute in mesh.attributes), *(group.name for group in obj.vertex_groups)]
    while any(name.startswith(prefix) for name in taken):
        prefix += "_"
    scratch: list[bpy.types.Scene] = []

    def convert(name: str, values: np.ndarray) -> bool:
        if not scratch:
            scratch.append(bpy.data.scenes.new(prefix))
        active = mesh.attributes.active_index
        attribute = mesh.attributes.new(prefix, "FLOAT", "POINT")
        attribute.data.foreach_set("value", values)
        mesh.attributes.active = attribute
        scene = scratch[0]
        with bpy.context.temp_override(object=obj, active_object=obj, scene=scene, view_layer=scene.view_layers[0]):
            converted = bpy.ops.geometry.attribute_convert.poll() and bpy.ops.geometry.attribute_convert(
                mode="VERTEX_GROUP"
            ) == {"FINISHED"}
        if not converted:
            mesh.attributes.remove(attribute)
        mesh.attributes.active_index = active
        if converted:
            group = obj.vertex_groups[len(obj.vertex_groups) - 1]
            group.name = name
            obj.vertex_groups.active_index = group.index
        return converted

    try:
        yield convert
    finally:
        for scene in scratch:
            bpy.data.scenes.remove(scene)


def pose_basis(anim_world: np.ndarray, base_world: np.ndarray, rest: np.ndarray, parents: list[int]) -> np.ndarray:
    """(F, J, 10) pose-bone basis channels (location, quaternion xyzw, scale) for model-space joints A.

    The same as `common.animation.basis_from_pose` on P, but in one batched solve that also takes a joint
    scaled to zero (a singular parent pose, common in game animations to hide a part)."""
    pose = anim_world @ inverse(base_world) @ rest  # P = A B^-1 R, (F, J, 4, 4)
    relative_rest = local_matrices(rest, parents)  # R_parent^-1 R_j
    parent_pose = np.broadcast_to(np.identity(4), pose.shape).copy()
    children = [joint for joint, parent in enumerate(parents) if parent >= 0]
    parent_pose[:, children] = pose[:, [parents[joint] for joint in children]]
    basis = np.linalg.inv(relative_rest) @ solve(parent_pose, pose)  # all joints and frames at once
    return decompose(basis)
