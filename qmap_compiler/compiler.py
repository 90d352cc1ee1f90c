"""The compile pipeline and its public entry points: `compile_map` (files) and `compile_bytes` (in memory)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .arrays import Array
from .desc_parser import DescDocument, parse_desc
from .errors import QmapError
from .frontend import MAX_NAME_BYTES, FaceSet, FrontEndOptions, FrontEndResult, run_front_end
from .layout import build_model
from .memory import freed_memory_kept, release_stage_memory, stage_memory_kept
from .model import QmapModel
from .octree import build_trees, collision_split_rule, draw_split_rule, face_extents, root_bounds
from .parallel import one_at_a_time
from .reader import read_input_file
from .tmp_parser import ParseOptions, TmpDocument, parse_tmp
from .writer import serialize, serialize_parts, write_atomic

Box = tuple[float, float, float, float, float, float]


@dataclass
class CompileOptions:
    """Compiler switches. Defaults reproduce the original Tools.exe byte for byte.

    k: loose-octree factor, 0 <= k < 1 (/K). max_depth: deepest level, root = 0 (/MaxOctreeDepth).
    bounds: root box (x1, y1, z1, x2, y2, z2) or None for automatic (an all-zero box also means automatic).
    fix_bounds: start the automatic maximum at -FLT_MAX instead of the original's FLT_MIN bug.
    drop_degenerate: drop zero-area faces instead of writing NaN normals.
    skip_unknown_objects: skip unknown object blocks with a warning (lattice is always skipped).
    """

    k: float = 0.25
    max_depth: int = 9
    bounds: Box | None = None
    fix_bounds: bool = False
    drop_degenerate: bool = False
    skip_unknown_objects: bool = False

    def validate(self) -> None:
        if not 0.0 <= self.k < 1.0:
            raise QmapError(f"K must satisfy 0 <= K < 1, got {self.k}")
        if self.max_depth < 0:
            raise QmapError(f"the maximum octree depth must be >= 0, got {self.max_depth}")


@dataclass
class TreeStats:
    """Nodes and faces of one octree."""

    nodes: int = 0
    depth: int = 0
    nodes_per_level: list[int] = field(default_factory=list)
    faces_per_level: list[int] = field(default_factory=list)


@dataclass
class CompileReport:
    """What a compile produced. `timings` holds seconds per stage: parse, front end, octrees, write."""

    output: str | None = None
    materials: list[bytes] = field(default_factory=list)
    faces_per_material: list[int] = field(default_factory=list)
    triangles: int = 0
    quads: int = 0
    skipped_faces: int = 0
    degenerate_faces: int = 0
    nan_tangent_faces: int = 0
    draw_vertices: int = 0
    draw_indices: int = 0
    collision_vertices: int = 0
    collision_indices: int = 0
    root_box: Box = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    draw_tree: TreeStats = field(default_factory=TreeStats)
    collision_tree: TreeStats = field(default_factory=TreeStats)
    output_bytes: int = 0
    warnings: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def faces(self) -> int:
        return self.triangles + self.quads


def _tree_stats(levels: Array, face_levels: Array) -> TreeStats:
    depth = int(levels.max()) if len(levels) else 0
    return TreeStats(
        nodes=len(levels),
        depth=depth,
        nodes_per_level=np.bincount(levels, minlength=depth + 1).tolist(),
        faces_per_level=np.bincount(face_levels, minlength=depth + 1).tolist(),
    )


def compile_faces(faces: FaceSet, options: CompileOptions | None = None, report: CompileReport | None = None,
                  deferred: bool = False) -> QmapModel:
    """Back half (§7.4-§7.8): root box, both loose octrees and the buffer layout for faces already compiled.
    `deferred`: the vertex tables are made as the model is written (`VertexRows`), for a caller that writes it."""
    options = options or CompileOptions()
    options.validate()
    if faces.face_count == 0:
        raise QmapError("the map is empty: no faces left to compile (every face skipped, or no meshes with faces)")
    positions = faces.positions
    extents = face_extents(positions)
    if options.bounds is not None and any(options.bounds):
        root = np.array(options.bounds, dtype=np.float32)
        if report is not None and _reaches_outside(positions, root):
            report.warnings.append("the geometry reaches outside the given root box: the faces that do not fit it "
                                   "stay in the root node of both octrees")  # fmt: skip
    else:
        root = root_bounds(positions, options.fix_bounds, extents)
    k = float(np.float32(options.k))
    draw, collision = build_trees(positions, root, k, options.max_depth,
                                  [draw_split_rule(faces.material), collision_split_rule], extents)  # fmt: skip
    del extents
    release_stage_memory()  # what the threads freed stays in their malloc arenas until trimmed
    model = build_model(faces, draw, collision, deferred)
    release_stage_memory()  # (the two tables are made side by side too)
    if report is not None:
        _fill_report(report, faces, model, root)
        report.draw_tree = _tree_stats(draw.level, draw.level[draw.face_node])
        report.collision_tree = _tree_stats(collision.level, collision.level[collision.face_node])
    return model


def _reaches_outside(positions: Array, root: Array) -> bool:
    corners = positions.reshape(-1, 3)
    if not len(corners):
        return False
    with np.errstate(invalid="ignore"):
        low = np.array([np.nanmin(corners[:, axis]) for axis in range(3)])  # (a column at a time: axis=0 is
        high = np.array([np.nanmax(corners[:, axis]) for axis in range(3)])  # several times slower)
    return bool((low < root[:3]).any() or (high > root[3:]).any())


def _fill_report(report: CompileReport, faces: FaceSet, model: QmapModel, root: Array) -> None:
    report.materials = list(faces.materials)
    report.faces_per_material = np.bincount(faces.material, minlength=len(faces.materials)).tolist()
    report.quads = int(np.count_nonzero(faces.sizes == 4))
    report.triangles = faces.face_count - report.quads
    report.draw_vertices = len(model.draw_vertices)
    report.draw_indices = len(model.draw_indices)
    report.collision_vertices = len(model.collision_vertices)
    report.collision_indices = len(model.collision_indices)
    report.root_box = tuple(float(v) for v in root)  # type: ignore[assignment]


def compile_documents(tmp: TmpDocument, desc: DescDocument | None, options: CompileOptions | None = None,
                      report: CompileReport | None = None) -> QmapModel:
    """Front end plus back half for already parsed documents."""
    options = options or CompileOptions()
    report = report if report is not None else CompileReport()
    return _back_half(_front_end(tmp, desc, options, report), options, report)


def _front_end(tmp: TmpDocument, desc: DescDocument | None, options: CompileOptions, report: CompileReport,
               release_meshes: bool = False) -> FrontEndResult:
    started = time.perf_counter()
    front = run_front_end(tmp, desc, FrontEndOptions(drop_degenerate=options.drop_degenerate), release_meshes)
    release_stage_memory()
    report.timings["front end"] = time.perf_counter() - started
    report.warnings += tmp.warnings + (desc.warnings if desc else []) + front.warnings
    report.skipped_faces = front.skipped_faces
    report.degenerate_faces = front.degenerate_faces
    report.nan_tangent_faces = front.nan_tangent_faces
    if front.faces.face_count == 0:
        raise QmapError("the map is empty: no faces left to compile (every face skipped, or no meshes with faces)",
                        tmp.source.filename if tmp.source else None)
    return front


def _back_half(front: FrontEndResult, options: CompileOptions, report: CompileReport,
               deferred: bool = False) -> QmapModel:
    started = time.perf_counter()
    model = compile_faces(front.faces, options, report, deferred)
    report.timings["octrees"] = time.perf_counter() - started
    return model


def compile_bytes(tmp_data: bytes, desc_data: bytes | None = None, options: CompileOptions | None = None,
                  tmp_name: str = "<tmp>", desc_name: str = "<desc>",
                  report: CompileReport | None = None) -> bytes:
    """Compile in memory: `.qmap.tmp` bytes (+ `.qmap.desc` bytes) to `.qmap` bytes."""
    report = report if report is not None else CompileReport()
    with freed_memory_kept():
        model, small = _compile_model(lambda: tmp_data, desc_data, options, tmp_name, desc_name, report)
        started = time.perf_counter()
        with np.errstate(all="ignore"), one_at_a_time(small):
            data = serialize(model)
        del model
    report.timings["serialise"] = time.perf_counter() - started
    report.output_bytes = len(data)
    return data


_THREADS_FROM_BYTES = 32 << 20  # a smaller .qmap.tmp (about 250,000 faces) is compiled without threads: they would
# save little time and cost memory (each thread keeps a malloc arena of freed memory: +15 MB at 100k faces)


def _compile_model(read_tmp: Callable[[], bytes], desc_data: bytes | None, options: CompileOptions | None,
                   tmp_name: str, desc_name: str, report: CompileReport) -> tuple[QmapModel, bool]:
    """Parse, front end, back half; the model, and whether the map is small enough to be worked on (and written)
    without threads. The `.qmap.tmp` text (from `read_tmp`) and the parsed meshes are let go as soon as the front
    end is done: the octrees need only its faces."""
    options = options or CompileOptions()
    options.validate()
    # inf and NaN coordinates are legal input and are carried through exactly like the original does.
    started = time.perf_counter()
    text = read_tmp()
    small = len(text) < _THREADS_FROM_BYTES
    with np.errstate(all="ignore"), one_at_a_time(small), stage_memory_kept(small):
        tmp = parse_tmp(text, tmp_name, ParseOptions(options.skip_unknown_objects))
        del text
        if tmp.source is not None:  # the text is not needed after the parse, but for a too long name's position
            tmp.source.forget_text(pos for mesh in tmp.meshes for name, pos in zip(mesh.materials, mesh.material_pos,
                                   strict=False) if len(name) > MAX_NAME_BYTES)  # fmt: skip
        desc = parse_desc(desc_data, desc_name) if desc_data is not None else None
        release_stage_memory()
        report.timings["parse"] = time.perf_counter() - started
        # (no trim after this one: _front_end has just trimmed, and the meshes left the document as they were read;
        # a second trim here measured 0.1-0.2 s slower on 1M faces for the same peak)
        front = _front_end(tmp, desc, options, report, release_meshes=True)
        del tmp
        return _back_half(front, options, report, deferred=True), small  # (written at once)


def compile_map(tmp_path: str | os.PathLike[str], desc_path: str | os.PathLike[str] | None = None,
                out_path: str | os.PathLike[str] | None = None,
                options: CompileOptions | None = None) -> CompileReport:
    """Compile `MAP.qmap.tmp` (+ `MAP.qmap.desc`) into `out_path` (default: the tmp name without `.tmp`).

    The output is written to a temporary file and renamed into place, so on any error an existing target
    is left untouched and no partial file appears. Raises QmapError.
    """
    if out_path is None:
        name = str(tmp_path)
        out_path = name[:-4] if name.lower().endswith(".tmp") else name + ".qmap"
    report = CompileReport(output=str(out_path))
    desc_data = read_input_file(desc_path) if desc_path is not None else None
    with freed_memory_kept():
        model, small = _compile_model(lambda: read_input_file(tmp_path), desc_data, options, str(tmp_path),
                                      str(desc_path), report)  # fmt: skip
        del desc_data
        started = time.perf_counter()
        with np.errstate(all="ignore"), one_at_a_time(small):
            write_atomic(out_path, serialize_parts(model))  # piece by piece: the file is never in memory twice
        report.timings["write"] = time.perf_counter() - started
        del model
    report.output_bytes = Path(out_path).stat().st_size
    return report
