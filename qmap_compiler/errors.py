"""The one exception type that the QMAP parsers, compiler and reader raise for bad input."""

from __future__ import annotations


class QmapError(Exception):
    """A problem with an input or output file, located by file, line and column (or byte offset)."""

    def __init__(
        self,
        message: str,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        offset: int | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.offset = offset
        super().__init__(self.location_prefix() + message)

    def location_prefix(self) -> str:
        """`file:line:column: `, `file: byte N: ` or `file: `, whichever the known location allows."""
        if self.file is None:
            return ""
        if self.line is not None and self.column is not None:
            return f"{self.file}:{self.line}:{self.column}: "
        if self.offset is not None:
            return f"{self.file}: byte {self.offset}: "
        return f"{self.file}: "
