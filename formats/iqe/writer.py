"""Write an IqeDocument as IQE text that the reference compiler reads correctly.

The writer refuses (FormatError) what the compiler would misread: names with quotes or line breaks, a (mesh,
material) pair repeated after another mesh, children before parents, blend indices past 255, non-finite
numbers. It keeps every line under 512 bytes by splitting long polygons, writes quaternions unit length with
w <= 0, and floats with 9 significant digits (exact for float32). Numbers are formatted with one `%` operation
per attribute and size class, never per vertex in Python.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from ..errors import FormatError, Warnings
from .document import (
    COMPONENT_TYPES,
    MAX_INFLUENCES,
    VERTEX_ARRAY_KINDS,
    IqeAnimation,
    IqeDocument,
    IqeJoint,
    IqeMesh,
    IqeVertexArrayFormat,
)
from .poses import canonical_quaternions

Float64Array = npt.NDArray[np.float64]
Int64Array = npt.NDArray[np.int64]
ObjectArray = npt.NDArray[np.object_]

MAX_LINE_BYTES = 510  # plus the newline, within the compiler's 511-byte line buffer
_MAX_JOINT_INDEX = 255
_UNWRITABLE = {'"': "'", "\n": " ", "\r": " ", "\x00": " "}
_DEFAULT_SMOOTHING = (-1, 180.0, False)


def sanitize_name(name: str) -> tuple[str, bool]:
    """A writable version of `name` (quotes become apostrophes, line breaks spaces) and whether it changed."""
    cleaned = "".join(_UNWRITABLE.get(character, character) for character in name)
    return cleaned, cleaned != name


def write_iqe(document: IqeDocument, warnings: Warnings | None = None) -> bytes:
    """Serialise the document; `warnings` receives notes about data that had to be completed or split."""
    notes = warnings if warnings is not None else Warnings()
    _check_document(document)
    out: list[str] = ["# Inter-Quake Export"]
    out.extend(_comment_line(text) for text in document.comments)
    out.extend(_vertex_array_lines(document))
    out.extend(_skeleton_lines(document.joints))
    layout = _FileLayout(document, notes)
    smoothing = _DEFAULT_SMOOTHING
    for mesh in document.meshes:
        smoothing = _mesh_lines(mesh, layout, smoothing, out, notes)
    for animation in document.animations:
        _animation_lines(animation, out)
    text = "\n".join(out) + "\n"
    if document.comment_section is not None:
        text += "comment\n" + document.comment_section
    return text.encode("utf-8")


# ---------------------------------------------------------------------------------------------------- formatting


def _number_format(columns: int, integer_columns: Iterable[int] = ()) -> str:
    integers = set(integer_columns)
    return " ".join("%d" if column in integers else "%.9g" for column in range(columns))


def _format_rows(command: str, table: npt.ArrayLike, integer_columns: Iterable[int] = ()) -> list[str]:
    """One line (without newline) per row of a (N, W) table."""
    values = np.asarray(table, dtype=np.float64)
    rows, columns = values.shape
    if not rows:
        return []
    template = f"{command} {_number_format(columns, integer_columns)}" if columns else command
    return ((template + "\n") * rows % tuple(values.ravel().tolist())).split("\n")[:-1]


def _strings(count: int, groups: Iterable[tuple[Int64Array, list[str]]]) -> ObjectArray:
    """Place groups of formatted lines at their row positions."""
    placed = np.empty(count, dtype=object)
    for rows, lines in groups:
        if lines:
            placed[rows] = np.array(lines, dtype=object)
    return placed


def _ragged_rows(
    command: str, table: Float64Array, widths: Int64Array, integer_columns: Iterable[int] = ()
) -> ObjectArray:
    """Lines for rows of different lengths: row i uses the first widths[i] columns of the table."""
    integers = tuple(integer_columns)
    groups = []
    for width in np.unique(widths).tolist():
        rows = np.flatnonzero(widths == width)
        groups.append((rows, _format_rows(command, table[rows, :width], integers)))
    return _strings(widths.shape[0], groups)


def _quoted(name: str, what: str, command: str) -> str:
    bad = sorted({character for character in name if character in _UNWRITABLE})
    if bad:
        shown = ", ".join(repr(character) for character in bad)
        raise FormatError(f"{what} {name!r} contains {shown}, which IQE cannot represent (see sanitize_name)")
    line = f'{command} "{name}"'
    if len(line.encode("utf-8")) > MAX_LINE_BYTES:
        raise FormatError(f"{what} {name[:40]!r}... is too long for an IQE line ({MAX_LINE_BYTES} bytes at most)")
    return line


def _comment_line(text: str) -> str:
    line = "#" + text
    if "\n" in text or "\r" in text:
        raise FormatError(f"comment {text[:40]!r} contains a line break")
    if len(line.encode("utf-8")) > MAX_LINE_BYTES:
        raise FormatError(f"comment {text[:40]!r}... is longer than {MAX_LINE_BYTES} bytes")
    return line


# ---------------------------------------------------------------------------------------------------- checks


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise FormatError(message)


def _check_finite(values: npt.ArrayLike, what: str) -> None:
    _require(bool(np.isfinite(np.asarray(values, dtype=np.float64)).all()), f"{what} contains NaN or infinity")


def _check_shape(array: npt.NDArray[np.generic] | None, rows: int, columns: int, what: str) -> None:
    if array is None:
        return
    _require(array.shape == (rows, columns), f"{what} must have shape ({rows}, {columns}), not {array.shape}")
    _check_finite(array, what)


def _check_document(document: IqeDocument) -> None:
    _check_vertex_array_formats(document.vertex_arrays)
    _check_joints(document.joints)
    seen: set[tuple[str, str]] = set()
    previous: tuple[str, str] | None = None
    for mesh in document.meshes:
        key = (mesh.name, mesh.material)
        _require(
            key == previous or key not in seen,
            f"mesh {mesh.name!r} with material {mesh.material!r} appears again after other meshes; the reference "
            "compiler loses triangles of such repeated blocks (merge them or give them distinct names)",
        )
        seen.add(key)
        previous = key
        _check_mesh(mesh, len(document.joints), document)
    for animation in document.animations:
        _check_animation(animation, len(document.joints))


def _check_vertex_array_formats(formats: list[IqeVertexArrayFormat]) -> None:
    kinds = [declared.kind for declared in formats]
    for declared in formats:
        _require(declared.kind in VERTEX_ARRAY_KINDS, f"unknown vertex array type {declared.kind!r}")
        _require(declared.component in COMPONENT_TYPES, f"unknown vertex array component {declared.component!r}")
        _require(1 <= declared.size <= 4, f"vertex array {declared.kind!r} size must be 1..4")
        _require(kinds.count(declared.kind) == 1, f"vertex array {declared.kind!r} is declared twice")


def _check_joints(joints: list[IqeJoint]) -> None:
    for index, joint in enumerate(joints):
        _require(
            -1 <= joint.parent < index,
            f"joint {joint.name!r} (index {index}) has parent {joint.parent}: parents must come before their "
            "children (see parent_first_order)",
        )
        _check_finite((*joint.translation, *joint.rotation, *joint.scale), f"base pose of joint {joint.name!r}")


def _check_mesh(mesh: IqeMesh, joint_count: int, document: IqeDocument) -> None:
    what = f"mesh {mesh.name!r}"
    count = mesh.positions.shape[0] if mesh.positions.ndim == 2 else -1
    _check_shape(mesh.positions, count, 3, f"{what} positions")
    for array, columns, label in (
        (mesh.texcoords, 2, "texcoords"),
        (mesh.normals, 3, "normals"),
        (mesh.tangents, 4, "tangents"),
        (mesh.bitangents, 3, "bitangents"),
        (mesh.colors, 4, "colors"),
        (mesh.blend_weights, MAX_INFLUENCES, "blend weights"),
        (mesh.blend_indices, MAX_INFLUENCES, "blend indices"),
    ):
        _check_shape(array, count, columns, f"{what} {label}")
    _require(mesh.bitangents is None or mesh.tangents is not None, f"{what} has bitangents without tangents")
    _require(
        (mesh.blend_indices is None) == (mesh.blend_weights is None), f"{what} needs both blend indices and weights"
    )
    if mesh.blend_indices is not None:
        limit = min(joint_count, _MAX_JOINT_INDEX + 1) if joint_count else _MAX_JOINT_INDEX + 1
        _require(
            bool(((mesh.blend_indices >= 0) & (mesh.blend_indices < limit)).all()),
            f"{what} has blend indices outside 0..{limit - 1} ({joint_count} joints; at most 256 can be referenced)",
        )
    if mesh.smooth_indices is not None:
        _require(mesh.smooth_indices.shape == (count,), f"{what} smooth_indices must have shape ({count},)")
    for slot, values in mesh.custom.items():
        _require(slot in range(10), f"{what} custom slot {slot} is not 0..9")
        _require(values.ndim == 2 and 1 <= values.shape[1] <= 4, f"{what} custom{slot} must be (V, 1..4)")
        _check_shape(values, count, values.shape[1], f"{what} custom{slot}")
        declared = document.custom_format(slot).size
        _require(
            values.shape[1] == declared or not _is_declared(document, slot),
            f"{what} custom{slot} has {values.shape[1]} components but its vertexarray declares {declared}",
        )
    _check_faces(mesh, count, what)


def _is_declared(document: IqeDocument, slot: int) -> bool:
    return any(declared.kind == f"custom{slot}" for declared in document.vertex_arrays)


def _check_faces(mesh: IqeMesh, vertex_count: int, what: str) -> None:
    sizes, corners = mesh.face_sizes, mesh.face_corners
    _require(sizes.ndim == 1 and corners.ndim == 1, f"{what} faces must be flat arrays")
    _require(bool((sizes >= 3).all()), f"{what} has faces with fewer than 3 corners")
    _require(int(sizes.sum()) == corners.shape[0], f"{what} face_sizes do not add up to the number of corners")
    _require(
        bool(((corners >= 0) & (corners < vertex_count)).all()),
        f"{what} has face corners outside 0..{vertex_count - 1}",
    )
    if mesh.edge_smooth is not None:
        _require(mesh.edge_smooth.shape == corners.shape, f"{what} edge_smooth needs one flag per corner")
    faces = sizes.shape[0]
    for array, label in (
        (mesh.face_smooth_groups, "face_smooth_groups"),
        (mesh.face_smooth_angles, "face_smooth_angles"),
        (mesh.face_smooth_uv, "face_smooth_uv"),
    ):
        if array is not None:
            _require(array.shape == (faces,), f"{what} {label} needs one value per face")
            _check_finite(array, f"{what} {label}")


def _check_animation(animation: IqeAnimation, joint_count: int) -> None:
    what = f"animation {animation.name!r}"
    frames = animation.frames
    _require(frames.ndim == 3 and frames.shape[2] == 10, f"{what} frames must be (frames, joints, 10)")
    _require(
        not joint_count or frames.shape[1] == joint_count or frames.shape[0] == 0,
        f"{what} frames have {frames.shape[1]} poses but the skeleton has {joint_count} joints",
    )
    _check_finite(frames, f"{what} frames")
    _require(bool(np.isfinite(animation.framerate)) and animation.framerate >= 0.0, f"{what} framerate must be >= 0")


# ---------------------------------------------------------------------------------------------------- header parts


def _vertex_array_lines(document: IqeDocument) -> list[str]:
    declared = list(document.vertex_arrays)
    used_slots = sorted({slot for mesh in document.meshes for slot in mesh.custom})
    for slot in used_slots:
        if not _is_declared(document, slot):
            width = next(mesh.custom[slot].shape[1] for mesh in document.meshes if slot in mesh.custom)
            if width != 4:  # undeclared customs are float x 4 for the compiler
                declared.append(IqeVertexArrayFormat(f"custom{slot}", "float", width, f"custom{slot}"))
    lines = []
    for entry in declared:
        prefix = f"vertexarray {entry.kind} {entry.component} {entry.size}"
        lines.append(_quoted(entry.name, f"vertex array {entry.kind} name", prefix))
    return lines


def _skeleton_lines(joints: list[IqeJoint]) -> list[str]:
    lines = [f"{_quoted(joint.name, 'joint name', 'joint')} {joint.parent}" for joint in joints]
    if joints:
        base = np.array([(*j.translation, *j.rotation, *j.scale) for j in joints], np.float64)
        lines.extend(_pose_lines(base).tolist())
    return lines


def _pose_lines(poses: Float64Array) -> ObjectArray:
    """`pq` lines for (N, 10) poses; the scale is left out when it is exactly 1."""
    table = poses.copy()
    table[:, 3:7] = canonical_quaternions(table[:, 3:7])[0]
    widths = np.where((table[:, 7:10] == 1.0).all(axis=1), 7, 10)
    return _ragged_rows("pq", table, widths)


def _animation_lines(animation: IqeAnimation, out: list[str]) -> None:
    out.append(_quoted(animation.name, "animation name", "animation"))
    out.append(f"framerate {animation.framerate:.9g}")
    if animation.loop:
        out.append("loop")
    frame_count, joint_count = animation.frames.shape[:2]
    if not frame_count:
        return
    poses = _pose_lines(animation.frames.reshape(-1, 10).astype(np.float64)).reshape(frame_count, joint_count)
    frame_column = np.full((frame_count, 1), "frame", dtype=object)
    out.extend(np.concatenate((frame_column, poses), axis=1).ravel().tolist())


# ---------------------------------------------------------------------------------------------------- meshes


class _FileLayout:
    """Which optional lines every mesh must write: the compiler indexes each attribute across the whole file."""

    def __init__(self, document: IqeDocument, notes: Warnings) -> None:
        meshes = document.meshes
        self.texcoords = any(m.texcoords is not None for m in meshes)
        self.normals = any(m.normals is not None for m in meshes)
        self.tangents = any(m.tangents is not None for m in meshes)
        self.bitangents = any(m.bitangents is not None for m in meshes)
        self.colors = any(m.colors is not None for m in meshes)
        self.blends = any(m.blend_indices is not None for m in meshes)
        self.smooth_indices = any(m.smooth_indices is not None for m in meshes)
        self.edge_smooth = any(m.edge_smooth is not None and m.face_count for m in meshes)
        self.custom_widths: dict[int, int] = {}
        for mesh in meshes:
            for slot, values in mesh.custom.items():
                width = self.custom_widths.setdefault(slot, values.shape[1])
                _require(width == values.shape[1], f"custom{slot} has different widths in different meshes")
        _require(
            not self.bitangents or all(m.tangents is None or m.bitangents is not None for m in meshes),
            "either every mesh with tangents has bitangents or none has",
        )
        self.vertex_offset = 0  # vertices written so far, for unique filler smoothing indices
        self._warn_fillers(meshes, notes)

    def _warn_fillers(self, meshes: list[IqeMesh], notes: Warnings) -> None:
        for label, wanted, field_name in (
            ("texcoords", self.texcoords, "texcoords"),
            ("normals", self.normals, "normals"),
            ("tangents", self.tangents, "tangents"),
            ("colors", self.colors, "colors"),
            ("blend weights", self.blends, "blend_indices"),
            ("smoothing indices", self.smooth_indices, "smooth_indices"),
        ):
            missing = [m.name for m in meshes if wanted and m.vertex_count and getattr(m, field_name) is None]
            if missing:
                notes.add(f"{label} written as defaults for meshes without them: {', '.join(missing)}")


def _mesh_lines(
    mesh: IqeMesh, layout: _FileLayout, smoothing: tuple[int, float, bool], out: list[str], notes: Warnings
) -> tuple[int, float, bool]:
    out.append(_quoted(mesh.name, "mesh name", "mesh"))
    out.append(_quoted(mesh.material, "material name", "material"))
    columns = _vertex_columns(mesh, layout)
    if columns:
        out.extend(np.stack(columns, axis=1).ravel().tolist())
    layout.vertex_offset += mesh.vertex_count
    return _face_lines(mesh, layout, smoothing, out, notes)


def _vertex_columns(mesh: IqeMesh, layout: _FileLayout) -> list[ObjectArray]:
    count = mesh.vertex_count
    if not count:
        return []
    columns = [_column(_format_rows("vp", mesh.positions))]
    if layout.texcoords:
        columns.append(_column(_format_rows("vt", _or_zeros(mesh.texcoords, count, 2))))
    if layout.normals:
        columns.append(_column(_format_rows("vn", _or_zeros(mesh.normals, count, 3))))
    if layout.tangents:
        columns.append(_column(_format_rows("vx", _tangent_table(mesh, layout))))
    if layout.blends:
        columns.append(_blend_column(mesh))
    if layout.colors:
        colors = mesh.colors if mesh.colors is not None else np.ones((count, 4), np.float32)
        columns.append(_column(_format_rows("vc", colors)))
    for slot, width in sorted(layout.custom_widths.items()):
        columns.append(_column(_format_rows(f"v{slot}", _or_zeros(mesh.custom.get(slot), count, width))))
    if layout.smooth_indices:
        indices = mesh.smooth_indices
        if indices is None:  # unique negative keys: these vertices smooth with nothing by index
            indices = -1 - (layout.vertex_offset + np.arange(count))
        columns.append(_column(_format_rows("vs", np.asarray(indices).reshape(-1, 1), (0,))))
    return columns


def _column(lines: list[str]) -> ObjectArray:
    return np.array(lines, dtype=object)


def _or_zeros(array: npt.NDArray[np.generic] | None, rows: int, columns: int) -> npt.NDArray[np.generic]:
    return array if array is not None else np.zeros((rows, columns), np.float32)


def _tangent_table(mesh: IqeMesh, layout: _FileLayout) -> Float64Array:
    count = mesh.vertex_count
    tangents = mesh.tangents if mesh.tangents is not None else np.zeros((count, 4), np.float32)
    if not layout.bitangents:
        return tangents.astype(np.float64)
    bitangents = mesh.bitangents if mesh.bitangents is not None else np.zeros((count, 3), np.float32)
    table: Float64Array = np.concatenate((tangents[:, :3], bitangents), axis=1).astype(np.float64)
    return table


def _blend_column(mesh: IqeMesh) -> ObjectArray:
    """`vb` lines with the pairs up to the last non-zero weight ("vb" alone for an unweighted vertex)."""
    count = mesh.vertex_count
    if mesh.blend_indices is None or mesh.blend_weights is None:
        return _strings(count, [(np.arange(count), ["vb"] * count)])
    table = np.empty((count, 2 * MAX_INFLUENCES))
    table[:, 0::2] = mesh.blend_indices
    table[:, 1::2] = mesh.blend_weights
    nonzero = mesh.blend_weights != 0.0
    pairs = np.where(nonzero.any(axis=1), MAX_INFLUENCES - np.argmax(nonzero[:, ::-1], axis=1), 0)
    return _ragged_rows("vb", table, 2 * pairs, range(0, 2 * MAX_INFLUENCES, 2))


def _face_lines(
    mesh: IqeMesh, layout: _FileLayout, smoothing: tuple[int, float, bool], out: list[str], notes: Warnings
) -> tuple[int, float, bool]:
    if not mesh.face_count:
        return smoothing
    corners, sizes = mesh.face_corners.astype(np.int64), mesh.face_sizes.astype(np.int64)
    flags = mesh.edge_smooth.astype(np.int64) if mesh.edge_smooth is not None else np.ones_like(corners)
    digits = len(str(max(mesh.vertex_count - 1, 0)))
    max_corners = min((MAX_LINE_BYTES - 2) // (digits + 1), (MAX_LINE_BYTES - 2) // 2)
    source = np.arange(sizes.shape[0])
    if (sizes > max_corners).any():
        notes.add(f"mesh {mesh.name!r}: polygons with more than {max_corners} corners split to fit IQE lines")
        corners, sizes, flags, source = _split_long_faces(corners, sizes, flags, max_corners)
    face_text = _grouped_face_rows("fm", corners, sizes)
    if layout.edge_smooth:
        face_text = np.stack((face_text, _grouped_face_rows("fs", flags, sizes)), axis=1)
    else:
        face_text = face_text.reshape(-1, 1)
    states = _face_states(mesh, source)
    return _emit_with_smoothing(face_text, states, smoothing, out)


def _grouped_face_rows(command: str, values: Int64Array, sizes: Int64Array) -> ObjectArray:
    starts = np.cumsum(sizes) - sizes
    groups = []
    for size in np.unique(sizes).tolist():
        faces = np.flatnonzero(sizes == size)
        table = values[starts[faces, None] + np.arange(size)]
        groups.append((faces, _format_rows(command, table, range(size))))
    return _strings(sizes.shape[0], groups)


def _split_long_faces(
    corners: Int64Array, sizes: Int64Array, flags: Int64Array, max_corners: int
) -> tuple[Int64Array, Int64Array, Int64Array, Int64Array]:
    """Cut polygons into fans of at most `max_corners` corners; new inner edges are smooth (flag 1)."""
    new_corners: list[Int64Array] = []
    new_flags: list[Int64Array] = []
    new_sizes: list[int] = []
    source: list[int] = []
    starts = (np.cumsum(sizes) - sizes).tolist()
    for face, (start, size) in enumerate(zip(starts, sizes.tolist(), strict=True)):
        polygon, edge_flags = corners[start : start + size], flags[start : start + size]
        if size <= max_corners:
            new_corners.append(polygon)
            new_flags.append(edge_flags)
            new_sizes.append(size)
            source.append(face)
            continue
        first = 1
        while True:
            last = min(first + max_corners - 2, size - 1)
            piece = np.concatenate(([polygon[0]], polygon[first : last + 1]))
            opening = edge_flags[0] if first == 1 else 1
            closing = edge_flags[size - 1] if last == size - 1 else 1
            new_corners.append(piece)
            new_flags.append(np.concatenate(([opening], edge_flags[first:last], [closing])))
            new_sizes.append(piece.shape[0])
            source.append(face)
            if last == size - 1:
                break
            first = last
    return (
        np.concatenate(new_corners),
        np.array(new_sizes, np.int64),
        np.concatenate(new_flags),
        np.array(source, np.int64),
    )


def _face_states(mesh: IqeMesh, source: Int64Array) -> Float64Array:
    """(F, 3) smoothing group, angle and uv flag in force for each written face."""
    states = np.empty((source.shape[0], 3))
    states[:] = _DEFAULT_SMOOTHING
    for column, values in enumerate((mesh.face_smooth_groups, mesh.face_smooth_angles, mesh.face_smooth_uv)):
        if values is not None:
            states[:, column] = values[source]
    return states


def _emit_with_smoothing(
    face_text: ObjectArray, states: Float64Array, current: tuple[int, float, bool], out: list[str]
) -> tuple[int, float, bool]:
    """Face lines, preceded by smoothing commands wherever the smoothing state changes."""
    changes = np.flatnonzero((np.diff(states, axis=0) != 0.0).any(axis=1)) + 1
    run_starts = [0, *changes.tolist()]
    run_ends = [*changes.tolist(), states.shape[0]]
    for start, end in zip(run_starts, run_ends, strict=True):
        group, angle, uv = states[start].tolist()
        wanted = (int(group), float(angle), bool(uv))
        if wanted[0] != current[0]:
            out.append(f"smoothgroup {wanted[0]}")
        if wanted[1] != current[1]:
            out.append(f"smoothangle {wanted[1]:.9g}")
        if wanted[2] != current[2]:
            out.append(f"smoothuv {int(wanted[2])}")
        current = wanted
        out.extend(face_text[start:end].ravel().tolist())
    return current
