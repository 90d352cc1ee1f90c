"""Compiler front end (spec §7.1-§7.3, §7.7): parsed documents -> one FaceSet in output-material order.

Per face: resolve the material through the desc, transform to D3D, reverse the winding, make texture
coordinates (imported with V flipped, or planar texgen), apply the texture scale, compute the flat tangent
frame. Every step follows the x87 evaluation order of §13.1 so the output is byte-identical.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .arrays import Array, nan_in_rows, stable_order
from .desc_parser import DescDocument, MaterialDesc
from .errors import QmapError
from .f32math import Matrix, cross3, dot3, normalize3, object_matrices, transform_points, x87_nans
from .memory import release_free_memory
from .parallel import ordered_map
from .tmp_parser import MeshObject, TmpDocument

if TYPE_CHECKING:
    import numpy.typing as npt  # (for annotations only: loading it costs every run's start-up about a millisecond)

MAX_NAME_BYTES = 255

# Final corner k takes Blender corner n-1-k; a triangle's padding slot 3 repeats final corner 0.
_REVERSED_CORNERS = {3: np.array([2, 1, 0, 2]), 4: np.array([3, 2, 1, 0])}

# BEST_AXIS_LOOKUP of the original: (plane axis, U axis, V axis) in D3D coordinates, tested in this order.
TEXGEN_ROWS = np.array(
    [
        [[1, 0, 0], [0, 0, 1], [0, 1, 0]],
        [[-1, 0, 0], [0, 0, -1], [0, 1, 0]],
        [[0, 0, -1], [1, 0, 0], [0, 1, 0]],
        [[0, 0, 1], [-1, 0, 0], [0, 1, 0]],
        [[0, 1, 0], [1, 0, 0], [0, 0, 1]],
        [[0, -1, 0], [1, 0, 0], [0, 0, -1]],
    ],
    dtype=np.float64,
)


@dataclass
class FaceSet:
    """Compiled faces grouped by output material (ascending index, input order kept inside a material).

    Arrays are padded to 4 corners; a triangle's slot 3 repeats its corner 0. N/T/B are per face (flat).
    """

    materials: list[bytes]
    material: Array  # (F,) int64 index into `materials`
    sizes: Array  # (F,) int8, 3 or 4
    positions: Array  # (F, 4, 3) float32, D3D
    uvs: Array  # (F, 4, 2) float32
    normals: Array  # (F, 3) float32
    tangents: Array  # (F, 3) float32
    binormals: Array  # (F, 3) float32

    @property
    def face_count(self) -> int:
        return len(self.sizes)


@dataclass
class FrontEndOptions:
    """`drop_degenerate`: remove zero-area faces (NaN normal) instead of writing them as the original does."""

    drop_degenerate: bool = False


@dataclass
class FrontEndResult:
    faces: FaceSet
    warnings: list[str] = field(default_factory=list)
    skipped_faces: int = 0
    degenerate_faces: int = 0
    nan_tangent_faces: int = 0


@dataclass
class _NameTable:
    """Output names in order of first use, with where each was defined (for the 255-byte error)."""

    ids: dict[bytes, int] = field(default_factory=dict)
    names: list[bytes] = field(default_factory=list)
    origins: list[tuple[str, int]] = field(default_factory=list)
    # A mesh's slot tables by its material list (the .qmap.desc is one per run): meshes mostly share a few lists,
    # and every name of a list seen before is already interned, so a repeat changes nothing here.
    slot_tables: dict[tuple[bytes, ...], tuple[Array, Array, Array, Array]] = field(default_factory=dict)

    def intern(self, name: bytes, origin: tuple[str, int]) -> int:
        if name not in self.ids:
            self.ids[name] = len(self.names)
            self.names.append(name)
            self.origins.append(origin)
        return self.ids[name]


@dataclass
class _MeshFaces:
    positions: Array
    uvs: Array
    sizes: Array
    name_ids: Array
    texgen: Array
    scale: Array


def run_front_end(tmp: TmpDocument, desc: DescDocument | None, options: FrontEndOptions | None = None,
                  release_meshes: bool = False) -> FrontEndResult:
    """Turn a parsed `.qmap.tmp` (+ optional `.qmap.desc`) into the faces the octrees are built from.

    With `release_meshes`, `tmp.meshes` is emptied as the meshes are read (for a caller that owns the document:
    its arrays are freed as early as possible)."""
    options = options or FrontEndOptions()
    names = _NameTable()
    result_warnings: list[str] = []
    parts: list[_MeshFaces] = []
    skipped = 0
    matrices = object_matrices([(mesh.position, mesh.orientation, mesh.size) for mesh in tmp.meshes])
    window: list[_BatchPlan] = []
    for batch in _batches(zip(_meshes_of(tmp, release_meshes), matrices, strict=True)):
        window.append(_batch_plan(batch, desc, names, result_warnings))  # (names and warnings in mesh order)
        if len(window) == _BATCHES_SIDE_BY_SIDE:
            skipped += _made_batches(window, parts)
            window = []
    skipped += _made_batches(window, parts)
    del window
    result = _finish(parts, names, tmp, desc, options)
    result.warnings[:0] = result_warnings
    result.skipped_faces = skipped
    return result


_TRIM_AFTER_BYTES = 32 << 20
_FACES_PER_PIECE = 1 << 16  # faces textured and framed at a time, pieces side by side


def _meshes_of(tmp: TmpDocument, release: bool) -> Iterator[MeshObject]:
    """The document's meshes in order; with `release`, each leaves the document as it is handed out, and the
    memory of released meshes is handed back every _TRIM_AFTER_BYTES (the parser's threads allocated it, in malloc
    arenas this thread does not reuse)."""
    if not release:
        yield from tmp.meshes
        return
    pending = tmp.meshes[::-1]
    tmp.meshes.clear()
    released = 0
    while pending:
        mesh = pending.pop()
        released += _array_bytes(mesh)
        yield mesh
        del mesh
        if released > _TRIM_AFTER_BYTES:
            release_free_memory()
            released = 0


def _array_bytes(mesh: MeshObject) -> int:
    arrays = (mesh.vertices, mesh.face_sizes, mesh.face_materials, mesh.face_smooth, mesh.face_indices, mesh.face_uvs)
    return sum(array.nbytes for array in arrays if array is not None)


def _slot_options(mesh: MeshObject, desc: DescDocument | None, names: _NameTable) -> tuple[
        Array, Array, Array, Array]:
    """Per material slot (plus one trailing slot for out-of-range indices): skip, name id, texgen, scale."""
    count = len(mesh.materials) + 1
    skip = np.zeros(count, dtype=bool)
    name_ids = np.zeros(count, dtype=np.int64)
    texgen = np.zeros(count, dtype=bool)
    scale = np.ones(count, dtype=np.float32)
    for slot in range(count):
        source_name = mesh.materials[slot] if slot < len(mesh.materials) else b""
        entry: MaterialDesc | None = None
        if slot < len(mesh.materials) and desc is not None:
            entry = desc.entries.get(source_name)
        origin = ("tmp", mesh.material_pos[slot] if slot < len(mesh.materials) else mesh.pos)
        if entry is not None:
            skip[slot], texgen[slot], scale[slot] = entry.skip, entry.tex_gen, entry.tex_scale
            if entry.new_name:
                source_name = entry.new_name
                origin = ("desc", entry.name_pos if entry.name_pos is not None else 0)
        if not skip[slot]:
            name_ids[slot] = names.intern(source_name, origin)
    return skip, name_ids, texgen, scale


def _shared_slot_options(mesh: MeshObject, desc: DescDocument | None, names: _NameTable) -> tuple[
        Array, Array, Array, Array]:
    """_slot_options made once per distinct material list (the tables are only read)."""
    key = tuple(mesh.materials)
    tables = names.slot_tables.get(key)
    if tables is None:
        tables = names.slot_tables[key] = _slot_options(mesh, desc, names)
    return tables


_BATCHES_SIDE_BY_SIDE = 4  # batches whose arrays are made at once: bounded memory (their meshes are held)


def _batches(meshes: Iterable[tuple[MeshObject, Matrix]]) -> Iterator[list[tuple[MeshObject, Matrix]]]:
    """Consecutive meshes (with their matrices) in batches of at least _FACES_PER_PIECE faces but the last."""
    batch: list[tuple[MeshObject, Matrix]] = []
    faces = 0
    for mesh, matrix in meshes:
        batch.append((mesh, matrix))
        faces += len(mesh.face_sizes)
        if faces >= _FACES_PER_PIECE:
            yield batch
            batch, faces = [], 0
    if batch:
        yield batch


@dataclass
class _BatchPlan:
    """What one batch needs once its material slots are resolved (in mesh order), to make its arrays on any
    thread."""

    meshes: list[MeshObject]
    placements: Array  # (M, 4, 4) float64
    slots: Array  # per face: its slot in the batch's slot tables
    tables: tuple[Array, Array, Array, Array]  # skip, name id, texgen, scale per slot of the batch
    skipped: int = 0  # (counted when the arrays are made)


def _batch_plan(batch: list[tuple[MeshObject, Matrix]], desc: DescDocument | None, names: _NameTable,
                warnings: list[str]) -> _BatchPlan:
    """The batch's material slots resolved, names interned and warnings given in mesh order."""
    meshes = [mesh for mesh, _ in batch]
    placements = np.array([matrix for _, matrix in batch], np.float64)
    tables = [_shared_slot_options(mesh, desc, names) for mesh in meshes]
    face_counts = np.array([len(mesh.face_sizes) for mesh in meshes])
    slot_counts = np.array([len(mesh.materials) for mesh in meshes])
    materials_of_face = np.repeat(slot_counts, face_counts)
    local_slots = np.minimum(np.concatenate([mesh.face_materials for mesh in meshes]), materials_of_face)
    beyond = local_slots == materials_of_face
    if beyond.any():
        mesh_of_face = np.repeat(np.arange(len(meshes)), face_counts)
        counts = np.bincount(mesh_of_face[beyond], minlength=len(meshes))
        for mesh, out_of_range in zip(meshes, counts.tolist(), strict=True):
            _warn_out_of_range(mesh, out_of_range, warnings)
    slot_bases = np.cumsum(slot_counts + 1) - (slot_counts + 1)
    slots = local_slots + np.repeat(slot_bases, face_counts)
    skip, name_ids, texgen, scale = (np.concatenate([table[column] for table in tables]) for column in range(4))
    return _BatchPlan(meshes, placements, slots, (skip, name_ids, texgen, scale))


