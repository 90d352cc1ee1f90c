"""Bone animation in and out of Blender actions, in bulk, for Blender 4.2 (classic actions) to 5.0 (slotted).

`create_bone_action` writes dense per-frame pose-bone values (location, rotation, optional scale) with one
`keyframe_points.foreach_set` per F-curve, thinning runs of equal values (exact under linear interpolation).
`sample_bone_action` reads them back, per frame over the action's own frame range, by evaluating its F-curves
(constraints, drivers and the NLA are not evaluated); `sample_evaluated_pose` steps through the frames and reads the
pose Blender evaluates, for rigs whose constraints or drivers matter. `pose_matrices` turns per-bone basis matrices into
armature-space pose matrices the way Blender does for bones that inherit rotation and scale.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import bpy
import numpy as np

from . import compat
from .armature import compose, euler_to_matrix, quaternion_to_matrix
from .rollback import remember_values, undo_on_failure

LINEAR = 1  # keyframe interpolation enum value


def bone_path(bone: str, prop: str) -> str:
    return f'pose.bones["{bpy.utils.escape_identifier(bone)}"].{prop}'


_BONE_PATH = re.compile(r'^pose\.bones\["((?:[^"\\]|\\.)*)"\]\.(\w+)$')


def parse_bone_path(path: str) -> tuple[str, str] | None:
    match = _BONE_PATH.match(path)
    if match is None:
        return None
    return re.sub(r"\\(.)", r"\1", match.group(1)), match.group(2)


# ------------------------------------------------------------------------------------------------ creating


def _fill(curve: bpy.types.FCurve, frames: np.ndarray, values: np.ndarray, thin: bool) -> int:
    keep = np.ones(len(values), bool)
    if thin and len(values) > 2:
        keep[1:-1] = (values[1:-1] != values[:-2]) | (values[1:-1] != values[2:])
    count = int(keep.sum())
    points = curve.keyframe_points
    points.add(count)
    points.foreach_set("co", np.column_stack([frames[keep], values[keep]]).astype(np.float32).ravel())
    points.foreach_set("interpolation", np.full(count, LINEAR, np.intc))
    curve.update()
    return count


def create_bone_action(
    obj: bpy.types.Object,
    name: str,
    bone_names: Sequence[str],
    frames: np.ndarray,
    locations: np.ndarray,
    rotations: np.ndarray,
    *,
    rotation_mode: str = "XYZ",
    scales: np.ndarray | None = None,
    thin: bool = True,
    assign: bool = True,
) -> bpy.types.Action:
    """One action keying `bone_names` at `frames` (F,): locations (F, B, 3), rotations (F, B, 4) quaternions
    (w, x, y, z) for rotation_mode "QUATERNION" or (F, B, 3) Euler angles otherwise. The action keeps a fake user
    and its frame range; with `assign` it becomes the object's active action (and slot)."""
    action = bpy.data.actions.new(name)
    action.use_fake_user = True
    slot, channels = compat.new_action_channels(action, obj)
    rotation_property = "rotation_quaternion" if rotation_mode == "QUATERNION" else "rotation_euler"
    frames = np.asarray(frames, np.float64)
    for row, bone in enumerate(bone_names):
        tracks = [("location", locations[:, row]), (rotation_property, rotations[:, row])]
        if scales is not None:
            tracks.append(("scale", scales[:, row]))
        for prop, values in tracks:
            for index in range(values.shape[1]):
                _fill(compat.new_fcurve(channels, bone_path(bone, prop), index, bone), frames, values[:, index], thin)
        pose_bone = obj.pose.bones.get(bone)
        if pose_bone is not None:
            remember_values(pose_bone, "rotation_mode")
            pose_bone.rotation_mode = rotation_mode
    if len(frames) > 1:
        action.use_frame_range = True
        action.frame_start, action.frame_end = float(frames[0]), float(frames[-1])
    if assign:
        if obj.animation_data is None:
            name = obj.name
            undo_on_failure(lambda: bpy.data.objects[name].animation_data_clear() if name in bpy.data.objects else None)
        else:
            remember_values(obj.animation_data, "action")
        animation = obj.animation_data or obj.animation_data_create()
        animation.action = action
        if slot is not None:
            animation.action_slot = slot
    return action


# ------------------------------------------------------------------------------------------------ reading


