"""Bulk mesh data in and out of Blender through numpy and foreach_get/foreach_set, never per-vertex loops."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import bpy
import numpy as np
from mathutils import Matrix

from ..formats.rows import PreparedNormals, prepared_normals, row_lengths, rows_at
from ..formats.rows import unit_vectors as unit_vectors  # (the importers' own, re-exported)

# ------------------------------------------------------------------------------------------------ building


ORIGINAL_NAME = "iogf_name"  # a file's name for a datablock when Blender could not take it (too long, taken)
GIVEN_NAME = "iogf_given_name"  # the name Blender gave instead: a block renamed since goes by its new name


def original_name(block: bpy.types.ID | bpy.types.Bone) -> str:
    """The name to write back: the file's own one when Blender had to change it (shortened on 4.2, or numbered
    because another block has it), as long as the block keeps the name Blender gave it."""
    stored = block.get(ORIGINAL_NAME)
    if stored is None or block.get(GIVEN_NAME, block.name) != block.name:
        return str(block.name)
    return str(stored)


def remember_file_name(block: bpy.types.ID | bpy.types.Bone, name: str) -> None:
    """Keep the file's `name` for writing back, because Blender gave `block` another one."""
    block[ORIGINAL_NAME] = name
    block[GIVEN_NAME] = block.name


def existing_material(name: str) -> bpy.types.Material | None:
    """The material a file calls `name`, also when Blender had shortened that name; None if there is none."""
    # (`in` then a lookup: the same test as `.get() == name`, under half the time of the method call, and a QC's
    # small SMDs each walk every material made before them; the stubs do not declare an ID's `in`)
    for material in bpy.data.materials:
        if material.name == name or (ORIGINAL_NAME in material and material[ORIGINAL_NAME] == name):  # type: ignore[operator]
            return material
    return None


def material_named(name: str, warnings: list[str]) -> bpy.types.Material:
    """The material a file calls `name`: an existing one (also when Blender had shortened that name), or a new
    one, remembering the full name (and saying so) when Blender cannot hold it."""
    existing = existing_material(name)
    if existing is not None:
        return existing
    material = bpy.data.materials.new(name)
    if material.name != name:
        remember_file_name(material, name)
        warnings.append(f"material {name!r} is too long for this Blender; shown as {material.name!r} and "
                        "written back in full")  # fmt: skip
    return material


def new_mesh(name: str, positions: np.ndarray, corner_verts: np.ndarray, loop_starts: np.ndarray) -> bpy.types.Mesh:
    """A mesh from (V, 3) positions, flat corner vertex indices and each face's first corner."""
    mesh = bpy.data.meshes.new(name)
    if len(positions) == 0:  # no vertices, no "position" attribute: an empty mesh, as modelled
        return mesh
    mesh.vertices.add(len(positions))
    mesh.attributes["position"].data.foreach_set("vector", np.ascontiguousarray(positions, np.float32).ravel())
    if len(corner_verts) == 0:  # Blender creates no corner attribute for a mesh without faces
        mesh.update()
        return mesh
    mesh.loops.add(len(corner_verts))
    mesh.attributes[".corner_vert"].data.foreach_set("value", np.ascontiguousarray(corner_verts, np.intc))
    mesh.polygons.add(len(loop_starts))
    # (Blender sets `loop_start` face by face, reading a list of ints 5x quicker than a numpy array's items)
    mesh.polygons.foreach_set("loop_start", short_list(np.ascontiguousarray(loop_starts, np.intc)))
    mesh.update(calc_edges=True)
    return mesh


def set_smooth(mesh: bpy.types.Mesh, smooth: bool = True) -> None:
    """Every face smooth (or flat)."""
    if smooth and mesh.attributes.get("sharp_face") is None:
        return  # (without the attribute every face is smooth already)
    set_face_smooth(mesh, np.full(len(mesh.polygons), smooth, bool))


