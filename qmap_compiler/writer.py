"""Binary `.qmap` serialisation (spec §8) and the atomic file write.

A node is written as header (AABB + HasSubNodes), then its children, then its trailer (draw: fragment list;
collision: index range). The pieces are placed with vectorised offsets instead of a recursive walk.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import stat
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from queue import Empty, Queue
from typing import BinaryIO

import numpy as np

from .arrays import Array
from .errors import QmapError
from .f32math import canonical_nan
from .model import MAGIC, NodeTable, QmapModel, VertexRows

HEADER_BYTES = 25  # 6 floats + 1 flag byte


def _u32(value: int) -> bytes:
    return int(value).to_bytes(4, "little")


def _raw(array: Array) -> memoryview:
    """An array's bytes without a copy."""
    return np.ascontiguousarray(array).view(np.uint8).data


_ROWS_PER_PIECE = 1 << 16


def _float_pieces(table: Array | VertexRows) -> Iterator[memoryview]:
    """A float table as little-endian float32 with canonical NaNs, a bounded number of rows at a time (no copy of
    the whole table); a deferred table is made block by block meanwhile."""
    for rows in table.blocks() if isinstance(table, VertexRows) else [table]:
        for start in range(0, len(rows), _ROWS_PER_PIECE):
            piece = np.ascontiguousarray(rows[start : start + _ROWS_PER_PIECE], "<f4")
            yield _raw(canonical_nan(piece) if np.isnan(piece).any() else piece)  # (copied only to change NaNs)


def _headers(nodes: NodeTable) -> Array:
    """(N, 25) bytes: AABB as little-endian float32, then HasSubNodes."""
    out = np.empty((nodes.count, HEADER_BYTES), dtype=np.uint8)
    out[:, :24] = canonical_nan(nodes.boxes).astype("<f4").view(np.uint8).reshape(-1, 24)
    out[:, 24] = nodes.has_children
    return out


_EVENTS_PER_PIECE = 1 << 15


def _event_order(nodes: NodeTable) -> Array:
    """The order of the 2N events (node i's opening is event i, its closing event N + i): opening node i happens at
    (i, 1); closing it at (i + subtree_size, 0), deeper nodes closing first. The three keys joined into one
    integer and sorted stably: the order of np.lexsort of the three (openings come in order, closings nearly so:
    numpy's stable sort of one key runs through them several times quicker)."""
    count = nodes.count
    pre = np.arange(count, dtype=np.int64)
    deepest = int(nodes.depth.max()) if count else 0
    # (position, phase, depth key) as ((position * 2 + phase) * (deepest + 1) + depth key + deepest): every part
    # within its range, so that the integers sort as the keys do
    opening = (pre * 2 + 1) * (deepest + 1) + deepest
    closing = (pre + nodes.subtree_size.astype(np.int64)) * 2 * (deepest + 1) + (deepest - nodes.depth.astype(np.int64))
    events: Array = np.argsort(np.concatenate([opening, closing]), kind="stable")
    return events


def serialize_tree(nodes: NodeTable, trailer_bytes: Array, trailer_lengths: Array) -> Iterator[bytes]:
    """Headers (pre-order) interleaved with trailers (written when a node's subtree closes), as pieces of a
    bounded size: each piece gathers its bytes from one buffer holding every header, then every trailer."""
    count = nodes.count
    pre = np.arange(count)
    events = _event_order(nodes)
    source = np.concatenate([_headers(nodes).ravel(), trailer_bytes])
    trailer_starts = count * HEADER_BYTES + np.cumsum(trailer_lengths) - trailer_lengths
    starts = np.concatenate([pre * HEADER_BYTES, trailer_starts])[events]
    lengths = np.concatenate([np.full(count, HEADER_BYTES, np.int64), trailer_lengths.astype(np.int64)])[events]
    # (a byte index each: 4-byte indices are quicker to make and gather with, while the source allows them)
    index_type = np.int32 if source.shape[0] <= np.iinfo(np.int32).max else np.int64
    for begin in range(0, 2 * count, _EVENTS_PER_PIECE):
        piece = slice(begin, begin + _EVENTS_PER_PIECE)
        piece_starts, piece_lengths = starts[piece], lengths[piece]
        written_before = np.cumsum(piece_lengths) - piece_lengths
        gather = np.repeat((piece_starts - written_before).astype(index_type), piece_lengths)
        gather += np.arange(int(piece_lengths.sum()), dtype=index_type)
        yield source.take(gather).tobytes()


