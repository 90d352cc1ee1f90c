"""Skeleton, weights and animations read back from Blender for IQE export (inverse of common/iqe_rig.py).

Actions are sampled by evaluating their F-curves (no scene frame changes, so a 100k-vertex skinned mesh is
not re-deformed on every frame); the NLA mode instead steps the scene through its frame range with
`frame_set` and reads the evaluated pose, constraints and drivers included.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ..common import armature as armature_helpers
from ..common import compat, iqe_rig
from ..common.animation import (
    ActionSource,
    bake_wanted,
    bone_path,
    frame_range,
    made_for_another_rig,
    object_motion,
    object_motion_warning,
    pose_matrices,
    sample_evaluated_pose,
)
from ..common.armature import euler_to_matrix
from ..formats.errors import FormatError
from ..formats.iqe import IqeAnimation, IqeJoint

EXPORT_ANIMATIONS = (
    ("ALL", "All Actions", "Every action that animates the armature's bones, each over its own frame range"),
    ("ACTIVE", "Active Action", "Only the action assigned to the armature"),
    ("NLA", "Scene (NLA)", "The scene's frame range as played, NLA strips, constraints and drivers included"),
    ("NONE", "None", "No animations"),
)


@dataclass
class Skeleton:
    """Every bone of the armature (poses are composed along all of them), and the file's joints: all of them, or
    with Deform Bones Only the deforming ones (`kept`), each under its nearest deforming ancestor."""

    armature: bpy.types.Object
    bone_names: list[str]  # Blender names in file order
    parents: list[int]
    rest: np.ndarray  # (B, 4, 4) Bone.matrix_local, armature space
    base_world: np.ndarray  # (B, 4, 4) base poses in export space
    space: np.ndarray  # (4, 4) armature space -> export space
    joints: list[IqeJoint]  # the file's joints
    kept: np.ndarray  # (J,) the joints' rows among the bones
    joint_parents: list[int]  # each joint's parent joint

    def joint_of_name(self) -> dict[str, int]:
        """Blender bone name -> joint, for the bones written."""
        return {self.bone_names[row]: joint for joint, row in enumerate(self.kept.tolist())}


def find_armatures(objects: list[bpy.types.Object], meshes: list[bpy.types.Object]) -> list[bpy.types.Object]:
    """Every armature the export uses: chosen ones, then those the meshes are skinned by or parented to."""
    found: list[bpy.types.Object] = [obj for obj in objects if obj.type == "ARMATURE"]
    for obj in meshes:
        for modifier in obj.modifiers:
            if modifier.type == "ARMATURE" and modifier.object is not None and modifier.object not in found:
                found.append(modifier.object)
        parent = obj.parent
        if parent is not None and parent.type == "ARMATURE" and parent not in found and obj.parent_type == "ARMATURE":
            found.append(parent)
    return found


def animating_armature(armatures: list[bpy.types.Object], mode: str, file_kind: str) -> bpy.types.Object | None:
    """The one armature whose animations the file holds (a file has one skeleton: several armatures are written
    as one, the others at rest); several with animations of their own are refused."""
    if mode == "NONE":
        return None
    found: dict[str, tuple[bpy.types.Object, tuple[str, ...]]] = {}
    for armature in armatures:
        if mode == "NLA":
            data = armature.animation_data
            keys: tuple[str, ...] = ("",) if data is not None and (data.action or len(data.nla_tracks)) else ()
        else:
            names = [bone.name for bone in armature.data.bones]
            keys = tuple(action.name for action in armature_actions(armature, names, mode))
        if keys:
            found[armature.name] = (armature, keys)
    if len({keys for _, keys in found.values()}) > 1:  # (the same actions found for each: bones of one name)
        raise FormatError(f"several armatures with animations of their own ({', '.join(map(repr, sorted(found)))}): "
                          f"an {file_kind} file holds one skeleton's animations; export them one at a time")
    candidates = [armature for armature, _ in found.values()]
    with_action = [a for a in candidates if a.animation_data is not None and a.animation_data.action is not None]
    return next(iter(with_action or candidates), None)


def merged_joints(rig: Skeleton, others: list[Skeleton], file_kind: str) -> tuple[list[IqeJoint], dict[str, int]]:
    """The joints of one skeleton for several armatures: the first's, then each other's bones by name; a bone of a
    name already written is that joint when it stands where it does and under a parent of the same name (static
    props' `root` bones), otherwise the armatures cannot share one skeleton. Blender bone name -> joint too."""
    joints = list(rig.joints)
    joint_of_name = rig.joint_of_name()
    world = {rig.bone_names[row]: rig.base_world[row] for row in rig.kept.tolist()}
    parent_of = {name: (joints[joint].parent, rig.armature.name) for name, joint in joint_of_name.items()}
    for other in others:
        merged_of: dict[int, int] = {}  # the other's joint -> the file's
        for joint, row in enumerate(other.kept.tolist()):
            name, parent = other.bone_names[row], other.joint_parents[joint]
            file_parent = merged_of[parent] if parent >= 0 else -1
            if name in joint_of_name:
                if not np.allclose(world[name], other.base_world[row], atol=1e-4) or parent_of[name][0] != file_parent:
                    raise FormatError(
                        f"armatures {parent_of[name][1]!r} and {other.armature.name!r} both have a bone {name!r}, "
                        f"standing differently: an {file_kind} file holds one skeleton (rename one of the bones, or "
                        "export the armatures one at a time)"
                    )
                merged_of[joint] = joint_of_name[name]
                continue
            mine = other.joints[joint]
            merged_of[joint] = joint_of_name[name] = len(joints)
            joints.append(IqeJoint(mine.name, file_parent, mine.translation, mine.rotation, mine.scale))
            world[name], parent_of[name] = other.base_world[row], (file_parent, other.armature.name)
    return joints, joint_of_name


def with_resting_joints(animation: IqeAnimation, joints: list[IqeJoint]) -> None:
    """Frames for joints past the animated armature's (several armatures written as one): their base pose."""
    frames = animation.frames
    missing = len(joints) - frames.shape[1]
    if missing > 0:
        base = np.array([[*j.translation, *j.rotation, *j.scale] for j in joints[-missing:]], np.float32)
        animation.frames = np.concatenate([frames, np.broadcast_to(base, (len(frames), *base.shape))], axis=1)


def skeleton(armature: bpy.types.Object, space: np.ndarray, deform_only: bool = False) -> Skeleton:
    bones = armature_helpers.bones_in_file_order(armature)
    index = {bone.name: i for i, bone in enumerate(bones)}
    parents = [index[bone.parent.name] if bone.parent else -1 for bone in bones]
    kept = np.array([i for i, bone in enumerate(bones) if bone.use_deform or not deform_only], np.int64)
    if not kept.size and bones:
        raise FormatError(f"{armature.name}: no bone deforms (Deform Bones Only is on)")
    joint_parents = _kept_parents(parents, kept)
    rest = np.array([np.array(bone.matrix_local, np.float64) for bone in bones]).reshape(-1, 4, 4)
    correction = np.linalg.inv(armature_helpers.joint_turn(armature))
    scales = np.array([list(bone.get(iqe_rig.BASE_SCALE, (1.0, 1.0, 1.0))) for bone in bones], np.float64)
    scaling = np.zeros((len(bones), 4, 4))
    scaling[:, [0, 1, 2], [0, 1, 2]] = scales.reshape(-1, 3)
    scaling[:, 3, 3] = 1.0
    base_world = space @ rest @ correction @ scaling
    poses = iqe_rig.decompose(iqe_rig.local_matrices(base_world[kept], joint_parents))
    joints = [
        IqeJoint(
            str(bones[row].get(iqe_rig.ORIGINAL_NAME, bones[row].name)),
            joint_parents[joint],
            tuple(poses[joint, 0:3].tolist()),
            tuple(poses[joint, 3:7].tolist()),
            tuple(poses[joint, 7:10].tolist()),
        )
        for joint, row in enumerate(kept.tolist())
    ]
    names = [bone.name for bone in bones]
    return Skeleton(armature, names, parents, rest, base_world, space, joints, kept, joint_parents)


def _kept_parents(parents: list[int], kept: np.ndarray) -> list[int]:
    """For each kept bone, the joint of its nearest kept ancestor (-1: none)."""
    joint_of_row = {row: joint for joint, row in enumerate(kept.tolist())}
    result = []
    for row in kept.tolist():
        parent = parents[row]
        while parent >= 0 and parent not in joint_of_row:
            parent = parents[parent]
        result.append(joint_of_row[parent] if parent >= 0 else -1)
    return result


# ------------------------------------------------------------------------------------------------ animation


# Not common.animation's `actions_for`/`sample_bone_action` (SMD): those make each object slot a source of its own
# and evaluate every curve frame by frame in Python. IQE writes one animation per action from the slot animating
# this armature, and samples in numpy (`_sample_curves`): most of the export benchmark's animation time.


def _fcurve_owner(action: bpy.types.Action, armature: bpy.types.Object) -> object | None:
    """The F-curves of the action that animate this armature: a slot's channelbag on 4.4+, the action on 4.2."""
    return _animating(action, armature)[0]


def _animating(action: bpy.types.Action, armature: bpy.types.Object) -> tuple[object | None, object | None]:
    """The owner of the action's F-curves that animate this armature, and on 4.4+ the slot they belong to."""
    if not compat.has_slotted_actions():
        return action, None
    slots = compat.object_slots(action)
    data = armature.animation_data
    if data is not None and data.action == action and compat.assigned_slot(data) is not None:
        slots.insert(0, compat.assigned_slot(data))
    for slot in slots:
        for channelbag in compat.slot_channelbags(action, slot):
            if len(channelbag.fcurves):
                return channelbag, slot
    return None, None


def _bone_curves(owner: object, bone_names: list[str]) -> dict[tuple[int, str, int], bpy.types.FCurve]:
    prefixes = {bone_path(name, ""): joint for joint, name in enumerate(bone_names)}
    curves = {}
    for curve in getattr(owner, "fcurves"):  # noqa: B009  (a channelbag or a legacy action)
        path = curve.data_path
        cut = path.rfind("].")
        joint = prefixes.get(path[: cut + 2]) if cut >= 0 else None
        if joint is not None and not curve.mute:
            curves[(joint, path[cut + 2 :], curve.array_index)] = curve
    return curves


def armature_actions(armature: bpy.types.Object, bone_names: list[str], mode: str) -> list[bpy.types.Action]:
    data = armature.animation_data
    if mode == "ACTIVE":
        return [data.action] if data is not None and data.action is not None else []
    found = []
    for action in bpy.data.actions:
        owner = _fcurve_owner(action, armature)
        if owner is None or not _bone_curves(owner, bone_names):
            continue
        if not made_for_another_rig(action, compat.object_slots(action), armature):
            found.append(action)
    found.sort(key=lambda a: (int(a.get(iqe_rig.ORDER, 1 << 30)), a.name))
    return found


def _rotation_matrices(channels: dict[str, np.ndarray], mode: str) -> np.ndarray:
    if mode == "QUATERNION":
        wxyz = channels["rotation_quaternion"]
        xyzw = wxyz[..., [1, 2, 3, 0]]
    elif mode == "AXIS_ANGLE":
        angle_axis = channels["rotation_axis_angle"]
        axis = angle_axis[..., 1:4]
        length = np.linalg.norm(axis, axis=-1, keepdims=True)
        axis = np.divide(axis, length, out=np.tile([0.0, 1.0, 0.0], (*axis.shape[:-1], 1)), where=length > 1e-12)
        half = angle_axis[..., 0:1] * 0.5
        xyzw = np.concatenate((axis * np.sin(half), np.cos(half)), axis=-1)
    else:
        return euler_to_matrix(channels["rotation_euler"], mode)
    length = np.linalg.norm(xyzw, axis=-1, keepdims=True)
    xyzw = np.divide(xyzw, length, out=np.tile([0.0, 0.0, 0.0, 1.0], (*xyzw.shape[:-1], 1)), where=length > 1e-12)
    return iqe_rig.matrices_from_quaternions(xyzw.reshape(-1, 4)).reshape(*xyzw.shape[:-1], 3, 3)


_CHANNELS = {"location": 3, "rotation_quaternion": 4, "rotation_euler": 3, "rotation_axis_angle": 4, "scale": 3}
_REST_VALUES = {"location": (0.0, 0.0, 0.0), "rotation_quaternion": (1.0, 0.0, 0.0, 0.0),
                "rotation_euler": (0.0, 0.0, 0.0), "rotation_axis_angle": (0.0, 0.0, 1.0, 0.0),
                "scale": (1.0, 1.0, 1.0)}  # fmt: skip


def _sample_curve(curve: bpy.types.FCurve, frames: np.ndarray, frame_list: list[float]) -> np.ndarray:
    """The curve at every frame: linear and constant keys in numpy, anything else through `evaluate`."""
    count = len(curve.keyframe_points)
    if count and not len(curve.modifiers) and curve.extrapolation == "CONSTANT":
        modes = np.empty(count, np.int32)
        curve.keyframe_points.foreach_get("interpolation", modes)
        keys = np.empty(count * 2, np.float32)
        curve.keyframe_points.foreach_get("co", keys)
        times, values = keys[0::2].astype(np.float64), keys[1::2].astype(np.float64)
        if (modes[:-1] == _LINEAR).all() and (np.diff(times) > 0).all():
            result: np.ndarray = np.interp(frames, times, values)
            return result
        if (modes[:-1] == _CONSTANT).all() and (np.diff(times) > 0).all():
            held: np.ndarray = values[np.clip(np.searchsorted(times, frames, side="right") - 1, 0, count - 1)]
            return held
    return np.array([curve.evaluate(frame) for frame in frame_list], np.float64)


_CONSTANT, _LINEAR = 0, 1  # keyframe interpolation enum values


def _sample_curves(curves: list[bpy.types.FCurve], frames: np.ndarray, frame_list: list[float]) -> list[np.ndarray]:
    """`_sample_curve` of each curve; linear curves keyed exactly on `frames` (baked or imported actions, the
    usual case) are read in one batch: their keys are the samples."""
    samples: list[np.ndarray | None] = [None] * len(curves)
    count = len(frames)
    batch = [
        position
        for position, curve in enumerate(curves)
        if len(curve.keyframe_points) == count and not len(curve.modifiers) and curve.extrapolation == "CONSTANT"
    ]
    if batch and count:
        keys = np.empty((len(batch), count * 2), np.float32)
        modes = np.empty((len(batch), count), np.int32)
        for row, position in enumerate(batch):
            curves[position].keyframe_points.foreach_get("co", keys[row])
            curves[position].keyframe_points.foreach_get("interpolation", modes[row])
        times, values = keys[:, 0::2].astype(np.float64), keys[:, 1::2].astype(np.float64)
        on_frames = (times == frames[None, :]).all(axis=1) & (modes[:, :-1] == _LINEAR).all(axis=1)
        for row, position in enumerate(batch):
            if on_frames[row]:  # np.interp at the knots gives the knots' values: the same numbers
                samples[position] = values[row]
    return [
        sampled if sampled is not None else _sample_curve(curve, frames, frame_list)
        for sampled, curve in zip(samples, curves, strict=True)
    ]


def action_basis(action: bpy.types.Action, rig: Skeleton, frames: np.ndarray) -> np.ndarray:
    """(F, J, 4, 4) pose-bone basis matrices of the action at `frames`; channels without an F-curve take the rest
    value (as for SMD), so an action exports the same whatever pose the armature was left in."""
    owner = _fcurve_owner(action, rig.armature)
    curves = _bone_curves(owner, rig.bone_names) if owner is not None else {}
    pose_bones = [rig.armature.pose.bones[name] for name in rig.bone_names]
    modes = [pose_bone.rotation_mode for pose_bone in pose_bones]
    rotation_props = {_ROTATION_PROP.get(mode, "rotation_euler") for mode in modes}
    frame_list = frames.tolist()
    channels = {}
    for prop, width in _CHANNELS.items():
        if prop not in ("location", "scale") and prop not in rotation_props:
            continue
        values = np.tile(_REST_VALUES[prop], (len(frames), len(pose_bones), 1))
        found = [(joint, index) for joint in range(len(pose_bones)) for index in range(width)
                 if (joint, prop, index) in curves]  # fmt: skip
        samples = _sample_curves([curves[(joint, prop, index)] for joint, index in found], frames, frame_list)
        for (joint, index), sampled in zip(found, samples, strict=True):
            values[:, joint, index] = sampled
        channels[prop] = values
    basis = np.zeros((len(frames), len(pose_bones), 4, 4))
    for mode in sorted(set(modes)):  # all bones of one rotation mode at once
        chosen = [joint for joint, other in enumerate(modes) if other == mode]
        picked = {prop: values[:, chosen] for prop, values in channels.items()}
        basis[:, chosen, :3, :3] = _rotation_matrices(picked, mode) * picked["scale"][..., None, :]
    basis[:, :, :3, 3] = channels["location"]
    basis[:, :, 3, 3] = 1.0
    return basis


_ROTATION_PROP = {"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}


def frames_from_pose(rig: Skeleton, pose: np.ndarray, label: str, warnings: list[str]) -> np.ndarray:
    """(F, J, 10) IQE frames for armature-space pose matrices P: A = S P R^-1 S^-1 B. A joint whose matrix
    relative to its parent is sheared (a parent scaled unevenly under a child that does not inherit its rotation)
    cannot be a pose of translation, rotation and scale: it is written without the shear, with a warning."""
    space, kept = rig.space, rig.kept
    world = space @ pose[:, kept] @ np.linalg.inv(rig.rest[kept]) @ np.linalg.inv(space) @ rig.base_world[kept]
    local = iqe_rig.local_matrices(world, rig.joint_parents)
    sheared = iqe_rig.sheared_joints(local)
    if sheared:
        names = ", ".join(repr(rig.bone_names[kept[joint]]) for joint in sheared[:3])
        names += " ..." if len(sheared) > 3 else ""
        warnings.append(f"{label}: {len(sheared)} bone(s) sheared relative to their parent in some frames ({names}): "
                        "a pose holds translation, rotation and scale only, so they were written without the shear "
                        "(it comes from a parent scaled unevenly above a turned bone)")  # fmt: skip
    return iqe_rig.decompose(local).astype(np.float32)


_STEADY = 1e-5  # of a channel's magnitude (at least 1): what the matrix arithmetic adds to a channel that is still


def steady_channels(animations: list[IqeAnimation]) -> None:
    """Every channel that moves by less than the arithmetic's round-off over all the animations (a joint an action
    leaves alone picks up about 1e-6 through the matrices) held at one value, its first: IQM then stores it once
    instead of in every frame, as it stores the source's still channels (IQM decides over all animations)."""
    stacks = [animation.frames for animation in animations if animation.frames.size]
    if not stacks or sum(len(frames) for frames in stacks) < 2 or len({f.shape[1:] for f in stacks}) != 1:
        return
    every = np.concatenate(stacks)
    with np.errstate(invalid="ignore"):
        spread = every.max(axis=0) - every.min(axis=0)  # (NaN: never still)
        still = spread <= _STEADY * np.maximum(1.0, np.abs(every).max(axis=0))
    for animation in animations:
        if animation.frames.size:
            animation.frames = np.where(still[None], every[:1], animation.frames).astype(np.float32)


def action_animation(
    context: bpy.types.Context, action: bpy.types.Action, rig: Skeleton, *, bake: bool, warnings: list[str],
    object_motion_written: bool = True,
) -> IqeAnimation:
    """The action over its frame range: its F-curves evaluated, or with `bake` (when bone constraints or drivers
    shape the pose) the pose Blender shows as the action plays alone."""
    scene = context.scene
    source = ActionSource(action, _animating(action, rig.armature)[1])
    first, last = frame_range(source)  # (the armature's slot's keys: not another object's in the same action)
    loop = bool(action.use_cyclic and action.use_frame_range)  # (Blender ignores Cyclic without a manual range)
    if action.use_cyclic and not action.use_frame_range:
        warnings.append(f"{action.name}: Cyclic Animation is on but Manual Frame Range is off, where Blender ignores "
                        "it: written without the loop flag (set the range of one cycle to loop)")  # fmt: skip
    if loop and last > first:
        last -= 1  # a cycle's range ends on its first pose again, which the engine's wrap-around shows
    frames = np.arange(first, last + 1, dtype=np.float64)
    if (moving := object_motion_warning(source, action.name, object_motion_written)) is not None:
        warnings.append(moving)
    if bake_wanted(context, rig.armature, action.name, bake, warnings):
        pose = sample_evaluated_pose(context, rig.armature, source, rig.bone_names, [int(f) for f in frames])
    else:
        pose = pose_matrices(rig.parents, rig.rest, action_basis(action, rig, frames))
    motion = object_motion(source, rig.armature, frames) if object_motion_written else None
    if motion is not None:  # the object's keyed motion carried by the root bones
        pose = motion[:, None] @ pose
    return IqeAnimation(
        name=str(action.get(iqe_rig.ORIGINAL_NAME, action.name)),
        framerate=float(action.get(iqe_rig.FRAMERATE, scene.render.fps / scene.render.fps_base)),
        loop=loop,
        frames=frames_from_pose(rig, pose, action.name, warnings),
    )


def scene_animation(rig: Skeleton, scene: bpy.types.Scene, warnings: list[str]) -> IqeAnimation:
    """The scene's frame range as evaluated (NLA, constraints, drivers)."""
    frames = range(scene.frame_start, scene.frame_end + 1)
    current = scene.frame_current
    pose = np.empty((len(frames), len(rig.bone_names), 4, 4))
    pose_bones = [rig.armature.pose.bones[name] for name in rig.bone_names]
    try:
        for index, frame in enumerate(frames):
            scene.frame_set(frame)
            pose[index] = [np.array(bone.matrix, np.float64) for bone in pose_bones]
    finally:
        scene.frame_set(current)
    return IqeAnimation(
        name=scene.name,
        framerate=scene.render.fps / scene.render.fps_base,
        loop=False,
        frames=frames_from_pose(rig, pose, scene.name, warnings),
    )