@dataclass
class ActionSource:
    """An action, and on Blender 4.4+ the slot whose F-curves animate the armature."""

    action: bpy.types.Action
    slot: object | None = None

    @property
    def label(self) -> str:
        if self.slot is None:
            return self.action.name
        return f"{self.action.name}_{getattr(self.slot, 'name_display', '')}"


def fcurves_of(source: ActionSource) -> list[bpy.types.FCurve]:
    return compat.action_fcurves(source.action, source.slot)


def _animates(source: ActionSource, bones: set[str]) -> bool:
    for curve in fcurves_of(source):
        parsed = parse_bone_path(curve.data_path)
        if parsed is not None and parsed[0] in bones:
            return True
    return False


def active_action(obj: bpy.types.Object) -> ActionSource | None:
    animation = obj.animation_data
    if animation is None or animation.action is None:
        return None
    return ActionSource(animation.action, compat.assigned_slot(animation))


def actions_for(obj: bpy.types.Object, scope: str) -> list[ActionSource]:
    """The armature's active action ("ACTIVE"), or every action (and object slot) keying its bones ("ALL")."""
    if scope == "ACTIVE":
        found = active_action(obj)
        return [_SingleSlot(found.action, found.slot)] if found is not None else []
    bones = {bone.name for bone in obj.data.bones}
    sources: list[ActionSource] = []
    for action in bpy.data.actions:
        if compat.has_slotted_actions():
            candidates = [ActionSource(action, slot) for slot in compat.object_slots(action)
                          if not made_for_another_rig(action, [slot], obj)]  # fmt: skip
            matching = [c for c in candidates if _animates(c, bones)]
            if len(matching) == 1:
                sources.append(_SingleSlot(action, matching[0].slot))
            else:
                sources.extend(matching)
        elif _animates(ActionSource(action), bones):
            sources.append(ActionSource(action))
    return sources


def made_for_another_rig(action: bpy.types.Action, slots: list[object], armature: bpy.types.Object) -> bool:
    """Whether these object slots of the action (4.4+: named after the object each was made for) all name another
    armature in the file: a second import of one rig keys that copy, not this one. Slots naming no armature (a rig
    renamed since) and an action assigned to this armature count as its own."""
    data = armature.animation_data
    if data is not None and data.action == action:
        return False
    others = {obj.name for obj in bpy.data.objects if obj.type == "ARMATURE" and obj != armature}
    names = {slot.name_display for slot in slots}
    return bool(names) and names <= others


class _SingleSlot(ActionSource):
    """The only matching slot of its action: named after the action alone."""

    @property
    def label(self) -> str:
        return self.action.name


def frame_range(source: ActionSource) -> tuple[int, int]:
    """The action's manual frame range if set, else the span of the keys of its (slot's) F-curves; either rounded
    outwards to whole frames."""
    action = source.action
    if action.use_frame_range:
        first = math.floor(action.frame_start + 1e-6)
        return first, max(first, math.ceil(action.frame_end - 1e-6))
    starts, ends = [], []
    for curve in fcurves_of(source):
        if len(curve.keyframe_points):
            bounds: tuple[float, ...] = tuple(curve.range())
            starts.append(float(bounds[0]))
            ends.append(float(bounds[1]))
    if not starts:
        return 0, 0
    return math.floor(min(starts) + 1e-6), math.ceil(max(ends) - 1e-6)


@dataclass
class BoneSamples:
    """Per frame and bone: basis matrices (F, B, 4, 4) of pose bones, as Blender would compute them."""

    frames: np.ndarray
    basis: np.ndarray


