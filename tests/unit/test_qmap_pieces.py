"""The QMAP compiler works on bounded pieces (groups of blocks, blocks of faces, pieces of the output): the bytes
must not depend on where the pieces are cut."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from qmap_compiler import blockscan, compile_bytes, compile_map, layout, writer


def _scene(seed: int, meshes: int) -> tuple[bytes, bytes]:
    """Meshes of random triangles and quads with UVs (some without), over a few materials, and a desc."""
    rng = np.random.default_rng(seed)
    text = ["QMAP TMP 10", "objects {"]
    for index in range(meshes):
        has_uv = index % 4 != 3
        vertex_count = int(rng.integers(4, 40))
        text += [f' mesh "M{index}" {{', " 0,0,0", f" {rng.random():.3f},0,0", " 1,1,1", " 30", f" {int(has_uv)}",
                 ' materials 3 { "Stone" "Wood" "Glass" }', f" vertices {vertex_count} {{"]  # fmt: skip
        text += [" " + ",".join(f"{value:f}" for value in rng.uniform(-20, 20, 3)) for _ in range(vertex_count)]
        text.append(" }")
        face_count = int(rng.integers(1, 30))
        text.append(f" faces {face_count} {{")
        for _ in range(face_count):
            size = int(rng.integers(3, 5))
            corners = rng.choice(vertex_count, size, replace=False)
            uv = (lambda: " " + ",".join(f"{value:f}" for value in rng.random(2))) if has_uv else (lambda: "")
            parts = [f"{corner}{uv()}" for corner in corners]
            text.append(f"  {size} {rng.integers(3)} 1 " + " ".join(parts))
        text += [" }", " }"]
    text.append("}")
    desc = 'QMAP DESC 10\nmaterials {\n "Glass" { tex gen; tex scale 0.5; }\n "Wood" { name "Timber"; }\n}\n'
    return ("\n".join(text) + "\n").encode(), desc.encode()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_output_does_not_depend_on_where_the_pieces_are_cut(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    tmp, desc = _scene(seed, 25)
    whole = compile_bytes(tmp, desc)
    monkeypatch.setattr(blockscan, "_GROUP_BYTES", 200)  # several blocks per group, and groups of one block
    monkeypatch.setattr(layout, "_FACES_AT_A_TIME", 3)
    monkeypatch.setattr(writer, "_EVENTS_PER_PIECE", 5)
    monkeypatch.setattr(writer, "_ROWS_PER_PIECE", 7)
    assert compile_bytes(tmp, desc) == whole


def test_compiling_files_gives_the_bytes_of_compiling_in_memory(tmp_path: Path) -> None:
    tmp, desc = _scene(4, 12)
    (tmp_path / "m.qmap.tmp").write_bytes(tmp)
    (tmp_path / "m.qmap.desc").write_bytes(desc)
    compile_map(tmp_path / "m.qmap.tmp", tmp_path / "m.qmap.desc")
    assert (tmp_path / "m.qmap").read_bytes() == compile_bytes(tmp, desc)
