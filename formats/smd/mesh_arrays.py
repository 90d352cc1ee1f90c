"""The arrays a reference SMD's Blender mesh is made from (vertices shared, weights, normals), for one file or for
many small ones at once.

`mesh_arrays` makes them for one file; `mesh_arrays_together` makes the same for several, each array op run once
over all of them (a file column in the keys that share vertices, the results split per file): a QC of 60 small SMDs
otherwise pays some 30 numpy calls' overhead per file. Both give identical arrays (tests/unit/test_smd_mesh_arrays).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from ..dedup import faces_kept_whole, first_equal_rows, first_occurrences
from ..rows import PreparedNormals, prepared_unit_normals, spread_to_vertices, unit_vectors
from .document import Triangles
from .weights import balance_links, effective_links, merge_duplicate_links, select_links

# Corners from which normals are made once a distinct vertex line (then spread to the corners), not once a corner:
# a 968-triangle mesh's take half the time, a 100k-triangle grid's too; a mesh of a few hundred corners', a little
# more (the spreading costs more than it saves). Either way gives the same normals.
NORMALS_BY_LINE_FROM = 1 << 10
# Files batched together: each at most this many corners (a large one gains nothing), a batch at most this many
# in all (its concatenated arrays stay small)
TOGETHER_UP_TO = 1 << 15
BATCH_CORNERS = 1 << 15
_DENSE_BONE_TABLE = 1 << 22  # (files x id range) up to which bone ids are looked up in one table
Array = npt.NDArray[Any]


class MeshOptions(Protocol):
    weight_mode: str
    use_custom_normals: bool

    def points(self, values: Array) -> Array: ...

    def directions(self, values: Array) -> Array: ...


@dataclass
class MeshSource:
    """One reference file's triangles, its bone ids (id -> node row), node count and name (for its warning)."""

    triangles: Triangles
    node_rows: dict[int, int]
    node_count: int
    label: str


@dataclass
class MeshArrays:
    """A mesh to build: vertex positions (Blender space), each corner's vertex, corner normals (turned, as the
    file has them, and prepared for custom normals) and weights: (vertex, group row, weight) triples, group row
    into `used_bones` (node rows)."""

    positions: Array  # (V, 3)
    corner_verts: Array  # (3T,) int64
    normals: Array | None  # (3T, 3) float32
    prepared: PreparedNormals | None
    link_vertices: Array
    link_groups: Array
    link_weights: Array
    used_bones: list[int]
    warnings: list[str] = field(default_factory=list)

    @property
    def vertex_count(self) -> int:
        return len(self.positions)


# ------------------------------------------------------------------------------------------------ one file


def shared_vertices(
    positions: Array, counts: Array, bones: Array, weights: Array, groups: Array | None = None
) -> Array:
    """A vertex index per corner (or per vertex line): corners share a vertex when position and weight links (as a
    set) are equal (and their `groups`, when given: the file of each row when several are numbered together).
    Vertices are numbered in order of first appearance."""
    corner_count = len(positions)
    if corner_count == 0:
        return np.zeros(0, np.intc)
    width = int(counts.max(initial=0))
    extra = 0 if groups is None else 1
    key = np.zeros((corner_count, 3 + 2 * width + extra), np.int64)
    key[:, :3] = (positions.astype(np.float64) + 0.0).view(np.int64)
    if groups is not None:
        key[:, -1] = groups
    if width and not _fill_sorted_links(key, counts, bones, weights, width):  # links as a set: sort each by bone
        starts = np.cumsum(counts) - counts
        corner = np.repeat(np.arange(corner_count), counts)
        rank = np.arange(corner.size) - starts[corner]
        missing = np.iinfo(np.int64).max
        padded_bones = np.full((corner_count, width), missing, np.int64)
        padded_weights = np.zeros((corner_count, width), np.float64)
        padded_bones[corner, rank] = bones
        padded_weights[corner, rank] = weights + 0.0
        by_bone = np.argsort(padded_bones, axis=1, kind="stable")
        padded_bones = np.take_along_axis(padded_bones, by_bone, axis=1)
        padded_weights = np.take_along_axis(padded_weights, by_bone, axis=1)
        padded_bones[padded_bones == missing] = -1
        key[:, 3 : 3 + width] = padded_bones
        key[:, 3 + width : 3 + 2 * width] = padded_weights.view(np.int64)
    first = first_equal_rows(key)
    is_first = first == np.arange(corner_count)
    number = np.cumsum(is_first) - 1
    verts: Array = number[first].astype(np.intc)
    return verts


