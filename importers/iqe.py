"""IQE (Inter-Quake Export) into Blender: meshes, materials, UVs, normals, colours, custom arrays, an armature
with vertex groups and one action per animation, and the `comment` section as a text block."""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass, field

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, FloatProperty, StringProperty
from bpy_extras.io_utils import ImportHelper
from mathutils import Matrix

from ..common import animation as animation_helpers
from ..common import armature as armature_helpers
from ..common import iqe_rig, mesh_io, textures
from ..common.conventions import (
    COLOR_SPACE,
    COMMENT,
    CUSTOM_TAG,
    IMPORT_COLORS,
    IQE_COLOR_COMPONENTS,
    IQE_FILE_VERTEX,
    IQE_UV_COMPONENTS,
    srgb_to_linear,
)
from ..common.conventions import IQE_STORED_NORMALS as STORED_NORMALS
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
)
from ..common.selection import scene_armature
from ..formats import dedup, iqe
from ..formats.errors import FormatError
from ..formats.pieces import sequential
from ..formats.rows import rows_at
from ..qmap_compiler.memory import freed_memory_kept
from ..qmap_compiler.parallel import ordered_map
from . import iqe_smoothing

COLOR_NAME = "Color"
ANIMATION_ARMATURE = (
    ("AUTO", "Auto", "A file of joints and animations only: the armature imported with it, else the active (or only "
     "selected) armature, joints matched to bones by name. A file with meshes: an armature of its own"),
    ("ACTIVE", "Active Armature", "As Auto, and a file with meshes too where that armature is its rig (every joint "
     "a bone, at the file's base pose): its meshes are skinned to it"),
    ("NEW", "New Armature", "Every file gets an armature of its own"),
)
UV_NAME = "UVMap"

@dataclass
class IqeImportOptions:
    merge_by_name: bool = True
    use_custom_normals: bool = True
    import_colors: str = "SRGB"
    import_armature: bool = True
    import_animations: bool = True
    bone_axis: str = "Y"
    matrix: Matrix | None = None
    find_textures: bool = True
    merge_vertices: bool = True
    animation_armature: str = "AUTO"


# ------------------------------------------------------------------------------------------------ building


def build_document(
    context: bpy.types.Context, path: str, document: iqe.IqeDocument, options: IqeImportOptions, summary: Summary,
    armatures_made: list[bpy.types.Object] | None = None,
) -> list[bpy.types.Object]:
    """Build one file's objects. `armatures_made`: those the same import made before (an animation-only file may go
    onto one of them), to which this file's armature is added."""
    stem = os.path.splitext(os.path.basename(path))[0]
    warnings = [f"{stem}: {text}" for text in document.warnings]
    root_objects: list[bpy.types.Object] = []
    armature_obj: bpy.types.Object | None = None
    bone_names: list[str] = []
    onto = _existing_rig(context, stem, document, options, armatures_made or [], summary.notes)
    target = onto[0] if onto is not None else None
    notes = document.notes
    if onto is not None:
        armature_obj = onto[0]
        bone_names = _animations_onto(context, stem, document, onto[0], onto[1], summary, warnings)
        how = ", joints matched by number" if document.joints_numbered else ""
        notes = [text for text in notes if not text.startswith(iqe.NUMBERED_JOINTS_NOTE)]  # (no joints were made)
        summary.notes.append(f"{stem}: animations added to armature {onto[0].name!r}{how}")
    elif document.joints and options.import_armature:
        armature_obj, bone_names = _build_skeleton(context, stem, document, options, warnings)
        root_objects.append(armature_obj)
        if armatures_made is not None:
            armatures_made.append(armature_obj)
    summary.notes += [f"{stem}: {text}" for text in notes]
    normals_by_mesh = _file_or_generated_normals(document, warnings, stem)
    groups = _object_groups(document, options.merge_by_name)
    parts = _mesh_parts(document.meshes)
    first_rows = _first_equal_vertices(document, groups, options) if options.merge_vertices else None
    objects = []
    for index, (name, members) in enumerate(groups):
        obj, points = _build_object(name, members, parts, [normals_by_mesh[i] for i in members], document, options,
                                    warnings, None if first_rows is None else first_rows[index])  # fmt: skip
        if armature_obj is not None and any(document.meshes[i].blend_indices is not None for i in members):
            _skin(obj, armature_obj, bone_names, [document.meshes[i] for i in members], points)
        elif obj.parent is None:
            root_objects.append(obj)
        context.collection.objects.link(obj)  # once built: nothing is evaluated before
        objects.append(obj)
        summary.objects += 1
        summary.faces += len(obj.data.polygons)
    if armature_obj is not None and target is None:
        summary.objects += 1
        summary.actions += len(document.animations) if options.import_animations else 0
    if options.matrix is not None and not mesh_io.is_identity(options.matrix):
        for obj in root_objects:
            obj.matrix_world = options.matrix @ obj.matrix_world
    if document.comment_section is not None:
        text = bpy.data.texts.new(f"{os.path.basename(path)} comment")
        text.from_string(document.comment_section)
        for obj in (armature_obj if target is None else None, *objects):
            if obj is not None:
                obj[COMMENT] = text
    summary.warnings.extend(warnings)
    return [*([armature_obj] if armature_obj and target is None else []), *objects]


def _object_groups(document: iqe.IqeDocument, merge_by_name: bool) -> list[tuple[str, list[int]]]:
    groups: dict[str, list[int]] = {}
    result: list[tuple[str, list[int]]] = []
    for index, mesh in enumerate(document.meshes):
        if merge_by_name and mesh.name in groups:
            groups[mesh.name].append(index)
            continue
        members = [index]
        groups.setdefault(mesh.name, members)
        result.append((mesh.name, members))
    return result


def _file_or_generated_normals(document: iqe.IqeDocument, warnings: list[str], stem: str) -> list[np.ndarray | None]:
    """Per mesh: per-vertex file normals (V, 3), or generated per-corner normals in Blender order (C, 3)."""
    meshes = document.meshes
    if any(m.normals is not None for m in meshes) or not meshes:
        return [None for _ in meshes]
    try:
        generated = iqe_smoothing.generated_normals(meshes)
    except ValueError as error:
        warnings.append(f"{stem}: {error}; Blender's own normals are used")
        return [None for _ in meshes]
    return [iqe.reverse_face_order(normals, mesh.face_sizes) for normals, mesh in zip(generated, meshes, strict=True)]


