"""Write an IqeDocument as IQE text that the reference compiler reads correctly.

The writer refuses (FormatError) what the compiler would misread: names with quotes or line breaks, a (mesh,
material) pair repeated after another mesh, children before parents, blend indices past 255, non-finite
numbers. It keeps every line under 512 bytes by splitting long polygons, writes quaternions unit length with
w <= 0, and floats in fixed point with just enough decimals to read back as the same float32 (see `numtext`;
the joints' base poses keep `%.9g`). Lines are assembled as byte matrices by numpy, never per vertex in Python.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import FormatError, Warnings
from ..names import UNQUOTABLE, quotable_name
from ..pieces import PieceStream, made_in_turn
from .document import (
    COMPONENT_TYPES,
    MAX_INFLUENCES,
    VERTEX_ARRAY_KINDS,
    IqeAnimation,
    IqeDocument,
    IqeJoint,
    IqeMesh,
    IqeVertexArrayFormat,
    filled_in_notes,
)
from .numtext import Bytes2D, Fields, compact, compact_pieces, float_fields, int_fields, literal, table_lines
from .poses import oriented_quaternions
from .repeats import repeats_pay, row_sources

Float64Array = npt.NDArray[np.float64]
Int64Array = npt.NDArray[np.int64]

MAX_LINE_BYTES = 510  # plus the newline, within the compiler's 511-byte line buffer
_MAX_JOINT_INDEX = 255
_DEFAULT_SMOOTHING = (-1, 180.0, False)


sanitize_name = quotable_name  # (IQE's name for the rule it shares with SMD)


def write_iqe(document: IqeDocument, warnings: Warnings | None = None) -> bytes:
    """Serialise the document; `warnings` receives notes about data that had to be completed or split."""
    return b"".join(iqe_pieces(document, warnings))


def iqe_pieces(
    document: IqeDocument, warnings: Warnings | None = None, make_blocks: PieceStream = made_in_turn
) -> list[bytes] | Iterator[bytes]:
    """write_iqe's text as consecutive pieces (written one after the other, a large text is never joined). Every
    check runs and every warning is given before this returns; large meshes' vertex lines are made as they are
    taken, their blocks by `make_blocks` (which may make the next ones on other cores meanwhile)."""
    notes = warnings if warnings is not None else Warnings()
    _check_document(document)
    lines = ["# Inter-Quake Export"]
    lines.extend(_comment_line(text) for text in document.comments)
    lines.extend(_vertex_array_lines(document))
    lines.extend(_skeleton_lines(document.joints))
    out = _Output()
    out.extend(lines)
    layout = _FileLayout(document, notes, make_blocks)
    made = _small_mesh_texts(document.meshes, layout)
    smoothing = _DEFAULT_SMOOTHING
    for index, mesh in enumerate(document.meshes):
        smoothing = _mesh_lines(mesh, layout, smoothing, out, notes, made.get(index))
    for animation in document.animations:
        _animation_lines(animation, out)
    if document.comment_section is not None:
        out.append("comment")
        out.chunks.append(document.comment_section.encode("utf-8"))
    return out.pieces()


# ---------------------------------------------------------------------------------------------------- formatting


class _Output:
    """The file as byte chunks, each made of whole lines (newline included); makers of chunks may stand among them,
    run when the file is written (a large mesh's vertex lines: its text is then never held whole)."""

    def __init__(self) -> None:
        self._parts: list[list[bytes] | Iterator[bytes]] = [[]]

    @property
    def chunks(self) -> list[bytes]:
        """The chunks made so far after the last maker, to append to."""
        last = self._parts[-1]
        if isinstance(last, list):
            return last
        made: list[bytes] = []
        self._parts.append(made)
        return made

    def later(self, maker: Iterator[bytes]) -> None:
        self._parts.append(maker)

    def pieces(self) -> list[bytes] | Iterator[bytes]:
        """Every chunk in order: a list when nothing is left to make."""
        first = self._parts[0]
        if len(self._parts) == 1 and isinstance(first, list):
            return first
        return itertools.chain.from_iterable(self._parts)

    def append(self, line: str) -> None:
        self.chunks.append(line.encode("utf-8") + b"\n")

    def extend(self, lines: Iterable[str]) -> None:
        self.chunks.append("".join(line + "\n" for line in lines).encode("utf-8"))


def _fields(table: npt.ArrayLike, integer_columns: Iterable[int] = ()) -> list[Fields]:
    """Formatted numbers of each column of a (N, W) table; floats are written for float32 (see numtext)."""
    values = np.asarray(table)
    integers = set(integer_columns)
    return [
        int_fields(values[:, column]) if column in integers else float_fields(values[:, column])
        for column in range(values.shape[1])
    ]


def _table_lines(
    command: str, table: npt.ArrayLike, integer_columns: Iterable[int] = (), widths: Int64Array | None = None
) -> list[Bytes2D]:
    """One `command n1 n2 ...` line per row of a (N, W) table (row i keeps widths[i] numbers), as blocks."""
    return table_lines(command.encode("ascii"), _fields(table, integer_columns), widths)


def _quoted(name: str, what: str, command: str) -> str:
    bad = sorted({character for character in name if character in UNQUOTABLE})
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


def _check_finite(values: npt.ArrayLike, what: str, label: str = "") -> None:
    """That `values` hold no NaN nor infinity (`what` and `label` name them in the error, joined by a space)."""
    array = np.asarray(values)
    if array.dtype.kind != "f":  # (floats are looked at as they are: a float64 copy tells the same)
        array = np.asarray(values, dtype=np.float64)
    if not np.isfinite(array).all():  # (the message made only then: a file's meshes are checked one by one)
        raise FormatError(f"{what} {label} contains NaN or infinity" if label else f"{what} contains NaN or infinity")


def _check_shape(
    array: npt.NDArray[np.generic] | None, rows: int, columns: int, what: str, label: str = "", finite: bool = False
) -> None:
    """That the array (if any) is (rows, columns) and finite (`finite`: known to be); `what` and `label` name it
    (joined by a space)."""
    if array is None:
        return
    if array.shape != (rows, columns):
        named = f"{what} {label}" if label else what
        raise FormatError(f"{named} must have shape ({rows}, {columns}), not {array.shape}")
    if not finite:
        _check_finite(array, what, label)


def _check_document(document: IqeDocument) -> None:
    _check_vertex_array_formats(document.vertex_arrays)
    _check_joints(document.joints)
    seen: set[tuple[str, str]] = set()
    previous: tuple[str, str] | None = None
    finite = _all_finite(document.meshes)  # (then no mesh's arrays are looked at again for that, one by one)
    for mesh in document.meshes:
        key = (mesh.name, mesh.material)
        if key != previous and key in seen:
            raise FormatError(
                f"mesh {mesh.name!r} with material {mesh.material!r} appears again after other meshes; the "
                "reference compiler loses triangles of such repeated blocks (merge them or give them distinct names)"
            )
        seen.add(key)
        previous = key
        _check_mesh(mesh, len(document.joints), document, finite)
    for animation in document.animations:
        _check_animation(animation, len(document.joints))


def _vertex_tables(mesh: IqeMesh) -> list[npt.NDArray[np.generic] | None]:
    """The mesh's per-vertex tables that _check_mesh checks for shape and finite values."""
    return [mesh.positions, mesh.texcoords, mesh.normals, mesh.tangents, mesh.bitangents, mesh.colors,
            mesh.blend_weights, mesh.blend_indices, *mesh.custom.values()]  # fmt: skip


def _all_finite(meshes: list[IqeMesh]) -> bool:
    """Whether every per-vertex table of the meshes is known to be finite, looked at all at once (a file of many
    small meshes: a few numpy calls instead of a few per table). False only says "not known": each table is then
    checked on its own, for the error that names it."""
    floats: list[npt.NDArray[np.generic]] = []
    for mesh in meshes:
        for table in _vertex_tables(mesh):
            if table is None:
                continue
            if not isinstance(table, np.ndarray):
                return False
            kind = table.dtype.kind
            if kind == "f":
                floats.append(table.reshape(-1))
            elif kind not in "biu":  # (integers and booleans are finite; anything else is checked on its own)
                return False
    return not floats or bool(np.isfinite(np.concatenate(floats)).all())


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


def _check_mesh(mesh: IqeMesh, joint_count: int, document: IqeDocument, finite: bool = False) -> None:
    """`finite`: every per-vertex table of the mesh is known to be finite (_all_finite)."""
    what = f"mesh {mesh.name!r}"
    count = mesh.positions.shape[0] if mesh.positions.ndim == 2 else -1
    _check_shape(mesh.positions, count, 3, what, "positions", finite)
    for array, columns, label in (
        (mesh.texcoords, 2, "texcoords"),
        (mesh.normals, 3, "normals"),
        (mesh.tangents, 4, "tangents"),
        (mesh.bitangents, 3, "bitangents"),
        (mesh.colors, 4, "colors"),
        (mesh.blend_weights, MAX_INFLUENCES, "blend weights"),
        (mesh.blend_indices, MAX_INFLUENCES, "blend indices"),
    ):
        _check_shape(array, count, columns, what, label, finite)
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
        _check_shape(values, count, values.shape[1], what, f"custom{slot}", finite)
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
    if len(sizes) and int(sizes.min()) < 3:
        raise FormatError(f"{what} has faces with fewer than 3 corners")
    _require(int(sizes.sum()) == corners.shape[0], f"{what} face_sizes do not add up to the number of corners")
    if len(corners) and (int(corners.min()) < 0 or int(corners.max()) >= vertex_count):
        raise FormatError(f"{what} has face corners outside 0..{vertex_count - 1}")
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
    if joints:  # few lines, and the joints keep double precision: 9 significant digits
        base = np.array([(*j.translation, *j.rotation, *j.scale) for j in joints], np.float64)
        table, widths = _canonical_poses(base)
        for row, width in zip(table.tolist(), widths.tolist(), strict=True):
            lines.append("pq " + " ".join(f"{value:.9g}" for value in row[:width]))
    return lines


def _canonical_poses(poses: Float64Array) -> tuple[Float64Array, Int64Array]:
    """Poses with w <= 0 quaternions, and how many columns to write (the scale is left out when it is 1).

    Quaternions are written as the document holds them, not renormalised: the reader keeps them as written (as
    the reference compiler does), so a round trip keeps every value.
    """
    table = poses.copy()
    table[:, 3:7] = oriented_quaternions(table[:, 3:7])[0]
    widths: Int64Array = np.where((table[:, 7:10] == 1.0).all(axis=1), 7, 10).astype(np.int64)
    return table, widths


def _animation_lines(animation: IqeAnimation, out: _Output) -> None:
    out.append(_quoted(animation.name, "animation name", "animation"))
    out.append(f"framerate {animation.framerate:.9g}")
    if animation.loop:
        out.append("loop")
    frame_count, joint_count = animation.frames.shape[:2]
    if not frame_count:
        return
    if not joint_count:
        out.chunks.append(b"frame\n" * frame_count)
        return
    table, widths = _canonical_poses(animation.frames.reshape(-1, 10).astype(np.float64))
    poses = _table_lines("pq", table, widths=widths)
    frame_starts = np.zeros((frame_count, joint_count, 6), np.uint8)
    frame_starts[:, 0] = np.frombuffer(b"frame\n", np.uint8)
    out.chunks.extend(compact_pieces([frame_starts.reshape(frame_count * joint_count, 6), *poses]))


# ---------------------------------------------------------------------------------------------------- meshes


class _FileLayout:
    """Which optional lines every mesh must write: the compiler indexes each attribute across the whole file."""

    def __init__(self, document: IqeDocument, notes: Warnings, make_blocks: PieceStream) -> None:
        meshes = document.meshes
        self.make_blocks = make_blocks
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
        for note in filled_in_notes(meshes):
            notes.add(note)


def _mesh_lines(
    mesh: IqeMesh,
    layout: _FileLayout,
    smoothing: tuple[int, float, bool],
    out: _Output,
    notes: Warnings,
    made: _MadeText | None = None,
) -> tuple[int, float, bool]:
    out.append(_quoted(mesh.name, "mesh name", "mesh"))
    out.append(_quoted(mesh.material, "material name", "material"))
    if made is not None:  # a small mesh, formatted with its neighbours (see _small_mesh_texts)
        out.chunks.append(made.vertices)
        layout.vertex_offset += mesh.vertex_count
        if made.faces is None:
            return _face_lines(mesh, layout, smoothing, out, notes)
        if not mesh.face_count:
            return smoothing
        text, face_ends = made.faces
        states = _face_states(mesh, np.arange(mesh.face_count))
        return _emit_with_smoothing(text, face_ends, states, smoothing, out)
    # The lines of each vertex together (vp, vt, vn, ...), a block of vertices at a time: the formatted numbers of
    # one block stay in the CPU caches, and those of the whole mesh (several times its text) are never held.
    blocks = _vertex_blocks(mesh, layout, layout.vertex_offset)
    if mesh.vertex_count > _VERTEX_BLOCK:
        out.later(blocks)
    else:
        out.chunks.extend(blocks)
    layout.vertex_offset += mesh.vertex_count
    return _face_lines(mesh, layout, smoothing, out, notes)


@dataclass
class _MadeText:
    """A small mesh's vertex lines, and its face lines with where each face's text ends (None: made alone)."""

    vertices: bytes
    faces: tuple[bytes, Int64Array] | None


_SMALL_VERTICES = 1 << 13  # meshes up to this size are formatted in batches (numpy's cost per call is paid once)
_BATCH_FACES = 1 << 16


def _small_mesh_texts(meshes: list[IqeMesh], layout: _FileLayout) -> dict[int, _MadeText]:
    """The text of the small meshes (by their index), made for runs of them at once: the concatenated columns
    formatted together, then split back per mesh. A line's text depends on its numbers alone, so the bytes are
    those of each mesh made alone. Faces are batched when every face of the mesh fits the table of _face_text."""
    made: dict[int, _MadeText] = {}
    batch: list[int] = []
    vertices = faces = 0
    offset = 0
    offsets = []
    for mesh in meshes:
        offsets.append(offset)
        offset += mesh.vertex_count
    for index, mesh in enumerate(meshes):
        if mesh.vertex_count > _SMALL_VERTICES or mesh.face_count > 2 * _SMALL_VERTICES:
            continue
        if batch and (vertices + mesh.vertex_count > _VERTEX_BLOCK or faces + mesh.face_count > _BATCH_FACES):
            made.update(_batch_texts(meshes, batch, offsets, layout))
            batch, vertices, faces = [], 0, 0
        batch.append(index)
        vertices += mesh.vertex_count
        faces += mesh.face_count
    if batch:
        made.update(_batch_texts(meshes, batch, offsets, layout))
    return made


def _batch_texts(
    meshes: list[IqeMesh], batch: list[int], offsets: list[int], layout: _FileLayout
) -> dict[int, _MadeText]:
    chosen = [meshes[index] for index in batch]
    counts = [mesh.vertex_count for mesh in chosen]
    rows = list(itertools.accumulate(counts, initial=0))
    if rows[-1]:
        columns = _batch_vertex_columns(chosen, counts, [offsets[index] for index in batch], layout)
        table = np.concatenate([part for column in columns for part in column], axis=1)
        texts = [table[start:end].tobytes().translate(None, b"\0") for start, end in itertools.pairwise(rows)]
    else:
        texts = [b""] * len(chosen)
    face_texts: list[tuple[bytes, Int64Array] | None] = [None] * len(chosen)
    joined = [
        position
        for position, mesh in enumerate(chosen)
        if mesh.face_count and int(mesh.face_sizes.max()) <= _TABLE_CORNERS
    ]
    if joined:
        faces = [chosen[position] for position in joined]
        sizes = np.concatenate([mesh.face_sizes for mesh in faces]).astype(np.int64)
        corners = np.concatenate([mesh.face_corners for mesh in faces]).astype(np.int64)
        flags = None
        if layout.edge_smooth:
            flags = np.concatenate(
                [mesh.edge_smooth if mesh.edge_smooth is not None else np.ones(mesh.face_corners.shape[0], np.int64)
                 for mesh in faces]
            ).astype(np.int64)  # fmt: skip
        text, face_ends = _face_text(corners, sizes, flags)
        bounds = list(itertools.accumulate((mesh.face_count for mesh in faces), initial=0))
        ends = [0, *face_ends[np.array(bounds[1:]) - 1].tolist()]
        for number, position in enumerate(joined):
            start = ends[number]
            face_texts[position] = (
                text[start : ends[number + 1]],
                face_ends[bounds[number] : bounds[number + 1]] - start,
            )
    for position, mesh in enumerate(chosen):
        if not mesh.face_count:
            face_texts[position] = (b"", np.zeros(0, np.int64))
    return {index: _MadeText(texts[position], face_texts[position]) for position, index in enumerate(batch)}


def _batch_vertex_columns(
    meshes: list[IqeMesh], counts: list[int], offsets: list[int], layout: _FileLayout
) -> list[list[Bytes2D]]:
    """_vertex_columns of the meshes' vertices one after the other (`offsets`: their first vertices in the file)."""
    every = slice(None)

    def joined(take: Callable[[IqeMesh, int], npt.NDArray[np.generic]]) -> npt.NDArray[np.generic]:
        return np.concatenate([take(mesh, count) for mesh, count in zip(meshes, counts, strict=True)])

    columns = [_float_table_lines("vp", joined(lambda mesh, count: mesh.positions))]
    if layout.texcoords:
        columns.append(_float_table_lines("vt", joined(lambda mesh, count: _or_zeros(mesh.texcoords, every, count, 2))))
    if layout.normals:
        columns.append(_float_table_lines("vn", joined(lambda mesh, count: _or_zeros(mesh.normals, every, count, 3))))
    if layout.tangents:
        columns.append(_float_table_lines("vx", joined(lambda mesh, count: _tangent_table(mesh, layout, every, count))))
    if layout.blends:
        total = sum(counts)
        if all(mesh.blend_indices is None or mesh.blend_weights is None for mesh in meshes):
            columns.append([literal(b"vb\n", total)])
        else:  # an unweighted vertex: zero weights, "vb" alone
            indices = joined(lambda mesh, count: _or_zeros(mesh.blend_indices, every, count, MAX_INFLUENCES))
            weights = joined(lambda mesh, count: _or_zeros(mesh.blend_weights, every, count, MAX_INFLUENCES))
            columns.append(_blend_table_lines(indices, weights))
    if layout.colors:
        columns.append(
            _float_table_lines(
                "vc",
                joined(lambda mesh, count: mesh.colors if mesh.colors is not None else np.ones((count, 4), np.float32)),
            )
        )
    for slot, width in sorted(layout.custom_widths.items()):
        values = [
            _or_zeros(mesh.custom.get(slot), every, count, width) for mesh, count in zip(meshes, counts, strict=True)
        ]
        columns.append(_float_table_lines(f"v{slot}", np.concatenate(values)))
    if layout.smooth_indices:
        indices = np.concatenate(
            [
                np.asarray(mesh.smooth_indices) if mesh.smooth_indices is not None else -1 - (offset + np.arange(count))
                for mesh, count, offset in zip(meshes, counts, offsets, strict=True)
            ]
        )
        columns.append(_table_lines("vs", indices.reshape(-1, 1), (0,)))
    return columns


_VERTEX_BLOCK = 1 << 15


def _vertex_blocks(mesh: IqeMesh, layout: _FileLayout, offset: int) -> Iterator[bytes]:
    """The mesh's vertex lines a block at a time (`offset`: its first vertex in the file)."""

    def block(start: int) -> bytes:
        columns = _vertex_columns(mesh, layout, slice(start, start + _VERTEX_BLOCK), offset)
        return compact([part for column in columns for part in column])

    starts = range(0, mesh.vertex_count, _VERTEX_BLOCK)
    yield from layout.make_blocks([functools.partial(block, start) for start in starts])


def _vertex_columns(mesh: IqeMesh, layout: _FileLayout, rows: slice, offset: int) -> list[list[Bytes2D]]:
    """The vertex lines of the vertices `rows` as column blocks."""
    count = len(range(mesh.vertex_count)[rows])
    columns = [_float_table_lines("vp", mesh.positions[rows])]
    if layout.texcoords:
        columns.append(_float_table_lines("vt", _or_zeros(mesh.texcoords, rows, count, 2)))
    if layout.normals:
        columns.append(_float_table_lines("vn", _or_zeros(mesh.normals, rows, count, 3)))
    if layout.tangents:
        columns.append(_float_table_lines("vx", _tangent_table(mesh, layout, rows, count)))
    if layout.blends:
        columns.append(_blend_lines(mesh, rows, count))
    if layout.colors:
        colors = mesh.colors[rows] if mesh.colors is not None else np.ones((count, 4), np.float32)
        columns.append(_float_table_lines("vc", colors))
    for slot, width in sorted(layout.custom_widths.items()):
        columns.append(_float_table_lines(f"v{slot}", _or_zeros(mesh.custom.get(slot), rows, count, width)))
    if layout.smooth_indices:
        if mesh.smooth_indices is not None:
            indices = np.asarray(mesh.smooth_indices)[rows]
        else:  # unique negative keys: these vertices smooth with nothing by index
            indices = -1 - (offset + np.arange(mesh.vertex_count)[rows])
        columns.append(_table_lines("vs", indices.reshape(-1, 1), (0,)))
    return columns


_MOST_KEPT = 0.6  # a table whose sample has more distinct rows than this is formatted row by row


def _float_table_lines(command: str, table: npt.NDArray[np.generic]) -> list[Bytes2D]:
    """_table_lines of a float table, each distinct row formatted once where rows repeat (the split vertices of
    hard edges and seams: a point's position, a flat face's normal). A row's text depends on its float32 bits
    alone, so the bytes are the same."""
    single = np.ascontiguousarray(table, np.float32)
    words = single.view(np.uint32)
    if single.ndim != 2 or not repeats_pay(words, _MOST_KEPT):
        return _table_lines(command, table)
    kept, source = row_sources(words)
    return [np.take(np.concatenate(_table_lines(command, single[kept]), axis=1), source, axis=0)]  # (np.take: 5x)


def _or_zeros(array: npt.NDArray[np.generic] | None, rows: slice, count: int, columns: int) -> npt.NDArray[np.generic]:
    return array[rows] if array is not None else np.zeros((count, columns), np.float32)


def _tangent_table(mesh: IqeMesh, layout: _FileLayout, rows: slice, count: int) -> Float64Array:
    tangents = mesh.tangents[rows] if mesh.tangents is not None else np.zeros((count, 4), np.float32)
    if not layout.bitangents:
        return tangents.astype(np.float64)
    bitangents = mesh.bitangents[rows] if mesh.bitangents is not None else np.zeros((count, 3), np.float32)
    table: Float64Array = np.concatenate((tangents[:, :3], bitangents), axis=1).astype(np.float64)
    return table


def _blend_lines(mesh: IqeMesh, rows: slice, count: int) -> list[Bytes2D]:
    """`vb` lines with the pairs up to the last non-zero weight ("vb" alone for an unweighted vertex)."""
    if mesh.blend_indices is None or mesh.blend_weights is None:
        return [literal(b"vb\n", count)]
    return _blend_table_lines(mesh.blend_indices[rows], mesh.blend_weights[rows])


def _blend_table_lines(indices: npt.NDArray[np.generic], weights: npt.NDArray[np.generic]) -> list[Bytes2D]:
    nonzero = weights != 0.0
    pairs = np.zeros(nonzero.shape[0], np.int64)  # up to the last non-zero weight
    for slot in range(MAX_INFLUENCES):
        pairs[nonzero[:, slot]] = slot + 1
    columns: list[Fields] = []
    for slot in range(MAX_INFLUENCES):
        columns.append(int_fields(indices[:, slot]))
        columns.append(float_fields(weights[:, slot]))
    return table_lines(b"vb", columns, 2 * pairs)


def _face_lines(
    mesh: IqeMesh, layout: _FileLayout, smoothing: tuple[int, float, bool], out: _Output, notes: Warnings
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
    text, face_ends = _face_text(corners, sizes, flags if layout.edge_smooth else None)
    states = _face_states(mesh, source)
    return _emit_with_smoothing(text, face_ends, states, smoothing, out)


_TABLE_CORNERS = 16  # faces up to this size are written as a table, one row per face


def _face_text(corners: Int64Array, sizes: Int64Array, flags: Int64Array | None) -> tuple[bytes, Int64Array]:
    """The `fm` lines of all faces (each followed by its `fs` line when flags are given), and where each
    face's text ends."""
    widest = int(sizes.max())
    if widest <= _TABLE_CORNERS:  # one row per face, a column per corner (blank past a face's size)
        uniform = bool((sizes == widest).all())  # (all triangles, say: the corners are the table as they stand)
        position = np.arange(widest)
        present = sources = None  # (neither made for a uniform table: a pass over every face each)
        if not uniform:
            present = position[None, :] < sizes[:, None]
            sources = np.where(present, (np.cumsum(sizes) - sizes)[:, None] + position[None, :], 0)
        parts: list[Bytes2D] = []
        lengths = np.zeros(sizes.shape[0], np.int64)
        for command, values in ((b"fm", corners), (b"fs", flags)):
            if values is None:
                continue
            table = values.reshape(-1, widest) if sources is None else values[sources]
            # (the whole table formatted at once: its numbers span few values for their count, which each column's
            # do not, so that each value is formatted once and looked up: 1M triangles 86 -> 45 ms; same text)
            every = int_fields(table.reshape(-1))
            fields = [Fields(every.chars[column::widest], every.lengths[column::widest]) for column in range(widest)]
            for column, field in enumerate(fields):
                lengths += field.lengths + 1 if present is None else np.where(present[:, column], field.lengths + 1, 0)
            lengths += len(command) + 1
            parts.extend(table_lines(command, fields, None if uniform else sizes))
        return compact(parts), np.cumsum(lengths)
    return _face_text_by_corner(corners, sizes, flags, np.cumsum(sizes) - sizes)


def _face_text_by_corner(
    corners: Int64Array, sizes: Int64Array, flags: Int64Array | None, starts: Int64Array
) -> tuple[bytes, Int64Array]:
    """`_face_text` for large polygons: one matrix row per corner, the command on a face's first corner and a
    newline after its last."""
    first = np.zeros(corners.shape[0], np.bool_)
    first[starts] = True
    last = np.zeros(corners.shape[0], np.bool_)
    last[starts + sizes - 1] = True
    rows, lengths = _corner_rows(b"fm ", int_fields(corners), first, last)
    end_rows = starts + sizes - 1
    if flags is not None:  # per face: its fm corners, then its fs corners
        flag_rows, flag_lengths = _corner_rows(b"fs ", int_fields(flags), first, last)
        placed = np.arange(corners.shape[0]) + np.repeat(starts, sizes)
        both = np.zeros((2 * corners.shape[0], max(rows.shape[1], flag_rows.shape[1])), np.uint8)
        both_lengths = np.zeros(2 * corners.shape[0], np.int64)
        for part, part_lengths, part_rows in (
            (rows, lengths, placed),
            (flag_rows, flag_lengths, placed + np.repeat(sizes, sizes)),
        ):
            both[part_rows, : part.shape[1]] = part
            both_lengths[part_rows] = part_lengths
        rows, lengths, end_rows = both, both_lengths, 2 * (starts + sizes) - 1
    face_ends: Int64Array = np.cumsum(lengths)[end_rows]
    return compact([rows]), face_ends


def _corner_rows(
    command: bytes, numbers: Fields, first: npt.NDArray[np.bool_], last: npt.NDArray[np.bool_]
) -> tuple[Bytes2D, Int64Array]:
    prefix = np.where(first[:, None], np.frombuffer(command, np.uint8), np.uint8(0))
    separator = np.where(last, 10, 32).astype(np.uint8)[:, None]
    rows = np.concatenate((prefix, numbers.chars, separator), axis=1)
    lengths = numbers.lengths + 1 + first * len(command)
    return rows, lengths


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


def _face_states(mesh: IqeMesh, source: Int64Array) -> Float64Array | None:
    """(F, 3) smoothing group, angle and uv flag in force for each written face; None when every face has the
    default state (the mesh holds none)."""
    if mesh.face_smooth_groups is None and mesh.face_smooth_angles is None and mesh.face_smooth_uv is None:
        return None
    states = np.empty((source.shape[0], 3))
    states[:] = _DEFAULT_SMOOTHING
    for column, values in enumerate((mesh.face_smooth_groups, mesh.face_smooth_angles, mesh.face_smooth_uv)):
        if values is not None:
            states[:, column] = values[source]
    return states


def _emit_with_smoothing(
    text: bytes, face_ends: Int64Array, states: Float64Array | None, current: tuple[int, float, bool], out: _Output
) -> tuple[int, float, bool]:
    """Face lines, preceded by smoothing commands wherever the smoothing state changes."""
    if states is None:  # (one run of faces in the default state)
        end = int(face_ends[-1])
        return _emit_run(text if end == len(text) else text[:end], _DEFAULT_SMOOTHING, current, out)
    changes = np.flatnonzero((np.diff(states, axis=0) != 0.0).any(axis=1)) + 1
    run_starts = [0, *changes.tolist()]
    run_ends = [*changes.tolist(), states.shape[0]]
    offsets = [0, *face_ends.tolist()]
    for start, end in zip(run_starts, run_ends, strict=True):
        group, angle, uv = states[start].tolist()
        current = _emit_run(text[offsets[start] : offsets[end]], (int(group), float(angle), bool(uv)), current, out)
    return current


def _emit_run(
    text: bytes, wanted: tuple[int, float, bool], current: tuple[int, float, bool], out: _Output
) -> tuple[int, float, bool]:
    """The lines of faces in the state `wanted`, after the commands that change the state `current` to it."""
    if wanted[0] != current[0]:
        out.append(f"smoothgroup {wanted[0]}")
    if wanted[1] != current[1]:
        out.append(f"smoothangle {wanted[1]:.9g}")
    if wanted[2] != current[2]:
        out.append(f"smoothuv {int(wanted[2])}")
    out.chunks.append(text)
    return wanted
