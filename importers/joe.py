"""JOE and JPK into Blender: one mesh object per JOE file or pack member."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import bpy
import numpy as np
from bpy.props import BoolProperty, FloatProperty, StringProperty
from bpy_extras.io_utils import ImportHelper
from mathutils import Matrix

from ..common import mesh_io, textures
from ..common.conventions import JOE_STORED_NORMALS as STORED_NORMALS
from ..common.operators import (
    IMPORT_SCALE,
    ImportFilesMixin,
    Summary,
    axis_options,
    draw_panel,
    file_handler,
    guarded,
    import_all,
    import_matrix,
    prepare_layout,
    said_once,
)
from ..formats import dedup, joe, jpk


@dataclass
class JoeImportOptions:
    rewind_clockwise: bool = True
    apply_normal_swap: bool = False
    use_custom_normals: bool = True
    matrix: Matrix | None = None
    find_textures: bool = True


@dataclass
class JoeSource:
    """The models of a .joe file or of a .jpk pack's JOE members, and the pack's own warnings."""

    models: list[tuple[str, joe.JoeDocument]]  # (object name, document)
    pack_warnings: list[str] = field(default_factory=list)


def parse_file(path: str) -> JoeSource:
    if not path.lower().endswith(".jpk"):
        return JoeSource([(os.path.splitext(os.path.basename(path))[0], joe.load_joe(path))])
    pack = jpk.load_jpk(path)
    source = JoeSource([], pack.warnings)
    for member in pack.members:
        if not member.name.lower().endswith(".joe"):
            source.pack_warnings.append(f"pack member {member.name!r} is not a .joe model and was skipped")
            continue
        document = joe.read_joe(member.data, f"{path}:{member.name}")
        source.models.append((member.name[: -len(".joe")], document))
    if not source.models:
        source.pack_warnings.append("the pack has no .joe member; nothing imported from it")
    return source


def build_object(
    context: bpy.types.Context, name: str, document: joe.JoeDocument, options: JoeImportOptions, summary: Summary,
    taken_names: list[tuple[str, str]],
) -> tuple[bpy.types.Object, list[str]]:
    """The model's object, and its warnings (without its name: a pack says each once for all its members)."""
    warnings = list(document.warnings)
    warnings += [text for frame in document.frames[:1] for text in joe.zero_non_finite(frame)]
    if joe.normal_swap_would_fire(document):
        if options.apply_normal_swap:
            joe.swap_normals(document)
            warnings.append("VDrift's normal swap fired and was applied, as the game does")
        else:
            warnings.append("VDrift's normal-swap heuristic fires on this file: the game swaps its normals (turn on "
                            "VDrift Normal Swap to see it shaded as in the game)")  # fmt: skip
    frame = document.first_frame
    if (message := joe.texcoord_index_warning(frame)) is not None:
        warnings.append(message)
    faces = joe.importable_faces(frame, options.rewind_clockwise)
    mesh = _build_mesh(name, frame, faces, options)
    summary.objects += 1
    summary.faces += len(mesh.polygons)
    # A member's name is what list.txt and objects.txt call it: kept for export when Blender must number it.
    obj = mesh_io.link_new_object(context, name, mesh, warnings, taken_names)
    return obj, warnings


def _build_mesh(
    name: str, frame: joe.JoeFrame, faces: joe.ImportableFaces, options: JoeImportOptions
) -> bpy.types.Mesh:
    corner_verts, corner_normals, corner_texcoords = joe.corner_data(frame, faces)
    corner_verts, copied = dedup.faces_kept_whole(corner_verts, np.full(frame.face_count, 3), len(frame.positions))
    positions = np.concatenate([frame.positions, frame.positions[copied]]) if copied.size else frame.positions
    if options.matrix is not None and not mesh_io.is_identity(options.matrix):
        positions = mesh_io.transform_points(positions, options.matrix)
        corner_normals = mesh_io.transform_normals(corner_normals, options.matrix).astype(np.float32)
    mesh = mesh_io.new_mesh(name, positions, corner_verts, np.arange(frame.face_count) * 3)
    if corner_texcoords is not None:
        mesh_io.add_uv_map(mesh, "UVMap", joe.flip_v(corner_texcoords))
    mesh_io.set_smooth(mesh)
    if options.use_custom_normals:
        mesh_io.add_corner_vectors(mesh, STORED_NORMALS, corner_normals)
        mesh_io.set_custom_normals(mesh, corner_verts, corner_normals)
    return mesh