def _fill_sorted_links(key: Array, counts: Array, bones: Array, weights: Array, width: int) -> bool:
    """Each corner's links into key columns 3.. (bones, -1 when missing, then weight bits), rank by rank; False
    (key unfinished) when some corner's bones are not in increasing order."""
    first = np.cumsum(counts) - counts
    last_link = max(bones.size - 1, 0)
    previous = None
    for rank in range(width):
        has = counts > rank
        at = np.minimum(first + rank, last_link)
        rank_bones = np.where(has, bones[at], -1)
        if previous is not None and not np.all((rank_bones >= previous) | ~has):
            return False
        key[:, 3 + rank] = rank_bones
        key[:, 3 + width + rank] = np.where(has, weights[at] + 0.0, 0.0).view(np.int64)
        previous = rank_bones
    return True


def _skinned(
    counts: Array, bones: Array, weights: Array, parents: Array, weight_mode: str
) -> tuple[Array, Array, Array]:
    """CSR links as studiomdl skins with them (row by row: the same for rows of one file or of many)."""
    counts, bones, weights = effective_links(counts, bones, weights, parents)
    if weight_mode == "STUDIOMDL":
        return balance_links(counts, bones, weights)
    # a vertex group holds one weight per bone: duplicate links add up, as studiomdl reads them
    return merge_duplicate_links(counts, bones, weights)


def corner_links(
    triangles: Triangles, node_rows: dict[int, int], weight_mode: str, warnings: list[str], label: str,
    corners: Array | None = None,
) -> tuple[Array, Array, Array]:  # fmt: skip
    """Per-corner CSR links (counts, node rows, weights) as studiomdl skins: a corner without links is rigid on
    its parent column; GoldSrc files only have that column. Links to unknown bones are dropped. `corners`: only
    those corners' links, in that order (the first corner of each vertex line: see Triangles.corner_lines)."""
    link_counts, link_bones, link_weights = triangles.link_counts, triangles.link_bones, triangles.link_weights
    parents = triangles.parent_bones
    if corners is not None:
        chosen = select_links(link_counts.reshape(-1), corners)
        link_bones, link_weights = link_bones[chosen], link_weights[chosen]
        link_counts, parents = link_counts.reshape(-1)[corners], parents.reshape(-1)[corners]
    counts, bones, weights = _skinned(link_counts, link_bones, link_weights, parents, weight_mode)
    ids = np.array(sorted(node_rows), np.int64)
    row_of_id = np.array([node_rows[i] for i in ids.tolist()], np.int64)
    at = np.minimum(np.searchsorted(ids, bones), max(len(ids) - 1, 0))
    known = (ids[at] == bones) if len(ids) else np.zeros(len(bones), bool)
    if not known.all():
        corner = np.repeat(np.arange(len(counts)), counts)
        lines = triangles.corner_lines
        dropped = ~known if corners is None or lines is None else np.bincount(lines)[corner[~known]]  # (per corner)
        warnings.append(_dropped_warning(label, int(dropped.sum())))
        counts = np.bincount(corner[known], minlength=len(counts)).astype(np.int64)
    return counts, row_of_id[at[known]], weights[known]


def _dropped_warning(label: str, count: int) -> str:
    return f"{label}: {count} weight link(s) to unknown bones dropped"


