"""Atomic writes: the target is replaced only by a complete file, whether given whole or in pieces."""

from __future__ import annotations

import errno
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from formats import atomic
from formats.atomic import write_files_atomically


def test_pieces_are_written_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(atomic, "_PIECES_PER_WRITE", 3)  # several joins, the last one short
    pieces = [f"line {i}\n".encode() for i in range(10)]
    target = tmp_path / "out.txt"
    atomic.write_bytes_atomically(target, pieces)
    assert target.read_bytes() == b"".join(pieces)
    atomic.write_files_atomically([(str(target), b"whole"), (str(tmp_path / "b.txt"), pieces)])
    assert target.read_bytes() == b"whole" and (tmp_path / "b.txt").read_bytes() == b"".join(pieces)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.txt", "out.txt"]  # no temporary left


def test_small_pieces_are_joined_and_large_ones_written_as_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(atomic, "_PIECES_PER_WRITE", 3)
    monkeypatch.setattr(atomic, "_JOINED_BYTES", 10)

    class Recording:
        writes: list[bytes] = []

        def write(self, data: bytes) -> int:
            self.writes.append(bytes(data))
            return len(data)

        def writelines(self, pieces: list[bytes]) -> None:
            for piece in pieces:
                self.write(piece)

    stream = Recording()
    pieces = [b"ab", b"cd", b"e", b"x" * 30, b"fg", b"hi", b"jk", b"l"]
    atomic.write_content(stream, pieces)  # type: ignore[arg-type]
    assert b"".join(stream.writes) == b"".join(pieces)
    assert stream.writes == [b"abcde", b"x" * 30, b"fg", b"hi", b"jkl"]  # the large piece never copied into a join


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


def three_old_files(folder: Path) -> list[Path]:
    paths = [folder / "a.smd", folder / "b.smd", folder / "c.smd"]
    for path in paths:
        path.write_bytes(b"old " + path.name.encode())
    return paths


def assert_untouched(folder: Path, paths: list[Path], extra: frozenset[str] = frozenset()) -> None:
    assert [p.read_bytes() for p in paths] == [b"old " + p.name.encode() for p in paths]
    assert {p.name for p in folder.iterdir()} == {p.name for p in paths} | extra  # no temporary file left


def test_a_folder_among_the_targets_replaces_none_of_the_files(tmp_path: Path) -> None:
    paths = three_old_files(tmp_path)
    (tmp_path / "d.smd").mkdir()
    with pytest.raises(IsADirectoryError) as raised:
        write_files_atomically([(str(p), b"new") for p in [*paths, tmp_path / "d.smd"]])
    assert raised.value.filename == str(tmp_path / "d.smd")
    assert_untouched(tmp_path, paths, {"d.smd"})


def test_a_name_too_long_replaces_none_of_the_files(tmp_path: Path) -> None:
    paths = three_old_files(tmp_path)
    too_long = tmp_path / ("x" * 300 + ".smd")
    with pytest.raises(OSError, match="too long"):
        write_files_atomically([(str(p), b"new") for p in [*paths, too_long]])
    assert_untouched(tmp_path, paths)


@pytest.mark.parametrize("failing_rename", range(1, 7))
def test_any_failing_rename_puts_every_old_file_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing_rename: int
) -> None:
    paths = three_old_files(tmp_path)
    real_replace = os.replace
    calls = []

    def replace(source: str, target: str) -> None:
        calls.append(target)
        if len(calls) == failing_rename:
            raise OSError(28, "No space left on device", target)
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="No space"):
        write_files_atomically([(str(p), b"new") for p in [*paths, tmp_path / "new.smd"]])
    monkeypatch.setattr(os, "replace", real_replace)
    assert_untouched(tmp_path, paths)


def test_every_file_is_replaced_when_nothing_fails(tmp_path: Path) -> None:
    paths = three_old_files(tmp_path)
    write_files_atomically([(str(p), b"new") for p in [*paths, tmp_path / "new.smd"]])
    assert [p.read_bytes() for p in [*paths, tmp_path / "new.smd"]] == [b"new"] * 4
    assert len(list(tmp_path.iterdir())) == 4


