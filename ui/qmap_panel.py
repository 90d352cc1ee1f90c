"""The QMAP sidebar (3D viewport, "QMAP" tab): output paths, compile options, Export / Compile buttons, the map's
entry in the game's Resources.dat, the QMAP options of the active object's materials, the last compile's report
and the octree boxes."""

from __future__ import annotations

import os
from collections.abc import Callable

import bpy
import numpy as np
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)
from bpy_extras.io_utils import ImportHelper

from .. import qmap_compiler as qc
from ..common import compat
from ..common.operators import Summary, guarded
from ..common.qmap_io import OCTREE_DISPLAY, compiler_call
from ..exporters import qmap as qmap_export
from ..formats.errors import FormatError
from ..importers import qmap as qmap_import
from ..qmap_compiler import resources

OCTREE_COLLECTION = "QMAP Octrees"
REPORT_LINES_SHOWN = 14

# ---------------------------------------------------------------------------------------------- settings


PANEL_SCOPES = (
    ("VISIBLE", "Visible Objects", "Export every object visible in the viewport"),
    ("SCENE", "Whole Scene", "Export every object of the scene, hidden ones too"),
)


RESOURCE_STATES = (
    ("KEEP", "Keep", "An entry already in the list keeps its state; a new one gets none (loaded on first use)"),
    ("NONE", "On First Use", "No state: the game loads the map when it first uses it (as the shipped maps' entries)"),
    ("LOAD", "LOAD", "Loaded when the list is read; the game may unload it between frames"),
    ("LOCK", "LOCK", "Loaded when the list is read and never unloaded"),
)


class QmapMaterialSettings(bpy.types.PropertyGroup):
    """A material's entry in the .qmap.desc."""

    skip: BoolProperty(name="Skip", description="Drop the faces of this material from the map (desc: skip)")
    tex_gen: BoolProperty(name="Generate UVs", description="Generate planar texture coordinates (desc: tex gen)")
    tex_scale: FloatProperty(name="Texture Scale", default=1.0, description="Scale the texture coordinates")
    output_name: StringProperty(
        name="Output Name", description="Material name in the compiled map; equal names are merged (desc: name)"
    )


class QmapReportLine(bpy.types.PropertyGroup):
    text: StringProperty()


class QmapSceneSettings(bpy.types.PropertyGroup):
    tmp_path: StringProperty(
        name="Source", subtype="FILE_PATH", options=compat.blend_relative_path_options(), default="//map.qmap.tmp",
        description="The .qmap.tmp written by Export and read by Compile (its .qmap.desc goes beside it); "
        "// means the folder of the saved .blend file",
    )  # fmt: skip
    qmap_path: StringProperty(
        name="Map", subtype="FILE_PATH", options=compat.blend_relative_path_options(), default="//map.qmap",
        description="The compiled .qmap written by Compile and read by Show Octrees; "
        "// means the folder of the saved .blend file",
    )  # fmt: skip
    apply_modifiers: BoolProperty(
        name="Apply Modifiers", default=False,
        description="Export the meshes as their modifiers shape them; off (as the original exporter): the meshes "
        "without modifiers",
    )  # fmt: skip
    export_scope: EnumProperty(
        name="Limit to", items=PANEL_SCOPES, default="SCENE",
        description="Which objects of the scene the panel exports: every one, hidden ones included, as the "
        "original exporter did, or only those visible in the viewport",
    )  # fmt: skip
    k: FloatProperty(name="K", default=0.25, min=0.0, max=0.999, description="Loose-octree factor, 0 <= K < 1")
    max_depth: IntProperty(name="Max Depth", default=9, min=0, max=20, description="Deepest octree level")
    use_bounds: BoolProperty(name="Fixed Bounds", default=False, description="Use a fixed root box")
    bounds_min: FloatVectorProperty(name="Bounds Min", size=3, subtype="XYZ", description="Blender coordinates")
    bounds_max: FloatVectorProperty(name="Bounds Max", size=3, subtype="XYZ", description="Blender coordinates")
    fix_bounds: BoolProperty(
        name="Fix Bounds Bug", description="Compute the automatic root box correctly (the original has a FLT_MIN bug)"
    )
    drop_degenerate: BoolProperty(name="Drop Degenerate Faces", description="Instead of writing NaN normals")
    report: CollectionProperty(type=QmapReportLine)
    empty_slot: PointerProperty(
        type=QmapMaterialSettings, name="Empty Slots",
        description='The .qmap.desc entry of faces in empty material slots (the material named "")',
    )  # fmt: skip
    resources_path: StringProperty(
        name="Resources.dat", subtype="FILE_PATH", options=compat.blend_relative_path_options(),
        description="The game's resource list that Register adds the map's QMap entry to (or updates it in); "
        "// means the folder of the saved .blend file",
    )  # fmt: skip
    game_folder: StringProperty(
        name="Game Folder", subtype="DIR_PATH", options=compat.blend_relative_path_options(),
        description="The folder the game runs in: the entry names the map relative to it. Empty: the folder above "
        "the Resources.dat's (as in the game, whose lists are Game\\Resources.dat, Engine\\Resources.dat)",
    )  # fmt: skip
    resource_name: StringProperty(
        name="Resource Name",
        description="The name the game finds the map by. Empty: the name of the entry that already names this map "
        "file, else the map's file name without .qmap",
    )  # fmt: skip
    resource_state: EnumProperty(name="State", items=RESOURCE_STATES, default="KEEP",
                                 description="When the game loads the map")  # fmt: skip
    register_after_compile: BoolProperty(
        name="Register After Compile",
        description="After each successful Compile or Export and Compile, add or update the map's entry in the "
        "Resources.dat (a list the game could not read stops the compile before anything is written)",
    )  # fmt: skip