def import_joe_files(context: bpy.types.Context, paths: list[str], options: JoeImportOptions) -> Summary:
    made: dict[tuple[str, bool], bpy.types.Material] = {}  # (texture, alpha) -> the material of the models using it

    def build(path: str, source: object, summary: Summary) -> None:
        assert isinstance(source, JoeSource)
        packed = path.lower().endswith(".jpk")
        summary.warnings += [f"{os.path.basename(path)}: {text}" for text in source.pack_warnings]
        textures.new_search()
        taken_names: list[tuple[str, str]] = []
        said: dict[str, list[str]] = {}  # warning -> the models it concerns
        for name, document in source.models:
            obj, warnings = build_object(context, name, document, options, summary, taken_names)
            for text in warnings:
                said.setdefault(text, []).append(name)
            if options.find_textures:  # a member's texture is found by its name in the pack's folder
                textures.texture_joe_object(obj, path, f"{name}.joe" if packed else None, summary, made)
        summary.warnings += said_once(said)
        if taken_names:  # (one line for a pack imported twice, not one per member)
            summary.warnings.append(f"{os.path.basename(path)}: {mesh_io.taken_names_note(taken_names)}")

    return import_all(context, paths, parse_file, build)


# ------------------------------------------------------------------------------------------------- operator


@axis_options("import")
class IMPORT_SCENE_OT_joe(bpy.types.Operator, ImportFilesMixin, ImportHelper):
    """Import VDrift JOE models and JPK model packs"""

    bl_idname = "import_scene.joe"
    bl_label = "Import JOE/JPK"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".joe"
    filter_glob: StringProperty(default="*.joe;*.jpk", options={"HIDDEN"})

    rewind_clockwise: BoolProperty(
        name="Fix Clockwise Faces",
        default=True,
        description="Turn faces whose corner order opposes their normals, so Blender's face orientation matches",
    )
    apply_normal_swap: BoolProperty(
        name="VDrift Normal Swap",
        default=False,
        description="Swap the normals when VDrift's heuristic would (needed by dof2joe output, magic 0)",
    )
    use_custom_normals: BoolProperty(
        name="Custom Normals", default=True, description="Use the file's normals as custom split normals"
    )
    global_scale: FloatProperty(**IMPORT_SCALE)
    find_textures: BoolProperty(**textures.FIND_TEXTURES)

    def execute(self, context: bpy.types.Context) -> set[str]:
        options = JoeImportOptions(
            rewind_clockwise=self.rewind_clockwise,
            apply_normal_swap=self.apply_normal_swap,
            use_custom_normals=self.use_custom_normals,
            matrix=import_matrix(self),
            find_textures=self.find_textures,
        )
        return guarded(self, lambda: import_joe_files(context, self.selected_paths(), options), "Imported")

    def draw(self, context: bpy.types.Context) -> None:
        draw_joe_import_options(self.layout, self)


def draw_joe_import_options(layout: bpy.types.UILayout, operator: object) -> None:
    prepare_layout(layout)
    draw_panel(
        layout, operator, "IOGF_joe_import_geometry", "Geometry",
        ("rewind_clockwise", "use_custom_normals", "apply_normal_swap", "find_textures"),
    )  # fmt: skip
    draw_panel(
        layout, operator, "IOGF_joe_import_transform", "Transform", ("global_scale", "forward_axis", "up_axis")
    )  # fmt: skip


IOGF_FH_joe = file_handler("IOGF_FH_joe", "VDrift JOE", "import_scene.joe", "export_scene.joe", ".joe;.jpk")

# The JPK Collection Exporter; drops of .jpk files go to the handler above, with any .joe files dropped beside them.
IOGF_FH_jpk = file_handler("IOGF_FH_jpk", "VDrift JPK", "import_scene.joe", "export_scene.jpk", ".jpk", drops=False)

def menu_import(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    self.layout.operator(IMPORT_SCENE_OT_joe.bl_idname, text="VDrift JOE/JPK (.joe, .jpk)")


classes = (IMPORT_SCENE_OT_joe, IOGF_FH_joe, IOGF_FH_jpk)
