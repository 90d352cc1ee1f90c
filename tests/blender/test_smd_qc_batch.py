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


def reference_with(nodes: list[str], frame: list[str], x: float) -> str:
    corners = [f"0 {x} 0 0 0 0 1 0 0", f"0 {x + 1} 0 0 0 0 1 1 0", f"1 {x} 1 0 0 0 1 0 1"]
    return "\n".join(["version 1", "nodes", *nodes, "end", "skeleton", "time 0", *frame, "end", "triangles", "skin",
                      *corners, "end", ""])  # fmt: skip


def test_a_qc_merges_each_skeleton_once_and_notes_each_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The meshes of a QC that share one skeleton merge it once into the model's armature: the same armature and
    the same notes (one per file, for the bone its first frame lacks) as when every file's skeleton is merged."""
    from bl_ext.dev.io_game_formats.importers import smd as smd_importer  # type: ignore[import-not-found]

    shared = ['0 "root" -1', '1 "child" 0']
    for stem, x in (("a", 0.0), ("b", 2.0), ("c", 4.0)):
        (tmp_path / f"{stem}.smd").write_text(reference_with(shared, ["0 0 0 0 0 0 0"], x))
    (tmp_path / "d.smd").write_text(reference_with([*shared, '2 "extra" 1'], ["0 0 0 0 0 0 0", "1 1 0 0 0 0 0",
                                                                              "2 0 1 0 0 0 0"], 6.0))  # fmt: skip
    (tmp_path / "e.smd").write_text(reference_with(shared, ["0 0 0 0 0 0 0"], 8.0))
    qc = tmp_path / "model.qc"
    qc.write_text("".join(f'$body "{stem}" "{stem}.smd"\n' for stem in "abcde"))

    def imported() -> tuple[object, ...]:
        bpy.ops.wm.read_homefile(use_empty=True)
        summary = smd_importer.import_smd_files(bpy.context, [str(qc)], smd_importer.SmdImportOptions())
        armatures = [obj for obj in bpy.data.objects if obj.type == "ARMATURE"]
        bones = [[(b.name, tuple(b.head_local), tuple(b.tail_local)) for b in a.data.bones] for a in armatures]
        return summary.notes, summary.warnings, dump_scene(), bones

    merged_once = imported()
    missing = [note for note in merged_once[0] if "missing from the first skeleton frame" in note]  # type: ignore[attr-defined]
    assert [note.split(":")[0] for note in missing] == ["a", "b", "c", "e"]
    assert [name for name, _, _ in merged_once[3][0]] == ["root", "child", "extra"]  # type: ignore[index]
    monkeypatch.setattr(smd_importer, "_skeleton_key", lambda _document: object())  # (no two files alike)
    assert imported() == merged_once


@pytest.mark.parametrize(
    "links",
    [([0, 1, 2, 3], [0, 0, 0, 0], [1.0, 1.0, 1.0, 1.0]), ([3, 1, 1, 0], [1, 1, 1, 1], [0.5, 0.5, 0.5, 0.5]),
     ([2, 0, 1], [0, 0, 0], [0.0, 0.0, 0.0]), ([0, 1, 2], [0, 0, 0], [1.0, 0.5, 1.0]),
     ([0, 1, 2], [0, 1, 0], [1.0, 1.0, 1.0]), ([0, 1], [1, 1], [0.1, 0.1 + 1e-12]), ([], [], [])],
    ids=["one bone", "second of two, repeated vertices", "weight 0", "two weights", "two groups",
         "one float32 weight", "no links"],
)  # fmt: skip
def test_one_group_of_one_weight_is_made_as_the_general_way_makes_it(
    monkeypatch: pytest.MonkeyPatch, links: tuple[list[int], list[int], list[float]]
) -> None:
    """add_vertex_weights' quick way for links of one group and one weight (a QC's rigid parts) makes the groups
    and weights the general way makes; other links take the general way."""
    import numpy as np
    from bl_ext.dev.io_game_formats.common import armature  # type: ignore[import-not-found]

    taken: list[bool] = []
    quick_way = armature._one_group_one_weight

    def made() -> tuple[object, ...]:
        bpy.ops.wm.read_homefile(use_empty=True)
        mesh = bpy.data.meshes.new("m")
        mesh.vertices.add(4)
        obj = bpy.data.objects.new("m", mesh)
        vertices, groups, weights = (np.array(values, dtype) for values, dtype in
                                     zip(links, (np.int64, np.int64, np.float64), strict=True))  # fmt: skip
        armature.add_vertex_weights(bpy.context, obj, ["a", "b"], vertices, groups, weights)
        return [group.name for group in obj.vertex_groups], [[(g.group, g.weight) for g in v.groups]
                                                             for v in mesh.vertices]  # fmt: skip

    monkeypatch.setattr(armature, "_one_group_one_weight", lambda *a: taken.append(quick_way(*a)) or taken[-1])
    quick = made()
    assert taken == [len(set(links[1])) == 1 and len(set(np.float32(links[2]).tolist())) == 1]
    monkeypatch.setattr(armature, "_one_group_one_weight", lambda *_args: False)
    assert made() == quick