def _draw_trailers(model: QmapModel) -> tuple[Array, Array]:
    """Per node: u32 fragment count then the fragments' five u32 each, as one flat byte stream."""
    count = model.draw_nodes.count
    per_node = np.bincount(model.draw_fragments.node, minlength=count)
    words = np.zeros(count + 5 * len(model.draw_fragments.node), dtype="<u4")
    word_start = np.arange(count) + 5 * (np.cumsum(per_node) - per_node)
    words[word_start] = per_node
    rows = model.draw_fragments.as_rows()
    rank_in_node = np.arange(len(rows)) - (np.cumsum(per_node) - per_node)[model.draw_fragments.node]
    row_start = word_start[model.draw_fragments.node] + 1 + 5 * rank_in_node
    words[row_start[:, None] + np.arange(5)] = rows
    return words.view(np.uint8), (4 + 20 * per_node).astype(np.int64)


def _collision_trailers(model: QmapModel) -> tuple[Array, Array]:
    words = np.ascontiguousarray(model.collision_ranges, dtype="<u4").reshape(-1)
    return words.view(np.uint8), np.full(model.collision_nodes.count, 8, dtype=np.int64)


def serialize(model: QmapModel) -> bytes:
    """The complete `.qmap` file; raises QmapError for a name longer than 255 bytes."""
    return b"".join(serialize_parts(model))


def serialize_parts(model: QmapModel) -> Iterator[bytes | memoryview]:
    """The `.qmap` file as consecutive pieces, each made only when asked for: a large map is written piece by piece
    without the whole file in memory twice."""
    names = [MAGIC, _u32(len(model.materials))]
    for name in model.materials:
        if len(name) > 255:
            raise QmapError(f"material name of {len(name)} bytes is longer than 255 bytes")
        names += [bytes([len(name)]), name]
    yield b"".join(names)
    yield _u32(len(model.draw_vertices))
    yield from _float_pieces(model.draw_vertices)
    yield _u32(len(model.draw_indices))
    yield _raw(model.draw_indices.astype("<u4"))
    yield from serialize_tree(model.draw_nodes, *_draw_trailers(model))
    yield _u32(len(model.collision_vertices))
    yield from _float_pieces(model.collision_vertices)
    yield _u32(len(model.collision_indices))
    yield _raw(model.collision_indices.astype("<u4"))
    yield from serialize_tree(model.collision_nodes, *_collision_trailers(model))


def _locked(path: Path) -> bool:
    """This user may not write it, or nobody may (no write bit: root, as CI and containers run, still could)."""
    try:
        return not os.access(path, os.W_OK) or not path.stat().st_mode & 0o222
    except OSError:
        return False


def write_atomic(path: str | os.PathLike[str], data: bytes | Iterable[bytes | memoryview]) -> None:
    """Write to a temporary file next to `path`, then rename it into place; nothing partial is ever left. `data` is
    the bytes, or pieces written one after the other (made while writing, as `serialize_parts` makes them: the
    next pieces are made while a second thread writes the last ones)."""
    target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)  # a link: written through
    if target.is_symlink():  # a loop of links: realpath gives up on it
        raise QmapError("cannot write: too many levels of symbolic links", str(path))
    if _is_device_or_pipe(target):  # (/dev/null, a FIFO): written directly, nothing can be renamed over it
        try:
            with open(target, "wb") as stream:
                _write_pieces(stream, [data] if isinstance(data, bytes) else data)
        except OSError as error:
            raise QmapError(f"cannot write: {error.strerror}", str(target)) from None
        return
    folder = target.parent if str(target.parent) else Path(".")
    locked = target if target.exists() else folder
    if _locked(locked):  # a locked file (a checkout) stays as it is
        what = "file" if locked is target else "folder"
        raise QmapError(f"cannot write: the {what} is write-protected", str(target))
    try:
        handle, temporary = _new_part_file(target, folder)
    except OSError as error:
        raise QmapError(f"cannot create a file in {folder}: {error.strerror}", str(target)) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            _write_pieces(stream, [data] if isinstance(data, bytes) else data)
        if target.exists():  # a replaced file keeps its mode; a new one has the umask's (see _new_part_file)
            os.chmod(temporary, target.stat().st_mode & 0o7777)
        os.replace(temporary, target)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise QmapError(f"cannot write: {error.strerror}", str(target)) from None
        raise