def _made_batches(plans: list[_BatchPlan], parts: list[_MeshFaces]) -> int:
    """The plans' arrays made side by side, appended to `parts` in order; returns the skipped faces."""
    skipped = 0
    for plan, made in zip(plans, ordered_map(_batch_arrays, plans), strict=True):
        parts.extend(made)
        skipped += plan.skipped
    return skipped


def _batch_arrays(plan: _BatchPlan) -> list[_MeshFaces]:
    """The faces of the batch's meshes in one go (a few large array operations instead of many small ones per
    mesh, the same arithmetic element by element, so the same bits): kept faces, world positions in D3D axes
    with every face's corners in reverse order (D3D's winding), flipped UVs, material options."""
    meshes = plan.meshes
    skip, name_ids, texgen, scale = plan.tables
    face_counts = np.array([len(mesh.face_sizes) for mesh in meshes])
    skipped = skip[plan.slots]
    plan.skipped = int(np.count_nonzero(skipped))
    # (the usual case, no face skipped: the batch's tables as they are, no masked copies)
    keep: Array | slice = ~skipped if plan.skipped else slice(None)
    slots = plan.slots[keep]
    sizes = np.concatenate([mesh.face_sizes for mesh in meshes])[keep]
    vertex_counts = np.array([len(mesh.vertices) for mesh in meshes])
    # (each vertex by its object's matrix; non-finite values anywhere in the batch: the x87's NaN signs)
    world = transform_points(np.concatenate([mesh.vertices for mesh in meshes]), plan.placements, vertex_counts)
    vertex_bases = np.repeat(np.cumsum(vertex_counts) - vertex_counts, face_counts)[keep]
    corners = np.concatenate([mesh.face_indices for mesh in meshes])[keep] + vertex_bases[:, None]
    order = _reversed_order(sizes == 3)
    positions = _rows_taken(np.ascontiguousarray(world[:, [0, 2, 1]]), _in_order(corners, order))
    has_uvs = np.array([mesh.face_uvs is not None for mesh in meshes])
    if has_uvs.any():
        words = _corner_words(np.concatenate([mesh.face_uvs if mesh.face_uvs is not None else np.zeros(
            (len(mesh.face_sizes), 4, 2), np.float32) for mesh in meshes])[keep])
        raw = np.ascontiguousarray(_in_order(words, order)).view(np.float32).reshape(len(words), 4, 2)
        del words  # (not held while the flipped UVs are made: the batch's peak stays that of the float pairs)
        uvs = np.stack([raw[..., 0], np.float32(1.0) - raw[..., 1]], axis=-1)
        face_texgen = texgen[slots]
        if not has_uvs.all():  # faces of meshes without UVs are generated (their zeros never count)
            face_texgen[~np.repeat(has_uvs, face_counts)[keep]] = True
    else:
        uvs = np.zeros((*positions.shape[:2], 2), dtype=np.float32)
        face_texgen = np.ones(len(slots), dtype=bool)
    return [_MeshFaces(positions, uvs, sizes, name_ids[slots], face_texgen, scale[slots])]