def set_face_smooth(mesh: bpy.types.Mesh, smooth: np.ndarray) -> None:
    """Each face shaded smooth or flat, as `use_smooth` sets it, through the `sharp_face` attribute: one copy for
    every face, where `polygons.foreach_set("use_smooth", ...)` makes a property call per face (11 ms for 100k
    faces, against 0.1). Without that attribute every face is smooth (4.2-5.2)."""
    flags = np.asarray(smooth, bool)
    if flags.shape != (len(mesh.polygons),):
        raise ValueError(f"{flags.shape[0] if flags.ndim else 0} smooth flags for {len(mesh.polygons)} faces")
    sharp = mesh.attributes.get("sharp_face")
    if sharp is None:
        if not len(mesh.polygons) or bool(flags.all()):
            return
        sharp = mesh.attributes.new("sharp_face", "BOOLEAN", "FACE")
    sharp.data.foreach_set("value", ~flags)
    mesh.update()  # (normals computed before now would stay as they were: the attribute write does not tag them)


def set_face_materials(mesh: bpy.types.Mesh, material_indices: np.ndarray) -> None:
    """Each face's material slot, as `polygons.foreach_set("material_index", ...)` sets it, through the attribute
    (a plain copy instead of a property call per face: 15 ms for 100k faces, against 0.1)."""
    attribute = mesh.attributes.get("material_index")
    if attribute is None:
        attribute = mesh.attributes.new("material_index", "INT", "FACE")
    # (negative slots read as 0, as the property clamps them: a file's 32-bit index past 2**31 wraps negative)
    attribute.data.foreach_set("value", np.maximum(np.asarray(material_indices).astype(np.intc), 0))


def add_uv_map(mesh: bpy.types.Mesh, name: str, corner_uvs: np.ndarray) -> None:
    layer = mesh.uv_layers.new(name=name, do_init=False)
    layer.uv.foreach_set("vector", np.ascontiguousarray(corner_uvs, np.float32).ravel())


def set_custom_normals(
    mesh: bpy.types.Mesh, corner_verts: np.ndarray, corner_normals: np.ndarray,
    prepared: PreparedNormals | None = None,
) -> None:  # fmt: skip
    """Custom split normals, the form every Blender normal tool edits; faces must already be smooth.

    When Blender's own normals of the mesh already point the file's way, nothing is set (see
    `blender_normals_match`); when every corner's normal is its face's, the faces are made flat instead. When
    every corner of a vertex has the same normal, the per-vertex call does the same with far less data.
    Blender 4.5+ could also store "free" normals (a float attribute: exact and faster), but normal-editing
    tools and the Weighted Normal modifier ignore those, so artists could not touch the imported normals.
    `prepared`: the same normals as unit vectors and per vertex, made ahead (for many small meshes at once).
    """
    prepared = prepared or prepared_normals(corner_verts, corner_normals, len(mesh.vertices))
    normals, per_vertex = prepared.unit, prepared.per_vertex
    if _blender_normals_match_prepared(mesh, corner_verts, prepared):
        return
    if per_vertex is not None:
        # (never flat instead: were every face's own normal within 0.1 degree of one normal per vertex, so would
        # Blender's smooth normal be, an average of those, and the first test would have returned)
        mesh.normals_split_custom_set_from_vertices(normals_argument(per_vertex))
    elif _face_normals_match(mesh, normals):  # a hard-surface mesh: flat shading gives exactly these normals
        set_smooth(mesh, False)
    else:
        mesh.normals_split_custom_set(normals_argument(normals))


def _blender_normals_match_prepared(mesh: bpy.types.Mesh, corner_verts: np.ndarray, prepared: PreparedNormals) -> bool:
    """blender_normals_match of the prepared corner normals, compared per vertex where one normal per vertex
    stands for them, every vertex has a corner and the mesh has no custom normals yet: the same test (Blender's
    corner normals of smooth faces without sharp edges are its vertex normals, and only vertices with corners are
    compared by corners), without making Blender compute its corner normals, which setting custom normals computes
    again (a QC's 60 small meshes: about 4 ms)."""
    per_vertex = prepared.per_vertex
    if prepared.apart and not mesh.has_custom_normals and _smooth_everywhere(mesh):
        return False  # (Blender gives all corners of a vertex its one normal: it cannot be near two that far apart)
    if per_vertex is None or mesh.has_custom_normals or not np.bincount(corner_verts, minlength=len(per_vertex)).all():
        return blender_normals_match(mesh, prepared.unit)
    return blender_normals_match(mesh, vertex_normals=per_vertex)


