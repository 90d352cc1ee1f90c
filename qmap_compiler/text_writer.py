"""Writers for `.qmap.tmp` and `.qmap.desc` documents in the original exporter's layout (spec §5.4, §6).

Everything written here is accepted by the parsers: strings are escaped, numbers use `%f` (or `%.9g`,
which round-trips float32 exactly), and NaN or infinity is refused because the tokenizer cannot read it.
"""

from __future__ import annotations

import math

import numpy as np

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


def _mesh_lines(mesh: MeshObject, float_format: str) -> list[bytes]:
    head = [f"\t\t{_vec(v, float_format)}" for v in (mesh.position, mesh.orientation, mesh.size)]
    head += [f"\t\t{_number(mesh.auto_smooth_angle, float_format)}", f"\t\t{1 if mesh.has_uv else 0}"]
    lines = [b"\tmesh " + quote(mesh.name) + b" {", *(h.encode() for h in head)]
    lines.append(f"\t\tmaterials {len(mesh.materials)} {{".encode())
    lines += [b"\t\t\t" + quote(name) for name in mesh.materials]
    lines += [b"\t\t}", f"\t\tvertices {len(mesh.vertices)} {{".encode()]
    if not np.isfinite(mesh.vertices).all() or (mesh.face_uvs is not None and not np.isfinite(mesh.face_uvs).all()):
        raise QmapError(f"mesh '{mesh.name.decode('latin-1')}' has non-finite coordinates")
    lines += [f"\t\t\t{_vec(tuple(v), float_format)}".encode() for v in mesh.vertices.tolist()]
    lines += [b"\t\t}", f"\t\tfaces {len(mesh.face_sizes)} {{".encode()]
    lines += _face_lines(mesh, float_format)
    lines += [b"\t\t}", b"\t}"]
    return lines


def _face_lines(mesh: MeshObject, float_format: str) -> list[bytes]:
    lines = []
    uv_format = f"{float_format},{float_format}"
    uvs = mesh.face_uvs.tolist() if mesh.face_uvs is not None else None
    for face, (size, material, smooth, indices) in enumerate(zip(
            mesh.face_sizes.tolist(), mesh.face_materials.tolist(), mesh.face_smooth.tolist(),
            mesh.face_indices.tolist(), strict=True)):
        parts = [f"\t\t\t{size} {material} {1 if smooth else 0}"]
        for corner in range(size):
            uv = "" if uvs is None else " " + uv_format % tuple(uvs[face][corner])
            parts.append(f"{indices[corner]}{uv}")
        lines.append(" ".join(parts).encode())
    return lines


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
        lines += _mesh_lines(mesh, float_format)
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
