"""IQE (Inter-Quake Export) codec: `read_iqe`/`write_iqe` between bytes and an IqeDocument of numpy arrays."""

from __future__ import annotations

import os

from ..atomic import write_bytes_atomically
from ..dedup import faces_repeating_a_vertex
from ..errors import read_file_buffer
from ..pieces import PieceMap, sequential
from .document import (
    COMPONENT_TYPES,
    IDENTITY_POSE,
    MAX_INFLUENCES,
    NUMBERED_JOINTS_NOTE,
    POSE_CHANNELS,
    VERTEX_ARRAY_KINDS,
    IqeAnimation,
    IqeDocument,
    IqeJoint,
    IqeMesh,
    IqeVertexArrayFormat,
    limit_blend_weights,
    parent_first_order,
    reverse_face_order,
)
from .reader import read_iqe
from .writer import iqe_pieces, sanitize_name, write_iqe

__all__ = [
    "COMPONENT_TYPES",
    "IDENTITY_POSE",
    "MAX_INFLUENCES",
    "NUMBERED_JOINTS_NOTE",
    "POSE_CHANNELS",
    "VERTEX_ARRAY_KINDS",
    "IqeAnimation",
    "IqeDocument",
    "IqeJoint",
    "IqeMesh",
    "IqeVertexArrayFormat",
    "faces_repeating_a_vertex",
    "iqe_pieces",
    "limit_blend_weights",
    "load_iqe",
    "parent_first_order",
    "read_iqe",
    "reverse_face_order",
    "sanitize_name",
    "save_iqe",
    "write_iqe",
]


def load_iqe(path: str | os.PathLike[str], map_pieces: PieceMap = sequential) -> IqeDocument:
    """Read an IQE file; an unreadable file is reported as a FormatError too. `map_pieces`: see read_iqe."""
    name = os.fspath(path)
    return read_iqe(read_file_buffer(name), name, map_pieces)


def save_iqe(path: str | os.PathLike[str], document: IqeDocument) -> None:
    """Write an IQE file atomically: an existing file is replaced only when the whole document was written."""
    write_bytes_atomically(path, iqe_pieces(document))