def sample_bone_action(
    source: ActionSource,
    bone_names: Sequence[str],
    rotation_modes: Sequence[str],
    frames: Sequence[int] | None = None,
) -> BoneSamples:
    """Evaluate the F-curves keying these bones at each frame (default: the action's frame range). Channels
    without a curve take the rest value; each bone's rotation is read as its rotation_mode says."""
    if frames is None:
        first, last = frame_range(source)
        frames = range(first, last + 1)
    frame_array = np.asarray(list(frames), np.float64)
    count, bones = len(frame_array), len(bone_names)
    row_of = {name: row for row, name in enumerate(bone_names)}
    channels = {
        "location": np.zeros((count, bones, 3)),
        "rotation_quaternion": np.tile([1.0, 0.0, 0.0, 0.0], (count, bones, 1)),
        "rotation_euler": np.zeros((count, bones, 3)),
        "rotation_axis_angle": np.tile([0.0, 0.0, 1.0, 0.0], (count, bones, 1)),
        "scale": np.ones((count, bones, 3)),
    }
    for curve in fcurves_of(source):
        parsed = parse_bone_path(curve.data_path)
        if parsed is None or parsed[0] not in row_of or parsed[1] not in channels or curve.mute:
            continue
        target = channels[parsed[1]]
        if curve.array_index >= target.shape[2]:
            continue
        evaluate = curve.evaluate
        target[:, row_of[parsed[0]], curve.array_index] = [evaluate(frame) for frame in frame_array.tolist()]
    rotations = np.zeros((count, bones, 3, 3))
    for row, mode in enumerate(rotation_modes):
        rotations[:, row] = _rotations({name: values[:, row] for name, values in channels.items()}, mode)
    basis = compose(channels["location"], rotations, channels["scale"])
    return BoneSamples(frame_array, basis)


def pose_needs_evaluation(obj: bpy.types.Object) -> str | None:
    """Why the armature's pose is not what its action's F-curves alone give: enabled bone constraints or
    drivers on its bones (a reason to show), else None."""
    constrained = sum(  # (any influence: it may be keyed, e.g. an IK/FK switch that is 0 on this frame)
        any(not constraint.mute for constraint in bone.constraints) for bone in obj.pose.bones
    )
    if constrained:
        return f"{constrained} bone(s) with constraints"
    drivers = list(obj.animation_data.drivers) if obj.animation_data is not None else []
    driven = sum(1 for driver in drivers if not driver.mute and driver.data_path.startswith("pose.bones["))
    return f"{driven} driven bone channel(s)" if driven else None


def pose_evaluation_blocked(context: bpy.types.Context, obj: bpy.types.Object) -> str | None:
    """Why stepping through frames would not show this armature's pose (a reason to show), else None."""
    animation = obj.animation_data
    if animation is not None and animation.use_tweak_mode:
        return "the NLA is in tweak mode (its action cannot be swapped)"
    if context.evaluated_depsgraph_get().objects.get(obj.name) is None:
        return "it is not evaluated (hidden in viewports or in an excluded collection)"
    return None


_OBJECT_CHANNELS = {"location": 3, "rotation_euler": 3, "rotation_quaternion": 4, "rotation_axis_angle": 4, "scale": 3}
_OBJECT_DELTAS = {"delta_location", "delta_rotation_euler", "delta_rotation_quaternion", "delta_scale"}


def object_motion(source: ActionSource, obj: bpy.types.Object, frames: Sequence[float]) -> np.ndarray | None:
    """(F, 4, 4) the motion the action keys on the armature object itself (root motion), at each frame, relative
    to where the object stands now: premultiplied to its bones' armature-space poses, it makes the root bones carry
    the motion in the space the skeleton is written in. None when the action keys none of the object's channels
    (delta channels are not read: see `object_motion_warning`)."""
    curves = [curve for curve in fcurves_of(source) if curve.data_path in _OBJECT_CHANNELS and not curve.mute]
    if not curves:
        return None
    times = np.asarray(list(frames), np.float64)
    now = {name: np.array(getattr(obj, name), np.float64) for name in _OBJECT_CHANNELS}
    channels = {name: np.tile(value, (len(times), 1)) for name, value in now.items()}
    for curve in curves:
        if curve.array_index < channels[curve.data_path].shape[1]:
            evaluate = curve.evaluate
            channels[curve.data_path][:, curve.array_index] = [evaluate(time) for time in times.tolist()]
    mode = obj.rotation_mode
    current = compose(now["location"][None], _rotations({k: v[None] for k, v in now.items()}, mode), now["scale"][None])
    keyed = compose(channels["location"], _rotations(channels, mode), channels["scale"])
    motion: np.ndarray = np.linalg.inv(current[0]) @ keyed
    return motion


def _rotations(channels: dict[str, np.ndarray], mode: str) -> np.ndarray:
    """(..., 3, 3) rotation matrices from the channel a rotation mode reads (`rotation_quaternion`, w first;
    `rotation_axis_angle`, angle first; else `rotation_euler` in that order)."""
    if mode == "QUATERNION":
        return quaternion_to_matrix(channels["rotation_quaternion"])
    if mode == "AXIS_ANGLE":
        return _axis_angle_to_matrix(channels["rotation_axis_angle"])
    return euler_to_matrix(channels["rotation_euler"], mode)


