"""Valve SMD and VTA into Blender: reference meshes with their armature, animations as actions, VTA shape keys.

Every file is parsed before bpy.data is touched; then reference SMDs are built first, animations next (onto the
armature imported in the same call, else the active or selected armature, else a new one made from the
animation's first frame), VTAs last (onto the mesh imported in the same call, else the active or selected mesh).
A failure removes everything the call created.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, FloatProperty, StringProperty
from bpy_extras.io_utils import ImportHelper
from mathutils import Matrix

from ..common import compat, iqe_rig, mesh_io, textures
from ..common.animation import (
    basis_from_pose,
    continuous_eulers,
    continuous_quaternions,
    create_bone_action,
    play_in_scene,
)
from ..common.armature import (
    BONE_AXES,
    Skeleton,
    add_vertex_weights,
    bone_lengths,
    build_armature,
    compose,
    ensure_object_mode,
    euler_to_matrix,
    file_name_of,
    has_file_name,
    joint_turn,
    matrix_to_euler_xyz,
    matrix_to_quaternion,
    read_skeleton,
    rigid,
    skin_to_armature,
    topological_order,
    world_from_local,
)
from ..common.conventions import (
    SMD_ACTIVITY,
    SMD_BODYGROUP,
    SMD_BODYGROUP_BLANKS,
    SMD_COLLISION_MODEL,
    SMD_COLLISION_SUFFIX,
    SMD_QC_LEFT_OUT,
    SMD_QC_MATERIALS,
    SMD_QC_MODEL_NAME,
    SMD_QC_SURFACE_PROP,
    SMD_QC_TEXTURE_FOLDER,
    UP_AXES,
    collector_paused,
    up_axis_matrix,
)
from ..common.conventions import SMD_STORED_NORMALS as STORED_NORMALS
from ..common.operators import (
    SCALE_LIMITS,
    ImportFilesMixin,
    Summary,
    draw_panel,
    file_handler,
    guarded,
    naming_the_file,
    prepare_layout,
)
from ..common.progress import progress
from ..common.rollback import rollback_on_error, undo_on_failure
from ..common.selection import scene_object, selecting_new_objects
from ..formats import smd
from ..formats.errors import FormatError
from ..formats.rows import row_lengths
from ..formats.smd.mesh_arrays import MeshArrays, MeshSource, mesh_arrays, mesh_arrays_together
from ..formats.textures import SourceSearch

BLANK_MATERIAL = "UndefinedMaterial"


@dataclass
class SmdImportOptions:
    up_axis: str = "Z"
    global_scale: float = 1.0
    rotation_mode: str = "XYZ"
    weight_mode: str = "RAW"
    bone_axis: str = "Y"
    use_custom_normals: bool = True
    keep_blank_materials: bool = False
    find_textures: bool = True
    game_folder: str = ""  # Source: the game folder holding `materials/` (else found above the QC)

    def transform(self) -> np.ndarray:
        return up_axis_matrix(self.up_axis)

    def points(self, values: np.ndarray) -> np.ndarray:
        rotation = self.transform()[:3, :3]
        return (values.reshape(-1, 3) @ rotation.T) * self.global_scale

    def directions(self, values: np.ndarray) -> np.ndarray:
        return values.reshape(-1, 3) @ self.transform()[:3, :3].T


@dataclass
class ParsedFile:
    path: str
    kind: str  # "reference", "animation" or "vta"
    document: smd.SmdDocument
    options: SmdImportOptions | None = None  # this file's own (a QC's $upaxis), else the call's
    target: str | None = None  # the stem of the reference an animation, VTA or later mesh belongs to (a QC)
    from_qc: bool = False  # named by a QC: what studiomdl does with the model decides (bones it lacks are dropped)
    shape_names: dict[int, str] = field(default_factory=dict)  # time number -> name, from a QC
    collision: bool = False  # a QC's $collisionmodel: a wireframe object of its own, even from the $body's SMD
    action_name: str | None = None  # a QC's $sequence name for the action of its one SMD
    frame_rate: float | None = None  # a QC's sequence fps (SMD itself has none)
    loop: bool = False  # the sequence's `loop` option: a cyclic action
    also_as: list[tuple[str, float, bool]] = field(default_factory=list)  # later sequences of it: name, fps, loop
    bodygroup: str = ""  # a QC's $bodygroup naming it: the mesh goes into a collection of that name
    attachments: list[smd.QcAttachment] = field(default_factory=list)  # the QC's, on its first mesh's armature
    search: SourceSearch | None = None  # where its materials are, by the engine's rules
    qc: smd.QcDocument | None = None  # the QC naming it: what Write QC writes again (names, blanks, activities)

    @property
    def stem(self) -> str:
        return stem_of(self.path) + (SMD_COLLISION_SUFFIX if self.collision else "")


@dataclass
class ImportState:
    """What this call created so far, for animations and VTAs that follow their reference."""

    armatures: list[tuple[str, bpy.types.Object]] = field(default_factory=list)
    meshes: list[tuple[str, bpy.types.Object]] = field(default_factory=list)
    later_meshes: dict[str, list[ParsedFile]] = field(default_factory=dict)  # a QC's first mesh -> its others
    skeletons: list[tuple[object, bpy.types.Object]] = field(default_factory=list)  # references' skeletons, armature
    animated: set[str] = field(default_factory=set)  # armatures given their first action by this import
    bodygroups: dict[str, bpy.types.Collection] = field(default_factory=dict)  # made by this import, by name
    mesh_arrays: dict[int, MeshArrays] = field(default_factory=dict)  # id(reference) -> its arrays, made ahead


@dataclass
class PlannedFile:
    """A file to import, with what a QC says about it."""

    path: str
    options: SmdImportOptions | None = None
    target: str | None = None
    from_qc: bool = False
    shape_names: dict[int, str] = field(default_factory=dict)
    collision: bool = False
    action_name: str | None = None
    frame_rate: float | None = None
    loop: bool = False
    also_as: list[tuple[str, float, bool]] = field(default_factory=list)  # more sequences of it: name, fps, loop
    bodygroup: str = ""  # a QC's $bodygroup naming it
    attachments: list[smd.QcAttachment] = field(default_factory=list)
    search: SourceSearch | None = None  # where its materials are ($cdmaterials, $cdtexture, game folder)
    qc: smd.QcDocument | None = None


def plan_files(paths: list[str], options: SmdImportOptions, summary: Summary) -> list[PlannedFile]:
    """The chosen files, each QC (or QCI) replaced by the SMDs and VTAs it names: its meshes, their VTAs (shape
    names from its flex lines) and its animations, read with its $upaxis."""
    planned: list[PlannedFile] = []
    for path in paths:
        if os.path.splitext(path)[1].lower() not in (".qc", ".qci"):
            planned.append(PlannedFile(path, search=SourceSearch(game_folder=options.game_folder)))
            continue
        qc = smd.load_qc(path)
        search = SourceSearch(tuple(qc.material_folders), tuple(qc.texture_folders), options.game_folder,
                              os.path.dirname(os.path.abspath(path)))  # fmt: skip
        label = os.path.basename(path)
        summary.warnings.extend(f"{label}: {text}" for text in qc.warnings)
        summary.notes.extend(f"{label}: {text}" for text in qc.notes)
        own = replace(options, up_axis=qc.up_axis) if qc.up_axis else options
        first_stem = stem_of(qc.meshes[0].path) if qc.meshes else None
        planned += [PlannedFile(mesh.path, own, first_stem if row else None, from_qc=True,
                                collision=mesh.command in smd.COLLISION_COMMANDS, bodygroup=mesh.bodygroup,
                                search=search, attachments=qc.attachments if row == 0 else [], qc=qc)
                    for row, mesh in enumerate(qc.meshes)]  # fmt: skip
        planned += [PlannedFile(flex.path, own, stem_of(mesh.path), from_qc=True, shape_names=flex.names)
                    for mesh in qc.meshes for flex in mesh.flex_files]  # fmt: skip
        planned += [PlannedFile(animation, own, first_stem, from_qc=True,
                                action_name=qc.sequence_names.get(animation),
                                frame_rate=qc.frame_rates.get(animation), loop=qc.loops.get(animation, False),
                                also_as=[(name, rate, loop) for path, name, rate, loop in qc.repeated_sequences
                                         if path == animation], qc=qc)
                    for animation in qc.animations]  # fmt: skip
    # a file named twice is imported once, as its QC says when one names it
    chosen: dict[tuple[str, bool], PlannedFile] = {}
    for item in planned:
        key = (os.path.abspath(item.path), item.collision)
        if key not in chosen or (chosen[key].options is None and item.options is not None):
            chosen[key] = item
    return [item for item in planned if chosen[(os.path.abspath(item.path), item.collision)] is item]


def stem_of(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def parse_file(path: str, options: SmdImportOptions) -> ParsedFile:
    if path.lower().endswith(".vta"):
        document = smd.load_vta(path)
        if document.vertex_animation is None:
            raise FormatError("no 'vertexanimation' block: not a vertex animation file", path=path)
    else:
        document = smd.load_smd(path, blank_material=BLANK_MATERIAL if options.keep_blank_materials else None)
    if document.vertex_animation is not None:
        kind = "vta"
    elif document.triangles is not None:
        kind = "reference"
    else:
        kind = "animation"
    return ParsedFile(path, kind, document)


# ------------------------------------------------------------------------------------------------ skeletons


def node_parents(document: smd.SmdDocument) -> list[int]:
    rows = document.node_rows()
    return [rows.get(node.parent, -1) for node in document.nodes]


def file_world_matrices(
    document: smd.SmdDocument, positions: np.ndarray, rotations: np.ndarray, options: SmdImportOptions
) -> np.ndarray:
    """(..., B, 3) positions and Euler XYZ rotations (parent-relative, file space) to Blender model space."""
    local = compose(positions * options.global_scale, euler_to_matrix(rotations))
    parents = node_parents(document)
    roots = [row for row, parent in enumerate(parents) if parent < 0]
    local[..., roots, :, :] = options.transform() @ local[..., roots, :, :]
    return world_from_local(parents, local)


def rest_skeleton(document: smd.SmdDocument, options: SmdImportOptions, notes: list[str], label: str) -> Skeleton:
    """Bones at the first skeleton frame (bones it does not list sit at their parent's origin, as studiomdl has
    them: said in a note)."""
    count = len(document.nodes)
    positions, rotations = np.zeros((count, 3)), np.zeros((count, 3))
    if document.skeleton:
        frame = document.skeleton[0]
        rows = document.node_rows()
        listed = [(i, rows[int(b)]) for i, b in enumerate(frame.bone_ids.tolist()) if int(b) in rows]
        if listed:
            source, target = (list(t) for t in zip(*listed, strict=True))
            positions[target] = frame.positions[source]
            rotations[target] = frame.rotations[source]
        if len(listed) < count:
            notes.append(f"{label}: {count - len(listed)} bone(s) missing from the first skeleton frame stand at "
                         "their parents' origins")  # fmt: skip
    world = file_world_matrices(document, positions, rotations, options)
    return Skeleton([node.name for node in document.nodes], node_parents(document), world)


def merged_skeleton(first: Skeleton, other: Skeleton) -> Skeleton:
    """`first` with the bones of `other` it lacks (by Blender's name) appended, parented by name, at their rest."""
    known = {blender_bone_name(name): row for row, name in enumerate(first.names)}
    names, parents, rests = list(first.names), list(first.parents), [first.rest]
    for row in topological_order(other.parents):
        key = blender_bone_name(other.names[row])
        if key in known:
            continue
        parent = other.parents[row]
        known[key] = len(names)
        names.append(other.names[row])
        parents.append(known[blender_bone_name(other.names[parent])] if parent >= 0 else -1)
        rests.append(other.rest[row : row + 1])
    return Skeleton(names, parents, np.concatenate(rests)) if len(names) > len(first.names) else first


def _skeleton_key(document: smd.SmdDocument) -> object:
    """What makes two files' skeletons the same: their nodes and rest frame, exactly."""
    frame = document.skeleton[0] if document.skeleton else None
    rest = b"" if frame is None else frame.bone_ids.tobytes() + frame.positions.tobytes() + frame.rotations.tobytes()
    return tuple((node.id, node.name, node.parent) for node in document.nodes), rest


_SPAN_ROWS = 4096  # rows of a column_spans block


def column_spans(points: np.ndarray) -> list[float]:
    """Each column's largest value less its smallest (NaN where one is NaN). A large table's blocks of rows are
    copied column by column first: the reader's columns may be views of a wider table, whose strided passes cost 4
    times as much (3M corners: 117 -> 29 ms)."""
    if len(points) <= _SPAN_ROWS:
        return [points[:, axis].max() - points[:, axis].min() for axis in range(points.shape[1])]  # (axis=0: 20x
        # slower)
    lows, highs = [], []
    for start in range(0, len(points), _SPAN_ROWS):
        block = np.ascontiguousarray(points[start : start + _SPAN_ROWS].T)
        lows.append(block.min(axis=1))
        highs.append(block.max(axis=1))
    spans: list[float] = (np.max(highs, axis=0) - np.min(lows, axis=0)).tolist()
    return spans


def blender_bone_name(name: str) -> str:
    """The name Blender gives a bone called `name` (cut to the bytes a bone name holds)."""
    return name.encode()[: compat.max_bone_name_bytes()].decode(errors="ignore")


def build_skeleton_object(
    context: bpy.types.Context, name: str, document: smd.SmdDocument, options: SmdImportOptions, summary: Summary,
    others: Sequence[ParsedFile] = (),
) -> tuple[bpy.types.Object, list[str]]:
    """The armature of a file's skeleton; with `others` (the later meshes of its QC), of their bones too: studiomdl
    makes one skeleton of a model's meshes, its bones merged by name (the first file's rest poses are kept)."""
    notes_before = len(summary.notes)
    skeleton = rest_skeleton(document, options, summary.notes, name)
    # (a QC's meshes mostly share one skeleton: each skeleton merged once, its note said again for each file)
    merged = {(_skeleton_key(document), id(options)): [note[len(name) :] for note in summary.notes[notes_before:]]}
    for other in others:
        own = other.options or options
        key = (_skeleton_key(other.document), id(own))
        if key in merged:
            summary.notes.extend(other.stem + note for note in merged[key])
            continue
        notes_before = len(summary.notes)
        skeleton = merged_skeleton(skeleton, rest_skeleton(other.document, own, summary.notes, other.stem))
        merged[key] = [note[len(other.stem) :] for note in summary.notes[notes_before:]]
    limit = compat.max_bone_name_bytes()
    too_long = [n for n in skeleton.names if len(n.encode()) > limit]
    if too_long:
        summary.warnings.append(f"{name}: {len(too_long)} bone name(s) longer than Blender's {limit} bytes were "
                                "shortened")
    triangles = document.triangles
    model_size = None  # (the bones alone give no size for one bone: the mesh's extent does)
    if triangles is not None and len(triangles):
        with np.errstate(invalid="ignore"):  # (a NaN or infinite size is no size: bone_lengths falls back)
            corners = triangles.line_rows("positions")  # (held per line by the reader: every line's, once)
            corners = triangles.positions.reshape(-1, 3) if corners is None else corners
            model_size = float(np.max(column_spans(corners))) * options.global_scale
    lengths = bone_lengths(skeleton, model_size)
    armature, bone_names = build_armature(context, f"{name}_skeleton", skeleton, bone_axis=options.bone_axis,
                                          lengths=lengths)  # fmt: skip
    summary.objects += 1
    return armature, bone_names


# ------------------------------------------------------------------------------------------------ reference


def shared_armature(state: ImportState, parsed: ParsedFile) -> tuple[bpy.types.Object, list[str]] | None:
    """For a mesh of a QC after its first: the first mesh's armature, when it has every bone this file names (the
    model's meshes then share one skeleton, as studiomdl merges them), with the Blender name of each bone. For
    other references: the armature of one imported with it whose skeleton is the same (a model's parts, its
    physics SMD)."""
    if parsed.target is None:
        same = next((obj for skeleton, obj in state.skeletons if skeleton == _skeleton_key(parsed.document)), None)
        return (same, [blender_bone_name(node.name) for node in parsed.document.nodes]) if same else None
    armature = next((obj for stem, obj in state.armatures if stem == parsed.target), None)
    if armature is None:
        return None
    names = [blender_bone_name(node.name) for node in parsed.document.nodes]
    bones = armature.data.bones
    return (armature, names) if all(bones.get(name) is not None for name in names) else None


def mesh_source(parsed: ParsedFile) -> MeshSource:
    document = parsed.document
    assert document.triangles is not None
    return MeshSource(document.triangles, document.node_rows(), len(document.nodes), parsed.stem)


def arrays_ahead(parsed: list[ParsedFile], options: SmdImportOptions, state: ImportState) -> None:
    """The mesh arrays of the references with triangles, made together for the files of one set of options (a QC's
    meshes: see mesh_arrays_together), kept in `state` for build_reference."""
    by_options: dict[int, tuple[SmdImportOptions, list[ParsedFile]]] = {}
    for file in parsed:
        triangles = file.document.triangles
        if file.kind == "reference" and triangles is not None and len(triangles):
            own = file.options or options
            by_options.setdefault(id(own), (own, []))[1].append(file)
    for own, files in by_options.values():
        if len(files) > 1:
            made = mesh_arrays_together([mesh_source(file) for file in files], own)
            state.mesh_arrays.update((id(file), arrays) for file, arrays in zip(files, made, strict=True))


def build_reference(
    context: bpy.types.Context, parsed: ParsedFile, options: SmdImportOptions, state: ImportState, summary: Summary
) -> None:
    document, name = parsed.document, parsed.stem
    summary.warnings.extend(f"{name}: {text}" for text in document.warnings)
    shared = shared_armature(state, parsed)
    if shared is not None:
        armature, bone_names = shared
    else:
        others = state.later_meshes.get(name, [])
        armature, bone_names = build_skeleton_object(context, name, document, options, summary, others)
        if not others:
            state.skeletons.append((_skeleton_key(document), armature))
    state.armatures.append((name, armature))
    add_attachments(context, armature, parsed.attachments, options, summary)
    if parsed.qc is not None:
        keep_qc_names(armature, parsed.qc)
    if len(document.skeleton) > 1:
        summary.warnings.append(f"{name}: reference SMD has {len(document.skeleton)} skeleton frames; the first is "
                                "the rest pose, the others were ignored")  # fmt: skip
    triangles = document.triangles
    assert triangles is not None
    if len(triangles) == 0:
        summary.notes.append(f"{name}: no triangles (a skeleton SMD): its armature alone was made")
        return
    arrays = state.mesh_arrays.pop(id(parsed), None) or mesh_arrays(mesh_source(parsed), options)
    summary.warnings.extend(arrays.warnings)
    corner_verts = arrays.corner_verts
    mesh = mesh_io.new_mesh(name, arrays.positions, corner_verts, np.arange(len(triangles)) * 3)
    line_uvs = triangles.line_rows("uvs")  # (held per line by the reader: spread to the corners once float32)
    corner_uvs = triangles.uvs.reshape(-1, 2) if line_uvs is None else np.take(line_uvs.astype(np.float32),
                                                                               triangles.corner_lines, 0)  # fmt: skip
    mesh_io.add_uv_map(mesh, "UVMap", corner_uvs)
    for material_name in triangles.material_names:
        mesh.materials.append(mesh_io.material_named(material_name, summary.warnings))
    mesh_io.set_face_materials(mesh, triangles.material_indices.astype(np.intc))
    mesh_io.set_smooth(mesh)
    if arrays.normals is not None:
        mesh_io.add_corner_vectors(mesh, STORED_NORMALS, arrays.normals)
        mesh_io.set_custom_normals(mesh, corner_verts, arrays.normals, arrays.prepared)
    obj = bpy.data.objects.new(name, mesh)  # linked once weighted: vertex groups go faster on an unlinked object
    add_vertex_weights(context, obj, [bone_names[row] for row in arrays.used_bones], arrays.link_vertices,
                       arrays.link_groups, arrays.link_weights)  # fmt: skip
    if parsed.collision:  # the physics hull: seen through, never rendered, not merged into the model on export
        obj.display_type, obj.hide_render = "WIRE", True
        obj[SMD_COLLISION_MODEL] = True
    blanks = parsed.qc.bodygroup_blanks.get(parsed.bodygroup, []) if parsed.qc is not None else []
    bodygroup_collection(context, parsed.bodygroup, state, blanks).objects.link(obj)
    skin_to_armature(obj, armature)
    state.meshes.append((name, obj))
    summary.objects += 1
    summary.faces += len(mesh.polygons)


def add_attachments(
    context: bpy.types.Context, armature: bpy.types.Object, attachments: list[smd.QcAttachment],
    options: SmdImportOptions, summary: Summary,
) -> None:  # fmt: skip
    """The QC's `$attachment`s as empties parented to their bones, where the export writes them from: at the offset
    in the bone's rest frame (model space if `absolute`), turned by `rotate` (Source's pitch, yaw, roll)."""
    if not attachments:
        return
    skeleton = read_skeleton(armature)  # (rest frames in model space, the bone-axis turn undone)
    row_of: dict[str, int] = {}
    for row, bone_name in enumerate(skeleton.names):
        bone = armature.data.bones[bone_name]
        row_of.setdefault(file_name_of(bone), row)
        row_of.setdefault(bone_name, row)
    size = max((bone.length for bone in armature.data.bones), default=1.0) * 0.5
    for attachment in attachments:
        row = row_of.get(attachment.bone, row_of.get(blender_bone_name(attachment.bone)))
        if row is None:
            summary.warnings.append(f"attachment {attachment.name!r}: its bone {attachment.bone!r} is not in "
                                    f"armature {armature.name!r}; left out")  # fmt: skip
            continue
        pitch, yaw, roll = np.radians(attachment.rotation)
        turn = euler_to_matrix(np.array([roll, pitch, yaw]))  # (Source's angles: yaw about Z, pitch Y, roll X)
        local = compose(np.array(attachment.offset) * options.global_scale, turn)
        placed = (options.transform() @ local) if attachment.absolute else skeleton.rest[row] @ local
        bone = armature.data.bones[skeleton.names[row]]
        name = f"attachment{attachment.name}" if attachment.name.isdigit() else attachment.name
        empty = mesh_io.link_new_object(context, name, None, summary.warnings)
        empty.empty_display_type, empty.empty_display_size = "ARROWS", size
        empty.parent, empty.parent_type, empty.parent_bone = armature, "BONE", bone.name
        tail = np.identity(4)
        tail[1, 3] = bone.length  # (a bone's children hang from its tail; the export undoes the same)
        empty.matrix_parent_inverse = Matrix((np.linalg.inv(np.array(bone.matrix_local) @ tail)).tolist())
        empty.matrix_basis = Matrix(placed.tolist())
        summary.objects += 1


def keep_qc_names(armature: bpy.types.Object, qc: smd.QcDocument) -> None:
    """The QC's engine names on its model's armature (saved with the .blend), for Write QC to write again, and
    what it has that Write QC leaves out (for its warning)."""
    values = {SMD_QC_MODEL_NAME: qc.model_name, SMD_QC_SURFACE_PROP: qc.surface_prop,
              SMD_QC_TEXTURE_FOLDER: qc.texture_folders[0] if qc.texture_folders else None,
              SMD_QC_MATERIALS: ";".join(f"{folder}/" for folder in qc.material_folders),
              SMD_QC_LEFT_OUT: ", ".join(qc.left_out)}  # fmt: skip
    for key, value in values.items():
        if value and armature.get(key) is None:
            armature[key] = value


def bodygroup_collection(
    context: bpy.types.Context, group: str, state: ImportState, blanks: list[int] | None = None
) -> bpy.types.Collection:
    """Where a mesh goes: the current collection, or for a $bodygroup's alternatives a collection of the group's
    name inside it (marked, so that an export with Write QC writes the group again, its `blank` choices in their
    places)."""
    if not group:
        assert context.collection is not None
        return context.collection
    if group not in state.bodygroups:
        collection = bpy.data.collections.new(group)
        collection[SMD_BODYGROUP] = True
        if blanks:
            collection[SMD_BODYGROUP_BLANKS] = blanks
        context.collection.children.link(collection)
        state.bodygroups[group] = collection
    return state.bodygroups[group]


# ------------------------------------------------------------------------------------------------ animation


def target_object(
    context: bpy.types.Context, imported: list[tuple[str, bpy.types.Object]], kind: str, stem: str,
    warnings: list[str],
) -> bpy.types.Object | None:
    """Where an animation or VTA goes: the object of that kind imported in the same call (the one with the same
    file name first), else the active one, else the only selected one, else the scene's only one."""
    if imported:
        same = [obj for name, obj in imported if name == stem]
        if same:
            return same[-1]
        prefixed = [(len(name), obj) for name, obj in imported if stem.startswith(name + "_")]
        if prefixed:  # `<reference>_<action>.smd`, as an export with its animations names them
            return max(prefixed, key=lambda pair: pair[0])[1]
        if len({id(obj) for _, obj in imported}) > 1:
            warnings.append(f"{stem}: no {kind.lower()} of that name was imported with it; "
                            f"used {imported[-1][1].name!r}, the last one")  # fmt: skip
        return imported[-1][1]
    return scene_object(context, kind)


def build_animation(
    context: bpy.types.Context, parsed: ParsedFile, options: SmdImportOptions, state: ImportState, summary: Summary
) -> None:
    document, name = parsed.document, parsed.stem
    summary.warnings.extend(f"{name}: {text}" for text in document.warnings)
    armature = target_object(context, state.armatures, "ARMATURE", parsed.target or name, summary.warnings)
    if armature is None:
        armature, _names = build_skeleton_object(context, name, document, options, summary)
        state.armatures.append((name, armature))
    dense = smd.dense_skeleton(document, parsed.path)
    if dense.frame_count == 0:
        summary.warnings.append(f"{name}: no skeleton frames; no action was made")
        return
    file_world = file_world_matrices(document, dense.positions, dense.rotations, options)
    skeleton = read_skeleton(armature)
    turn = joint_turn(armature)
    blender_rest = skeleton.rest @ turn
    file_row: dict[str, int] = {}
    for row, node in enumerate(document.nodes):
        file_row.setdefault(node.name, row)
        file_row.setdefault(blender_bone_name(node.name), row)
    source_row: dict[str, int] = {}  # each bone's node in the file, by its file name (Blender may have shortened it)
    for bone in armature.data.bones:  # (the shortened names in file_row are for bones without a kept file name)
        found = file_row.get(file_name_of(bone)) if has_file_name(bone) else file_row.get(bone.name)
        if found is not None:
            source_row[bone.name] = found
    matched = [bone for bone in skeleton.names if bone in source_row]
    missing = len(document.nodes) - len(matched)
    said = summary.notes if parsed.from_qc else summary.warnings  # (a QC's model has the bones of its meshes:
    if not matched and parsed.from_qc:  # studiomdl drops the others, without a word, and a sequence of none)
        said.append(f"{name}: none of the animation's {len(document.nodes)} bones is in armature {armature.name!r}: "
                    "no action was made")  # fmt: skip
        return
    if not matched:
        raise FormatError(f"none of the animation's {len(document.nodes)} bones is in armature {armature.name!r}",
                          path=parsed.path)  # fmt: skip
    if missing > 0:
        said.append(f"{name}: {missing} animated bone(s) are not in armature {armature.name!r}")
    frames = dense.first_time + np.arange(dense.frame_count)
    pose = np.empty((dense.frame_count, len(skeleton), 4, 4))
    inverse_rest = np.linalg.inv(blender_rest)
    for row, bone in enumerate(skeleton.names):
        parent = skeleton.parents[row]
        if bone in source_row:
            pose[:, row] = file_world[:, source_row[bone]] @ turn
        elif parent < 0:
            pose[:, row] = blender_rest[row]
        else:
            pose[:, row] = pose[:, parent] @ (inverse_rest[parent] @ blender_rest[row])
    basis = basis_from_pose(skeleton.parents, blender_rest, pose)
    rows = [skeleton.names.index(bone) for bone in matched]
    basis = basis[:, rows]
    rotation_matrices, _ = rigid(basis)
    if options.rotation_mode == "QUATERNION":
        rotations = continuous_quaternions(matrix_to_quaternion(rotation_matrices[..., :3, :3]))
    else:
        rotations = continuous_eulers(matrix_to_euler_xyz(rotation_matrices[..., :3, :3]))
    first = armature.name not in state.animated  # (the first animation plays, as for IQE; the others wait in the NLA's
    state.animated.add(armature.name)  # action list)
    action = create_bone_action(
        armature, parsed.action_name or name, matched, frames, basis[..., :3, 3], rotations,
        rotation_mode=options.rotation_mode, assign=first,
    )  # fmt: skip
    if parsed.frame_rate is not None:  # (the action's rate, which the IQE and IQM exports write)
        action[iqe_rig.FRAMERATE] = parsed.frame_rate
    # A looping sequence plays its frames and wraps to the first: its cycle's range ends on the first pose again.
    # Source loops usually end on their first pose already (that frame is then the wrap); one that does not gets
    # the range one frame longer, so that Blender's cycle, and an IQE/IQM export's loop, keep its last frame.
    closes_itself = bool(np.allclose(basis[0], basis[-1], atol=1e-6))
    cycle_end = float(frames[-1] if closes_itself else frames[-1] + 1)
    _make_cyclic(action, parsed.loop, cycle_end)
    for sequence, rate, loop in parsed.also_as:  # (a QC's later sequences of the same SMD: one action each)
        again = action.copy()
        again.name, again.use_fake_user = sequence, True
        _make_cyclic(again, loop, cycle_end)
        again[iqe_rig.FRAMERATE] = rate
    summary.actions += 1 + len(parsed.also_as)
    if first:  # (SMD has no frame rate: a QC's sequence gives one)
        play_in_scene(context.scene, int(frames[0]), int(frames[-1]), parsed.frame_rate)


def _make_cyclic(action: bpy.types.Action, loop: bool, cycle_end: float) -> None:
    """A looping sequence's action: Cyclic over its frames and the wrap (see build_animation); others unchanged."""
    if loop and action.use_frame_range:
        action.frame_end, action.use_cyclic = cycle_end, True
    else:
        action.use_cyclic = False


# ------------------------------------------------------------------------------------------------ VTA


def match_points(
    query: np.ndarray, query_normals: np.ndarray, reference: np.ndarray, reference_normals: np.ndarray, tolerance: float
) -> np.ndarray:
    """For each query point, the reference point within `tolerance` whose normal agrees best (then the nearest);
    -1 where there is none. A hashed grid of cell size `tolerance`, searched in the 27 cells around each query."""
    if len(query) == 0 or len(reference) == 0:
        return np.full(len(query), -1, np.int64)

    def cells(points: np.ndarray) -> np.ndarray:
        return np.floor(points / tolerance).astype(np.int64)

    def hashed(cell: np.ndarray) -> np.ndarray:
        return (cell[:, 0] * 73856093) ^ (cell[:, 1] * 19349663) ^ (cell[:, 2] * 83492791)

    reference_keys = hashed(cells(reference))
    order = np.argsort(reference_keys, kind="stable")
    sorted_keys = reference_keys[order]
    query_cells = cells(query)
    pairs_q, pairs_r = [], []
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            for dz in (-1, 0, 1):
                keys = hashed(query_cells + np.array([dx, dy, dz]))
                low = np.searchsorted(sorted_keys, keys, "left")
                count = np.searchsorted(sorted_keys, keys, "right") - low
                total = int(count.sum())
                if not total:
                    continue
                pairs_q.append(np.repeat(np.arange(len(query)), count))
                rank = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
                pairs_r.append(order[np.repeat(low, count) + rank])
    result = np.full(len(query), -1, np.int64)
    if not pairs_q:
        return result
    q, r = np.concatenate(pairs_q), np.concatenate(pairs_r)
    distance = row_lengths(query[q] - reference[r])
    close = distance <= tolerance
    q, r, distance = q[close], r[close], distance[close]

    def unit(v: np.ndarray) -> np.ndarray:
        length = row_lengths(v, keepdims=True)
        return v / np.where(length > 0, length, 1)

    agreement = np.sum(unit(query_normals[q]) * unit(reference_normals[r]), axis=1)
    best = np.lexsort((distance, -np.round(agreement, 4), q))
    q, r = q[best], r[best]
    first = np.ones(len(q), bool)
    first[1:] = q[1:] != q[:-1]
    result[q[first]] = r[first]
    return result


def mesh_corner_data(mesh: bpy.types.Mesh) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    positions = mesh_io.vertex_positions_of(mesh).astype(np.float64)
    corner_vert = np.empty(len(mesh.loops), np.intc)
    mesh.attributes[".corner_vert"].data.foreach_get("value", corner_vert)
    stored = mesh.attributes.get(STORED_NORMALS)
    if stored is not None and stored.domain == "CORNER" and stored.data_type == "FLOAT_VECTOR":
        normals = mesh_io.corner_floats(stored.data, "vector", 3)
    else:
        normals = mesh_io.corner_floats(mesh.corner_normals, "vector", 3)
    return positions, corner_vert, normals.astype(np.float64)


def build_vta(
    context: bpy.types.Context, parsed: ParsedFile, options: SmdImportOptions, state: ImportState, summary: Summary
) -> None:
    document, name = parsed.document, parsed.stem
    summary.warnings.extend(f"{name}: {text}" for text in document.warnings)
    obj = target_object(context, state.meshes, "MESH", parsed.target or name, summary.warnings)
    if obj is None:
        raise FormatError("no target mesh for the shape keys: import the reference SMD in the same call, or make "
                          "its mesh active", path=parsed.path)  # fmt: skip
    frames = sorted(document.vertex_animation or [], key=lambda frame: frame.time)
    if not frames:
        summary.warnings.append(f"{name}: empty vertex animation")
        return
    base, shapes = frames[0], frames[1:]
    names = {**document.shape_names(), **parsed.shape_names}  # a QC's names win: the compiled model uses them
    mesh = obj.data
    positions, corner_vert, corner_normals = mesh_corner_data(mesh)
    base_positions = options.points(base.positions)
    base_normals = options.directions(base.normals)
    extent = float(np.ptp(positions, axis=0).max()) if len(positions) else 1.0
    tolerance = max(extent * 1e-5, 1e-5)
    corner_match = match_points(positions[corner_vert], corner_normals, base_positions, base_normals, tolerance)
    # a vertex takes the entry matched by its first matched corner
    order = np.lexsort((corner_match < 0, corner_vert))
    first = np.ones(len(order), bool)
    first[1:] = corner_vert[order][1:] != corner_vert[order][:-1]
    vertex_entry = np.full(len(positions), -1, np.int64)
    vertex_entry[corner_vert[order][first]] = corner_match[order][first]
    matched = vertex_entry >= 0
    unmatched_vertices = int((~matched).sum())
    reverse = match_points(base_positions, base_normals, positions[corner_vert], corner_normals, tolerance)
    unused_entries = int((reverse < 0).sum())
    if unmatched_vertices or unused_entries:
        summary.warnings.append(
            f"{name}: {unmatched_vertices} of {len(positions)} mesh vertices had no VTA vertex at their position, "
            f"{unused_entries} of {len(base_positions)} VTA vertices matched no mesh vertex"
        )
    if not matched.any():
        raise FormatError(f"no VTA vertex matches a vertex of mesh {obj.name!r}", path=parsed.path)
    base_ids = base.vertex_ids.astype(np.int64)
    id_order = np.argsort(base_ids, kind="stable")
    sorted_ids = base_ids[id_order]
    remember_shape_keys(obj)
    if obj.data.shape_keys is None:
        compat.add_shape_key(obj, "Basis")
    stray = 0
    for frame in shapes:
        delta = np.zeros((len(base_positions), 3))
        ids = frame.vertex_ids.astype(np.int64)
        at = np.minimum(np.searchsorted(sorted_ids, ids), len(sorted_ids) - 1)
        known = sorted_ids[at] == ids
        stray += int((~known).sum())
        rows = id_order[at[known]]
        delta[rows] = options.points(frame.positions[known]) - base_positions[rows]
        shape = positions.copy()
        shape[matched] += delta[vertex_entry[matched]]
        key = compat.add_shape_key(obj, names.get(frame.time, str(frame.time)))
        key.data.foreach_set("co", shape.astype(np.float32).ravel())
    if stray:
        summary.warnings.append(f"{name}: {stray} vertex line(s) name ids missing from time {base.time}; ignored")
    obj.data.shape_keys.use_relative = True


def remember_shape_keys(obj: bpy.types.Object) -> None:
    """If the import fails, remove the shape keys it adds to a mesh that existed before (new meshes go anyway)."""
    existing = {key.name for key in obj.data.shape_keys.key_blocks} if obj.data.shape_keys else set()
    name = obj.name

    def remove_added() -> None:
        target = bpy.data.objects.get(name)
        if target is None or target.data.shape_keys is None:
            return
        if not existing:
            target.shape_key_clear()
            return
        for key in [k for k in target.data.shape_keys.key_blocks if k.name not in existing]:
            target.shape_key_remove(key)

    undo_on_failure(remove_added)


# ------------------------------------------------------------------------------------------------ driver

BUILDERS = {"reference": build_reference, "animation": build_animation, "vta": build_vta}
BUILD_ORDER = {"reference": 0, "animation": 1, "vta": 2}


def import_smd_files(context: bpy.types.Context, paths: list[str], options: SmdImportOptions) -> Summary:
    """Parse all files (a QC stands for the files it names), then build references, animations and VTAs in that
    order; roll back on failure."""
    summary = Summary()
    planned = plan_files(paths, options, summary)  # (a bad QC fails before anything changes)
    summary.files = len(planned)
    with progress(context, 2 * len(planned), files=len(planned)) as tracker, collector_paused():
        parsed = []
        for item in planned:
            tracker.file(item.path)
            own = item.options or options
            parsed.append(replace(parse_file(item.path, own), options=own, target=item.target, from_qc=item.from_qc,
                                  shape_names=item.shape_names, collision=item.collision,
                                  action_name=item.action_name, frame_rate=item.frame_rate, loop=item.loop,
                                  also_as=item.also_as, bodygroup=item.bodygroup, search=item.search,
                                  attachments=item.attachments, qc=item.qc))  # fmt: skip
            tracker.step()
        state = ImportState()
        arrays_ahead(parsed, options, state)
        for file in parsed:
            if file.kind == "reference" and file.target is not None:
                state.later_meshes.setdefault(file.target, []).append(file)
        with rollback_on_error(), selecting_new_objects(context):
            actions_before = set(bpy.data.actions)
            ensure_object_mode(context)  # (after parsing: a bad file leaves the user in the mode they were in)
            for file in sorted(parsed, key=lambda p: BUILD_ORDER[p.kind]):
                own = file.options or options
                with (
                    naming_the_file(file.path),
                    textures.texturing_new_materials(file.path, own.find_textures, summary, file.search),
                ):
                    BUILDERS[file.kind](context, file, own, state, summary)
                tracker.step()
            mark_activities(parsed, [action for action in bpy.data.actions if action not in actions_before])
    return summary


def mark_activities(files: list[ParsedFile], actions: list[bpy.types.Action]) -> None:
    """Each new action of a QC's `$sequence` that gives an activity: the activity and its weight, which Write QC
    writes again."""
    by_name = {re.sub(r"\.\d{3}$", "", action.name): action for action in reversed(actions)}
    for file in files:
        if file.qc is None or file.kind != "animation":
            continue
        for name in [file.action_name or file.stem, *(sequence for sequence, _, _ in file.also_as)]:
            activity = file.qc.activities.get(name)
            if activity is not None and name in by_name:
                by_name[name][SMD_ACTIVITY] = f"{activity[0]} {activity[1]:g}"


# ------------------------------------------------------------------------------------------------- operator


class IMPORT_SCENE_OT_valve_smd(bpy.types.Operator, ImportFilesMixin, ImportHelper):
    """Import Valve SMD models and animations and VTA vertex animations (Source and GoldSrc), or everything a QC
    names"""

    bl_idname = "import_scene.valve_smd"
    bl_label = "Import SMD/VTA/QC"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".smd"
    filter_glob: StringProperty(default="*.smd;*.vta;*.qc;*.qci", options={"HIDDEN"})

    up_axis: EnumProperty(name="Up Axis", items=UP_AXES, default="Z", description="The file's up axis ($upaxis)")
    global_scale: FloatProperty(
        **SCALE_LIMITS, description="Multiply the file's coordinates by this; Source and GoldSrc units are "
        "about an inch, so 0.0254 gives metres",
    )  # fmt: skip
    rotation_mode: EnumProperty(
        name="Rotation Keys",
        items=(
            ("XYZ", "Euler XYZ", "Key bone rotations as Euler XYZ angles, as the file stores them"),
            ("QUATERNION", "Quaternion", "Key bone rotations as quaternions"),
        ),
        default="XYZ",
        description="How animation keys store bone rotations: Euler XYZ as the file does, or quaternions (no "
        "gimbal lock or 360-degree wraps between keys)",
    )
    weight_mode: EnumProperty(
        name="Weights",
        items=(
            ("RAW", "As Written", "Keep every weight link as the file has it"),
            (
                "STUDIOMDL",
                "As studiomdl Compiles",
                "Merge duplicate bones, drop links below 0.05, keep the heaviest 3 and renormalise, as studiomdl does",
            ),
        ),
        default="RAW",
        description="Which vertex weights to import: every link as written, or only what studiomdl would keep, to "
        "see the compiled model's skinning",
    )
    bone_axis: EnumProperty(
        name="Bone Axis", items=BONE_AXES, default="Y",
        description="The axis Blender's bones point along; X suits Valve skeletons, whose bones run along X "
        "(export turns them back)",
    )  # fmt: skip
    use_custom_normals: BoolProperty(
        name="Custom Normals", default=True, description="Use the file's normals as custom split normals"
    )
    keep_blank_materials: BoolProperty(
        name="Keep Blank-Material Triangles",
        default=False,
        description=f"Give triangles with an empty material line the material {BLANK_MATERIAL!r} instead of "
        "dropping them as studiomdl does",
    )

    find_textures: BoolProperty(**textures.FIND_TEXTURES)
    game_folder: StringProperty(
        name="Game Folder",
        subtype="DIR_PATH",
        options=compat.blend_relative_path_options(),
        default="",
        description="Source: the game (or mod) folder whose materials folder holds the model's VMT and VTF files; "
        "empty: found by walking up from the QC's folder",
    )

    def import_options(self) -> SmdImportOptions:
        return SmdImportOptions(
            up_axis=self.up_axis,
            global_scale=self.global_scale,
            rotation_mode=self.rotation_mode,
            weight_mode=self.weight_mode,
            bone_axis=self.bone_axis,
            use_custom_normals=self.use_custom_normals,
            keep_blank_materials=self.keep_blank_materials,
            find_textures=self.find_textures,
            game_folder=bpy.path.abspath(self.game_folder) if self.game_folder else "",  # (`//`: the .blend's)
        )

    def execute(self, context: bpy.types.Context) -> set[str]:
        options = self.import_options()
        return guarded(self, lambda: import_smd_files(context, self.selected_paths(), options), "Imported")

    def draw(self, context: bpy.types.Context) -> None:
        draw_import_options(self.layout, self)


def draw_import_options(layout: bpy.types.UILayout, operator: object) -> None:
    prepare_layout(layout)
    draw_panel(
        layout, operator, "IOGF_smd_import_geometry", "Geometry",
        ("use_custom_normals", "weight_mode", "keep_blank_materials", "find_textures", "game_folder"),
    )  # fmt: skip
    draw_panel(layout, operator, "IOGF_smd_import_armature", "Armature", ("bone_axis", "rotation_mode"))
    draw_panel(layout, operator, "IOGF_smd_import_transform", "Transform", ("up_axis", "global_scale"))


# The label names the Collection Exporter, which cannot write a QC; drops of .qc and .qci still reach the importer.
IOGF_FH_smd = file_handler(
    "IOGF_FH_smd", "Valve SMD/VTA", "import_scene.valve_smd", "export_scene.valve_smd", ".smd;.vta;.qc;.qci"
)


def menu_import(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    self.layout.operator(IMPORT_SCENE_OT_valve_smd.bl_idname, text="Valve SMD/VTA/QC (.smd, .vta, .qc)")


classes = (IMPORT_SCENE_OT_valve_smd, IOGF_FH_smd)
