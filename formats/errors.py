"""The one error type every codec raises, and the warning list codecs fill.

Nothing else may escape a reader: a fuzz test checks it. Positions are 1-based lines and columns for text
formats, 0-based byte offsets for binary formats.
"""

from __future__ import annotations

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
        if not stat.S_ISREG(os.stat(name).st_mode):
            raise FormatError("not a file to import (a folder, device or pipe)", path=name)
        with open(name, "rb") as stream:
            return stream.read()
    except OSError as error:
        raise FormatError(f"cannot read the file: {error.strerror or error}", path=name) from error
