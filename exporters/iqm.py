"""Blender objects to IQM: the IQE exporter builds the document (same objects, options and checks) and the IQM
codec compiles it as the reference `iqm` compiler compiles that document written as IQE. FTE's extensions are
written from where the IQM importer puts them (the mesh objects' `fte_*` properties, the actions' pose markers),
and with several animations a DarkPlaces `<file>.framegroups` beside the file."""

from __future__ import annotations

import os
from typing import Any

import bpy
from bpy.props import BoolProperty, StringProperty

from ..common import iqe_rig as rig_math
from ..common.operators import (
    ExportScopeMixin,
    PresetSafeExportHelper,
    Summary,
    axis_options,
    draw_panel,
    geometry_objects,
    guarded,
)
from ..formats import iqe, iqm
from ..formats.atomic import write_bytes_atomically
from ..formats.errors import FormatError, Warnings
from ..formats.iqe.document import FteMeshFields, IqeEvent, IqeSkin, IqeSkinFrame
from ..formats.iqm.extensions import (
    EVENTS_PROPERTY,
    FTE_FLOAT_FIELDS,
    FTE_INTEGER_FIELDS,
    PROPERTY_PREFIX,
    SKINS_PROPERTY,
    as_uint32,
    event_time,
)
from .iqe import ExportSettings, IqeExportProperties, build_document, draw_iqe_export_options

_MARKER_NAME_BYTES = 63  # what a pose marker's name holds


def export_iqm(
    context: bpy.types.Context,
    path: str,
    operator: ExportScopeMixin,
    settings: ExportSettings,
    options: iqm.IqmWriteOptions,
    write_framegroups: bool = False,
) -> Summary:
    summary = Summary(files=1, face_kind="triangles")  # (IQM holds triangles only)
    document = build_document(context, operator, settings, summary, "IQM")
    add_extensions(context, operator, document, settings)
    notes = Warnings()
    model = iqm.compile_document(document, options, notes)  # every check runs before the file is touched
    summary.faces = int(model.triangles.shape[0])  # (what is written: see compile_document on triangles)
    summary.warnings.extend(notes)
    data = iqm.encode_model_pieces(model)
    write_bytes_atomically(path, data)
    if write_framegroups and len(model.anims) > 1:
        written = iqm.save_framegroups(path, model)
        summary.notes.append(f"{os.path.basename(written)} written: {len(model.anims)} framegroups")
    return summary


# ------------------------------------------------------------------------------------------------ FTE values


def add_extensions(
    context: bpy.types.Context, operator: ExportScopeMixin, document: iqe.IqeDocument, settings: ExportSettings
) -> None:
    """FTE_MESH values and FTE_SKINS skins from the objects each document mesh was made of, FTE_EVENT events from
    the pose markers of the action each animation was made of."""
    by_name: dict[str, list[bpy.types.Object]] = {}
    for obj in geometry_objects(operator.objects_to_export(context)):
        by_name.setdefault(iqe.sanitize_name(str(obj.get(rig_math.ORIGINAL_NAME, obj.name)))[0], []).append(obj)
    for mesh in document.meshes:
        found = by_name.get(mesh.name) or by_name.get(mesh.name.rpartition(".")[0], [])  # (made unique: "x.001")
        obj = next((o for o in found if mesh.material in _material_names(o)), found[0] if found else None)
        if obj is not None:
            mesh.fte = _fte_fields(obj)
            mesh.skins = _skins(obj)
    if settings.export_animations == "NLA":
        return
    for animation in document.animations:
        action = _action_of(animation.name)
        if action is not None:
            animation.events = _events(action, animation.framerate)


def _material_names(obj: bpy.types.Object) -> set[str]:
    """The material names the exporter gives the object's meshes (a material's file name when it has one)."""
    return {str(slot.material.get(rig_math.ORIGINAL_NAME, slot.material.name)) if slot.material else ""
            for slot in obj.material_slots}  # fmt: skip


def _number(owner: bpy.types.ID, key: str, value: Any, kind: type[int] | type[float]) -> float:
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise FormatError(f"{owner.name}: its property {key!r} is {value!r}, not a number") from None


def _fte_fields(obj: bpy.types.Object) -> FteMeshFields | None:
    values = {name: obj.get(PROPERTY_PREFIX + name) for name in (*FTE_INTEGER_FIELDS, *FTE_FLOAT_FIELDS)}
    if all(value is None for value in values.values()):
        return None
    fields = FteMeshFields()
    for name, value in values.items():
        if value is not None:
            number = _number(obj, PROPERTY_PREFIX + name, value, int if name in FTE_INTEGER_FIELDS else float)
            setattr(fields, name, as_uint32(int(number)) if name in FTE_INTEGER_FIELDS else float(number))
    return fields