_LIST_ROWS = 1 << 15  # arrays up to this many rows go to Blender as lists (see normals_argument, short_list)


def normals_argument(normals: np.ndarray) -> np.ndarray | list[list[float]]:
    """(N, 3) normals as Blender's custom-normal calls take them fastest. Blender reads the argument item by item
    (three passes): from a list of lists of floats in about a fifth of the time a numpy array takes, which makes
    a small mesh's whole call a quarter quicker; from a large list more slowly again (its millions of objects), and
    a 2-D float64 array is then the quickest. Either gives the same floats."""
    rows = np.asarray(normals, np.float64)
    return rows.tolist() if len(rows) <= _LIST_ROWS else rows


def short_list(values: np.ndarray) -> np.ndarray | list[int]:
    """A small array as a list for a `foreach_set` of a property Blender sets item by item (not a plain array it
    copies whole, as attributes are): the same values; a large one stays an array (a list would hold a Python
    object per value)."""
    return values.tolist() if len(values) <= _LIST_ROWS else values


_SAME_NORMAL_COSINE = float(np.cos(np.radians(0.1)))


def blender_normals_match(mesh: bpy.types.Mesh, corner_normals: np.ndarray | None = None,
                          vertex_normals: np.ndarray | None = None) -> bool:
    """Whether Blender's own normals of the mesh as it stands (smooth flags and sharp edges set) are within 0.1
    degree of these unit normals everywhere: then custom normals would change nothing visible (Blender stores
    custom normals compressed, about a degree off), and leaving them out saves most of the time and memory of a
    large import. The file's exact normals stay in the stored-normals attribute for export either way.

    Give per-corner normals, or per-vertex ones (then compared with Blender's vertex normals where every face is
    smooth and no edge is sharp, which is what the corners get; elsewhere spread to the corners)."""
    if not len(mesh.loops):
        return True
    if vertex_normals is not None:
        if _smooth_everywhere(mesh):
            return _within_a_tenth_of_a_degree(corner_floats(mesh.vertex_normals, "vector", 3), vertex_normals)
        corner_vert = np.empty(len(mesh.loops), np.int32)
        mesh.attributes[".corner_vert"].data.foreach_get("value", corner_vert)
        corner_normals = np.asarray(vertex_normals)[corner_vert]
    assert corner_normals is not None
    return _within_a_tenth_of_a_degree(corner_floats(mesh.corner_normals, "vector", 3), corner_normals)


def _face_normals_match(mesh: bpy.types.Mesh, corner_normals: np.ndarray) -> bool:
    """Whether every corner's normal is within 0.1 degree of its face's normal (flat shading would show it)."""
    face_normals = corner_floats(mesh.polygon_normals, "vector", 3)
    corner_counts = face_corners(mesh)[1]
    return _within_a_tenth_of_a_degree(np.repeat(face_normals, corner_counts, axis=0), corner_normals)


def _within_a_tenth_of_a_degree(own: np.ndarray, given: np.ndarray) -> bool:
    cosines = np.einsum("ij,ij->i", own, np.asarray(given, np.float32))
    return bool((cosines > _SAME_NORMAL_COSINE).all())


def _smooth_everywhere(mesh: bpy.types.Mesh) -> bool:
    for name, domain in (("sharp_face", mesh.polygons), ("sharp_edge", mesh.edges)):
        attribute = mesh.attributes.get(name)
        if attribute is not None:
            flags = np.empty(len(domain), np.bool_)
            attribute.data.foreach_get("value", flags)
            if flags.any():
                return False
    return True


def add_corner_vectors(mesh: bpy.types.Mesh, name: str, vectors: np.ndarray) -> None:
    attribute = mesh.attributes.new(name, "FLOAT_VECTOR", "CORNER")
    attribute.data.foreach_set("vector", np.ascontiguousarray(vectors, np.float32).ravel())


