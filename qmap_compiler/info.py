"""Human-readable summaries of a `.qmap` model and of a compile report (the CLI's --info / --verbose)."""

from __future__ import annotations

import numpy as np

from .arrays import Array
from .compiler import CompileReport, TreeStats
from .model import NodeTable, QmapModel, vertex_table


def _name(raw: bytes) -> str:
    return '"' + raw.decode("cp1250", errors="replace") + '"'


def _box(values: tuple[float, ...] | Array) -> str:
    v = [float(x) for x in values]
    return f"({v[0]:.7g}, {v[1]:.7g}, {v[2]:.7g}) - ({v[3]:.7g}, {v[4]:.7g}, {v[5]:.7g})"


def _levels(nodes: NodeTable) -> str:
    return " ".join(str(n) for n in nodes.nodes_per_level())


def describe_model(model: QmapModel) -> str:
    """Materials, buffer sizes, both trees' node counts per level and fragment statistics."""
    frags = model.draw_fragments
    triangles_per_material = np.bincount(frags.material.astype(np.int64),
                                         weights=(frags.index_end - frags.index_begin) // 3,
                                         minlength=len(model.materials)).astype(np.int64)
    draw_vertices = vertex_table(model.draw_vertices)
    nan_vertices = int(np.isnan(draw_vertices[:, 8:14]).any(axis=1).sum()) if len(draw_vertices) else 0
    lines = [f"materials: {len(model.materials)}"]
    lines += [f"  {i:3d} {_name(name)}: {int(triangles_per_material[i])} triangles"
              for i, name in enumerate(model.materials)]
    lines += [
        f"draw: {len(model.draw_vertices)} vertices, {len(model.draw_indices)} indices "
        f"({len(model.draw_indices) // 3} triangles), {len(frags.node)} fragments",
        f"draw tree: {model.draw_nodes.count} nodes, depth {int(model.draw_nodes.depth.max())}, "
        f"nodes per level: {_levels(model.draw_nodes)}",
        f"root box: {_box(model.draw_nodes.boxes[0])}",
        f"collision: {len(model.collision_vertices)} vertices, {len(model.collision_indices)} indices",
        f"collision tree: {model.collision_nodes.count} nodes, depth {int(model.collision_nodes.depth.max())}, "
        f"nodes per level: {_levels(model.collision_nodes)}",
        f"vertices with NaN tangent or binormal: {nan_vertices}",
    ]
    return "\n".join(lines)


def _tree_line(label: str, stats: TreeStats) -> str:
    return (f"{label}: {stats.nodes} nodes, depth {stats.depth}; nodes per level "
            f"{' '.join(map(str, stats.nodes_per_level))}; faces per level {' '.join(map(str, stats.faces_per_level))}")


def describe_report(report: CompileReport, verbose: bool = False) -> str:
    """Summary of a compile; `verbose` adds per-level statistics, warnings and timings."""
    lines = [f"wrote {report.output} ({report.output_bytes} bytes)" if report.output else "compiled"]
    lines.append(f"faces: {report.faces} ({report.triangles} triangles, {report.quads} quads), "
                 f"{report.skipped_faces} skipped")
    lines.append(f"materials: {len(report.materials)}")
    lines += [f"  {i:3d} {_name(name)}: {count} faces"
              for i, (name, count) in enumerate(zip(report.materials, report.faces_per_material, strict=True))]
    lines.append(f"draw: {report.draw_vertices} vertices, {report.draw_indices} indices; collision: "
                 f"{report.collision_vertices} vertices, {report.collision_indices} indices")
    lines.append(f"root box: {_box(report.root_box)}")
    lines.append(_tree_line("draw tree", report.draw_tree) if verbose else
                 f"draw tree: {report.draw_tree.nodes} nodes, depth {report.draw_tree.depth}")
    lines.append(_tree_line("collision tree", report.collision_tree) if verbose else
                 f"collision tree: {report.collision_tree.nodes} nodes, depth {report.collision_tree.depth}")
    if verbose:
        lines += [f"timing {stage}: {seconds:.3f} s" for stage, seconds in report.timings.items()]
    return "\n".join(lines)