def mesh_arrays(source: MeshSource, options: MeshOptions) -> MeshArrays:
    """The arrays of one file's mesh (it has triangles)."""
    triangles = source.triangles
    warnings: list[str] = []
    # Rows: the corners, or where the reader knows them each distinct vertex line once (its corners hold the same
    # values), for the links, positions and vertices
    lines = triangles.corner_lines
    line_corner = first_occurrences(lines) if lines is not None else None
    counts, bones, weights = corner_links(triangles, source.node_rows, options.weight_mode, warnings, source.label,
                                          line_corner)  # fmt: skip
    line_positions = triangles.line_rows("positions")  # (held per line by the reader: the rows of line_corner)
    if line_positions is not None:
        positions = options.points(line_positions)
    else:
        corner_positions = triangles.positions.reshape(-1, 3)
        # (rows gathered by np.take: 2 to 3 times quicker than indexing for rows of a few numbers, numpy 1.26)
        positions = options.points(corner_positions if line_corner is None else np.take(corner_positions, line_corner,
                                                                                        0))  # fmt: skip
    row_verts = shared_vertices(positions, counts, bones, weights)
    corner_verts = row_verts if lines is None else row_verts[lines]
    # Every triangle arrives: one that uses a vertex twice or doubles another gets copies (studiomdl drops the
    # degenerate ones when it compiles; an export writes them back as the file had them)
    first_row = first_occurrences(row_verts)  # each vertex's first row
    corner_verts, copied = faces_kept_whole(corner_verts, np.full(len(triangles), 3), len(first_row))
    if copied.size:
        first_row = np.concatenate([first_row, first_row[copied]])
    vertex_count = len(first_row)
    normals = prepared = None
    if options.use_custom_normals:
        held_normals = triangles.line_rows("normals")  # (held per line by the reader: the rows of line_corner)
        if held_normals is None and (line_corner is None or lines is None or 3 * len(triangles) < NORMALS_BY_LINE_FROM):
            normals = options.directions(triangles.normals.reshape(-1, 3)).astype(np.float32)
            unit = unit_vectors(normals)
        else:  # (turned and made unit once a distinct vertex line: its corners hold the same normal)
            assert lines is not None and line_corner is not None
            file_lines = held_normals
            if file_lines is None:
                file_lines = np.take(triangles.normals.reshape(-1, 3), line_corner, 0)
            line_normals = options.directions(file_lines).astype(np.float32)
            normals, unit = np.take(line_normals, lines, 0), np.take(unit_vectors(line_normals), lines, 0)
        prepared = prepared_unit_normals(corner_verts, unit, vertex_count)
    link_rows = select_links(counts, first_row)
    used = np.flatnonzero(np.bincount(bones, minlength=source.node_count))
    group_row = np.full(source.node_count, -1, np.int64)
    group_row[used] = np.arange(len(used))
    return MeshArrays(
        np.take(positions, first_row, 0), corner_verts, normals, prepared,
        np.repeat(np.arange(vertex_count), counts[first_row]), group_row[bones[link_rows]], weights[link_rows],
        used.tolist(), warnings,
    )  # fmt: skip


# ------------------------------------------------------------------------------------------------ many files


def mesh_arrays_together(sources: Sequence[MeshSource], options: MeshOptions) -> list[MeshArrays]:
    """mesh_arrays of each source (each has triangles), the array work done once over all of them, in batches."""
    results: list[MeshArrays] = []
    batch: list[MeshSource] = []
    corners = 0
    for source in sources:
        size = 3 * len(source.triangles)
        if size > TOGETHER_UP_TO:
            results += _flush(batch, options)
            batch, corners = [], 0
            results.append(mesh_arrays(source, options))
            continue
        if corners + size > BATCH_CORNERS:
            results += _flush(batch, options)
            batch, corners = [], 0
        batch.append(source)
        corners += size
    return results + _flush(batch, options)


def _flush(batch: list[MeshSource], options: MeshOptions) -> list[MeshArrays]:
    if len(batch) < 2:
        return [mesh_arrays(source, options) for source in batch]
    return _together(batch, options)