def link_new_object(
    context: bpy.types.Context, name: str, data: bpy.types.ID | None, warnings: list[str] | None = None,
    taken_names: list[tuple[str, str]] | None = None, collection: bpy.types.Collection | None = None,
) -> bpy.types.Object:
    """A new object in the active collection; with `warnings`, a name Blender cannot hold (too long on 4.2) is kept
    for writing back, and said; with `taken_names`, a name another object already has (Blender numbers it) is kept
    too, and (file name, Blender's name) added there for the caller to sum up. `collection`: the active one, when
    the caller links many (asking the context for it takes a few microseconds)."""
    obj = bpy.data.objects.new(name, data)
    (context.collection if collection is None else collection).objects.link(obj)
    if warnings is None or obj.name == name:
        return obj
    # (looked up only now: `name in bpy.data.objects` walks every object, and a pack makes thousands; the new
    # object is not called `name`, so the lookup finds the object that had the name before, if any)
    taken = name in bpy.data.objects
    if not taken:
        remember_file_name(obj, name)
        warnings.append(f"object {name!r} is too long for this Blender; shown as {obj.name!r} and written back in full")
    elif taken_names is not None:
        remember_file_name(obj, name)
        taken_names.append((name, obj.name))
    return obj


def taken_names_note(taken_names: list[tuple[str, str]]) -> str:
    """One line for the objects whose names were already taken in the .blend (a file imported twice)."""
    name, shown = taken_names[0]
    more = f" and {len(taken_names) - 1} more" if len(taken_names) > 1 else ""
    return (f"{len(taken_names)} object name{'s' if len(taken_names) != 1 else ''} already taken in this .blend "
            f"({name!r} shown as {shown!r}{more}); written back under the file's names")  # fmt: skip


def unheld_data_note(obj: bpy.types.Object, file_kind: str, *, one_uv_map: bool, colors: bool,
                     shapes_applied: bool | None) -> str | None:
    """A warning naming what the object's mesh holds that `file_kind` files cannot, so that nothing is lost
    unsaid: UV maps beyond the active one (`one_uv_map`), colour attributes (unless `colors`), shape keys (unless
    `shapes_applied` is None, for a format that holds them: else whether the keys' current mix is written, as with
    modifiers applied, or the basis). None when nothing is left out."""
    if obj.type != "MESH":
        return None
    mesh = obj.data
    left_out = []
    if one_uv_map and len(mesh.uv_layers) > 1:
        active = mesh.uv_layers.active
        others = [repr(uv.name) for uv in mesh.uv_layers if active is None or uv.name != active.name]
        left_out.append(f"UV map {', '.join(others)} (only the active one is written)")
    if not colors and len(mesh.color_attributes):
        left_out.append(f"colour attribute {', '.join(repr(color.name) for color in mesh.color_attributes)}")
    if shapes_applied is not None and has_shape_keys(obj):
        left_out.append(f"shape keys ({'their current mix' if shapes_applied else 'the basis'} is written)")
    return f"{obj.name}: {file_kind} files cannot hold its {'; '.join(left_out)}: left out" if left_out else None


def has_shape_keys(obj: bpy.types.Object) -> bool:
    """Whether the mesh object has shape keys beyond its basis."""
    keys = obj.data.shape_keys if obj.type == "MESH" else None
    return keys is not None and len(keys.key_blocks) > 1


def transform_points(points: np.ndarray, matrix: Matrix) -> np.ndarray:
    m = np.array(matrix, np.float64)
    with np.errstate(invalid="ignore"):  # infinity * 0 gives NaN quietly: exporters refuse non-finite results
        return points.astype(np.float64) @ m[:3, :3].T + m[:3, 3]


def transform_normals(normals: np.ndarray, matrix: Matrix) -> np.ndarray:
    """Normals through the inverse transpose, renormalised; zero vectors stay zero."""
    m = np.array(matrix.to_3x3().inverted_safe().transposed(), np.float64)
    out = normals.astype(np.float64) @ m.T
    length = row_lengths(out, keepdims=True)
    np.divide(out, length, out=out, where=length > 0)
    return out


