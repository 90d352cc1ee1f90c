"""The QC an SMD export can write beside its files (*Write QC*): each mesh its own reference SMD named after it, as
studiomdl's `$body`/`$model` name one SMD each (so that an import of the QC gives the meshes back, named as they
were), meshes of a nested collection as a `$bodygroup` of alternatives, every written action as a `$sequence` with
its rate, loop and activity, empties on bones as `$attachment`s, the collision hull as `$collisionmodel`; what an
import of a QC kept (its engine names, blank bodygroup choices) written again."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass

import bpy
import numpy as np

from ..common import iqe_rig, mesh_io
from ..common.animation import ActionSource
from ..common.armature import matrix_to_euler_xyz, rigid
from ..common.conventions import (
    SMD_ACTIVITY,
    SMD_BODYGROUP,
    SMD_BODYGROUP_BLANKS,
    SMD_QC_LEFT_OUT,
    SMD_QC_MATERIALS,
    SMD_QC_MODEL_NAME,
    SMD_QC_SURFACE_PROP,
    SMD_QC_TEXTURE_FOLDER,
)
from ..formats.smd.qc_writer import QcAttachment, QcBody, QcBodygroup, QcModel, QcSequence

DEFAULT_RATE = 30.0  # studiomdl's, for an action that has none of its own and a scene that says nothing else


@dataclass
class QcOptions:
    model_name: str = ""  # `$modelname`; empty: `<file name>.mdl`
    materials: str = ""  # Source `$cdmaterials`, folders separated by `;`; empty: `models/<file name>/`
    surface_prop: str = ""  # Source `$surfaceprop`; empty: none written (studiomdl: "default")


def new_model(path: str, options: QcOptions, flavour: str, up_axis: str, warnings: list[str]) -> QcModel:
    stem = os.path.splitext(os.path.basename(path))[0]
    folders = [part.strip() for part in options.materials.split(";") if part.strip()] or [f"models/{stem}/"]
    model = QcModel(options.model_name or f"{stem}.mdl", materials=folders, surface_prop=options.surface_prop or None)
    if up_axis != "Z" and flavour == "GOLDSRC":
        warnings.append(f"GoldSrc's studiomdl has no $upaxis: the QC leaves out the Up Axis {up_axis}")
    elif up_axis != "Z":
        model.up_axis = up_axis
    return model


def use_imported_names(
    model: QcModel, options: QcOptions, armatures: list[bpy.types.Object], texture_folder_from: str | None,
    warnings: list[str],
) -> None:
    """The names an import of a QC kept on the armature ($modelname, $cdmaterials, $surfaceprop), where the
    export's own options are empty, and GoldSrc's $cdtexture folder from `texture_folder_from`, the QC's folder
    (None: this export writes the textures beside the QC); one warning naming what that QC had and this one leaves
    out."""
    keys = (SMD_QC_MODEL_NAME, SMD_QC_MATERIALS, SMD_QC_SURFACE_PROP, SMD_QC_TEXTURE_FOLDER, SMD_QC_LEFT_OUT)
    found = next((rig for rig in armatures if any(rig.get(key) for key in keys)), None)
    if found is None:
        return
    if not options.model_name and found.get(SMD_QC_MODEL_NAME):
        model.model_name = str(found[SMD_QC_MODEL_NAME])
    if not options.materials and found.get(SMD_QC_MATERIALS):
        model.materials = [part for part in str(found[SMD_QC_MATERIALS]).split(";") if part]
    if not options.surface_prop and found.get(SMD_QC_SURFACE_PROP):
        model.surface_prop = str(found[SMD_QC_SURFACE_PROP])
    if texture_folder_from is not None and found.get(SMD_QC_TEXTURE_FOLDER):
        folder = str(found[SMD_QC_TEXTURE_FOLDER])  # (absolute: the textures the import found)
        try:
            model.cd_texture = os.path.relpath(folder, texture_folder_from).replace(os.sep, "/")
        except ValueError:  # (another drive)
            model.cd_texture = folder
    if found.get(SMD_QC_LEFT_OUT):
        warnings.append(f"{found.name}: the imported QC's {found[SMD_QC_LEFT_OUT]} are not written to this QC "
                        "(copy them from the original)")  # fmt: skip


def mesh_file_names(objects: list[bpy.types.Object], folder: str) -> list[str]:
    """Each mesh's reference SMD: its (original) name, distinct, as a path in the export's folder."""
    taken: set[str] = set()
    names = []
    for obj in objects:
        base = safe_file_part(mesh_io.original_name(obj)) or "mesh"
        name, number = base, 1
        while name.lower() in taken:
            number += 1
            name = f"{base}_{number}"
        taken.add(name.lower())
        names.append(os.path.join(folder, name + ".smd"))
    return names


def safe_file_part(text: str) -> str:
    """`text` as part of a file name on every system (the SMD export names its action files so too)."""
    return re.sub(r'[\\/:*?"<>|]', "_", text)


def add_meshes(
    model: QcModel, objects: list[bpy.types.Object], files: list[str], vtas: dict[int, tuple[str, list[str]]],
    qc_folder: str,
) -> None:
    """$body (or $model with its VTA) per mesh; the meshes of a nested collection as one $bodygroup."""
    groups: dict[str, QcBodygroup] = {}
    for row, (obj, file) in enumerate(zip(objects, files, strict=True)):
        relative = os.path.relpath(file, qc_folder).replace(os.sep, "/")
        group = bodygroup_collection(obj)
        if group is not None:
            groups.setdefault(group, QcBodygroup(group, [])).smds.append(relative)
            continue
        vta, shapes = vtas.get(row, (None, []))
        vta_relative = os.path.relpath(vta, qc_folder).replace(os.sep, "/") if vta else None
        model.bodies.append(QcBody(os.path.splitext(os.path.basename(file))[0], relative, vta_relative, shapes))
    for group in groups.values():  # (an imported group's `blank` choices, in their places)
        collection = bpy.data.collections.get(group.name)
        places: list[int] = [int(p) for p in collection.get(SMD_BODYGROUP_BLANKS, [])] if collection else []
        for place in sorted(places):
            group.smds.insert(min(place, len(group.smds)), None)
    model.bodygroups.extend(groups.values())


def bodygroup_collection(obj: bpy.types.Object) -> str | None:
    """A collection inside another collection (not directly under the scene's), or one an import of a QC made for
    a $bodygroup, holds a bodygroup's alternatives."""
    for collection in obj.users_collection:
        if collection.get(SMD_BODYGROUP) or any(collection.name in parent.children for parent in bpy.data.collections):
            return str(collection.name)
    return None


def add_sequences(
    model: QcModel, sources: list[ActionSource], files: list[str], scene: bpy.types.Scene, qc_folder: str
) -> None:
    for source, file in zip(sources, files, strict=True):
        action = source.action
        rate = float(action.get(iqe_rig.FRAMERATE, scene.render.fps / scene.render.fps_base or DEFAULT_RATE))
        loop = bool(action.use_cyclic and action.use_frame_range)
        sequence = QcSequence(source.label, os.path.relpath(file, qc_folder).replace(os.sep, "/"), rate, loop)
        activity = str(action.get(SMD_ACTIVITY, "")).split()
        if activity:  # ("ACT_WALK 1", as an import of a QC keeps it)
            sequence.activity = activity[0]
            sequence.activity_weight = _number_or(activity[1] if len(activity) > 1 else "", 1.0)
        model.sequences.append(sequence)
    smds = [body.smd for body in model.bodies] + [smd for group in model.bodygroups for smd in group.smds if smd]
    if not model.sequences and smds:  # (studiomdl wants one: the reference's rest pose, as modders write it)
        model.sequences.append(QcSequence("idle", smds[0], DEFAULT_RATE, False))


def _number_or(text: str, default: float) -> float:
    try:
        return float(text)
    except ValueError:
        return default


def source_angles(turned: np.ndarray) -> tuple[float, float, float]:
    """Source's pitch, yaw, roll in degrees (yaw about Z, then pitch about Y, then roll about X: Euler XYZ of roll,
    pitch, yaw) of a 3x3 rotation, to 1e-4 degrees; at a pitch of +-90 degrees (where only yaw - roll counts) the
    roll is 0, so that `rotate -90 -90 0` comes back as it was written."""
    if np.hypot(turned[0, 0], turned[1, 0]) < 1e-6:  # (gimbal lock: the turn about Z alone, as yaw)
        pitch = 90.0 if turned[2, 0] < 0 else -90.0
        yaw, roll = float(np.degrees(np.arctan2(-turned[0, 1], turned[1, 1]))), 0.0
    else:
        roll, pitch, yaw = (float(angle) for angle in np.degrees(matrix_to_euler_xyz(turned)))
    return (round(pitch, 4) + 0.0, round(yaw, 4) + 0.0, round(roll, 4) + 0.0)


def add_attachments(
    model: QcModel, objects: list[bpy.types.Object], armatures: list[bpy.types.Object],
    to_file: Callable[[bpy.types.Object], np.ndarray], bone_frame: Callable[[str], np.ndarray | None],
    warnings: list[str], goldsrc: bool = False,
) -> None:
    """Empties parented to a bone: an attachment at the empty's place and turn relative to the bone's frame in the
    SMD, at the rest pose (Source's `rotate PITCH YAW ROLL`; GoldSrc has none). `to_file(obj)`: the export's
    object-space-to-file matrix; `bone_frame(name)`: a bone's frame as the reference SMD writes it (file space),
    None for a bone not written."""
    for obj in objects:
        if obj.type != "EMPTY" or obj.parent not in armatures or obj.parent_type != "BONE":
            continue
        bone = obj.parent.data.bones.get(obj.parent_bone)
        frame = bone_frame(obj.parent_bone) if bone is not None else None
        if bone is None or frame is None:
            warnings.append(f"{obj.name}: its bone {obj.parent_bone!r} is not written; no attachment")
            continue
        tail = np.identity(4)
        tail[1, 3] = bone.length  # (a bone's children hang from its tail)
        world = (np.array(obj.parent.matrix_world) @ np.array(bone.matrix_local) @ tail
                 @ np.array(obj.matrix_parent_inverse) @ np.array(obj.matrix_basis))  # fmt: skip
        placed = to_file(obj.parent) @ np.linalg.inv(np.array(obj.parent.matrix_world)) @ world
        local = np.linalg.inv(frame) @ placed
        turned = rigid(local[None])[0][0][:3, :3]
        rotation = source_angles(turned)
        model.attachments.append(QcAttachment(mesh_io.original_name(obj), bone.name, tuple(local[:3, 3].tolist()),
                                              rotation))  # fmt: skip
        if goldsrc and not np.allclose(turned, np.identity(3), atol=1e-4):
            warnings.append(f"{obj.name}: GoldSrc's $attachment has no rotation: only its place is written")
