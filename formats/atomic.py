"""Write files so that an existing target is either fully replaced or left byte-identical."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from typing import BinaryIO, cast

Content = bytes | Iterable[bytes]  # a file's bytes, or pieces of them in order (an iterator: made while written)
_PIECES_PER_WRITE = 16384  # small pieces are joined this many at a time: the joined bytes stay in the caches
_JOINED_BYTES = 4 << 20  # unless they hold more than this


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """Yield a binary file that becomes `path` only when the block finishes without an exception. A symbolic link
    is written through (its target replaced, the link kept); a device or a pipe (/dev/null, a FIFO) is written
    directly, as nothing can be renamed over it."""
    target, special = _write_target(os.fspath(path))
    if special:
        try:
            with open(target, "wb") as stream:
                yield stream
        except OSError as error:
            raise naming(target, error) from error
        return
    folder = os.path.dirname(os.path.abspath(target))
    try:
        fd, temp_path = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=folder)
    except OSError as error:
        raise naming(target, error) from error
    try:
        with os.fdopen(fd, "wb") as stream:
            yield stream
        os.chmod(temp_path, _permissions_for(target))
        os.replace(temp_path, target)
    except OSError as error:
        _remove_quietly(temp_path)
        raise naming(target, error) from error
    except BaseException:
        _remove_quietly(temp_path)
        raise


def _write_target(path: str) -> tuple[str, bool]:
    """The file to write for `path` (a link's target) and whether it is a device or pipe rather than a file."""
    target = os.path.realpath(path) if os.path.islink(path) else path
    if os.path.islink(target):  # a loop of links: realpath gives up on it
        raise naming(path, OSError(errno.ELOOP, os.strerror(errno.ELOOP)))
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return target, False
    return target, not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def naming(target: str, error: OSError) -> OSError:
    """The error with the file the user asked for as its filename: a full disk, a write refused or a rename that
    failed then says which file (a failed write names none, a failed rename its temporary file)."""
    return type(error)(error.errno, error.strerror or str(error), target)


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
    """The bytes, or the pieces in order: many small pieces joined for one write, a batch holding large ones written
    piece by piece (never joined into a copy of a large text). Pieces that are not a sequence are made as they are
    written, each written as made (such makers make large pieces): the whole text is never held."""
    if isinstance(content, bytes):
        stream.write(content)
        return
    if not isinstance(content, Sequence):
        for piece in content:
            stream.write(piece)
        return
    pieces = cast(Sequence[bytes], content)
    for start in range(0, len(pieces), _PIECES_PER_WRITE):
        batch = pieces[start : start + _PIECES_PER_WRITE]
        if len(batch) > 1 and sum(map(len, batch)) <= _JOINED_BYTES:
            stream.write(b"".join(batch))
        else:
            stream.writelines(batch)


def write_files_atomically(files: Sequence[tuple[str, Content]]) -> None:
    """Several files that belong together: every one is replaced, or none is, and no temporary file is left.

    All are written to temporary files first. Then each existing target is moved aside to a backup and its new
    file renamed into place; if any of those steps fails (a target is a folder, a name too long, a full disk),
    the new files are removed and the backups put back. Only a crash between the renames can leave a mix."""
    resolved = [_write_target(os.fspath(path)) for path, _ in files]  # (a link's target; devices and pipes)
    targets = [os.path.abspath(target) for target, _ in resolved]
    if len(set(targets)) != len(targets):
        duplicates = sorted({t for t in targets if targets.count(t) > 1})
        raise ValueError(f"two outputs would be written to the same file: {', '.join(duplicates)}")
    for target in targets:
        if os.path.isdir(target):
            raise IsADirectoryError(errno.EISDIR, "a folder has this name", target)
    staged: list[tuple[str, str]] = []
    special = [(target, data) for target, (_, is_special), (_, data) in zip(targets, resolved, files, strict=True)
               if is_special]  # fmt: skip
    try:
        for target, (_, is_special), (_, data) in zip(targets, resolved, files, strict=True):
            if is_special:
                continue  # written directly once the others are in place
            try:
                fd, temp_path = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=os.path.dirname(target))
                staged.append((temp_path, target))
                with os.fdopen(fd, "wb") as stream:
                    write_content(stream, data)
                os.chmod(temp_path, _permissions_for(target))
            except OSError as error:
                raise naming(target, error) from error
        _swap_into_place(staged)
    except BaseException:
        for temp_path, _ in staged:
            _remove_quietly(temp_path)
        raise
    for target, data in special:
        write_bytes_atomically(target, data)


def _swap_into_place(staged: Sequence[tuple[str, str]]) -> None:
    backups: list[tuple[str, str]] = []  # (backup, target): the old file, moved aside
    placed: list[str] = []  # targets that hold their new file
    target = ""
    try:
        for temp_path, target in staged:
            if os.path.lexists(target):
                fd, backup = tempfile.mkstemp(prefix=".", suffix=".old", dir=os.path.dirname(target))
                os.close(fd)
                try:
                    os.replace(target, backup)
                except BaseException:
                    _remove_quietly(backup)
                    raise
                backups.append((backup, target))
            os.replace(temp_path, target)
            placed.append(target)
    except BaseException as error:
        for new_file in placed:
            _remove_quietly(new_file)
        for backup, old_file in reversed(backups):
            with contextlib.suppress(OSError):
                os.replace(backup, old_file)
        if isinstance(error, OSError):
            raise naming(target, error) from error
        raise
    for backup, _ in backups:
        _remove_quietly(backup)


def _remove_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
