"""Blender objects to IQE: one mesh block per (object, material), all UV maps and colour attributes, chosen
generic attributes as custom arrays, per-corner normals, weights, the skeleton and sampled actions.

The whole document is built and checked before anything is written, and the file is replaced atomically.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, IntProperty, StringProperty
from mathutils import Matrix

from ..common import armature as armature_helpers
from ..common import iqe_rig as rig_math
from ..common import mesh_io
from ..common.conventions import (
    COMMENT,
    CUSTOM_TAG,
    IMPORT_COLORS,
    IQE_COLOR_COMPONENTS,
    IQE_FILE_VERTEX,
    IQE_UV_COMPONENTS,
    linear_to_srgb,
)
from ..common.conventions import IQE_STORED_NORMALS as STORED_NORMALS
from ..common.operators import (
    ExportScopeMixin,
    PresetSafeExportHelper,
    Summary,
    axis_options,
    counted,
    draw_panel,
    geometry_objects,
    guarded,
    has_faces,
    in_file_browser,
    prepare_layout,
    refuse_if_nothing_left,
)
from ..common.progress import Progress, progress
from ..formats import iqe
from ..formats.atomic import write_bytes_atomically
from ..formats.errors import FormatError
from ..formats.names import UNQUOTABLE
from ..formats.pieces import made_in_turn
from ..formats.rows import any_per_row, count_per_row, row_lengths, rows_at
from ..qmap_compiler.memory import freed_memory_kept
from ..qmap_compiler.parallel import made_on_cores
from . import iqe_rig

MAX_SKINNED_JOINTS = 256
EXPORT_ATTRIBUTES = (
    ("IQE", "From IQE", "Generic attributes that were custom arrays in an imported IQE file"),
    ("ALL", "All", "Every float attribute on points or face corners (besides UVs, colours and normals)"),
    ("NONE", "None", "No generic attributes"),
)
_ATTRIBUTE_WIDTHS = {"FLOAT": (1, "value"), "FLOAT2": (2, "vector"), "FLOAT_VECTOR": (3, "vector"),
                     "QUATERNION": (4, "value"), "FLOAT_COLOR": (4, "color"), "BYTE_COLOR": (4, "color")}  # fmt: skip
_INTERNAL = {"position", STORED_NORMALS, IQE_FILE_VERTEX, "sharp_face", "sharp_edge", "material_index", "custom_normal"}


@dataclass
class _Custom:
    """One custom array slot of the document."""

    slot: int
    component: str
    width: int
    name: str


@dataclass
class _Customs:
    by_name: dict[str, _Custom] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def claim(self, name: str, width: int, component: str = "float", slot: int | None = None) -> _Custom | None:
        existing = self.by_name.get(name)
        if existing is not None:
            if existing.width != width:
                self.warnings.append(f"attribute {name!r} has different sizes on different objects; skipped")
                return None
            if existing.component != component:  # (a colour on one object, plain numbers on another: keep both)
                existing.component = "float"
            return existing
        used = {custom.slot for custom in self.by_name.values()}
        if slot is None or slot in used:
            free = [s for s in range(10) if s not in used]
            if not free:
                self.warnings.append(f"attribute {name!r} skipped: IQE has only 10 custom arrays")
                return None
            slot = free[0]
        custom = _Custom(slot, component, width, name)
        self.by_name[name] = custom
        return custom


@dataclass
class ExportSettings:
    export_normals: bool = True
    export_uvs: bool = True
    export_colors: str = "SRGB"
    export_attributes: str = "IQE"
    export_tangents: bool = False
    triangulate: bool = True
    export_skeleton: bool = True
    deform_only: bool = False
    export_animations: str = "ALL"
    bake_pose: bool = True
    object_motion: bool = True
    max_influences: int = 4
    export_comment: bool = True
    flip_v: bool = True  # write 1 - v, as every IQE exporter does (the compiler does not flip)
    reverse_winding: bool = True  # clockwise front faces, the IQE convention (Blender's are counter-clockwise)


# --------------------------------------------------------------------------------------------- mesh blocks


def _faces(mesh: bpy.types.Mesh, triangulate: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(loop of each face corner, face sizes, face material indices)."""
    materials = mesh_io.face_materials(mesh)
    if len(mesh.loops) == 3 * len(mesh.polygons):  # (faces have 3 corners or more: all are triangles, in order)
        return np.arange(len(mesh.loops), dtype=np.intc), np.full(len(mesh.polygons), 3, np.int64), materials
    starts, sizes = mesh_io.face_corners(mesh)
    if triangulate and not (sizes == 3).all():
        triangles = len(mesh.loop_triangles)
        loops = np.empty(triangles * 3, np.intc)
        mesh.loop_triangles.foreach_get("loops", loops)
        polygons = np.empty(triangles, np.intc)
        mesh.loop_triangle_polygons.foreach_get("value", polygons)
        return loops, np.full(triangles, 3, np.int64), materials[polygons]
    # Polygons as they are (a triangle is its own loop triangle: its loops in order).
    loops = (np.repeat(starts - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))).astype(np.intc)
    return loops, sizes.astype(np.int64), materials


def _color_values(attribute: bpy.types.Attribute, space: str) -> np.ndarray:
    values = mesh_io.corner_floats(attribute.data, "color", 4).astype(np.float64)
    if space == "SRGB":
        values[:, :3] = linear_to_srgb(values[:, :3])
    return values.astype(np.float32)


@dataclass
class _Layers:
    """Per-corner (C, k) and per-vertex (V, k) arrays going into a block, keyed by what they become."""

    corner: dict[str, np.ndarray] = field(default_factory=dict)
    point: dict[str, np.ndarray] = field(default_factory=dict)


def _gather_layers(
    obj: bpy.types.Object, mesh: bpy.types.Mesh, corner_vert: np.ndarray, settings: ExportSettings, customs: _Customs
) -> _Layers:
    layers = _Layers()
    if settings.export_normals:
        # (unedited file normals: the stored vectors, exactly)
        normals = mesh_io.blender_corner_normals(mesh)
        stored = mesh.attributes.get(STORED_NORMALS)
        per_vertex = stored is not None and stored.domain == "POINT"  # (per corner once the import merged vertices)
        point_normals = _unedited_point_normals(stored, normals, corner_vert) if per_vertex else None
        if point_normals is not None:
            layers.point["normal"] = point_normals
        else:
            layers.corner["normal"] = mesh_io.prefer_stored_normals(mesh, normals, STORED_NORMALS,
                                                                    corner_vert if per_vertex else None)  # fmt: skip
    handled = {STORED_NORMALS}
    tags = _custom_tags(obj)
    if settings.export_uvs and len(mesh.uv_layers):
        # the texture coordinates: the render UV map, but not one the file had as a custom array (a lightmap)
        own = [uv for uv in mesh.uv_layers if uv.name not in tags]
        main = next((uv for uv in own if uv.active_render), own[0] if own else None)
        for uv in mesh.uv_layers:
            values = mesh_io.corner_floats(uv.uv, "vector", 2)
            if settings.flip_v:
                values[:, 1] = 1.0 - values[:, 1]
            handled.add(uv.name)
            if uv == main:
                layers.corner["texcoord"] = values
            elif (custom := _claim_tagged(customs, uv.name, 2, tags)) is not None:  # a custom float 2, like vt
                layers.corner[f"custom{custom.slot}"] = values
    if settings.export_colors == "NONE":  # (nor as custom arrays: a colour attribute is a colour)
        handled.update(attribute.name for attribute in mesh.color_attributes)
    elif len(mesh.color_attributes):
        colors = mesh.color_attributes
        index = colors.render_color_index if colors.render_color_index >= 0 else 0
        render = colors[index] if index < len(colors) else colors[0]
        own = [attribute for attribute in colors if attribute.name not in tags]  # (not a file's custom array)
        main_name = render.name if render.name not in tags else own[0].name if own else None
        for attribute in colors:
            handled.add(attribute.name)
            target = layers.corner if attribute.domain == "CORNER" else layers.point
            if attribute.domain not in {"CORNER", "POINT"}:
                continue
            values = _color_values(attribute, settings.export_colors)
            if attribute.name == main_name:
                target["color"] = values
            elif (custom := _claim_colour(customs, attribute.name, tags)) is not None:
                target[f"custom{custom.slot}"] = values
    if settings.export_attributes != "NONE":
        _gather_generic(mesh, settings.export_attributes, handled, layers, customs, tags, settings.flip_v)
    if settings.export_tangents:
        _gather_tangents(mesh, layers, customs, settings.flip_v)
    return layers


