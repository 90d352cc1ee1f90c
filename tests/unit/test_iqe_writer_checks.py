"""The IQE writer checks every mesh's tables for NaN and infinity all at once (_all_finite: a file of many small
meshes pays a few numpy calls, not a few per table) and makes its error messages only on failure: the first error
of a bad document, and its message, must be those of checking each table on its own, mesh by mesh."""

from __future__ import annotations

import random

import numpy as np
import pytest

from formats.errors import FormatError
from formats.iqe import IqeDocument, IqeMesh, IqeVertexArrayFormat, iqe_pieces
from formats.iqe import writer as writer_module
from formats.pieces import made_in_turn


def _document(rng: random.Random, meshes: int) -> IqeDocument:
    document = IqeDocument()
    document.vertex_arrays = [IqeVertexArrayFormat("custom0", "float", 2, "extra")]
    for index in range(meshes):
        count = rng.randint(3, 12)
        mesh = IqeMesh(f"part{index}", f"m{index % 3}", rng.choice((np.float32, np.float64))(
            np.random.default_rng(index).uniform(-9, 9, (count, 3))))  # fmt: skip
        mesh.texcoords = np.full((count, 2), 0.5, np.float32)
        mesh.normals = np.tile(np.float32([0, 0, 1]), (count, 1))
        if index % 2:
            mesh.colors = np.ones((count, 4), np.float16 if index % 4 == 1 else np.float32)
        if index % 3 == 0:
            mesh.custom[0] = np.zeros((count, 2), np.float32)
        mesh.face_sizes = np.full(count // 3, 3, np.int32)
        mesh.face_corners = np.arange(3 * (count // 3), dtype=np.int32)
        document.meshes.append(mesh)
    return document


def _spoil(rng: random.Random, document: IqeDocument) -> None:
    """A NaN or infinity in a table, a table of the wrong shape, a face too small or out of range."""
    for _ in range(rng.randint(1, 3)):
        mesh = rng.choice(document.meshes)
        how = rng.randrange(6)
        tables = [name for name in ("positions", "texcoords", "normals", "colors") if getattr(mesh, name) is not None]
        if how <= 2:
            name = rng.choice(tables)
            table = getattr(mesh, name).copy()
            table[rng.randrange(len(table)), rng.randrange(table.shape[1])] = rng.choice((np.nan, np.inf, -np.inf))
            setattr(mesh, name, table)
        elif how == 3 and mesh.custom:
            mesh.custom[0] = mesh.custom[0].copy()
            mesh.custom[0][0, 1] = np.nan
        elif how == 4:
            mesh.texcoords = np.zeros((len(mesh.positions) + 1, 2), np.float32)
        elif len(mesh.face_corners):
            mesh.face_corners = mesh.face_corners.copy()
            mesh.face_corners[rng.randrange(len(mesh.face_corners))] = rng.choice((-1, len(mesh.positions)))


def _first_error(document: IqeDocument, finite_at_once: bool, monkeypatch: pytest.MonkeyPatch) -> str | None:
    with monkeypatch.context() as patch:
        if not finite_at_once:  # (the reference: each table checked on its own)
            patch.setattr(writer_module, "_all_finite", lambda meshes: False)
        try:
            b"".join(iqe_pieces(document, None, made_in_turn))
        except FormatError as error:
            return str(error)
    return None


@pytest.mark.parametrize("seed", range(40))
def test_checks_at_once_raise_the_errors_of_each_table_alone(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    document = _document(rng, rng.randint(1, 30))
    if seed % 4:
        _spoil(rng, document)
    expected = _first_error(document, False, monkeypatch)
    assert _first_error(document, True, monkeypatch) == expected
    if seed % 4 == 0:
        assert expected is None


def test_a_nan_names_its_mesh_and_table() -> None:
    document = _document(random.Random(1), 5)
    document.meshes[3].normals = document.meshes[3].normals.copy()
    document.meshes[3].normals[1, 2] = np.nan
    with pytest.raises(FormatError, match=r"^mesh 'part3' normals contains NaN or infinity$"):
        b"".join(iqe_pieces(document, None, made_in_turn))


def test_huge_finite_values_pass() -> None:
    """Values whose sum would overflow are finite all the same."""
    document = _document(random.Random(2), 3)
    document.meshes[1].positions = np.full_like(document.meshes[1].positions, np.finfo(np.float32).max)
    assert b"".join(iqe_pieces(document, None, made_in_turn))
