"""The one error type every codec raises, and the warning list codecs fill.

Nothing else may escape a reader: a fuzz test checks it. Positions are 1-based lines and columns for text
formats, 0-based byte offsets for binary formats.
"""

from __future__ import annotations

import contextlib
import io
import mmap
import os
import stat


class FormatError(Exception):
    """Bad input or an impossible export, with where it happened."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
        offset: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        self.offset = offset

    def with_path(self, path: str) -> FormatError:
        """Fill in the file name when the raising code did not know it."""
        if self.path is None:
            self.path = path
        return self

    def location(self) -> str:
        parts: list[str] = []
        if self.path:
            parts.append(self.path)
        if self.line is not None:
            parts.append(f"line {self.line}")
            if self.column is not None:
                parts.append(f"column {self.column}")
        if self.offset is not None:
            parts.append(f"byte {self.offset}")
        return ", ".join(parts)

    def __str__(self) -> str:
        where = self.location()
        return f"{where}: {self.message}" if where else self.message


class Warnings(list[str]):
    """Messages about input that was accepted but is suspicious; shown to the user once, with a count."""

    def add(self, message: str) -> None:
        self.append(message)


def read_file_bytes(path: str | os.PathLike[str]) -> bytes:
    """A file's bytes; an unreadable file is a FormatError too, naming it, like bad content. Only a regular file is
    read: a device or a pipe (/dev/zero) would be read until memory runs out, a FIFO would wait for a writer."""
    name = os.fspath(path)
    try:
        _check_regular(name)
        with open(name, "rb") as stream:
            return stream.read()
    except OSError as error:
        raise FormatError(f"cannot read the file: {error.strerror or error}", path=name) from error


FileBuffer = bytes | mmap.mmap  # what read_file_buffer gives: find, slicing to bytes, regular expressions, buffers
_HUGE_PAGES_FROM = 4 << 20  # bytes; below this, memory of huge pages would not be worth a mapping of its own


def read_file_buffer(path: str | os.PathLike[str]) -> FileBuffer:
    """read_file_bytes for large files that are read in bulk: where the system has huge pages, the bytes go into
    private memory advised to use them (a large `bytes` object is mapped 4 KB at a time, and on a virtual machine
    each page's first touch costs about as much as copying it: reading a 25 MB file took 13 ms instead of 4).
    The memory is a copy, not a mapping of the file: a file changed or cut short while it is read cannot crash."""
    name = os.fspath(path)
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    try:
        size = _check_regular(name)
        if advice is None or size < _HUGE_PAGES_FROM:
            return read_file_bytes(name)
        with open(name, "rb", buffering=0) as stream:
            memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            try:
                with contextlib.suppress(OSError):  # (advice: a kernel without huge pages still reads the file)
                    memory.madvise(advice)
                whole = _fill(stream, memory) == size and not stream.read(1)
            except BaseException:
                memory.close()
                raise
    except OSError as error:
        raise FormatError(f"cannot read the file: {error.strerror or error}", path=name) from error
    if not whole:  # (changed while read, shorter or longer: what is there now is read again, as plain bytes)
        memory.close()
        return read_file_bytes(name)
    return memory


def _fill(stream: io.FileIO, memory: mmap.mmap) -> int:
    """Bytes read into `memory` until it is full or the file ends (one read may give fewer than asked)."""
    view, filled = memoryview(memory), 0
    while filled < len(memory):
        count = stream.readinto(view[filled:])
        if not count:
            break
        filled += count
    view.release()
    return filled


def _check_regular(name: str) -> int:
    """The size of a regular file; anything else is refused."""
    status = os.stat(name)
    if not stat.S_ISREG(status.st_mode):
        raise FormatError("not a file to import (a folder, device or pipe)", path=name)
    return status.st_size
