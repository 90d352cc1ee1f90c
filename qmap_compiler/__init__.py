"""Standalone QMAP map compiler for The Final Quest engine (numpy only, no Blender).

Public API:
    compile_map(tmp_path, desc_path=None, out_path=None, options=None) -> CompileReport
    compile_bytes(tmp_data, desc_data=None, options=None, ...) -> bytes
    parse_tmp(data, filename) -> TmpDocument;  parse_desc(data, filename) -> DescDocument
    format_tmp(document) -> bytes (tmp_pieces: the same text in pieces);  format_desc(document) -> bytes
    read_qmap(data, filename) / read_qmap_file(path) -> QmapModel;  model_faces(model) -> FaceSet
    describe_model(model) -> str (the --info text)
Every problem with an input is raised as QmapError (file, line, column or byte offset, message).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .compiler import (
        CompileOptions,
        CompileReport,
        TreeStats,
        compile_bytes,
        compile_documents,
        compile_faces,
        compile_map,
    )
    from .desc_parser import DescDocument, MaterialDesc, parse_desc
    from .errors import QmapError
    from .frontend import FaceSet
    from .info import describe_model, describe_report
    from .model import QmapModel
    from .reader import model_faces, read_qmap, read_qmap_file
    from .text_writer import format_desc, format_tmp, tmp_pieces
    from .tmp_parser import LampObject, MeshObject, ParseOptions, TmpDocument, parse_tmp
    from .writer import serialize, write_atomic

# Each public name and the module it lives in, imported when first used: `python -m qmap_compiler` then loads only
# what a compile needs (not the text writer, nor the resource list), which shortens every run's start-up.
_HOMES = {
    "CompileOptions": "compiler", "CompileReport": "compiler", "TreeStats": "compiler", "compile_bytes": "compiler",
    "compile_documents": "compiler", "compile_faces": "compiler", "compile_map": "compiler",
    "DescDocument": "desc_parser", "MaterialDesc": "desc_parser", "parse_desc": "desc_parser",
    "QmapError": "errors", "FaceSet": "frontend", "describe_model": "info", "describe_report": "info",
    "QmapModel": "model", "model_faces": "reader", "read_qmap": "reader", "read_qmap_file": "reader",
    "format_desc": "text_writer", "format_tmp": "text_writer", "tmp_pieces": "text_writer",
    "LampObject": "tmp_parser", "MeshObject": "tmp_parser", "ParseOptions": "tmp_parser", "TmpDocument": "tmp_parser",
    "parse_tmp": "tmp_parser", "serialize": "writer", "write_atomic": "writer",
}

__all__ = [
    "CompileOptions", "CompileReport", "DescDocument", "FaceSet", "LampObject", "MaterialDesc", "MeshObject",
    "ParseOptions", "QmapError", "QmapModel", "TmpDocument", "TreeStats", "compile_bytes",
    "compile_documents", "compile_faces", "compile_map", "describe_model", "describe_report", "format_desc",
    "format_tmp", "model_faces", "parse_desc", "parse_tmp", "read_qmap", "read_qmap_file", "serialize",
    "tmp_pieces", "write_atomic",
]


if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        home = _HOMES.get(name)
        if home is None:  # (a submodule not imported yet: the import system then loads it)
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from importlib import import_module

        value = getattr(import_module(f".{home}", __name__), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(__all__))