def _kept_faces(mesh: iqe.IqeMesh) -> tuple[np.ndarray, np.ndarray]:
    """Corner mask and face mask without faces that use a vertex twice (a Blender mesh cannot hold them)."""
    bad_faces = iqe.faces_repeating_a_vertex(mesh.face_corners, mesh.face_sizes)
    if not bad_faces.any():
        return np.ones(len(mesh.face_corners), bool), np.ones(len(bad_faces), bool)
    return ~np.repeat(bad_faces, mesh.face_sizes), ~bad_faces


@dataclass
class _MeshParts:
    """Per mesh of the document: its faces as Blender takes them (corners in Blender's order, without the faces
    that use a vertex twice) and its UVs with V flipped back. Worked out for all meshes at once: a file of many
    small meshes would pay numpy's cost per call for every one of them."""

    corners: list[np.ndarray]  # Blender-order corners of the kept faces, the mesh's own vertex numbers
    sizes: list[np.ndarray]  # the kept faces' sizes
    kept_corners: list[np.ndarray | None]  # which of the file's corners are kept (None: all)
    texcoords: list[np.ndarray | None]  # blender_texcoords()
    unit_normals: list[np.ndarray | None] = field(default_factory=list)  # float32 (None: made when needed)


def _mesh_parts(meshes: list[iqe.IqeMesh]) -> _MeshParts:
    parts = _MeshParts([], [], [], [], [])
    if not meshes:
        return parts
    corner_counts = [len(m.face_corners) for m in meshes]
    face_counts = [len(m.face_sizes) for m in meshes]
    corner_bounds = np.cumsum([0, *corner_counts]).tolist()
    face_bounds = np.cumsum([0, *face_counts]).tolist()
    sizes = np.concatenate([m.face_sizes for m in meshes])
    local = np.concatenate([m.face_corners for m in meshes])
    first_vertex = np.cumsum([0, *(m.vertex_count for m in meshes[:-1])])
    numbered = local.astype(np.int64) + np.repeat(first_vertex, corner_counts)  # (faces of different meshes apart)
    bad_faces = iqe.faces_repeating_a_vertex(numbered, sizes) if len(sizes) else np.zeros(0, bool)
    reversed_corners = iqe.reverse_face_order(local, sizes)
    all_kept = not bad_faces.any()
    for index, mesh in enumerate(meshes):
        corners = reversed_corners[corner_bounds[index] : corner_bounds[index + 1]]
        face_sizes = sizes[face_bounds[index] : face_bounds[index + 1]]
        kept_corners = None
        if not all_kept and bad_faces[face_bounds[index] : face_bounds[index + 1]].any():
            kept_corners, kept_faces = _kept_faces(mesh)
            corners, face_sizes = corners[kept_corners], face_sizes[kept_faces]
        parts.corners.append(corners)
        parts.sizes.append(face_sizes)
        parts.kept_corners.append(kept_corners)
    parts.texcoords = _flipped_texcoords(meshes)
    parts.unit_normals = _unit_normals(meshes)
    return parts


def _unit_normals(meshes: list[iqe.IqeMesh]) -> list[np.ndarray | None]:
    """Each mesh's file normals as float32 unit vectors, for a file of several meshes made in one pass (for one
    mesh, None: made only if its normals are per vertex)."""
    given = [m.normals for m in meshes if m.normals is not None]
    if len(meshes) < 2 or not given:
        return [None for _ in meshes]
    return _split_like(mesh_io.unit_vectors(np.concatenate(given).astype(np.float32)), meshes, "normals")


def _split_like(values: np.ndarray, meshes: list[iqe.IqeMesh], field_name: str) -> list[np.ndarray | None]:
    """Rows made from the meshes' `field_name` arrays, concatenated, split back: one piece for each mesh that has
    the array, None for the others."""
    given = [getattr(m, field_name) is not None for m in meshes]
    bounds = np.cumsum([0, *(m.vertex_count for m, has in zip(meshes, given, strict=True) if has)]).tolist()
    pieces = iter(values[start:end] for start, end in itertools.pairwise(bounds))
    return [next(pieces) if has else None for has in given]


def _flipped_texcoords(meshes: list[iqe.IqeMesh]) -> list[np.ndarray | None]:
    """Each mesh's blender_texcoords(), V flipped for all meshes in one pass."""
    given = [m.texcoords for m in meshes if m.texcoords is not None]
    if len({uvs.dtype for uvs in given}) != 1:  # (none, or of several types: each flipped in its own)
        return [m.blender_texcoords() for m in meshes]
    flipped = np.concatenate(given)
    flipped[:, 1] = 1.0 - flipped[:, 1]
    return _split_like(flipped, meshes, "texcoords")


def _build_object(
    name: str,
    members: list[int],
    parts: _MeshParts,
    generated: list[np.ndarray | None],
    document: iqe.IqeDocument,
    options: IqeImportOptions,
    warnings: list[str],
    first_rows: np.ndarray | None = None,
) -> tuple[bpy.types.Object, _PointData]:
    """The object of the meshes `members` (of the document); `first_rows`: `_first_equal_vertices`' for it."""
    meshes = [document.meshes[i] for i in members]
    corner_parts, size_parts, generated_parts = [], [], []
    materials: list[str] = []
    material_of_member = []
    vertex_offset = 0
    for position, (index, mesh) in enumerate(zip(members, meshes, strict=True)):
        corners = parts.corners[index]
        corner_parts.append(corners + vertex_offset if vertex_offset else corners)
        vertex_offset += mesh.vertex_count
        size_parts.append(parts.sizes[index])
        if mesh.material not in materials:
            materials.append(mesh.material)
        material_of_member.append(materials.index(mesh.material))
        generated_normals = generated[position]
        if generated_normals is not None:
            kept = parts.kept_corners[index]
            generated_parts.append(generated_normals if kept is None else generated_normals[kept])
    file_corners = np.concatenate(corner_parts).astype(np.intc)  # each corner's vertex in the file
    sizes = np.concatenate(size_parts).astype(np.int64)
    face_counts = [len(part) for part in size_parts]
    del corner_parts, size_parts  # a large file's peak comes later, while Blender sets the custom normals
    loop_starts = (np.cumsum(sizes) - sizes).astype(np.intc)
    welded = None
    if options.merge_vertices:
        welded = _welded_vertices(meshes, document, file_corners, sizes, options, first_rows)
    del sizes
    points = _PointData(welded)
    corner_verts = file_corners if welded is None else welded.vertex_of_file_vertex[file_corners].astype(np.intc)
    blender_mesh = mesh_io.new_mesh(name or "mesh", points.of(_joined([m.positions for m in meshes])),
                                    corner_verts, loop_starts)  # fmt: skip
    del loop_starts
    if welded is not None:  # the file's vertex order, for export
        order = blender_mesh.attributes.new(IQE_FILE_VERTEX, "INT", "CORNER")
        order.data.foreach_set("value", file_corners)
    if len(materials) > 1 or materials != [""]:
        for material in materials:
            blender_mesh.materials.append(_material(material))
    if len(materials) > 1:
        mesh_io.set_face_materials(blender_mesh, np.repeat(np.array(material_of_member, np.intc), face_counts))
    if all(m.texcoords is not None for m in meshes):
        uv_parts = [uv for uv in (parts.texcoords[i] for i in members) if uv is not None]
        uvs = uv_parts[0] if len(uv_parts) == 1 else np.concatenate(uv_parts)
        mesh_io.add_uv_map(blender_mesh, UV_NAME, rows_at(uvs, file_corners))
        del uvs, uv_parts
    unit_parts = [parts.unit_normals[i] for i in members] if parts.unit_normals else []
    unit_normals = None
    if unit_parts and all(part is not None for part in unit_parts):
        unit_normals = unit_parts[0] if len(unit_parts) == 1 else np.concatenate(unit_parts)
    _add_normals(blender_mesh, meshes, file_corners, corner_verts, generated_parts, options, points, unit_normals)
    del unit_normals, unit_parts
    _add_colors(blender_mesh, meshes, options.import_colors, points)
    _add_customs(blender_mesh, meshes, document, file_corners, points, options.import_colors, warnings)
    obj = bpy.data.objects.new(name or "mesh", blender_mesh)  # linked by the caller
    if obj.name != name:
        obj[iqe_rig.ORIGINAL_NAME] = name
    return obj, points


