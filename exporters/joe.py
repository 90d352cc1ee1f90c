"""Blender objects to JOE (all chosen objects merged into one model) and JPK (one member per object)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from typing import TypeVar, cast

import bpy
import numpy as np
from bpy.props import BoolProperty, StringProperty
from mathutils import Matrix

from ..common import mesh_io, track_settings
from ..common.conventions import JOE_STORED_NORMALS as STORED_NORMALS
from ..common.conventions import collector_paused
from ..common.operators import (
    ExportScopeMixin,
    PresetSafeExportHelper,
    Summary,
    axis_options,
    draw_panel,
    geometry_objects,
    guarded,
    has_faces,
    in_file_browser,
    prepare_layout,
    refuse_if_nothing_left,
    said_once,
)
from ..common.progress import Progress, progress
from ..formats import joe, jpk, vdrift_track
from ..formats.atomic import write_bytes_atomically, write_files_atomically
from ..formats.errors import FormatError
from ..qmap_compiler.parallel import ordered_map

Made = TypeVar("Made")


def object_triangles(
    context: bpy.types.Context, obj: bpy.types.Object, operator: ExportScopeMixin, matrix: Matrix | None = None,
    materials: bool = True,
) -> mesh_io.Triangles:
    """The object's triangles; `matrix`: its export_matrix, when the caller has it; `materials`: with each
    triangle's material (a pack's members do without)."""
    depsgraph = context.evaluated_depsgraph_get()
    with mesh_io.exported_mesh(obj, depsgraph, operator.apply_modifiers) as mesh:
        matrix = operator.export_matrix(obj) if matrix is None else matrix
        triangles = mesh_io.mesh_triangles(mesh, matrix, stored_normals=STORED_NORMALS, materials=materials)
    triangles.source_objects = [obj.name]
    for what, values in (("vertex positions", triangles.positions), ("normals", triangles.normals)):
        if not np.isfinite(values).all():
            raise FormatError(f"object {obj.name!r} has {what} that are NaN or infinite; fix them before exporting")
    return triangles


def joe_document(triangles: mesh_io.Triangles, label: str, warnings: list[str]) -> joe.JoeDocument:
    """The JOE model of `triangles`; `label` names it (the file, or the object and its pack member) in warnings
    and in the errors of VDrift's limits (joe.OverLimit for the face and index limits)."""
    if triangles.triangle_count == 0:
        raise FormatError(f"{label}: nothing to export (no faces)")
    table = _vertex_table(triangles)  # (without a UV map one (0, 0) is written, as VDrift's glass has it: no warning)
    limits: list[str] = []
    try:
        document = joe.document_from_triangles(triangles.positions, triangles.normals, triangles.uvs, table)
        joe.check_limits(document, limits)  # VDrift's, before anything is written
    except FormatError as error:
        raise type(error)(f"{label}: {error}") from None
    warnings += [f"{label}: {text}" for text in limits]
    if joe.normal_swap_would_fire(document):
        warnings.append(f"{label}: {NORMAL_SWAP}")
    return document


SPLIT_LARGE_MODELS = {
    "name": "Split Large Models",
    "default": True,
    "description": "Write a model over VDrift's limits (32,000 triangles, 65,536 distinct vertices, normals or UVs "
    "per file) as several models under them, numbered (name_2, name_3...), to be named in the track's list or "
    "the car's file; off: refuse it",
}


