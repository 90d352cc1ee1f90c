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

__all__ = [
    "CompileOptions", "CompileReport", "DescDocument", "FaceSet", "LampObject", "MaterialDesc", "MeshObject",
    "ParseOptions", "QmapError", "QmapModel", "TmpDocument", "TreeStats", "compile_bytes",
    "compile_documents", "compile_faces", "compile_map", "describe_model", "describe_report", "format_desc",
    "format_tmp", "model_faces", "parse_desc", "parse_tmp", "read_qmap", "read_qmap_file", "serialize",
    "tmp_pieces", "write_atomic",
]