_IDENTITY_ROWS = tuple(tuple(float(row == column) for column in range(4)) for row in range(4))


def is_identity(matrix: Matrix) -> bool:
    """Whether the 4x4 matrix is exactly the identity (plain tuples: a numpy array costs 20 us, a pack's members
    ask one each)."""
    return len(matrix) == 4 and tuple(tuple(matrix[row]) for row in range(4)) == _IDENTITY_ROWS


# ------------------------------------------------------------------------------------------------- reading


@dataclass
class Triangles:
    """Per-corner triangle data of one or more meshes, in world (or export) space, 3 rows per triangle."""

    positions: np.ndarray  # (3T, 3) float32
    normals: np.ndarray  # (3T, 3) float32
    uvs: np.ndarray | None  # (3T, 2) float32, Blender convention (v from the bottom)
    material_names: list[str] = field(default_factory=list)
    material_indices: np.ndarray = field(default_factory=lambda: np.zeros(0, np.intc))  # (T,)
    source_objects: list[str] = field(default_factory=list)
    # The same positions as a vertex table and each corner's row in it: de-duplicating V vertices is much
    # cheaper than 3T corners. Optional: positions alone are always valid.
    vertex_positions: np.ndarray | None = None  # (V, 3) float32
    corner_vertices: np.ndarray | None = None  # (3T,) int

    @property
    def triangle_count(self) -> int:
        return len(self.positions) // 3


@contextmanager
def evaluated_mesh(
    obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph, apply_modifiers: bool
) -> Iterator[bpy.types.Mesh]:
    """The object's mesh with or without its modifiers; a temporary copy that is freed afterwards."""
    source = obj.evaluated_get(depsgraph) if apply_modifiers else obj
    mesh = source.to_mesh(preserve_all_data_layers=True, depsgraph=depsgraph)
    try:
        yield mesh
    finally:
        source.to_mesh_clear()


_STILL_PARENTS = frozenset(("OBJECT", "BONE", "VERTEX", "VERTEX_3"))  # (an Armature or Lattice parent deforms)


def evaluation_keeps_mesh(obj: bpy.types.Object) -> bool:
    """Whether the object's evaluated mesh is its own mesh as it stands: no modifiers, no shape keys, no parent
    deforming it (an Armature, Lattice or Curve parent of the deforming kind works without a modifier), not being
    edited or sculpted (the mesh then lives elsewhere)."""
    if obj.type != "MESH" or obj.modifiers or obj.mode in ("EDIT", "SCULPT"):
        return False
    mesh = obj.data
    parent_still = obj.parent is None or obj.parent_type in _STILL_PARENTS
    return parent_still and mesh.shape_keys is None and not mesh.is_editmode


@contextmanager
def exported_mesh(
    obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph, apply_modifiers: bool
) -> Iterator[bpy.types.Mesh]:
    """evaluated_mesh, read straight from the object's own mesh when evaluating could not change it
    (evaluation_keeps_mesh): the copy costs more than reading a small mesh (a track's 2,000 members)."""
    if evaluation_keeps_mesh(obj):
        yield obj.data
        return
    with evaluated_mesh(obj, depsgraph, apply_modifiers) as mesh:
        yield mesh


def corner_floats(collection: bpy.types.bpy_prop_collection, key: str, width: int) -> np.ndarray:
    values = np.empty(len(collection) * width, np.float32)
    collection.foreach_get(key, values)
    return values.reshape(-1, width)


def blender_corner_normals(mesh: bpy.types.Mesh) -> np.ndarray:
    """(C, 3) the corner normals Blender gives, each that is not finite replaced by its face's normal (or zero):
    Blender 4.4 at times gives NaN for a corner of a degenerate face, which no exported file can hold."""
    return finite_corner_normals(mesh, _corner_normals(mesh))