def full_disk(*_: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_disk_names_the_file_being_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(atomic, "write_content", full_disk)
    target = tmp_path / "model.joe"
    with pytest.raises(OSError) as raised:
        atomic.write_bytes_atomically(target, b"data")
    assert raised.value.filename == str(target) and "No space left on device" in str(raised.value)
    paths = three_old_files(tmp_path)
    with pytest.raises(OSError) as raised:
        write_files_atomically([(str(p), b"new") for p in paths])
    assert raised.value.filename == str(paths[0]) and raised.value.errno == errno.ENOSPC
    assert_untouched(tmp_path, paths)


def test_a_failed_rename_names_the_target_not_the_temporary_file(tmp_path: Path) -> None:
    too_long = tmp_path / ("x" * 300 + ".smd")
    for write in (lambda: atomic.write_bytes_atomically(too_long, b"new"),
                  lambda: write_files_atomically([(str(too_long), b"new")])):  # fmt: skip
        with pytest.raises(OSError) as raised:
            write()
        assert raised.value.filename == str(too_long)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("several", [False, True], ids=["one file", "files together"])
def test_a_link_is_written_through_and_a_pipe_is_written_into(tmp_path: Path, several: bool) -> None:
    real = tmp_path / "real.bin"
    real.write_bytes(b"old")
    link = tmp_path / "link.bin"
    link.symlink_to(real)

    def write(path: Path, data: bytes) -> None:
        if several:
            write_files_atomically([(str(path), data), (str(tmp_path / "other.bin"), b"other")])
        else:
            atomic.write_bytes_atomically(path, data)

    write(link, b"new")
    assert link.is_symlink() and real.read_bytes() == b"new"  # the link kept, its target replaced
    assert real.is_file() and not real.is_symlink()
    write(Path(os.devnull), b"discarded")  # a device: written into, never renamed over
    assert Path(os.devnull).is_char_device()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    write(fifo, b"through the pipe")
    reader.join(5)
    assert received == [b"through the pipe"] and fifo.is_fifo()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left


def test_a_loop_of_links_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    first, second = tmp_path / "loop1", tmp_path / "loop2"
    first.symlink_to(second)
    second.symlink_to(first)
    for write in (lambda: atomic.write_bytes_atomically(first, b"x"),
                  lambda: write_files_atomically([(str(first), b"x")])):  # fmt: skip
        with pytest.raises(OSError) as raised:
            write()
        assert raised.value.errno == errno.ELOOP and raised.value.filename == str(first)
    assert first.is_symlink() and second.is_symlink()
    from qmap_compiler import QmapError, writer

    with pytest.raises(QmapError, match="symbolic links"):
        writer.write_atomic(first, b"map")
    assert first.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == ["loop1", "loop2"]


def assert_modes_follow_the_umask_or_the_old_file(
    write: Callable[[Path], object], new: Path, kept: Path, content: bytes
) -> None:
    saved = os.umask(0o077)
    try:
        write(new)
    finally:
        os.umask(saved)
    assert new.stat().st_mode & 0o777 == 0o600
    kept.write_bytes(b"old")
    kept.chmod(0o751)
    write(kept)
    assert kept.read_bytes() == content and kept.stat().st_mode & 0o777 == 0o751


@pytest.mark.parametrize("several", [False, True], ids=["one file", "files together"])
def test_new_files_follow_the_umask_and_replaced_ones_keep_their_mode(tmp_path: Path, several: bool) -> None:
    def write(path: Path) -> None:
        if several:
            write_files_atomically([(str(path), b"data"), (str(path.with_suffix(".b")), b"more")])
        else:
            atomic.write_bytes_atomically(path, b"data")

    assert_modes_follow_the_umask_or_the_old_file(write, tmp_path / "new.a", tmp_path / "kept.a", b"data")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["new.a", "kept.a"] + (["new.b", "kept.b"] if several
                                                                                       else []))  # fmt: skip


