"""Atomic writes: the target is replaced only by a complete file, whether given whole or in pieces."""

from __future__ import annotations

from pathlib import Path

import pytest

from formats import atomic


def test_pieces_are_written_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(atomic, "_PIECES_PER_WRITE", 3)  # several joins, the last one short
    pieces = [f"line {i}\n".encode() for i in range(10)]
    target = tmp_path / "out.txt"
    atomic.write_bytes_atomically(target, pieces)
    assert target.read_bytes() == b"".join(pieces)
    atomic.write_files_atomically([(str(target), b"whole"), (str(tmp_path / "b.txt"), pieces)])
    assert target.read_bytes() == b"whole" and (tmp_path / "b.txt").read_bytes() == b"".join(pieces)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.txt", "out.txt"]  # no temporary left


def test_a_failure_while_writing_leaves_the_target_as_it_was(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_bytes(b"before")

    class Failing(list[bytes]):
        def __getitem__(self, index):  # type: ignore[no-untyped-def, override]
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic.write_files_atomically([(str(target), Failing([b"x"]))])
    assert target.read_bytes() == b"before"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]
