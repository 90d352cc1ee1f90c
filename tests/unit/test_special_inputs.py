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