@pytest.mark.parametrize("several", [False, True], ids=["one file", "files together"])
def test_a_write_protected_file_is_refused_and_left_as_it_is(tmp_path: Path, several: bool) -> None:
    locked = tmp_path / "locked.smd"
    locked.write_bytes(b"checked in")
    locked.chmod(0o444)  # (refused for root too, as CI runs: nobody may write it)
    with pytest.raises(PermissionError, match="write-protected") as caught:
        if several:
            write_files_atomically([(str(tmp_path / "other.vta"), b"new"), (str(locked), b"new")])
        else:
            atomic.write_bytes_atomically(locked, b"new")
    assert caught.value.filename == str(locked)
    assert locked.read_bytes() == b"checked in" and sorted(p.name for p in tmp_path.iterdir()) == ["locked.smd"]


def test_a_temporary_file_is_named_after_its_target(tmp_path: Path) -> None:
    fd, path = atomic.new_temporary(str(tmp_path / "model.iqe"), ".tmp")
    os.close(fd)
    assert Path(path).name.startswith(".model.iqe.") and path.endswith(".tmp")
    fd, path = atomic.new_temporary(str(tmp_path / ("é" * 127 + ".smd")), ".tmp")  # 254 bytes: the name is cut
    os.close(fd)
    assert len(Path(path).name.encode()) <= 255


def test_the_compilers_writer_follows_the_umask_keeps_modes_and_refuses_a_locked_file(tmp_path: Path) -> None:
    from qmap_compiler import writer
    from qmap_compiler.errors import QmapError

    kept = tmp_path / "kept.qmap"
    assert_modes_follow_the_umask_or_the_old_file(lambda path: writer.write_atomic(path, b"map"),
                                                  tmp_path / "new.qmap", kept, b"map")  # fmt: skip
    kept.chmod(0o444)  # (refused for root too, as CI runs: nobody may write it)
    with pytest.raises(QmapError, match="the file is write-protected"):
        writer.write_atomic(kept, b"other")
    assert kept.read_bytes() == b"map" and sorted(p.name for p in tmp_path.iterdir()) == ["kept.qmap", "new.qmap"]
    locked_folder = tmp_path / "locked"
    locked_folder.mkdir()
    locked_folder.chmod(0o555)
    try:
        with pytest.raises(QmapError, match="the folder is write-protected"):
            writer.write_atomic(locked_folder / "new.qmap", b"map")
        with pytest.raises(PermissionError, match="the folder is write-protected"):
            atomic.write_bytes_atomically(locked_folder / "new.iqe", b"iqe")
        assert list(locked_folder.iterdir()) == []
    finally:
        locked_folder.chmod(0o755)


@pytest.mark.skipif(os.name == "nt" or sys.getfilesystemencoding() != "utf-8", reason="POSIX names of raw bytes")
def test_a_name_that_is_not_utf8_is_written_like_any_other(tmp_path: Path) -> None:
    from qmap_compiler import writer

    names = [os.fsdecode(b"mod\xe8le" + suffix) for suffix in (b".iqe", b".smd", b".vta", b".qmap")]
    atomic.write_bytes_atomically(tmp_path / names[0], b"iqe")
    write_files_atomically([(str(tmp_path / names[1]), b"smd"), (str(tmp_path / names[2]), b"vta")])
    writer.write_atomic(tmp_path / names[3], b"map")
    assert sorted(os.listdir(tmp_path)) == sorted(names)
    assert atomic.short_file_name("é" * 100, 181).encode() == "é".encode() * 90  # (never half a character)
    long_name = "é" * 125 + ".qmap"  # 255 bytes: the temporary file's name is cut
    writer.write_atomic(tmp_path / long_name, b"map")
    assert (tmp_path / long_name).read_bytes() == b"map"
