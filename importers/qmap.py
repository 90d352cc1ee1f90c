"""QMAP into Blender: the `.qmap.tmp` source (objects, lamps, and the `.qmap.desc` beside it into material
settings), and a compiled `.qmap` (one object per material) so artists see what the engine will draw."""

from __future__ import annotations

import math
import os

import bpy
import numpy as np
from bpy.props import BoolProperty, StringProperty
from bpy_extras.io_utils import ImportHelper

from .. import qmap_compiler as qc
from ..common import mesh_io
from ..common.operators import ImportFilesMixin, Summary, draw_panel, file_handler, guarded, import_all, prepare_layout
from ..common.qmap_io import compiler_call, decode_name, desc_path_for
from ..common.rollback import remember_values
from ..formats import dedup
from ..formats.errors import FormatError, read_file_bytes

# ------------------------------------------------------------------------------------------ material options


def material_named(name: bytes, warnings: list[str]) -> bpy.types.Material | None:
    """The material for a QMAP name: an existing one of that name, or a new one; "" is an empty slot."""
    return mesh_io.material_named(decode_name(name), warnings) if name else None


def apply_desc(desc: qc.DescDocument, create_missing: bool, scene: bpy.types.Scene) -> tuple[int, int]:
    """Copy each entry's options onto the material of that name (the `""` entry, for empty material slots, onto
    the scene's QMAP settings); returns (applied, unmatched)."""
    applied = unmatched = 0
    for name, entry in desc.entries.items():
        if not name:
            settings = scene.qmap.empty_slot
        else:
            material = material_named(name, []) if create_missing else mesh_io.existing_material(decode_name(name))
            if material is None:
                unmatched += 1
                continue
            settings = material.qmap
        remember_values(settings, *QMAP_OPTIONS)
        settings.skip = entry.skip
        settings.tex_gen = entry.tex_gen
        settings.tex_scale = entry.tex_scale
        settings.output_name = decode_name(entry.new_name)
        applied += 1
    return applied, unmatched


QMAP_OPTIONS = ("skip", "tex_gen", "tex_scale", "output_name")


def load_desc(path: str) -> qc.DescDocument:
    return compiler_call(qc.parse_desc, read_file_bytes(path), path)


# ------------------------------------------------------------------------------------------------ .qmap.tmp


def place(obj: bpy.types.Object, source: qc.MeshObject | qc.LampObject) -> None:
    """The file's position, XYZ Euler and size as the object's own channels, as written: a matrix could not give
    back the rotation of a zero size, nor angles beyond a half turn, and would move every number by a float step."""
    obj.location = source.position
    obj.rotation_mode = "XYZ"
    obj.rotation_euler = source.orientation
    obj.scale = source.size


def build_tmp_mesh(context: bpy.types.Context, source: qc.MeshObject, warnings: list[str]) -> bpy.types.Object:
    name = decode_name(source.name)
    sizes = source.face_sizes.astype(np.intp)
    corner_mask = np.arange(4) < sizes[:, None]
    corner_verts = source.face_indices[corner_mask]
    mesh = mesh_io.new_mesh(name, source.vertices, corner_verts, np.concatenate([[0], np.cumsum(sizes)[:-1]]))
    if source.face_uvs is not None:
        mesh_io.add_uv_map(mesh, "UVMap", source.face_uvs[corner_mask])
    mesh_io.set_face_smooth(mesh, source.face_smooth)
    for material_name in source.materials:
        mesh.materials.append(material_named(material_name, warnings))
    mesh_io.set_face_materials(mesh, source.face_materials)
    obj = mesh_io.link_new_object(context, name, mesh, warnings)
    place(obj, source)
    return obj


def build_tmp_lamp(context: bpy.types.Context, source: qc.LampObject, warnings: list[str]) -> bpy.types.Object:
    name = decode_name(source.name)
    light = bpy.data.lights.new(name, "POINT" if source.lamp_type == "Lamp" else "SPOT")
    light.color = source.color
    light.use_custom_distance = True
    light.cutoff_distance = source.distance
    if source.lamp_type == "Spot":
        light.spot_blend = min(max(source.softness, 0.0), 1.0)
        light.spot_size = math.radians(min(max(source.angle, 1.0), 180.0))
    obj = mesh_io.link_new_object(context, name, light, warnings)
    place(obj, source)
    return obj