def object_motion_warning(source: ActionSource, label: str, written: bool) -> str | None:
    """A warning when the action moves the armature object itself (root motion keyed on the object) and that is
    not written: all of it when `written` is off, else its delta channels."""
    unread = _OBJECT_DELTAS if written else _OBJECT_DELTAS | set(_OBJECT_CHANNELS)
    moving = sorted({curve.data_path for curve in fcurves_of(source) if curve.data_path in unread
                     and not curve.mute and len({key.co[1] for key in curve.keyframe_points}) > 1})  # fmt: skip
    if not moving:
        return None
    advice = "" if written else " (Object Motion writes them into the root bones)"
    return f"{label}: the armature object's own {', '.join(moving)} keys are not written{advice}"


def unusual_inheritance(obj: bpy.types.Object) -> str | None:
    """Bones whose pose does not follow their parent's the usual way (rotation or scale not inherited, location
    not local), which the keys alone cannot give (`pose_matrices` composes full inheritance): a reason, else None."""
    odd = sum(1 for bone in obj.data.bones if _inherits_unusually(bone))
    if not odd:
        return None
    return f"{odd} bone(s) not following their parent in full (rotation or scale not inherited, location not local)"


def _inherits_unusually(bone: bpy.types.Bone) -> bool:
    if not bone.use_local_location:  # (a root's too: it then moves along the armature's axes)
        return True
    return bone.parent is not None and (not bone.use_inherit_rotation or bone.inherit_scale != "FULL")


def bake_wanted(context: bpy.types.Context, obj: bpy.types.Object, label: str, bake: bool, warnings: list[str]) -> bool:
    """Whether to sample the armature's evaluated pose: baking asked and constraints or drivers shape the pose, or
    bones inherit unusually (always: their keys alone give a wrong pose), and the armature can be played (else a
    warning says its keys are written as they are)."""
    inheritance = unusual_inheritance(obj)
    constraints = pose_needs_evaluation(obj)
    reason = (constraints if bake else None) or inheritance
    if reason is None:
        return False
    blocked = pose_evaluation_blocked(context, obj)
    if blocked is not None:
        warnings.append(f"{label}: pose not baked ({reason}): {obj.name!r} {blocked}; its keys were written as they "
                        "are")  # fmt: skip
        return False
    if not bake and constraints is not None:
        warnings.append(f"{label}: {inheritance}, so the pose was played frame by frame: its constraints and "
                        "drivers are included although baking is off")  # fmt: skip
    return True


def sample_evaluated_pose(
    context: bpy.types.Context,
    obj: bpy.types.Object,
    source: ActionSource,
    bone_names: Sequence[str],
    frames: Sequence[int],
) -> np.ndarray:
    """(F, B, 4, 4) armature-space pose matrices of these bones, as Blender evaluates them at each frame with this
    action playing alone (constraints and drivers included, the NLA left out). Everything switched is restored."""
    scene = context.scene
    had_animation = obj.animation_data is not None
    animation = obj.animation_data or obj.animation_data_create()
    saved_frame = (scene.frame_current, scene.frame_subframe)
    saved_animation = [(name, getattr(animation, name)) for name in compat.playback_properties(animation)]
    poses = np.empty((len(frames), len(bone_names), 16), np.float32)
    try:
        animation.use_nla = False
        animation.action = source.action
        if source.slot is not None:
            animation.action_slot = source.slot
        depsgraph = context.evaluated_depsgraph_get()
        for row, frame in enumerate(frames):
            scene.frame_set(frame)
            bones = obj.evaluated_get(depsgraph).pose.bones
            flat = np.empty(len(bones) * 16, np.float32)
            bones.foreach_get("matrix", flat)
            order = [bones.find(name) for name in bone_names]
            poses[row] = flat.reshape(-1, 16)[order]
    finally:
        for name, value in saved_animation:
            if getattr(animation, name) != value:
                setattr(animation, name, value)
        if not had_animation:
            obj.animation_data_clear()
        scene.frame_set(saved_frame[0], subframe=saved_frame[1])
    # foreach_get gives each matrix column by column
    return poses.reshape(len(frames), len(bone_names), 4, 4).transpose(0, 1, 3, 2).astype(np.float64)


