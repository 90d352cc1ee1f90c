"""Every reader takes only regular files: a device (/dev/zero) would be read until memory runs out, and a FIFO
would wait for a writer forever. Each is refused at once with the reader's own located error."""

from __future__ import annotations

import builtins
import io
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from formats import iqe, iqm, joe, jpk, smd
from formats.errors import FormatError
from qmap_compiler import QmapError, compile_map
from qmap_compiler.reader import read_qmap_file

READERS: dict[str, Callable[[str], object]] = {
    "iqe": iqe.load_iqe, "iqm": iqm.load_iqm, "joe": joe.load_joe, "jpk": jpk.load_jpk, "smd": smd.load_smd,
    "qc": smd.load_qc, "qmap": read_qmap_file, "qmap.tmp": compile_map,
}  # fmt: skip


def special_files(tmp_path: Path) -> list[str]:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    return ["/dev/zero", str(fifo), str(tmp_path)]


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"), reason="needs /dev/zero and FIFOs")
@pytest.mark.parametrize("kind", sorted(READERS))
def test_devices_pipes_and_folders_are_refused_at_once(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    specials = special_files(tmp_path)
    real_open = builtins.open

    def never_opened(file: object, *arguments: object, **options: object) -> object:
        # (opening would hang the test: a FIFO waits for a writer, /dev/zero never ends)
        assert os.fspath(file) not in specials[:2], f"{file} was opened"  # type: ignore[call-overload]
        return real_open(file, *arguments, **options)  # type: ignore[call-overload]

    monkeypatch.setattr(builtins, "open", never_opened)
    monkeypatch.setattr(io, "open", never_opened)
    for path in specials:
        with pytest.raises((FormatError, QmapError)) as caught:
            READERS[kind](path)
        assert "not a file" in str(caught.value) or "folder" in str(caught.value), str(caught.value)


def test_a_large_file_reads_the_same_through_huge_page_memory(tmp_path: Path) -> None:
    """Files of 4 MB and more are read into memory advised to use huge pages where the system has them: the reader
    sees the same bytes (finds, slices, regular expressions, numpy views) and parses the same document."""
    from formats.errors import read_file_buffer, read_file_bytes

    nodes = "version 1\nnodes\n0 \"root\" -1\nend\nskeleton\ntime 0\n0 0 0 0 0 0 0\nend\ntriangles\n"
    corner = "0 {0:.6f} 1.000000 2.000000 0.000000 0.000000 1.000000 0.500000 0.250000 1 0 1.000000\n"
    rows = [f"mat{t % 3}\n" + corner.format(t) + corner.format(t + 1) + corner.format(t + 2) for t in range(16_000)]
    path = tmp_path / "large.smd"
    path.write_bytes((nodes + "".join(rows) + "end\n").encode())
    assert path.stat().st_size >= 4 << 20
    buffer, plain = read_file_buffer(path), read_file_bytes(path)
    assert bytes(buffer) == plain and buffer.find(b"triangles") == plain.find(b"triangles")
    if hasattr(__import__("mmap"), "MADV_HUGEPAGE"):
        assert not isinstance(buffer, bytes)  # (the path under test was taken)
    document, expected = smd.load_smd(path), smd.read_smd(plain)
    assert document.triangles is not None and expected.triangles is not None
    assert document.triangles.material_names == expected.triangles.material_names == ["mat0", "mat1", "mat2"]
    for name in ("positions", "normals", "uvs", "material_indices", "corner_lines"):
        assert (getattr(document.triangles, name) == getattr(expected.triangles, name)).all(), name
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(5 << 20))  # binary data is still called so, at its offset
    with pytest.raises(FormatError, match="binary data") as caught:
        smd.load_smd(path)
    assert caught.value.offset == 8