def is_map_source(path: str) -> bool:
    return path.lower().endswith(".qmap.tmp")


def parse_tmp_with_desc(path: str, use_desc: bool) -> tuple[qc.TmpDocument, qc.DescDocument | None]:
    if not is_map_source(path):
        raise FormatError(f"{path}: not a QMAP source (the name must end in .qmap.tmp)")
    document = compiler_call(qc.parse_tmp, read_file_bytes(path), path)
    desc_path = desc_path_for(path)
    desc = load_desc(desc_path) if use_desc and os.path.isfile(desc_path) else None
    return document, desc


def build_tmp(
    context: bpy.types.Context, document: tuple[qc.TmpDocument, qc.DescDocument | None], summary: Summary
) -> None:
    tmp, desc = document
    for mesh in tmp.meshes:
        build_tmp_mesh(context, mesh, summary.warnings)
        summary.objects += 1
        summary.faces += len(mesh.face_sizes)
    for lamp in tmp.lamps:
        build_tmp_lamp(context, lamp, summary.warnings)
        summary.objects += 1
    summary.warnings.extend(tmp.warnings)
    if desc is not None:
        _, unmatched = apply_desc(desc, create_missing=False, scene=context.scene)
        if unmatched:
            summary.warnings.append(f"{unmatched} .qmap.desc entries name no material of the map")


def import_map_sources(context: bpy.types.Context, paths: list[str], use_desc: bool) -> Summary:
    """Blender hands a drop every file ending in ".tmp" (see IOGF_FH_qmap_tmp): the map sources among `paths`
    are imported and the other files left out with a warning; with no map source at all the first file is refused."""
    sources = [path for path in paths if is_map_source(path)] or paths[:1]
    summary = import_all(context, sources, lambda path: parse_tmp_with_desc(path, use_desc),
                         lambda _path, document, summary: build_tmp(context, document, summary))  # fmt: skip
    summary.warnings += [f"{path}: not a QMAP source (.qmap.tmp); left out" for path in paths if path not in sources]
    return summary


# ------------------------------------------------------------------------------------------ compiled .qmap