def scene_settings(context: bpy.types.Context) -> QmapSceneSettings:
    return context.scene.qmap


def panel_path(settings: QmapSceneSettings, name: str) -> str:
    """The panel's path `name` made absolute. A path left relative would be resolved against the working folder
    of the Blender process, wherever that is, so it is refused: `//` needs a saved .blend file."""
    path: str = getattr(settings, name)
    label = settings.bl_rna.properties[name].name
    if not path:
        raise FormatError(f"set the {label} path in the QMAP panel first")
    if path.startswith("//") and not bpy.data.filepath:
        raise FormatError(
            f"the QMAP {label} path {path!r} is relative to the .blend file, which is not saved: save the .blend "
            f"file first or set an absolute path for {label}"
        )
    resolved: str = bpy.path.abspath(path)
    if not os.path.isabs(resolved):
        raise FormatError(f"the QMAP {label} path {path!r} is relative: set an absolute path for {label}")
    return resolved


# ---------------------------------------------------------------------------------------------- operators


def panel_objects(context: bpy.types.Context) -> list[bpy.types.Object]:
    """The scene's objects, or only those visible in the viewport (the panel's Limit to)."""
    objects = list(context.scene.objects)
    if scene_settings(context).export_scope == "VISIBLE":
        return [obj for obj in objects if obj.visible_get()]
    return objects


def export_scene_source(context: bpy.types.Context, tmp_path: str) -> Summary:
    settings = scene_settings(context)
    return qmap_export.export_objects(context, panel_objects(context), tmp_path, settings.apply_modifiers, True)


def compile_scene_source(context: bpy.types.Context, tmp_path: str, qmap_path: str) -> Summary:
    report = qmap_export.compile_to(context, tmp_path, qmap_path, scene_settings(context))
    summary = Summary(files=1, object_kind="")  # a compile counts faces, not objects
    qmap_export.report_summary(report, summary)
    return summary


def export_and_compile_scene(context: bpy.types.Context) -> Summary:
    """The scene to the panel's .qmap.tmp, .qmap.desc and .qmap: all three replaced or none, as File > Export."""
    settings = scene_settings(context)
    paths = qmap_export.MapPaths(panel_path(settings, "tmp_path"), panel_path(settings, "qmap_path"))  # both first
    return qmap_export.export_and_compile_objects(context, panel_objects(context), paths,
                                                  settings.apply_modifiers, True, settings)  # fmt: skip


def map_registration(context: bpy.types.Context, write: bool) -> tuple[resources.Registration, str]:
    """The map's entry in the panel's Resources.dat (written when `write`), and the list's path."""
    settings = scene_settings(context)
    listing = panel_path(settings, "resources_path")
    map_path = panel_path(settings, "qmap_path")
    folder = panel_path(settings, "game_folder") if settings.game_folder else None
    name, state = settings.resource_name or None, settings.resource_state
    if write:
        return compiler_call(resources.register_map, listing, map_path, name, state, folder), listing
    file = compiler_call(resources.map_file_name, listing, map_path, folder)
    return compiler_call(resources.plan_registration, compiler_call(resources.read_resources, listing), file, name,
                         state), listing  # fmt: skip


