"""Writers for `.qmap.tmp` and `.qmap.desc` documents in the original exporter's layout (spec §5.4, §6).

Everything written here is accepted by the parsers: strings are escaped, numbers use `%f` (or `%.9g`,
which round-trips float32 exactly), and NaN or infinity is refused because the tokenizer cannot read it.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from .desc_parser import DescDocument
from .errors import QmapError
from .tmp_parser import LampObject, MeshObject, TmpDocument

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


def _mesh_lines(mesh: MeshObject, float_format: str, newline: str) -> list[bytes]:
    head = [f"\t\t{_vec(v, float_format)}" for v in (mesh.position, mesh.orientation, mesh.size)]
    head += [f"\t\t{_number(mesh.auto_smooth_angle, float_format)}", f"\t\t{1 if mesh.has_uv else 0}"]
    lines = [b"\tmesh " + quote(mesh.name) + b" {", *(h.encode() for h in head)]
    lines.append(f"\t\tmaterials {len(mesh.materials)} {{".encode())
    lines += [b"\t\t\t" + quote(name) for name in mesh.materials]
    lines += [b"\t\t}", f"\t\tvertices {len(mesh.vertices)} {{".encode()]
    if not np.isfinite(mesh.vertices).all() or (mesh.face_uvs is not None and not np.isfinite(mesh.face_uvs).all()):
        raise QmapError(f"mesh '{mesh.name.decode('latin-1')}' has non-finite coordinates")
    vertex_format = f"\t\t\t{float_format},{float_format},{float_format}"
    lines += _table_lines(vertex_format, np.asarray(mesh.vertices, np.float64).reshape(-1, 3), newline)
    lines += [b"\t\t}", f"\t\tfaces {len(mesh.face_sizes)} {{".encode()]
    lines += _face_lines(mesh, float_format, newline)
    lines += [b"\t\t}", b"\t}"]
    return lines


def _table_lines(line_format: str, rows: npt.NDArray[np.float64], newline: str) -> list[bytes]:
    """One chunk of text with a `line_format` line per row, made by a single %-formatting (C speed, not a Python
    call per number); `%d` fields take whole floats."""
    if not len(rows):
        return []
    text = newline.join([line_format] * len(rows)) % tuple(rows.ravel().tolist())
    return [text.encode()]


def _face_lines(mesh: MeshObject, float_format: str, newline: str) -> list[bytes]:
    """Face lines `size material smooth` then per corner `index` (and `u,v`), in face order. Faces of one size
    are formatted together, then put back in order."""
    sizes = np.asarray(mesh.face_sizes, np.int64)
    corner_format = f"%d {float_format},{float_format}" if mesh.face_uvs is not None else "%d"
    texts = np.empty(len(sizes), dtype=object)
    distinct = np.unique(sizes).tolist()
    for size in distinct:
        rows = np.flatnonzero(sizes == size)
        corners = [np.asarray(mesh.face_indices, np.float64)[rows, :size, None]]
        if mesh.face_uvs is not None:
            corners.append(np.asarray(mesh.face_uvs, np.float64)[rows, :size])
        table = np.concatenate(
            [np.asarray(mesh.face_materials, np.float64)[rows, None],
             np.asarray(mesh.face_smooth, bool)[rows, None].astype(np.float64),
             np.concatenate(corners, axis=2).reshape(len(rows), -1)], axis=1,
        )  # fmt: skip
        line_format = f"\t\t\t{size} %d %d " + " ".join([corner_format] * size)
        chunk = _table_lines(line_format, table, newline)
        if len(distinct) == 1:
            return chunk  # one size: already in face order
        texts[rows] = chunk[0].decode().split(newline)
    return [newline.join(texts.tolist()).encode()] if len(sizes) else []


def _lamp_lines(lamp: LampObject, float_format: str) -> list[bytes]:
    lines = [b"\tlamp " + quote(lamp.name) + b" {"]
    body = [_vec(v, float_format) for v in (lamp.position, lamp.orientation, lamp.size)]
    body += [lamp.lamp_type, _number(lamp.distance, float_format), _vec(lamp.color, float_format, ", ")]
    if lamp.lamp_type == "Spot":
        body += [_number(lamp.softness, float_format), _number(lamp.angle, float_format)]
    lines += [f"\t\t{line}".encode() for line in body]
    lines.append(b"\t}")
    return lines


def format_tmp(document: TmpDocument, float_format: str = "%f", newline: bytes = b"\n") -> bytes:
    """The `.qmap.tmp` text of a document: meshes first, then lamps (object order only affects VB order)."""
    lines = [b"QMAP TMP 10", b"objects {"]
    for mesh in document.meshes:
        lines += _mesh_lines(mesh, float_format, newline.decode())
    for lamp in document.lamps:
        lines += _lamp_lines(lamp, float_format)
    lines.append(b"}")
    return newline.join(lines) + newline


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
