"""Blender to Valve SMD / VTA: reference meshes (skinned or static), animations per action, VTA from shape keys.

Files written (`<stem>` is the chosen file name without extension):

* Reference: the chosen file. Meshes skinned to one armature get its bones; static meshes get a `root` bone.
* Animation: with "Active Action", the armature's active action goes to the chosen file; with "All Actions",
  every action (and, on Blender 4.4+, every object slot) keying the armature's bones goes to `<stem>_<action>.smd`
  (`<stem>_<action>_<slot>.smd` when one action animates the armature through several slots).
* VTA: `<stem>.vta` (a chosen file ending in .vta always means VTA), from the meshes' shape keys.
* All: the reference as the chosen file, `<stem>.vta` when a mesh has shape keys, and every action as above.

Every document is built in memory first; each file is then replaced atomically, so a failed export leaves
existing files as they were. The user's scene is never changed: modifiers and shape-key display are switched
temporarily for evaluation and restored.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, StringProperty

from ..common import mesh_io
from ..common.animation import (
    ActionSource,
    actions_for,
    bake_wanted,
    fcurves_of,
    frame_range,
    object_motion,
    object_motion_warning,
    pose_matrices,
    sample_bone_action,
    sample_evaluated_pose,
)
from ..common.armature import (
    Skeleton,
    armature_of,
    bone_children_at_rest,
    file_name_of,
    joint_turn,
    local_from_world,
    matrix_to_euler_xyz,
    read_skeleton,
    rigid,
    topological_order,
    vertex_weight_reader,
)
from ..common.conventions import (
    SMD_COLLISION_MODEL,
    SMD_COLLISION_SUFFIX,
    UP_AXES,
    collector_paused,
    up_axis_matrix,
)
from ..common.conventions import SMD_STORED_NORMALS as STORED_NORMALS
from ..common.operators import (
    ExportScopeMixin,
    PresetSafeExportHelper,
    Summary,
    draw_panel,
    geometry_objects,
    guarded,
    has_faces,
    in_file_browser,
    prepare_layout,
    refuse_if_nothing_left,
)
from ..common.progress import progress
from ..common.studiomdl import StudiomdlCompileMixin, compile_if_wanted
from ..formats import smd
from ..formats.atomic import Content, write_files_atomically
from ..formats.dedup import first_equal_rows, first_occurrences
from ..formats.errors import FormatError
from ..formats.names import quotable_name
from ..formats.rows import rows_at
from ..formats.smd.limits import flex_warnings, goldsrc_parts, limit_warnings, material_warnings, triangle_range
from ..formats.smd.qc_writer import QcModel, qc_text
from . import smd_qc, smd_textures

NO_MATERIAL = "no_material"
IMPLICIT_BONE = "blender_implicit"
EXPORT_MODES = (
    ("REFERENCE", "Reference", "The meshes and the armature's rest pose, as the chosen file"),
    ("ANIMATION", "Animation", "The armature's animation (see Actions)"),
    ("VTA", "VTA", "The meshes' shape keys as a vertex animation, <name>.vta"),
    ("ALL", "All", "The reference as the chosen file, <name>.vta when there are shape keys, every exported action "
     "as <name>_<action>.smd, and a QC's collision model as <name>_<its file>.smd"),
)  # fmt: skip
ACTION_SCOPES = (
    ("ACTIVE", "Active Action", "The armature's active action (and slot)"),
    ("ALL", "All Actions", "Every action keying the armature's bones, one file each"),
)
FLAVOURS = (
    ("SOURCE", "Source", "Source engine: weight links on every vertex line"),
    ("GOLDSRC", "GoldSrc", "GoldSrc (Half-Life 1): 9-field vertex lines, rigid on the heaviest bone"),
)


@dataclass
class ExportSettings:
    mode: str = "REFERENCE"
    action_scope: str = "ACTIVE"
    flavour: str = "SOURCE"
    limit_weights: bool = False
    up_axis: str = "Z"
    global_scale: float = 1.0
    apply_modifiers: bool = True
    apply_transform: bool = True
    deform_only: bool = False
    motionless_bone: bool = True
    bake_pose: bool = True
    object_motion: bool = True
    split_over_limits: bool = False  # GoldSrc: a mesh over studiomdl's limits written as several SMDs within them
    convert_textures: bool = False  # GoldSrc: the materials' images written as 8-bit BMPs within its rules
    qc: smd_qc.QcOptions | None = None  # Write QC: each mesh its own SMD, and the QC that builds them

    def matrix(self, obj: bpy.types.Object) -> np.ndarray:
        """Blender object space to file space: scale, inverse up axis, world transform."""
        world = np.array(obj.matrix_world) if self.apply_transform else np.identity(4)
        return np.diag([self.global_scale] * 3 + [1.0]) @ up_axis_matrix(self.up_axis).T @ world


# ------------------------------------------------------------------------------------------------ bones


@dataclass
class BoneTable:
    """The SMD nodes: the armature's bones in topological order (node id = row), or one static root."""

    skeleton: Skeleton  # the exported bones
    armature: bpy.types.Object | None
    matrix: np.ndarray  # armature space to file space
    implicit: int | None = None  # node id of the motionless bone, when unweighted vertices need one
    full: Skeleton | None = None  # every bone of the armature, when some are left out
    rows: np.ndarray | None = None  # the exported bones' rows in `full`
    others: tuple[bpy.types.Object, ...] = ()  # further armatures written as one skeleton with it, at rest
    own_bones: int | None = None  # with others: how many of the (full) skeleton's first bones are the armature's

    def armatures(self) -> list[bpy.types.Object]:
        return [self.armature, *self.others] if self.armature is not None else []

    def blender_bone(self, name: str) -> bpy.types.Bone | None:
        for armature in self.armatures():
            if (bone := armature.data.bones.get(name)) is not None:
                return bone
        return None

    def bone_row(self, name: str) -> int | None:
        """The node of bone `name`: its own, or that of its nearest exported ancestor when it is left out."""
        row_of = {bone: row for row, bone in enumerate(self.skeleton.names)}
        if self.full is None or name in row_of or name not in self.full.names:
            return row_of.get(name)
        parent = self.full.parents[self.full.names.index(name)]
        while parent >= 0 and self.full.names[parent] not in row_of:
            parent = self.full.parents[parent]
        return row_of[self.full.names[parent]] if parent >= 0 else None

    def file_names(self) -> list[str]:
        """The bones' names for the file (a name Blender had to shorten: the file's own), before they are quoted."""
        names = self.skeleton.names
        return [file_name_of(bone) if (bone := self.blender_bone(name)) is not None else name for name in names]

    def written_names(self) -> list[str]:
        """file_names as SMD can quote them (quotable_name, the IQE export's rule too), kept distinct: a cleaned name
        another bone already has takes a `_` suffix, as studiomdl matches bones by name."""
        written: list[str] = []
        taken = set(self.file_names())
        for name in self.file_names():
            cleaned = quotable_name(name)[0]
            if cleaned != name:
                while cleaned in taken:
                    cleaned += "_"
                taken.add(cleaned)
            written.append(cleaned)
        return written

    def nodes(self) -> list[smd.SmdNode]:
        nodes = [smd.SmdNode(row, name, parent) for row, (name, parent) in
                 enumerate(zip(self.written_names(), self.skeleton.parents, strict=True))]  # fmt: skip
        if self.implicit is not None:
            taken = set(self.skeleton.names)
            name = IMPLICIT_BONE
            while name in taken:
                name += "_"
            nodes.append(smd.SmdNode(self.implicit, name, -1))
        return nodes

    def frame(self, time: int, armature_space: np.ndarray, comment: str = "") -> smd.SkeletonFrame:
        """A skeleton frame from (B, 4, 4) armature-space bone frames (bone-axis correction already undone)."""
        world, _ = rigid(self.matrix @ armature_space)
        local = local_from_world(self.skeleton.parents, world)
        count = len(self.skeleton) + (self.implicit is not None)
        positions = np.zeros((count, 3))
        rotations = np.zeros((count, 3))
        positions[: len(self.skeleton)] = local[:, :3, 3]
        rotations[: len(self.skeleton)] = matrix_to_euler_xyz(local[:, :3, :3])
        return smd.SkeletonFrame(time, np.arange(count, dtype=np.int32), positions, rotations, comment)

    def file_frame(self, name: str) -> np.ndarray | None:
        """A written bone's rest frame in file space (as the reference's skeleton places it)."""
        row = self.bone_row(name)
        if row is None or self.armature is None or self.skeleton.names[row] != name:
            return None
        frame, _ = rigid((self.matrix @ self.skeleton.rest[row])[None])
        return np.asarray(frame[0])

    def rest_frame(self) -> smd.SkeletonFrame:
        return self.frame(0, self.skeleton.rest)


