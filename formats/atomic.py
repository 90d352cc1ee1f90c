"""Write files so that an existing target is either fully replaced or left byte-identical."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterable, Iterator, Sequence
from typing import BinaryIO, cast

Content = bytes | Iterable[bytes | memoryview]  # a file's bytes, or pieces of them in order (an iterator: made while
# written; a piece may be a view of an array's bytes)
_PIECES_PER_WRITE = 16384  # small pieces are joined this many at a time: the joined bytes stay in the caches
_JOINED_BYTES = 4 << 20  # unless they hold more than this
_ANY_WRITE = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH


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
    try:
        _refuse_write_protected(target)
        fd, temp_path = new_temporary(target, ".tmp")
    except OSError as error:
        raise naming(target, error) from error
    try:
        with os.fdopen(fd, "wb") as stream:
            yield stream
        _keep_mode(target, temp_path)
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


def new_temporary(target: str, suffix: str) -> tuple[int, str]:
    """A new file beside `target`, named after it (`.NAME.RANDOM.tmp`: a file left by a crash says whose it was),
    created with mode 0666 less the umask, as the target itself would be."""
    folder = os.path.dirname(os.path.abspath(target))
    stem = short_file_name(os.path.basename(target), 180)  # (room for the rest in 255 bytes)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        path = os.path.join(folder, f".{stem}.{secrets.token_hex(4)}{suffix}")
        try:
            return os.open(path, flags, 0o666), path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name", folder)


def short_file_name(name: str, most_bytes: int) -> str:
    """`name` cut to at most `most_bytes` in the file system's encoding, at the end of a character where it is UTF-8
    (a name that is not reaches Python with surrogate escapes: its bytes are cut as they are)."""
    encoded = os.fsencode(name)
    if len(encoded) <= most_bytes:
        return name
    for cut in range(most_bytes, max(most_bytes - 4, 0), -1):
        with contextlib.suppress(UnicodeDecodeError):
            return encoded[:cut].decode("utf-8")
    return os.fsdecode(encoded[:most_bytes])


def _keep_mode(target: str, temp_path: str) -> None:
    """A replaced file keeps its mode (a new one has the umask's, from new_temporary)."""
    with contextlib.suppress(FileNotFoundError):
        os.chmod(temp_path, os.stat(target).st_mode & 0o7777)


def _refuse_write_protected(target: str) -> None:
    """An existing file this user may not write, or nobody may (no write bit in its mode: root could still write
    it, as CI and containers run), stays as it is, as Blender's own exporters leave it, although the folder would
    let a new file be renamed over it: a read-only file is often a locked one (a checkout). A new file in a folder
    nobody may write is refused alike."""
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        try:
            folder_mode = os.stat(os.path.dirname(os.path.abspath(target))).st_mode
        except OSError:
            return  # (creating the file says what is wrong)
        if not folder_mode & _ANY_WRITE:
            raise PermissionError(errno.EACCES, "the folder is write-protected", target) from None
        return
    if not os.access(target, os.W_OK) or not mode & _ANY_WRITE:
        raise PermissionError(errno.EACCES, "the file is write-protected", target)


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
    pieces = cast(Sequence[bytes | memoryview], content)
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
        _refuse_write_protected(target)
    staged: list[tuple[str, str]] = []
    special = [(target, data) for target, (_, is_special), (_, data) in zip(targets, resolved, files, strict=True)
               if is_special]  # fmt: skip
    try:
        for target, (_, is_special), (_, data) in zip(targets, resolved, files, strict=True):
            if is_special:
                continue  # written directly once the others are in place
            try:
                fd, temp_path = new_temporary(target, ".tmp")
                staged.append((temp_path, target))
                with os.fdopen(fd, "wb") as stream:
                    write_content(stream, data)
                _keep_mode(target, temp_path)
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
                fd, backup = new_temporary(target, ".old")
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
