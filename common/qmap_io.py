"""What the QMAP importers, exporters and panel share: name encoding, file naming, compiler errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .. import qmap_compiler as qc
from ..formats.errors import FormatError

ENCODING = "cp1250"  # "ANSI" on the Polish Windows the original tools ran on
MAX_NAME_BYTES = 255
OCTREE_DISPLAY = "iogf_qmap_octree"  # marks the wireframe objects Show Octrees makes: no QMAP export takes them
Result = TypeVar("Result")


def encode_name(name: str, what: str) -> bytes:
    try:
        encoded = name.encode(ENCODING)
    except UnicodeEncodeError as error:
        bad = name[error.start : error.end]
        which = "" if bad == name else f" ({bad!r})"
        raise FormatError(f"{what} {name!r} has characters that Windows-1250 (the QMAP encoding) cannot hold{which}"
                          ) from None  # fmt: skip
    if len(encoded) > MAX_NAME_BYTES:
        raise FormatError(f"{what} {name!r} is {len(encoded)} bytes in Windows-1250; QMAP allows {MAX_NAME_BYTES}")
    return encoded


def decode_name(name: bytes) -> str:
    return name.decode(ENCODING, errors="replace")


def desc_path_for(tmp_path: str) -> str:
    """X.qmap.tmp -> X.qmap.desc, beside it."""
    stem = tmp_path[: -len(".tmp")] if tmp_path.lower().endswith(".tmp") else tmp_path
    return stem + ".desc"


def compiler_call(function: Callable[..., Result], *arguments: object) -> Result:
    """The compiler's QmapError (file, line, column) becomes the add-on's one error type."""
    try:
        return function(*arguments)
    except qc.QmapError as error:
        raise FormatError(str(error)) from None