def resource_line(context: bpy.types.Context) -> str:
    """The map's entry as Register would leave it; without a Resources.dat, as a new entry (needs the game folder)."""
    settings = scene_settings(context)
    if settings.resources_path:
        return map_registration(context, write=False)[0].line()
    if not settings.game_folder:
        raise FormatError("set the Resources.dat or the Game Folder in the QMAP panel first")
    file = compiler_call(resources.game_path, panel_path(settings, "qmap_path"), panel_path(settings, "game_folder"))
    empty = resources.parse_resources(b"", "")
    return compiler_call(resources.plan_registration, empty, file, settings.resource_name or None,
                         settings.resource_state).line()  # fmt: skip


def register_map(context: bpy.types.Context, warnings: list[str] | None = None) -> str:
    """Add or update the map's entry; the line saying what was done, also added to the panel's report (and a
    warning when another entry names the same file: to `warnings` and the panel's report)."""
    settings = scene_settings(context)
    if not os.path.isfile(panel_path(settings, "qmap_path")):
        raise FormatError(f"{panel_path(settings, 'qmap_path')}: no such map: compile it first")
    registration, listing = map_registration(context, write=True)
    line = resources.describe_registration(registration, listing)
    settings.report.add().text = line
    if registration.warning:
        settings.report.add().text = f"warning: {registration.warning}"
        if warnings is not None:
            warnings.append(registration.warning)
    return line


def compiled_and_registered(operator: bpy.types.Operator, context: bpy.types.Context, work: Callable[[], Summary],
                            verb: str) -> set[str]:  # fmt: skip
    """Compile (`work`), then, with Register After Compile, register the map: the list is checked first, so a list
    the game could not read stops the compile before it writes anything."""
    registered: list[str] = []

    def compile_and_register() -> Summary:
        if not scene_settings(context).register_after_compile:
            return work()
        map_registration(context, write=False)
        summary = work()
        registered.append(register_map(context, summary.warnings))
        summary.notes.append(registered[0])
        return summary

    result = guarded(operator, compile_and_register, verb)
    if registered:
        operator.report({"INFO"}, registered[0])
    return result


class QMAP_OT_export_source(bpy.types.Operator):
    """Write the scene to the panel's .qmap.tmp, with the materials' options in the .qmap.desc beside it"""

    bl_idname = "qmap.export_source"
    bl_label = "Export .qmap.tmp"

    def execute(self, context: bpy.types.Context) -> set[str]:
        return guarded(self, lambda: export_scene_source(context, panel_path(scene_settings(context), "tmp_path")),
                       "Exported")  # fmt: skip


class QMAP_OT_compile(bpy.types.Operator):
    """Compile the panel's .qmap.tmp (and .qmap.desc) into the .qmap"""

    bl_idname = "qmap.compile"
    bl_label = "Compile"

    def execute(self, context: bpy.types.Context) -> set[str]:
        def work() -> Summary:
            settings = scene_settings(context)
            return compile_scene_source(context, panel_path(settings, "tmp_path"), panel_path(settings, "qmap_path"))

        return compiled_and_registered(self, context, work, "Compiled")


class QMAP_OT_export_and_compile(bpy.types.Operator):
    """Export the scene to .qmap.tmp and .qmap.desc, then compile the .qmap"""

    bl_idname = "qmap.export_and_compile"
    bl_label = "Export and Compile"

    def execute(self, context: bpy.types.Context) -> set[str]:
        return compiled_and_registered(self, context, lambda: export_and_compile_scene(context),
                                       "Exported and compiled")  # fmt: skip


def reported(operator: bpy.types.Operator, work: Callable[[], str]) -> set[str]:
    """Run `work`: the line it returns is the operator's report, a FormatError its error."""
    try:
        line = work()
    except FormatError as error:
        operator.report({"ERROR"}, str(error))
        return {"CANCELLED"}
    operator.report({"INFO"}, line)
    return {"FINISHED"}


class QMAP_OT_register_map(bpy.types.Operator):
    """Add the compiled map's QMap entry to the Resources.dat, or update the entry of the same name (no other byte
    of the file changes)"""

    bl_idname = "qmap.register_map"
    bl_label = "Register in Resources.dat"

    def execute(self, context: bpy.types.Context) -> set[str]:
        warnings: list[str] = []
        result = reported(self, lambda: register_map(context, warnings))
        for warning in warnings:
            self.report({"WARNING"}, warning)
        return result


class QMAP_OT_copy_resource_line(bpy.types.Operator):
    """Copy the map's QMap entry, as Register would write it, to the clipboard (to paste into a resource list by
    hand); no file changes"""

    bl_idname = "qmap.copy_resource_line"
    bl_label = "Copy Line"

    def execute(self, context: bpy.types.Context) -> set[str]:
        def copy() -> str:
            line = resource_line(context)
            context.window_manager.clipboard = line
            return f"Copied: {line}"

        return reported(self, copy)


