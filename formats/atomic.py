"""Write files so that an existing target is either fully replaced or left byte-identical."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Sequence
from typing import BinaryIO

Content = bytes | Sequence[bytes]  # a file's bytes, or pieces of them in order
_PIECES_PER_WRITE = 16384  # small pieces are joined this many at a time: the joined bytes stay in the caches


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """Yield a binary file that becomes `path` only when the block finishes without an exception."""
    target = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(target))
    fd, temp_path = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as stream:
            yield stream
        os.chmod(temp_path, _permissions_for(target))
        os.replace(temp_path, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_path)
        raise


def _permissions_for(target: str) -> int:
    """Keep an existing file's mode; a new file gets the usual umask-based mode, not mkstemp's 0600."""
    try:
        return os.stat(target).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_bytes_atomically(path: str | os.PathLike[str], data: Content) -> None:
    with atomic_writer(path) as stream:
        write_content(stream, data)


def write_content(stream: BinaryIO, content: Content) -> None:
    if isinstance(content, bytes):
        stream.write(content)
        return
    for start in range(0, len(content), _PIECES_PER_WRITE):
        stream.write(b"".join(content[start : start + _PIECES_PER_WRITE]))


def write_files_atomically(files: Sequence[tuple[str, Content]]) -> None:
    """Several files that belong together: all are written to temporary files first and renamed into place
    only when every one was written, so a failure replaces none of them."""
    targets = [os.path.abspath(path) for path, _ in files]
    if len(set(targets)) != len(targets):
        duplicates = sorted({t for t in targets if targets.count(t) > 1})
        raise ValueError(f"two outputs would be written to the same file: {', '.join(duplicates)}")
    written: list[tuple[str, str]] = []
    try:
        for target, (_, data) in zip(targets, files, strict=True):
            fd, temp_path = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=os.path.dirname(target))
            written.append((temp_path, target))
            with os.fdopen(fd, "wb") as stream:
                write_content(stream, data)
            os.chmod(temp_path, _permissions_for(target))
    except BaseException:
        for temp_path, _ in written:
            with contextlib.suppress(OSError):
                os.unlink(temp_path)
        raise
    for temp_path, target in written:
        os.replace(temp_path, target)
