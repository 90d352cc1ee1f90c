"""IQM (Inter-Quake Model, version 2) codec: `read_iqm`/`write_iqm` between bytes and the IqeDocument model that
IQE uses, so both formats share one importer and one exporter and convert into each other.

`read_iqm_model` and `compile_document` give the level in between, the file's sections (`IqmModel`), for tools
that compare files section by section.
"""

from __future__ import annotations

import os

from ..atomic import write_bytes_atomically
from ..errors import Warnings, read_file_buffer
from ..iqe.document import IqeDocument
from .compile import IqmWriteOptions, compile_document
from .encode import encode_model, encode_model_pieces
from .layout import IqmAnim, IqmMesh, IqmModel, IqmVertexArray
from .reader import document_from_model, read_iqm, read_iqm_model

__all__ = [
    "IqmAnim",
    "IqmMesh",
    "IqmModel",
    "IqmVertexArray",
    "IqmWriteOptions",
    "compile_document",
    "document_from_model",
    "encode_model",
    "encode_model_pieces",
    "iqm_pieces",
    "load_iqm",
    "read_iqm",
    "read_iqm_model",
    "save_iqm",
    "write_iqm",
]


def write_iqm(document: IqeDocument, options: IqmWriteOptions | None = None, warnings: Warnings | None = None) -> bytes:
    """Compile and lay out the document; raises FormatError (before any byte exists) for what IQM cannot hold."""
    return b"".join(iqm_pieces(document, options, warnings))


def iqm_pieces(
    document: IqeDocument, options: IqmWriteOptions | None = None, warnings: Warnings | None = None
) -> list[bytes]:
    """write_iqm's bytes as consecutive pieces, to be written one after the other (never joined into a copy)."""
    return encode_model_pieces(compile_document(document, options, warnings))


def load_iqm(path: str | os.PathLike[str]) -> IqeDocument:
    """Read an IQM file; an unreadable file is reported as a FormatError too."""
    name = os.fspath(path)
    return read_iqm(read_file_buffer(name), name)


def save_iqm(path: str | os.PathLike[str], document: IqeDocument, options: IqmWriteOptions | None = None) -> None:
    """Write an IQM file atomically: an existing file is replaced only when the whole model was compiled."""
    write_bytes_atomically(path, iqm_pieces(document, options))
