"""SMD / VTA writer: Source lines (`parent x y z nx ny nz u v links (bone weight)*`) or GoldSrc 9-field lines.

Numbers are written `%.6f`-style (6 decimals, absolute error <= 5e-7) by the vectorised renderer. Weights are
written as given: normalising, culling and limiting are the caller's choice (weights.py has studiomdl's rules).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..dedup import first_occurrences
from ..errors import FormatError
from ..rows import rows_at
from .document import CornerFloats, Flavour, SkeletonFrame, SmdDocument, SmdNode, Triangles, VertexFrame
from .render import (
    _LIMIT,
    DOUBLE_SPACE,
    NEWLINE,
    SPACE,
    NumberColumn,
    WordColumn,
    integer_groups,
    number_column,
    render_table,
    rows_text,
    text_words,
)
from .weights import dominant_bones, select_links

GOLDSRC_MAX_BONES = 128
GOLDSRC_MAX_BONE_NAME = 31  # bytes; studio.h keeps names in char[32] with the terminator
GOLDSRC_MAX_TEXTURE_NAME = 63  # char[64]

_BONE_SEPARATORS = np.array([DOUBLE_SPACE, SPACE, SPACE, DOUBLE_SPACE, SPACE, SPACE, NEWLINE], dtype=np.int8)
_BONE_FLOATS = np.array([False] + [True] * 6)
_VERTEX_SEPARATORS = np.array([SPACE] * 6 + [NEWLINE], dtype=np.int8)


def write_smd(doc: SmdDocument, flavour: Flavour | None = None) -> bytes:
    """The file text of `doc`; `flavour` overrides doc.flavour. Raises FormatError for what the format cannot hold."""
    return b"".join(smd_pieces(doc, flavour))


def smd_pieces(doc: SmdDocument, flavour: Flavour | None = None) -> Iterator[bytes]:
    """`write_smd` in pieces, to be written one after another (joining many small pieces at once is slow). Every
    check runs and every number is formatted before this returns; only the copying of repeated vertex lines into
    place happens as the pieces are taken."""
    flavour = flavour or doc.flavour
    if flavour == "goldsrc":
        _check_goldsrc_limits(doc)
    version = 1 if flavour == "goldsrc" else doc.version
    head = [f"version {version}\n".encode(), _nodes_text(doc.nodes), _skeleton_text(doc.skeleton)]
    parts: list[Iterable[bytes]] = [head]
    if doc.triangles is not None:
        parts.append(_triangles_text(doc.triangles, flavour))
    if doc.vertex_animation is not None:
        parts.append([_vertex_animation_text(doc.vertex_animation)])
    return itertools.chain.from_iterable(parts)


def _check_goldsrc_limits(doc: SmdDocument) -> None:
    if len(doc.nodes) > GOLDSRC_MAX_BONES:
        raise FormatError(f"GoldSrc allows at most {GOLDSRC_MAX_BONES} bones; this model has {len(doc.nodes)}")
    for node in doc.nodes:
        if len(node.name.encode()) > GOLDSRC_MAX_BONE_NAME:
            raise FormatError(f"GoldSrc bone names are at most {GOLDSRC_MAX_BONE_NAME} bytes: {node.name!r}")
    for name in doc.triangles.material_names if doc.triangles is not None else []:
        if len(name.encode()) > GOLDSRC_MAX_TEXTURE_NAME:
            raise FormatError(f"GoldSrc texture names are at most {GOLDSRC_MAX_TEXTURE_NAME} bytes: {name!r}")


def _nodes_text(nodes: list[SmdNode]) -> bytes:
    lines = ["nodes\n"]
    for node in nodes:
        if '"' in node.name or "\n" in node.name or "\r" in node.name:
            raise FormatError(f"bone name cannot hold a double quote or a line break: {node.name!r}")
        if node.id < 0 or node.parent < -1:
            raise FormatError(f"bone {node.name!r}: ids must be >= 0 and parents >= -1")
        lines.append(f'{node.id} "{node.name}" {node.parent}\n')
    lines.append("end\n")
    return "".join(lines).encode()


def _time_line(time: int, comment: str) -> bytes:
    if "\n" in comment or "\r" in comment:
        raise FormatError(f"time {time}: a comment cannot hold a line break")
    return (f"time {time} # {comment}\n" if comment else f"time {time}\n").encode()


def _skeleton_text(frames: list[SkeletonFrame]) -> bytes:
    tables = [
        _stack(frame.bone_ids, frame.positions, frame.rotations, f"skeleton time {frame.time}") for frame in frames
    ]
    heads = [_time_line(frame.time, frame.comment) for frame in frames]
    return b"skeleton\n" + _interleave(heads, tables, _BONE_FLOATS, _BONE_SEPARATORS) + b"end\n"


def _vertex_animation_text(frames: list[VertexFrame]) -> bytes:
    tables = [
        _stack(frame.vertex_ids, frame.positions, frame.normals, f"vertexanimation time {frame.time}")
        for frame in frames
    ]
    heads = [_time_line(frame.time, "") for frame in frames]
    floats = np.array([False] + [True] * 6)
    return b"vertexanimation\n" + _interleave(heads, tables, floats, _VERTEX_SEPARATORS) + b"end\n"


def _stack(
    ids: npt.NDArray[np.int32], first: npt.NDArray[np.float64], second: npt.NDArray[np.float64], where: str
) -> npt.NDArray[np.float64]:
    count = ids.shape[0]
    if ids.ndim != 1 or first.shape != (count, 3) or second.shape != (count, 3):
        raise FormatError(f"{where}: ids (n,) and two (n, 3) arrays expected")
    if count and int(ids.min()) < 0:
        raise FormatError(f"{where}: ids must be >= 0")
    return np.column_stack([ids.astype(np.float64), first, second]) if count else np.zeros((0, 7))


def _interleave(
    heads: list[bytes],
    tables: list[npt.NDArray[np.float64]],
    floats: npt.NDArray[np.bool_],
    separators: npt.NDArray[np.int8],
) -> bytes:
    """Each head line followed by its table, all tables rendered in one go."""
    table = np.concatenate(tables) if tables else np.zeros((0, floats.size))
    text, ends = render_table(table, floats, separators)
    bounds = np.concatenate([[0], ends]).astype(np.int64)
    rows = np.cumsum([0] + [t.shape[0] for t in tables])
    view = memoryview(text)
    parts: list[bytes | memoryview] = []
    for head, start, stop in zip(heads, rows[:-1].tolist(), rows[1:].tolist(), strict=True):
        parts.append(head)
        parts.append(view[int(bounds[start]) : int(bounds[stop])])
    return b"".join(parts)


def _check_triangles(tris: Triangles, held: dict[str, CornerFloats]) -> None:
    count = len(tris)
    shapes = {
        "parent_bones": (tris.parent_bones.shape, (count, 3)),
        **{name: (_corner_shape(tris, name, held), (count, 3, width)) for name, width in _FLOAT_COLUMNS},
        "link_counts": (tris.link_counts.shape, (count, 3)),
    }
    for name, (actual, expected) in shapes.items():
        if actual != expected:
            raise FormatError(f"triangles.{name} has shape {actual}, expected {expected}")
    links = int(tris.link_counts.sum())
    if tris.link_bones.shape != (links,) or tris.link_weights.shape != (links,):
        raise FormatError(f"triangles link arrays need {links} entries (the sum of link_counts)")
    if count and (int(tris.material_indices.min()) < 0 or int(tris.material_indices.max()) >= len(tris.material_names)):
        raise FormatError("triangles.material_indices point outside material_names")
    if count and (int(tris.parent_bones.min()) < 0 or int(tris.link_counts.min()) < 0):
        raise FormatError("parent bones and link counts must be >= 0")
    if links and int(tris.link_bones.min()) < 0:
        raise FormatError("link bones must be >= 0")
    for name in tris.material_names:
        _check_material_name(name)


_FLOAT_COLUMNS = (("positions", 3), ("normals", 3), ("uvs", 2))


def _held_per_line(tris: Triangles) -> dict[str, CornerFloats]:
    """The float columns the document holds per distinct vertex line (Triangles.hold_per_line), as those rows."""
    held = {name: tris.line_rows(name) for name, _ in _FLOAT_COLUMNS}
    return {name: rows for name, rows in held.items() if rows is not None}


def _corner_shape(tris: Triangles, name: str, held: dict[str, CornerFloats]) -> tuple[int, ...]:
    """The shape of a per-corner column, without making one held per line: what its making gives (a line without
    a row of its own is refused when the lines are taken, as making the column would)."""
    rows = held.get(name)
    if rows is None:
        shape: tuple[int, ...] = getattr(tris, name).shape
        return shape
    lines = tris.corner_lines
    assert lines is not None
    return (lines.size // 3, 3, rows.shape[1]) if rows.ndim == 2 and lines.size % 3 == 0 else (-1,)


def _check_material_name(name: str) -> None:
    if not name or name != name.strip() or "\n" in name or "\r" in name:
        raise FormatError(f"material name must be non-empty, one line, without outer spaces: {name!r}")
    if name.lower() == "end" or name.startswith("//"):
        raise FormatError(f"material name {name!r} would be read as 'end' or a comment")


def _triangles_text(tris: Triangles, flavour: Flavour) -> Iterable[bytes]:
    """The triangles block: a material line per triangle, then its 3 vertex lines. Where the document says which
    corners repeat one line (`corner_lines`: a vertex is written once per triangle using it), each line is made
    once and reused."""
    held = _held_per_line(tris)
    _check_triangles(tris, held)
    count = len(tris)
    if count == 0:
        return [b"triangles\nend\n"]
    corners = _Corners.of(tris, flavour, held)
    names = [f"{name}\n".encode() for name in tris.material_names]
    distinct = corners.distinct(tris.corner_lines)
    if distinct is not None:  # (every corner equals its line's first: checking those checks every number)
        first, rank = distinct
        lines, _ = rows_text(first.size, corners.subset(first).columns(), lengths=False)
        pool = list(names)
        for part in lines:  # (each part split where it stands: no copy of the whole text to split)
            pool += part.splitlines(keepends=True)
        del lines
        pooled = _pooled_lines(pool, tris.material_indices, rank.reshape(count, 3), len(names))
        return itertools.chain([b"triangles\n"], pooled, [b"end\n"])
    corners = corners.made_per_corner(tris)
    columns = corners.columns()  # (checks every number can be written)
    if any(b"\0" in name for name in names):  # cannot sit in a NUL-padded table: join line by line
        return [_join_by_triangle(names, tris.material_indices, columns)]
    name_words = np.stack([text_words(name.ljust(max(len(n) for n in names), b"\0")) for name in names])
    parts, _ = rows_text(count, columns, lines_per_row=3, head=name_words[tris.material_indices])
    return [b"triangles\n", *parts, b"end\n"]


_POOLED_LINES_AT_A_TIME = 1 << 14  # (lines of a block stay in cache: 1 << 17 wrote 40% slower)


def _pooled_lines(
    pool: list[bytes], materials: npt.NDArray[np.integer[Any]], corners: LineIndices, first_line: int
) -> Iterator[bytes]:
    """Each triangle's material line pool[materials[t]] and its corners' lines pool[first_line + corners[t, k]],
    joined a block at a time, each block made when taken: the text of a million triangles is never held, nor a
    Python number per line, nor the order of every line (a block's is made with it): the lines of a block are
    picked from an array of the pool's objects by numpy (1M triangles: 187 -> 158 ms against operator.itemgetter
    of each block's numbers as a list)."""
    lines = np.empty(len(pool), object)
    lines[:] = pool
    triangles = max(1, _POOLED_LINES_AT_A_TIME // 4)
    order = np.empty((triangles, 4), np.int64)
    for start in range(0, len(materials), triangles):
        block = order[: min(triangles, len(materials) - start)]
        block[:, 0] = materials[start : start + triangles]
        np.add(corners[start : start + triangles], first_line, out=block[:, 1:])
        yield b"".join(lines[block.reshape(-1)].tolist())


def _integers(values: npt.NDArray[Any]) -> npt.NDArray[np.integer[Any]]:
    """The values in one row, as they are when they are integers (a view), else as int64."""
    flat = values.reshape(-1)
    return flat if flat.dtype.kind in "iu" else flat.astype(np.int64)


_CORNERS_AT_A_TIME = 1 << 15
_MOST_DISTINCT = 0.75  # share of distinct corner lines above which making each once saves too little


def writes_lines_once(line_count: int, corner_count: int) -> bool:
    """Whether the writer makes the text of each of a document's distinct vertex lines once and reuses it: not
    where most corners are lines of their own (making each once saves too little; they are written corner by
    corner)."""
    return line_count <= _MOST_DISTINCT * corner_count


LineIndices = npt.NDArray[np.int64]


@dataclass
class _Corners:
    """Per-corner values as written: parent column, position, normal, uv, then (Source) CSR weight links. A float
    column the document holds per distinct vertex line (Triangles.hold_per_line) is kept as those rows (`held`)
    and not made per corner: its corners hold their line's values by the making, so they need no check, and the
    lines' rows are those rows."""

    flavour: Flavour
    parents: npt.NDArray[np.integer[Any]]
    floats: dict[str, CornerFloats]  # per corner: positions (C, 3), normals (C, 3), uvs (C, 2), unless held
    counts: npt.NDArray[np.integer[Any]]
    bones: npt.NDArray[Any]
    weights: npt.NDArray[Any]
    held: dict[str, CornerFloats] = field(default_factory=dict)  # per line, of the lines the check is given

    @classmethod
    def of(cls, tris: Triangles, flavour: Flavour, held: dict[str, CornerFloats] | None = None) -> _Corners:
        counts, parents = _integers(tris.link_counts), _integers(tris.parent_bones)  # (as they are: no copies)
        if flavour == "goldsrc":
            parents = dominant_bones(counts, tris.link_bones, tris.link_weights, parents)
        held = held or {}
        floats = {name: getattr(tris, name).reshape(-1, width) for name, width in _FLOAT_COLUMNS if name not in held}
        return cls(flavour, parents, floats, counts, tris.link_bones, tris.link_weights, held)

    def made_per_corner(self, tris: Triangles) -> _Corners:
        """These corners with every float column per corner (those held per line made now)."""
        if not self.held:
            return self
        floats = {name: getattr(tris, name).reshape(-1, width) for name, width in _FLOAT_COLUMNS}
        return replace(self, floats=floats, held={})

    def subset(self, corners: npt.NDArray[np.int64]) -> _Corners:
        """The corners `corners`; where columns are held per line, they must be the lines' first corners, in order
        (`distinct`'s first)."""
        links = select_links(self.counts, corners)
        floats = {name: rows_at(table, corners) for name, table in self.floats.items()}
        floats.update({name: rows[: corners.size] for name, rows in self.held.items()})
        return _Corners(self.flavour, self.parents[corners], floats, self.counts[corners], self.bones[links],
                        self.weights[links])  # fmt: skip

    def columns(self) -> list[WordColumn | NumberColumn]:
        columns: list[WordColumn | NumberColumn] = [number_column(self.parents, False, DOUBLE_SPACE)]
        for block in (self.floats["positions"], self.floats["normals"]):
            for axis in range(3):
                columns.append(number_column(block[:, axis], True, SPACE if axis < 2 else DOUBLE_SPACE))
        uvs = self.floats["uvs"]
        columns.append(number_column(uvs[:, 0], True, SPACE))
        columns.append(number_column(uvs[:, 1], True, NEWLINE if self.flavour == "goldsrc" else SPACE))
        if self.flavour != "goldsrc":
            columns += _link_words(self.counts, self.bones, self.weights)
        return columns

    def distinct(self, corner_lines: LineIndices | None) -> tuple[LineIndices, LineIndices] | None:
        """From a document's `corner_lines`: the first corner of each line and each corner's line, once checked
        that the corners of a line hold equal values (they then write equal text). None when that is not so, or
        when most lines differ."""
        if corner_lines is None or corner_lines.shape != self.counts.shape or not corner_lines.size:
            return None
        if not np.issubdtype(corner_lines.dtype, np.integer) or int(corner_lines.min()) < 0:
            return None
        first_corners = first_occurrences(corner_lines)
        if not writes_lines_once(first_corners.size, corner_lines.size):
            return None
        if not np.array_equal(corner_lines[first_corners], np.arange(first_corners.size)):
            return None  # not numbered in order of first appearance
        if any(len(rows) < first_corners.size for rows in self.held.values()):
            raise FormatError("triangles: a column held per line has fewer rows than corner_lines has lines")
        return (first_corners, corner_lines) if self._equal_to(first_corners, corner_lines) else None

    def _equal_to(self, first_corners: LineIndices, corner_lines: LineIndices) -> bool:
        """Whether every corner holds the values of its line's first corner, compared a block of corners at a time
        (the block's values, and its corners' first corners, stay in the CPU caches). Each axis is compared as a
        column of its own: gathering single numbers costs half what gathering rows of 2 or 3 does."""
        values: list[npt.NDArray[Any]] = [self.parents, self.counts]
        for table in self.floats.values():  # (not those held per line: equal by the making)
            values += [table[:, axis] for axis in range(table.shape[1])]
        linked = self.flavour != "goldsrc" and self.bones.size > 0  # (no links anywhere: equal counts say all)
        counts = link_starts = link_ends = np.asarray(self.counts if linked else (), np.int64)  # (unused unlinked)
        if linked:
            link_ends = np.cumsum(counts)
            link_starts = link_ends - counts
        for start in range(0, corner_lines.size, _CORNERS_AT_A_TIME):
            block = slice(start, start + _CORNERS_AT_A_TIME)
            block_first = first_corners[corner_lines[block]]
            if not all(np.array_equal(column[block], column[block_first]) for column in values):
                return False
            if not linked:
                continue
            # (equal counts: the links of the block's corners and those of their first corners line up)
            links = slice(int(link_starts[start]), int(link_ends[block][-1]))
            first_links = select_links(counts, block_first, link_starts)
            if not (np.array_equal(self.bones[links], self.bones[first_links])
                    and np.array_equal(self.weights[links], self.weights[first_links])):  # fmt: skip
                return False
        return True


def _link_words(
    counts: npt.NDArray[np.integer[Any]], bones: npt.NDArray[Any], weights: npt.NDArray[Any]
) -> list[WordColumn | NumberColumn]:
    """`links (bone weight)*` of Source corner lines; links a corner does not have are left blank."""
    columns: list[WordColumn | NumberColumn] = [
        number_column(counts, False, np.where(counts > 0, SPACE, NEWLINE).astype(np.int8))
    ]
    first = np.cumsum(counts) - counts
    # Links that can all be written (what number_column checks) are gathered a block at a time; otherwise the
    # columns are made whole, so that the first number that cannot be written is the one reported.
    largest_weight = float(np.max(np.abs(weights))) if weights.size else 0.0
    lazy = bones.size > 0 and largest_weight < _LIMIT and int(bones.max()) < _LIMIT  # (nan fails too)
    for rank in range(int(counts.max(initial=0))):  # what tris.padded_links() holds, a column at a time
        present = counts > rank
        last = np.where(counts == rank + 1, NEWLINE, SPACE).astype(np.int8)
        rank_bones = _RankLinks(counts, first, bones, rank, -1)
        rank_weights = _RankLinks(counts, first, weights, rank, 0.0)
        if lazy:
            columns.append(NumberColumn(rank_bones, False, SPACE, integer_groups(int(bones.max())), present))
            columns.append(NumberColumn(rank_weights, True, last, integer_groups(largest_weight), present))
        else:
            columns.append(number_column(rank_bones[:], False, SPACE, present))
            columns.append(number_column(rank_weights[:], True, last, present))
    return columns


class _RankLinks:
    """Link `rank` of every corner (bone or weight; `missing` where a corner has fewer links), made on demand."""

    def __init__(
        self, counts: npt.NDArray[np.integer[Any]], first: npt.NDArray[np.int64], source: npt.NDArray[Any], rank: int,
        missing: float,
    ) -> None:  # fmt: skip
        self.counts, self.first, self.source, self.rank, self.missing = counts, first, source, rank, missing

    def __getitem__(self, part: slice, /) -> npt.NDArray[np.float64]:
        counts = self.counts[part]
        if not self.source.size:
            return np.full(counts.size, self.missing, dtype=np.float64)
        at = np.minimum(self.first[part] + self.rank, self.source.size - 1)
        return np.where(counts > self.rank, self.source[at], self.missing).astype(np.float64)


def _join_by_triangle(
    names: list[bytes], material_indices: npt.NDArray[np.int32], columns: list[WordColumn | NumberColumn]
) -> bytes:
    pieces, lengths = rows_text(material_indices.size * 3, columns, lengths=True)
    assert lengths is not None
    ends = np.cumsum(lengths)
    starts = np.concatenate([[0], ends[:-1]])
    view = memoryview(b"".join(pieces))
    parts: list[bytes | memoryview] = [b"triangles\n"]
    triangles = zip(material_indices.tolist(), starts[0::3].tolist(), ends[2::3].tolist(), strict=True)
    for material, start, stop in triangles:
        parts.append(names[material])
        parts.append(view[start:stop])
    parts.append(b"end\n")
    return b"".join(parts)