_POINT_NORMALS = True  # (tests switch it off: every normal per corner, as prefer_stored_normals gives them)


def _unedited_point_normals(
    attribute: bpy.types.Attribute, normals: np.ndarray, corner_vert: np.ndarray
) -> np.ndarray | None:
    """The stored normals per point (V, 3), when they are a float vector attribute on points and every corner's
    normal still says its point's: prefer_stored_normals would give each corner its point's row, the same numbers,
    and a point layer keeps them once a vertex (its corners are not compared, nor gathered, nor stacked: a
    100-mesh file's 290k corner rows). None otherwise."""
    if not _POINT_NORMALS or attribute.data_type != "FLOAT_VECTOR":
        return None
    stored = mesh_io.corner_floats(attribute.data, "vector", 3)
    length = np.sqrt(np.einsum("ij,ij->i", stored, stored))  # (as prefer_stored_normals: per point, then spread)
    return stored if mesh_io.unedited(rows_at(stored, corner_vert), normals, length[corner_vert]).all() else None


def _custom_tags(obj: bpy.types.Object) -> dict[str, str]:
    """What the importer noted of each custom array (`slot component size name`), by attribute or UV map."""
    source = obj.data if isinstance(obj.data, bpy.types.Mesh) else None
    return {str(key): str(value) for key, value in source.get(CUSTOM_TAG, {}).items()} if source is not None else {}


def _claim_tagged(customs: _Customs, name: str, width: int, tags: dict[str, str]) -> _Custom | None:
    """The custom array for an attribute: in its imported slot and under its declared name when it has a tag."""
    tag = tags.get(name, "").split(" ", 3)
    if len(tag) == 4 and tag[0].isdigit() and tag[2].isdigit() and int(tag[2]) == width:
        return customs.claim(tag[3] or name, width, tag[1], int(tag[0]))
    return customs.claim(name, width)


def _claim_colour(customs: _Customs, name: str, tags: dict[str, str]) -> _Custom | None:
    """A further colour: 4 normalised bytes, as IQE exporters write second colour layers (and as the import
    reads them back into colours), or the custom array it was imported from."""
    if name in tags:
        return _claim_tagged(customs, name, 4, tags)
    return customs.claim(name, 4, next(iter(IQE_COLOR_COMPONENTS)))


def _gather_generic(
    mesh: bpy.types.Mesh, mode: str, handled: set[str], layers: _Layers, customs: _Customs, tags: dict[str, str],
    flip_v: bool,
) -> None:  # fmt: skip
    for attribute in mesh.attributes:
        name = attribute.name
        if name in handled or name.startswith(".") or name in _INTERNAL or attribute.domain not in {"POINT", "CORNER"}:
            continue
        if attribute.data_type not in _ATTRIBUTE_WIDTHS or (mode == "IQE" and name not in tags):
            continue
        width, key = _ATTRIBUTE_WIDTHS[attribute.data_type]
        custom = _claim_tagged(customs, name, width, tags)  # the declared name (see import)
        if custom is None:
            continue
        values = mesh_io.corner_floats(attribute.data, key, width)
        if width == 2 and flip_v and custom.component in IQE_UV_COMPONENTS and name not in tags:
            values[:, 1] = 1.0 - values[:, 1]  # a 2-float array is read back as a UV map: its V flipped like one
            # (one the import kept as an attribute, beyond Blender's 8 UV maps, holds the file's values as they are)
        target = layers.corner if attribute.domain == "CORNER" else layers.point
        target[f"custom{custom.slot}"] = values


def _gather_tangents(mesh: bpy.types.Mesh, layers: _Layers, customs: _Customs, flip_v: bool) -> None:
    if not len(mesh.uv_layers):
        customs.warnings.append(f"{mesh.name}: no UV map, so no tangents")
        return
    try:
        mesh.calc_tangents()
    except RuntimeError as error:
        customs.warnings.append(f"{mesh.name}: no tangents ({error})")
        return
    tangents = np.empty((len(mesh.loops), 4), np.float32)
    tangents[:, :3] = mesh_io.corner_floats(mesh.loops, "tangent", 3)
    signs = np.empty(len(mesh.loops), np.float32)
    mesh.loops.foreach_get("bitangent_sign", signs)
    tangents[:, 3] = -signs if flip_v else signs  # flipping V turns the bitangent around
    layers.corner["tangent"] = tangents


def _split_vertices(
    vertex_of_corner: np.ndarray, corner_data: np.ndarray | list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """New vertices for corners of one block: (a corner of each new vertex, new vertex of each corner).

    Corners share a vertex when they use the same Blender vertex with the same corner data (a (C, k) table, or the
    columns of its 32-bit words); new vertices are ordered by Blender vertex, so an imported, untouched mesh keeps
    its vertex order.
    """
    vertex = vertex_of_corner.astype(np.int64)
    columns = corner_data if isinstance(corner_data, list) else _word_columns(corner_data)
    corners = _corners_unlike_their_vertex(vertex, columns)
    if len(corners):
        rows = np.column_stack([vertex[corners].astype(np.uint32), *(rows_at(column, corners) for column in columns)])
        _, inverse = np.unique(rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))),
                               return_inverse=True)  # fmt: skip
        sub = np.zeros(len(vertex), np.int64)
        sub[corners] = _rank_in_vertex(inverse.ravel(), vertex[corners]) + 1
        key = vertex * (int(sub.max()) + 1) + sub
    else:
        key = vertex
    size = int(key.max()) + 1 if len(key) else 0
    if size > 4 * len(key) + 1024:  # sparse keys: sort
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        return first, inverse.ravel()
    # Dense keys: a table instead of a sort. Any corner of a key may represent it (its data is the key's).
    present = np.zeros(size, bool)
    present[key] = True
    owner = np.empty(size, np.int64)
    owner[key] = np.arange(len(key))
    if size == len(key) and present.all():  # (a corner per key, every key used: each key is its own rank)
        return owner, key
    rank = np.cumsum(present) - 1
    return owner[present], rank[key]


def _word_columns(table: np.ndarray) -> list[np.ndarray]:
    """The 32-bit words of each row of a (N, ...) table, a column each (compared column by column, the rows need
    not be copied side by side)."""
    words = np.ascontiguousarray(table).reshape(len(table), -1).view(np.uint32)
    return [words[:, column] for column in range(words.shape[1])]


def _rank_in_vertex(distinct: np.ndarray, vertex: np.ndarray) -> np.ndarray:
    """Each corner's distinct row (numbered in some order) renumbered among its vertex's, in the same order: the
    keys then count the most rows of one vertex, not of all vertices (a dense table, not a sort, even when many
    vertices are split)."""
    vertex_of_row = np.empty(int(distinct.max()) + 1, np.int64)
    vertex_of_row[distinct] = vertex
    order = np.argsort(vertex_of_row, kind="stable")
    group_start = np.searchsorted(vertex_of_row[order], vertex_of_row[order])
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order)) - group_start
    return rank[distinct]


def _corners_unlike_their_vertex(vertex: np.ndarray, corner_data: np.ndarray | list[np.ndarray]) -> np.ndarray:
    """The corners of every vertex whose corners do not all hold the same data, bit for bit (a (C, k) table, or
    the columns of its 32-bit words)."""
    columns = corner_data if isinstance(corner_data, list) else _word_columns(corner_data)
    if not columns or not len(vertex) or int(np.bincount(vertex).max()) < 2:
        return np.zeros(0, np.int64)  # (only a vertex of several corners can be split)
    # Each corner against one corner of its vertex (all are equal when each equals that one), column by column:
    # a few whole-array steps, where comparing rows as single items goes through numpy's slow path for them
    # (each vertex's own words looked up: a table of one row a vertex stays in the CPU caches)
    standing = np.zeros(int(vertex.max()) + 1, np.int64)  # (0 for a vertex of no corner: looked up, not used)
    standing[vertex] = np.arange(len(vertex))
    differs = rows_at(rows_at(columns[0], standing), vertex) != columns[0]
    for column in columns[1:]:
        differs |= rows_at(rows_at(column, standing), vertex) != column
    split = np.zeros(len(standing), bool)
    split[vertex[differs]] = True
    return np.flatnonzero(split[vertex])