def _corner_normals(mesh: bpy.types.Mesh) -> np.ndarray:
    """(C, 3) mesh.corner_normals. Without custom normals, a mesh whose normals_domain is POINT (smooth, no sharp
    edges) has its vertex normals as corner normals, and one of FACE (flat) its face normals, copied as they are:
    reading those and copying them here costs half what Blender takes to make and give the corner normals
    (1M triangles smooth: 84 ms against 192)."""
    domain = mesh.normals_domain
    if domain in ("POINT", "FACE") and not mesh.has_custom_normals:
        if domain == "POINT":
            return rows_at(corner_floats(mesh.vertex_normals, "vector", 3), corner_vertices_of(mesh))
        _, sizes = face_corners(mesh)
        return np.repeat(corner_floats(mesh.polygon_normals, "vector", 3), sizes, axis=0)
    return corner_floats(mesh.corner_normals, "vector", 3)


def finite_corner_normals(mesh: bpy.types.Mesh, normals: np.ndarray) -> np.ndarray:
    """normals (C, 3), the mesh's corner normals as Blender gave them, with each that is not finite replaced by its
    face's normal (or zero), in place."""
    if normals.dtype.kind == "f" and np.isfinite(np.add.reduce(normals.reshape(-1))):
        return normals  # (a finite sum has no NaN nor infinity in it; a sum that overflows is looked at closely)
    broken = ~np.isfinite(normals).all(axis=1)
    if broken.any():
        starts, _ = face_corners(mesh)
        face_normals = corner_floats(mesh.polygons, "normal", 3)
        face = np.searchsorted(starts, np.flatnonzero(broken), side="right") - 1
        replacement = face_normals[face]
        replacement[~np.isfinite(replacement).all(axis=1)] = 0.0
        normals[broken] = replacement
    return normals


def mesh_triangles(
    mesh: bpy.types.Mesh,
    matrix: Matrix,
    *,
    stored_normals: str | None = None,
    materials: bool = True,
) -> Triangles:
    """Triangulated per-corner positions, normals (sharp edges and custom normals honoured) and active UVs, and with
    `materials` each triangle's material.

    `stored_normals` names a corner attribute holding the normals a file had on import: where Blender's
    normal still points the same way (so the user did not edit it) the stored vector is kept bit for bit.
    """
    loops, triangle_faces = triangle_corners(mesh)
    # A mesh of triangles only is its own triangulation, corners in order: no copies through `loops` (a pack's
    # thousands of small members each pay for every numpy call)
    in_order = len(mesh.loops) == 3 * len(mesh.polygons)  # (triangle_corners' own test)
    if matrix.determinant() < 0:  # a mirroring transform turns faces inside out: swap two corners back
        loops = loops.reshape(-1, 3)[:, [0, 2, 1]].ravel()
        in_order = False
    corner_vert = corner_vertices_of(mesh)
    vertex_positions = vertex_positions_of(mesh)
    corner_vertices = corner_vert if in_order else corner_vert[loops]
    normals = blender_corner_normals(mesh)
    if stored_normals:
        normals = prefer_stored_normals(mesh, normals, stored_normals)
    normals = normals if in_order else rows_at(normals, loops)
    uvs = None
    if (active_uvs := mesh.uv_layers.active) is not None:
        uvs = corner_floats(active_uvs.uv, "vector", 2)
        uvs = uvs if in_order else rows_at(uvs, loops)
    material_indices = np.zeros(0, np.intc)
    names = []
    if materials:
        material_indices = face_materials(mesh)
        material_indices = material_indices if in_order else material_indices[triangle_faces]
        names = [original_name(slot) if slot else "" for slot in mesh.materials]
    if not is_identity(matrix):
        vertex_positions = transform_points(vertex_positions, matrix).astype(np.float32)
        normals = transform_normals(normals, matrix).astype(np.float32)
    return Triangles(  # (rows_at: np.take gathers rows of 3 floats twice as fast as indexing)
        rows_at(vertex_positions, corner_vertices), normals, uvs, names, material_indices,
        vertex_positions=vertex_positions, corner_vertices=corner_vertices,
    )  # fmt: skip


