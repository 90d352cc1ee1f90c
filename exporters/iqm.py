"""Blender objects to IQM: the IQE exporter builds the document (same objects, options and checks) and the IQM
codec compiles it as the reference `iqm` compiler compiles that document written as IQE."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, StringProperty

from ..common.operators import ExportScopeMixin, PresetSafeExportHelper, Summary, axis_options, draw_panel, guarded
from ..formats import iqm
from ..formats.atomic import write_bytes_atomically
from ..formats.errors import Warnings
from .iqe import ExportSettings, IqeExportProperties, build_document, draw_iqe_export_options


def export_iqm(
    context: bpy.types.Context,
    path: str,
    operator: ExportScopeMixin,
    settings: ExportSettings,
    options: iqm.IqmWriteOptions,
) -> Summary:
    summary = Summary(files=1, face_kind="triangles")  # (IQM holds triangles only)
    document = build_document(context, operator, settings, summary, "IQM")
    notes = Warnings()
    model = iqm.compile_document(document, options, notes)  # every check runs before the file is touched
    summary.faces = int(model.triangles.shape[0])  # (what is written: see compile_document on triangles)
    summary.warnings.extend(notes)
    data = iqm.encode_model_pieces(model)
    write_bytes_atomically(path, data)
    return summary


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

    def execute(self, context: bpy.types.Context) -> set[str]:
        settings = self.export_settings()
        options = iqm.IqmWriteOptions(compute_tangents=self.compute_tangents, bounds=self.export_bounds)
        return guarded(self, lambda: export_iqm(context, self.filepath, self, settings, options), "Exported")

    def draw(self, context: bpy.types.Context) -> None:
        draw_iqe_export_options(self.layout, self, context)
        draw_panel(self.layout, self, "IOGF_iqm_export_model", "IQM", ("compute_tangents", "export_bounds"))


def menu_export(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    self.layout.operator(EXPORT_SCENE_OT_iqm.bl_idname, text="Inter-Quake Model (.iqm)")


classes = (EXPORT_SCENE_OT_iqm,)