@dataclass
class _ObjectData:
    name: str
    positions: np.ndarray  # (V, 3) export space
    corner_vert: np.ndarray
    layers: _Layers
    loops: np.ndarray
    sizes: np.ndarray
    face_materials: np.ndarray
    material_names: list[str]
    weights: tuple[np.ndarray, np.ndarray] | None  # (V, K) joints and weights, limited and normalised
    reverse: bool = True  # write each face's corners in reverse order
    file_vertex: np.ndarray | None = None  # per corner: its vertex in the imported file (vertices merged on import)


def _object_data(
    context: bpy.types.Context,
    obj: bpy.types.Object,
    operator: ExportScopeMixin,
    settings: ExportSettings,
    customs: _Customs,
    joint_of_name: dict[str, int] | None,
    export_matrix: Callable[[bpy.types.Object], Matrix] | None = None,
) -> _ObjectData | None:
    """The object's export data, or None when its mesh has no faces. `export_matrix`: the operator's
    `export_matrices()`, its options read once for all objects."""
    matrix = (export_matrix or operator.export_matrix)(obj)
    bone_groups = [g.name for g in obj.vertex_groups if joint_of_name is not None and g.name in joint_of_name]
    reader = armature_helpers.vertex_weight_reader(obj, bone_groups) if bone_groups else None
    try:
        with _modifiers_off(obj, reader, operator.apply_modifiers):
            depsgraph = context.evaluated_depsgraph_get()
            # (the object's own mesh where evaluating could not change it; calc_tangents writes into the mesh it
            # is given, so tangents are read from a copy)
            read_mesh = mesh_io.evaluated_mesh if settings.export_tangents else mesh_io.exported_mesh
            with read_mesh(obj, depsgraph, operator.apply_modifiers or reader is not None) as mesh:
                if not len(mesh.polygons):  # edges or points only (a curve without bevel): nothing to write
                    return None
                positions = mesh_io.corner_floats(mesh.attributes["position"].data, "vector", 3)
                corner_vert = np.empty(len(mesh.loops), np.intc)
                mesh.attributes[".corner_vert"].data.foreach_get("value", corner_vert)
                if settings.triangulate and len(mesh.loops) != 3 * len(mesh.polygons):  # (triangles need none)
                    mesh.calc_loop_triangles()
                loops, sizes, face_materials = _faces(mesh, settings.triangulate)
                layers = _gather_layers(obj, mesh, corner_vert, settings, customs)
                file_vertex = _file_vertices(mesh)
                weights = None
                if joint_of_name is not None:
                    joints = np.array([joint_of_name[name] for name in bone_groups], np.int64)
                    dense = reader.read(mesh) if reader is not None else np.zeros((len(mesh.vertices), 0), np.float32)
                    weights = _limited_weights(joints, dense, settings.max_influences)
                    _note_cut_influences(obj.name, dense, settings.max_influences, customs.warnings)
                material_names = [_material_name(slot.material) for slot in obj.material_slots] or [""]
    finally:
        if reader is not None:
            reader.remove()
    mirrored = matrix.determinant() < 0.0  # a mirroring transform turns faces inside out: their order turns back
    if not mesh_io.is_identity(matrix):
        positions = mesh_io.transform_points(positions, matrix).astype(np.float32)
        if "normal" in layers.point:  # (transformed per corner, as always: the same rows, the same numbers)
            layers.corner["normal"] = rows_at(layers.point.pop("normal"), corner_vert)
        if "normal" in layers.corner:
            layers.corner["normal"] = mesh_io.transform_normals(layers.corner["normal"], matrix).astype(np.float32)
        if "tangent" in layers.corner:
            tangent = layers.corner["tangent"]
            tangent[:, :3] = _transform_directions(tangent[:, :3], matrix)
            if mirrored:
                tangent[:, 3] *= -1.0
    name = _clean(str(obj.get(rig_math.ORIGINAL_NAME, obj.name)), "mesh", customs.warnings)
    material_names = [_clean(material, "material", customs.warnings) for material in material_names]
    return _ObjectData(name, positions, corner_vert, layers, loops, sizes, face_materials, material_names, weights,
                       reverse=settings.reverse_winding != mirrored, file_vertex=file_vertex)  # fmt: skip


def _file_vertices(mesh: bpy.types.Mesh) -> np.ndarray | None:
    """Each corner's vertex in the file it was imported from, where the import merged the file's vertices."""
    attribute = mesh.attributes.get(IQE_FILE_VERTEX)
    if attribute is None or attribute.domain != "CORNER" or attribute.data_type != "INT":
        return None
    values = np.empty(len(mesh.loops), np.int32)
    attribute.data.foreach_get("value", values)
    return values



_STRAIGHT = True  # (tests switch it off: every object read by _object_data)
_STRAIGHT_CORNERS = 1 << 16  # consecutive objects read together, up to about this many corners at a time


def _reads_straight(
    obj: bpy.types.Object, settings: ExportSettings, export_matrix: Callable[[bpy.types.Object], Matrix]
) -> bool:
    """Whether _object_data, for an object that is not skinned, would read its own mesh as it stands (see
    mesh_io.exported_mesh), all triangles, in the export's space, with nothing to read but positions, corners,
    materials, normals and one UV map that is the texture coordinates: then _straight_objects_data reads it with
    its neighbours."""
    if not _STRAIGHT or settings.export_tangents or not mesh_io.evaluation_keeps_mesh(obj):
        return False
    mesh = obj.data
    if not len(mesh.polygons) or len(mesh.loops) != 3 * len(mesh.polygons) or len(mesh.color_attributes):
        return False
    if not mesh_io.is_identity(export_matrix(obj)):
        return False
    tags = _custom_tags(obj)
    if settings.export_attributes == "ALL" or (settings.export_attributes == "IQE" and tags):
        return False  # (generic attributes to look at)
    uv_maps = mesh.uv_layers if settings.export_uvs else ()
    return len(uv_maps) == 0 or (len(uv_maps) == 1 and uv_maps[0].name not in tags)