def triangle_corners(mesh: bpy.types.Mesh) -> tuple[np.ndarray, np.ndarray]:
    """(3T,) corner indices of the mesh's triangulation and (T,) the face of each triangle. A mesh made of
    triangles only is its own triangulation (face f is corners 3f..3f+2): no need to ask Blender for it."""
    face_count = len(mesh.polygons)
    if len(mesh.loops) == 3 * face_count:  # every face has at least 3 corners: all are triangles
        return np.arange(3 * face_count, dtype=np.intc), np.arange(face_count, dtype=np.intc)
    triangle_count = len(mesh.loop_triangles)
    loops = np.empty(triangle_count * 3, np.intc)
    mesh.loop_triangles.foreach_get("loops", loops)
    faces = np.empty(triangle_count, np.intc)
    mesh.loop_triangle_polygons.foreach_get("value", faces)
    return loops, faces


def vertex_positions_of(mesh: bpy.types.Mesh) -> np.ndarray:
    """(V, 3) float32 vertex positions, from the attribute (a mesh without vertices has none: (0, 3))."""
    if not len(mesh.vertices):
        return np.zeros((0, 3), np.float32)
    return corner_floats(mesh.attributes["position"].data, "vector", 3)


def face_corners(mesh: bpy.types.Mesh) -> tuple[np.ndarray, np.ndarray]:
    """(F,) first corner and corner count of each face (the counts follow from the starts: reading `loop_total`
    through RNA costs as much again)."""
    starts = np.empty(len(mesh.polygons), np.intc)
    mesh.polygons.foreach_get("loop_start", starts)
    return starts, np.diff(starts, append=np.intc(len(mesh.loops))).astype(np.intc)


def corner_vertices_of(mesh: bpy.types.Mesh) -> np.ndarray:
    """(C,) vertex of each face corner, from the attribute (`loops` "vertex_index" is ~200x slower)."""
    corner_vert = np.empty(len(mesh.loops), np.intc)
    if len(corner_vert):  # a mesh without faces has no corner attribute
        mesh.attributes[".corner_vert"].data.foreach_get("value", corner_vert)
    return corner_vert


def smooth_faces(mesh: bpy.types.Mesh) -> np.ndarray:
    """(F,) whether each face is shaded smooth: not `sharp_face` (every face is smooth without the attribute)."""
    sharp = np.zeros(len(mesh.polygons), np.bool_)
    attribute = mesh.attributes.get("sharp_face")
    if attribute is not None and attribute.domain == "FACE" and attribute.data_type == "BOOLEAN" and len(sharp):
        attribute.data.foreach_get("value", sharp)
    return ~sharp


def face_materials(mesh: bpy.types.Mesh) -> np.ndarray:
    """(F,) material index of each face (the attribute: reading it per face through RNA is ~50x slower)."""
    indices = np.zeros(len(mesh.polygons), np.intc)
    attribute = mesh.attributes.get("material_index")
    if attribute is not None and attribute.domain == "FACE" and attribute.data_type == "INT" and len(indices):
        attribute.data.foreach_get("value", indices)
    return indices


_UNEDITED_COSINE = np.float32(np.cos(np.radians(3.0)))


def unedited(stored: np.ndarray, normals: np.ndarray, lengths: np.ndarray | None = None) -> np.ndarray:
    """(C,) which of Blender's (unit) normals still say the stored file normals (`lengths`: theirs, if known).
    Blender stores custom normals compressed: up to about 1.2 degrees off on real files. Within 3 degrees the user
    has not edited the normal, and the file's exact vector is written back. (The angle is within 3 degrees when
    stored . normal > cos(3 degrees) |stored|; false for nan.)"""
    lengths = np.sqrt(np.einsum("ij,ij->i", stored, stored)) if lengths is None else lengths
    kept: np.ndarray = np.einsum("ij,ij->i", stored, normals) > _UNEDITED_COSINE * lengths
    return kept


