"""Writers for `.qmap.tmp` and `.qmap.desc` documents in the original exporter's layout (spec §5.4, §6).

Everything written here is accepted by the parsers: strings are escaped, numbers use `%f` (or `%.9g`,
which round-trips float32 exactly), and NaN or infinity is refused because the tokenizer cannot read it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from .desc_parser import DescDocument
from .errors import QmapError
from .parallel import one_at_a_time, ordered_map
from .tmp_parser import LampObject, MeshObject, TmpDocument

FloatArray = npt.NDArray[np.float32] | npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp] | npt.NDArray[np.int64]

_ESCAPES = {13: b"\\r", 10: b"\\n", 34: b'\\"', 39: b"\\'", 92: b"\\\\", 0: b"\\0", 11: b"\\v", 8: b"\\b",
            12: b"\\f", 7: b"\\a", 9: b"\\t"}  # fmt: skip


def quote(name: bytes) -> bytes:
    """A tokenizer string literal for raw bytes."""
    return b'"' + b"".join(_ESCAPES.get(b, bytes([b])) for b in name) + b'"'


def _number(value: float, float_format: str) -> str:
    if not math.isfinite(value):
        raise QmapError(f"cannot write the non-finite number {value} (the tokenizer has no syntax for it)")
    return float_format % value


def _vec(values: tuple[float, float, float], float_format: str, separator: str = ",") -> str:
    return separator.join(_number(float(v), float_format) for v in values)


def _mesh_pieces(mesh: MeshObject, float_format: str, newline: bytes) -> list[bytes]:
    """A mesh block as pieces of text, each of whole lines (newlines included)."""
    head = [f"\t\t{_vec(v, float_format)}" for v in (mesh.position, mesh.orientation, mesh.size)]
    head += [f"\t\t{_number(mesh.auto_smooth_angle, float_format)}", f"\t\t{1 if mesh.has_uv else 0}"]
    lines = [b"\tmesh " + quote(mesh.name) + b" {", *(h.encode() for h in head)]
    lines.append(f"\t\tmaterials {len(mesh.materials)} {{".encode())
    lines += [b"\t\t\t" + quote(name) for name in mesh.materials]
    lines += [b"\t\t}", f"\t\tvertices {len(mesh.vertices)} {{".encode()]
    if not np.isfinite(mesh.vertices).all() or (mesh.face_uvs is not None and not np.isfinite(mesh.face_uvs).all()):
        raise QmapError(f"mesh '{mesh.name.decode('latin-1')}' has non-finite coordinates")
    vertices = np.asarray(mesh.vertices).reshape(-1, 3)
    vertex_pieces = _vertex_pieces(vertices, float_format, newline)
    tables = vertex_pieces + _face_pieces(mesh, float_format, newline)
    with one_at_a_time(len(vertices) + len(mesh.face_sizes) < _PIECES_FOR_THREADS * _ROWS_PER_PIECE):
        made = ordered_map(lambda make: make(), tables)
    middle = _lines([b"\t\t}", f"\t\tfaces {len(mesh.face_sizes)} {{".encode()], newline)
    tail = _lines([b"\t\t}", b"\t}"], newline)
    return [_lines(lines, newline), *made[: len(vertex_pieces)], middle, *made[len(vertex_pieces) :], tail]


def _lines(lines: list[bytes], newline: bytes) -> bytes:
    return b"".join(line + newline for line in lines)


# Tables of numbers are made as rows of fixed-width byte-string fields, one row per line, each field's text padded
# with 0 bytes, which are dropped at the end: no Python call per number. A field is gathered from a table of the
# distinct texts of its column (a float is formatted once per distinct value, by one %-formatting of all of them,
# so the text is exactly that of `float_format`; a vertex index's text comes from one table per mesh).
_ROWS_PER_PIECE = 16384
_PIECES_FOR_THREADS = 4  # a mesh of fewer rows than this many pieces is made in turn: threads would cost more
Maker = Callable[[], bytes]


def _float_texts(values: FloatArray, float_format: str, prefix: str) -> tuple[npt.NDArray[np.bytes_], IntArray]:
    """(distinct texts of `prefix` + the number, each value's row in them) of (N,) floats; the texts end with
    an empty one (for blanks). -0.0 and 0.0 are kept apart (their bits differ)."""
    if values.dtype not in (np.float32, np.float64):
        values = values.astype(np.float64)  # (any other numbers, formatted as the doubles they are)
    bits = np.ascontiguousarray(values).view(np.uint32 if values.dtype == np.float32 else np.uint64)
    distinct, inverse = _distinct(bits)
    numbers = distinct.view(values.dtype).astype(np.float64).tolist()
    texts = ("\n".join([prefix + float_format] * len(numbers)) % tuple(numbers)).encode().split(b"\n")
    return np.array([*texts[: len(numbers)], b""], dtype=bytes), inverse


def _distinct(keys: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], IntArray]:
    """np.unique(keys, return_inverse=True); 32-bit keys sorted by two 16-bit radix passes (several times quicker
    than a comparison sort)."""
    if keys.dtype != np.uint32 or len(keys) < 2:
        distinct, inverse = np.unique(keys, return_inverse=True)
        return distinct, inverse.ravel()
    order = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    order = order[np.argsort((keys[order] >> 16).astype(np.uint16), kind="stable")]
    ordered = keys[order]
    first = np.empty(len(keys), bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    inverse = np.empty(len(keys), np.intp)
    inverse[order] = np.cumsum(first) - 1
    return ordered[first], inverse


def _int_texts(values: npt.ArrayLike, prefix: bytes) -> npt.NDArray[np.bytes_]:
    """(N,) integers to byte strings of `prefix` + decimal text, with 0 bytes for leading zeros (and for the
    sign of positive numbers, when some are negative)."""
    numbers = np.asarray(values, np.int64).ravel()
    magnitude = np.abs(numbers)
    width = len(str(int(magnitude.max()))) if len(numbers) else 1
    signed = bool(len(numbers)) and int(numbers.min()) < 0
    last = len(prefix) + signed + width - 1
    chars = np.empty((len(numbers), last + 1), np.uint8)
    chars[:, : len(prefix)] = np.frombuffer(prefix, np.uint8)
    if signed:
        chars[:, len(prefix)] = np.where(numbers < 0, ord("-"), 0)
    rest = magnitude
    for place in range(width):  # (the last digit first)
        rest, digit = np.divmod(rest, 10)
        column = chars[:, last - place]
        np.add(digit, ord("0"), out=column, casting="unsafe")
        if place:
            column[magnitude < 10**place] = 0
    return chars.view(f"S{chars.shape[1]}").ravel()


def _joined(fields: list[npt.NDArray[np.bytes_]], newline: bytes) -> bytes:
    """The rows of equally long columns of byte strings, one line each, without their 0 bytes."""
    rows = len(fields[0])
    layout = np.dtype([(f"f{i}", field.dtype) for i, field in enumerate(fields)] + [("end", f"S{len(newline)}")])
    table = np.empty(rows, layout)
    for i, field in enumerate(fields):
        table[f"f{i}"] = field
    table["end"] = newline
    flat = table.view(np.uint8)
    return bytes(flat[flat != 0])


def _vertex_pieces(vertices: FloatArray, float_format: str, newline: bytes) -> list[Maker]:
    def piece(start: int) -> bytes:
        part = vertices[start : start + _ROWS_PER_PIECE]
        fields = []
        for axis, prefix in enumerate(("\t\t\t", ",", ",")):
            texts, inverse = _float_texts(part[:, axis], float_format, prefix)
            fields.append(texts[inverse])
        return _joined(fields, newline)

    return [functools.partial(piece, start) for start in range(0, len(vertices), _ROWS_PER_PIECE)]


def _index_table(indices: IntArray, present: npt.NDArray[np.bool_] | None) -> npt.NDArray[np.bytes_] | None:
    """The texts ` 0`, ` 1`, ... up to the largest index of the faces' corners, then an empty one (for blanks);
    None when the corners do not use each index a few times on average (every corner its own vertex: each
    index formatted where it is used costs no more), or use negative ones."""
    if not indices.size:
        return None
    used = indices if present is None else np.where(present, indices, 0)
    lowest, highest = int(used.min()), int(used.max())
    if lowest < 0 or 2 * (highest + 1) > indices.size:
        return None
    texts = _int_texts(np.arange(highest + 2), b" ")
    texts[-1] = b""
    return texts


def _face_pieces(mesh: MeshObject, float_format: str, newline: bytes) -> list[Maker]:
    """Face lines `size material smooth` then per corner ` index` (and ` u,v`), in face order; the corners a
    face does not have are blanked out."""
    sizes = np.asarray(mesh.face_sizes, np.int64)
    if not len(sizes):
        return []
    corner_count = max(int(sizes.max()), 0)
    indices = np.asarray(mesh.face_indices)[:, :corner_count]
    present = None if sizes.min() >= corner_count else sizes[:, None] > np.arange(corner_count)
    index_texts = _index_table(indices, present)
    uvs = None if mesh.face_uvs is None else np.asarray(mesh.face_uvs)[:, :corner_count]
    materials = np.asarray(mesh.face_materials)
    smooth = np.asarray(mesh.face_smooth, bool)

    def piece(start: int) -> bytes:
        part = slice(start, start + _ROWS_PER_PIECE)
        fields = [_int_texts(sizes[part], b"\t\t\t"), _int_texts(materials[part], b" "),
                  _int_texts(smooth[part], b" ")]  # fmt: skip
        blank = None if present is None else ~present[part]
        corners = indices[part]
        if index_texts is not None:
            if blank is not None:
                corners = np.where(blank, len(index_texts) - 1, corners)
            texts = index_texts[corners]
        else:
            texts = _int_texts(corners, b" ").reshape(corners.shape)
            if blank is not None:
                texts[blank] = b""
        columns = [texts]
        if uvs is not None:
            for axis, prefix in ((0, " "), (1, ",")):
                values, inverse = _float_texts(uvs[part, :, axis].ravel(), float_format, prefix)
                inverse = inverse.reshape(corners.shape)
                if blank is not None:
                    inverse[blank] = len(values) - 1
                columns.append(values[inverse])
        fields += [column[:, corner] for corner in range(corner_count) for column in columns]
        return _joined(fields, newline)

    return [functools.partial(piece, start) for start in range(0, len(sizes), _ROWS_PER_PIECE)]


def _lamp_lines(lamp: LampObject, float_format: str) -> list[bytes]:
    lines = [b"\tlamp " + quote(lamp.name) + b" {"]
    body = [_vec(v, float_format) for v in (lamp.position, lamp.orientation, lamp.size)]
    body += [lamp.lamp_type, _number(lamp.distance, float_format), _vec(lamp.color, float_format, ", ")]
    if lamp.lamp_type == "Spot":
        body += [_number(lamp.softness, float_format), _number(lamp.angle, float_format)]
    lines += [f"\t\t{line}".encode() for line in body]
    lines.append(b"\t}")
    return lines


def tmp_pieces(document: TmpDocument, float_format: str = "%f", newline: bytes = b"\n") -> list[bytes]:
    """format_tmp's text as consecutive pieces (written one after the other, the text is never joined whole)."""
    pieces = [_lines([b"QMAP TMP 10", b"objects {"], newline)]
    for mesh in document.meshes:
        pieces += _mesh_pieces(mesh, float_format, newline)
    for lamp in document.lamps:
        pieces.append(_lines(_lamp_lines(lamp, float_format), newline))
    pieces.append(b"}" + newline)
    return pieces


def format_tmp(document: TmpDocument, float_format: str = "%f", newline: bytes = b"\n") -> bytes:
    """The `.qmap.tmp` text of a document: meshes first, then lamps (object order only affects VB order)."""
    return b"".join(tmp_pieces(document, float_format, newline))


def format_desc(document: DescDocument, float_format: str = "%f", newline: bytes = b"\n") -> bytes:
    """The `.qmap.desc` text of a document (writes `skip;`, the keyword the original compiler knows)."""
    lines = [b"QMAP DESC 10", b"materials {"]
    for name, entry in document.entries.items():
        options = []
        if entry.skip:
            options.append(b"skip;")
        if entry.tex_gen:
            options.append(b"tex gen;")
        if entry.tex_scale != 1.0:
            options.append(f"tex scale {_number(entry.tex_scale, float_format)};".encode())
        if entry.new_name:
            options.append(b"name " + quote(entry.new_name) + b";")
        lines.append(b"\t" + quote(name) + b" { " + b" ".join(options) + b" }")
    lines.append(b"}")
    return newline.join(lines) + newline