def _warn_out_of_range(mesh: MeshObject, out_of_range: int, warnings: list[str]) -> None:
    if out_of_range and not mesh.materials:  # (`materials 0`: a mesh without slots, as the exporter writes it)
        warnings.append(f"mesh '{mesh.name.decode('latin-1')}' has no materials: its {out_of_range} face(s) get the "
                        "material name \"\" (no .qmap.desc entry applies to them)")  # fmt: skip
    elif out_of_range:
        warnings.append(
            f"mesh '{mesh.name.decode('latin-1')}': {out_of_range} face(s) use a material index beyond its "
            f"{len(mesh.materials)} material(s); they get the material name \"\""
        )


def _reversed_order(triangles: Array) -> Array:
    """Each face's corners in reverse order: (4,) when all faces have one size, else (F, 4). A triangle's padding
    slot repeats its new corner 0."""
    if triangles.all():
        return _REVERSED_CORNERS[3]
    if not triangles.any():
        return _REVERSED_CORNERS[4]
    order: Array = np.where(triangles[:, None], _REVERSED_CORNERS[3], _REVERSED_CORNERS[4])
    return order


def _rows_taken(table: Array, indices: Array) -> Array:
    """table[indices] for a contiguous (N, W) float32 table: each row taken as one item of bytes, several times
    quicker than numpy's gather of rows (the same bytes)."""
    width = table.shape[1]
    rows: Array = np.take(table.view(np.dtype(f"V{4 * width}")).ravel(), indices).view(table.dtype)
    return rows.reshape(*indices.shape, width)


