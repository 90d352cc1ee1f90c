"""GoldSrc export: a mesh over studiomdl's limits split into SMDs within them (Split Over Limits), a $body each in
the QC; an import of that QC gives every triangle back."""

from __future__ import annotations

from pathlib import Path

import bpy
import numpy as np
import pytest

from tests.blender.scene_helpers import grid_object


def _smd_module(extension):  # type: ignore[no-untyped-def]
    return extension.formats.smd


@pytest.mark.parametrize(("quads", "parts"), [(46, 2), (101, 6)])  # (2,209 vertices; 20,402 triangles)
def test_a_mesh_over_the_limits_is_split_into_bodies_within_them(quads: int, parts: int, tmp_path: Path,
                                                                  extension) -> None:  # type: ignore[no-untyped-def]
    grid_object("floor", quads)
    out = tmp_path / "model.smd"
    assert bpy.ops.export_scene.valve_smd(filepath=str(out), flavour="GOLDSRC", write_qc=True,
                                          split_over_limits=True) == {"FINISHED"}  # fmt: skip
    summary = extension.common.operators.LAST_SUMMARY[0]
    names = [f"floor_part{number}.smd" for number in range(1, parts + 1)]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["model.qc", *names])
    assert not [w for w in summary.warnings if "studiomdl takes" in w]
    assert summary.notes == [f"floor.smd: over GoldSrc's limits per SMD, split into {parts} parts (floor_part1.smd "
                             f"to floor_part{parts}.smd)"]  # fmt: skip
    smd = _smd_module(extension)
    limits = extension.formats.smd.limits
    counts, positions = [], []
    for name in names:
        document = smd.read_smd((tmp_path / name).read_bytes())
        positions.append(document.triangles.positions.reshape(-1, 3))
        assert limits.limit_warnings(document, "goldsrc", name) == []
        assert max(int(labels.max()) + 1 for labels in limits.goldsrc_labels(document.triangles)) <= 2048
        counts.append(len(document.triangles))
    assert sum(counts) == 2 * quads * quads and max(counts) <= 20000
    qc = (tmp_path / "model.qc").read_text()
    assert [line for line in qc.splitlines() if line.startswith("$body")] == [
        f'$body "floor_part{number}" "floor_part{number}"' for number in range(1, parts + 1)]
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.valve_smd(filepath=str(tmp_path / "model.qc")) == {"FINISHED"}
    meshes = {obj.name: len(obj.data.polygons) for obj in bpy.data.objects if obj.type == "MESH"}
    assert sorted(meshes) == [name.removesuffix(".smd") for name in sorted(names)]
    assert sum(meshes.values()) == 2 * quads * quads
    assert np.unique(np.concatenate(positions), axis=0).shape == ((quads + 1) ** 2, 3)  # (every vertex in a part)


def test_without_the_option_or_the_qc(tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    grid_object("floor", 46)
    assert bpy.ops.export_scene.valve_smd(filepath=str(tmp_path / "a.smd"), flavour="GOLDSRC") == {"FINISHED"}
    assert [p.name for p in tmp_path.iterdir()] == ["a.smd"]  # (off: one SMD, and the warning)
    assert any("2,209 distinct vertices" in w for w in extension.common.operators.LAST_SUMMARY[0].warnings)
    (tmp_path / "a.smd").unlink()
    assert bpy.ops.export_scene.valve_smd(filepath=str(tmp_path / "a.smd"), flavour="GOLDSRC",
                                          split_over_limits=True) == {"FINISHED"}  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_part1.smd", "a_part2.smd"]
    assert bpy.ops.export_scene.valve_smd(filepath=str(tmp_path / "s.smd"), split_over_limits=True) == {"FINISHED"}
    assert (tmp_path / "s.smd").is_file()  # (Source: its limits are others; nothing split)