def _plain(value: Any) -> Any:
    """An ID property's value as Python dicts and lists."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "to_list"):
        return value.to_list()
    return [_plain(item) for item in value] if isinstance(value, list) else value


def _skins(obj: bpy.types.Object) -> list[IqeSkin]:
    skins = obj.get(SKINS_PROPERTY)
    if skins is None:
        return []
    try:
        return [IqeSkin([IqeSkinFrame(str(frame["material"]), str(frame.get("shader", "")))
                         for frame in skin.get("frames", [])], float(skin.get("interval", 0.0)))
                for skin in _plain(skins)]  # fmt: skip
    except (AttributeError, KeyError, TypeError, ValueError):
        raise FormatError(f"{obj.name}: its property {SKINS_PROPERTY!r} is not a list of skins "
                          "({'interval': seconds, 'frames': [{'material': name, 'shader': text}]})") from None


def _action_of(name: str) -> bpy.types.Action | None:
    """The action an animation of this name was written from (the exporter names animations as below), one with
    pose markers first."""
    found = [action for action in bpy.data.actions if str(action.get(rig_math.ORIGINAL_NAME, action.name)) == name]
    return next((action for action in found if len(action.pose_markers)), found[0] if found else None)


def _events(action: bpy.types.Action, framerate: float) -> list[IqeEvent]:
    """The action's pose markers as events. A marker the import made (found in the action's `fte_events` by its
    name) keeps its code, and its exact time while it stays on its frame; the others have code 0."""
    markers = sorted(action.pose_markers, key=lambda marker: marker.frame)
    start = float(action.frame_range[0])
    try:
        stored = [dict(entry) for entry in _plain(action.get(EVENTS_PROPERTY, []))]
    except (TypeError, ValueError):
        raise FormatError(f"{action.name}: its property {EVENTS_PROPERTY!r} is not a list of events") from None
    free = list(markers)
    events = []
    for entry in stored:
        data = str(entry.get("data", ""))
        named = [m for m in free if m.name == data or (len(data.encode()) > _MARKER_NAME_BYTES and
                                                       data.startswith(m.name))]  # fmt: skip
        if not named:
            continue  # (its marker was removed or renamed)
        frame = int(_number(action, EVENTS_PROPERTY, entry.get("frame", 0), int))
        marker = next((m for m in named if m.frame == frame), named[0])
        free.remove(marker)
        time = (float(_number(action, EVENTS_PROPERTY, entry.get("time", 0.0), float)) if marker.frame == frame
                else event_time(marker.frame - start, framerate))  # fmt: skip
        events.append(IqeEvent(time, as_uint32(int(_number(action, EVENTS_PROPERTY, entry.get("code", 0), int))),
                                   data))  # fmt: skip
    events += [IqeEvent(event_time(m.frame - start, framerate), 0, m.name) for m in free]
    return events


# ------------------------------------------------------------------------------------------------- operator


@axis_options("export")
class EXPORT_SCENE_OT_iqm(bpy.types.Operator, PresetSafeExportHelper, ExportScopeMixin, IqeExportProperties):
    """Export meshes, armature and actions as an Inter-Quake Model"""

    bl_idname = "export_scene.iqm"
    bl_label = "Export IQM"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".iqm"
    filter_glob: StringProperty(default="*.iqm", options={"HIDDEN"})

    compute_tangents: BoolProperty(
        name="Compiler Tangents",
        default=True,
        description="When Tangents is off, compute tangents from the normals and UV map as the iqm compiler does",
    )
    export_bounds: BoolProperty(
        name="Bounds",
        default=True,
        description="Bounding box of the skinned mesh in every animation frame (engines cull animated models with "
        "them); off: smaller and faster to write",
    )
    write_framegroups: BoolProperty(
        name="Write Framegroups",
        default=True,
        description="When the file has two or more animations, also write <file>.framegroups beside it (one line "
        "per animation: first frame, count, fps, loop // name), which DarkPlaces and Xonotic play",
    )

    def execute(self, context: bpy.types.Context) -> set[str]:
        settings = self.export_settings()
        options = iqm.IqmWriteOptions(compute_tangents=self.compute_tangents, bounds=self.export_bounds)
        return guarded(self, lambda: export_iqm(context, self.filepath, self, settings, options,
                                                self.write_framegroups), "Exported")  # fmt: skip

    def draw(self, context: bpy.types.Context) -> None:
        draw_iqe_export_options(self.layout, self, context)
        draw_panel(self.layout, self, "IOGF_iqm_export_model", "IQM",
                   ("compute_tangents", "export_bounds", "write_framegroups"))  # fmt: skip


def menu_export(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    self.layout.operator(EXPORT_SCENE_OT_iqm.bl_idname, text="Inter-Quake Model (.iqm)")


classes = (EXPORT_SCENE_OT_iqm,)