class QMAP_OT_show_octrees(bpy.types.Operator):
    """Show the draw and collision octree boxes of the compiled map as wireframe objects"""

    bl_idname = "qmap.show_octrees"
    bl_label = "Show Octrees"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: bpy.types.Context) -> set[str]:
        def work() -> Summary:
            model = compiler_call(qc.read_qmap_file, panel_path(scene_settings(context), "qmap_path"))
            return show_octrees(context, model)

        return guarded(self, work, "Showed the octrees of")


class QMAP_OT_hide_octrees(bpy.types.Operator):
    """Remove the octree box objects"""

    bl_idname = "qmap.hide_octrees"
    bl_label = "Hide Octrees"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: bpy.types.Context) -> set[str]:
        remove_octrees()
        return {"FINISHED"}


class QMAP_OT_import_desc(bpy.types.Operator, ImportHelper):
    """Read a .qmap.desc into the QMAP options of the materials it names"""

    bl_idname = "qmap.import_desc"
    bl_label = "Import .qmap.desc"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".desc"
    filter_glob: StringProperty(default="*.qmap.desc;*.desc", options={"HIDDEN"})

    def execute(self, context: bpy.types.Context) -> set[str]:
        def work() -> Summary:
            desc = qmap_import.load_desc(self.filepath)
            applied, unmatched = qmap_import.apply_desc(desc, create_missing=False, scene=context.scene)
            summary = Summary(files=1, objects=applied, object_kind="materials", face_kind="")
            if unmatched:
                summary.warnings.append(f"{unmatched} entries name no material of this file")
            return summary

        return guarded(self, work, "Read the material options of")


# --------------------------------------------------------------------------------------------- octree boxes

BOX_CORNERS = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)])
BOX_EDGES = np.array([[0, 1], [2, 3], [4, 5], [6, 7], [0, 2], [1, 3], [4, 6], [5, 7], [0, 4], [1, 5], [2, 6], [3, 7]])


def boxes_mesh(name: str, boxes: np.ndarray) -> bpy.types.Mesh:
    """Wireframe of (N, 6) map-space boxes (min x, y, z, max x, y, z), in Blender axes."""
    low, high = boxes[:, None, :3], boxes[:, None, 3:]
    corners = (low + BOX_CORNERS[None] * (high - low))[:, :, [0, 2, 1]].reshape(-1, 3)
    edges = (BOX_EDGES[None] + 8 * np.arange(len(boxes))[:, None, None]).reshape(-1, 2)
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(len(corners))
    mesh.vertices.foreach_set("co", corners.astype(np.float32).ravel())
    mesh.edges.add(len(edges))
    mesh.edges.foreach_set("vertices", edges.astype(np.intc).ravel())
    mesh.update()
    return mesh


def remove_octrees() -> None:
    collection = bpy.data.collections.get(OCTREE_COLLECTION)
    if collection is None:
        return
    meshes = [obj.data for obj in collection.objects]
    bpy.data.batch_remove(list(collection.objects) + meshes + [collection])


def show_octrees(context: bpy.types.Context, model: qc.QmapModel) -> Summary:
    """One wireframe object per tree and level, in their own collection, never rendered."""
    remove_octrees()
    collection = bpy.data.collections.new(OCTREE_COLLECTION)
    context.scene.collection.children.link(collection)
    summary = Summary(files=1, face_kind="")  # wireframe boxes: no faces to count
    for label, nodes in (("draw", model.draw_nodes), ("collision", model.collision_nodes)):
        boxes = np.asarray(nodes.boxes, np.float64)
        depth = np.asarray(nodes.depth)
        for level in np.unique(depth):
            name = f"QMAP {label} octree L{int(level)}"
            obj = bpy.data.objects.new(name, boxes_mesh(name, boxes[depth == level]))
            obj.display_type = "WIRE"
            obj.hide_render = True
            obj.hide_select = True
            obj[OCTREE_DISPLAY] = True
            collection.objects.link(obj)
            summary.objects += 1
    return summary


# ------------------------------------------------------------------------------------------------- panels


def property_layout(panel: bpy.types.Panel) -> bpy.types.UILayout:
    """The panel's layout with the labels beside the fields, as Blender's own property panels have them."""
    layout = panel.layout
    assert layout is not None  # (only a panel being drawn has one)
    layout.use_property_split = True
    layout.use_property_decorate = False
    return layout


class QmapPanel:
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "QMAP"