def _ends(sizes: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Where each of consecutive parts of these sizes starts, then the end: (F + 1,)."""
    bounds = np.zeros(sizes.size + 1, np.int64)
    np.cumsum(sizes, out=bounds[1:])
    return bounds


def _together(batch: list[MeshSource], options: MeshOptions) -> list[MeshArrays]:
    files = len(batch)
    triangle_sets = [source.triangles for source in batch]
    corner_bounds = _ends(np.array([3 * len(t) for t in triangle_sets], np.int64))
    corner_file = np.repeat(np.arange(files), np.diff(corner_bounds))
    # Each file's lines (every corner its own line where the reader gave none), numbered after the earlier files'
    own_lines = np.concatenate([
        t.corner_lines.astype(np.int64, copy=False) if t.corner_lines is not None else np.arange(3 * len(t))
        for t in triangle_sets
    ])  # fmt: skip
    line_bounds = _ends(np.maximum.reduceat(own_lines, corner_bounds[:-1]) + 1)
    lines = own_lines + line_bounds[corner_file]
    line_file = np.repeat(np.arange(files), np.diff(line_bounds))
    line_corner = first_occurrences(lines)  # (a line's first corner, all files' corners numbered together)
    # Links of each line's first corner, skinned row by row, then bone ids to node rows file by file
    link_counts = np.concatenate([t.link_counts.reshape(-1) for t in triangle_sets])
    chosen = select_links(link_counts, line_corner)
    counts, bones, weights = _skinned(
        link_counts[line_corner], np.concatenate([t.link_bones for t in triangle_sets])[chosen],
        np.concatenate([t.link_weights for t in triangle_sets])[chosen],
        np.concatenate([t.parent_bones.reshape(-1) for t in triangle_sets])[line_corner], options.weight_mode,
    )  # fmt: skip
    link_line = np.repeat(np.arange(len(counts)), counts)
    link_file = line_file[link_line]
    rows = _node_rows_of(batch, bones, link_file)
    if rows is None:
        return [mesh_arrays(source, options) for source in batch]
    known = rows >= 0
    warnings: list[list[str]] = [[] for _ in batch]
    if not known.all():
        times_used = np.bincount(lines, minlength=len(counts))  # (a dropped link counts once per corner)
        dropped = np.bincount(link_file[~known], weights=times_used[link_line[~known]], minlength=files)
        for row in np.flatnonzero(dropped).tolist():
            warnings[row].append(_dropped_warning(batch[row].label, int(dropped[row])))
        counts = np.bincount(link_line[known], minlength=len(counts)).astype(np.int64)
        link_file = link_file[known]
    bones, weights = rows[known], weights[known]
    positions = options.points(_line_rows(triangle_sets, "positions", line_corner, line_bounds, corner_bounds))
    row_verts = shared_vertices(positions, counts, bones, weights, line_file).astype(np.int64)
    corner_verts = row_verts[lines]
    first_row = first_occurrences(row_verts)
    vertex_bounds = np.append(row_verts[line_bounds[:-1]], len(first_row))
    # Files with a face to keep whole (copied vertices) are made alone; a test over all files at once finds them
    whole, _ = faces_kept_whole(corner_verts, np.full(corner_verts.size // 3, 3), len(first_row))
    alone = set(np.unique(corner_file[whole != corner_verts]).tolist())
    normals = unit = None
    per_vertex_same = np.zeros(files, bool)
    per_vertex = np.zeros((0, 3), np.float32)
    if options.use_custom_normals:
        line_normals = options.directions(
            _line_rows(triangle_sets, "normals", line_corner, line_bounds, corner_bounds)).astype(np.float32)
        line_unit = unit_vectors(line_normals)
        normals, unit = np.take(line_normals, lines, 0), np.take(line_unit, lines, 0)
        per_vertex = spread_to_vertices(corner_verts, unit, len(first_row))  # (as prepared_unit_normals, per file)
        # Whether every corner has its vertex's normal, told by line: a line's corners share its vertex and normal
        # (and whether the corners of a vertex all hold one normal does not hang on which one it was given)
        spread = np.take(per_vertex, row_verts, 0)
        same = (spread[:, 0] == line_unit[:, 0]) & (spread[:, 1] == line_unit[:, 1]) & (spread[:, 2] == line_unit[:, 2])
        per_vertex_same = np.logical_and.reduceat(same, line_bounds[:-1])
    link_rows = select_links(counts, first_row)
    vertex_file = np.repeat(np.arange(files), np.diff(vertex_bounds))
    width = max(source.node_count for source in batch)
    present = np.bincount(link_file * width + bones, minlength=files * width).reshape(files, width) > 0
    group_table = np.cumsum(present, axis=1) - 1
    link_vertex = np.repeat(np.arange(len(first_row)), counts[first_row])
    link_groups = group_table[vertex_file[link_vertex], bones[link_rows]]
    link_vertices = link_vertex - vertex_bounds[vertex_file[link_vertex]]
    link_weights = weights[link_rows]
    link_bounds = np.searchsorted(link_vertex, vertex_bounds)
    vertex_positions = np.take(positions, first_row, 0)
    results = []
    for row, source in enumerate(batch):
        if row in alone:
            results.append(mesh_arrays(source, options))
            continue
        corner, vertex, link = (slice(int(b[row]), int(b[row + 1])) for b in (corner_bounds, vertex_bounds,
                                                                               link_bounds))  # fmt: skip
        verts = corner_verts[corner] - vertex_bounds[row]
        prepared_here = None
        if unit is not None and per_vertex_same[row]:  # (as prepared_unit_normals gives it then)
            prepared_here = PreparedNormals(unit[corner], per_vertex[vertex])
        elif unit is not None:  # (its further findings made by it, for this file alone)
            prepared_here = prepared_unit_normals(verts, unit[corner], int(vertex_bounds[row + 1] - vertex_bounds[row]))
        results.append(MeshArrays(
            vertex_positions[vertex], verts, None if normals is None else normals[corner], prepared_here,
            link_vertices[link], link_groups[link], link_weights[link], np.flatnonzero(present[row]).tolist(),
            warnings[row],
        ))  # fmt: skip
    return results


def _line_rows(
    triangle_sets: list[Triangles], name: str, line_corner: Array, line_bounds: Array, corner_bounds: Array
) -> Array:  # fmt: skip
    """The (positions or normals) rows of every file's lines, numbered together: those the reader holds per line
    (Triangles.line_rows), else the rows of each line's first corner (`line_corner`, all files' corners numbered
    together). The same rows either way."""
    parts = []
    for row, triangles in enumerate(triangle_sets):
        held = triangles.line_rows(name)
        if held is None:
            first_corners = line_corner[line_bounds[row] : line_bounds[row + 1]] - corner_bounds[row]
            held = np.take(getattr(triangles, name).reshape(-1, 3), first_corners, 0)
        parts.append(held)
    return np.concatenate(parts)


def _node_rows_of(batch: list[MeshSource], bones: Array, link_file: Array) -> Array | None:
    """Each link's node row in its file (-1: an unknown bone id); None when the ids span too much for one table."""
    ids = [np.array(sorted(source.node_rows), np.int64) for source in batch]
    known_ids = [table for table in ids if table.size]
    if not known_ids:
        return np.full(bones.size, -1, np.int64)
    low = min(int(table[0]) for table in known_ids)
    high = max(int(table[-1]) for table in known_ids)
    span = high - low + 1
    if span * len(batch) > _DENSE_BONE_TABLE:
        return None
    table = np.full((len(batch), span), -1, np.int64)
    for row, (source, file_ids) in enumerate(zip(batch, ids, strict=True)):
        table[row, file_ids - low] = [source.node_rows[i] for i in file_ids.tolist()]
    inside = (bones >= low) & (bones <= high)
    found: Array = np.where(inside, table[link_file, np.clip(bones - low, 0, span - 1)], -1)
    return found


__all__ = [
    "BATCH_CORNERS",
    "NORMALS_BY_LINE_FROM",
    "TOGETHER_UP_TO",
    "MeshArrays",
    "MeshSource",
    "corner_links",
    "mesh_arrays",
    "mesh_arrays_together",
    "shared_vertices",
]