def welded_vertices(positions: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vertices shared by position, and each corner's vertex. A compiled map keeps zero-area faces (PacMan.qmap
    has 408 quads with two corners in one place), and faces that repeat another's corners: those get vertices of
    their own (dedup.faces_kept_whole), so every face of the file arrives."""
    vertices, corner_verts = dedup.unique_rows(positions)
    corner_verts, copied = dedup.faces_kept_whole(corner_verts, sizes, len(vertices))
    return (np.concatenate([vertices, vertices[copied]]) if copied.size else vertices), corner_verts


def build_compiled(context: bpy.types.Context, path: str, model: qc.QmapModel, summary: Summary) -> None:
    """One object per material. Map (X, Y, Z) is Blender (X, Z, Y); faces are turned back to counter-clockwise
    and V is flipped back. Quads written as two triangles are rejoined."""
    faces = qc.model_faces(model)
    stem = os.path.basename(path)
    for index, material_name in enumerate(faces.materials):
        chosen = np.flatnonzero(faces.material == index)
        if not len(chosen):
            continue
        sizes = faces.sizes[chosen].astype(np.intp)
        reverse = np.where((sizes == 4)[:, None], [0, 3, 2, 1], [0, 2, 1, 3])
        rows = chosen[:, None]
        corner_mask = np.arange(4) < sizes[:, None]
        positions = faces.positions[rows, reverse][corner_mask][:, [0, 2, 1]]
        uvs = faces.uvs[rows, reverse][corner_mask].astype(np.float64)
        uvs[:, 1] = 1.0 - uvs[:, 1]
        vertices, corner_verts = welded_vertices(positions.astype(np.float32), sizes)
        name = f"{stem}: {decode_name(material_name) or '(no material)'}"
        mesh = mesh_io.new_mesh(name, vertices, corner_verts, np.concatenate([[0], np.cumsum(sizes)[:-1]]))
        mesh_io.add_uv_map(mesh, "UVMap", uvs.astype(np.float32))
        mesh_io.set_smooth(mesh, False)  # the file holds one normal per face
        mesh.materials.append(material_named(material_name, summary.warnings))
        mesh_io.link_new_object(context, name, mesh)
        summary.objects += 1
        summary.faces += len(chosen)


# ------------------------------------------------------------------------------------------------ operators


class IMPORT_SCENE_OT_qmap_tmp(bpy.types.Operator, ImportFilesMixin, ImportHelper):
    """Import QMAP intermediate maps (.qmap.tmp), with the material options of the .qmap.desc beside them"""

    bl_idname = "import_scene.qmap_tmp"
    bl_label = "Import QMAP Source"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".qmap.tmp"
    filter_glob: StringProperty(default="*.qmap.tmp", options={"HIDDEN"})
    use_desc: BoolProperty(
        name="Read .qmap.desc", default=True, description="Apply the .qmap.desc beside the file to the materials"
    )

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        if self.filepath and not any(is_map_source(path) for path in self.selected_paths()):
            # a drop of ".tmp" files (see IOGF_FH_qmap_tmp) none of which is a map source: no options to confirm
            self.report({"ERROR"}, f"{os.path.basename(self.filepath)}: not a QMAP source (the name must end in "
                                   ".qmap.tmp); nothing imported")  # fmt: skip
            return {"CANCELLED"}
        opened: set[str] = set(super().invoke(context, event))
        return opened

    def execute(self, context: bpy.types.Context) -> set[str]:
        paths = self.selected_paths()
        return guarded(self, lambda: import_map_sources(context, paths, self.use_desc), "Imported")

    def draw(self, context: bpy.types.Context) -> None:
        prepare_layout(self.layout)
        draw_panel(self.layout, self, "IOGF_qmap_tmp_import", "Materials", ("use_desc",))


class IMPORT_SCENE_OT_qmap(bpy.types.Operator, ImportFilesMixin, ImportHelper):
    """Import compiled QMAP maps (.qmap) to check what the engine will draw: one object per material"""

    bl_idname = "import_scene.qmap"
    bl_label = "Import Compiled QMAP"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".qmap"
    filter_glob: StringProperty(default="*.qmap", options={"HIDDEN"})

    def execute(self, context: bpy.types.Context) -> set[str]:
        paths = self.selected_paths()
        return guarded(
            self,
            lambda: import_all(context, paths, lambda p: compiler_call(qc.read_qmap_file, p),
                               lambda path, model, summary: build_compiled(context, path, model, summary)),
            "Imported",
        )  # fmt: skip


# Blender matches a dropped file by its last extension only (every release 4.2-5.2), so ".qmap.tmp" alone would
# match nothing and ".tmp" is what lets map sources in. `poll_drop` cannot see the file names: the importer
# refuses a drop without a map source before showing its options, and imports only the map sources of a drop.
IOGF_FH_qmap_tmp = file_handler(
    "IOGF_FH_qmap_tmp", "QMAP source", "import_scene.qmap_tmp", "export_scene.qmap_tmp", ".qmap.tmp;.tmp"
)
IOGF_FH_qmap = file_handler("IOGF_FH_qmap", "QMAP compiled map", "import_scene.qmap", "export_scene.qmap", ".qmap")

def menu_import(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    self.layout.operator(IMPORT_SCENE_OT_qmap_tmp.bl_idname, text="The Final Quest map source (.qmap.tmp)")
    self.layout.operator(IMPORT_SCENE_OT_qmap.bl_idname, text="The Final Quest map, compiled (.qmap)")


classes = (IMPORT_SCENE_OT_qmap_tmp, IMPORT_SCENE_OT_qmap, IOGF_FH_qmap_tmp, IOGF_FH_qmap)