def _axis_angle_to_matrix(values: np.ndarray) -> np.ndarray:
    angle = values[:, 0]
    axis = values[:, 1:]
    length = np.linalg.norm(axis, axis=1, keepdims=True)
    axis = np.where(length > 0, axis / np.where(length > 0, length, 1), [0.0, 0.0, 1.0])
    half = angle / 2
    return quaternion_to_matrix(np.column_stack([np.cos(half), axis * np.sin(half)[:, None]]))


def pose_matrices(parents: Sequence[int], rest: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """Armature-space pose matrices (F, B, 4, 4) from Blender rest matrices (B, 4, 4) (bone.matrix_local, parents
    before children) and basis matrices (F, B, 4, 4): pose = parent_pose @ inv(parent_rest) @ rest @ basis."""
    pose = np.empty_like(basis)
    inverse_rest = np.linalg.inv(rest)
    for row, parent in enumerate(parents):
        if parent < 0:
            pose[:, row] = rest[row] @ basis[:, row]
        else:
            pose[:, row] = pose[:, parent] @ (inverse_rest[parent] @ rest[row]) @ basis[:, row]
    return pose


def basis_from_pose(parents: Sequence[int], rest: np.ndarray, pose: np.ndarray) -> np.ndarray:
    """The inverse of pose_matrices: basis = inv(inv(parent_rest) @ rest) @ inv(parent_pose) @ pose, every bone
    at once."""
    parent_rows = np.asarray(parents, np.int64).reshape(-1)
    has_parent = parent_rows >= 0
    parent_or_self = np.where(has_parent, parent_rows, np.arange(parent_rows.size))
    # parent-relative rest and pose (a root's are its own); only parents' poses are inverted (a leaf bone may be
    # scaled to nothing)
    relative_rest = np.where(has_parent[:, None, None], np.linalg.inv(rest)[parent_or_self] @ rest, rest)
    inverse_pose = np.broadcast_to(np.identity(4), pose.shape).copy()
    parent_set = np.unique(parent_rows[has_parent])
    inverse_pose[:, parent_set] = np.linalg.inv(pose[:, parent_set])
    relative_pose = np.where(has_parent[None, :, None, None], inverse_pose[:, parent_or_self] @ pose, pose)
    return np.asarray(np.linalg.inv(relative_rest)[None] @ relative_pose)


def continuous_quaternions(q: np.ndarray) -> np.ndarray:
    """(F, ..., 4) quaternions with signs flipped so consecutive frames stay on the same hemisphere."""
    out = np.array(q, np.float64)
    if len(out) < 2:
        return out
    flips = np.sum(out[1:] * out[:-1], axis=-1) < 0
    parity = np.concatenate([np.zeros((1, *flips.shape[1:]), bool), np.logical_xor.accumulate(flips, axis=0)])
    return np.where(parity[..., None], -out, out)


def continuous_eulers(e: np.ndarray) -> np.ndarray:
    """(F, ..., 3) Euler angles unwrapped over frames (no jumps of 2 pi between consecutive frames)."""
    return np.unwrap(e, axis=0) if len(e) > 1 else np.array(e, np.float64)


def playable(frame_rate: float) -> bool:
    """Whether Blender's scene can show this frame rate: fps 1..1000 over fps_base 1e-5..1e6 (NaN: no)."""
    return 1e-6 <= frame_rate <= 1e8


def play_in_scene(scene: bpy.types.Scene, first: int, last: int, frame_rate: float | None = None) -> None:
    """Show an imported animation as it plays: the scene's frame range (and frame rate, when the file has one
    Blender can show: see `playable`) set to it and the current frame at its start, put back should the import
    fail."""
    previous = scene.frame_start, scene.frame_end, scene.render.fps, scene.render.fps_base, scene.frame_current

    def restore() -> None:
        scene.frame_start, scene.frame_end, scene.render.fps, scene.render.fps_base, scene.frame_current = previous

    undo_on_failure(restore)
    scene.frame_start, scene.frame_end = first, max(first, last)
    scene.frame_current = first  # (the first pose shows, not one part-way through or outside the range)
    if frame_rate is not None and playable(frame_rate):
        whole = min(max(round(frame_rate), 1), 1000)  # Blender's fps is a whole number, fps_base refines it
        scene.render.fps, scene.render.fps_base = whole, whole / frame_rate