def _new_part_file(target: Path, folder: Path) -> tuple[int, str]:
    """`.NAME.RANDOM.part` beside the target, made with mode 0666 less the umask, as a new file of that name."""
    stem = _short_name(target.name, 180)  # (room for the rest in 255 bytes)
    for _ in range(100):
        path = str(folder / f".{stem}.{secrets.token_hex(4)}.part")
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666), path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(folder))


def _short_name(name: str, most_bytes: int) -> str:
    """`name` cut to `most_bytes` at the end of a character where it is UTF-8 (a name that is not reaches Python
    with surrogate escapes: its bytes are cut as they are). The extension's formats/atomic.py has its twin: this
    package stands alone."""
    encoded = os.fsencode(name)
    if len(encoded) <= most_bytes:
        return name
    for cut in range(most_bytes, most_bytes - 4, -1):
        with contextlib.suppress(UnicodeDecodeError):
            return encoded[:cut].decode("utf-8")
    return os.fsdecode(encoded[:most_bytes])


def _is_device_or_pipe(path: Path) -> bool:
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


_PIECES_IN_FLIGHT = 8
_WRITE_BACK_BYTES = 16 << 20  # the kernel starts writing each such stretch to the disk as soon as it is written
_SYNC_FILE_RANGE_WRITE = 2


def _write_back_starter() -> Callable[[int, int, int], object]:
    """sync_file_range(fd, offset, count, SYNC_FILE_RANGE_WRITE) (Linux): the write-back of that stretch starts
    now, without waiting for it. Renaming the finished file over an existing one makes ext4 write back every page
    of the new file not yet written (so that a crash cannot leave it empty): 0.2 s for a 1M-face map's 280 MB,
    with nothing else left to overlap it. Started stretch by stretch while the pieces are made, little is left
    for the rename. Elsewhere (no such call): nothing."""
    with contextlib.suppress(OSError, AttributeError):
        function = ctypes.CDLL(None).sync_file_range
        function.argtypes = (ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint)
        function.restype = ctypes.c_int
        return lambda handle, offset, count: function(handle, offset, count, _SYNC_FILE_RANGE_WRITE)
    return lambda _handle, _offset, _count: None


def _file_handle(stream: BinaryIO) -> int | None:
    try:
        return stream.fileno()
    except (OSError, AttributeError, ValueError):  # (io.UnsupportedOperation is an OSError and a ValueError)
        return None


_POLL_SECONDS = 0.05  # how soon the writer notices that the other side stopped


def _write_pieces(stream: BinaryIO, pieces: Iterable[bytes | memoryview]) -> None:
    """Pieces made on this thread and written by another (the file's writes and the pieces' numpy work both let go
    of the interpreter lock); the first error of either side is raised here. When this side stops early (an error,
    an interrupt, wherever it strikes) the writer drops what is queued and ends before the error goes on."""
    queue: Queue[bytes | memoryview | None] = Queue(_PIECES_IN_FLIGHT)  # None: no more pieces
    failure: list[BaseException] = []
    stop = threading.Event()

    start_write_back = _write_back_starter()
    handle = _file_handle(stream)
    written = written_back = 0

    def write() -> None:
        nonlocal written, written_back
        while not stop.is_set():
            try:
                piece = queue.get(timeout=_POLL_SECONDS)
            except Empty:
                continue
            if piece is None:
                return
            if not failure:
                try:
                    stream.write(piece)
                    written += memoryview(piece).nbytes
                    if handle is not None and written - written_back >= _WRITE_BACK_BYTES:
                        start_write_back(handle, written_back, written - written_back)
                        written_back = written
                except BaseException as error:  # handed to the other thread, which raises it
                    failure.append(error)

    writer = threading.Thread(target=write, name="qmap-writer", daemon=True)
    writer.start()
    try:
        for piece in pieces:
            if failure:
                break
            queue.put(piece)
        queue.put(None)
        writer.join()
    except BaseException:
        stop.set()
        writer.join()
        raise
    if failure:
        raise failure[0]
