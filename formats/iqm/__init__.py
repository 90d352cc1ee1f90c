"""IQM (Inter-Quake Model, version 2) codec: `read_iqm`/`write_iqm` between bytes and the IqeDocument model that
IQE uses, so both formats share one importer and one exporter and convert into each other.

`read_iqm_model` and `compile_document` give the level in between, the file's sections (`IqmModel`), for tools
that compare files section by section.
"""

from __future__ import annotations

import os

from ..atomic import write_bytes_atomically
from ..errors import Warnings, read_file_buffer, read_file_bytes
from ..iqe.document import IqeDocument
from .compile import IqmWriteOptions, compile_document
from .encode import encode_model, encode_model_pieces
from .framegroups import FrameGroup, format_framegroups, framegroups_path, parse_framegroups
from .layout import LOOP_FLAG, IqmAnim, IqmMesh, IqmModel, IqmVertexArray
from .reader import document_from_model, read_iqm, read_iqm_model

__all__ = [
    "FrameGroup",
    "IqmAnim",
    "IqmMesh",
    "IqmModel",
    "IqmVertexArray",
    "IqmWriteOptions",
    "compile_document",
    "document_from_model",
    "encode_model",
    "encode_model_pieces",
    "format_framegroups",
    "framegroups_path",
    "iqm_pieces",
    "load_iqm",
    "model_framegroups",
    "parse_framegroups",
    "read_iqm",
    "read_iqm_model",
    "save_framegroups",
    "save_iqm",
    "write_iqm",
]


def write_iqm(document: IqeDocument, options: IqmWriteOptions | None = None, warnings: Warnings | None = None) -> bytes:
    """Compile and lay out the document; raises FormatError (before any byte exists) for what IQM cannot hold."""
    return b"".join(iqm_pieces(document, options, warnings))


def iqm_pieces(
    document: IqeDocument, options: IqmWriteOptions | None = None, warnings: Warnings | None = None
) -> list[bytes | memoryview]:
    """write_iqm's bytes as consecutive pieces, to be written one after the other (never joined into a copy)."""
    return encode_model_pieces(compile_document(document, options, warnings))


def load_iqm(path: str | os.PathLike[str], use_framegroups: bool = False) -> IqeDocument:
    """Read an IQM file; an unreadable file is reported as a FormatError too. With `use_framegroups` and a
    `<path>.framegroups` file beside it, the animations are its groups of the file's frames."""
    name = os.fspath(path)
    groups = None
    if use_framegroups and os.path.isfile(framegroups_path(name)):
        groups_name = framegroups_path(name)
        text = read_file_bytes(groups_name).decode("utf-8", errors="replace")
        groups = parse_framegroups(text, groups_name)
    return read_iqm(read_file_buffer(name), name, groups)


def model_framegroups(model: IqmModel) -> list[FrameGroup]:
    """The model's animations as framegroups (DarkPlaces numbers them over all frames, as IQM stores them)."""
    return [FrameGroup(anim.first_frame, anim.frame_count, anim.framerate, bool(anim.flags & LOOP_FLAG), anim.name)
            for anim in model.anims]  # fmt: skip


def save_framegroups(model_path: str | os.PathLike[str], model: IqmModel) -> str:
    """Write `<model_path>.framegroups` for the model's animations, atomically; returns its path."""
    path = framegroups_path(os.fspath(model_path))
    write_bytes_atomically(path, [format_framegroups(model_framegroups(model)).encode("utf-8")])
    return path


def save_iqm(path: str | os.PathLike[str], document: IqeDocument, options: IqmWriteOptions | None = None) -> None:
    """Write an IQM file atomically: an existing file is replaced only when the whole model was compiled."""
    write_bytes_atomically(path, iqm_pieces(document, options))
