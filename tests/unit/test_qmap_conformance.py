"""Conformance with the original Tools.exe: every case compiles to its exact bytes, every probe behaves as
samples/qmap/tools_exe/probes/EXPECTED.tsv says, and both shipped maps are rebuilt byte for byte."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from qmap_compiler import CompileReport, QmapError, compile_bytes, compile_faces, compile_map, model_faces, read_qmap
from qmap_compiler.writer import serialize
from tests.sample_paths import SAMPLES_ROOT, sample_dir

TOOLS = SAMPLES_ROOT / "qmap" / "tools_exe"


def _case_names() -> list[str]:
    folder = TOOLS / "cases"
    return sorted(p.name[: -len(".qmap")] for p in folder.glob("*.qmap")) if folder.is_dir() else ["(samples missing)"]


def _probe_rows() -> list[dict[str, str]]:
    table = TOOLS / "probes" / "EXPECTED.tsv"
    if not table.is_file():
        return [{"probe": "(samples missing)", "expected here": ""}]
    with table.open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream, delimiter="\t"))


def _inputs(folder: Path, stem: str) -> tuple[Path, Path | None]:
    """Input files for an expected output: `X_nodesc` is X's input compiled without its desc."""
    without_desc = stem.endswith("_nodesc")
    base = stem[: -len("_nodesc")] if without_desc else stem
    desc = folder / f"{base}.qmap.desc"
    return folder / f"{base}.qmap.tmp", (desc if desc.is_file() and not without_desc else None)


@pytest.mark.parametrize("case", _case_names())
def test_case_compiles_to_the_original_bytes(case: str, tmp_path: Path) -> None:
    folder = sample_dir("qmap/tools_exe/cases")
    tmp, desc = _inputs(folder, case)
    out = tmp_path / f"{case}.qmap"
    compile_map(tmp, desc, out)
    assert out.read_bytes() == (folder / f"{case}.qmap").read_bytes(), f"case {case} differs from Tools.exe output"


@pytest.mark.parametrize("row", _probe_rows(), ids=lambda row: row["probe"])
def test_probe_behaves_as_expected(row: dict[str, str], tmp_path: Path) -> None:
    folder = sample_dir("qmap/tools_exe/probes")
    name, expected = row["probe"], row["expected here"]
    tmp, desc = _inputs(folder, name)
    out = tmp_path / f"{name}.qmap"
    if expected.startswith("compiles"):
        compile_map(tmp, desc, out)
        assert out.read_bytes() == (folder / f"{name}.qmap").read_bytes(), f"probe {name} differs"
    elif expected.startswith("warning"):
        report = compile_map(tmp, desc, out)
        assert any("lattice" in w for w in report.warnings)
        without = b"".join(line for line in tmp.read_bytes().splitlines(keepends=True) if b"lattice" not in line)
        assert out.read_bytes() == compile_bytes(without)
    else:
        with pytest.raises(QmapError) as caught:
            compile_map(tmp, desc, out)
        assert not out.exists(), f"probe {name} left an output file"
        assert caught.value.file is not None
        if "line and column" in expected:
            assert caught.value.line is not None and caught.value.column is not None
            assert str(caught.value).startswith(f"{caught.value.file}:{caught.value.line}:{caught.value.column}: ")
        if "empty map" in expected:
            assert "empty" in caught.value.message
        assert list(tmp_path.iterdir()) == []


def test_probe_errors_point_where_the_original_did() -> None:
    """Row and column of the original's messages (EXPECTED.tsv) for a few lexical probes."""
    folder = sample_dir("qmap/tools_exe/probes")
    expected = {"bom": (1, 1), "bs_lone_cr": (9, 16), "formfeed": (7, 4), "int_float": (11, 8),
                "num_dot_first": (10, 21), "unclosed_comment": (14, 1), "version11": (1, 10),
                "lamp_badtype": (3, 31)}
    for name, (line, column) in expected.items():
        with pytest.raises(QmapError) as caught:
            compile_bytes((folder / f"{name}.qmap.tmp").read_bytes(), tmp_name=name)
        assert (caught.value.line, caught.value.column) == (line, column), name


@pytest.mark.parametrize("name", ["Fpp", "PacMan"])
def test_shipped_map_is_rebuilt_from_its_own_faces(name: str) -> None:
    data = (sample_dir("qmap") / f"{name}.qmap").read_bytes()
    model = read_qmap(data, name)
    report = CompileReport()
    rebuilt = serialize(compile_faces(model_faces(model), report=report))
    assert rebuilt == data
    assert report.draw_tree.nodes == model.draw_nodes.count
    assert report.collision_tree.nodes == model.collision_nodes.count


@pytest.mark.parametrize("name", ["Fpp", "PacMan"])
def test_shipped_map_reads_strictly_and_writes_back_identically(name: str) -> None:
    data = (sample_dir("qmap") / f"{name}.qmap").read_bytes()
    model = read_qmap(data, name)
    assert serialize(model) == data
    facts = {"Fpp": (10, 16122, 289, 2625), "PacMan": (2, 3692, 9, 177)}[name]
    counts = (len(model.materials), len(model.draw_vertices), model.draw_nodes.count, model.collision_nodes.count)
    assert counts == facts


def test_shipped_normals_match_the_recomputed_tangent_frames() -> None:
    """The §7.7 formulas applied to the stored faces give the stored N/T/B bit for bit (NaN included)."""
    from qmap_compiler.frontend import plane_normals, tangent_frames

    for name in ("Fpp", "PacMan"):
        faces = model_faces(read_qmap((sample_dir("qmap") / f"{name}.qmap").read_bytes(), name))
        positions = faces.positions.astype(np.float32)
        with np.errstate(all="ignore"):
            frames = tangent_frames(positions, faces.uvs.astype(np.float32), plane_normals(positions))
        for computed, stored in zip(frames, (faces.normals, faces.tangents, faces.binormals), strict=True):
            assert np.array_equal(computed.astype(np.float32), stored, equal_nan=True), name


def test_draw_split_rule_sparse_counting_gives_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The draw tree's (node, material) counting has a dense and a sparse path; both rebuild Fpp exactly."""
    from qmap_compiler import octree

    data = (sample_dir("qmap") / "Fpp.qmap").read_bytes()
    monkeypatch.setattr(octree, "DENSE_TABLE_FACTOR", -10**9)
    assert serialize(compile_faces(model_faces(read_qmap(data)))) == data