class VIEW3D_PT_qmap(QmapPanel, bpy.types.Panel):
    bl_label = "QMAP Map"

    def draw(self, context: bpy.types.Context) -> None:
        settings = scene_settings(context)
        layout = property_layout(self)
        layout.prop(settings, "tmp_path")
        layout.prop(settings, "qmap_path")
        layout.prop(settings, "export_scope")
        layout.prop(settings, "apply_modifiers")
        column = layout.column(align=True)
        column.operator(QMAP_OT_export_source.bl_idname, icon="EXPORT")
        column.operator(QMAP_OT_compile.bl_idname, icon="MOD_BUILD")
        column.operator(QMAP_OT_export_and_compile.bl_idname, icon="PLAY")


class VIEW3D_PT_qmap_compile(QmapPanel, bpy.types.Panel):
    bl_label = "Compile Options"
    bl_parent_id = "VIEW3D_PT_qmap"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: bpy.types.Context) -> None:
        settings = scene_settings(context)
        layout = property_layout(self)
        for name in ("k", "max_depth", "fix_bounds", "drop_degenerate", "use_bounds"):
            layout.prop(settings, name)
        if settings.use_bounds:
            layout.prop(settings, "bounds_min")
            layout.prop(settings, "bounds_max")


class VIEW3D_PT_qmap_resources(QmapPanel, bpy.types.Panel):
    bl_label = "Resources.dat"
    bl_parent_id = "VIEW3D_PT_qmap"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: bpy.types.Context) -> None:
        settings = scene_settings(context)
        layout = property_layout(self)
        for name in ("resources_path", "game_folder", "resource_name", "resource_state", "register_after_compile"):
            layout.prop(settings, name)
        row = layout.row(align=True)
        row.operator(QMAP_OT_register_map.bl_idname, icon="FILE_TEXT")
        row.operator(QMAP_OT_copy_resource_line.bl_idname, icon="COPYDOWN")


class VIEW3D_PT_qmap_materials(QmapPanel, bpy.types.Panel):
    bl_label = "Materials"
    bl_parent_id = "VIEW3D_PT_qmap"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        obj = context.active_object
        materials = [slot.material for slot in obj.material_slots if slot.material] if obj else []
        empty_slots = obj is not None and obj.type == "MESH" and any(not s.material for s in obj.material_slots)
        if not materials and not empty_slots:
            layout.label(text="The active object has no materials")
        for label, settings in [(m.name, m.qmap) for m in materials] + (
                [("(empty slots, all objects)", scene_settings(context).empty_slot)] if empty_slots else []):
            box = layout.box()
            box.label(text=label, icon="MATERIAL")
            row = box.row()
            row.prop(settings, "skip")
            row.prop(settings, "tex_gen")
            box.prop(settings, "tex_scale")
            box.prop(settings, "output_name")
        layout.operator(QMAP_OT_import_desc.bl_idname, icon="IMPORT")


class VIEW3D_PT_qmap_report(QmapPanel, bpy.types.Panel):
    bl_label = "Last Compile"
    bl_parent_id = "VIEW3D_PT_qmap"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        lines = [line.text for line in scene_settings(context).report]
        if not lines:
            layout.label(text="Not compiled yet")
        column = layout.column(align=True)
        for text in lines[:REPORT_LINES_SHOWN]:
            column.label(text=text, icon="ERROR" if text.startswith(("warning", "error")) else "NONE")
        if len(lines) > REPORT_LINES_SHOWN:
            column.label(text=f"... {len(lines) - REPORT_LINES_SHOWN} more lines in the text "
                              f"'{qmap_export.REPORT_TEXT}'")  # fmt: skip
        row = layout.row(align=True)
        row.operator(QMAP_OT_show_octrees.bl_idname, icon="MESH_CUBE")
        row.operator(QMAP_OT_hide_octrees.bl_idname, icon="X")


classes = (
    QmapMaterialSettings, QmapReportLine, QmapSceneSettings,
    QMAP_OT_export_source, QMAP_OT_compile, QMAP_OT_export_and_compile, QMAP_OT_show_octrees,
    QMAP_OT_hide_octrees, QMAP_OT_import_desc, QMAP_OT_register_map, QMAP_OT_copy_resource_line,
    VIEW3D_PT_qmap, VIEW3D_PT_qmap_compile, VIEW3D_PT_qmap_resources, VIEW3D_PT_qmap_materials,
    VIEW3D_PT_qmap_report,
)  # fmt: skip


def after_register() -> None:
    bpy.types.Material.qmap = PointerProperty(type=QmapMaterialSettings)
    bpy.types.Scene.qmap = PointerProperty(type=QmapSceneSettings)


def before_unregister() -> None:
    del bpy.types.Scene.qmap
    del bpy.types.Material.qmap
