"""A QC's small reference SMDs have their mesh arrays made together (formats/smd/mesh_arrays.py): the import is
the one made file by file."""

from __future__ import annotations

from pathlib import Path

import bpy
import pytest

from tests.blender.scene_dump import dump_scene
from tests.blender.test_smd_blender import mesh_state
from tests.unit.test_smd_mesh_arrays import varied_smd

# (goldsrc, faces kept whole, every line distinct, quads a side) of each SMD the QC names
PARTS = [(False, False, False, 3), (True, False, False, 4), (False, True, False, 5), (False, False, True, 3),
         (False, False, False, 18), (True, True, False, 2), (False, False, False, 1),
         (False, False, False, 6)]  # fmt: skip


def varied_qc(folder: Path) -> Path:
    """A QC of SMDs with different bones (some links to bones none has), materials (some shared by several files),
    faces with and without shared vertices, degenerate and doubled faces, a collision model and a bodygroup."""
    body = []
    for seed, (goldsrc, spoiled, distinct, side) in enumerate(PARTS):
        (folder / f"part{seed}.smd").write_text(varied_smd(seed, goldsrc, spoiled, distinct, side))
        body.append(f'$body "part{seed}" "part{seed}.smd"' if seed < 5 else "")
    qc = ['$modelname "varied.mdl"', '$cdmaterials "models"', *body,
          '$bodygroup "heads" {', 'studio "part5.smd"', "blank", 'studio "part6.smd"', "}",
          '$collisionmodel "part7.smd" { $concave }', '$sequence idle "part0.smd"']  # fmt: skip
    path = folder / "varied.qc"
    path.write_text("\n".join([*qc, ""]))
    return path


def imported_state(qc: Path, options: dict[str, object]) -> tuple[object, ...]:
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.valve_smd(filepath=str(qc), **options) == {"FINISHED"}
    meshes = [obj for obj in bpy.context.scene.objects if obj.type == "MESH"]
    return (
        dump_scene(), [obj.name for obj in bpy.data.objects], [m.name for m in bpy.data.materials],
        [(c.name, [o.name for o in c.objects]) for c in bpy.data.collections],
        [(obj.name, [g.name for g in obj.vertex_groups], mesh_state(obj)) for obj in meshes],
    )  # fmt: skip


@pytest.mark.parametrize("options", [{}, {"weight_mode": "STUDIOMDL"}, {"use_custom_normals": False},
                                     {"up_axis": "Y", "global_scale": 0.5}],
                         ids=["defaults", "studiomdl weights", "no custom normals", "Y up, scaled"])  # fmt: skip
def test_a_qc_imports_as_when_each_mesh_is_made_on_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: dict[str, object]
) -> None:
    from bl_ext.dev.io_game_formats.importers import smd as smd_importer  # type: ignore[import-not-found]

    qc = varied_qc(tmp_path)
    made_together: list[int] = []
    together = smd_importer.mesh_arrays_together

    def counted(sources: list[object], own: object) -> list[object]:
        made_together.append(len(sources))
        return together(sources, own)  # type: ignore[no-any-return]

    monkeypatch.setattr(smd_importer, "mesh_arrays_together", counted)
    batched = imported_state(qc, options)
    assert made_together == [len(PARTS)]
    assert len(batched[4]) == len(PARTS)
    monkeypatch.setattr(smd_importer, "arrays_ahead", lambda *_args: None)  # (every mesh made on its own)
    assert imported_state(qc, options) == batched
