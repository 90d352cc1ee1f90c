"""Every shared sample, imported with default options, gives the scene recorded in tests/blender/reference/."""

from __future__ import annotations

from pathlib import Path

import bpy
import pytest

from tests.blender.scene_dump import compare_with_reference
from tests.sample_paths import sample_files

CASES = [
    *(("joe", p) for p in sample_files("joe", ".joe", ".jpk")),
    *(("smd", p) for p in sample_files("smd", ".smd")),
    *(("iqe", p) for p in sample_files("iqe", ".iqe")),
]
IMPORTERS = {"joe": "joe", "smd": "valve_smd", "iqe": "iqe", "qmap": "qmap"}


@pytest.mark.parametrize(("kind", "path"), CASES, ids=lambda value: getattr(value, "name", value))
def test_imported_sample_matches_its_reference_dump(kind: str, path: Path) -> None:
    assert getattr(bpy.ops.import_scene, IMPORTERS[kind])(filepath=str(path)) == {"FINISHED"}
    compare_with_reference(f"{kind}/{path.name}")


@pytest.mark.parametrize("path", sample_files("qmap", ".qmap"), ids=lambda p: p.name)
def test_compiled_map_matches_its_reference_dump(path: Path) -> None:
    assert bpy.ops.import_scene.qmap(filepath=str(path)) == {"FINISHED"}
    compare_with_reference(f"qmap/{path.name}")


def test_reference_with_its_vertex_animation() -> None:
    smd = [p for p in sample_files("smd", ".smd", ".vta") if p.stem == "Cube"]
    if len(smd) != 2:
        pytest.skip("the Cube.smd/Cube.vta samples are absent")
    files = [{"name": p.name} for p in sorted(smd, key=lambda p: p.suffix.lower() != ".smd")]
    assert bpy.ops.import_scene.valve_smd(directory=str(smd[0].parent), files=files) == {"FINISHED"}
    compare_with_reference("smd/Cube.smd+Cube.vta")