def bone_table(
    armature: bpy.types.Object | None, settings: ExportSettings, warnings: list[str],
    others: tuple[bpy.types.Object, ...] = (),
) -> BoneTable:
    if armature is None:
        return BoneTable(Skeleton(["root"], [-1], np.identity(4)[None]), None, np.identity(4))
    skeleton = read_skeleton(armature)
    matrix = settings.matrix(armature)
    for obj in (armature, *others):
        if rigid(settings.matrix(obj)[None])[1]:
            warnings.append(f"{obj.name}: non-uniform scale cannot be stored in SMD bones; it was dropped")
    own_bones = None
    if others:
        own_bones = len(skeleton)
        skeleton = merged_skeleton(armature, skeleton, others, settings)
    if not len(skeleton):
        return BoneTable(Skeleton(["root"], [-1], np.identity(4)[None]), None, np.identity(4))
    table = BoneTable(skeleton, armature, matrix, others=others, own_bones=own_bones)
    if settings.deform_only:
        deforming = [getattr(table.blender_bone(name), "use_deform", False) for name in skeleton.names]
        if not any(deforming):
            raise FormatError(f"{armature.name}: no bone deforms (Deform Bones Only is on)")
        if not all(deforming):
            rows = np.flatnonzero(deforming)
            table.skeleton, table.full, table.rows = subset_skeleton(skeleton, rows), skeleton, rows
    return with_bone_limit(table, warnings)


def merged_skeleton(
    armature: bpy.types.Object, skeleton: Skeleton, others: tuple[bpy.types.Object, ...], settings: ExportSettings
) -> Skeleton:
    """One skeleton for several armatures (an SMD holds one), in the first one's space: its bones, then each
    other's by name; a bone of a name already there is that bone when it stands where it does under a parent of
    the same name (static props' `root` bones), otherwise the armatures cannot share one skeleton."""
    names, parents, rest = list(skeleton.names), list(skeleton.parents), list(skeleton.rest)
    row_of = {name: row for row, name in enumerate(names)}
    owner = dict.fromkeys(names, armature.name)
    into_first = np.linalg.inv(settings.matrix(armature))
    for other in others:
        bones = read_skeleton(other)
        placed, _ = rigid(into_first @ settings.matrix(other) @ bones.rest)
        merged_of: dict[int, int] = {}
        for row, name in enumerate(bones.names):
            parent = merged_of[bones.parents[row]] if bones.parents[row] >= 0 else -1
            if name in row_of:
                if not np.allclose(rest[row_of[name]], placed[row], atol=1e-4) or parents[row_of[name]] != parent:
                    raise FormatError(f"armatures {owner[name]!r} and {other.name!r} both have a bone {name!r}, "
                                      "standing differently: an SMD holds one skeleton (rename one of the bones, or "
                                      "export the armatures one at a time)")  # fmt: skip
                merged_of[row] = row_of[name]
                continue
            merged_of[row] = row_of[name] = len(names)
            names.append(name)
            parents.append(parent)
            rest.append(placed[row])
            owner[name] = other.name
    return Skeleton(names, parents, np.array(rest))


def with_bone_limit(table: BoneTable, warnings: list[str]) -> BoneTable:
    for name, written in zip(table.file_names(), table.written_names(), strict=True):
        if written != name:
            warnings.append(f"bone {name!r} written as {written!r}: SMD names cannot hold double quotes or line "
                            "breaks")  # fmt: skip
    return table


STUDIOMDL_MAX_BONES = 128  # (GoldSrc's and Source's MAXSTUDIOBONES)


def _bone_limit(table: BoneTable, parts: list[MeshCorners]) -> list[str]:
    """studiomdl keeps the bones the meshes are weighted to, and their parents (a source may hold more, as real
    ones do: the rest are dropped): a warning when those are over its limit."""
    if table.armature is None or len(table.skeleton) <= STUDIOMDL_MAX_BONES:
        return []
    used = np.zeros(len(table.skeleton), bool)
    for part in parts:
        used[part.bones[(part.bones >= 0) & (part.bones < len(used))]] = True
    for row in reversed(topological_order(table.skeleton.parents)):  # (children first: parents of used are used)
        parent = table.skeleton.parents[row]
        if used[row] and parent >= 0:
            used[parent] = True
    count = int(used.sum())
    if count <= STUDIOMDL_MAX_BONES:
        return []
    return [f"{table.armature.name}: the meshes are weighted to {count} bones (with their parents); studiomdl keeps "
            f"at most {STUDIOMDL_MAX_BONES} per model"]


def subset_skeleton(skeleton: Skeleton, rows: np.ndarray) -> Skeleton:
    """The bones at `rows` (in order), each parented to its nearest ancestor among them."""
    new_row = {int(row): new for new, row in enumerate(rows.tolist())}

    def kept_ancestor(row: int) -> int:
        parent = skeleton.parents[row]
        while parent >= 0 and parent not in new_row:
            parent = skeleton.parents[parent]
        return new_row[parent] if parent >= 0 else -1

    return Skeleton([skeleton.names[row] for row in rows.tolist()], [kept_ancestor(row) for row in rows.tolist()],
                    skeleton.rest[rows])  # fmt: skip


# ------------------------------------------------------------------------------------------------ meshes


@contextmanager
def evaluated_for_export(
    context: bpy.types.Context,
    obj: bpy.types.Object,
    *,
    apply_modifiers: bool,
    shape_index: int | None,
    weight_groups: list[str],
) -> Iterator[tuple[bpy.types.Mesh, object | None]]:
    """The object's mesh without Armature deformation (and without any modifier unless asked), showing only
    shape `shape_index` (0 = the basis), with weights readable when `weight_groups` is given. Everything
    switched here is restored afterwards."""
    saved_modifiers = [(modifier, modifier.show_viewport) for modifier in obj.modifiers]
    keys = getattr(obj.data, "shape_keys", None)
    saved_shape = (obj.show_only_shape_key, obj.active_shape_key_index)
    reader = None
    evaluated = None
    try:
        for modifier in obj.modifiers:
            if modifier.type == "ARMATURE" or not apply_modifiers:
                modifier.show_viewport = False
        if keys is not None and shape_index is not None:
            obj.show_only_shape_key = True
            obj.active_shape_key_index = shape_index
        if weight_groups:
            reader = vertex_weight_reader(obj, weight_groups)
        depsgraph = context.evaluated_depsgraph_get()
        evaluated = obj.evaluated_get(depsgraph)
        mesh = evaluated.to_mesh(preserve_all_data_layers=True, depsgraph=depsgraph)
        yield mesh, reader
    finally:
        if evaluated is not None:
            evaluated.to_mesh_clear()
        if reader is not None:
            reader.remove()
        for modifier, shown in saved_modifiers:
            if modifier.show_viewport != shown:
                modifier.show_viewport = shown
        if keys is not None and shape_index is not None:
            obj.show_only_shape_key, obj.active_shape_key_index = saved_shape