@dataclass
class _Welded:
    """File vertices joined into Blender vertices: the Blender vertex of each file vertex, and a file vertex of
    each Blender vertex (its point data stands for all of them)."""

    vertex_of_file_vertex: np.ndarray
    representative: np.ndarray


class _PointData:
    """Per-vertex data of the file as the Blender mesh holds it: one row per Blender vertex."""

    def __init__(self, welded: _Welded | None) -> None:
        self.welded = welded

    def of(self, per_file_vertex: np.ndarray) -> np.ndarray:
        return per_file_vertex if self.welded is None else rows_at(per_file_vertex, self.welded.representative)


def _welded_vertices(
    meshes: list[iqe.IqeMesh], document: iqe.IqeDocument, file_corners: np.ndarray, sizes: np.ndarray,
    options: IqeImportOptions, first: np.ndarray | None = None,
) -> _Welded | None:  # fmt: skip
    """File vertices with the same position and the same per-vertex data (weights, colour, custom arrays) become
    one Blender vertex: IQE splits a vertex wherever its UV or normal changes, and those are per corner in
    Blender. Without custom normals, the normal is per-vertex data too (merged hard edges would be smoothed). A
    face that would then use one vertex twice, or the vertices of an earlier face (the back of a double-sided
    card), keeps its own vertices. `first`: each file vertex's first equal one, found already."""
    if first is None:
        first = dedup.first_equal_rows(dedup.paired_columns(_weld_table(meshes, document, options)))
    is_first = first == np.arange(first.size)
    vertex_of_file_vertex = (np.cumsum(is_first) - 1)[first]
    representative = np.flatnonzero(is_first)
    if representative.size == first.size:
        return None  # nothing to merge: one Blender vertex per file vertex, in the file's order
    apart = _spoiled_file_vertices(vertex_of_file_vertex, file_corners, sizes)
    if apart.size:
        vertex_of_file_vertex, representative = _kept_apart(vertex_of_file_vertex, apart)
    return _Welded(vertex_of_file_vertex, representative)


def _weld_table(meshes: list[iqe.IqeMesh], document: iqe.IqeDocument, options: IqeImportOptions) -> np.ndarray:
    """(V, k) int32: the bits of what must be equal for the meshes' file vertices to become one Blender vertex."""
    columns = [_joined([m.positions for m in meshes]).astype(np.float32, copy=False).view(np.int32)]
    if any(m.blend_indices is not None for m in meshes):
        indices, weights = _file_blend(meshes)
        columns += [indices.astype(np.int32), weights.astype(np.float32).view(np.int32)]
    if options.import_colors != "NONE" and any(m.colors is not None for m in meshes):
        columns.append(_file_colors(meshes).astype(np.float32).view(np.int32))
    if not options.use_custom_normals and all(m.normals is not None for m in meshes):
        columns.append(_joined([m.normals for m in meshes]).astype(np.float32, copy=False).view(np.int32))
    uv_maps_left = MAX_UV_MAPS - all(m.texcoords is not None for m in meshes)
    for slot in sorted({slot for m in meshes for slot in m.custom}):
        width = next(m.custom[slot].shape[1] for m in meshes if slot in m.custom)
        if width == 2 and document.custom_format(slot).component in IQE_UV_COMPONENTS and uv_maps_left > 0:
            uv_maps_left -= 1  # a further UV map (see _add_customs): per corner, like the first
            continue
        columns.append(np.concatenate([m.custom[slot] if slot in m.custom else np.zeros((m.vertex_count, width))
                                       for m in meshes]).astype(np.float32).view(np.int32))  # fmt: skip
    return columns[0] if len(columns) == 1 else np.concatenate(columns, axis=1)


def _joined(arrays: list[np.ndarray]) -> np.ndarray:
    """The arrays concatenated; one array as it is (a large mesh's rows are not copied to be read)."""
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


def _first_equal_vertices(
    document: iqe.IqeDocument, groups: list[tuple[str, list[int]]], options: IqeImportOptions
) -> list[np.ndarray] | None:
    """Per object group, each file vertex's first equal one (see `_welded_vertices`), found for every group in
    one pass over all the file's vertices when every mesh holds the same arrays (what a file usually does: then
    each group's table is its rows of the whole file's); None otherwise. Each row carries its group's number, so
    that no vertex equals one of another group."""
    meshes = document.meshes
    if len(groups) < 2 or len({_held_arrays(mesh) for mesh in meshes}) != 1:
        return None
    group_of_mesh = np.empty(len(meshes), np.int32)
    for number, (_, members) in enumerate(groups):
        group_of_mesh[members] = number
    vertex_counts = [mesh.vertex_count for mesh in meshes]
    group_column = np.repeat(group_of_mesh, vertex_counts)
    table = np.column_stack([_weld_table(meshes, document, options), group_column])
    first = dedup.first_equal_rows(dedup.paired_columns(table))
    # each vertex's row among its group's (a group's meshes come in file order, so its rows keep their order)
    rank = np.empty(len(first), np.int64)
    result = []
    mesh_starts = np.cumsum([0, *vertex_counts]).tolist()
    for _, members in groups:
        rows = np.concatenate([np.arange(mesh_starts[i], mesh_starts[i + 1]) for i in members]) if len(
            members) > 1 else np.arange(mesh_starts[members[0]], mesh_starts[members[0] + 1])  # fmt: skip
        rank[rows] = np.arange(len(rows))
        result.append(rank[first[rows]])
    return result