def _corner_words(uvs: Array) -> Array:
    """(F, 4, 2) float32 UVs as (F, 4) 8-byte words (a corner's pair in one), which numpy reorders several times
    quicker than the pairs; the same bytes."""
    words: Array = np.ascontiguousarray(uvs).view(np.uint64).reshape(uvs.shape[:2])
    return words


def _in_order(corners: Array, order: Array) -> Array:
    """(F, 4, ...) corners taken in `order` (see _reversed_order)."""
    if order.ndim == 1:
        return corners[:, order]
    taken: Array = np.take_along_axis(corners, order.reshape(*order.shape, *([1] * (corners.ndim - 2))), axis=1)
    return taken


def plane_normals(positions: Array) -> Array:
    """Twice-normalised `cross(F(p1-p0), F(p2-p0))` (plane construction, then plane normalisation); float32
    (F, 4, 3) positions in, float32 (F, 3) out."""
    with np.errstate(invalid="ignore", over="ignore"):
        edge1 = positions[:, 1] - positions[:, 0]
        edge2 = positions[:, 2] - positions[:, 0]
    return normalize3(normalize3(cross3(edge1, edge2)))


def texgen_uvs(positions: Array, normals: Array) -> Array:
    """Planar mapping on the best-facing axis row (strictly greater wins, so ties and NaN keep the first)."""
    best = np.zeros(len(normals))
    choice = np.zeros(len(normals), dtype=np.int64)
    for row in range(len(TEXGEN_ROWS)):
        with np.errstate(invalid="ignore"):
            score = dot3(normals, TEXGEN_ROWS[row, 0])
            take = score > best
        choice[take] = row
        best[take] = score[take]
    u_axis = TEXGEN_ROWS[choice, 1][:, None, :]
    v_axis = TEXGEN_ROWS[choice, 2][:, None, :]
    with np.errstate(invalid="ignore", over="ignore"):
        return np.stack([dot3(positions, u_axis).astype(np.float32), dot3(positions, v_axis).astype(np.float32)],
                        axis=-1)


