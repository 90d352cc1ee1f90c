"""The IQE reader reads large texts a piece at a time (token positions are never held for the whole file): the
document must not depend on where the pieces fall. Tiny pieces put a boundary inside every line and token."""

from __future__ import annotations

import numpy as np
import pytest

from formats.errors import FormatError
from formats.iqe import IqeDocument, read_iqe, reader, scan
from formats.pieces import PieceMap, sequential
from qmap_compiler.parallel import ordered_map

MAPS = pytest.mark.parametrize("map_pieces", [sequential, ordered_map], ids=["one after another", "threads"])

TEXT = (
    "# Inter-Quake Export\r\n"
    "joint \"root\" -1\n"
    "pq 0 0 0 0 0 0 1\n"
    "\tjoint \"arm\" 0\n"
    "   pq 0 1 0  0 0 0.7071068 0.7071068\n"
    "mesh \"a\"\n"
    "material \"stone\"\n"
    "vp 0 0 0\r\n"
    "  vt 0.5 0.25\n"
    "vn 0 0 1 # a comment after the numbers\n"
    "vb 0 0.75 1 0.25\n"
    "\n"
    "vp 1.5 -2 3e2\n"
    "vt 1 0\n"
    "vn 0 0 1\n"
    "vb 1 1\n"
    "\t\t  vp -1 4 0.125\n"
    "vt 0 1\n"
    "vn 0 1 0\n"
    "vb 0 0.5 1 0.5\n"
    "fm 0 1 2\n"
    "  fm 2 1 0 \n"
    "mesh \"b\"\n"
    "vp 5 5 5\n"
    "vp 6 5 5\n"
    "vp 5 6 5\n"
    "vp 5 5 6\n"
    "vt 0 0\nvt 1 0\nvt 0 1\nvt 1 1\n"
    "vn 1 0 0\nvn 1 0 0\nvn 1 0 0\nvn 1 0 0\n"
    "vb 1 1\nvb 1 1\nvb 1 1\nvb 1 1\n"
    "fa 0 1 2 3\n"
    "fm -1 -2 -3\n"
    "animation \"wave\"\n"
    "framerate 24\n"
    "frame\n"
    "pq 0 0 0 0 0 0 1\n"
    "pq 0 1 0 0 0 0.3826834 0.9238795\n"
)


def _documents(monkeypatch: pytest.MonkeyPatch, text: bytes, piece_bytes: int,
               map_pieces: PieceMap) -> tuple[IqeDocument, IqeDocument]:  # fmt: skip
    whole = read_iqe(text, "whole.iqe")
    monkeypatch.setattr(scan, "_SCAN_BYTES", piece_bytes)
    monkeypatch.setattr(scan, "_SCAN_LINES", 3)
    monkeypatch.setattr(reader, "_FACE_LINES", 1)
    return whole, read_iqe(text, "pieces.iqe", map_pieces)


@MAPS
@pytest.mark.parametrize("piece_bytes", [1, 2, 3, 7, 16, 64])
def test_tiny_pieces_read_the_same_document(monkeypatch: pytest.MonkeyPatch, piece_bytes: int,
                                            map_pieces: PieceMap) -> None:  # fmt: skip
    whole, pieces = _documents(monkeypatch, TEXT.encode(), piece_bytes, map_pieces)
    assert whole.warnings == pieces.warnings
    assert [j.__dict__ for j in whole.joints] == [j.__dict__ for j in pieces.joints]
    for a, b in zip(whole.meshes, pieces.meshes, strict=True):
        assert (a.name, a.material) == (b.name, b.material)
        for field in ("positions", "texcoords", "normals", "blend_indices", "blend_weights", "face_corners",
                      "face_sizes"):  # fmt: skip
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    np.testing.assert_array_equal(whole.animations[0].frames, pieces.animations[0].frames)
    mesh_a, mesh_b = whole.meshes
    np.testing.assert_array_equal(mesh_a.positions[1], (1.5, -2, 300))
    np.testing.assert_array_equal(mesh_b.face_corners[-3:], (3, 2, 1))  # negative indices count back


@MAPS
@pytest.mark.parametrize("piece_bytes", [1, 5, 64])
def test_errors_name_the_same_line_and_column_with_tiny_pieces(monkeypatch: pytest.MonkeyPatch, piece_bytes: int,
                                                               map_pieces: PieceMap) -> None:  # fmt: skip
    text = TEXT.replace("vt 1 0\n", "vt 1 O\n", 1).encode()
    with pytest.raises(FormatError) as whole:
        read_iqe(text, "bad.iqe")
    monkeypatch.setattr(scan, "_SCAN_BYTES", piece_bytes)
    monkeypatch.setattr(reader, "_FACE_LINES", 1)
    with pytest.raises(FormatError) as pieces:
        read_iqe(text, "bad.iqe", map_pieces)
    assert str(whole.value) == str(pieces.value)
    assert (whole.value.line, whole.value.column) == (14, 6)


def test_deeply_indented_lines_keep_their_commands() -> None:
    # Lines indented beyond what is stepped through together are searched one by one, and still read.
    deep = " \t" * 40
    text = TEXT.replace("vp 1.5 -2 3e2\n", deep + "vp 1.5 -2 3e2\n").replace("fm 0 1 2\n", deep + "\r fm 0 1 2\n")
    again = read_iqe(text.encode(), "deep.iqe")
    np.testing.assert_array_equal(again.meshes[0].positions[1], (1.5, -2, 300))
    np.testing.assert_array_equal(again.meshes[0].face_corners, read_iqe(TEXT.encode()).meshes[0].face_corners)
    blank = read_iqe((TEXT + deep + "\n").encode(), "blank.iqe")
    assert len(blank.meshes) == 2