def _held_arrays(mesh: iqe.IqeMesh) -> tuple[object, ...]:
    """What decides the columns of a mesh's weld table (see `_weld_table`)."""
    customs = tuple(sorted((slot, values.shape[1]) for slot, values in mesh.custom.items()))
    held = (mesh.blend_indices, mesh.colors, mesh.normals, mesh.texcoords)
    return (*(array is not None for array in held), customs)


def _spoiled_file_vertices(
    vertex_of_file_vertex: np.ndarray, file_corners: np.ndarray, sizes: np.ndarray
) -> np.ndarray:
    """File vertices that must stay apart: those a face would use twice once merged (a face of no area), and all
    of a face whose merged vertices are those of an earlier face (a Blender mesh holds neither; a hash collision
    only keeps a few more vertices apart)."""
    merged = vertex_of_file_vertex[file_corners]
    repeating = dedup.faces_repeating_a_vertex(merged, sizes)
    repeated = np.zeros(0, file_corners.dtype)
    if repeating.any():  # (few faces: the exact search runs on their corners only)
        corners = np.repeat(repeating, sizes)
        face = np.repeat(np.flatnonzero(repeating), sizes[repeating])
        key = face * (int(merged.max()) + 1) + merged[corners]
        _, slot, count = np.unique(key, return_inverse=True, return_counts=True)
        repeated = file_corners[corners][count[slot.ravel()] > 1]
    duplicated = file_corners[np.repeat(dedup.doubled_faces(merged, sizes), sizes)]
    return np.unique(np.concatenate([repeated, duplicated]))