def tangent_frames(positions: Array, uvs: Array, plane: Array) -> tuple[
        Array, Array, Array]:
    """N, T, B from corners 0-2 with the original's sign convention (T, B point against +U, +V); float32 in
    and out."""
    with np.errstate(invalid="ignore", over="ignore"):
        u, v = uvs[..., 0], uvs[..., 1]
        s1, s2 = -(u[:, 1] - u[:, 0]), -(u[:, 2] - u[:, 0])
        t1, t2 = -(v[:, 1] - v[:, 0]), -(v[:, 2] - v[:, 0])
        edge1 = positions[:, 1] - positions[:, 0]
        edge2 = positions[:, 2] - positions[:, 0]
        tangent = edge1 * t2[:, None] - edge2 * t1[:, None]
        binormal = edge2 * s1[:, None] - edge1 * s2[:, None]
        along_normal = dot3(plane, tangent).astype(np.float32)
        tangent = tangent - plane * along_normal[:, None]
    return normalize3(plane), normalize3(tangent), normalize3(binormal)


def _texture_and_frames(part: _MeshFaces, only: Array | slice,
                        arithmetic: Callable[[Array], Array] = np.asarray) -> tuple[Array, Array, Array, Array]:
    """Texture coordinates (texgen, then scale) and N, T, B of the part's faces in `only`, computed with the given
    arithmetic (`x87_nans` for the x87's NaN signs)."""
    positions, uvs = arithmetic(part.positions[only]), arithmetic(part.uvs[only].copy())
    texgen, scale = part.texgen[only], arithmetic(part.scale[only])
    plane = plane_normals(positions)
    if texgen.any():
        uvs[texgen] = texgen_uvs(positions[texgen], plane[texgen])
    with np.errstate(invalid="ignore", over="ignore"):
        uvs = uvs * scale[:, None, None]
    normals, tangents, binormals = tangent_frames(positions, uvs, plane)
    return np.asarray(uvs), np.asarray(normals), np.asarray(tangents), np.asarray(binormals)


def _exact_frames(part: _MeshFaces, piece: slice) -> tuple[Array, Array, Array, Array]:
    """_texture_and_frames of a piece, rows with NaNs again with the x87's NaN signs (slow, so only there)."""
    frames = _texture_and_frames(part, piece)
    with_nans = nan_in_rows(*frames)
    if with_nans.any():
        redone = _texture_and_frames(part, np.flatnonzero(with_nans) + piece.start, x87_nans)
        for array, again in zip(frames, redone, strict=True):
            array[with_nans] = again
    return frames


@dataclass
class _Piece:
    """Up to _FACES_PER_PIECE faces of one part (`part_faces`), the first of them `first_face` among all faces."""

    part: _MeshFaces
    part_faces: slice
    first_face: int

    def all_faces(self) -> slice:
        """The piece's faces among all faces."""
        return slice(self.first_face, self.first_face + self.part_faces.stop - self.part_faces.start)


def _pieces(parts: list[_MeshFaces]) -> list[_Piece]:
    pieces, first = [], 0
    for part in parts:
        count = len(part.sizes)
        for begin in range(0, count, _FACES_PER_PIECE):
            end = min(begin + _FACES_PER_PIECE, count)
            pieces.append(_Piece(part, slice(begin, end), first + begin))
        first += count
    return pieces