def _straight_objects_data(
    objects: list[bpy.types.Object], settings: ExportSettings, customs: _Customs
) -> list[_ObjectData]:
    """_object_data of objects that _reads_straight, each kind of array read into one array for all of them and
    worked on at once (their UVs flipped, their stored normals checked against Blender's), then cut back into
    views: the same arrays, the same warnings in the same order (a file of many small meshes: numpy's and bpy's
    cost per call, paid for each object, was more than their work)."""
    if not objects:
        return []
    meshes = [obj.data for obj in objects]
    vertex_ends = np.cumsum([len(mesh.vertices) for mesh in meshes]).tolist()
    corner_ends = np.cumsum([len(mesh.loops) for mesh in meshes]).tolist()
    face_ends = np.cumsum([len(mesh.polygons) for mesh in meshes]).tolist()
    bounds = list(zip([0, *vertex_ends[:-1]], vertex_ends, [0, *corner_ends[:-1]], corner_ends,
                      [0, *face_ends[:-1]], face_ends, strict=True))  # fmt: skip
    positions = np.empty((vertex_ends[-1], 3), np.float32)
    corner_vert = np.empty(corner_ends[-1], np.intc)
    materials = np.zeros(face_ends[-1], np.intc)
    uvs = np.empty((corner_ends[-1], 2), np.float32)
    stored = np.zeros((vertex_ends[-1], 3), np.float32)  # (file normals on points, where _unedited_point_normals
    # would look at them)
    normals = np.empty((corner_ends[-1] if settings.export_normals else 0, 3), np.float32)
    on_points: list[bool] = []  # the file normals are stored per point (then corner_vert picks them)
    checked: list[int] = []
    has_uvs: list[bool] = []
    for number, (mesh, (vertex_start, vertex_end, corner_start, corner_end, face_start, face_end)) in enumerate(
        zip(meshes, bounds, strict=True)
    ):
        mesh.attributes["position"].data.foreach_get("vector", positions[vertex_start:vertex_end].reshape(-1))
        mesh.attributes[".corner_vert"].data.foreach_get("value", corner_vert[corner_start:corner_end])
        attribute = mesh.attributes.get("material_index")  # (as mesh_io.face_materials)
        if attribute is not None and attribute.domain == "FACE" and attribute.data_type == "INT":
            attribute.data.foreach_get("value", materials[face_start:face_end])
        if settings.export_normals:
            _read_corner_normals(mesh, normals[corner_start:corner_end])
            attribute = mesh.attributes.get(STORED_NORMALS)
            on_points.append(attribute is not None and attribute.domain == "POINT")
            if on_points[-1] and _POINT_NORMALS and attribute.data_type == "FLOAT_VECTOR":
                attribute.data.foreach_get("vector", stored[vertex_start:vertex_end].reshape(-1))
                checked.append(number)
        has_uvs.append(settings.export_uvs and len(mesh.uv_layers) == 1)
        if has_uvs[-1]:
            mesh.uv_layers[0].uv.foreach_get("vector", uvs[corner_start:corner_end].reshape(-1))
    if settings.flip_v:
        uvs[:, 1] = 1.0 - uvs[:, 1]
    if len(normals) and not np.isfinite(np.add.reduce(normals.reshape(-1))):  # (as blender_corner_normals)
        for mesh, (_, _, corner_start, corner_end, _, _) in zip(meshes, bounds, strict=True):
            mesh_io.finite_corner_normals(mesh, normals[corner_start:corner_end])  # (in place)
    unedited = _unedited_on_points(stored, corner_vert, normals, bounds, checked)
    identity = np.arange(max(len(mesh.loops) for mesh in meshes), dtype=np.intc)  # (each object's loops: in order)
    threes = np.full(max(len(mesh.polygons) for mesh in meshes), 3, np.int64)
    made = []
    for number, (obj, mesh, (vertex_start, vertex_end, corner_start, corner_end, face_start, face_end)) in enumerate(
        zip(objects, meshes, bounds, strict=True)
    ):
        corners = corner_vert[corner_start:corner_end]
        layers = _Layers()
        if settings.export_normals:
            if number in unedited:
                layers.point["normal"] = stored[vertex_start:vertex_end]
            else:
                per_vertex = corners if on_points[number] else None
                layers.corner["normal"] = mesh_io.prefer_stored_normals(
                    mesh, normals[corner_start:corner_end], STORED_NORMALS, per_vertex
                )
        if has_uvs[number]:
            layers.corner["texcoord"] = uvs[corner_start:corner_end]
        file_vertex = _file_vertices(mesh)
        material_names = [_material_name(slot.material) for slot in obj.material_slots] or [""]
        name = _clean(str(obj.get(rig_math.ORIGINAL_NAME, obj.name)), "mesh", customs.warnings)
        material_names = [_clean(material, "material", customs.warnings) for material in material_names]
        made.append(_ObjectData(name, positions[vertex_start:vertex_end], corners, layers, identity[: len(corners)],
                                threes[: face_end - face_start], materials[face_start:face_end], material_names,
                                None, reverse=settings.reverse_winding, file_vertex=file_vertex))  # fmt: skip
    return made


def _read_corner_normals(mesh: bpy.types.Mesh, out: np.ndarray) -> None:
    """mesh_io.blender_corner_normals of the mesh into `out` (C, 3), not yet made finite: Blender's corner normals
    read straight into it, or those it would take from its point or face normals."""
    if mesh.normals_domain in ("POINT", "FACE") and not mesh.has_custom_normals:
        out[:] = mesh_io.blender_corner_normals(mesh)
    else:
        mesh.corner_normals.foreach_get("vector", out.reshape(-1))


def _unedited_on_points(
    stored: np.ndarray, corner_vert: np.ndarray, normals: np.ndarray, bounds: list[tuple[int, ...]],
    checked: list[int],
) -> set[int]:
    """The `checked` objects (by number) whose every corner normal still says its point's file normal, as
    _unedited_point_normals finds it (the same numbers, row by row), for a few objects at once: a few thousand
    corners, whose temporaries stay in the CPU caches and take the same memory again chunk after chunk."""
    unedited: set[int] = set()
    chunk: list[int] = []
    corners = 0
    for position, number in enumerate(checked):
        chunk.append(number)
        corners += bounds[number][3] - bounds[number][2]
        if corners < _CHECKED_CORNERS and position + 1 < len(checked):
            continue
        vertices = slice(bounds[chunk[0]][0], bounds[chunk[-1]][1])
        length = np.sqrt(np.einsum("ij,ij->i", stored[vertices], stored[vertices]))
        rows = _stacked([corner_vert[bounds[number][2] : bounds[number][3]].astype(np.intp)
                         + (bounds[number][0] - vertices.start) for number in chunk])  # fmt: skip
        corner_normals = _stacked([normals[bounds[number][2] : bounds[number][3]] for number in chunk])
        kept = mesh_io.unedited(rows_at(stored[vertices], rows), corner_normals, length[rows])
        starts = np.cumsum([0, *(bounds[number][3] - bounds[number][2] for number in chunk)])[:-1]
        unedited.update(number for number, every in zip(chunk, np.logical_and.reduceat(kept, starts).tolist(),
                                                         strict=True) if every)  # fmt: skip
        chunk, corners = [], 0
    return unedited


_CHECKED_CORNERS = 1 << 13

_UNQUOTABLE = frozenset(UNQUOTABLE)


def _clean(name: str, what: str, warnings: list[str]) -> str:
    """`name` with the characters IQE cannot quote replaced (`"` by `'`), saying so."""
    if not _UNQUOTABLE.intersection(name):  # (the usual name: no copy made character by character)
        return name
    cleaned, changed = iqe.sanitize_name(name)
    if changed:
        message = (f"{what} {name!r} written as {cleaned!r}: IQE names (and IQM's, kept alike) cannot hold double "
                   "quotes or line breaks")
        if message not in warnings:
            warnings.append(message)
    return cleaned


@contextmanager
def _modifiers_off(obj: bpy.types.Object, reader: object | None, apply_modifiers: bool) -> Iterator[None]:
    """Without applied modifiers, the weight reader must still run: every other modifier is switched off."""
    changed = []
    if reader is not None and not apply_modifiers:
        own = getattr(reader, "modifier", None)
        changed = [m for m in obj.modifiers if m != own and m.show_viewport]
    for modifier in changed:
        modifier.show_viewport = False
    try:
        yield
    finally:
        for modifier in changed:
            modifier.show_viewport = True


def _limited_weights(joints: np.ndarray, dense: np.ndarray, max_influences: int) -> tuple[np.ndarray, np.ndarray]:
    """(V, 4) joint indices and weights from (V, G) group weights: the largest kept, sorted, normalised."""
    count = dense.shape[0]
    if not dense.shape[1]:
        return np.zeros((count, 4), np.int32), np.zeros((count, 4), np.float32)
    gathered = _gathered_weights(dense, max_influences) if dense.shape[1] > max_influences else None
    if gathered is None:
        columns = np.broadcast_to(np.arange(dense.shape[1]), dense.shape)
        if dense.shape[1] > max_influences:
            columns = np.argpartition(-dense, max_influences - 1, axis=1)[:, :max_influences]
        values = np.take_along_axis(dense, columns, axis=1)
    else:
        columns, values = gathered
    indices, limited = iqe.limit_blend_weights(joints[columns], values, max_influences=max_influences)
    if max_influences < 4:
        indices = np.pad(indices, ((0, 0), (0, 4 - max_influences)))
        limited = np.pad(limited, ((0, 0), (0, 4 - max_influences)))
    return indices, limited


