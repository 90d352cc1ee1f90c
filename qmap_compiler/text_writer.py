"""Writers for `.qmap.tmp` and `.qmap.desc` documents in the original exporter's layout (spec §5.4, §6).

Everything written here is accepted by the parsers: strings are escaped, numbers use `%f` (or `%.9g`,
which round-trips float32 exactly), and NaN or infinity is refused because the tokenizer cannot read it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from .desc_parser import DescDocument
from .errors import QmapError
from .parallel import one_at_a_time, ordered_map
from .tmp_parser import LampObject, MeshObject, TmpDocument

Bytes2D = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float32] | npt.NDArray[np.float64]

_ESCAPES = {13: b"\\r", 10: b"\\n", 34: b'\\"', 39: b"\\'", 92: b"\\\\", 0: b"\\0", 11: b"\\v", 8: b"\\b",
            12: b"\\f", 7: b"\\a", 9: b"\\t"}


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
    pieces = [_lines(lines, newline)]
    pieces += _vertex_lines(np.asarray(mesh.vertices).reshape(-1, 3), float_format, newline)
    pieces.append(_lines([b"\t\t}", f"\t\tfaces {len(mesh.face_sizes)} {{".encode()], newline))
    pieces += _face_lines(mesh, float_format, newline)
    pieces.append(_lines([b"\t\t}", b"\t}"], newline))
    return pieces


def _lines(lines: list[bytes], newline: bytes) -> bytes:
    return b"".join(line + newline for line in lines)


# Tables of numbers are made as uint8 matrices, one row per line and each field padded with 0 bytes, which are
# dropped at the end: no Python call per number. A float is formatted once per distinct value (meshes repeat
# coordinates a lot) by one %-formatting of all of them, so the text is exactly that of `float_format`.
_ROWS_PER_PIECE = 32768
_PIECES_FOR_THREADS = 8  # fewer pieces are made in turn: threads would cost more than they save


def _literal(text: bytes, rows: int) -> Bytes2D:
    return np.broadcast_to(np.frombuffer(text, np.uint8), (rows, len(text)))


def _float_fields(values: FloatArray, float_format: str) -> Bytes2D:
    """(N,) floats to (N, width) text padded with 0 bytes; -0.0 and 0.0 kept apart (their bits differ)."""
    if values.dtype not in (np.float32, np.float64):
        values = values.astype(np.float64)  # (any other numbers, formatted as the doubles they are)
    bits = np.ascontiguousarray(values).view(np.uint32 if values.dtype == np.float32 else np.uint64)
    distinct, inverse = np.unique(bits, return_inverse=True)
    if not len(distinct):
        return np.zeros((0, 1), np.uint8)
    numbers = distinct.view(values.dtype).astype(np.float64).tolist()
    texts = ("\n".join([float_format] * len(numbers)) % tuple(numbers)).encode().split(b"\n")
    table = np.array(texts, dtype=bytes)
    fields: Bytes2D = table.view(np.uint8).reshape(len(texts), table.dtype.itemsize)[inverse.ravel()]
    return fields


def _int_fields(values: npt.ArrayLike) -> Bytes2D:
    """(N,) integers to (N, width) decimal text padded with 0 bytes (leading zeros become padding)."""
    numbers = np.asarray(values, np.int64).ravel()
    magnitude = np.abs(numbers)
    width = len(str(int(magnitude.max()))) if len(numbers) else 1
    powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    digits = (magnitude[:, None] // powers) % 10
    chars = (digits + ord("0")).astype(np.uint8)
    chars[(magnitude[:, None] < powers) & (powers > 1)] = 0
    sign = np.where(numbers < 0, ord("-"), 0).astype(np.uint8)[:, None]
    return np.concatenate((sign, chars), axis=1)


def _compact(rows: Bytes2D) -> bytes:
    flat = rows.ravel()
    return bytes(flat[flat != 0])


def _vertex_lines(vertices: FloatArray, float_format: str, newline: bytes) -> list[bytes]:
    def piece(start: int) -> bytes:
        part = vertices[start : start + _ROWS_PER_PIECE]
        rows = len(part)
        comma = _literal(b",", rows)
        columns = [_float_fields(part[:, axis], float_format) for axis in range(3)]
        table = [_literal(b"\t\t\t", rows), columns[0], comma, columns[1], comma, columns[2], _literal(newline, rows)]
        return _compact(np.concatenate(table, axis=1))

    return _pieces_of(piece, len(vertices))


def _pieces_of(piece: Callable[[int], bytes], rows: int) -> list[bytes]:
    """piece(start) for each block of rows, made side by side on the cores when there are many."""
    starts = range(0, rows, _ROWS_PER_PIECE)
    with one_at_a_time(len(starts) < _PIECES_FOR_THREADS):
        return ordered_map(piece, starts)


def _face_lines(mesh: MeshObject, float_format: str, newline: bytes) -> list[bytes]:
    """Face lines `size material smooth` then per corner ` index` (and ` u,v`), in face order; the corners a
    face does not have are blanked out."""
    sizes = np.asarray(mesh.face_sizes, np.int64)
    corner_count = int(sizes.max()) if len(sizes) else 0

    def piece(start: int) -> bytes:
        part = slice(start, start + _ROWS_PER_PIECE)
        rows = len(sizes[part])
        space = _literal(b" ", rows)
        table = [_literal(b"\t\t\t", rows), _int_fields(sizes[part]), space,
                 _int_fields(np.asarray(mesh.face_materials)[part]), space,
                 _int_fields(np.asarray(mesh.face_smooth, bool)[part])]  # fmt: skip
        indices = np.asarray(mesh.face_indices)[part]
        uvs = None if mesh.face_uvs is None else np.asarray(mesh.face_uvs)[part]
        for corner in range(corner_count):
            fields = [space, _int_fields(indices[:, corner])]
            if uvs is not None:
                fields += [space, _float_fields(uvs[:, corner, 0], float_format), _literal(b",", rows),
                           _float_fields(uvs[:, corner, 1], float_format)]  # fmt: skip
            block = np.concatenate(fields, axis=1)
            block[sizes[part] <= corner] = 0
            table.append(block)
        table.append(_literal(newline, rows))
        return _compact(np.concatenate(table, axis=1))

    return _pieces_of(piece, len(sizes))


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