@dataclass
class MeshCorners:
    """One object's triangles in file space, per corner, with CSR weight links (node ids)."""

    positions: np.ndarray
    normals: np.ndarray
    uvs: np.ndarray
    material_names: list[str]
    material_indices: np.ndarray  # per triangle, into material_names
    counts: np.ndarray
    bones: np.ndarray
    weights: np.ndarray
    lines: np.ndarray | None  # per corner: corners of one vertex, normal and UV write one line (see smd.Triangles)


def corner_geometry(mesh: bpy.types.Mesh, matrix: np.ndarray) -> mesh_io.Triangles:
    from mathutils import Matrix

    return mesh_io.mesh_triangles(mesh, Matrix(matrix.tolist()), stored_normals=STORED_NORMALS)


def vertex_links(
    weights: np.ndarray, group_bones: np.ndarray, settings: ExportSettings
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(V, G) weights to per-vertex CSR links (node ids), normalised, optionally balanced as studiomdl does."""
    vertices, groups = np.nonzero(weights > 0)
    counts = np.bincount(vertices, minlength=weights.shape[0]).astype(np.int64)
    bones = group_bones[groups]
    values = weights[vertices, groups].astype(np.float64)
    if settings.limit_weights:
        return smd.balance_links(counts, bones, values)
    return counts, bones, smd.normalize_links(counts, values)


def mesh_corners(
    context: bpy.types.Context, obj: bpy.types.Object, table: BoneTable, settings: ExportSettings, warnings: list[str]
) -> MeshCorners:
    bone_row = {name: row for row, name in enumerate(table.skeleton.names)}
    skinned = table.armature is not None and armature_of(obj) in table.armatures()
    groups = [group.name for group in obj.vertex_groups if group.name in bone_row] if skinned else []
    if skinned and table.full is not None:
        left_out = [g.name for g in obj.vertex_groups if g.name not in bone_row and g.name in table.full.names]
        if left_out:
            warnings.append(f"{obj.name}: {len(left_out)} vertex group(s) of bones that do not deform were left "
                            "out")  # fmt: skip
    parent_bone = None
    if obj.parent in table.armatures() and obj.parent_type == "BONE":
        parent_bone = table.bone_row(obj.parent_bone)
        if parent_bone is not None and table.skeleton.names[parent_bone] != obj.parent_bone:
            warnings.append(f"{obj.name}: its parent bone {obj.parent_bone!r} does not deform; bound to "
                            f"{table.skeleton.names[parent_bone]!r}")  # fmt: skip
    shape_index = 0 if obj.type == "MESH" and obj.data.shape_keys is not None else None
    with evaluated_for_export(
        context, obj, apply_modifiers=settings.apply_modifiers, shape_index=shape_index, weight_groups=groups
    ) as (mesh, reader):
        geometry = corner_geometry(mesh, settings.matrix(obj))
        corner_vertices = geometry.corner_vertices  # in the same (possibly mirror-rewound) order as the corners
        assert corner_vertices is not None
        vertex_count = len(mesh.vertices)
        dense = reader.read(mesh) if reader is not None else np.zeros((vertex_count, 0), np.float32)
    if parent_bone is not None:
        dense = np.zeros((vertex_count, 1), np.float32) + 1.0
        group_bones = np.array([parent_bone], np.int64)
    else:
        group_bones = np.array([bone_row[name] for name in groups], np.int64)
    counts_v, bones_v, weights_v = vertex_links(dense, group_bones, settings)
    offsets = np.concatenate([[0], np.cumsum(counts_v)])
    counts = counts_v.astype(np.int32)[corner_vertices]  # (as the document holds them)
    if not bones_v.size:  # (no weights: no links to gather, and no pass over the corners for them)
        rows = np.zeros(0, np.int64)
    else:
        rows = np.repeat(offsets[corner_vertices], counts) + (
            np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        )
    names = [name or NO_MATERIAL for name in geometry.material_names] or [NO_MATERIAL]
    unnamed = [i for i, name in enumerate(geometry.material_names) if not name]
    indices = np.clip(geometry.material_indices, 0, len(names) - 1)
    without = int(np.isin(indices, unnamed).sum()) if unnamed else (0 if geometry.material_names else len(indices))
    if without:
        warnings.append(f"{obj.name}: {without} face(s) without a material were written as {NO_MATERIAL!r}")
    uvs = geometry.uvs
    if uvs is None:
        if len(geometry.positions):  # (one without faces is left out with its own warning)
            warnings.append(f"{obj.name}: no UV map; texture coordinates written as 0")
        uvs = np.zeros((len(geometry.positions), 2), np.float32)
    for what, values in (("vertex positions", geometry.positions), ("normals", geometry.normals), ("UVs", uvs)):
        require_writable(obj, what, values)
    return MeshCorners(  # (float32 as read: the writer widens a block at a time, exactly)
        positions=geometry.positions,
        normals=geometry.normals,
        uvs=uvs,
        material_names=names,
        material_indices=indices,
        counts=counts,
        bones=bones_v[rows],
        weights=weights_v[rows],
        lines=corner_lines(corner_vertices, geometry.normals, uvs),
    )


def require_writable(obj: bpy.types.Object, what: str, values: np.ndarray) -> None:
    """Refuse numbers the SMD text cannot hold naming their object, before anything is written."""
    bad = smd.first_unwritable(values)
    if bad is not None:
        raise FormatError(f"object {obj.name!r} has {what} that SMD cannot write ({bad!r}: not finite, or 1e12 "
                          "or more); fix them before exporting")  # fmt: skip


_CORNERS_AT_A_TIME = 1 << 16  # corners compared with their vertex's first at a time (the block stays in cache)


def corner_lines(corner_vertices: np.ndarray, normals: np.ndarray, uvs: np.ndarray) -> np.ndarray | None:
    """Number the distinct (vertex, normal, UV) corners in order of first appearance: the weights, and so the
    parent column, belong to the vertex, so such corners are written as one line. None when most corners differ
    from their vertex's first."""
    count = len(corner_vertices)
    normal_bits = np.ascontiguousarray(normals, np.float32).view(np.uint32)
    uv_bits = np.ascontiguousarray(uvs, np.float32).view(np.uint32)
    # Most corners match the first corner of their vertex (no seam, smooth shading there): only the others are
    # grouped by hashing. A block of corners at a time: no per-corner temporaries but the answer.
    first_of_vertex = np.full(int(corner_vertices.max(initial=-1)) + 1, count, np.int64)
    differs = []
    for start in range(0, count, _CORNERS_AT_A_TIME):
        block = slice(start, start + _CORNERS_AT_A_TIME)
        np.minimum.at(first_of_vertex, corner_vertices[block], np.arange(start, min(count, start + _CORNERS_AT_A_TIME)))
    for start in range(0, count, _CORNERS_AT_A_TIME):
        block = slice(start, start + _CORNERS_AT_A_TIME)
        first = first_of_vertex[corner_vertices[block]]
        unlike = np.zeros(first.size, np.bool_)
        for bits in (normal_bits, uv_bits):  # (a column at a time: gathering single numbers costs half what rows do)
            for axis in range(bits.shape[1]):
                column = bits[:, axis]
                unlike |= column[block] != column[first]
        differs.append(np.flatnonzero(unlike) + start)
    differing = np.concatenate(differs) if differs else np.zeros(0, np.int64)
    if differing.size > 0.75 * count:
        return None  # flat shading: hardly a line repeats, the writer would not use the numbers
    if not differing.size:  # (every corner is its vertex's line: the lines are the vertices in order of first use)
        firsts = np.zeros(count, np.bool_)
        firsts[first_of_vertex[first_of_vertex < count]] = True
        line_starts = np.flatnonzero(firsts)
        vertex_line = np.empty(first_of_vertex.size, np.int64)
        vertex_line[corner_vertices[line_starts]] = np.arange(line_starts.size)
        return vertex_line[corner_vertices]
    first = first_of_vertex[corner_vertices]
    key = np.empty((differing.size, 3), np.uint64)
    normal_bits, uv_bits = normal_bits[differing].astype(np.uint64), uv_bits[differing].astype(np.uint64)
    key[:, 0] = (corner_vertices[differing].astype(np.uint64) << np.uint64(32)) | uv_bits[:, 0]
    key[:, 1] = (uv_bits[:, 1] << np.uint64(32)) | normal_bits[:, 0]
    key[:, 2] = (normal_bits[:, 1] << np.uint64(32)) | normal_bits[:, 2]
    first[differing] = differing[first_equal_rows(key.view(np.int64))]
    is_first = first == np.arange(count)
    return (np.cumsum(is_first) - 1)[first]


def _name_warnings(materials: list[str], bones: list[str], flavour: str, warnings: list[str]) -> None:
    """What studiomdl would trip over in names: characters outside ASCII (as Blender Source Tools warns), and in
    GoldSrc a material line that is not a .bmp texture file ("unknown graphics type")."""
    foreign = [name for name in (*bones, *materials) if not name.isascii()]
    if foreign:
        warnings.append(f"{len(foreign)} name(s) outside ASCII, which studiomdl and the engines may not read: "
                        f"{', '.join(map(repr, foreign[:5]))}{' ...' if len(foreign) > 5 else ''}")  # fmt: skip
    not_bitmaps = [name for name in materials if not name.lower().endswith(".bmp")]
    if flavour == "goldsrc" and not_bitmaps:
        warnings.append(f"GoldSrc's studiomdl reads each material as a .bmp texture file; {len(not_bitmaps)} "
                        f"material(s) are not: {', '.join(map(repr, not_bitmaps[:5]))}"
                        f"{' ...' if len(not_bitmaps) > 5 else ''} (name materials after their textures)")  # fmt: skip


def joined(arrays: list[np.ndarray], empty_shape: tuple[int, ...], dtype: type = np.float64) -> np.ndarray:
    """The arrays one after another (one array as it is, no copy)."""
    if not arrays:
        return np.zeros(empty_shape, dtype)
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


def numbered_after(numberings: list[np.ndarray | None]) -> np.ndarray | None:
    """Numberings from 0 each, joined so that each continues after the one before; None if one is unknown."""
    if not numberings or any(numbers is None for numbers in numberings):
        return None
    shifted, offset = [], 0
    for numbers in numberings:
        assert numbers is not None
        shifted.append(numbers + offset)
        offset += int(numbers.max(initial=-1)) + 1
    return np.concatenate(shifted)


def reference_document(
    parts: list[MeshCorners], table: BoneTable, settings: ExportSettings, warnings: list[str], label: str = "reference",
    limits: bool = True,
) -> smd.SmdDocument:
    positions = joined([p.positions for p in parts], (0, 3))
    counts = joined([p.counts for p in parts], (0,), np.int32)
    bones = joined([p.bones for p in parts], (0,), np.int64)
    weights = joined([p.weights for p in parts], (0,))
    lines = numbered_after([p.lines for p in parts])
    unweighted = counts == 0
    fallback = 0  # (the bone of a corner without weights)
    if table.armature is not None and unweighted.any() and settings.motionless_bone:
        table.implicit = len(table.skeleton)
        fallback = table.implicit
        warnings.append(f"{int(unweighted.sum())} corner(s) without weights were bound to the motionless bone "
                        f"{IMPLICIT_BONE!r}")  # fmt: skip
    elif table.armature is not None and unweighted.any():
        warnings.append(f"{int(unweighted.sum())} corner(s) without weights were bound to the root bone "
                        f"{table.skeleton.names[0]!r}")  # fmt: skip
    firsts = None
    if lines is not None:  # one answer per distinct line
        firsts = first_occurrences(lines)
        links = smd.select_links(counts, firsts)
        line_parents = smd.dominant_bones(counts[firsts], bones[links], weights[links],
                                          np.full(firsts.size, fallback, np.int64))  # fmt: skip
        parent_column = np.take(line_parents.astype(np.int32), lines)
    else:
        parent_column = smd.dominant_bones(counts, bones, weights, np.full(len(counts), fallback, np.int64))
    material_names: dict[str, int] = {}
    used_indices = []
    for p in parts:  # materials in order of first use, as the file lists them
        used, first = np.unique(p.material_indices, return_index=True)
        for index in used[np.argsort(first)].tolist():
            material_names.setdefault(p.material_names[index], len(material_names))
        remap = np.array([material_names.get(name, -1) for name in p.material_names], np.int32)
        used_indices.append(remap[p.material_indices])
    material_indices = np.concatenate(used_indices) if used_indices else np.zeros(0, np.int32)
    triangle_count = len(positions) // 3
    triangles = smd.Triangles(
        material_names=list(material_names),
        material_indices=material_indices,
        parent_bones=parent_column.reshape(-1, 3).astype(np.int32, copy=False),
        positions=positions.reshape(-1, 3, 3),
        normals=joined([p.normals for p in parts], (0, 3)).reshape(-1, 3, 3),
        uvs=joined([p.uvs for p in parts], (0, 2)).reshape(-1, 3, 2),
        link_counts=counts.reshape(triangle_count, 3).astype(np.int32, copy=False),
        link_bones=bones.astype(np.int32),
        link_weights=weights,
        corner_lines=lines,
    )
    if firsts is not None and smd.writes_lines_once(firsts.size, len(lines)):
        # (the lines' values once each: the writer neither checks nor gathers them per corner; not where most
        # corners are lines of their own, which the writer writes corner by corner)
        triangles.hold_per_line({name: rows_at(getattr(triangles, name).reshape(-1, width), firsts)
                                 for name, width in (("positions", 3), ("normals", 3), ("uvs", 2))})  # fmt: skip
    flavour = "goldsrc" if settings.flavour == "GOLDSRC" else "source"
    _name_warnings(list(material_names), [node.name for node in table.nodes()], flavour, warnings)
    if flavour == "goldsrc" and bool((counts > 1).any()):
        warnings.append(f"GoldSrc skins rigidly: {int((counts > 1).sum())} corner(s) with several weights were "
                        "bound to their heaviest bone")  # fmt: skip
    document = smd.SmdDocument(flavour=flavour, nodes=table.nodes(), skeleton=[table.rest_frame()],
                               triangles=triangles)  # fmt: skip
    if limits:
        warnings += limit_warnings(document, flavour, label)
    return document


def within_limits(
    document: smd.SmdDocument, path: str, settings: ExportSettings, summary: Summary, label: str, split: bool = True
) -> list[tuple[str, smd.SmdDocument]]:
    """The reference document as the files to write: itself, or with Split Over Limits (GoldSrc) its parts within
    studiomdl's limits, in triangle order, as `<name>_part<N>.smd` (a $body each in the QC). The limits it is
    still over are warnings."""
    flavour = document.flavour
    ranges = [(0, 0)]
    if settings.split_over_limits and flavour == "goldsrc" and document.triangles is not None:
        ranges = goldsrc_parts(document.triangles)
    if len(ranges) > 1 and not split:
        summary.warnings.append(f"{label}: an alternative of a $bodygroup is one SMD; not split over the limits")
    if len(ranges) == 1 or not split:
        summary.warnings += limit_warnings(document, flavour, label)
        return [(path, document)]
    assert document.triangles is not None
    stem = os.path.splitext(path)[0]
    pieces = [(f"{stem}_part{number}.smd", replace(document, triangles=triangle_range(document.triangles, *bounds)))
              for number, bounds in enumerate(ranges, 1)]  # fmt: skip
    for name, piece in pieces:
        summary.warnings += limit_warnings(piece, flavour, os.path.basename(name))
    summary.notes.append(f"{label}: over GoldSrc's limits per SMD, split into {len(pieces)} parts "
                         f"({os.path.basename(pieces[0][0])} to {os.path.basename(pieces[-1][0])})")  # fmt: skip
    return pieces


# ------------------------------------------------------------------------------------------------ VTA


def shape_corners(
    context: bpy.types.Context, obj: bpy.types.Object, index: int, settings: ExportSettings
) -> tuple[np.ndarray, np.ndarray]:
    with evaluated_for_export(
        context, obj, apply_modifiers=settings.apply_modifiers, shape_index=index, weight_groups=[]
    ) as (mesh, _):
        geometry = corner_geometry(mesh, settings.matrix(obj))
    shape = obj.data.shape_keys.key_blocks[index].name
    require_writable(obj, f"shape key {shape!r} positions", geometry.positions)
    require_writable(obj, f"shape key {shape!r} normals", geometry.normals)
    return geometry.positions.astype(np.float64), geometry.normals.astype(np.float64)


def _shape_values_animated(obj: bpy.types.Object) -> bool:
    keys = obj.data.shape_keys if obj.type == "MESH" else None
    data = keys.animation_data if keys is not None else None
    return data is not None and (data.action is not None or bool(data.drivers) or bool(data.nla_tracks))


def vta_document(
    context: bpy.types.Context, objects: list[bpy.types.Object], parts: list[MeshCorners], settings: ExportSettings
) -> smd.SmdDocument | None:
    """Shapes by name across all meshes (a shape missing on a mesh leaves it at its base), corner ids in the
    reference's triangle order."""
    names: list[str] = []
    for obj in objects:
        keys = obj.data.shape_keys if obj.type == "MESH" else None
        if keys is not None:
            names.extend(block.name for block in keys.key_blocks[1:] if block.name not in names)
    if not names:
        return None
    # (float64, as the shapes' own values and the change threshold: corners keep Blender's float32 for the writer)
    base_positions = np.concatenate([p.positions for p in parts]).astype(np.float64)
    base_normals = np.concatenate([p.normals for p in parts]).astype(np.float64)
    starts = np.cumsum([0] + [len(p.positions) for p in parts])
    shapes = []
    for name in names:
        positions, normals = base_positions.copy(), base_normals.copy()
        for row, obj in enumerate(objects):
            keys = obj.data.shape_keys if obj.type == "MESH" else None
            if keys is None or name not in keys.key_blocks:
                continue
            shape_positions, shape_normals = shape_corners(context, obj, keys.key_blocks.find(name), settings)
            if len(shape_positions) != starts[row + 1] - starts[row]:
                raise FormatError(f"{obj.name}: shape key {name!r} changes the topology after modifiers")
            positions[starts[row] : starts[row + 1]] = shape_positions
            normals[starts[row] : starts[row + 1]] = shape_normals
        shapes.append((name, positions, normals))
    return smd.build_vta(base_positions, base_normals, shapes)


# ------------------------------------------------------------------------------------------------ animation


def animation_document(
    context: bpy.types.Context, table: BoneTable, source: ActionSource, settings: ExportSettings, warnings: list[str]
) -> smd.SmdDocument:
    armature = table.armature
    assert armature is not None
    every = table.full or table.skeleton  # every bone: a left-out bone still moves its children
    own = table.own_bones or len(every)
    skeleton = Skeleton(every.names[:own], every.parents[:own], every.rest[:own])  # (the animated armature's)
    turn = joint_turn(armature)
    blender_rest = skeleton.rest @ turn
    if (moving := object_motion_warning(source, source.label, settings.object_motion)) is not None:
        warnings.append(moving)
    frames = written_frames(source)
    if bake_wanted(context, armature, source.label, settings.bake_pose, warnings):
        pose = sample_evaluated_pose(context, armature, source, skeleton.names, frames)
    else:
        modes = [armature.pose.bones[name].rotation_mode for name in skeleton.names]
        samples = sample_bone_action(source, skeleton.names, modes, frames)
        pose = pose_matrices(skeleton.parents, blender_rest, samples.basis)
    motion = object_motion(source, armature, frames) if settings.object_motion else None
    if motion is not None:  # the object's keyed motion carried by the root bones
        pose = motion[:, None] @ pose
    pose = with_resting_bones(pose, every.parents, every.rest @ turn)
    # (rest matrices are rigid: any scale in a pose matrix is keyed scale, the bone's own or inherited)
    scaled = np.abs(np.linalg.norm(pose[..., :3, :3], axis=-2) - 1.0).max(initial=0.0) > 1e-4
    if scaled:
        warnings.append(f"{source.label}: bone scale cannot be stored in SMD and was dropped")
    unturned = pose @ np.linalg.inv(turn)
    if table.rows is not None:
        unturned = unturned[:, table.rows]
    skeleton_frames = [table.frame(frame, unturned[row]) for row, frame in enumerate(frames)]
    document = smd.SmdDocument(nodes=table.nodes(), skeleton=skeleton_frames)
    flavour = "goldsrc" if settings.flavour == "GOLDSRC" else "source"
    warnings += limit_warnings(document, flavour, source.label)
    return document


def written_frames(source: ActionSource) -> list[int]:
    """The action's frames as time blocks. A Cyclic action's range ends on its wrap, the first pose again: Valve's
    loops write it as their last frame (studiomdl makes a loop's last frame its first), so it is written when the
    action keys it (a loop that closed on its first pose, a cycle keyed in Blender, an IQE/IQM loop); a range that
    runs on past the last key (an imported SMD loop that did not close) wraps by Blender's cycle alone, and like the
    IQE/IQM export the SMD export leaves that frame out, writing the file's frames back as they were."""
    first, last = frame_range(source)
    action = source.action
    if action.use_cyclic and action.use_frame_range and last > first:
        ends = [curve.range()[1] for curve in fcurves_of(source) if len(curve.keyframe_points)]
        if ends and max(ends) < last - 1e-3:
            last -= 1
    return list(range(first, last + 1))


def with_resting_bones(pose: np.ndarray, parents: list[int], rest: np.ndarray) -> np.ndarray:
    """(F, B, 4, 4) poses from those of the first bones: the others (further armatures written as one skeleton)
    at rest, relative to their parents."""
    own = pose.shape[1]
    if own == len(parents):
        return pose
    out = np.empty((len(pose), len(parents), 4, 4))
    out[:, :own] = pose
    for row in range(own, len(parents)):
        parent = parents[row]
        out[:, row] = rest[row] if parent < 0 else out[:, parent] @ (np.linalg.inv(rest[parent]) @ rest[row])
    return out


# ------------------------------------------------------------------------------------------------ driver


def action_file_name(stem: str, label: str) -> str:
    """`<stem>_<action>.smd` beside the reference; an action already named so (one imported from such a file) is
    not prefixed again, so that an import and export writes the files' own names back."""
    part, base = smd_qc.safe_file_part(label), os.path.basename(stem)
    return os.path.join(os.path.dirname(stem), (part if part.startswith(base + "_") else f"{base}_{part}") + ".smd")


@dataclass
class Plan:
    """Files to write, built completely before any is written."""

    files: list[tuple[str, Content]] = field(default_factory=list)


def choose_armatures(
    objects: list[bpy.types.Object], meshes: list[bpy.types.Object], mode: str, scope: str
) -> tuple[bpy.types.Object | None, tuple[bpy.types.Object, ...]]:
    """The armature whose bones (and animation) the SMD holds, and further ones written into its skeleton at rest;
    several with animations of their own are refused, as an SMD holds one skeleton's."""
    armatures: list[bpy.types.Object] = []
    for candidate in [armature_of(obj) for obj in meshes] + [obj for obj in objects if obj.type == "ARMATURE"]:
        if candidate is not None and candidate not in armatures:
            armatures.append(candidate)
    if not armatures:
        return None, ()
    animated = {a.name: a for a in armatures if mode in ("ANIMATION", "ALL") and actions_for(a, scope)}
    sets = {tuple(sorted(source.label for source in actions_for(a, scope))) for a in animated.values()}
    if len(sets) > 1:  # (the same actions found for each: bones of one name, on releases without slots)
        raise FormatError(f"several armatures with animations of their own ({', '.join(map(repr, sorted(animated)))}):"
                          " an SMD holds one skeleton; export them one at a time")  # fmt: skip
    first = next((a for a in animated.values() if a.animation_data and a.animation_data.action), None)
    first = first or next(iter(animated.values()), armatures[0])
    return first, tuple(a for a in armatures if a != first)


def _meshes_of_the_armature(
    context: bpy.types.Context, objects: list[bpy.types.Object], warnings: list[str]
) -> list[bpy.types.Object]:
    """With only an armature chosen (as Blender Source Tools users select the rig), the visible meshes it deforms
    or carries are the reference."""
    armatures = [obj for obj in objects if obj.type == "ARMATURE"]
    if len(armatures) != 1:
        return []
    found = [obj for obj in geometry_objects(context.view_layer.objects)
             if armature_of(obj) == armatures[0] and obj.visible_get()]  # fmt: skip
    if found:
        warnings.append(f"no mesh chosen: the {len(found)} visible mesh(es) of armature {armatures[0].name!r} are "
                        "exported with it")  # fmt: skip
    return found


def _without_collision_models(
    meshes: list[bpy.types.Object], mode: str, notes: list[str]
) -> tuple[list[bpy.types.Object], list[bpy.types.Object]]:
    """The model's meshes, and a QC's $collisionmodel hulls apart: each is its own physics SMD, which the All mode
    writes beside the reference (merged into the reference it would be drawn). With only hulls, they are the model."""
    hulls = [obj for obj in meshes if obj.get(SMD_COLLISION_MODEL)]
    if not hulls or len(hulls) == len(meshes):
        return meshes, []
    if mode != "ALL":  # (a note: every Source prop has one, and its reference is what was asked for)
        notes.append(f"{', '.join(obj.name for obj in hulls)}: a QC's collision model, left out of the reference "
                     "(the All mode writes it beside it, as its physics SMD)")  # fmt: skip
    return [obj for obj in meshes if not obj.get(SMD_COLLISION_MODEL)], hulls


def _qc_meshes(
    context: bpy.types.Context, qc: QcModel, path: str, meshes: list[bpy.types.Object], parts: list[MeshCorners],
    table: BoneTable, settings: ExportSettings, summary: Summary, with_shapes: bool,
) -> list[tuple[str, Content]]:
    """Each mesh as its own reference SMD (and VTA, `with_shapes`), named after it, and their QC lines; a mesh
    split over GoldSrc's limits as several SMDs, a $body each."""
    flavour = "goldsrc" if settings.flavour == "GOLDSRC" else "source"
    folder = os.path.dirname(path)
    warnings = summary.warnings
    files: list[tuple[str, Content]] = []
    vtas: dict[int, tuple[str, list[str]]] = {}
    bodies: list[tuple[bpy.types.Object, str]] = []  # (the mesh, its SMD) per $body or bodygroup member
    for obj, part, name in zip(meshes, parts, smd_qc.mesh_file_names(meshes, folder), strict=True):
        document = reference_document([part], table, settings, warnings, os.path.basename(name), limits=False)
        grouped = smd_qc.bodygroup_collection(obj) is not None  # (an alternative of a bodygroup is one SMD)
        pieces = within_limits(document, name, settings, summary, os.path.basename(name), split=not grouped)
        files += [(piece_name, smd.smd_pieces(piece, flavour)) for piece_name, piece in pieces]
        bodies += [(obj, piece_name) for piece_name, _ in pieces]
        row = len(bodies) - 1
        if not with_shapes or len(pieces) > 1:  # (a split mesh's shapes would need a VTA per part: none)
            continue
        with bone_children_at_rest(context, [obj]):
            vta = vta_document(context, [obj], [part], settings)
        if vta is not None:
            vta_path = os.path.splitext(name)[0] + ".vta"
            files.append((vta_path, smd.write_vta(vta)))
            warnings += flex_warnings(vta, os.path.basename(vta_path)) if flavour == "source" else []
            vtas[row] = (vta_path, [block.name for block in obj.data.shape_keys.key_blocks[1:]])
    if vtas and flavour == "goldsrc":
        warnings.append("GoldSrc has no vertex animation: the .vta files are written for Source's studiomdl")
    smd_qc.add_meshes(qc, [obj for obj, _ in bodies], [name for _, name in bodies], vtas, folder)
    return files


def _physics_files(
    context: bpy.types.Context, stem: str, hulls: list[bpy.types.Object], table: BoneTable, settings: ExportSettings,
    summary: Summary, flavour: str,
) -> list[tuple[str, Content]]:
    """Each collision hull as `<stem>_<its file's name>.smd` (an import of `model_phys.smd` keeps that name)."""
    files: list[tuple[str, Content]] = []
    for obj in hulls:
        with bone_children_at_rest(context, [obj]):
            part = mesh_corners(context, obj, table, settings, summary.warnings)
        if not has_faces(obj.name, len(part.positions), summary.warnings):
            continue
        document = reference_document([part], table, settings, summary.warnings)
        label = mesh_io.original_name(obj).removesuffix(SMD_COLLISION_SUFFIX)
        files.append((action_file_name(stem, label), smd.smd_pieces(document, flavour)))
        summary.objects += 1
        summary.faces += len(part.positions) // 3
    return files


def _used_materials(parts: list[MeshCorners]) -> list[str]:
    return [part.material_names[index] for part in parts for index in np.unique(part.material_indices).tolist()]


def _unheld_data(meshes: list[bpy.types.Object], mode: str) -> list[str]:
    """Warnings for what SMD files cannot hold (one UV map, no colours), and for shape keys the mode leaves out."""
    notes = [mesh_io.unheld_data_note(obj, "SMD", one_uv_map=True, colors=False, shapes_applied=None) for obj in meshes]
    if mode == "REFERENCE":
        keyed = [obj.name for obj in meshes if mesh_io.has_shape_keys(obj)]
        if keyed:
            notes.append(f"{', '.join(keyed)}: shape keys are written to a .vta, which the Reference mode leaves out "
                         "(the VTA and All modes write it)")  # fmt: skip
    return [note for note in notes if note is not None]


def export_smd(context: bpy.types.Context, path: str, operator: ExportScopeMixin, settings: ExportSettings) -> Summary:
    summary = Summary(face_kind="triangles")
    objects = operator.objects_to_export(context)
    mode = "VTA" if path.lower().endswith(".vta") else settings.mode
    meshes, hulls = _without_collision_models(geometry_objects(objects), mode, summary.notes)
    if not meshes and mode in ("REFERENCE", "VTA", "ALL"):
        meshes = _meshes_of_the_armature(context, objects, summary.warnings)
    armature, others = choose_armatures(objects, meshes, mode, settings.action_scope)
    if mode == "REFERENCE" and not meshes and armature is not None and actions_for(armature, "ACTIVE"):
        mode = "ANIMATION"  # an armature alone with its action: the animation SMD it is (an import of one)
    if mode == "ALL" and not meshes and armature is not None and actions_for(armature, settings.action_scope):
        mode = "ANIMATION"  # (all there is: an animation-only QC's actions)
    stem = os.path.splitext(path)[0]
    table = bone_table(armature, settings, summary.warnings, others)
    plan = Plan()
    flavour = "goldsrc" if settings.flavour == "GOLDSRC" else "source"
    parts: list[MeshCorners] = []
    skeleton_only = mode == "REFERENCE" and not meshes and armature is not None
    if skeleton_only:  # (a reference of bones alone, as shared skeletons are: its import gives a lone armature)
        summary.notes.append(f"{armature.name}: no mesh; its skeleton is written with an empty triangles block")
    elif mode in ("REFERENCE", "VTA", "ALL"):
        if not meshes:
            hint = "; an animation alone is written with the Animation mode" if armature is not None else ""
            raise FormatError(f"no mesh objects to export ({operator.scope_hint()}{hint})")
        with bone_children_at_rest(context, meshes), progress(context, len(meshes)) as tracker:
            chosen = [(obj, mesh_corners(context, obj, table, settings, summary.warnings))
                      for obj in tracker.each(meshes)]  # fmt: skip
        kept = [(obj, part) for obj, part in chosen if has_faces(obj.name, len(part.positions), summary.warnings)]
        refuse_if_nothing_left(len(kept), len(meshes))
        summary.warnings += _unheld_data([obj for obj, _ in kept], mode) if mode != "VTA" else []
        meshes, parts = [obj for obj, _ in kept], [part for _, part in kept]
        summary.warnings += _bone_limit(table, parts)
        summary.warnings += material_warnings(_used_materials(parts), flavour)
        summary.objects = len(meshes)
        summary.faces = sum(len(p.positions) // 3 for p in parts)
    masked_textures: list[str] = []
    if settings.convert_textures and flavour == "goldsrc" and parts:
        names, textures, masked_textures = smd_textures.convert_textures(
            meshes, [part.material_names for part in parts], os.path.dirname(path), summary)  # fmt: skip
        for part, renamed in zip(parts, names, strict=True):
            part.material_names = renamed
        plan.files += textures
    elif flavour == "goldsrc" and parts:
        summary.warnings += smd_textures.rule_warnings(meshes, [part.material_names for part in parts])
    qc = smd_qc.new_model(path, settings.qc, settings.flavour, settings.up_axis, summary.warnings) if settings.qc \
        else None  # fmt: skip
    written_sequences: tuple[list[ActionSource], list[str]] = ([], [])  # (for the QC)
    if qc is not None and mode in ("REFERENCE", "ALL"):
        plan.files += _qc_meshes(context, qc, path, meshes, parts, table, settings, summary, mode == "ALL")
    elif mode in ("REFERENCE", "ALL"):
        document = reference_document(parts, table, settings, summary.warnings, limits=False)
        pieces = within_limits(document, path, settings, summary, os.path.basename(path))
        plan.files += [(name, smd.smd_pieces(piece, flavour)) for name, piece in pieces]
    if mode == "ALL":
        physics = _physics_files(context, stem, hulls, table, settings, summary, flavour)
        plan.files += physics
        if qc is not None and physics:
            qc.collision = os.path.basename(physics[0][0])
            if len(physics) > 1:
                summary.warnings.append(f"a QC holds one collision model: {len(physics) - 1} more written beside it "
                                        "are not named in it")  # fmt: skip
    if mode in ("VTA", "ALL") and not (qc is not None and mode == "ALL"):
        with bone_children_at_rest(context, meshes):
            vta = vta_document(context, meshes, parts, settings)
        if vta is None and mode == "VTA":
            raise FormatError("no shape keys to export as VTA")
        if vta is not None:
            plan.files.append((stem + ".vta", smd.write_vta(vta)))
            summary.warnings += flex_warnings(vta, os.path.basename(stem) + ".vta") if flavour == "source" else []
            animated = [obj.name for obj in meshes if _shape_values_animated(obj)]
            if animated:
                summary.warnings.append(f"{', '.join(animated)}: shape key values are animated, which a .vta does "
                                        "not hold (it holds the shapes; a QC's flex controllers drive them)")
            if flavour == "goldsrc":
                summary.warnings.append("GoldSrc has no vertex animation: the .vta is written for Source's studiomdl")
    if mode in ("ANIMATION", "ALL"):
        if table.armature is None:
            if mode == "ANIMATION":
                raise FormatError("no armature to export animation from")
        else:
            sources = actions_for(table.armature, settings.action_scope)
            if not sources and mode == "ANIMATION":
                raise FormatError(f"armature {table.armature.name!r} has no action to export")
            with progress(context, len(sources)) as tracker:
                documents = [(source, animation_document(context, table, source, settings, summary.warnings))
                             for source in tracker.each(sources)]  # fmt: skip
            targets = []
            for source, document in documents:
                if mode == "ANIMATION" and settings.action_scope == "ACTIVE" and qc is None:
                    target = path
                else:
                    target = action_file_name(stem, source.label)
                targets.append(target)
                plan.files.append((target, smd.smd_pieces(document, flavour)))
                summary.actions += 1
            written_sequences = ([source for source, _ in documents], targets)
    if qc is not None:
        qc.masked_textures = masked_textures
        smd_qc.add_attachments(qc, objects, table.armatures(), settings.matrix, table.file_frame, summary.warnings,
                               flavour == "goldsrc")  # fmt: skip
        beside = None if settings.convert_textures else os.path.dirname(os.path.abspath(path))  # (converted: there)
        smd_qc.use_imported_names(qc, settings.qc or smd_qc.QcOptions(), table.armatures(), beside, summary.warnings)
        smd_qc.add_sequences(qc, *written_sequences, context.scene, os.path.dirname(path))
        plan.files.append((stem + ".qc", qc_text(qc, flavour).encode("utf-8")))
    try:
        write_files_atomically(plan.files)
    except ValueError as error:  # two actions whose names clean up to the same file name
        raise FormatError(f"{error}; rename one of the actions") from None
    summary.files = len(plan.files)
    summary.written = [os.path.abspath(name) for name, _ in plan.files]  # (Write QC: not the chosen file)
    return summary


# ------------------------------------------------------------------------------------------------ operator


class EXPORT_SCENE_OT_valve_smd(bpy.types.Operator, PresetSafeExportHelper, ExportScopeMixin, StudiomdlCompileMixin):
    """Export Valve SMD reference meshes and animations, and VTA vertex animations (Source and GoldSrc)"""

    bl_idname = "export_scene.valve_smd"
    bl_label = "Export SMD/VTA"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".smd"
    filter_glob: StringProperty(default="*.smd;*.vta", options={"HIDDEN"})

    export_mode: EnumProperty(
        name="Export", items=EXPORT_MODES, default="REFERENCE",
        description="What to write: the reference mesh, animations, the shape keys as VTA, or all of them",
    )  # fmt: skip
    action_scope: EnumProperty(
        name="Actions", items=ACTION_SCOPES, default="ACTIVE",
        description="Which actions of the armature become animation SMDs",
    )  # fmt: skip
    flavour: EnumProperty(
        name="Target Engine", items=FLAVOURS, default="SOURCE",
        description="The engine whose studiomdl compiles the files: Source, or GoldSrc (Half-Life 1)",
    )  # fmt: skip
    limit_weights: BoolProperty(
        name="Limit Weights",
        default=False,
        description="Drop weight links below 0.05 and keep the heaviest 3, as studiomdl will (weights are always "
        "normalised)",
    )
    up_axis: EnumProperty(name="Up Axis", items=UP_AXES, default="Z", description="The file's up axis ($upaxis)")
    deform_only: BoolProperty(
        name="Deform Bones Only",
        default=False,
        description="Leave out bones that do not deform (controls, IK targets): their children hang from the "
        "nearest deforming ancestor, in the reference and in every animation alike",
    )
    motionless_bone: BoolProperty(
        name="Motionless Bone",
        default=True,
        description=f"Bind vertices without weights to an added bone '{IMPLICIT_BONE}' that never moves, so they "
        "stay put as in Blender; off: bind them to the root bone",
    )
    bake_pose: BoolProperty(
        name="Bake Constraints and Drivers",
        default=True,
        description="When bone constraints or drivers shape the pose, play each action frame by frame and write "
        "the pose Blender shows (slower); off: the action's keys alone",
    )
    object_motion: BoolProperty(
        name="Object Motion",
        default=True,
        description="Write the motion an action keys on the armature object itself (root motion) into the root "
        "bones; off: the bones' motion alone, as the armature stands at the current frame",
    )
    split_over_limits: BoolProperty(
        name="Split Over Limits",
        default=False,
        description="GoldSrc: write a mesh over studiomdl's limits per SMD (20,000 triangles, 2,048 vertices or "
        "normals) as several SMDs within them, <name>_part1.smd, <name>_part2.smd..., a $body each in the QC",
    )
    convert_textures: BoolProperty(
        name="Convert Textures for GoldSrc",
        default=False,
        description="GoldSrc: write each material's image that is not an 8-bit BMP of sides multiples of 8 up to "
        "512, named in at most 63 characters, as one beside the SMD (256 colours; a masked texture {name.bmp, its "
        "transparent pixels the last colour), the SMD's material naming it",
    )
    write_qc: BoolProperty(
        name="Write QC",
        default=False,
        description="Also write <name>.qc, the QC that builds the model: each mesh its own SMD named after it "
        "($body; meshes of a nested collection a $bodygroup), every action written a $sequence with its rate and "
        "loop, empties on bones $attachments, a collision hull $collisionmodel",
    )
    qc_model_name: StringProperty(
        name="Model Name", default="",
        description="The QC's $modelname, as the game loads it (Source: under models/, e.g. props/crate.mdl); empty: "
        "<name>.mdl",
    )  # fmt: skip
    qc_materials: StringProperty(
        name="Materials Folder", default="",
        description="Source's $cdmaterials: the folders under the game's materials/ holding the model's VMTs (several "
        "separated by ;); empty: models/<name>/",
    )  # fmt: skip
    qc_surface_prop: StringProperty(
        name="Surface Property", default="",
        description="Source's $surfaceprop (metal, wood, flesh...: how the model sounds and breaks); empty: none "
        "written (studiomdl's default)",
    )  # fmt: skip

    def settings(self) -> ExportSettings:
        return ExportSettings(
            mode=self.export_mode,
            action_scope=self.action_scope,
            flavour=self.flavour,
            limit_weights=self.limit_weights,
            up_axis=self.up_axis,
            global_scale=self.global_scale,
            apply_modifiers=self.apply_modifiers,
            apply_transform=self.apply_transform,
            deform_only=self.deform_only,
            motionless_bone=self.motionless_bone,
            bake_pose=self.bake_pose,
            object_motion=self.object_motion,
            split_over_limits=self.split_over_limits,
            convert_textures=self.convert_textures,
            qc=smd_qc.QcOptions(self.qc_model_name, self.qc_materials, self.qc_surface_prop) if self.write_qc else None,
        )

    def check(self, context: bpy.types.Context) -> bool:
        wanted = ".vta" if self.export_mode == "VTA" else ".smd"
        base, extension = os.path.splitext(self.filepath)
        if os.path.basename(base) and extension.lower() != wanted:
            self.filepath = base + wanted
            return True
        return False

    def execute(self, context: bpy.types.Context) -> set[str]:
        settings = self.settings()
        def run() -> Summary:
            with collector_paused():
                summary = export_smd(context, self.filepath, self, settings)
            compile_if_wanted(self, context, summary)
            return summary

        return guarded(self, run, "Exported")

    def draw(self, context: bpy.types.Context) -> None:
        draw_export_options(self.layout, self, context)


def draw_export_options(layout: bpy.types.UILayout, operator: object, context: bpy.types.Context) -> None:
    prepare_layout(layout)
    scope = ("export_selected_objects",) if in_file_browser(context) else ()
    goldsrc = ("split_over_limits", "convert_textures") if getattr(operator, "flavour", "") == "GOLDSRC" else ()
    draw_panel(layout, operator, "IOGF_smd_export_include", "Include", (*scope, "export_mode", "action_scope"))
    draw_panel(layout, operator, "IOGF_smd_export_geometry", "Geometry",
               ("flavour", "apply_modifiers", "limit_weights", *goldsrc))  # fmt: skip
    draw_panel(layout, operator, "IOGF_smd_export_armature", "Armature",
               ("deform_only", "motionless_bone", "bake_pose", "object_motion"))  # fmt: skip
    qc_options = ("write_qc", "qc_model_name", "compile_qc") if getattr(operator, "flavour", "") == "GOLDSRC" \
        else ("write_qc", "qc_model_name", "qc_materials", "qc_surface_prop", "compile_qc")  # fmt: skip
    draw_panel(layout, operator, "IOGF_smd_export_qc", "QC", qc_options)
    draw_panel(
        layout, operator, "IOGF_smd_export_transform", "Transform", ("apply_transform", "up_axis", "global_scale")
    )  # fmt: skip


def menu_export(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    self.layout.operator(EXPORT_SCENE_OT_valve_smd.bl_idname, text="Valve SMD/VTA (.smd, .vta)")


classes = (EXPORT_SCENE_OT_valve_smd,)