def _note_cut_influences(name: str, dense: np.ndarray, max_influences: int, notes: list[str]) -> None:
    """Say how many vertices lost their smallest weights to the influence limit (an artist's weights changed)."""
    if dense.shape[1] <= max_influences:
        return
    over = int(np.count_nonzero(count_per_row(dense > 0.0) > max_influences))
    if over:
        notes.append(f"{name}: {over} vertex(es) have more than {max_influences} bone weights; the largest "
                     f"{max_influences} kept and normalised (Max Influences)")  # fmt: skip


def _gathered_weights(dense: np.ndarray, max_influences: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(V, max_influences) group columns and weights of every positive weight, in group order (zero-weight
    slots for the rest), or None when some vertex has more: then the largest must be picked."""
    per_group = np.ascontiguousarray(dense.T)  # the reader's natural layout: one row per group
    positive = per_group > 0.0
    filled = np.count_nonzero(positive, axis=0)
    if int(filled.max(initial=0)) > max_influences:
        return None
    columns = np.zeros((dense.shape[0], max_influences), np.int64)
    values = np.zeros((dense.shape[0], max_influences), per_group.dtype)
    filled[:] = 0
    for group in range(per_group.shape[0]):
        vertices = np.flatnonzero(positive[group])
        slots = filled[vertices]
        columns[vertices, slots] = group
        values[vertices, slots] = per_group[group, vertices]
        filled[vertices] += 1
    return columns, values


def _transform_directions(vectors: np.ndarray, matrix: object) -> np.ndarray:
    linear = np.array(matrix, np.float64)[:3, :3]
    out = vectors.astype(np.float64) @ linear.T
    length = row_lengths(out, keepdims=True)
    np.divide(out, length, out=out, where=length > 0)
    return out.astype(np.float32)


def _material_name(material: bpy.types.Material | None) -> str:
    if material is None:
        return ""
    return str(material.get(rig_math.ORIGINAL_NAME, material.name))


_BLOCK_FIELDS = {"texcoord": "texcoords", "normal": "normals", "tangent": "tangents", "color": "colors"}
_RUN_CORNERS = 1 << 15  # objects are made into blocks in runs of up to this many corners (numpy's cost per call
# is paid once a run, and a run's arrays stay in the CPU caches); a larger object is a run of its own


@dataclass
class _Block:
    """One block of an object in a run: its material, and its faces' sizes and corners (the object's loops)."""

    owner: int  # the object's place in the run
    material: str
    sizes: np.ndarray
    loops: np.ndarray
    whole: bool  # every loop of the object, in order


def _object_blocks(data: _ObjectData, owner: int) -> list[_Block]:
    """The object's faces by material, one block per distinct material (slots sharing a material share one)."""
    names = data.material_names
    unique_materials = list(dict.fromkeys(names))
    if len(unique_materials) == 1:  # (every face in one block, whatever its slot)
        return [_Block(owner, names[0], data.sizes, data.loops, _in_order(data.loops, data.corner_vert))]
    materials = np.clip(data.face_materials, 0, len(names) - 1)
    material_of_slot = np.array([unique_materials.index(name) for name in names], np.int64)
    face_block = material_of_slot[materials] if len(materials) else np.zeros(0, np.int64)
    face_starts = np.cumsum(data.sizes) - data.sizes
    blocks = []
    for block_index, material in enumerate(unique_materials):
        faces = np.flatnonzero(face_block == block_index)
        if not len(faces):
            continue
        if len(faces) == len(face_block):  # one block: every face, in order
            sizes, loops = data.sizes, data.loops
        else:
            sizes = data.sizes[faces]
            corners = np.repeat(face_starts[faces] - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
            loops = data.loops[corners]
        blocks.append(_Block(owner, material, sizes, loops, _in_order(loops, data.corner_vert)))
    return blocks


def _in_order(loops: np.ndarray, corner_vert: np.ndarray) -> bool:
    return len(loops) == len(corner_vert) and bool(np.array_equal(loops, np.arange(len(loops))))


def _runs(objects: Iterable[_ObjectData]) -> Iterator[list[_ObjectData]]:
    """Consecutive objects with the same layers (keys, widths and types), in runs of up to _RUN_CORNERS corners."""
    run: list[_ObjectData] = []
    corners = 0
    run_layout: tuple[object, ...] = ()
    for data in objects:
        layout = _layout(data)
        if run and (layout != run_layout or corners + len(data.corner_vert) > _RUN_CORNERS):
            yield run
            run, corners = [], 0
        if not run:
            run_layout = layout
        run.append(data)
        corners += len(data.corner_vert)
    if run:
        yield run


def _layout(data: _ObjectData) -> tuple[object, ...]:
    def arrays(layers: dict[str, np.ndarray], rows: int) -> tuple[tuple[str, int, str], ...]:
        return tuple((key, values.reshape(rows, -1).shape[1], values.dtype.str) for key, values in layers.items())

    weights = None if data.weights is None else (data.weights[0].dtype.str, data.weights[1].dtype.str,
                                                 data.weights[0].shape[1:], data.weights[1].shape[1:])  # fmt: skip
    return (arrays(data.layers.corner, len(data.corner_vert)), arrays(data.layers.point, len(data.positions)),
            weights, data.file_vertex is None, data.positions.dtype.str)  # fmt: skip


def _all_blocks(objects: Iterable[_ObjectData], taken: set[tuple[str, str]]) -> list[list[iqe.IqeMesh]]:
    """Each object's IqeMesh blocks, one per material (see _run_blocks), in order."""
    return [blocks for run in _runs(objects) for blocks in _run_blocks(run, taken)]


def _run_blocks(run: list[_ObjectData], taken: set[tuple[str, str]]) -> list[list[iqe.IqeMesh]]:
    """The blocks of a run of objects of one layout, worked out for all at once: the objects' arrays stacked (their
    vertices and corners numbered after the previous objects'), every block's vertices split in one pass, then cut
    back into blocks. Each block's vertices are numbered after the previous block's (an object of two blocks
    counts its vertices twice), so no two blocks share a vertex, and within a block they come in the same order
    as for the object alone: the arrays are those of each object worked out on its own."""
    blocks = [block for owner, data in enumerate(run) for block in _object_blocks(data, owner)]
    vertex_counts = [len(data.positions) for data in run]
    corner_counts = [len(data.corner_vert) for data in run]
    vertex_starts = np.cumsum([0, *vertex_counts])[:-1]
    corner_vert = _stacked([data.corner_vert for data in run]).astype(np.int64)
    corner_vert += np.repeat(vertex_starts, corner_counts)  # (each corner's vertex among the run's)
    block_corners = np.array([len(block.loops) for block in blocks], np.int64)
    whole = all(block.whole for block in blocks) and len(blocks) == len(run)
    if whole:  # one block an object, every corner in order (the usual case): the corners as they stand
        loops = None
        split_vertex = corner_vert
    else:
        corner_starts = np.cumsum([0, *corner_counts])[:-1]
        loops = _stacked([block.loops.astype(np.int64) + corner_starts[block.owner] for block in blocks])
        block_vertex_starts = np.cumsum([0, *(vertex_counts[block.owner] for block in blocks)])[:-1]
        owners_start = vertex_starts[[block.owner for block in blocks]]
        split_vertex = corner_vert[loops] + np.repeat(block_vertex_starts - owners_start, block_corners)
    corner_keys = sorted(run[0].layers.corner)
    corner_layers = {key: _stacked([data.layers.corner[key].reshape(count, -1) for data, count in
                                    zip(run, corner_counts, strict=True)]) for key in corner_keys}  # fmt: skip
    file_vertex = None if run[0].file_vertex is None else _stacked([data.file_vertex for data in run])
    # The corner data compared: the layers' words side by side, as if in one table (in the order of their keys).
    # Corners of one merged vertex that were different file vertices stay different vertices (the file's own
    # split, even where their data is equal), in the file's order.
    if file_vertex is None:
        columns = [column for key in corner_keys for column in _word_columns(corner_layers[key])]
    else:
        columns = [column for key in corner_keys
                   for column in _word_columns(corner_layers[key].astype(np.float32, copy=False))]  # fmt: skip
        columns.append(file_vertex.view(np.uint32))
    if loops is not None:
        columns = [rows_at(column, loops) for column in columns]
    first, new_vertex = _split_vertices(split_vertex, columns)
    block_of_corner = np.repeat(np.arange(len(blocks)), block_corners)
    block_of_vertex = block_of_corner[first]  # (new vertices come block by block)
    if file_vertex is not None:
        source = first if loops is None else loops[first]
        first, new_vertex = _in_file_order(first, new_vertex, file_vertex[source], block_of_vertex)
    source_loop = first if loops is None else loops[first]
    source_vertex = corner_vert[source_loop]
    block_vertices = np.bincount(block_of_vertex, minlength=len(blocks))
    vertex_bounds = np.cumsum([0, *block_vertices.tolist()]).tolist()
    new_vertex -= np.repeat(np.asarray(vertex_bounds[:-1], np.int64), block_corners)  # (numbered in its block)
    sizes = _stacked([block.sizes for block in blocks]).astype(np.int32)
    corners = new_vertex.astype(np.int32)
    reverse = np.array([run[block.owner].reverse for block in blocks], bool)
    if reverse.all():
        corners = iqe.reverse_face_order(corners, sizes)
    elif reverse.any():
        corners = np.where(np.repeat(reverse, block_corners), iqe.reverse_face_order(corners, sizes), corners)
    vertex_layers: dict[str, np.ndarray] = {key: rows_at(values, source_loop) for key, values in corner_layers.items()}
    for key in run[0].layers.point:
        vertex_layers[key] = rows_at(_stacked([data.layers.point[key] for data in run]), source_vertex)
    positions = rows_at(_stacked([data.positions for data in run]), source_vertex)
    weights = None
    if run[0].weights is not None:  # (every object of the run has them)
        weights = [np.ascontiguousarray(rows_at(_stacked([data.weights[part] for data in run if data.weights]),
                                                source_vertex), dtype)
                   for part, dtype in ((0, np.int32), (1, np.float32))]  # fmt: skip
    face_bounds = np.cumsum([0, *(len(block.sizes) for block in blocks)]).tolist()
    corner_bounds = np.cumsum([0, *block_corners.tolist()]).tolist()
    made: list[list[iqe.IqeMesh]] = [[] for _ in run]
    for index, block in enumerate(blocks):
        vertices = slice(vertex_bounds[index], vertex_bounds[index + 1])
        data = run[block.owner]
        mesh = iqe.IqeMesh(_unique_name(data.name, block.material, taken), block.material, positions[vertices])
        for key, values in vertex_layers.items():
            _set_layer(mesh, key, values[vertices])
        if weights is not None:
            mesh.blend_indices, mesh.blend_weights = weights[0][vertices], weights[1][vertices]
        mesh.face_sizes = sizes[face_bounds[index] : face_bounds[index + 1]]
        mesh.face_corners = corners[corner_bounds[index] : corner_bounds[index + 1]]
        made[block.owner].append(mesh)
    return made


def _stacked(arrays: list[np.ndarray]) -> np.ndarray:
    """The arrays one after the other: a view where they are consecutive parts of one array (objects read
    together: see _straight_objects_data), else a copy. Only read from."""
    if len(arrays) == 1:
        return arrays[0]
    whole = _whole_of(arrays)
    return np.concatenate(arrays) if whole is None else whole


def _whole_of(arrays: list[np.ndarray]) -> np.ndarray | None:
    """The view of the arrays' base that they make up one after the other, rows in order, or None."""
    if any(array.shape[1:] != arrays[0].shape[1:] or array.dtype != arrays[0].dtype for array in arrays):
        return None
    arrays = [array for array in arrays if len(array)]  # (an empty part's address is not where it stands)
    if not arrays:
        return None
    base = arrays[0].base
    if not isinstance(base, np.ndarray) or not base.flags.c_contiguous or base.dtype != arrays[0].dtype:
        return None
    row_shape = arrays[0].shape[1:]
    row_bytes = arrays[0].itemsize * int(np.prod(row_shape, dtype=np.int64))
    if not row_bytes or base.nbytes % row_bytes:
        return None
    at = arrays[0].ctypes.data
    for array in arrays:
        if (array.base is not base or array.shape[1:] != row_shape or not array.flags.c_contiguous
                or array.ctypes.data != at):  # fmt: skip
            return None
        at += array.nbytes
    start = (arrays[0].ctypes.data - base.ctypes.data) // row_bytes
    rows: np.ndarray = base.reshape(-1, *row_shape)[start : start + (at - arrays[0].ctypes.data) // row_bytes]
    return rows


def _in_file_order(
    first: np.ndarray, new_vertex: np.ndarray, file_vertex: np.ndarray, block: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The new vertices (a corner of each, the vertex of each corner) reordered by their vertex in the file, within
    their block (`block`: each one's, in order)."""
    order = np.lexsort((file_vertex, block))  # (stable: equal file vertices keep their order)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return first[order], rank[new_vertex]


def _set_layer(mesh: iqe.IqeMesh, key: str, values: np.ndarray) -> None:
    values = np.ascontiguousarray(values, np.float32)
    if key.startswith("custom"):
        mesh.custom[int(key[6:])] = values.reshape(len(values), -1)
    else:
        setattr(mesh, _BLOCK_FIELDS[key], values)


def _unique_name(name: str, material: str, taken: set[tuple[str, str]]) -> str:
    candidate, number = name, 0
    while (candidate, material) in taken:
        number += 1
        candidate = f"{name}.{number:03d}"
    taken.add((candidate, material))
    return candidate


# ------------------------------------------------------------------------------------------------ document


@contextmanager
def _rest_pose(
    context: bpy.types.Context, objects: list[bpy.types.Object], armatures: list[bpy.types.Object], active: bool
) -> Iterator[None]:
    """Skinned meshes without their Armature modifiers while evaluated: their vertices are bind-pose data.

    Switching the modifier off (rather than the armature to its rest position) keeps positions bit-exact.
    """
    changed = [
        modifier
        for obj in objects
        for modifier in obj.modifiers
        if active and modifier.type == "ARMATURE" and modifier.object in armatures
        and modifier.show_viewport
    ]  # fmt: skip
    for modifier in changed:
        modifier.show_viewport = False
    if changed:
        context.view_layer.update()
    try:
        yield
    finally:
        for modifier in changed:
            modifier.show_viewport = True
        if changed:
            context.view_layer.update()


def build_document(
    context: bpy.types.Context, operator: ExportScopeMixin, settings: ExportSettings, summary: Summary,
    file_kind: str = "IQE",
) -> iqe.IqeDocument:
    chosen = operator.objects_to_export(context)
    objects = geometry_objects(chosen)
    armatures = iqe_rig.find_armatures(chosen, objects) if settings.export_skeleton else []
    if not objects and not armatures:
        raise FormatError(f"nothing to export: no mesh objects or armature ({operator.scope_hint()})")
    armature = iqe_rig.animating_armature(armatures, settings.export_animations, file_kind)
    armature = armature or next(iter(armatures), None)
    scene_meshes = geometry_objects(context.scene.objects)
    left_out = [obj for obj in scene_meshes if armature_helpers.armature_of(obj) in armatures]
    if not objects and left_out:  # (an animation file is legitimate, but one who forgot the meshes should know)
        summary.warnings.append(f"no mesh chosen: only the skeleton of {armature.name!r} and its animations are "
                                f"written, not its {counted(len(left_out), 'meshes')} (choose them too for the model)")
    document = iqe.IqeDocument()
    rig = None
    joint_of_name = None
    if armature is not None:
        rig = _rig(operator, armature, settings)
        others = [_rig(operator, other, settings) for other in armatures if other != armature]
        document.joints, joint_of_name = iqe_rig.merged_joints(rig, others, file_kind)
        for joint in document.joints:
            joint.name = _clean(joint.name, "bone", summary.warnings)
    customs = _Customs()
    taken: set[tuple[str, str]] = set()
    at_rest = armature_helpers.bone_children_at_rest(context, objects)  # (a hat on the head bone: as at rest)
    export_matrix = operator.export_matrices()
    unbound: list[str] = []  # objects neither skinned nor on a bone
    skinned_objects: list[str] = []

    def finished(obj: bpy.types.Object, data: _ObjectData, skinned: bool) -> _ObjectData:
        if skinned:
            skinned_objects.append(obj.name)
        note = mesh_io.unheld_data_note(obj, file_kind, one_uv_map=False, colors=True,
                                        shapes_applied=operator.apply_modifiers)  # fmt: skip
        summary.warnings += [note] if note else []
        if skinned:
            _note_unweighted(obj.name, data, summary.notes)
        elif (joint := _parent_joint(obj, armatures, joint_of_name, summary.warnings)) is not None:
            if joint < MAX_SKINNED_JOINTS:
                data.weights = _rigid_weights(len(data.positions), joint)
            else:
                summary.warnings.append(f"{obj.name}: hangs from a bone beyond the first {MAX_SKINNED_JOINTS} "
                                        "joints, which blend indices cannot name; written without weights")
        else:
            unbound.append(obj.name)
        return data

    def read_together(group: list[bpy.types.Object]) -> Iterator[_ObjectData]:
        for obj, data in zip(group, _straight_objects_data(group, settings, customs), strict=True):
            yield finished(obj, data, False)

    def objects_data(tracker: Progress) -> Iterator[_ObjectData]:
        group: list[bpy.types.Object] = []  # (consecutive objects read together: see _straight_objects_data)
        corners = 0
        for obj in tracker.each(objects):
            skinned = joint_of_name is not None and _uses_armature(obj, armatures)
            if not skinned and _reads_straight(obj, settings, export_matrix):
                group.append(obj)
                corners += len(obj.data.loops)
                if corners >= _STRAIGHT_CORNERS:
                    yield from read_together(group)
                    group, corners = [], 0
                continue
            yield from read_together(group)
            group, corners = [], 0
            data = _object_data(context, obj, operator, settings, customs, joint_of_name if skinned else None,
                                export_matrix)  # fmt: skip
            if data is None:
                has_faces(obj.name, 0, summary.warnings)
                continue
            yield finished(obj, data, skinned)
        yield from read_together(group)

    with _rest_pose(context, objects, armatures, operator.apply_modifiers), at_rest, progress(
        context, len(objects)
    ) as tracker:
        # (each run's blocks made as soon as its objects are read: their arrays are then freed, and the next
        # run's take the same memory again instead of fresh pages)
        for blocks in _all_blocks(objects_data(tracker), taken):
            document.meshes.extend(blocks)
            summary.objects += 1
    skinned_meshes = bool(skinned_objects)
    summary.faces += _counted_faces(document.meshes, summary.face_kind)
    if not document.joints:  # a skeleton alone is worth a file; nothing at all is not
        refuse_if_nothing_left(len(document.meshes), len(objects))
    if unbound and any(mesh.blend_indices is not None for mesh in document.meshes):
        summary.warnings.append(
            f"{', '.join(unbound)}: neither skinned by the armature nor parented to a bone; written with zero blend "
            "weights (the file's other meshes have weights), which engines skin to the model's origin (parent to a "
            "bone, or add an Armature modifier)"
        )
    if skinned_meshes and len(document.joints) > MAX_SKINNED_JOINTS:  # (objects on a bone name theirs: checked)
        hint = "" if settings.deform_only else " (Deform Bones Only leaves out the bones that do not deform)"
        raise FormatError(
            f"the armature has {len(document.joints)} {'deforming ' if settings.deform_only else ''}bones; skinned "
            f"{file_kind} meshes can use at most {MAX_SKINNED_JOINTS} joints{hint}"
        )
    document.vertex_arrays = [
        iqe.IqeVertexArrayFormat(f"custom{c.slot}", c.component, c.width, _clean(c.name, "attribute", summary.warnings))
        for c in sorted(customs.by_name.values(), key=lambda c: c.slot)
    ]
    summary.warnings.extend(customs.warnings)
    if rig is not None and settings.export_animations != "NONE":
        document.animations = _animations(context, rig, settings, summary.warnings)
        for animation in document.animations:
            animation.name = _clean(animation.name, "animation", summary.warnings)
            iqe_rig.with_resting_joints(animation, document.joints)
        summary.actions = len(document.animations)
    if settings.export_comment:
        document.comment_section = _comment(chosen, armature)
    return document


def _counted_faces(blocks: list[iqe.IqeMesh], kind: str) -> int:
    """The blocks' faces as the summary counts them: polygons, or the triangles they make (IQM holds only those)."""
    if kind != "triangles" or not blocks:
        return sum(block.face_count for block in blocks)
    sizes = np.concatenate([block.face_sizes for block in blocks])
    if len(sizes) and int(sizes.min()) < 2:
        return int(np.maximum(sizes.astype(np.int64) - 2, 0).sum())
    return int(sizes.sum(dtype=np.int64)) - 2 * len(sizes)  # (no int64 copies: a 100-mesh file's 500 page faults)


def _parent_joint(
    obj: bpy.types.Object, armatures: list[bpy.types.Object], joint_of_name: dict[str, int] | None,
    warnings: list[str],
) -> int | None:
    """The joint of the exported armature's bone this object hangs from (a hat on the head bone), directly or
    through parents that do not deform it; None when it hangs from none. A bone that is not written (Deform Bones
    Only) gives its nearest written ancestor's joint."""
    child = obj
    while joint_of_name is not None and child.parent is not None:
        if child.parent in armatures:
            bones = child.parent.data.bones
            bone = bones.get(child.parent_bone) if child.parent_type == "BONE" else None
            if bone is None:
                return None
            holder = bone
            while holder is not None and holder.name not in joint_of_name:
                holder = holder.parent
            if holder is None and joint_of_name:  # (a control root above the whole rig: the first root joint)
                first = min(joint_of_name, key=joint_of_name.__getitem__)
                warnings.append(f"{obj.name}: its parent bone {bone.name!r} does not deform and is not written, nor "
                                f"is any bone above it; bound to {first!r}, the first joint")  # fmt: skip
                return joint_of_name[first]
            if holder is not None and holder != bone:
                warnings.append(f"{obj.name}: its parent bone {bone.name!r} does not deform and is not written; bound "
                                f"to {holder.name!r}, its nearest deforming ancestor")  # fmt: skip
            return joint_of_name[holder.name] if holder is not None else None
        child = child.parent
    return None


def _rigid_weights(vertex_count: int, joint: int) -> tuple[np.ndarray, np.ndarray]:
    """Every vertex wholly on one joint: the object moves with its bone, as in Blender."""
    indices = np.zeros((vertex_count, 4), np.int32)
    weights = np.zeros((vertex_count, 4), np.float32)
    indices[:, 0], weights[:, 0] = joint, 1.0
    return indices, weights


def _note_unweighted(name: str, data: _ObjectData, notes: list[str]) -> None:
    """Some vertices of a skinned mesh on no bone, when others are on one (a mesh weighted nowhere is a rigid
    part): written with zero weights as they are, which engines take differently (Tesseract and Red Eclipse draw
    them with the first joint, the reference demo at the model's origin; Blender leaves them at rest). Real models
    have them: a note, not a warning."""
    if data.weights is None:
        return
    used = np.zeros(len(data.positions), bool)
    used[data.corner_vert] = True  # (loose vertices are not written)
    weighted = any_per_row(data.weights[1])
    unweighted = int(np.count_nonzero(used & ~weighted))
    if unweighted and (used & weighted).any():
        notes.append(f"{name}: {unweighted} vertex(es) have no weight on any bone; written with zero weights, which "
                     "engines take differently (Tesseract draws them with the first joint, the IQM demo at the "
                     "model's origin)")


def _uses_armature(obj: bpy.types.Object, armatures: list[bpy.types.Object]) -> bool:
    if any(m.type == "ARMATURE" and m.object in armatures for m in obj.modifiers):
        return True
    return obj.parent in armatures and obj.parent_type == "ARMATURE"


def _rig(operator: ExportScopeMixin, armature: bpy.types.Object, settings: ExportSettings) -> iqe_rig.Skeleton:
    return iqe_rig.skeleton(armature, np.array(operator.export_matrix(armature), np.float64), settings.deform_only)


def _animations(
    context: bpy.types.Context, rig: iqe_rig.Skeleton, settings: ExportSettings, warnings: list[str]
) -> list[iqe.IqeAnimation]:
    if settings.export_animations == "NLA":
        animations = [iqe_rig.scene_animation(rig, context.scene, warnings)]
    else:
        animations = _action_animations(context, rig, settings, warnings)
    iqe_rig.steady_channels(animations)
    return animations


def _action_animations(
    context: bpy.types.Context, rig: iqe_rig.Skeleton, settings: ExportSettings, warnings: list[str]
) -> list[iqe.IqeAnimation]:
    actions = iqe_rig.armature_actions(rig.armature, rig.bone_names, settings.export_animations)
    if not actions and settings.export_animations == "ACTIVE":
        warnings.append(f"armature {rig.armature.name!r} has no active action: no animation written (Animations: "
                        "All Actions writes every action that keys its bones)")  # fmt: skip
    with progress(context, len(actions)) as tracker:
        animations = [iqe_rig.action_animation(context, action, rig, bake=settings.bake_pose, warnings=warnings,
                                               object_motion_written=settings.object_motion)
                      for action in tracker.each(actions)]  # fmt: skip
    taken: set[str] = set()
    for action, animation in zip(actions, animations, strict=True):
        if animation.name in taken:  # two actions of one name in the file (a rig imported twice): Blender's names
            warnings.append(f"action {action.name!r} keys these bones too and its file name {animation.name!r} is "
                            f"taken: written as {action.name!r}")  # fmt: skip
            animation.name = action.name
        taken.add(animation.name)
    return animations


def _comment(objects: list[bpy.types.Object], armature: bpy.types.Object | None) -> str | None:
    for obj in [*([armature] if armature is not None else []), *objects]:
        text = obj.get(COMMENT)
        if isinstance(text, bpy.types.Text):
            return str(text.as_string())
    return None


_THREADS_FROM_VERTICES = 1 << 20  # fewer vertices are written without threads: they would cost more than they save


def export_iqe(context: bpy.types.Context, path: str, operator: ExportScopeMixin, settings: ExportSettings) -> Summary:
    summary = Summary(files=1, face_kind="triangles" if settings.triangulate else "polygons")
    document = build_document(context, operator, settings, summary)
    notes = iqe.IqeDocument().warnings
    large = sum(mesh.vertex_count for mesh in document.meshes) >= _THREADS_FROM_VERTICES
    # (a smaller text's temporaries, freed and taken again batch after batch, are kept for reuse meanwhile: half
    # the page faults of writing the 100-mesh bench file)
    with nullcontext() if large else freed_memory_kept():
        data = iqe.iqe_pieces(document, notes, made_on_cores if large else made_in_turn)  # (checks all first)
        summary.warnings.extend(notes)
        write_bytes_atomically(path, data)
    return summary


# ------------------------------------------------------------------------------------------------ operator


def draw_iqe_export_options(layout: bpy.types.UILayout, operator: object, context: bpy.types.Context) -> None:
    prepare_layout(layout)
    scope = ("export_selected_objects",) if in_file_browser(context) else ()
    draw_panel(layout, operator, "IOGF_iqe_export_include", "Include",
               (*scope, "apply_modifiers", "triangulate", "export_comment"))  # fmt: skip
    draw_panel(
        layout, operator, "IOGF_iqe_export_geometry", "Geometry",
        ("export_normals", "export_uvs", "export_colors", "export_attributes", "export_tangents"),
    )  # fmt: skip
    draw_panel(layout, operator, "IOGF_iqe_export_armature", "Armature",
               ("export_skeleton", "deform_only", "max_influences", "export_animations", "bake_pose",
                "object_motion"))  # fmt: skip
    draw_panel(
        layout, operator, "IOGF_iqe_export_transform", "Transform",
        ("apply_transform", "global_scale", "forward_axis", "up_axis", "flip_v", "reverse_winding"),
    )  # fmt: skip


class IqeExportProperties:
    """The options of the IQE exporter, shared with the IQM exporter (both write one document model)."""

    triangulate: BoolProperty(
        name="Triangulate", default=True,
        description="Triangulate quads and n-gons as Blender does; off: IQE keeps them as polygons, and IQM (which "
        "holds triangles only) fans them from their first corner, as the iqm compiler does with IQE polygons",
    )
    export_normals: BoolProperty(name="Normals", default=True, description="Write per-corner normals")
    export_uvs: BoolProperty(
        name="UV Maps", default=True, description="Active render UV map as the texture coordinates, others as custom "
        "arrays",
    )  # fmt: skip
    export_colors: EnumProperty(
        name="Vertex Colors", items=IMPORT_COLORS, default="SRGB",
        description="Colour space written for colour attributes (the render colour as the colour array, others as "
        "custom arrays)",
    )  # fmt: skip
    export_attributes: EnumProperty(
        name="Attributes", items=EXPORT_ATTRIBUTES, default="IQE",
        description="Which generic float attributes to write as custom vertex arrays (IQE: v0-v9)",
    )  # fmt: skip
    export_tangents: BoolProperty(name="Tangents", default=False, description="Write tangents from the UV map")
    export_skeleton: BoolProperty(name="Skeleton", default=True, description="Write the armature and weights")
    deform_only: BoolProperty(
        name="Deform Bones Only", default=False,
        description="Leave out bones that do not deform (controls, IK targets, a rig's mechanism): their children "
        "hang from the nearest deforming ancestor, in the base pose and every animation alike; blend indices name "
        "at most 256 joints",
    )  # fmt: skip
    max_influences: IntProperty(name="Max Influences", default=4, min=1, max=4,
                                description="Largest weights kept per vertex (normalised)")  # fmt: skip
    export_animations: EnumProperty(
        name="Animations", items=iqe_rig.EXPORT_ANIMATIONS, default="ALL",
        description="Which animation of the armature to write, one animation per action",
    )  # fmt: skip
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
    export_comment: BoolProperty(
        name="Comment Section", default=True, description="Write the text block of an imported file's comment"
    )
    flip_v: BoolProperty(
        name="Flip V", default=True, description="Write texture coordinates as (u, 1 - v), the Inter-Quake convention"
    )
    reverse_winding: BoolProperty(
        name="Reverse Winding", default=True,
        description="Write faces clockwise, the Inter-Quake convention; off: Blender's counter-clockwise order",
    )  # fmt: skip

    def export_settings(self) -> ExportSettings:
        return ExportSettings(
            export_normals=self.export_normals,
            export_uvs=self.export_uvs,
            export_colors=self.export_colors,
            export_attributes=self.export_attributes,
            export_tangents=self.export_tangents,
            triangulate=self.triangulate,
            export_skeleton=self.export_skeleton,
            deform_only=self.deform_only,
            export_animations=self.export_animations,
            bake_pose=self.bake_pose,
            object_motion=self.object_motion,
            max_influences=self.max_influences,
            export_comment=self.export_comment,
            flip_v=self.flip_v,
            reverse_winding=self.reverse_winding,
        )


@axis_options("export")
class EXPORT_SCENE_OT_iqe(bpy.types.Operator, PresetSafeExportHelper, ExportScopeMixin, IqeExportProperties):
    """Export meshes, armature and actions as Inter-Quake Export text"""

    bl_idname = "export_scene.iqe"
    bl_label = "Export IQE"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".iqe"
    filter_glob: StringProperty(default="*.iqe", options={"HIDDEN"})

    def execute(self, context: bpy.types.Context) -> set[str]:
        settings = self.export_settings()
        return guarded(self, lambda: export_iqe(context, self.filepath, self, settings), "Exported")

    def draw(self, context: bpy.types.Context) -> None:
        draw_iqe_export_options(self.layout, self, context)


def menu_export(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    self.layout.operator(EXPORT_SCENE_OT_iqe.bl_idname, text="Inter-Quake Export (.iqe)")


classes = (EXPORT_SCENE_OT_iqe,)