def joe_documents(
    triangles: mesh_io.Triangles, label: str, warnings: list[str], split: bool
) -> list[joe.JoeDocument]:
    """The model as one JOE document, or with `split`, when it is over VDrift's limits, as several consecutive runs
    of its triangles, each under them (halved again while one is over the index limit)."""
    whole_warnings: list[str] = []
    try:
        document = joe_document(triangles, label, whole_warnings)
        warnings += whole_warnings
        return [document]
    except joe.OverLimit as error:
        if not split:
            raise FormatError(f"{error} (Split Large Models, split_large_models=True, writes it as several)") from None
        limit = joe.VDRIFT_MAX_FACES
    count = triangles.triangle_count
    pieces = -(-count // limit)
    bounds = [count * k // pieces for k in range(pieces + 1)]
    documents: list[joe.JoeDocument] = []
    part_warnings: list[str] = []
    runs = list(itertools.pairwise(bounds))
    while runs:
        start, stop = runs.pop(0)
        try:
            documents.append(joe_document(_run(triangles, start, stop), label, part_warnings))
        except joe.OverLimit:
            if stop - start < 2:
                raise
            middle = (start + stop) // 2
            runs[:0] = [(start, middle), (middle, stop)]
    warnings += list(dict.fromkeys(part_warnings))  # (each part's notes once)
    return documents


def _run(triangles: mesh_io.Triangles, start: int, stop: int) -> mesh_io.Triangles:
    """Triangles start..stop of `triangles` (the vertex table is shared: vertices no run uses are not written)."""
    corners = slice(3 * start, 3 * stop)
    return mesh_io.Triangles(
        triangles.positions[corners], triangles.normals[corners],
        triangles.uvs[corners] if triangles.uvs is not None else None,
        vertex_positions=triangles.vertex_positions,
        corner_vertices=triangles.corner_vertices[corners] if triangles.corner_vertices is not None else None,
    )  # fmt: skip


def numbered(name: str, count: int, taken: set[str]) -> list[str]:
    """`name` and, for the further parts of a split model, `name_2`, `name_3`... (skipping names in `taken`)."""
    names = [name]
    number = 1
    while len(names) < count:
        number += 1
        if f"{name}_{number}" not in taken:
            names.append(f"{name}_{number}")
    return names


def split_note(label: str, triangles: int, names: list[str]) -> str:
    return (f"{label}: {triangles:,} triangles, over what VDrift loads from one model: written as {len(names)} "
            f"models under its limits ({', '.join(names)}); name them all where the game lists this model")


def unheld_data(objects: list[bpy.types.Object], operator: ExportScopeMixin) -> list[str]:
    """Warnings for what JOE models cannot hold (one UV map each, no colours, no shape keys)."""
    notes = (mesh_io.unheld_data_note(obj, "JOE", one_uv_map=True, colors=False,
                                      shapes_applied=operator.apply_modifiers) for obj in objects)  # fmt: skip
    return [note for note in notes if note is not None]


def chosen_objects(context: bpy.types.Context, operator: ExportScopeMixin) -> list[bpy.types.Object]:
    objects = geometry_objects(operator.objects_to_export(context))
    if not objects:
        raise FormatError(f"no mesh objects to export ({operator.scope_hint()})")
    return objects


def export_joe(context: bpy.types.Context, path: str, operator: ExportScopeMixin) -> Summary:
    summary = Summary(files=1, face_kind="triangles")
    objects = chosen_objects(context, operator)
    with progress(context, len(objects)) as tracker:
        parts = [object_triangles(context, obj, operator) for obj in tracker.each(objects)]
    kept = [(obj, part) for obj, part in zip(objects, parts, strict=True)
            if has_faces(obj.name, part.triangle_count, summary.warnings)]  # fmt: skip
    parts = [part for _, part in kept]
    summary.warnings += [f"{name}: no UV map; its corners get (0, 0)" for name in mesh_io.parts_without_uvs(parts)]
    summary.warnings += unheld_data([obj for obj, _ in kept], operator)
    refuse_if_nothing_left(len(parts), len(objects))
    triangles = mesh_io.merge_triangles(parts)
    name = os.path.basename(path)
    documents = joe_documents(triangles, name, summary.warnings, operator.split_large_models)
    stem, extension = os.path.splitext(path)
    paths = [part + extension for part in numbered(stem, len(documents), set())]
    if len(documents) > 1:
        summary.warnings.append(split_note(name, triangles.triangle_count, [os.path.basename(p) for p in paths]))
    write_files_atomically([(part, joe.write_joe(document)) for part, document in zip(paths, documents, strict=True)])
    summary.files = len(paths)
    summary.objects = len(parts)
    summary.faces = triangles.triangle_count
    return summary


def export_jpk(context: bpy.types.Context, path: str, operator: ExportScopeMixin) -> Summary:
    summary = Summary(files=1, face_kind="triangles")
    objects = chosen_objects(context, operator)
    with progress(context, len(objects)) as tracker:
        parts = list(zip(objects, member_triangles(context, objects, operator, tracker), strict=True))
    parts = [(obj, part) for obj, part in parts if has_faces(obj.name, part.triangle_count, summary.warnings)]
    summary.warnings += unheld_data([obj for obj, _ in parts], operator)
    refuse_if_nothing_left(len(parts), len(objects))
    names = member_names([obj for obj, _ in parts], summary.warnings)
    labels = [f"{obj.name} (pack member {name!r})" for (obj, _), name in zip(parts, names, strict=True)]

    batched = small_members([triangles for _, triangles in parts], labels)

    def member(index: int) -> tuple[list[joe.JoeDocument], list[str]]:  # (no bpy here: it runs on worker threads)
        if index in batched:
            return [], batched[index][1]  # (written already)
        warnings: list[str] = []
        return joe_documents(parts[index][1], labels[index], warnings, operator.split_large_models), warnings

    made = made_in_order(member, [triangles.triangle_count for _, triangles in parts])
    members: list[jpk.JpkMember] = []
    listed: list[tuple[str, bpy.types.Object]] = []  # (member, its object) for the track's object list
    taken = {name.removesuffix(".joe") for name in names}
    said: dict[str, list[str]] = {}  # a warning -> the members it concerns (a pack's members share many)
    for index, ((obj, triangles), name, label, (documents, warnings)) in enumerate(
        zip(parts, names, labels, made, strict=True)
    ):
        for text in warnings:
            said.setdefault(text.removeprefix(f"{label}: "), []).append(obj.name)
        summary.objects += 1
        summary.faces += triangles.triangle_count
        files = [batched[index][0]] if index in batched else [joe.write_joe(document) for document in documents]
        stems = numbered(name.removesuffix(".joe"), len(files), taken)
        taken.update(stems)
        if len(files) > 1:
            summary.warnings.append(split_note(obj.name, triangles.triangle_count, [f"{s}.joe" for s in stems]))
        members += [jpk.JpkMember(name=f"{stem}.joe", data=data) for stem, data in zip(stems, files, strict=True)]
        listed += [(f"{stem}.joe", obj) for stem in stems]
    summary.warnings += said_once(said, alone=dict(zip([obj.name for obj, _ in parts], labels, strict=True)))
    pack = jpk.write_jpk(jpk.JpkDocument(members=members))  # (checked before any file is written)
    track = track_settings.list_file(listed, summary.warnings) if getattr(operator, "write_track_list", True) else None
    if track is None:
        write_bytes_atomically(path, pack)  # (a whole new file: VDrift's own exporter left stale tails behind)
        return summary
    list_path = os.path.join(os.path.dirname(os.path.abspath(path)), track[0])
    if track[0] == vdrift_track.OBJECTS_FILE and os.path.exists(os.path.join(os.path.dirname(list_path),
                                                                             vdrift_track.LIST_FILE)):  # fmt: skip
        summary.warnings.append(f"{vdrift_track.OBJECTS_FILE} written beside a {vdrift_track.LIST_FILE}, which "
                                "VDrift reads instead: remove the list.txt for the game to use it")  # fmt: skip
    write_files_atomically([(path, pack), (list_path, vdrift_track.encode(track[1]))])  # both, or neither
    summary.files = 2
    return summary


def member_triangles(
    context: bpy.types.Context, objects: list[bpy.types.Object], operator: ExportScopeMixin, tracker: Progress
) -> list[mesh_io.Triangles]:
    """object_triangles of each object, without materials, a step of `tracker` each. Objects whose own mesh is
    written as it stands (see read_straight) are read together (_straight_triangles); the others one by one. The
    first error in the objects' order is raised, after the steps of the objects before it, as one by one."""
    context.evaluated_depsgraph_get()  # (every matrix_world up to date, as object_triangles' first call leaves it)
    matrix_of = operator.export_matrices()
    matrices = [matrix_of(obj) for obj in objects]
    straight = [index for index, (obj, matrix) in enumerate(zip(objects, matrices, strict=True))
                if read_straight(obj, matrix)]  # fmt: skip
    made: dict[int, mesh_io.Triangles | Exception] = dict(
        zip(straight, _straight_triangles([objects[index] for index in straight]), strict=True)
    )
    results: list[mesh_io.Triangles] = []
    for index, obj in enumerate(objects):
        part = made.get(index)
        if part is None:
            try:
                part = object_triangles(context, obj, operator, matrices[index], materials=False)
            except Exception as error:  # (raised after the steps of the objects before it)
                part = error
        if isinstance(part, Exception):
            raise part
        results.append(part)
        tracker.step(obj.name)
    return results


def read_straight(obj: bpy.types.Object, matrix: Matrix) -> bool:
    """Whether object_triangles would read the object's own mesh (mesh_io.exported_mesh), as its triangles, in the
    export's space: all its faces triangles, its export matrix the identity."""
    if not mesh_io.evaluation_keeps_mesh(obj) or not mesh_io.is_identity(matrix):
        return False
    return len(obj.data.loops) == 3 * len(obj.data.polygons)


_NO_MATERIALS = np.zeros(0, np.intc)


def _straight_triangles(objects: list[bpy.types.Object]) -> list[mesh_io.Triangles | Exception]:
    """object_triangles (no materials) of objects that read_straight, or the error it raises: the same arrays, read
    into one array per kind for all of them and checked together (a track's 2,000 small members: numpy's calls
    for each member cost more than their work)."""
    meshes = [obj.data for obj in objects]
    vertex_counts = np.array([len(mesh.vertices) for mesh in meshes], np.intp)
    corner_counts = np.array([len(mesh.loops) for mesh in meshes], np.intp)
    vertex_ends, corner_ends = np.cumsum(vertex_counts).tolist(), np.cumsum(corner_counts).tolist()
    positions = np.empty(3 * sum(vertex_ends[-1:]), np.float32)
    corner_vert = np.empty(sum(corner_ends[-1:]), np.intc)
    normals = np.empty(3 * len(corner_vert), np.float32)
    stored = np.zeros(3 * len(corner_vert), np.float32)
    uvs = np.empty(2 * len(corner_vert), np.float32)
    has_stored = np.zeros(len(meshes), bool)
    has_uvs: list[bool] = []
    vertex_start = corner_start = 0
    for number, (mesh, vertex_end, corner_end) in enumerate(zip(meshes, vertex_ends, corner_ends, strict=True)):
        if vertex_end > vertex_start:
            mesh.attributes["position"].data.foreach_get("vector", positions[3 * vertex_start : 3 * vertex_end])
        active_uvs = mesh.uv_layers.active
        has_uvs.append(active_uvs is not None)
        if corner_end > corner_start:
            corners, vectors = slice(corner_start, corner_end), slice(3 * corner_start, 3 * corner_end)
            mesh.attributes[".corner_vert"].data.foreach_get("value", corner_vert[corners])
            read_corner_normals(mesh, normals[vectors])
            attribute = mesh.attributes.get(STORED_NORMALS)
            if attribute is not None and attribute.domain == "CORNER" and attribute.data_type == "FLOAT_VECTOR":
                attribute.data.foreach_get("vector", stored[vectors])
                has_stored[number] = True
            if active_uvs is not None:
                active_uvs.uv.foreach_get("vector", uvs[2 * corner_start : 2 * corner_end])
        vertex_start, corner_start = vertex_end, corner_end
    positions, normals = positions.reshape(-1, 3), normals.reshape(-1, 3)
    corner_member = np.repeat(np.arange(len(meshes)), corner_counts)
    _mend_broken_normals(meshes, normals, corner_member, corner_ends)
    normals = _prefer_stored_normals(meshes, normals, stored.reshape(-1, 3), has_stored, corner_member, corner_ends)
    corner_rows = corner_vert + np.repeat(np.cumsum(vertex_counts) - vertex_counts, corner_counts)
    corner_positions = np.take(positions, corner_rows, axis=0)  # (quicker than indexing the rows)
    errors = _non_finite(objects, positions, corner_rows, normals, corner_member)
    uvs = uvs.reshape(-1, 2)
    results: list[mesh_io.Triangles | Exception] = []
    vertex_start = corner_start = 0
    for number, (obj, vertex_end, corner_end) in enumerate(zip(objects, vertex_ends, corner_ends, strict=True)):
        error = errors.get(number)
        if error is not None:
            results.append(error)
        else:
            corners = slice(corner_start, corner_end)
            part = mesh_io.Triangles(
                corner_positions[corners], normals[corners], uvs[corners] if has_uvs[number] else None,
                material_indices=_NO_MATERIALS, vertex_positions=positions[vertex_start:vertex_end],
                corner_vertices=corner_vert[corners],
            )  # fmt: skip
            part.source_objects = [obj.name]
            results.append(part)
        vertex_start, corner_start = vertex_end, corner_end
    return results


def read_corner_normals(mesh: bpy.types.Mesh, out: np.ndarray) -> None:
    """The corner normals Blender gives, into out (flat): as they are, even NaN (see _mend_broken_normals)."""
    mesh.corner_normals.foreach_get("vector", out)


def _mend_broken_normals(
    meshes: list[bpy.types.Mesh], normals: np.ndarray, corner_member: np.ndarray, corner_ends: list[int]
) -> None:  # fmt: skip
    """mesh_io.finite_corner_normals of each mesh with a normal that is not finite (Blender 4.4 at times gives NaN
    on a degenerate face), in place: the export takes the face's normal as the one-object path does."""
    if np.isfinite(normals).all():  # (the usual case: no mesh by mesh)
        return
    for number in np.unique(corner_member[~np.isfinite(normals).all(axis=1)]).tolist():
        corners = slice(corner_ends[number - 1] if number else 0, corner_ends[number])
        mesh_io.finite_corner_normals(meshes[number], normals[corners])


def _prefer_stored_normals(
    meshes: list[bpy.types.Mesh], normals: np.ndarray, stored: np.ndarray, has_stored: np.ndarray,
    corner_member: np.ndarray, corner_ends: list[int],
) -> np.ndarray:  # fmt: skip
    """mesh_io.prefer_stored_normals of every mesh: the stored vectors of the meshes where all match (an untouched
    import) at once; each other mesh with stored normals as that function does it."""
    if not has_stored.any():
        return normals
    changed = ~mesh_io.unedited(stored, normals)
    mixed = np.zeros(len(meshes), bool)
    mixed[corner_member[changed]] = True
    mixed &= has_stored
    if has_stored.all() and not mixed.any():  # (the usual case: a pack imported and left alone)
        return stored
    np.copyto(normals, stored, where=(has_stored & ~mixed)[corner_member, None])
    for number in np.flatnonzero(mixed).tolist():
        corners = slice(corner_ends[number - 1] if number else 0, corner_ends[number])
        normals[corners] = mesh_io.prefer_stored_normals(meshes[number], normals[corners].copy(), STORED_NORMALS)
    return normals


def _non_finite(
    objects: list[bpy.types.Object], positions: np.ndarray, corner_rows: np.ndarray, normals: np.ndarray,
    corner_member: np.ndarray,
) -> dict[int, FormatError]:  # fmt: skip
    """object_triangles' error for each object whose corners have positions or normals that are NaN or infinite
    (the positions of vertices no corner uses do not count)."""
    errors: dict[int, FormatError] = {}
    if np.isfinite(positions).all() and np.isfinite(normals).all():  # (the usual case: no row by row)
        return errors
    bad_positions = ~np.isfinite(positions).all(axis=1)[corner_rows]
    for what, bad in (("normals", ~np.isfinite(normals).all(axis=1)), ("vertex positions", bad_positions)):
        for number in np.unique(corner_member[bad]).tolist():  # (positions are said first: they replace normals)
            errors[number] = FormatError(f"object {objects[number].name!r} has {what} that are NaN or infinite; "
                                         "fix them before exporting")  # fmt: skip
    return errors


THREADED_MEMBER = 5_000  # triangles: smaller members are made all at once (threads would only wait)


def small_members(parts: list[mesh_io.Triangles], labels: list[str]) -> dict[int, tuple[bytes, list[str]]]:
    """The members under THREADED_MEMBER triangles made all at once (one numpy call per array for all of them, not
    for each: a track's 2,000 members), each as joe_document and write_joe make it: (the file, warnings), by member.
    A member the one-member path would refuse, split or warn of anything but the normal swap for is left out: that
    path makes it."""
    small = [index for index, part in enumerate(parts) if 0 < part.triangle_count < THREADED_MEMBER]
    if not small:
        return {}
    tables = [_vertex_table(parts[index]) for index in small]
    made = joe.files_from_many_triangles(
        [(parts[i].positions, parts[i].normals, parts[i].uvs, table) for i, table in zip(small, tables, strict=True)]
    )
    result: dict[int, tuple[bytes, list[str]]] = {}
    for index, file in zip(small, made, strict=True):
        if file is not None:
            result[index] = (file[0], [f"{labels[index]}: {NORMAL_SWAP}"] if file[1] else [])
    return result


NORMAL_SWAP = "VDrift's normal-swap heuristic would fire on this model and swap its normals"


def _vertex_table(triangles: mesh_io.Triangles) -> tuple[np.ndarray, np.ndarray] | None:
    if triangles.vertex_positions is not None and triangles.corner_vertices is not None:
        return (triangles.vertex_positions, triangles.corner_vertices)
    return None


def made_in_order(member: Callable[[int], Made], sizes: list[int]) -> list[Made]:
    """member(i) for each member, in order: large ones side by side on the cores (numpy array work, no bpy), small
    ones in turn, where a thread's share of numpy's short calls costs more in waiting for the interpreter lock
    than it saves (a track's 2,000 members of a few hundred triangles: 3.4 s threaded, 2.2 s in turn)."""
    large = [index for index, size in enumerate(sizes) if size >= THREADED_MEMBER]

    def outcome(index: int) -> tuple[Made | None, Exception | None]:  # (the first error in pack order is raised)
        try:
            return member(index), None
        except Exception as error:
            return None, error

    made = dict(zip(large, ordered_map(outcome, large), strict=True))
    results: list[Made] = []
    for index in range(len(sizes)):
        if index not in made:
            results.append(member(index))
            continue
        result, error = made[index]
        if error is not None:
            raise error
        results.append(cast(Made, result))
    return results


def member_names(objects: list[bpy.types.Object], warnings: list[str]) -> list[str]:
    """Each object's pack member, "<name>.joe": the name of the file or member it was imported from (kept when
    Blender had to change it, see mesh_io.original_name), else its Blender name. No two objects get one name:
    objects named as they were imported claim theirs first, and an object whose name is taken falls back to its
    Blender name, numbered if that is taken too, with a warning."""
    wanted = [mesh_io.original_name(obj) for obj in objects]
    taken = {name for obj, name in zip(objects, wanted, strict=True) if name == obj.name}
    chosen = []
    for obj, name in zip(objects, wanted, strict=True):
        if name != obj.name:
            unique = name if name not in taken else _unused_name(obj.name, taken)
            if unique != name:
                warnings.append(f"{obj.name}: pack member {name + '.joe'!r} is another object's; written as "
                                f"{unique + '.joe'!r}")  # fmt: skip
            name = unique
            taken.add(name)
        chosen.append(f"{name}.joe")
    return chosen


def _unused_name(name: str, taken: set[str]) -> str:
    number = 0
    candidate = name
    while candidate in taken:
        number += 1
        candidate = f"{name}.{number:03d}"
    return candidate


# ------------------------------------------------------------------------------------------------ operators


def draw_export_options(layout: bpy.types.UILayout, operator: object, context: bpy.types.Context) -> None:
    prepare_layout(layout)
    scope = ("export_selected_objects",) if in_file_browser(context) else ()
    track = ("write_track_list",) if hasattr(operator, "write_track_list") else ()
    draw_panel(
        layout, operator, "IOGF_joe_export_include", "Include",
        (*scope, "apply_modifiers", "split_large_models", *track),
    )  # fmt: skip
    draw_panel(
        layout, operator, "IOGF_joe_export_transform", "Transform",
        ("apply_transform", "global_scale", "forward_axis", "up_axis"),
    )  # fmt: skip


@axis_options("export")
class EXPORT_SCENE_OT_joe(bpy.types.Operator, PresetSafeExportHelper, ExportScopeMixin):
    """Export mesh objects as one VDrift JOE model (triangulated, CCW, V flipped)"""

    bl_idname = "export_scene.joe"
    bl_label = "Export JOE"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".joe"
    filter_glob: StringProperty(default="*.joe", options={"HIDDEN"})
    split_large_models: BoolProperty(**SPLIT_LARGE_MODELS)

    def execute(self, context: bpy.types.Context) -> set[str]:
        return guarded(self, lambda: export_joe(context, self.filepath, self), "Exported")

    def draw(self, context: bpy.types.Context) -> None:
        draw_export_options(self.layout, self, context)


@axis_options("export")
class EXPORT_SCENE_OT_jpk(bpy.types.Operator, PresetSafeExportHelper, ExportScopeMixin):
    """Export mesh objects as a VDrift JPK pack, one JOE member per object"""

    bl_idname = "export_scene.jpk"
    bl_label = "Export JPK"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".jpk"
    filter_glob: StringProperty(default="*.jpk", options={"HIDDEN"})
    split_large_models: BoolProperty(**SPLIT_LARGE_MODELS)
    write_track_list: BoolProperty(
        name="Track Object List",
        default=True,
        description="When the objects carry a track's object settings (imported with Track Object Settings), "
        "write the track's list.txt or objects.txt beside the pack too, from them: one entry per member in the "
        "pack's order, settings left alone written as they were read",
    )

    def execute(self, context: bpy.types.Context) -> set[str]:
        with collector_paused():  # (a track's thousands of members make tens of thousands of Python objects)
            return guarded(self, lambda: export_jpk(context, self.filepath, self), "Exported")

    def draw(self, context: bpy.types.Context) -> None:
        draw_export_options(self.layout, self, context)


def menu_export(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    self.layout.operator(EXPORT_SCENE_OT_joe.bl_idname, text="VDrift JOE (.joe)")
    self.layout.operator(EXPORT_SCENE_OT_jpk.bl_idname, text="VDrift JPK pack (.jpk)")


classes = (EXPORT_SCENE_OT_joe, EXPORT_SCENE_OT_jpk)