def _degenerate(piece: _Piece) -> Array:
    """Zero-area faces of the piece: NaN normals, computed as tangent_frames computes them (the x87's NaN signs,
    which place() may redo them with, change no value's NaN-ness: these are the faces place() counts)."""
    return nan_in_rows(normalize3(plane_normals(piece.part.positions[piece.part_faces])))


def _finish(parts: list[_MeshFaces], names: _NameTable, tmp: TmpDocument, desc: DescDocument | None,
            options: FrontEndOptions) -> FrontEndResult:
    """The material table, and the faces grouped by output material with their texture coordinates and tangent
    frames: each piece of faces is computed once and written straight to its place in the output (no copy of all
    faces in input order, nor one taken in output order). `parts` is emptied."""
    name_ids = _joined([part.name_ids for part in parts], np.int64)
    sizes = _joined([part.sizes for part in parts], np.int8)
    pieces = _pieces(parts)
    parts.clear()  # (the pieces hold the parts from here on: they go with the pieces)
    keep = (~_joined(ordered_map(_degenerate, pieces), bool) if options.drop_degenerate
            else np.ones(len(sizes), dtype=bool))  # fmt: skip
    table, material = _material_table(name_ids[keep], names, tmp, desc)
    by_material = stable_order(material)
    order = np.flatnonzero(keep)[by_material]
    destination = np.full(len(sizes), -1, np.int64)
    destination[order] = np.arange(len(order))
    kept = len(order)
    faces = FaceSet(table, material[by_material], sizes[order], np.empty((kept, 4, 3), np.float32),
                    np.empty((kept, 4, 2), np.float32), *(np.empty((kept, 3), np.float32) for _ in range(3)))
    del name_ids, sizes, keep, material, by_material, order
    counts = _place(pieces, faces, destination, options.drop_degenerate)
    del pieces, destination
    degenerate, nan_frames, bad_uv = (sum(column) for column in zip(*counts, strict=True)) if counts else (0, 0, 0)
    result = FrontEndResult(faces, degenerate_faces=degenerate, nan_tangent_faces=nan_frames)
    result.warnings = _quality_warnings(faces, degenerate, options.drop_degenerate, bad_uv)
    return result


def _place(pieces: list[_Piece], faces: FaceSet, destination: Array, drop: bool) -> list[tuple[int, int, int]]:
    """Each piece's faces written to their places in `faces` (`destination`: each face's row, -1 if dropped), pieces
    side by side; per piece its zero-area faces, its kept faces with NaN tangent frames, and those of them with an
    area (the faces dropped, if any, are the zero-area ones)."""
    tables = (faces.positions, faces.uvs, faces.normals, faces.tangents, faces.binormals)
    assert all(table.flags.c_contiguous for table in tables)  # (so that their row items are views, written through)
    outputs = [_row_items(table) for table in tables]

    def place(piece: _Piece) -> tuple[int, int, int]:
        uvs, normals, tangents, binormals = _exact_frames(piece.part, piece.part_faces)
        degenerate = nan_in_rows(normals)
        nan_frames = nan_in_rows(tangents, binormals)
        target = destination[piece.all_faces()]
        chosen: Array | slice = slice(None)
        if drop:
            chosen = target >= 0
            target = target[chosen]
        for output, values in zip(outputs, (piece.part.positions[piece.part_faces], uvs, normals, tangents,
                                            binormals), strict=True):  # fmt: skip
            output[target] = _row_items(values[chosen].astype(np.float32, copy=False))  # (bytes: of float32s)
        return (int(degenerate.sum()), int(nan_frames[chosen].sum()), int((nan_frames & ~degenerate).sum()))

    return ordered_map(place, pieces)


def _row_items(table: Array) -> Array:
    """Each row of a table as one item of bytes (a view of a contiguous table, as `FaceSet`'s are): numpy places
    rows so up to twice as quickly as rows of floats, the same bytes."""
    table = np.ascontiguousarray(table)
    row_values = int(np.prod(table.shape[1:]))
    items: Array = table.reshape(len(table), row_values).view(np.dtype(f"V{table.itemsize * row_values}"))
    return items.reshape(len(table))


