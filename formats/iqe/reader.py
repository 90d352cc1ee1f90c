"""Read IQE text into an IqeDocument, as the reference compiler reads it but refusing what it would corrupt.

The numbers of all lines of one numeric command are converted together, straight from the bytes (see
`scan.ScannedText.numbers` and `decimals`); state that commands depend on (the current mesh, material,
smoothing settings, animation and frame) is looked up per line with searchsorted over the few keyword lines,
so no Python code runs per vertex or per face.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..dedup import faces_repeating_a_vertex
from ..errors import FileBuffer, FormatError, Warnings
from ..pieces import PieceMap, sequential
from ..rows import count_per_row
from .document import (
    IDENTITY_POSE,
    MAX_INFLUENCES,
    IqeAnimation,
    IqeDocument,
    IqeJoint,
    IqeMesh,
    limit_blend_weights,
)
from .keywords import KeywordEvents, read_keywords
from .poses import poses_from_pa, poses_from_pm, poses_from_pq
from .scan import (
    FLOAT32_MAX,
    FloatArray,
    NumbersAndCounts,
    ScannedText,
    decode_text,
    scan_lines,
    split_comment_section,
    uniform_count,
)

Int64Array = npt.NDArray[np.int64]
Float64Array = npt.NDArray[np.float64]

_BOM = b"\xef\xbb\xbf"
_HEADER = b"# Inter-Quake Export"
_MAX_LINE_BYTES = 511
_WEIGHT_EPSILON = 1e-3  # the compiler drops weights at or below this
_MAX_JOINT_INDEX = 255  # blend indices are stored in a byte
_FACE_LINES = 1 << 18  # face lines resolved at a time


def read_iqe(data: FileBuffer, path: str | None = None, map_pieces: PieceMap = sequential) -> IqeDocument:
    """Parse IQE bytes. Raises FormatError (with path, line, column) for input that cannot be read faithfully.
    `map_pieces` runs the independent pieces of the number parsing (see formats.pieces)."""
    if data[: len(_BOM)] == _BOM:
        data = data[len(_BOM) :]
    data = _with_lf_line_ends(data)
    _check_header(data, path)
    commands, comment_body = split_comment_section(data)
    scanned = scan_lines(commands, path, map_pieces)
    scanned.map_pieces = map_pieces
    warnings = Warnings()
    events = read_keywords(scanned, warnings)
    document = IqeDocument(vertex_arrays=events.vertex_arrays, comments=events.comments, warnings=warnings)
    if comment_body is not None:
        document.comment_section = decode_text(comment_body)[0]
    _warn_long_lines(scanned, warnings)
    vertices, face_numbers = _read_vertices(scanned, events, warnings)
    faces = _read_faces(scanned, events, vertices.count, warnings, face_numbers)
    document.joints = _read_joints(events)
    _check_blend_indices(scanned, vertices, len(document.joints))
    poses = _read_poses(scanned, warnings)
    _apply_base_pose(document.joints, poses, events, warnings)
    document.animations = _read_animations(poses, events, len(document.joints), warnings)
    document.meshes = _build_meshes(scanned, events, vertices, faces, warnings)
    if vertices.count and not faces.sizes.shape[0]:
        warnings.add("the file has vertices but no faces; the reference compiler makes no mesh from it")
    return document


def _with_lf_line_ends(data: FileBuffer) -> FileBuffer:
    """Old Mac text ends lines with CR alone. The reference compiler reads such a file as one long line; with no
    LF anywhere the line ends are unambiguous, so they are read as LF (a CR beside LF stays whitespace)."""
    if data.find(b"\n") >= 0 or data.find(b"\r") < 0:
        return data
    return bytes(data).replace(b"\r", b"\n")


def _check_header(data: FileBuffer, path: str | None) -> None:
    newline = data.find(b"\n", 0, 4096)
    first_line = data[: newline if newline >= 0 else 4096]  # (not split: that would copy the whole text)
    hash_position = first_line.find(b"#")
    if hash_position < 0 or not first_line.startswith(_HEADER, hash_position):
        column = max(hash_position, 0) + 1
        raise FormatError(
            "not an IQE file: the first line must be '# Inter-Quake Export'", path=path, line=1, column=column
        )


def _warn_long_lines(scanned: ScannedText, warnings: Warnings) -> None:
    long_lines = np.flatnonzero(scanned.line_lengths > _MAX_LINE_BYTES)
    if long_lines.shape[0]:
        warnings.add(
            f"line {long_lines[0] + 1}: {long_lines.shape[0]} lines are longer than {_MAX_LINE_BYTES} bytes; "
            "the reference compiler would cut them"
        )


def _padded_rows(
    values: FloatArray, counts: Int64Array, defaults: tuple[float, ...], dtype: type[np.floating[Any]] = np.float64,
    used: int | None = None,
) -> npt.NDArray[np.floating[Any]]:
    """One row per line of `len(defaults)` columns: the line's numbers, then the defaults; extra numbers dropped.
    The rows are of `dtype` (numbers rounded as astype rounds them, without a table of doubles first). `used`: how
    many columns the caller reads (all when None): where every line gives as many, the rows may be that narrower
    (the numbers as they are, no copy: a position's w, a UV's third and fourth are never used)."""
    width = len(defaults)
    given = uniform_count(counts)
    if given is not None and used is not None and used <= given <= width:
        return np.asarray(values.reshape(-1, given), dtype)
    if given is not None and given <= width:  # the usual file: one shape
        if given == width:
            return np.asarray(values.reshape(-1, width), dtype)
        uniform = np.empty((counts.shape[0], width), dtype)
        uniform[:, :given] = values.reshape(counts.shape[0], given)
        uniform[:, given:] = defaults[given:]
        return uniform
    rows = np.tile(np.array(defaults, dtype), (counts.shape[0], 1))
    line_of_value = np.repeat(np.arange(counts.shape[0]), counts)
    column_of_value = np.arange(values.shape[0]) - np.repeat(np.cumsum(counts) - counts, counts)
    kept = column_of_value < width
    rows[line_of_value[kept], column_of_value[kept]] = values[kept]
    return rows


# ---------------------------------------------------------------------------------------------------- vertices


@dataclass
class _Attribute:
    lines: Int64Array
    rows: npt.NDArray[np.float32] | Float64Array  # float32 but for _DOUBLE_ROWS; _COLUMNS_USED's may be narrower
    counts: Int64Array


_DOUBLE_ROWS = ("vs", "vx")  # smoothing indices must stay exact integers; tangent signs are computed in doubles


@dataclass
class _Vertices:
    count: int
    vp_lines: Int64Array
    attributes: dict[str, _Attribute]  # by command, only those present in the file
    blend_indices: npt.NDArray[np.int32] | None
    blend_weights: npt.NDArray[np.float32] | None
    blend_raw_indices: Int64Array  # every joint index as written, for validation
    blend_raw_positions: Int64Array  # its position among the flat `vb` numbers
    blend_counts: Int64Array


_ATTRIBUTE_DEFAULTS: dict[str, tuple[float, ...]] = {
    "vp": (0.0, 0.0, 0.0, 1.0),
    "vt": (0.0, 0.0, 0.0, 0.0),
    "vn": (0.0, 0.0, 0.0),
    "vx": (0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    "vc": (0.0, 0.0, 0.0, 1.0),
    "vs": (0.0,),
    **{f"v{slot}": (0.0, 0.0, 0.0, 0.0) for slot in range(10)},
}


_COLUMNS_USED = {"vp": 3, "vt": 2}  # of the rows of these commands only the first columns are read (`_make_mesh`)


_FaceNumbers = dict[str, Callable[[], NumbersAndCounts]]  # the face lines' numbers, read with the vertices'


def _read_vertices(scanned: ScannedText, events: KeywordEvents, warnings: Warnings) -> tuple[_Vertices, _FaceNumbers]:
    """The vertex arrays; and the numbers of the face commands when they are few enough to be read in one go (see
    `_resolved_faces`) and some come before the last vertex. Those and the blend weights' are read with the
    vertices' numbers, so that text where meshes alternate vertices and faces is tokenized once, not once for
    each (their errors are still reported after the vertices', as each is checked)."""
    attributes: dict[str, _Attribute] = {}
    present = [(command, scanned.lines_of(command)) for command in _ATTRIBUTE_DEFAULTS]
    present = [(command, lines) for command, lines in present if lines.shape[0]]
    last_vertex_line = max((int(lines[-1]) for _, lines in present), default=-1)
    faces = [(command, scanned.lines_of(command)) for command in _FACE_COMMANDS]
    faces = [(command, lines) for command, lines in faces  # (faces after every vertex: no text read twice)
             if 0 < lines.shape[0] <= _FACE_LINES and lines[0] < last_vertex_line]  # fmt: skip
    blend_lines = scanned.lines_of("vb")
    blends = [("vb", blend_lines)] if blend_lines.shape[0] else []
    single = [command not in _DOUBLE_ROWS for command, _ in present]  # (the rows' type: see _padded_rows)
    later = scanned.numbers_later([(lines, f"'{command}'") for command, lines in [*present, *blends, *faces]],
                                  single + [False] * (len(blends) + len(faces)))  # fmt: skip
    numbers = [finish() for finish in later[: len(present)]]
    blend_numbers = later[len(present)] if blends else None
    face_numbers = {command: finish for (command, _), finish in zip(faces, later[len(present) + len(blends) :],
                                                                    strict=True)}  # fmt: skip
    for (command, lines), (values, counts) in zip(present, numbers, strict=True):
        defaults = _ATTRIBUTE_DEFAULTS[command]
        if command == "vs":
            scanned.integers(values, lines, counts, "'vs' smoothing index")
        # (the document stores float32 but for _DOUBLE_ROWS; the range was checked by `numbers`)
        rows = _padded_rows(values, counts, defaults, np.float64 if command in _DOUBLE_ROWS else np.float32,
                            _COLUMNS_USED.get(command))  # fmt: skip
        attributes[command] = _Attribute(lines, rows, counts)
    vp_lines = attributes["vp"].lines if "vp" in attributes else np.zeros(0, np.int64)
    mesh_lines = np.array([line for line, _ in events.meshes], np.int64)
    for command, attribute in attributes.items():
        _check_alignment(scanned, command, attribute.lines, vp_lines, mesh_lines)
    vertices = _Vertices(int(vp_lines.shape[0]), vp_lines, attributes, None, None, *_empty_int64(3))
    if blend_numbers is not None:
        _check_alignment(scanned, "vb", blend_lines, vp_lines, mesh_lines)
        _read_blends(scanned, blend_lines, blend_numbers(), vertices, warnings)
    return vertices, face_numbers


def _empty_int64(count: int) -> list[Int64Array]:
    return [np.zeros(0, np.int64) for _ in range(count)]


def _check_alignment(
    scanned: ScannedText, command: str, lines: Int64Array, vp_lines: Int64Array, mesh_lines: Int64Array
) -> None:
    """Attribute n must belong to vertex n: at every `mesh` command and at the end the counts must agree."""
    if command == "vp":
        return
    boundaries = np.append(mesh_lines, scanned.line_count)
    attribute_counts = np.searchsorted(lines, boundaries)
    vertex_counts = np.searchsorted(vp_lines, boundaries)
    mismatches = np.flatnonzero(attribute_counts != vertex_counts)
    if not mismatches.shape[0]:
        return
    region = int(mismatches[0])
    have, need = int(attribute_counts[region]), int(vertex_counts[region])
    earlier_have = int(attribute_counts[region - 1]) if region else 0
    earlier_need = int(vertex_counts[region - 1]) if region else 0
    mesh_name = "(before any mesh)" if region == 0 else repr(_name_at(mesh_lines, region - 1, scanned))
    message = (
        f"mesh {mesh_name} has {need - earlier_need} 'vp' lines but {have - earlier_have} '{command}' lines; "
        "every vertex array must have one entry per vertex"
    )
    culprit = int(vp_lines[have]) if have < need else int(lines[need])
    raise scanned.error(message, culprit)


def _name_at(mesh_lines: Int64Array, index: int, scanned: ScannedText) -> str:
    text = decode_text(scanned.lines[int(mesh_lines[index])])[0].split(None, 1)
    return text[1].strip().strip('"') if len(text) > 1 else ""


def _read_blends(
    scanned: ScannedText, lines: Int64Array, numbers: NumbersAndCounts, vertices: _Vertices, warnings: Warnings
) -> None:
    values, counts = numbers
    pair_counts = (counts + 1) // 2
    width = max(int(pair_counts.max()), 1)
    index_rows = _padded_rows(values, counts, (0.0, 0.0) * width)
    is_index = (np.arange(values.shape[0]) - np.repeat(np.cumsum(counts) - counts, counts)) % 2 == 0
    raw_indices = scanned.integers(values, lines, counts, "'vb' joint index", only=is_index)[is_index]
    indices = index_rows[:, 0::2].astype(np.int64)
    weights = index_rows[:, 1::2]
    vertices.blend_raw_indices = raw_indices
    vertices.blend_raw_positions = np.flatnonzero(is_index)
    vertices.blend_counts = counts
    if width > MAX_INFLUENCES:
        crowded = count_per_row(weights > _WEIGHT_EPSILON) > MAX_INFLUENCES
        if crowded.any():
            warnings.add(
                f"line {lines[np.argmax(crowded)] + 1}: {np.count_nonzero(crowded)} vertices have more than "
                f"{MAX_INFLUENCES} influences; the {MAX_INFLUENCES} largest are kept, as the compiler does"
            )
        wide = pair_counts > MAX_INFLUENCES
        limited = limit_blend_weights(indices[wide], weights[wide], min_weight=_WEIGHT_EPSILON, normalize=False)
        indices, weights = indices[:, :MAX_INFLUENCES].copy(), weights[:, :MAX_INFLUENCES].copy()
        indices[wide], weights[wide] = limited
    elif width < MAX_INFLUENCES:
        indices = np.pad(indices, ((0, 0), (0, MAX_INFLUENCES - width)))
        weights = np.pad(weights, ((0, 0), (0, MAX_INFLUENCES - width)))
    vertices.blend_indices = indices.astype(np.int32)
    vertices.blend_weights = weights.astype(np.float32)


def _check_blend_indices(scanned: ScannedText, vertices: _Vertices, joint_count: int) -> None:
    raw = vertices.blend_raw_indices
    if not raw.shape[0]:
        return
    limit = min(joint_count, _MAX_JOINT_INDEX + 1) if joint_count else _MAX_JOINT_INDEX + 1
    bad = (raw < 0) | (raw >= limit)
    if not bad.any():
        return
    first = int(np.argmax(bad))
    value = int(raw[first])
    if value > _MAX_JOINT_INDEX:
        message = f"'vb' joint index {value} exceeds {_MAX_JOINT_INDEX} (the compiler would wrap it silently)"
    elif value < 0:
        message = f"'vb' joint index {value} is negative"
    else:
        message = f"'vb' joint index {value} is out of range: the file declares {joint_count} joints"
    lines = scanned.lines_of("vb")
    scanned.raise_at_value(lines, vertices.blend_counts, int(vertices.blend_raw_positions[first]), message)


# ---------------------------------------------------------------------------------------------------- faces


@dataclass
class _Faces:
    lines: Int64Array  # line of each face
    sizes: Int64Array
    corners: Int64Array  # global vertex indices
    edge_flags: npt.NDArray[np.uint8] | None


_FACE_COMMANDS = ("fa", "fm")


def _read_faces(
    scanned: ScannedText, events: KeywordEvents, vertex_count: int, warnings: Warnings, face_numbers: _FaceNumbers
) -> _Faces:
    vp_lines = scanned.lines_of("vp")
    mesh_lines = np.array([line for line, _ in events.meshes], np.int64)
    parts = [_resolved_faces(scanned, command, vp_lines, mesh_lines, vertex_count, face_numbers.get(command))
             for command in _FACE_COMMANDS]  # fmt: skip
    lines = np.concatenate([part[0] for part in parts])
    sizes = np.concatenate([part[1] for part in parts])
    corners = np.concatenate([part[2] for part in parts])
    if parts[0][0].shape[0] and parts[1][0].shape[0]:
        face_order = np.argsort(lines, kind="stable")
        corner_order = np.argsort(np.repeat(lines, sizes), kind="stable")
        lines, sizes, corners = lines[face_order], sizes[face_order], corners[corner_order]
    edge_flags = _read_edge_flags(scanned, lines, sizes)
    short = sizes < 3
    if short.any():
        warnings.add(
            f"line {lines[np.argmax(short)] + 1}: {np.count_nonzero(short)} faces with fewer than 3 vertices ignored"
        )
        kept_corners = np.repeat(~short, sizes)
        lines, sizes, corners = lines[~short], sizes[~short], corners[kept_corners]
        edge_flags = None if edge_flags is None else edge_flags[kept_corners]
    _warn_degenerate_faces(lines, sizes, corners, warnings)
    return _Faces(lines, sizes, corners, edge_flags)


def _resolved_faces(
    scanned: ScannedText, command: str, vp_lines: Int64Array, mesh_lines: Int64Array, vertex_count: int,
    numbers: Callable[[], NumbersAndCounts] | None,
) -> tuple[Int64Array, Int64Array, Int64Array]:  # fmt: skip
    """(face lines, face sizes, global corner indices) of the `fa` or `fm` lines; `numbers`: their numbers, read
    already (then they are at most one chunk of lines)."""
    lines = scanned.lines_of(command)
    if not lines.shape[0]:
        return lines, *_empty_int64(2)  # type: ignore[return-value]
    mesh_starts = np.searchsorted(vp_lines, mesh_lines)
    chunks = np.split(lines, np.arange(_FACE_LINES, lines.shape[0], _FACE_LINES))
    parts = [_resolved_corners(scanned, command, chunk, vp_lines, mesh_lines, mesh_starts, vertex_count,
                               numbers() if numbers is not None else None)
             for chunk in chunks]  # fmt: skip
    counts = np.concatenate([part[0] for part in parts])
    resolved = np.concatenate([part[1] for part in parts])
    return lines, counts, resolved


def _resolved_corners(
    scanned: ScannedText,
    command: str,
    lines: Int64Array,
    vp_lines: Int64Array,
    mesh_lines: Int64Array,
    mesh_starts: Int64Array,
    vertex_count: int,
    numbers: NumbersAndCounts | None = None,
) -> tuple[Int64Array, Int64Array]:
    """(corner counts, global corner indices) of some `fa` or `fm` lines (a bounded number: their temporaries are
    several arrays per corner); `numbers`: theirs, when read already."""
    values, counts = numbers if numbers is not None else scanned.numbers(lines, f"'{command}'")
    indices = scanned.integers(values, lines, counts, f"'{command}' vertex index")
    if command == "fm":
        region = np.searchsorted(mesh_lines, lines, side="right") - 1
        base = np.where(region >= 0, mesh_starts[np.maximum(region, 0)] if mesh_starts.shape[0] else 0, 0)
    else:
        base = None  # (every index counts from the file's first vertex)
    backward = indices.shape[0] and int(indices.min()) < 0  # (counted back from the vertices defined so far: rare)
    if backward:
        defined_so_far = np.searchsorted(vp_lines, lines)
        base = np.zeros(lines.shape[0], np.int64) if base is None else base
        resolved = np.where(indices < 0, np.repeat(defined_so_far, counts), np.repeat(base, counts)) + indices
    elif base is None:
        resolved = indices
    else:
        per_line = uniform_count(counts)  # (a scalar repeat where every face has as many corners)
        resolved = np.repeat(base, counts if per_line is None else per_line) + indices
    if resolved.shape[0] and (int(resolved.min()) < 0 or int(resolved.max()) >= vertex_count):
        bad = (resolved < 0) | (resolved >= vertex_count)
        first = int(np.argmax(bad))
        message = (
            f"'{command}' vertex index {indices[first]} refers to vertex {resolved[first]}, "
            f"but the file defines {vertex_count} vertices (0..{vertex_count - 1})"
        )
        scanned.raise_at_value(lines, counts, first, message)
    return counts, resolved


def _read_edge_flags(scanned: ScannedText, face_lines: Int64Array, sizes: Int64Array) -> npt.NDArray[np.uint8] | None:
    """`fs` lines pair with face lines in order and need one flag per corner."""
    lines = scanned.lines_of("fs")
    if not lines.shape[0]:
        return None
    values, counts = scanned.numbers(lines, "'fs'")
    flags = scanned.integers(values, lines, counts, "'fs' flag")
    paired = min(lines.shape[0], face_lines.shape[0])
    mismatched = np.flatnonzero(counts[:paired] != sizes[:paired])
    if mismatched.shape[0]:
        row = int(mismatched[0])
        message = f"'fs' has {counts[row]} flags but its face (line {face_lines[row] + 1}) has {sizes[row]} vertices"
        raise scanned.error(message, int(lines[row]))
    if lines.shape[0] != face_lines.shape[0]:
        message = f"{lines.shape[0]} 'fs' lines for {face_lines.shape[0]} faces; they must pair up one to one"
        raise scanned.error(message, int(lines[paired if paired < lines.shape[0] else 0]))
    return np.clip(flags, 0, 1).astype(np.uint8)


def _warn_degenerate_faces(lines: Int64Array, sizes: Int64Array, corners: Int64Array, warnings: Warnings) -> None:
    if not corners.shape[0]:
        return
    faces = np.flatnonzero(faces_repeating_a_vertex(corners, sizes))
    if faces.shape[0]:
        warnings.add(f"line {lines[faces[0]] + 1}: {faces.shape[0]} faces use the same vertex twice")


# ---------------------------------------------------------------------------------------------------- skeleton


def _read_joints(events: KeywordEvents) -> list[IqeJoint]:
    return [IqeJoint(entry.name, entry.parent, line=entry.line + 1) for entry in events.joints]


@dataclass
class _Poses:
    lines: Int64Array
    values: Float64Array  # (N, 10)


def _read_poses(scanned: ScannedText, warnings: Warnings) -> _Poses:
    line_parts: list[Int64Array] = []
    pose_parts: list[Float64Array] = []
    degenerate = 0
    for command, defaults in (
        ("pq", (0.0,) * 7 + (1.0,) * 3),
        ("pm", (0.0,) * 12 + (1.0,) * 3),
        ("pa", (0.0,) * 6 + (1.0,) * 3),
    ):
        lines = scanned.lines_of(command)
        if not lines.shape[0]:
            continue
        values, counts = scanned.numbers(lines, f"'{command}'")
        rows = _padded_rows(values, counts, defaults)
        if command == "pq":
            _warn_unnormalised(rows, counts, warnings)
            poses, zero = poses_from_pq(rows, counts)
        elif command == "pm":
            poses, zero = poses_from_pm(rows)
        else:
            poses, zero = poses_from_pa(rows)
        degenerate += int(np.count_nonzero(zero))
        too_large = ~(np.abs(poses) <= FLOAT32_MAX).all(axis=1)
        if too_large.any():
            message = f"'{command}': the resulting pose is too large for a float"
            raise scanned.error(message, int(lines[np.argmax(too_large)]))
        line_parts.append(lines)
        pose_parts.append(poses)
    if degenerate:
        warnings.add(
            f"{degenerate} poses have no usable rotation (zero quaternion or singular matrix); identity rotation used"
        )
    if not line_parts:
        return _Poses(np.zeros(0, np.int64), np.zeros((0, 10)))
    lines = np.concatenate(line_parts)
    order = np.argsort(lines, kind="stable")
    return _Poses(lines[order], np.concatenate(pose_parts)[order])


def _warn_unnormalised(rows: Float64Array, counts: Int64Array, warnings: Warnings) -> None:
    given = rows[counts >= 7, 3:7]
    lengths = np.sqrt(np.einsum("ij,ij->i", given, given))
    off = np.count_nonzero(np.abs(lengths - 1.0) > 1e-3)
    if off:
        warnings.add(f"{off} 'pq' quaternions are not unit length; kept as written, normalised for rotations")


def _apply_base_pose(joints: list[IqeJoint], poses: _Poses, events: KeywordEvents, warnings: Warnings) -> None:
    first_animation = events.animations[0][0] if events.animations else np.iinfo(np.int64).max
    base = poses.values[: int(np.searchsorted(poses.lines, first_animation))]
    if base.shape[0] > len(joints):
        warnings.add(f"{base.shape[0] - len(joints)} base poses beyond the {len(joints)} joints ignored")
    if joints and base.shape[0] < len(joints):
        warnings.add(f"{len(joints) - base.shape[0]} joints have no base pose; identity used")
    for joint, pose in zip(joints, base.tolist(), strict=False):
        joint.translation = (pose[0], pose[1], pose[2])
        joint.rotation = (pose[3], pose[4], pose[5], pose[6])
        joint.scale = (pose[7], pose[8], pose[9])


def _read_animations(poses: _Poses, events: KeywordEvents, joint_count: int, warnings: Warnings) -> list[IqeAnimation]:
    if not events.animations:
        return []
    animation_lines = np.array([line for line, _ in events.animations], np.int64)
    animations = [IqeAnimation(name) for _, name in events.animations]
    _apply_animation_settings(animations, animation_lines, events, warnings)
    frame_lines = np.array([line for line in events.frames if line > animation_lines[0]], np.int64)
    starts = np.union1d(animation_lines, frame_lines)  # sorted line of every frame start
    in_animation = poses.lines > animation_lines[0]
    pose_lines, pose_values = poses.lines[in_animation], poses.values[in_animation]
    segment = np.searchsorted(starts, pose_lines, side="right") - 1
    segments, first_pose, sizes = np.unique(segment, return_index=True, return_counts=True)
    width = joint_count or (int(sizes.max()) if sizes.shape[0] else 0)
    if not joint_count and sizes.shape[0]:
        warnings.add("animation poses but no joints: frames keep every pose")
    _warn_frame_sizes(sizes, width, warnings)
    owner = np.searchsorted(animation_lines, starts[segments], side="right") - 1  # animation of each frame
    rank = np.arange(pose_lines.shape[0]) - np.repeat(first_pose, sizes)
    frame_of_pose = np.repeat(np.arange(segments.shape[0]), sizes)
    kept = rank < width
    all_frames = np.tile(np.array(IDENTITY_POSE, np.float32), (segments.shape[0], width, 1))
    all_frames[frame_of_pose[kept], rank[kept]] = pose_values[kept]
    bounds = np.searchsorted(owner, np.arange(len(animations) + 1))  # frames of one animation are contiguous
    for index, animation in enumerate(animations):
        animation.frames = all_frames[bounds[index] : bounds[index + 1]]
    return animations


def _apply_animation_settings(
    animations: list[IqeAnimation], animation_lines: Int64Array, events: KeywordEvents, warnings: Warnings
) -> None:
    for line, rate in events.framerates:
        owner = int(np.searchsorted(animation_lines, line, side="right")) - 1
        if owner < 0:
            warnings.add(f"line {line + 1}: framerate before any animation ignored")
        else:
            animations[owner].framerate = rate
    for line in events.loops:
        owner = int(np.searchsorted(animation_lines, line, side="right")) - 1
        if owner < 0:
            warnings.add(f"line {line + 1}: loop before any animation ignored")
        else:
            animations[owner].loop = True


def _warn_frame_sizes(sizes: Int64Array, width: int, warnings: Warnings) -> None:
    short = int(np.count_nonzero(sizes < width))
    if short:
        warnings.add(
            f"{short} animation frames have fewer poses than joints; padded with identity, as the compiler does"
        )
    long = int(np.count_nonzero(sizes > width))
    if long:
        warnings.add(f"{long} animation frames have more poses than joints; the extra poses are ignored")


# ---------------------------------------------------------------------------------------------------- meshes


@dataclass
class _Region:
    """The lines between two `mesh` commands: their vertices and the (name, material) keys of their faces."""

    name: str
    vertex_start: int
    vertex_end: int
    keys: list[tuple[str, str]]


def _build_meshes(
    scanned: ScannedText, events: KeywordEvents, vertices: _Vertices, faces: _Faces, warnings: Warnings
) -> list[IqeMesh]:
    mesh_lines = np.array([line for line, _ in events.meshes], np.int64)
    material_lines = np.array([line for line, _ in events.materials], np.int64)
    material_names = ["", *(name for _, name in events.materials)]
    region_names = ["", *(name for _, name in events.meshes)]
    face_region = np.searchsorted(mesh_lines, faces.lines, side="right")
    face_material = np.searchsorted(material_lines, faces.lines, side="right")
    # Faces are in file order, so region and material never decrease from face to face, nor does the code of the
    # pair: each code is one run of faces (`code_runs[k]`: where code k's faces start; the last: their end).
    key_codes = face_region * len(material_names) + face_material
    del face_region, face_material
    run_starts = np.concatenate(([0], np.flatnonzero(np.diff(key_codes)) + 1)) if key_codes.shape[0] else key_codes
    codes = key_codes[run_starts]
    code_runs = [*run_starts.tolist(), key_codes.shape[0]]
    key_of_code: dict[int, tuple[str, str]] = {}
    for code in codes.tolist():
        key_of_code[code] = (region_names[code // len(material_names)], material_names[code % len(material_names)])
    if len(key_of_code) > 1:  # (with one key there are no blocks to repeat)
        _warn_repeated_blocks(faces, codes, run_starts, key_of_code, warnings)
    regions = _regions(vertices, mesh_lines, region_names, material_lines, material_names, codes, key_of_code)
    keys: list[tuple[str, str]] = []
    key_index: dict[tuple[str, str], int] = {}
    for region in regions:
        for key in region.keys:
            if key not in key_index:
                key_index[key] = len(keys)
                keys.append(key)
    runs_of_key: list[list[int]] = [[] for _ in keys]  # each key's codes, in file order
    for position, code in enumerate(codes.tolist()):
        runs_of_key[key_index[key_of_code[code]]].append(position)
    face_starts = np.cumsum(faces.sizes) - faces.sizes
    owned_of: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for region in regions:
        if len(region.keys) == 1:
            owned_of.setdefault(region.keys[0], []).append((region.vertex_start, region.vertex_end))
    smoothing = _smoothing_tables(events)
    meshes: list[IqeMesh] = []
    for (name, material), runs in zip(keys, runs_of_key, strict=True):
        owned = owned_of.get((name, material), [])
        face_ids = np.concatenate(
            [np.arange(code_runs[run], code_runs[run + 1], dtype=np.int64) for run in runs] or [np.zeros(0, np.int64)]
        )
        meshes.append(
            _make_mesh(name, material, owned, face_ids, face_starts, vertices, faces, scanned, events, smoothing)
        )
    return meshes


def _regions(
    vertices: _Vertices,
    mesh_lines: Int64Array,
    region_names: list[str],
    material_lines: Int64Array,
    material_names: list[str],
    codes: Int64Array,
    key_of_code: dict[int, tuple[str, str]],
) -> list[_Region]:
    """The regions between `mesh` commands (`codes`: the faces' distinct (region, material) codes, in order)."""
    vertex_bounds = np.searchsorted(vertices.vp_lines, np.append(mesh_lines, np.iinfo(np.int64).max))
    starts = np.concatenate(([0], vertex_bounds[:-1]))
    code_bounds = np.searchsorted(codes, np.arange(len(region_names) + 1) * len(material_names)).tolist()
    code_list = codes.tolist()
    regions: list[_Region] = []
    for index, name in enumerate(region_names):
        start, end = int(starts[index]), int(vertex_bounds[index])
        keys = [key_of_code[code] for code in code_list[code_bounds[index] : code_bounds[index + 1]]]
        if not keys and end > start:
            material = material_names[int(np.searchsorted(material_lines, vertices.vp_lines[start], side="right"))]
            keys = [(name, material)]
        regions.append(_Region(name, start, end, keys))
    return regions


def _warn_repeated_blocks(
    faces: _Faces,
    codes: Int64Array,
    code_starts: Int64Array,
    key_of_code: dict[int, tuple[str, str]],
    warnings: Warnings,
) -> None:
    """`codes`: the faces' distinct (region, material) codes, in order; `code_starts`: the first face of each."""
    if not codes.shape[0]:
        return
    key_numbers: dict[tuple[str, str], int] = {}
    for key in key_of_code.values():
        key_numbers.setdefault(key, len(key_numbers))
    code_keys = np.array([key_numbers[key_of_code[code]] for code in codes.tolist()], np.int64)
    changes = np.concatenate(([True], code_keys[1:] != code_keys[:-1]))  # runs of faces of one key
    run_starts = code_starts[changes]
    run_codes = codes[changes]
    run_keys = code_keys[changes]
    if np.unique(run_keys).shape[0] < run_keys.shape[0]:
        _, first = np.unique(run_keys, return_index=True)
        repeated_run = int(np.setdiff1d(np.arange(run_keys.shape[0]), first)[0])
        name, material = key_of_code[int(run_codes[repeated_run])]
        line = int(faces.lines[run_starts[repeated_run]]) + 1
        warnings.add(
            f"line {line}: faces of mesh {name!r} with material {material!r} continue after other meshes; they are "
            "merged here, but the reference compiler loses triangles of such repeated blocks"
        )


def _make_mesh(
    name: str,
    material: str,
    owned: list[tuple[int, int]],
    face_ids: Int64Array,
    face_starts: Int64Array,
    vertices: _Vertices,
    faces: _Faces,
    scanned: ScannedText,
    events: KeywordEvents,
    smoothing: _SmoothingTables,
) -> IqeMesh:
    taken: Int64Array | slice = face_ids
    if face_ids.shape[0] and int(face_ids[-1]) - int(face_ids[0]) + 1 == face_ids.shape[0]:  # one run of faces
        taken = slice(int(face_ids[0]), int(face_ids[-1]) + 1)  # (its arrays sliced, not gathered)
    sizes = faces.sizes[taken]
    corner_ids: Int64Array | slice
    if sizes.shape[0] == faces.sizes.shape[0]:  # every face (one mesh): no per-corner index arrays
        corner_ids = slice(None)
    elif isinstance(taken, slice):
        first_corner = int(face_starts[taken.start])
        corner_ids = slice(first_corner, first_corner + int(sizes.sum()))
    else:
        corner_ids = np.repeat(face_starts[face_ids] - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
    vertex_ids, local_corners = _gather_vertices(owned, faces.corners[corner_ids])
    mesh = IqeMesh(name, material, _take(vertices.attributes["vp"].rows, vertex_ids, 3))
    _fill_vertex_arrays(mesh, vertex_ids, vertices, events)
    mesh.face_corners = local_corners.astype(np.int32, copy=False)
    mesh.face_sizes = sizes.astype(np.int32)
    if faces.edge_flags is not None:
        mesh.edge_smooth = faces.edge_flags[corner_ids]
    _fill_smoothing(mesh, faces.lines[taken], smoothing)
    return mesh


def _gather_vertices(
    owned: list[tuple[int, int]], corners: Int64Array
) -> tuple[Int64Array | slice, npt.NDArray[np.int32] | Int64Array]:
    """The mesh's vertices (its own ranges, then any other vertex its faces use) and its local corner indices."""
    if len(owned) == 1:
        start, end = owned[0]
        if not corners.shape[0] or (corners.min() >= start and corners.max() < end):
            return slice(start, end), np.subtract(corners, start, dtype=np.int32, casting="unsafe")  # < end
    own = np.concatenate([np.arange(start, end, dtype=np.int64) for start, end in owned] or [np.zeros(0, np.int64)])
    extra = np.setdiff1d(np.unique(corners), own, assume_unique=True)
    vertex_ids = np.concatenate((own, extra))
    order = np.argsort(vertex_ids, kind="stable")
    local = order[np.searchsorted(vertex_ids[order], corners)]
    return vertex_ids, local


def _take(
    rows: npt.NDArray[np.float32] | Float64Array, vertex_ids: Int64Array | slice, width: int
) -> npt.NDArray[np.float32]:
    return np.ascontiguousarray(rows[vertex_ids, :width], dtype=np.float32)


def _fill_vertex_arrays(
    mesh: IqeMesh, vertex_ids: Int64Array | slice, vertices: _Vertices, events: KeywordEvents
) -> None:
    attributes = vertices.attributes
    if "vt" in attributes:
        mesh.texcoords = _take(attributes["vt"].rows, vertex_ids, 2)
    if "vn" in attributes:
        mesh.normals = _take(attributes["vn"].rows, vertex_ids, 3)
    if "vx" in attributes:
        _fill_tangents(mesh, attributes["vx"], vertex_ids)
    if "vc" in attributes:
        mesh.colors = _take(attributes["vc"].rows, vertex_ids, 4)
    if "vs" in attributes:
        mesh.smooth_indices = attributes["vs"].rows[vertex_ids, 0].astype(np.int32)
    if vertices.blend_indices is not None and vertices.blend_weights is not None:
        mesh.blend_indices = np.ascontiguousarray(vertices.blend_indices[vertex_ids])
        mesh.blend_weights = np.ascontiguousarray(vertices.blend_weights[vertex_ids])
    sizes = {declared.kind: declared.size for declared in events.vertex_arrays}
    for slot in range(10):
        if f"v{slot}" in attributes:
            mesh.custom[slot] = _take(attributes[f"v{slot}"].rows, vertex_ids, sizes.get(f"custom{slot}", 4))


def _fill_tangents(mesh: IqeMesh, attribute: _Attribute, vertex_ids: Int64Array | slice) -> None:
    """4-value rows give the sign directly; 6-value rows give a bitangent, whose side sets the sign."""
    rows = attribute.rows[vertex_ids]
    tangents = rows[:, :4].copy()
    if (attribute.counts > 4).any():
        full = attribute.counts[vertex_ids] > 4
        bitangents = rows[:, 3:6].copy()
        normals = mesh.normals.astype(np.float64) if mesh.normals is not None else None
        if normals is not None:
            side = np.einsum("ij,ij->i", np.cross(normals, tangents[:, :3]), bitangents)
            tangents[full, 3] = np.where(side[full] < 0.0, -1.0, 1.0)
            computed = tangents[:, 3:4] * np.cross(normals, tangents[:, :3])
            bitangents[~full] = computed[~full]
        else:
            tangents[full, 3] = 1.0
            bitangents[~full] = 0.0
        mesh.bitangents = np.clip(bitangents, -FLOAT32_MAX, FLOAT32_MAX).astype(np.float32)
    mesh.tangents = tangents.astype(np.float32)


_SmoothingTables = tuple[tuple[Int64Array, npt.NDArray[Any]], ...]


def _smoothing_tables(events: KeywordEvents) -> _SmoothingTables:
    """(lines where it changes, values in force: the default first) of the smoothing group, angle and uv flag."""
    group_lines = np.array([line for line, _ in events.smooth_groups], np.int64)
    group_values = [-1]
    for _, key in events.smooth_groups:
        group_values.append(group_values[-1] if key is None else key)
    angle_lines = np.array([line for line, _ in events.smooth_angles], np.int64)
    angles = [180.0, *(angle for _, angle in events.smooth_angles)]
    uv_lines = np.array([line for line, _ in events.smooth_uvs], np.int64)
    uv_values = [False, *(enabled for _, enabled in events.smooth_uvs)]
    return (
        (group_lines, np.array(group_values).astype(np.int32)),
        (angle_lines, np.array(angles).astype(np.float32)),
        (uv_lines, np.array(uv_values).astype(np.bool_)),
    )


def _fill_smoothing(mesh: IqeMesh, face_lines: Int64Array, smoothing: _SmoothingTables) -> None:
    (group_lines, groups), (angle_lines, angles), (uv_lines, uvs) = smoothing
    mesh.face_smooth_groups = _state_at(group_lines, groups, face_lines)
    mesh.face_smooth_angles = _state_at(angle_lines, angles, face_lines)
    mesh.face_smooth_uv = _state_at(uv_lines, uvs, face_lines)


def _state_at(change_lines: Int64Array, values: npt.NDArray[Any], lines: Int64Array) -> npt.NDArray[Any]:
    """The value in force at each line: values[0] is the default, values[k] set at change_lines[k - 1]."""
    if not change_lines.shape[0]:  # (never set, as in most files: the default everywhere, without a search)
        return np.full(lines.shape[0], values[0], values.dtype)
    return values[np.searchsorted(change_lines, lines, side="right")]