def prefer_stored_normals(
    mesh: bpy.types.Mesh, normals: np.ndarray, name: str, corner_vert: np.ndarray | None = None
) -> np.ndarray:
    """(C, 3) corner normals where each still matching the file's normal (the float vector attribute `name`) is
    replaced by the stored vector. The attribute is per corner, or per point when `corner_vert` (each corner's
    vertex) is given."""
    attribute = mesh.attributes.get(name)
    domain = "CORNER" if corner_vert is None else "POINT"
    if attribute is None or attribute.domain != domain or attribute.data_type != "FLOAT_VECTOR":
        return normals
    stored = corner_floats(attribute.data, "vector", 3)
    length = np.sqrt(np.einsum("ij,ij->i", stored, stored))  # (per point when stored so: fewer rows, same values)
    if corner_vert is not None:
        stored, length = rows_at(stored, corner_vert), length[corner_vert]
    unchanged = unedited(stored, normals, length)
    if unchanged.all():  # (the usual case, an untouched import: no choosing row by row)
        return stored
    if corner_vert is None:
        unchanged |= _on_faces_of_no_area(mesh, ~unchanged)
    kept: np.ndarray = np.where(unchanged[:, None], stored, normals).astype(np.float32, copy=False)
    return kept


def _on_faces_of_no_area(mesh: bpy.types.Mesh, corners: np.ndarray) -> np.ndarray:
    """(C,) which of the flagged corners lie on a face of no area (a degenerate face a file had): Blender has no
    normal to show or edit there, so the file's normal stands."""
    starts, _ = face_corners(mesh)
    areas = np.empty(len(starts), np.float32)
    mesh.polygons.foreach_get("area", areas)
    face = np.searchsorted(starts, np.flatnonzero(corners), side="right") - 1
    result = np.zeros(len(corners), bool)
    result[np.flatnonzero(corners)] = areas[face] == 0.0
    return result


def merge_triangles(parts: list[Triangles]) -> Triangles:
    """Concatenate several objects' triangles, leaving out parts without any; parts without UVs get (0, 0)
    when others have UVs (exporters warn about them: see `parts_without_uvs`)."""
    parts = [part for part in parts if part.triangle_count]
    if not parts:
        return Triangles(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32), None)
    has_uvs = any(part.uvs is not None for part in parts)
    names: list[str] = []
    indices = []
    for part in parts:
        remap = np.array([_index_of(names, name) for name in part.material_names] or [0], np.intc)
        if not part.material_names:
            _index_of(names, "")
        clipped = np.clip(part.material_indices, 0, len(remap) - 1)
        indices.append(remap[clipped])
    return Triangles(
        positions=np.concatenate([p.positions for p in parts]),
        normals=np.concatenate([p.normals for p in parts]),
        uvs=np.concatenate([_uvs_or_zeros(p) for p in parts]) if has_uvs else None,
        material_names=names,
        material_indices=np.concatenate(indices),
        source_objects=[name for p in parts for name in p.source_objects],
        **_merged_vertex_tables(parts),
    )


def _uvs_or_zeros(part: Triangles) -> np.ndarray:
    return part.uvs if part.uvs is not None else np.zeros((len(part.positions), 2), np.float32)


def parts_without_uvs(parts: list[Triangles]) -> list[str]:
    """Names of the objects whose (0, 0) UVs `merge_triangles` made up because others have UV maps."""
    if all(part.uvs is None for part in parts if part.triangle_count):
        return []
    return [name for part in parts if part.triangle_count and part.uvs is None for name in part.source_objects]


def _merged_vertex_tables(parts: list[Triangles]) -> dict[str, np.ndarray | None]:
    tables = [p.vertex_positions for p in parts]
    corners = [p.corner_vertices for p in parts]
    if any(t is None for t in tables) or any(c is None for c in corners):
        return {"vertex_positions": None, "corner_vertices": None}
    merged_corners = []
    offset = 0
    for table, corner in zip(tables, corners, strict=True):
        assert table is not None and corner is not None
        merged_corners.append(corner + offset)
        offset += len(table)
    return {"vertex_positions": np.concatenate(tables), "corner_vertices": np.concatenate(merged_corners)}


def _index_of(names: list[str], name: str) -> int:
    if name not in names:
        names.append(name)
    return names.index(name)