def _joined(arrays: list[Array], dtype: npt.DTypeLike) -> Array:
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype)


def odd_quads(faces: FaceSet, tolerance: float = 1e-4) -> tuple[int, int]:
    """Quads the game draws otherwise than Blender shows them, counted in one pass over their corners:
    - non-planar: corner 3 off the plane of corners 0-2 by more than `tolerance` x their size;
    - folded: the two triangles of the diagonal the game uses (Blender's corners 1-3 as the `.qmap.tmp` writes
      them, 0-2 once reversed here) face opposite ways. Concave quads split outside themselves so, and draw and
      collide as two overlapping triangles covering more than the quad."""

    def count(begin: int) -> tuple[int, int]:
        piece = slice(begin, begin + _FACES_PER_PIECE)
        quads = np.flatnonzero(faces.sizes[piece] == 4) + begin
        # (a quad's 4 corners gathered as one 48-byte item, then widened at once into a contiguous table per corner:
        # the same values as 4 gathers)
        taken = _rows_taken(faces.positions.reshape(-1, 12), quads).reshape(-1, 4, 3)
        corners = list(np.ascontiguousarray(taken.transpose(1, 0, 2), np.float64))
        with np.errstate(invalid="ignore", over="ignore"):
            offset = np.abs(dot3(corners[3] - corners[0], faces.normals[quads].astype(np.float64)))
            diagonal = corners[2] - corners[0]  # (made once for the three uses below: the same values)
            size = np.linalg.norm(diagonal, axis=1)
            first = np.cross(corners[1] - corners[0], diagonal)
            second = np.cross(diagonal, corners[3] - corners[0])
            folded = np.einsum("ij,ij->i", first, second) < 0
            return int(np.count_nonzero(offset > tolerance * size)), int(np.count_nonzero(folded))

    counts = ordered_map(count, range(0, len(faces.sizes), _FACES_PER_PIECE))
    return sum(bent for bent, _ in counts), sum(folded for _, folded in counts)


def _quality_warnings(faces: FaceSet, degenerate: int, dropped: bool, bad_uv: int) -> list[str]:
    warnings = []
    if degenerate:
        fate = "dropped" if dropped else "written with NaN normals and tangents"
        warnings.append(f"{degenerate} zero-area face(s) {fate}")
    if bad_uv:
        warnings.append(f"{bad_uv} face(s) with degenerate texture coordinates get NaN tangents/binormals")
    bent, folded = odd_quads(faces)
    if folded:
        warnings.append(f"{folded} concave quad(s): the game splits them on Blender's 1-3 diagonal, which runs outside "
                        "them, so they draw and collide as two overlapping triangles; split them into triangles")
    if bent:
        warnings.append(f"{bent} non-planar quad(s): normal and texgen come from corners 0-2 only, and the game "
                        "splits them on Blender's 1-3 diagonal")
    if b"" in faces.materials:
        warnings.append('material "" is used; the engine needs a material with the empty name')
    return warnings


def _material_table(name_ids: Array, names: _NameTable, tmp: TmpDocument,
                    desc: DescDocument | None) -> tuple[list[bytes], Array]:
    """Distinct used names sorted byte-wise (std::map order); returns the table and each face's index."""
    used = np.unique(name_ids)
    table = sorted(names.names[i] for i in used)
    for name in table:
        if len(name) > MAX_NAME_BYTES:
            raise _name_error(names, names.ids[name], tmp, desc)
    remap = np.zeros(max(len(names.names), 1), dtype=np.int64)
    for index, name in enumerate(table):
        remap[names.ids[name]] = index
    return table, remap[name_ids]


def _name_error(names: _NameTable, name_id: int, tmp: TmpDocument, desc: DescDocument | None) -> QmapError:
    name = names.names[name_id]
    message = f"material name of {len(name)} bytes is longer than {MAX_NAME_BYTES} bytes"
    where, pos = names.origins[name_id]
    if where == "desc" and desc is not None and desc.source is not None:
        return desc.source.error(pos, message)
    return tmp.error_at(pos, message)