def _kept_apart(vertex_of_file_vertex: np.ndarray, apart: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Those file vertices with Blender vertices of their own; the vertices numbered anew, in order, with a file
    vertex standing for each."""
    numbered = vertex_of_file_vertex.copy()
    numbered[apart] = int(numbered.max()) + 1 + np.arange(apart.size)
    _, first, vertex = np.unique(numbered, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # in order of first file vertex, as before
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank[vertex.ravel()], first[order]


def _file_blend(meshes: list[iqe.IqeMesh]) -> tuple[np.ndarray, np.ndarray]:
    indices = np.concatenate(
        [m.blend_indices if m.blend_indices is not None else np.zeros((m.vertex_count, 4), np.int32) for m in meshes]
    )
    weights = np.concatenate(
        [m.blend_weights if m.blend_weights is not None else np.zeros((m.vertex_count, 4), np.float32) for m in meshes]
    )
    return indices, weights


def _file_colors(meshes: list[iqe.IqeMesh]) -> np.ndarray:
    return np.concatenate(
        [m.colors if m.colors is not None else np.ones((m.vertex_count, 4), np.float32) for m in meshes]
    )


def _material(name: str) -> bpy.types.Material | None:
    if not name:
        return None
    existing = bpy.data.materials.get(name)
    if existing is not None:
        return existing
    material = bpy.data.materials.new(name)
    if material.name != name:  # too long for a Blender name
        material[iqe_rig.ORIGINAL_NAME] = name
    return material


def _add_normals(
    mesh: bpy.types.Mesh,
    meshes: list[iqe.IqeMesh],
    file_corners: np.ndarray,
    corner_verts: np.ndarray,
    generated_parts: list[np.ndarray],
    options: IqeImportOptions,
    points: _PointData,
    unit_normals: np.ndarray | None = None,
) -> None:
    """`unit_normals`: the file normals as unit vectors, made already (per file vertex)."""
    file_normals = _joined([m.normals for m in meshes]) if all(m.normals is not None for m in meshes) else None
    normals = None if file_normals is None else np.asarray(points.of(file_normals), np.float32)
    if normals is not None and points.welded is not None:
        corner_normals = rows_at(np.asarray(file_normals, np.float32), file_corners)
        if not np.array_equal(corner_normals.view(np.uint32), rows_at(normals, corner_verts).view(np.uint32)):
            _add_corner_normals(mesh, corner_normals, corner_verts, options)  # merged vertices with several normals
            return
    if normals is not None:
        stored = mesh.attributes.new(STORED_NORMALS, "FLOAT_VECTOR", "POINT")
        stored.data.foreach_set("vector", np.ascontiguousarray(normals, np.float32).ravel())
        mesh_io.set_smooth(mesh)
        if options.use_custom_normals:  # per vertex already: what set_custom_normals would find, without the search
            unit = mesh_io.unit_vectors(normals.astype(np.float32)) if unit_normals is None else points.of(unit_normals)
            if not mesh_io.blender_normals_match(mesh, vertex_normals=unit):
                mesh.normals_split_custom_set_from_vertices(mesh_io.normals_argument(unit))
        return
    if not generated_parts or len(generated_parts) != len(meshes):
        return
    corner_normals = np.concatenate(generated_parts)
    mesh_io.set_smooth(mesh)
    if options.use_custom_normals:
        mesh_io.set_custom_normals(mesh, corner_verts, corner_normals)


def _add_corner_normals(
    mesh: bpy.types.Mesh, corner_normals: np.ndarray, corner_verts: np.ndarray, options: IqeImportOptions
) -> None:
    stored = mesh.attributes.new(STORED_NORMALS, "FLOAT_VECTOR", "CORNER")
    stored.data.foreach_set("vector", np.ascontiguousarray(corner_normals, np.float32).ravel())
    mesh_io.set_smooth(mesh)
    if options.use_custom_normals:
        mesh_io.set_custom_normals(mesh, corner_verts, mesh_io.unit_vectors(corner_normals))


def _add_colors(mesh: bpy.types.Mesh, meshes: list[iqe.IqeMesh], mode: str, points: _PointData) -> None:
    if mode == "NONE" or not any(m.colors is not None for m in meshes):
        return
    colors = points.of(_file_colors(meshes)).astype(np.float64)
    if mode == "SRGB":
        colors[:, :3] = srgb_to_linear(colors[:, :3])
    attribute = mesh.color_attributes.new(COLOR_NAME, "FLOAT_COLOR", "POINT")
    attribute.data.foreach_set("color", colors.astype(np.float32).ravel())
    mesh.color_attributes.active_color = attribute
    mesh.color_attributes.render_color_index = mesh.color_attributes.active_color_index
    mesh[COLOR_SPACE] = mode


_CUSTOM_TYPES = {
    1: ("FLOAT", "value"),
    2: ("FLOAT2", "vector"),
    3: ("FLOAT_VECTOR", "vector"),
    4: ("QUATERNION", "value"),
}


# Names Blender gives a meaning (built-in mesh attributes), besides the dot-prefixed internal ones.
_RESERVED_ATTRIBUTES = {"position", "material_index", "sharp_face", "sharp_edge", "custom_normal", "normal", "id",
                        "radius", "crease_vert", "crease_edge", "bevel_weight_vert", "bevel_weight_edge"}  # fmt: skip
RESERVED_PREFIX = "iqe_"  # a custom array whose name Blender cannot take becomes an attribute iqe_<name>


MAX_UV_MAPS = 8  # what a Blender mesh holds; further 2-float arrays stay attributes


def _add_customs(
    mesh: bpy.types.Mesh, meshes: list[iqe.IqeMesh], document: iqe.IqeDocument, file_corners: np.ndarray,
    points: _PointData, color_mode: str, warnings: list[str],
) -> None:  # fmt: skip
    """One point attribute per custom array, named as declared, but for 2 floats: a UV map with V flipped back (a
    second UV map or lightmap, as IQE exporters write them), and for 4 normalised bytes: a colour attribute read
    like `vc` (a second colour, as IQE exporters write them). A name Blender reserves or that is already taken (a
    built-in attribute, the UV map, the colour) becomes iqe_<name>. The `iqe_custom` tag keeps the declared name
    and slot, so export writes them back."""
    slots = sorted({slot for m in meshes for slot in m.custom})
    tags: dict[str, str] = {}
    for slot in slots:
        declared = document.custom_format(slot)
        width = next(m.custom[slot].shape[1] for m in meshes if slot in m.custom)
        values = np.concatenate(
            [m.custom[slot] if slot in m.custom else np.zeros((m.vertex_count, width), np.float32) for m in meshes]
        )
        data_type, key = _CUSTOM_TYPES[width]
        wanted = declared.name or f"custom{slot}"
        if wanted.startswith(".") or wanted in _RESERVED_ATTRIBUTES or wanted in mesh.attributes:
            name = RESERVED_PREFIX + wanted
            warnings.append(f"{mesh.name}: custom array {wanted!r} is a name Blender reserves or already uses; "
                            f"imported as attribute {name!r} (exported under its own name)")  # fmt: skip
        else:
            name = wanted
        if width == 2 and declared.component in IQE_UV_COMPONENTS and len(mesh.uv_layers) < MAX_UV_MAPS:
            flipped = np.array(values, np.float32)
            flipped[:, 1] = 1.0 - flipped[:, 1]
            mesh_io.add_uv_map(mesh, name, rows_at(flipped, file_corners))
            tags[mesh.uv_layers[-1].name] = f"{slot} {declared.component} {width} {declared.name}"
            continue
        if width == 4 and declared.component in IQE_COLOR_COMPONENTS and color_mode != "NONE":
            colors = points.of(values).astype(np.float64)
            if color_mode == "SRGB":
                colors[:, :3] = srgb_to_linear(colors[:, :3])
            attribute = mesh.color_attributes.new(name, "FLOAT_COLOR", "POINT")
            attribute.data.foreach_set("color", colors.astype(np.float32).ravel())
            tags[attribute.name] = f"{slot} {declared.component} {width} {declared.name}"
            continue
        attribute = mesh.attributes.new(name, data_type, "POINT")
        if attribute is None:  # still refused by this Blender: skip rather than fail the import
            warnings.append(f"{mesh.name}: custom array {wanted!r} could not be made an attribute; skipped")
            continue
        attribute.data.foreach_set(key, np.ascontiguousarray(points.of(values), np.float32).ravel())
        tags[attribute.name] = f"{slot} {declared.component} {width} {declared.name}"
    if tags:
        mesh[CUSTOM_TAG] = tags


def _build_skeleton(
    context: bpy.types.Context, stem: str, document: iqe.IqeDocument, options: IqeImportOptions, warnings: list[str]
) -> tuple[bpy.types.Object, list[str]]:
    names = [joint.name for joint in document.joints]
    parents = [joint.parent for joint in document.joints]
    base_local = iqe_rig.pose_matrices(document.base_pose_array())
    flat = np.flatnonzero(iqe_rig.singular(base_local)).tolist()
    if flat:
        shown = ", ".join(f"{index} {names[index]!r}" for index in flat[:5])
        warnings.append(
            f"{stem}: base pose of joint {shown}{' ...' if len(flat) > 5 else ''} cannot be inverted (zero scale "
            "or a flat matrix): the bone gets the nearest rotation, and its animation the pseudo-inverse"
        )
    base_world = armature_helpers.world_from_local(parents, base_local)
    _require_finite_poses(base_world, names, "the base pose", [joint.line for joint in document.joints])
    axis = options.bone_axis
    if axis == "AUTO":
        axis = iqe_rig.detected_bone_axis(base_world, parents)
        if axis != "Y":
            label = next(label for name, label, _ in iqe_rig.BONE_AXES if name == axis)
            warnings.append(f"{stem}: the joints point along {label} (Bone Axis: Auto); the bones are turned to it")
    obj, bone_names = iqe_rig.build_armature(context, stem, names, parents, base_world, axis, warnings)
    if not options.import_animations:
        return obj, bone_names
    rest = np.array([np.array(obj.data.bones[name].matrix_local) for name in bone_names], np.float64)
    assigned = False
    for order, animation in enumerate(document.animations):
        action = _build_action(obj, animation, bone_names, parents, base_world, rest, order, not assigned)
        if action is not None and not assigned:  # the armature plays it: so does the scene, at the file's rate
            _play(context, stem, animation, warnings)
        assigned = assigned or action is not None
    return obj, bone_names


def _play(context: bpy.types.Context, stem: str, animation: iqe.IqeAnimation, warnings: list[str]) -> None:
    """The scene shows the animation the armature plays: its frames, at the file's rate where Blender can."""
    rate = animation.framerate if animation.framerate > 0 else None
    if rate is not None and not animation_helpers.playable(rate):
        warnings.append(f"{stem}: animation {animation.name!r} runs at {rate:g} frames per second, beyond what "
                        "Blender's scene can play: the scene keeps its rate (the action keeps the file's)")
    # (a loop's range ends on its first pose again: the scene stops a frame before, not to show it twice)
    animation_helpers.play_in_scene(context.scene, 1, len(animation.frames), rate)


def _existing_rig(
    context: bpy.types.Context, stem: str, document: iqe.IqeDocument, options: IqeImportOptions,
    armatures_made: list[bpy.types.Object], notes: list[str],
) -> tuple[bpy.types.Object, list[str]] | None:  # fmt: skip
    """The armature the file's animations go onto instead of a new one (see ANIMATION_ARMATURE), with each joint's
    bone ("" for one it lacks): of the armatures this import made (the last first), then the active (or only
    selected, or only) armature of the scene, the first holding every joint, else the first holding some; for a file
    with meshes (Active Armature only), only one that is the file's rig (its meshes are then skinned to it). Joints
    an IQM numbers without names are matched by number, to a rig of as many bones."""
    mode = options.animation_armature
    if not (mode != "NEW" and options.import_armature and options.import_animations and document.joints
            and document.animations and (mode == "ACTIVE" or not document.meshes)):  # fmt: skip
        return None
    scene_rig = scene_armature(context)
    candidates = [*reversed(armatures_made), *([scene_rig] if scene_rig is not None else [])]
    matches = [(target, _joint_bones(target, document)) for target in candidates
               if not document.meshes or _is_rig_of(target, document)]  # fmt: skip
    chosen = next((pair for pair in matches if all(pair[1])), None) or next((pair for pair in matches if any(pair[1])),
                                                                            None)  # fmt: skip
    if chosen is None and candidates:
        how = "as many bones as it has joints" if document.joints_numbered else "one of its joints as a bone"
        notes.append(f"{stem}: no armature has {how}: an armature of its own")
    return chosen


def _joint_bones(target: bpy.types.Object, document: iqe.IqeDocument) -> list[str]:
    """Each joint's bone in `target` ("" where it has none): by name, or for numbered joints by number (the bones in
    the order of the file they came from), all or none."""
    if not document.joints_numbered:
        by_name = _bones_by_file_name(target)
        return [by_name.get(joint.name, "") for joint in document.joints]
    bones = armature_helpers.bones_in_file_order(target)
    if len(bones) != len(document.joints):  # (the engines check the count alone)
        return [""] * len(document.joints)
    return [bone.name for bone in bones]


def _bones_by_file_name(target: bpy.types.Object) -> dict[str, str]:
    """The target's bone names by the name a file gives them: its own, and the one an import kept for it."""
    found: dict[str, str] = {}
    for bone in target.data.bones:
        for name in (bone.name, armature_helpers.file_name_of(bone), bone.get(iqe_rig.ORIGINAL_NAME)):
            if isinstance(name, str):
                found.setdefault(name, bone.name)
    return found


def _is_rig_of(target: bpy.types.Object, document: iqe.IqeDocument) -> bool:
    """Whether every joint of the file is a bone of `target` standing where the file's base pose puts it."""
    by_name = _bones_by_file_name(target)
    if any(joint.name not in by_name for joint in document.joints):
        return False
    base_world, _ = iqe_rig.without_scale(armature_helpers.world_from_local(
        [joint.parent for joint in document.joints], iqe_rig.pose_matrices(document.base_pose_array())))  # fmt: skip
    bones = target.data.bones
    rest = np.array([np.array(bones[by_name[joint.name]].matrix_local) for joint in document.joints], np.float64)
    rest = rest.reshape(-1, 4, 4) @ np.linalg.inv(armature_helpers.joint_turn(target))
    extent = max(float(np.ptp(base_world[:, :3, 3], axis=0).max()) if len(base_world) > 1 else 0.0, 1.0)
    return bool(np.allclose(rest[:, :3, :3], base_world[:, :3, :3], atol=1e-4)
                and np.allclose(rest[:, :3, 3], base_world[:, :3, 3], atol=1e-4 * extent))  # fmt: skip


def _animations_onto(
    context: bpy.types.Context, stem: str, document: iqe.IqeDocument, target: bpy.types.Object,
    joint_bones: list[str], summary: Summary, warnings: list[str],
) -> list[str]:  # fmt: skip
    """The file's animations as actions of an existing armature, each joint onto its bone in `joint_bones` ("" for
    one the armature lacks); a bone the file lacks follows its parent at rest. Returns `joint_bones`."""
    unmatched = [joint.name for joint, bone in zip(document.joints, joint_bones, strict=True) if not bone]
    if unmatched:
        warnings.append(f"{stem}: {len(unmatched)} joint(s) are not bones of armature {target.name!r}, their "
                        f"animation left out: {_listed(unmatched)}")  # fmt: skip
    matched = set(joint_bones)
    skeleton = armature_helpers.read_skeleton(target)  # (topological order; rest with the bone-axis turn undone)
    lacking = [name for name in skeleton.names if name not in matched]
    if lacking:
        warnings.append(f"{stem}: {len(lacking)} bone(s) of armature {target.name!r} are not in the file and stay at "
                        f"rest: {_listed(lacking)}")  # fmt: skip
    turn = armature_helpers.joint_turn(target)
    bones = target.data.bones
    rest = np.array([np.array(bones[name].matrix_local) for name in skeleton.names], np.float64).reshape(-1, 4, 4)
    scaling = np.tile(np.identity(4), (len(skeleton.names), 1, 1))  # (the base pose's scale an IQE import kept)
    scaling[:, [0, 1, 2], [0, 1, 2]] = [list(bones[name].get(iqe_rig.BASE_SCALE, (1.0, 1.0, 1.0)))
                                        for name in skeleton.names]  # fmt: skip
    row_of_joint = {bone: row for row, bone in enumerate(skeleton.names)}
    file_parents = [joint.parent for joint in document.joints]
    joint_of_bone = {name: joint for joint, name in enumerate(joint_bones) if name}
    if document.joints_numbered:  # (the engines compose numbered poses under the model's own joints)
        own = [joint_of_bone.get(bones[name].parent.name, -1) if bones[name].parent else -1 for name in joint_bones]
        if own != file_parents:
            summary.notes.append(f"{stem}: {sum(a != b for a, b in zip(own, file_parents, strict=True))} joint(s) "
                                 f"hang from other joints than in armature {target.name!r}: played under the "
                                 "armature's, as the engines play them")  # fmt: skip
        file_parents = own
    keyed = [row_of_joint[name] for name in joint_bones if name]
    keyed_names = [skeleton.names[row] for row in keyed]
    # (keys in the rig's own rotation mode: Euler XYZ keys of an SMD import's rig go on playing)
    rotation_mode = "XYZ" if target.pose.bones[keyed_names[0]].rotation_mode == "XYZ" else "QUATERNION"
    played = False
    for order, animation in enumerate(document.animations):
        count = animation.frames.shape[0]
        summary.actions += 1
        if not count:
            _keyed_action(target, animation, keyed_names, None, order, False)
            continue
        frames = np.concatenate((animation.frames, animation.frames[:1])) if animation.loop else animation.frames
        joint_world = armature_helpers.world_from_local(file_parents, iqe_rig.pose_matrices(frames))
        _require_finite_poses(joint_world, [joint.name for joint in document.joints], f"animation {animation.name!r}")
        pose = np.empty((len(frames), len(skeleton.names), 4, 4))
        for row, name in enumerate(skeleton.names):  # (per bone, not per frame: parents come first)
            parent = skeleton.parents[row]
            if name in joint_of_bone:
                pose[:, row] = joint_world[:, joint_of_bone[name]] @ np.linalg.inv(scaling[row]) @ turn
            elif parent < 0:
                pose[:, row] = rest[row]
            else:
                pose[:, row] = pose[:, parent] @ (np.linalg.inv(rest[parent]) @ rest[row])
        channels = iqe_rig.pose_basis(pose, rest, rest, skeleton.parents)
        _keyed_action(target, animation, keyed_names, channels[:, keyed], order, not played, rotation_mode)
        if not played:
            _play(context, stem, animation, warnings)
        played = True
    return joint_bones


def _listed(names: list[str]) -> str:
    return ", ".join(repr(name) for name in names[:5]) + (" ..." if len(names) > 5 else "")


def _require_finite_poses(world: np.ndarray, names: list[str], what: str, lines: list[int] | None = None) -> None:
    """Refuse joints whose matrices overflow once composed with their parents' (finite numbers in the file, such
    as a scale of 1e38, whose products Blender's float32 matrices cannot hold): no bone could be made of them."""
    finite = (np.abs(world) <= np.finfo(np.float32).max).reshape(*world.shape[:-2], -1).all(axis=-1)  # (NaN: no)
    if not finite.all():
        *frame, joint = np.unravel_index(int(np.argmin(finite.ravel())), finite.shape)
        at = f" at frame {int(frame[0])}" if frame else ""
        line = lines[int(joint)] if lines and lines[int(joint)] else None  # (the joint's line, for the base pose)
        raise FormatError(f"{what}{at}: joint {int(joint)} {names[int(joint)]!r} is placed beyond what a float "
                          "holds (its translation or scale, composed with its parents')", line=line)  # fmt: skip


def _build_action(
    obj: bpy.types.Object,
    animation: iqe.IqeAnimation,
    bone_names: list[str],
    parents: list[int],
    base_world: np.ndarray,
    rest: np.ndarray,
    order: int,
    assign: bool,
) -> bpy.types.Action | None:
    """The animation as an action keyed on every frame from 1 (linear keys; none for an animation without frames);
    with `assign`, one with frames becomes the armature's action. Returns the action when it was assigned.

    A looping animation of N frames becomes a Cyclic action of range 1..N+1 whose last key is the first pose again:
    Blender's cycle ends where it starts (an NLA repeat or a Cycles modifier then plays N frames per cycle), and the
    exporter writes such a range back as N frames."""
    frames = animation.frames
    count = frames.shape[0]
    if not count:
        return _keyed_action(obj, animation, bone_names, None, order, assign)
    if animation.loop:
        frames = np.concatenate((frames, frames[:1]))
    world = armature_helpers.world_from_local(parents, iqe_rig.pose_matrices(frames))
    _require_finite_poses(world, bone_names, f"animation {animation.name or 'animation'!r}")
    channels = iqe_rig.pose_basis(world, base_world, rest, parents)
    return _keyed_action(obj, animation, bone_names, channels, order, assign)


def _keyed_action(
    obj: bpy.types.Object, animation: iqe.IqeAnimation, bone_names: list[str], channels: np.ndarray | None,
    order: int, assign: bool, rotation_mode: str = "QUATERNION",
) -> bpy.types.Action | None:  # fmt: skip
    """The action of (F, B, 10) pose-basis `channels` (the loop's wrap frame included) keyed on every frame from 1,
    with the file's name, rate, order and loop; an empty action for an animation without frames. Rotations are
    keyed as quaternions, or Euler XYZ angles for `rotation_mode` "XYZ"."""
    count = animation.frames.shape[0]
    name = animation.name or "animation"
    looped = bool(animation.loop) and count > 0
    if channels is not None and count:
        rotations = animation_helpers.continuous_quaternions(channels[..., 3:7])[..., [3, 0, 1, 2]]  # w first
        if rotation_mode == "XYZ":
            rotations = animation_helpers.continuous_eulers(
                armature_helpers.matrix_to_euler_xyz(armature_helpers.quaternion_to_matrix(rotations)))
        action = animation_helpers.create_bone_action(
            obj, name, bone_names, 1.0 + np.arange(len(channels), dtype=np.float64), channels[..., 0:3], rotations,
            rotation_mode=rotation_mode, scales=channels[..., 7:10], thin=False, assign=assign,
        )  # fmt: skip
    else:
        action = bpy.data.actions.new(name)
        action.use_fake_user = True
    if action.name != animation.name:
        action[iqe_rig.ORIGINAL_NAME] = animation.name
    action[iqe_rig.FRAMERATE] = float(animation.framerate)
    action[iqe_rig.ORDER] = order
    action.use_frame_range = True
    action.frame_start = 1.0
    action.frame_end = float(max(count, 1) + looped)
    action.use_cyclic = bool(animation.loop)  # (the loop flag: what the exporter writes back)
    return action if count and assign else None


def _skin(
    obj: bpy.types.Object, armature: bpy.types.Object, bone_names: list[str], meshes: list[iqe.IqeMesh],
    points: _PointData,
) -> None:  # fmt: skip
    indices, weights = _file_blend(meshes)
    iqe_rig.add_vertex_groups(obj, bone_names, points.of(indices), points.of(weights))
    armature_helpers.skin_to_armature(obj, armature)


_THREADS_FROM_BYTES = 4 << 20  # smaller files are read without threads: their few pieces (1 MB of text each) would
# share out unevenly, for the memory each thread keeps


def _load_iqe(path: str) -> iqe.IqeDocument:
    """An IQE file, its numbers read on every core when it is large."""
    try:
        large = os.path.getsize(path) >= _THREADS_FROM_BYTES
    except OSError:
        large = False  # (load_iqe reports the file)
    return iqe.load_iqe(path, map_pieces=ordered_map if large else sequential)


def import_iqe_files(
    context: bpy.types.Context,
    paths: list[str],
    options: IqeImportOptions,
    load: Callable[[str], iqe.IqeDocument] | None = None,
    finish: Callable[[iqe.IqeDocument, list[bpy.types.Object], list[bpy.types.Action], Summary], None] | None = None,
) -> Summary:
    """Import files that `load` reads into the IQE document model (IQE, and IQM through its own reader); IQE by
    default, its numbers read on every core. `finish`, given each document with the objects and actions built
    from it, adds what only its format holds (IQM: FTE's extensions)."""
    if load is None:
        load = _load_iqe
    armatures_made: list[bpy.types.Object] = []

    def build(path: str, document: object, summary: Summary) -> None:
        assert isinstance(document, iqe.IqeDocument)
        actions_before = {action.as_pointer() for action in bpy.data.actions} if finish is not None else set()
        with textures.texturing_new_materials(path, options.find_textures, summary):
            objects = build_document(context, path, document, options, summary, armatures_made)
        if finish is not None:
            new_actions = [action for action in bpy.data.actions if action.as_pointer() not in actions_before]
            finish(document, objects, new_actions, summary)

    # large files' temporaries, freed, taken again by the build without a page fault each; small files gain nothing
    # from it, and handing the kept memory back afterwards costs a few ms
    keeping = freed_memory_kept() if _total_bytes(paths) >= _KEEP_FREED_FROM_BYTES else contextlib.nullcontext()
    with keeping:
        return import_all(context, paths, load, build)


_KEEP_FREED_FROM_BYTES = 4 << 20  # files that hold less are read and built with glibc's usual trimming


def _total_bytes(paths: list[str]) -> int:
    """The files' sizes summed (a missing file counts 0: its import reports it)."""
    total = 0
    for path in paths:
        with contextlib.suppress(OSError):
            total += os.path.getsize(path)
    return total


# ------------------------------------------------------------------------------------------------- operator


class IqeImportProperties:
    """The options of the IQE importer, shared with the IQM importer (both build from one document model)."""

    merge_by_name: BoolProperty(
        name="Merge Meshes by Name",
        default=True,
        description="One object per mesh name with a material slot per material; off: one object per mesh block",
    )
    use_custom_normals: BoolProperty(
        name="Custom Normals",
        default=True,
        description="Use the file's normals (or those its smoothing commands generate) as custom split normals",
    )
    import_colors: EnumProperty(
        name="Vertex Colors", items=IMPORT_COLORS, default="SRGB",
        description="How to read the file's vertex colours (vc and colour custom arrays) into colour attributes: "
        "as sRGB (most exporters), as linear values, or not at all",
    )  # fmt: skip
    import_armature: BoolProperty(name="Armature", default=True, description="Build the skeleton and vertex groups")
    import_animations: BoolProperty(name="Animations", default=True, description="One action per animation")
    animation_armature: EnumProperty(
        name="Animate", items=ANIMATION_ARMATURE, default="AUTO",
        description="Which armature a file's animations become actions of",
    )  # fmt: skip
    bone_axis: EnumProperty(
        name="Bone Axis",
        items=(("AUTO", "Auto", "The axis along which most joints point at their children in the file's base pose "
                "(+Y when none stands out)"), *iqe_rig.BONE_AXES),
        default="Y",
        description="The axis the file's joints point along; Blender bones are turned to it",
    )  # fmt: skip
    global_scale: FloatProperty(**IMPORT_SCALE)
    find_textures: BoolProperty(**textures.FIND_TEXTURES)
    merge_vertices: BoolProperty(
        name="Merge Vertices",
        default=True,
        description="Join the file's vertices that share a position and weights (IQE splits them at UV seams and "
        "hard edges) into one vertex, UVs and normals kept per corner; export splits them again in the file's "
        "order. Off: one Blender vertex per file vertex",
    )

    def import_options(self) -> IqeImportOptions:
        return IqeImportOptions(
            merge_by_name=self.merge_by_name,
            use_custom_normals=self.use_custom_normals,
            import_colors=self.import_colors,
            import_armature=self.import_armature,
            import_animations=self.import_animations,
            bone_axis=self.bone_axis,
            matrix=import_matrix(self),
            find_textures=self.find_textures,
            merge_vertices=self.merge_vertices,
            animation_armature=self.animation_armature,
        )


@axis_options("import")
class IMPORT_SCENE_OT_iqe(bpy.types.Operator, ImportFilesMixin, ImportHelper, IqeImportProperties):
    """Import Inter-Quake Export models: meshes, materials, skeleton, weights and animations"""

    bl_idname = "import_scene.iqe"
    bl_label = "Import IQE"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".iqe"
    filter_glob: StringProperty(default="*.iqe", options={"HIDDEN"})

    def execute(self, context: bpy.types.Context) -> set[str]:
        options = self.import_options()
        return guarded(self, lambda: import_iqe_files(context, self.selected_paths(), options), "Imported")

    def draw(self, context: bpy.types.Context) -> None:
        draw_iqe_import_options(self.layout, self)


def draw_iqe_import_options(layout: bpy.types.UILayout, operator: object) -> None:
    prepare_layout(layout)
    draw_panel(
        layout, operator, "IOGF_iqe_import_geometry", "Geometry",
        ("merge_by_name", "merge_vertices", "use_custom_normals", "import_colors", "find_textures"),
    )  # fmt: skip
    draw_panel(
        layout, operator, "IOGF_iqe_import_armature", "Armature",
        ("import_armature", "import_animations", "animation_armature", "bone_axis"),
    )  # fmt: skip
    draw_panel(
        layout, operator, "IOGF_iqe_import_transform", "Transform", ("global_scale", "forward_axis", "up_axis")
    )  # fmt: skip


IOGF_FH_iqe = file_handler("IOGF_FH_iqe", "Inter-Quake Export", "import_scene.iqe", "export_scene.iqe", ".iqe")


def menu_import(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    self.layout.operator(IMPORT_SCENE_OT_iqe.bl_idname, text="Inter-Quake Export (.iqe)")


classes = (IMPORT_SCENE_OT_iqe, IOGF_FH_iqe)
