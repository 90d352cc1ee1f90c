"""IQE skeletons and animations in Blender: pose math shared by the importer and the exporter, armature
creation, vertex groups from blend weights, and actions from animation frames (slotted on 4.4+, legacy on 4.2).

Spaces. B_j is a joint's base (bind) pose in model space, the product of its parents' local T*R*S poses. The
Blender rest matrix R_j (`Bone.matrix_local`) is B_j without scale, times an optional bone-axis correction C.
An animated joint A_j becomes the Blender pose matrix P_j = A_j * B_j^-1 * R_j, so a skinned vertex moves by
P_j * R_j^-1 = A_j * B_j^-1 exactly as the IQE skinning says. The exporter inverts these steps.
"""

from __future__ import annotations

import bpy
import numpy as np
from mathutils import Matrix, Vector

from ..formats.iqe.poses import canonical_quaternions, matrices_from_quaternions, quaternions_from_matrices

BASE_SCALE = "iqe_base_scale"  # bone property: world scale of the base pose when it is not 1
BONE_AXIS = "iqe_bone_axis"  # armature property: the file axis Blender bones were turned to (+Y: none)
FRAMERATE = "iqe_framerate"  # action properties
LOOP = "iqe_loop"
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
_AXIS_VECTORS = {"X": (1, 0, 0), "-X": (-1, 0, 0), "Y": (0, 1, 0), "-Y": (0, -1, 0), "Z": (0, 0, 1), "-Z": (0, 0, -1)}
SLOTTED_ACTIONS = bpy.app.version >= (4, 4, 0)


def axis_correction(axis: str) -> np.ndarray:
    """4x4 C with R = B * C: Blender's bone Y axis laid onto the file's joint axis."""
    rotation = Vector((0.0, 1.0, 0.0)).rotation_difference(Vector(_AXIS_VECTORS.get(axis, (0, 1, 0))))
    return np.array(rotation.to_matrix().to_4x4(), np.float64)


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


def world_matrices(local: np.ndarray, parents: list[int]) -> np.ndarray:
    """Chain (..., J, 4, 4) parent-local matrices into model space; parents precede children."""
    world = np.array(local, np.float64, copy=True)
    for joint, parent in enumerate(parents):
        if parent >= 0:
            world[..., joint, :, :] = world[..., parent, :, :] @ local[..., joint, :, :]
    return world


def local_matrices(world: np.ndarray, parents: list[int]) -> np.ndarray:
    local = np.array(world, np.float64, copy=True)
    for joint, parent in enumerate(parents):
        if parent >= 0:
            local[..., joint, :, :] = np.linalg.solve(world[..., parent, :, :], world[..., joint, :, :])
    return local


def without_scale(matrices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Matrices with unit-length axes (translation kept), and the removed per-axis scale."""
    result = np.array(matrices, np.float64, copy=True)
    scales = np.linalg.norm(result[..., :3, :3], axis=-2)
    safe = np.where(scales > 1e-12, scales, 1.0)
    result[..., :3, :3] /= safe[..., None, :]
    return result, scales


def continuous_quaternions(quats: np.ndarray) -> np.ndarray:
    """(F, ..., 4) quaternions with signs flipped so consecutive frames interpolate the short way."""
    if quats.shape[0] < 2:
        return quats
    dots = np.einsum("f...i,f...i->f...", quats[1:], quats[:-1])
    flips = np.where(dots < 0.0, -1.0, 1.0)
    signs = np.concatenate((np.ones((1, *flips.shape[1:])), np.cumprod(flips, axis=0)))
    result: np.ndarray = quats * signs[..., None]
    return result


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
    """An armature whose rest pose is the base pose; returns the object and each joint's bone name."""
    armature = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, armature)
    context.collection.objects.link(obj)
    rest, scales = without_scale(base_world)
    rest = rest @ axis_correction(bone_axis)
    lengths = _bone_lengths(rest, parents)
    view_layer = context.view_layer
    previous_active = view_layer.objects.active
    view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        bones: list[bpy.types.EditBone] = []
        for index, joint in enumerate(joint_names):
            bone = armature.edit_bones.new(joint or "joint")
            bone.head = (0.0, 0.0, 0.0)
            bone.tail = (0.0, float(lengths[index]), 0.0)
            bone.matrix = Matrix(rest[index].tolist())
            if parents[index] >= 0:
                bone.parent = bones[parents[index]]
            bones.append(bone)
        bone_names = [bone.name for bone in bones]
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        view_layer.objects.active = previous_active
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
    """One vertex group per joint; one `add` call per distinct (joint, weight), never one per vertex."""
    groups = [obj.vertex_groups.new(name=name) for name in bone_names]
    used = weights > 0.0
    vertices = np.nonzero(used)[0]
    joints = indices[used].astype(np.int64)
    values = weights[used].astype(np.float32)
    if not len(vertices):
        return
    order = np.lexsort((vertices, values, joints))
    vertices, joints, values = vertices[order], joints[order], values[order]
    change = np.flatnonzero((np.diff(joints) != 0) | (np.diff(values) != 0)) + 1
    starts = np.concatenate(([0], change))
    ends = np.concatenate((change, [len(vertices)]))
    vertex_list = vertices.tolist()
    for start, end, joint, value in zip(
        starts.tolist(), ends.tolist(), joints[starts].tolist(), values[starts].tolist(), strict=True
    ):
        groups[joint].add(vertex_list[start:end], value, "ADD")


