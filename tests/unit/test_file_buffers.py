"""Large files are read into memory advised for huge pages (formats.errors.read_file_buffer), not into `bytes`: the
IQE, IQM and SMD readers must read exactly the same documents, errors and warnings from it. Here every file takes
that path (its size threshold lowered to nothing)."""

from __future__ import annotations

import dataclasses
import mmap
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from formats import errors, iqe, iqm, smd
from formats.errors import FormatError
from tests.unit.test_iqe_fuzz import FIXTURE
from tests.unit.test_structured_fuzz import IQE_FIXTURE, SMD_FIXTURE

pytestmark = pytest.mark.skipif(not hasattr(mmap, "MADV_HUGEPAGE"), reason="this system has no huge pages to ask for")

IQE_TEXTS = [
    FIXTURE,
    IQE_FIXTURE,
    b"\xef\xbb\xbf" + IQE_FIXTURE,  # a byte order mark
    IQE_FIXTURE.replace(b"\n", b"\r"),  # old Mac line ends
    IQE_FIXTURE.replace(b"vp 0 0 0", b"vp 0 0 0 # a hash ends a numeric line", 1),
    IQE_FIXTURE + b"comment\nverbatim text, kept # as it is\n",
    IQE_FIXTURE[: len(IQE_FIXTURE) // 2],  # cut short
    b"# not an IQE header\n",
]
SMD_TEXTS = [
    SMD_FIXTURE,
    SMD_FIXTURE.replace(b"\n", b"\r\n"),
    "version 1\n// caf\u00e9\n".encode("cp1252") + SMD_FIXTURE.split(b"\n", 1)[1],  # not UTF-8
    b"\x89PNG\r\n\x1a\n" + bytes(64),  # binary data
    SMD_FIXTURE[: len(SMD_FIXTURE) * 2 // 3],
]


def _outcome(read: Callable[[str], object], path: Path) -> object:
    try:
        return read(str(path))
    except FormatError as error:
        return ("error", str(error), error.line, error.column, error.offset)


def _same(first: object, second: object) -> bool:
    if isinstance(first, np.ndarray):
        assert isinstance(second, np.ndarray)
        return first.dtype == second.dtype and np.array_equal(first, second, equal_nan=first.dtype.kind == "f")
    if dataclasses.is_dataclass(first) and not isinstance(first, type):
        names = [field.name for field in dataclasses.fields(first)]
        return type(first) is type(second) and all(_same(getattr(first, n), getattr(second, n)) for n in names)
    if isinstance(first, (list, tuple)):
        assert isinstance(second, (list, tuple))
        return len(first) == len(second) and all(_same(a, b) for a, b in zip(first, second, strict=True))
    if isinstance(first, dict):
        assert isinstance(second, dict)
        return first.keys() == second.keys() and all(_same(first[key], second[key]) for key in first)
    return first == second


def _cases() -> list[tuple[str, Callable[[str], object], bytes]]:
    compiled = iqm.write_iqm(iqe.read_iqe(FIXTURE))
    return (
        [(f"iqe{index}", iqe.load_iqe, text) for index, text in enumerate(IQE_TEXTS)]
        + [(f"smd{index}", smd.load_smd, text) for index, text in enumerate(SMD_TEXTS)]
        + [("iqm", iqm.load_iqm, compiled), ("iqm-cut", iqm.load_iqm, compiled[:-40])]
    )


CASES = _cases()


@pytest.mark.parametrize(("name", "load", "data"), CASES, ids=[case[0] for case in CASES])
def test_documents_and_errors_are_those_read_from_bytes(
    name: str, load: Callable[[str], object], data: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    from_bytes = _outcome(load, path)
    taken: list[object] = []
    real = errors.read_file_buffer

    def spied(file: str) -> errors.FileBuffer:
        taken.append(buffer := real(file))
        return buffer

    monkeypatch.setattr(errors, "_HUGE_PAGES_FROM", 1)
    for module in (iqe, iqm, smd):
        monkeypatch.setattr(module, "read_file_buffer", spied)
    from_buffer = _outcome(load, path)
    assert taken and isinstance(taken[0], mmap.mmap), "the huge-page path was not taken"
    assert _same(from_bytes, from_buffer)


@pytest.mark.parametrize("change", [-10, 10])
def test_a_file_that_changes_size_while_read_is_read_again_whole(
    change: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its size is taken first: a file that has grown (an export replaced it) or shrunk since is read again to its
    end, never cut short or padded."""
    path = tmp_path / "changing.smd"
    path.write_bytes(SMD_FIXTURE * 40)
    real_size = errors._check_regular
    monkeypatch.setattr(errors, "_HUGE_PAGES_FROM", 1)
    monkeypatch.setattr(errors, "_check_regular", lambda name: real_size(name) + change)
    assert bytes(errors.read_file_buffer(path)) == path.read_bytes()


def test_a_system_that_refuses_huge_pages_still_reads_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """madvise can fail where Python knows the flag (a kernel without transparent huge pages, a sandbox): the
    advice is dropped, the file read all the same."""

    class Refusing(mmap.mmap):
        def madvise(self, *arguments: int) -> None:
            raise OSError(22, "Invalid argument")

    flags = {name: getattr(mmap, name) for name in ("MAP_PRIVATE", "MAP_ANONYMOUS", "MADV_HUGEPAGE")}
    monkeypatch.setattr(errors, "mmap", SimpleNamespace(mmap=Refusing, **flags))
    monkeypatch.setattr(errors, "_HUGE_PAGES_FROM", 1)
    path = tmp_path / "model.smd"
    path.write_bytes(SMD_FIXTURE)
    buffer = errors.read_file_buffer(path)
    assert isinstance(buffer, Refusing) and bytes(buffer) == SMD_FIXTURE
