"""Compile an IqeDocument into an IqmModel the way the reference compiler compiles the same document written as
IQE: meshes grouped by (name, material), polygons fanned, vertices merged when everything but the tangent is
equal, degenerate triangles dropped, blend weights reduced to the 4 largest and stored summing to 255, tangents
computed when the document has none, quantised frames and per-frame bounds.

Deliberate differences: the vertex order is the document's (the compiler reorders vertices and triangles for the
vertex cache), the adjacency is that of the triangles as written (the compiler's looks positions up by the wrong
index), tangents never become NaN, given tangents stay with their vertices (the compiler scrambles explicit
`vx` tangents), and joints are written even without meshes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..dedup import first_occurrences, row_labels
from ..errors import FormatError, Warnings
from ..iqe.document import (
    COMPONENT_TYPES,
    MAX_INFLUENCES,
    VERTEX_ARRAY_KINDS,
    FteMeshFields,
    IqeDocument,
    IqeMesh,
    filled_in_notes,
)
from ..rows import any_per_row
from .components import encode
from .extensions import FteEvent
from .geometry import adjacency, compiler_tangents, fan_triangles
from .layout import CUSTOM_DEFAULT, DEFAULT_FORMATS, LOOP_FLAG, IqmAnim, IqmMesh, IqmModel, IqmVertexArray
from .skeleton import canonical_poses, frame_bounds, quantise_frames

Float32Array = npt.NDArray[np.float32]
Float64Array = npt.NDArray[np.float64]
Int64Array = npt.NDArray[np.int64]

_WEIGHT_EPSILON = 1e-3  # the compiler drops weights at or below this
_MAX_JOINT_INDEX = 255
_UINT32 = 0xFFFFFFFF
_STANDARD_ORDER = ("position", "texcoord", "normal", "tangent", "blendindexes", "blendweights", "color")


@dataclass
class IqmWriteOptions:
    compute_tangents: bool = True  # without tangents in the document: computed from normals and texcoords
    bounds: bool = True  # per-frame bounding boxes of the skinned mesh
    adjacency: bool = True  # triangle neighbours


def compile_document(
    document: IqeDocument, options: IqmWriteOptions | None = None, notes: Warnings | None = None
) -> IqmModel:
    """The IQM content of `document`; raises FormatError for what IQM cannot hold."""
    settings = options if options is not None else IqmWriteOptions()
    warnings = notes if notes is not None else Warnings()
    _validate(document)
    for note in filled_in_notes(document.meshes, smoothing=False):  # (as the IQE writer fills them in, and says so)
        warnings.add(note)
    vertices = _Vertices(document)
    model = IqmModel()
    classes = _vertex_classes(vertices)
    sources = _build_meshes(document, vertices, classes, model, warnings)
    model.vertex_count = int(sources.shape[0])
    _build_vertex_arrays(document, vertices, sources, model, settings)
    if settings.adjacency and model.triangles.shape[0]:
        model.adjacency = adjacency(model.triangles, classes[sources])  # (only which classes are equal counts)
    _build_skeleton(document, vertices, model, settings, warnings)
    if document.comment_section is not None:
        model.comment = document.comment_section.encode("utf-8")
    _build_extensions(document, model)
    return model


def _build_extensions(document: IqeDocument, model: IqmModel) -> None:
    """FTE's sections from the document: an output mesh takes the FTE values and skins of the first of its
    document meshes that has them (iqmtool's defaults, no skins, for the others); events go with their animation."""
    members: dict[tuple[str, str], list[IqeMesh]] = {}
    for mesh in document.meshes:
        members.setdefault((mesh.name, mesh.material), []).append(mesh)
    sources = [members[(mesh.name, mesh.material)] for mesh in model.meshes]
    if any(mesh.fte is not None for group in sources for mesh in group):
        model.extensions.fte_meshes = [next((m.fte for m in group if m.fte is not None), FteMeshFields())
                                       for group in sources]  # fmt: skip
    if any(mesh.skins for group in sources for mesh in group):
        model.extensions.fte_skins = [next((m.skins for m in group if m.skins), []) for group in sources]
    if model.anims:  # (animations without joints are left out, and their events with them)
        model.extensions.fte_events = [FteEvent(index, float(np.float32(event.time)), event.code, event.data)
                                       for index, animation in enumerate(document.animations)
                                       for event in animation.events]  # fmt: skip


# ---------------------------------------------------------------------------------------------- checks


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise FormatError(message)


def _check_array(array: npt.NDArray[np.generic] | None, rows: int, columns: int | None, what: str) -> None:
    if array is None:
        return
    _require(array.ndim == 2 and array.shape[0] == rows, f"{what} must have one row per vertex ({rows})")
    _require(columns is None or array.shape[1] == columns, f"{what} must have {columns} columns")
    _require(bool(np.isfinite(array).all()), f"{what} contains NaN or infinity")


def _validate(document: IqeDocument) -> None:
    joint_count = len(document.joints)
    for index, joint in enumerate(document.joints):
        _require(-1 <= joint.parent < index, f"joint {joint.name!r} (index {index}) has parent {joint.parent}: "
                 "parents must come before their children")  # fmt: skip
        values = (*joint.translation, *joint.rotation, *joint.scale)
        _require(bool(np.isfinite(values).all()), f"base pose of joint {joint.name!r} contains NaN or infinity")
    for declared in document.vertex_arrays:
        _require(declared.kind in VERTEX_ARRAY_KINDS, f"unknown vertex array type {declared.kind!r}")
        _require(declared.component in COMPONENT_TYPES, f"unknown vertex array component {declared.component!r}")
    for mesh in document.meshes:
        _validate_mesh(mesh, joint_count)
        _validate_fte(mesh)
    for animation in document.animations:
        frames = animation.frames
        what = f"animation {animation.name!r}"
        _require(frames.ndim == 3 and frames.shape[2] == 10, f"{what} frames must be (frames, joints, 10)")
        _require(not frames.shape[0] or frames.shape[1] == joint_count,
                 f"{what} frames have {frames.shape[1]} poses but the skeleton has {joint_count} joints")  # fmt: skip
        _require(bool(np.isfinite(frames).all()), f"{what} frames contain NaN or infinity")
        rate = animation.framerate
        _require(bool(np.isfinite(rate)) and rate >= 0.0, f"{what} framerate must be a number >= 0")
        for event in animation.events:
            _require(0 <= event.code <= _UINT32 and bool(np.isfinite(event.time)),
                     f"{what} event {event.data!r}: its code must be 0..{_UINT32} and its time a number")  # fmt: skip


def _validate_fte(mesh: IqeMesh) -> None:
    fields = mesh.fte
    if fields is not None:
        whole = (fields.contents, fields.surfaceflags, fields.body, fields.geomset, fields.geomid)
        _require(all(0 <= value <= _UINT32 for value in whole) and not np.isnan([fields.mindist, fields.maxdist]).any(),
                 f"mesh {mesh.name!r}: FTE values must be 0..{_UINT32} (distances: numbers)")  # fmt: skip
    for skin in mesh.skins:
        _require(not np.isnan(skin.interval), f"mesh {mesh.name!r}: a skin's interval must be a number")


def _validate_mesh(mesh: IqeMesh, joint_count: int) -> None:
    what = f"mesh {mesh.name!r}"
    count = mesh.vertex_count
    _check_array(mesh.positions, count, 3, f"{what} positions")
    for array, columns, label in ((mesh.texcoords, 2, "texcoords"), (mesh.normals, 3, "normals"),
                                  (mesh.tangents, 4, "tangents"), (mesh.colors, 4, "colors"),
                                  (mesh.blend_weights, MAX_INFLUENCES, "blend weights")):  # fmt: skip
        _check_array(array, count, columns, f"{what} {label}")
    for slot, values in mesh.custom.items():
        _require(slot in range(10), f"{what} custom slot {slot} is not 0..9")
        _check_array(values, count, None, f"{what} custom{slot}")
        _require(1 <= values.shape[1] <= 4, f"{what} custom{slot} must have 1 to 4 columns")
    _require((mesh.blend_indices is None) == (mesh.blend_weights is None),
             f"{what} needs both blend indices and weights")  # fmt: skip
    if mesh.blend_indices is not None and mesh.blend_weights is not None:
        _require(mesh.blend_indices.shape == (count, MAX_INFLUENCES), f"{what} blend indices must be (V, 4)")
        used = mesh.blend_weights > _WEIGHT_EPSILON
        limit = min(joint_count, _MAX_JOINT_INDEX + 1) if joint_count else _MAX_JOINT_INDEX + 1
        indices = mesh.blend_indices[used]
        _require(bool(((indices >= 0) & (indices < limit)).all()),
                 f"{what} has blend indices outside 0..{limit - 1} ({joint_count} joints; at most 256 can be "
                 "referenced)")  # fmt: skip
    sizes, corners = mesh.face_sizes, mesh.face_corners
    _require(sizes.ndim == 1 and corners.ndim == 1, f"{what} faces must be flat arrays")
    _require(bool((sizes >= 3).all()), f"{what} has faces with fewer than 3 corners")
    _require(int(sizes.sum()) == corners.shape[0], f"{what} face_sizes do not add up to the number of corners")
    _require(bool(((corners >= 0) & (corners < count)).all()), f"{what} has face corners outside 0..{count - 1}")


# ---------------------------------------------------------------------------------------------- vertices


class _Vertices:
    """Every vertex of the document, meshes one after the other (the order an IQE file lists them in), each
    attribute filled in for meshes without it as the IQE writer fills it in (zeros; white for colours)."""

    def __init__(self, document: IqeDocument) -> None:
        meshes = document.meshes
        self.counts = np.array([m.vertex_count for m in meshes], np.int64)
        self.starts = np.cumsum(self.counts) - self.counts
        self.total = int(self.counts.sum())
        self.positions = self._stack(meshes, "positions", 3)
        assert self.positions is not None or not meshes
        self.texcoords = self._stack(meshes, "texcoords", 2)
        self.normals = self._stack(meshes, "normals", 3)
        self.tangents = self._stack(meshes, "tangents", 4)
        self.colors = self._stack(meshes, "colors", 4, fill=1.0)
        self.custom: dict[int, Float32Array] = {}
        for slot in sorted({slot for mesh in meshes for slot in mesh.custom}):
            widths = {mesh.custom[slot].shape[1] for mesh in meshes if slot in mesh.custom}
            _require(len(widths) == 1, f"custom{slot} has different widths in different meshes")
            width = widths.pop()
            self.custom[slot] = np.concatenate([mesh.custom[slot] if slot in mesh.custom
                                                else np.zeros((mesh.vertex_count, width), np.float32)
                                                for mesh in meshes]).astype(np.float32)  # fmt: skip
        self.bones: npt.NDArray[np.uint8] | None = None
        self.weights: Float64Array | None = None
        if any(mesh.blend_indices is not None for mesh in meshes):
            indices = np.concatenate([_or_zeros(mesh.blend_indices, mesh.vertex_count) for mesh in meshes])
            weights = np.concatenate([_or_zeros(mesh.blend_weights, mesh.vertex_count) for mesh in meshes])
            self.bones, self.weights = compiled_blends(indices, weights)

    def _stack(self, meshes: list[IqeMesh], name: str, width: int, fill: float = 0.0) -> Float32Array | None:
        arrays = [getattr(mesh, name) for mesh in meshes]
        if all(array is None for array in arrays):
            return None
        if len(arrays) == 1:  # one mesh: its own array (the compile only reads it), not a copy
            return np.asarray(arrays[0], np.float32)
        stacked: Float32Array = np.concatenate([np.full((mesh.vertex_count, width), fill, np.float32)
                                                if array is None else array
                                                for mesh, array in zip(meshes, arrays, strict=True)])  # fmt: skip
        return np.asarray(stacked, np.float32)  # (a new array already: no second copy)


def _or_zeros(array: npt.NDArray[np.generic] | None, rows: int) -> npt.NDArray[np.generic]:
    return np.zeros((rows, MAX_INFLUENCES), np.float32) if array is None else array


def compiled_blends(indices: npt.ArrayLike, weights: npt.ArrayLike) -> tuple[npt.NDArray[np.uint8], Float64Array]:
    """The compiler's blend combination per vertex: weights above 1e-3, largest first (ties keep their order),
    at most 4, normalised (sum, then times 1/sum, in double); unused slots are joint 0 with weight 0."""
    index_table = np.asarray(indices, np.int64)
    weight_table = np.asarray(weights, np.float32).astype(np.float64)
    kept = weight_table > _WEIGHT_EPSILON
    order = np.argsort(np.where(kept, -weight_table, np.inf), axis=1, kind="stable")[:, :MAX_INFLUENCES]
    sorted_kept = np.take_along_axis(kept, order, 1)
    chosen = np.where(sorted_kept, np.take_along_axis(weight_table, order, 1), 0.0)
    bones = np.where(sorted_kept, np.take_along_axis(index_table, order, 1), 0)
    total = chosen[:, 0].copy()
    for slot in range(1, chosen.shape[1]):
        total += chosen[:, slot]
    with np.errstate(divide="ignore"):
        scale = np.where(total > 0.0, 1.0 / total, 0.0)
    normalised = chosen * scale[:, None]
    width = normalised.shape[1]
    if width < MAX_INFLUENCES:
        normalised = np.pad(normalised, ((0, 0), (0, MAX_INFLUENCES - width)))
        bones = np.pad(bones, ((0, 0), (0, MAX_INFLUENCES - width)))
    return bones.astype(np.uint8), normalised


def quantised_weights(weights: Float64Array) -> npt.NDArray[np.uint8]:
    """Normalised weights as bytes summing to exactly 255 (the surplus or deficit taken from slot 0 onwards)."""
    values = np.floor(0.5 + weights * 255.0).astype(np.int64)
    total = values.sum(axis=1)
    weighted = any_per_row(weights > 0.0)
    while True:
        over = weighted & (total > 255)
        under = weighted & (total < 255)
        if not (over.any() or under.any()):
            break
        for slot in range(values.shape[1]):
            down = over & (values[:, slot] > 0) & (total > 255)
            values[down, slot] -= 1
            total[down] -= 1
            up = under & (values[:, slot] < 255) & (total < 255)
            values[up, slot] += 1
            total[up] += 1
    quantised: npt.NDArray[np.uint8] = values.astype(np.uint8)
    return quantised


def _key_rows(vertices: _Vertices, group_of_vertex: Int64Array, classes: Int64Array,
              rows: Int64Array | None = None) -> npt.NDArray[np.uint32]:  # fmt: skip
    """Per vertex (of `rows`, or all), the bits of everything that tells vertices apart (-0.0 counted as 0.0,
    as the compiler compares doubles): its class (position and blend), the other attributes, its group."""
    floats = [vertices.texcoords, vertices.normals, vertices.tangents, vertices.colors, *vertices.custom.values()]
    kept = [array for array in floats if array is not None]
    numbered = [classes.astype(np.uint32) if vertices.total < 2**32 else classes, group_of_vertex.astype(np.uint32)]
    others: list[npt.NDArray[Any]] = [number[:, None] for number in numbered]
    if rows is not None:
        kept = [array[rows] for array in kept]
        others = [array[rows] for array in others]
    return _bit_table(kept, others)


def _vertex_labels(vertices: _Vertices, group_of_vertex: Int64Array, classes: Int64Array) -> Int64Array:
    """row_labels of the vertices' key rows. Equal vertices have equal positions and blends (their class), so
    only the vertices sharing their class with another are compared (of a smooth mesh, those along its seams)."""
    total = vertices.total
    shared = np.bincount(classes)[classes] > 1
    compared = np.flatnonzero(shared)
    if len(compared) > total * 3 // 4:  # (seams nearly everywhere: nothing to gain)
        return row_labels(_key_rows(vertices, group_of_vertex, classes).view(np.float32))
    first = np.arange(total)
    if len(compared):
        labels = row_labels(_key_rows(vertices, group_of_vertex, classes, compared).view(np.float32))
        first[compared] = compared[first_occurrences(labels)][labels]
    is_first = first == np.arange(total)
    result: Int64Array = (np.cumsum(is_first) - 1)[first]
    return result


def _bit_table(floats: list[Float32Array], others: list[npt.NDArray[Any]]) -> npt.NDArray[np.uint32]:
    """The bits of float32 tables plus 0.0 (-0.0 counted as 0.0), then those of the others, side by side in one
    table of an even width (a zero column added): row_labels then pairs its columns without a copy."""
    bits = [np.ascontiguousarray(array).view(np.uint32).reshape(len(array), -1) for array in others]
    width = sum(array.shape[1] for array in floats) + sum(array.shape[1] for array in bits)
    table = np.zeros((len(floats[0]) if floats else len(bits[0]), width + width % 2), np.uint32)
    column = 0
    for array in floats:  # (the sum is made in its place in the table: no copy of each table first)
        np.add(array, np.float32(0.0), out=table[:, column : column + array.shape[1]].view(np.float32))
        column += array.shape[1]
    for part in bits:
        table[:, column : column + part.shape[1]] = part
        column += part.shape[1]
    return table


def _build_meshes(
    document: IqeDocument, vertices: _Vertices, classes: Int64Array, model: IqmModel, warnings: Warnings
) -> Int64Array:
    """Output meshes and triangles; returns the document vertex behind each output vertex. Triangles left with a
    repeated vertex once equal vertices are merged are left out (the compiler's rule), counted in a warning."""
    groups: dict[tuple[str, str], list[int]] = {}
    for index, mesh in enumerate(document.meshes):
        groups.setdefault((mesh.name, mesh.material), []).append(index)
    group_of_vertex = np.repeat(np.arange(len(document.meshes)), vertices.counts)
    for number, members in enumerate(groups.values()):
        for member in members:
            group_of_vertex[vertices.starts[member] : vertices.starts[member] + vertices.counts[member]] = number
    if not vertices.total:
        return np.zeros(0, np.int64)
    labels = _vertex_labels(vertices, group_of_vertex, classes)
    first_vertex = first_occurrences(labels)
    source_parts: list[Int64Array] = []
    triangle_parts: list[Int64Array] = []
    renumber = np.zeros(int(labels.max()) + 1, np.int64)
    output_count = triangle_count = given = 0
    for (name, material), members in groups.items():
        triangles = [fan_triangles(document.meshes[m].face_corners, document.meshes[m].face_sizes)
                     + vertices.starts[m] for m in members]  # fmt: skip
        group_triangles = labels[np.concatenate(triangles)]
        given += group_triangles.shape[0]
        if not group_triangles.shape[0]:
            continue  # no faces: the compiler makes no mesh
        kept = group_triangles[(group_triangles[:, 0] != group_triangles[:, 1])
                               & (group_triangles[:, 1] != group_triangles[:, 2])
                               & (group_triangles[:, 2] != group_triangles[:, 0])]  # fmt: skip
        used = _used_labels(kept)
        renumber[used] = output_count + np.arange(used.shape[0])
        model.meshes.append(IqmMesh(name, material, output_count, int(used.shape[0]), triangle_count,
                                    int(kept.shape[0])))  # fmt: skip
        source_parts.append(first_vertex[used])
        triangle_parts.append(renumber[kept])
        output_count += int(used.shape[0])
        triangle_count += int(kept.shape[0])
    if triangle_parts:
        model.triangles = np.concatenate(triangle_parts).astype(np.uint32)
    if triangle_count < given:
        warnings.add(f"{given - triangle_count:,} of {given:,} triangles left out, as the reference iqm compiler "
                     "leaves them out: two of their corners are one vertex (the same position, UV, normal, colour "
                     "and weights), so they have no area and nothing visible is lost")  # fmt: skip
    return np.concatenate(source_parts) if source_parts else np.zeros(0, np.int64)


def _used_labels(triangles: Int64Array) -> Int64Array:
    """The labels the triangles use, in increasing order (np.unique's result, without its sort: a group's labels
    lie in a range about as long as its vertex count, which one flag per label covers)."""
    if not triangles.size:
        return np.zeros(0, np.int64)
    lowest, highest = int(triangles.min()), int(triangles.max())
    if highest - lowest > 4 * triangles.size:  # (a group's vertices far apart among other groups': rare)
        return np.unique(triangles)
    seen = np.zeros(highest - lowest + 1, bool)
    seen[(triangles - lowest).ravel()] = True
    used: Int64Array = np.flatnonzero(seen) + lowest
    return used


def _vertex_classes(vertices: _Vertices) -> Int64Array:
    """The vertices numbered by (position, blend): the compiler's test for shared triangle edges."""
    if not vertices.total:
        return np.zeros(0, np.int64)
    assert vertices.positions is not None
    others: list[npt.NDArray[Any]] = []
    if vertices.bones is not None and vertices.weights is not None:
        others = [vertices.bones, vertices.weights]
    rows = _bit_table([vertices.positions], others)
    return row_labels(rows.view(np.float32))


# ---------------------------------------------------------------------------------------------- vertex arrays


def _declared(document: IqeDocument, kind: str, default: tuple[str, int], name: str) -> tuple[str, int, str]:
    """(component, size, name) of an array: its `vertexarray` declaration (first wins, size clamped to 1..4 as
    the compiler clamps it), else the compiler's default."""
    for declared in document.vertex_arrays:
        if declared.kind == kind:
            return declared.component, min(max(declared.size, 1), 4), declared.name or name
    return default[0], default[1], name


def _columns(values: npt.NDArray[np.generic], size: int, defaults: tuple[float, ...]) -> Float64Array:
    """`size` columns of `values`, padded with the format's defaults (W = 1 for positions, for instance)."""
    table = np.asarray(values, np.float64)
    if table.shape[1] >= size:
        return table[:, :size]
    missing = np.array(defaults[table.shape[1] : size], np.float64)
    padding = np.broadcast_to(missing, (table.shape[0], missing.shape[0]))
    return np.concatenate((table, padding), axis=1)


def _build_vertex_arrays(
    document: IqeDocument, vertices: _Vertices, sources: Int64Array, model: IqmModel, settings: IqmWriteOptions
) -> None:
    if not sources.shape[0] and not model.meshes:
        return
    # (float32 as the document holds them: each is made double, exactly, only where it is computed with)
    arrays: dict[str, npt.NDArray[np.floating[Any]] | None] = {
        "position": vertices.positions[sources] if vertices.positions is not None else None,
        "texcoord": vertices.texcoords[sources] if vertices.texcoords is not None else None,
        "normal": vertices.normals[sources] if vertices.normals is not None else None,
        "tangent": vertices.tangents[sources] if vertices.tangents is not None else None,
        "color": vertices.colors[sources] if vertices.colors is not None else None,
    }
    if arrays["tangent"] is None and settings.compute_tangents:
        texcoords, normals = arrays["texcoord"], arrays["normal"]
        if texcoords is not None and normals is not None and arrays["position"] is not None:
            stored_float = _declared(document, "tangent", DEFAULT_FORMATS["tangent"], "tangent")[0] == "float"
            arrays["tangent"] = compiler_tangents(arrays["position"], texcoords, normals, model.triangles,
                                                  np.float32 if stored_float else np.float64)  # fmt: skip
    pads = {"position": (0.0, 0.0, 0.0, 1.0), "color": (0.0, 0.0, 0.0, 1.0)}
    for kind in _STANDARD_ORDER:
        component, size, _ = _declared(document, kind, DEFAULT_FORMATS[kind], kind)
        if kind in ("blendindexes", "blendweights"):
            if vertices.bones is None or vertices.weights is None:
                continue
            values = _blend_values(kind, component, vertices.bones[sources], vertices.weights[sources])
            model.vertex_arrays.append(IqmVertexArray(kind, component, np.ascontiguousarray(values[:, :size])))
            continue
        table = arrays[kind]
        if table is None:
            continue
        stored = _stored(table, component, size, pads.get(kind, (0.0, 0.0, 0.0, 0.0)))
        model.vertex_arrays.append(IqmVertexArray(kind, component, stored))
    for slot, values in vertices.custom.items():
        default = (CUSTOM_DEFAULT[0], values.shape[1])  # an undeclared custom keeps its width (the IQE writer
        component, size, name = _declared(document, f"custom{slot}", default, f"custom{slot}")  # declares it)
        stored = _stored(values[sources], component, size, (0.0, 0.0, 0.0, 0.0))
        model.vertex_arrays.append(IqmVertexArray("custom", component, stored, name))


def _stored(values: npt.NDArray[np.floating[Any]], component: str, size: int,
            defaults: tuple[float, ...]) -> npt.NDArray[np.generic]:  # fmt: skip
    """`size` columns of `values` (padded with the defaults) in `component` format. float32 values stored as
    float are taken as they are: through double and back they would keep every bit."""
    if component != "float" or values.dtype != np.float32:
        return encode(_columns(values, size, defaults), component)
    width = values.shape[1]
    if width >= size:
        return np.ascontiguousarray(values[:, :size])
    padded = np.empty((values.shape[0], size), np.float32)
    padded[:, :width] = values
    padded[:, width:] = np.array(defaults[width:size], np.float32)
    return padded


def _blend_values(
    kind: str, component: str, bones: npt.NDArray[np.uint8], weights: Float64Array
) -> npt.NDArray[np.generic]:
    if kind == "blendindexes":
        return encode(bones, component, normalized=False)
    if component == "ubyte":
        return quantised_weights(weights)
    return encode(weights, component)


# ---------------------------------------------------------------------------------------------- skeleton


def _build_skeleton(
    document: IqeDocument, vertices: _Vertices, model: IqmModel, settings: IqmWriteOptions, warnings: Warnings
) -> None:
    joints = document.joints
    model.joint_names = [joint.name for joint in joints]
    model.joint_parents = np.array([joint.parent for joint in joints], np.int32)
    base = canonical_poses([(*j.translation, *j.rotation, *j.scale) for j in joints]).reshape(-1, 10)
    model.joint_poses = base.astype(np.float32)
    if not document.animations:
        return
    if not joints:
        warnings.add("animations without joints left out: IQM stores frames as joint poses")
        return
    model.pose_parents = model.joint_parents.copy()
    parts = [animation.frames.astype(np.float32).reshape(-1, len(joints), 10) for animation in document.animations]
    frames = canonical_poses(np.concatenate(parts)).astype(np.float32)
    quantised = quantise_frames(frames)
    model.pose_masks, model.channel_offsets, model.channel_scales = (quantised.masks, quantised.offsets,
                                                                     quantised.scales)  # fmt: skip
    model.frames = quantised.frames
    first = 0
    for animation, part in zip(document.animations, parts, strict=True):
        flags = LOOP_FLAG if animation.loop else 0
        model.anims.append(IqmAnim(animation.name, first, part.shape[0], float(animation.framerate), flags))
        first += part.shape[0]
    bones, weights = vertices.bones, vertices.weights
    if settings.bounds and frames.shape[0] and model.meshes and bones is not None and weights is not None:
        assert vertices.positions is not None
        model.bounds = frame_bounds(
            [joint.parent for joint in joints], base, frames.astype(np.float64),
            vertices.positions.astype(np.float64), bones, weights.astype(np.float32),
        )  # fmt: skip
