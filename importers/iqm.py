"""IQM (Inter-Quake Model) into Blender: the file is read into the document model IQE uses and built by the IQE
importer, so both formats import alike (meshes, materials, UVs, normals, colours, custom arrays, armature,
weights, actions with frame rate and loop flag, the comment section). FTE's extensions go onto what was built:
FTE_MESH values and FTE_SKINS skins as custom properties of the mesh objects, FTE_EVENT events as pose markers of
the actions (each also in the action's `fte_events` property, exactly as the file holds it). With Split by
Framegroups, a DarkPlaces `<file>.framegroups` beside the file cuts its frames into one action per group."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, StringProperty
from bpy_extras.io_utils import ImportHelper

from ..common import iqe_rig
from ..common.operators import ImportFilesMixin, Summary, axis_options, draw_panel, file_handler, guarded
from ..formats import iqe, iqm
from ..formats.iqm.extensions import (
    EVENTS_PROPERTY,
    FTE_FLOAT_FIELDS,
    FTE_INTEGER_FIELDS,
    PROPERTY_PREFIX,
    SKINS_PROPERTY,
    as_int32,
    event_frame,
)
from .iqe import IqeImportOptions, IqeImportProperties, draw_iqe_import_options, import_iqe_files

_MAX_FRAME = 1048574  # Blender's frames go from -this to this


def _mesh_properties(obj: bpy.types.Object, mesh: iqe.IqeMesh) -> None:
    if mesh.fte is not None:
        for name in FTE_INTEGER_FIELDS:
            obj[PROPERTY_PREFIX + name] = as_int32(int(getattr(mesh.fte, name)))
        for name in FTE_FLOAT_FIELDS:
            obj[PROPERTY_PREFIX + name] = float(getattr(mesh.fte, name))
    if mesh.skins:
        obj[SKINS_PROPERTY] = [
            {"interval": skin.interval, "frames": [{"material": f.material, "shader": f.shader} for f in skin.frames]}
            for skin in mesh.skins
        ]


def _mesh_groups(document: iqe.IqeDocument, merge_by_name: bool) -> list[list[iqe.IqeMesh]]:
    """The document's meshes by the object each becomes (the IQE importer's grouping: by name, or one each)."""
    if not merge_by_name:
        return [[mesh] for mesh in document.meshes]
    groups: dict[str, list[iqe.IqeMesh]] = {}
    for mesh in document.meshes:
        groups.setdefault(mesh.name, []).append(mesh)
    return list(groups.values())


def apply_extensions(
    document: iqe.IqeDocument, objects: list[bpy.types.Object], actions: list[bpy.types.Action],
    merge_by_name: bool, summary: Summary,
) -> None:  # fmt: skip
    """FTE's values onto the objects and actions that `document` was built into."""
    meshes = [obj for obj in objects if obj.type == "MESH"]
    groups = _mesh_groups(document, merge_by_name)
    if len(meshes) != len(groups):  # (the IQE importer made other objects than its grouping says: none is guessed)
        if any(mesh.fte is not None or mesh.skins for mesh in document.meshes):
            summary.warnings.append(f"FTE mesh values left out: {len(groups)} meshes became {len(meshes)} objects")
        groups = []
    for obj, group in zip(meshes, groups, strict=True):
        _mesh_properties(obj, group[0])
        if any((mesh.fte, mesh.skins) != (group[0].fte, group[0].skins) for mesh in group[1:]):
            summary.warnings.append(f"{obj.name}: its meshes of one name have different FTE values; the first "
                                    "mesh's are kept (Merge Meshes by Name off keeps each)")  # fmt: skip
    by_order = {int(action.get(iqe_rig.ORDER, -1)): action for action in actions}
    for index, animation in enumerate(document.animations):
        action = by_order.get(index)
        if action is None or not animation.events:
            continue
        stored = []
        for event in animation.events:
            frame = round(event_frame(event.time, animation.framerate)) + 1  # (the action's first frame is 1)
            frame = min(max(frame, -_MAX_FRAME), _MAX_FRAME)  # (the exact time stays in the property)
            action.pose_markers.new(event.data).frame = frame
            stored.append({"frame": frame, "time": event.time, "code": as_int32(event.code), "data": event.data})
        action[EVENTS_PROPERTY] = stored


def import_iqm_files(
    context: bpy.types.Context, paths: list[str], options: IqeImportOptions, use_framegroups: bool
) -> Summary:
    def load(path: str) -> iqe.IqeDocument:
        return iqm.load_iqm(path, use_framegroups)

    def finish(document: iqe.IqeDocument, objects: list[bpy.types.Object], actions: list[bpy.types.Action],
               summary: Summary) -> None:  # fmt: skip
        apply_extensions(document, objects, actions, options.merge_by_name, summary)

    return import_iqe_files(context, paths, options, load, finish)


@axis_options("import")
class IMPORT_SCENE_OT_iqm(bpy.types.Operator, ImportFilesMixin, ImportHelper, IqeImportProperties):
    """Import Inter-Quake Models: meshes, materials, skeleton, weights and animations"""

    bl_idname = "import_scene.iqm"
    bl_label = "Import IQM"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".iqm"
    filter_glob: StringProperty(default="*.iqm", options={"HIDDEN"})

    use_framegroups: BoolProperty(
        name="Split by Framegroups",
        default=True,
        description="When a DarkPlaces/Xonotic <file>.framegroups lies beside the file, make one action per group "
        "of its frames (first frame, count, fps, loop, name), as those engines play them",
    )

    def execute(self, context: bpy.types.Context) -> set[str]:
        options = self.import_options()
        paths = self.selected_paths()
        return guarded(self, lambda: import_iqm_files(context, paths, options, self.use_framegroups), "Imported")

    def draw(self, context: bpy.types.Context) -> None:
        draw_iqe_import_options(self.layout, self)
        draw_panel(self.layout, self, "IOGF_iqm_import_animation", "IQM", ("use_framegroups",))


IOGF_FH_iqm = file_handler("IOGF_FH_iqm", "Inter-Quake Model", "import_scene.iqm", "export_scene.iqm", ".iqm")


def menu_import(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    self.layout.operator(IMPORT_SCENE_OT_iqm.bl_idname, text="Inter-Quake Model (.iqm)")


classes = (IMPORT_SCENE_OT_iqm, IOGF_FH_iqm)
