"""IQM (Inter-Quake Model) into Blender: the file is read into the document model IQE uses and built by the IQE
importer, so both formats import alike (meshes, materials, UVs, normals, colours, custom arrays, armature,
weights, actions with frame rate and loop flag, the comment section)."""

from __future__ import annotations

import bpy
from bpy.props import StringProperty
from bpy_extras.io_utils import ImportHelper

from ..common.operators import ImportFilesMixin, axis_options, file_handler, guarded
from ..formats import iqm
from .iqe import IqeImportProperties, draw_iqe_import_options, import_iqe_files


@axis_options("import")
class IMPORT_SCENE_OT_iqm(bpy.types.Operator, ImportFilesMixin, ImportHelper, IqeImportProperties):
    """Import Inter-Quake Models: meshes, materials, skeleton, weights and animations"""

    bl_idname = "import_scene.iqm"
    bl_label = "Import IQM"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".iqm"
    filter_glob: StringProperty(default="*.iqm", options={"HIDDEN"})

    def execute(self, context: bpy.types.Context) -> set[str]:
        options = self.import_options()
        paths = self.selected_paths()
        return guarded(self, lambda: import_iqe_files(context, paths, options, iqm.load_iqm), "Imported")

    def draw(self, context: bpy.types.Context) -> None:
        draw_iqe_import_options(self.layout, self)


IOGF_FH_iqm = file_handler("IOGF_FH_iqm", "Inter-Quake Model", "import_scene.iqm", "export_scene.iqm", ".iqm")


def menu_import(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    self.layout.operator(IMPORT_SCENE_OT_iqm.bl_idname, text="Inter-Quake Model (.iqm)")


classes = (IMPORT_SCENE_OT_iqm, IOGF_FH_iqm)