def pose_basis(anim_world: np.ndarray, base_world: np.ndarray, rest: np.ndarray, parents: list[int]) -> np.ndarray:
    """(F, J, 10) pose-bone basis channels (location, quaternion xyzw, scale) for model-space joints A."""
    pose = anim_world @ np.linalg.inv(base_world) @ rest  # P = A B^-1 R, (F, J, 4, 4)
    relative_rest = local_matrices(rest, parents)  # R_parent^-1 R_j
    basis = np.empty_like(pose)
    for joint, parent in enumerate(parents):
        parent_pose = pose[:, parent] if parent >= 0 else np.identity(4)
        basis[:, joint] = np.linalg.solve(relative_rest[joint], np.linalg.solve(parent_pose, pose[:, joint]))
    return decompose(basis)


def new_action(name: str, obj: bpy.types.Object) -> tuple[bpy.types.Action, object]:
    """An action and the F-curve collection to fill: a slot's channelbag on 4.4+, the action itself on 4.2."""
    action = bpy.data.actions.new(name)
    if SLOTTED_ACTIONS:
        slot = action.slots.new(id_type="OBJECT", name=obj.name)
        strip = action.layers.new("Layer").strips.new(type="KEYFRAME")
        return action, strip.channelbag(slot, ensure=True)
    return action, action


def fill_action(action_owner: object, bone_names: list[str], channels: np.ndarray, first_frame: float) -> None:
    """Linear keys on every frame: location, rotation_quaternion (w first) and scale of every bone."""
    frames = first_frame + np.arange(channels.shape[0], dtype=np.float64)
    quats = continuous_quaternions(channels[..., 3:7])
    fcurves = getattr(action_owner, "fcurves")  # noqa: B009  (a channelbag or a legacy action)
    linear = np.ones(channels.shape[0], np.int32)
    for joint, bone in enumerate(bone_names):
        series = (
            ("location", channels[:, joint, 0:3]),
            ("rotation_quaternion", quats[:, joint][:, [3, 0, 1, 2]]),
            ("scale", channels[:, joint, 7:10]),
        )
        for prop, values in series:
            path = f'pose.bones["{_escape(bone)}"].{prop}'
            for index in range(values.shape[1]):
                if SLOTTED_ACTIONS:
                    curve = fcurves.new(path, index=index, group_name=bone)
                else:
                    curve = fcurves.new(path, index=index, action_group=bone)
                curve.keyframe_points.add(len(frames))
                keys = np.column_stack((frames, values[:, index])).astype(np.float32)
                curve.keyframe_points.foreach_set("co", keys.ravel())
                curve.keyframe_points.foreach_set("interpolation", linear)
                curve.update()


def assign_action(obj: bpy.types.Object, action: bpy.types.Action) -> None:
    data = obj.animation_data or obj.animation_data_create()
    data.action = action
    if SLOTTED_ACTIONS and data.action_slot is None and len(action.slots):
        data.action_slot = action.slots[0]


def _escape(name: str) -> str:
    return name.replace("\\", "\\\\").replace('"', '\\"')
