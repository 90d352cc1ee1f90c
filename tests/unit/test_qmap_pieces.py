"""The QMAP compiler works on bounded pieces (groups of blocks, blocks of faces, pieces of the output): the bytes
must not depend on where the pieces are cut."""

from __future__ import annotations

import contextlib
import functools
import io
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from qmap_compiler import (
    CompileOptions,
    CompileReport,
    QmapError,
    blockscan,
    compile_bytes,
    compile_documents,
    compile_faces,
    compile_map,
    frontend,
    layout,
    model_faces,
    parallel,
    parse_desc,
    parse_tmp,
    serialize,
    writer,
)
from qmap_compiler.model import VertexRows, vertex_table


def _scene(seed: int, meshes: int, flawed: bool = False, without_zero_area: bool = False) -> tuple[bytes, bytes]:
    """Meshes of random triangles and quads with UVs (some without), over a few materials, and a desc. `flawed`:
    some faces have zero area (NaN frames), some have all corners at one UV (NaN tangents); `without_zero_area`
    leaves the zero-area ones out (the same scene otherwise)."""
    rng = np.random.default_rng(seed)
    text = ["QMAP TMP 10", "objects {"]
    for index in range(meshes):
        has_uv = index % 4 != 3
        vertex_count = int(rng.integers(4, 40))
        text += [f' mesh "M{index}" {{', " 0,0,0", f" {rng.random():.3f},0,0", " 1,1,1", " 30", f" {int(has_uv)}",
                 ' materials 3 { "Stone" "Wood" "Glass" }', f" vertices {vertex_count} {{"]  # fmt: skip
        text += [" " + ",".join(f"{value:f}" for value in rng.uniform(-20, 20, 3)) for _ in range(vertex_count)]
        text.append(" }")
        lines = []
        for _ in range(int(rng.integers(1, 30))):
            size = int(rng.integers(3, 5))
            corners = rng.choice(vertex_count, size, replace=False)
            flaw = int(rng.integers(5)) if flawed else 0
            if flaw == 1:
                corners[:] = corners[0]
            uv = (lambda: " " + ",".join(f"{value:f}" for value in rng.random(2))) if has_uv else (lambda: "")
            if flaw == 2 and has_uv:
                uv = lambda: " 0.25,0.75"  # noqa: E731
            parts = [f"{corner}{uv()}" for corner in corners]
            line = f"  {size} {rng.integers(3)} 1 " + " ".join(parts)
            if not (flaw == 1 and without_zero_area):
                lines.append(line)
        text += [f" faces {len(lines)} {{", *lines]
        text += [" }", " }"]
    text.append("}")
    desc = 'QMAP DESC 10\nmaterials {\n "Glass" { tex gen; tex scale 0.5; }\n "Wood" { name "Timber"; }\n}\n'
    return ("\n".join(text) + "\n").encode(), desc.encode()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_output_does_not_depend_on_where_the_pieces_are_cut(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    tmp, desc = _scene(seed, 25)
    whole = compile_bytes(tmp, desc)
    monkeypatch.setattr(blockscan, "_GROUP_BYTES", 200)  # several blocks per group, and groups of one block
    monkeypatch.setattr(layout, "_FACES_AT_A_TIME", 3)
    monkeypatch.setattr(writer, "_EVENTS_PER_PIECE", 5)
    monkeypatch.setattr(writer, "_ROWS_PER_PIECE", 7)
    monkeypatch.setattr(frontend, "_FACES_PER_PIECE", 4)
    assert compile_bytes(tmp, desc) == whole


@pytest.mark.parametrize("drop", [False, True])
def test_faces_with_nan_frames_are_counted_and_dropped_alike_in_any_pieces(monkeypatch: pytest.MonkeyPatch,
                                                                          drop: bool) -> None:
    from qmap_compiler import compiler

    tmp, desc = _scene(7, 40, flawed=True)
    monkeypatch.setattr(compiler, "_THREADS_FROM_BYTES", 0)  # (pieces side by side where there are cores)
    whole_report = CompileReport()
    whole = compile_bytes(tmp, desc, CompileOptions(drop_degenerate=drop), report=whole_report)
    monkeypatch.setattr(frontend, "_FACES_PER_PIECE", 3)
    report = CompileReport()
    assert compile_bytes(tmp, desc, CompileOptions(drop_degenerate=drop), report=report) == whole
    assert report.degenerate_faces == whole_report.degenerate_faces > 0
    # (zero-area faces have NaN tangents too, and count among them where they are kept)
    assert report.nan_tangent_faces == whole_report.nan_tangent_faces > (0 if drop else report.degenerate_faces)
    assert any("degenerate texture coordinates" in warning for warning in report.warnings)
    assert report.warnings == whole_report.warnings
    every = CompileReport()
    compile_bytes(tmp, desc, report=every)
    if drop:  # as if they were not there
        assert report.faces == every.faces - report.degenerate_faces
        assert report.nan_tangent_faces == every.nan_tangent_faces - report.degenerate_faces
        assert whole == compile_bytes(*_scene(7, 40, flawed=True, without_zero_area=True))


def test_compiling_files_gives_the_bytes_of_compiling_in_memory(tmp_path: Path) -> None:
    tmp, desc = _scene(4, 12)
    (tmp_path / "m.qmap.tmp").write_bytes(tmp)
    (tmp_path / "m.qmap.desc").write_bytes(desc)
    compile_map(tmp_path / "m.qmap.tmp", tmp_path / "m.qmap.desc")
    assert (tmp_path / "m.qmap").read_bytes() == compile_bytes(tmp, desc)


def test_one_thread_or_several_give_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    from qmap_compiler import compiler

    tmp, desc = _scene(5, 30)
    monkeypatch.setattr(blockscan, "_GROUP_BYTES", 300)  # many groups, read side by side
    monkeypatch.setattr(parallel, "cores", lambda: 2)  # (on any machine)
    pools = []
    monkeypatch.setattr(parallel, "thread_pool", lambda *a: pools.append(a) or ThreadPoolExecutor(*a))
    monkeypatch.setattr(layout, "_FACES_AT_A_TIME", 16)  # vertex tables of several blocks, made ahead if threaded
    small = compile_bytes(tmp, desc)  # a small map: compiled without threads, written too
    assert not pools
    monkeypatch.setattr(compiler, "_THREADS_FROM_BYTES", 0)
    several = compile_bytes(tmp, desc)
    assert len(pools) >= 3  # blocks, octrees, front-end pieces
    monkeypatch.setattr(parallel, "worker_count", lambda: 1)
    assert compile_bytes(tmp, desc) == several == small


def test_one_at_a_time_holds_in_its_block_only() -> None:
    with parallel.one_at_a_time():
        assert parallel.worker_count() == 1
        with parallel.one_at_a_time(False):  # an inner block cannot lift it
            assert parallel.worker_count() == 1
    with parallel.one_at_a_time(False):
        assert parallel.worker_count() == min(4, parallel.cores())


def test_vertex_tables_made_while_writing_equal_whole_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    tmp, desc = _scene(6, 10)
    monkeypatch.setattr(layout, "_FACES_AT_A_TIME", 4)  # many blocks per table
    faces = model_faces(compile_documents(parse_tmp(tmp), parse_desc(desc)))
    whole = compile_faces(faces)
    deferred = compile_faces(faces, deferred=True)
    assert isinstance(deferred.draw_vertices, VertexRows) and isinstance(whole.draw_vertices, np.ndarray)
    for name in ("draw_vertices", "collision_vertices"):
        made = vertex_table(getattr(deferred, name))
        assert made.dtype == np.float32 and made.tobytes() == getattr(whole, name).tobytes()
    assert serialize(deferred) == serialize(whole)


def test_ordered_map_keeps_order_numpy_error_settings_and_raises_the_first_error() -> None:
    def square_or_fail(value: int) -> int:
        if value == 7:
            raise ValueError("seven")
        assert np.geterr()["over"] == "ignore"  # the caller's settings, in every thread
        return value * value

    with np.errstate(over="ignore"):
        assert parallel.ordered_map(square_or_fail, range(7)) == [v * v for v in range(7)]
        with pytest.raises(ValueError, match="seven"):
            parallel.ordered_map(square_or_fail, range(20))
        ahead = parallel.made_ahead(functools.partial(square_or_fail, value) for value in range(7))
        assert list(ahead) == [v * v for v in range(7)]  # (made on a second thread where there are two cores)
        with pytest.raises(ValueError, match="seven"):
            list(parallel.made_ahead(functools.partial(square_or_fail, value) for value in range(20)))
        for workers in (2, 3, 4):
            several = parallel.made_ahead([functools.partial(square_or_fail, value) for value in range(7)], workers)
            assert list(several) == [v * v for v in range(7)]
            with pytest.raises(ValueError, match="seven"):
                list(parallel.made_ahead([functools.partial(square_or_fail, value) for value in range(20)], workers))


def test_made_ahead_holds_at_most_its_workers_results_beyond_the_one_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "cores", lambda: 4)
    started: list[int] = []

    def make(value: int) -> int:
        started.append(value)
        return value

    stream = parallel.made_ahead([functools.partial(make, value) for value in range(10)], 2)
    assert next(stream) == 0
    time.sleep(0.05)
    assert max(started) <= 2  # 0 taken; 1 and 2 made (or making) meanwhile, no further
    assert list(stream) == list(range(1, 10))


def test_a_failure_while_writing_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "m.qmap"
    target.write_bytes(b"old")

    def pieces_then_failure() -> Iterator[bytes]:
        yield b"new " * 1000
        raise QmapError("made while writing")

    with pytest.raises(QmapError, match="made while writing"):
        writer.write_atomic(target, pieces_then_failure())
    with pytest.raises(TypeError):  # refused by the writing thread, raised in the caller's
        writer.write_atomic(target, iter([b"new", 12345, b"more"]))  # type: ignore[list-item]
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["m.qmap"]
    writer.write_atomic(target, (bytes([n]) * 100_000 for n in range(40)))  # more pieces than the queue holds
    assert target.read_bytes() == b"".join(bytes([n]) * 100_000 for n in range(40))


@pytest.mark.parametrize("after_pieces", [3, 40])  # while pieces are made, or when the last is queued
def test_an_interrupt_ends_the_writing_thread_too(after_pieces: int) -> None:
    import _thread
    import threading
    import time

    class SlowStream:
        def write(self, data: bytes) -> int:
            time.sleep(0.01)
            return len(data)

    def pieces() -> Iterator[bytes]:
        for index in range(40):
            if index == after_pieces - 1:
                _thread.interrupt_main()  # Ctrl+C, taken wherever the main thread is next
            yield b"x"

    with interruptible(), pytest.raises(KeyboardInterrupt):
        writer._write_pieces(SlowStream(), pieces())  # type: ignore[arg-type]
        time.sleep(1)  # (should the interrupt come only after the call)
    assert not [thread for thread in threading.enumerate() if thread.name == "qmap-writer"]


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Ctrl+C raises KeyboardInterrupt meanwhile, also in a process started with SIGINT ignored (a background job
    of a non-interactive shell is), where interrupt_main() would do nothing."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def test_an_interrupt_while_the_queue_is_full_still_ends_the_writing_thread() -> None:
    import _thread
    import threading
    import time

    class SlowStream:
        def write(self, data: bytes) -> int:
            time.sleep(0.05)
            return len(data)

    def pieces() -> Iterator[bytes]:
        yield from [b"x"] * 20  # the queue fills up behind the slow writes
        threading.Timer(0.02, _thread.interrupt_main).start()  # Ctrl+C while the error is being handled
        raise ValueError("a piece could not be made")

    with interruptible(), pytest.raises((ValueError, KeyboardInterrupt)):
        writer._write_pieces(SlowStream(), pieces())  # type: ignore[arg-type]
        time.sleep(2)  # (should the interrupt come only after the call)
    deadline = time.monotonic() + 2
    while [t for t in threading.enumerate() if t.name == "qmap-writer"] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not [thread for thread in threading.enumerate() if thread.name == "qmap-writer"]


class _RecordingLibc:
    """Stands for glibc: records the malloc settings the compiler asks for."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []
        self.trim = lambda pad: self.calls.append(("trim", pad, 0)) or 1
        self.mallopt = lambda option, value: self.calls.append(("mallopt", option, value)) or 1


def test_freed_memory_is_kept_during_a_compile_and_handed_back_after_it_even_on_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from qmap_compiler import memory

    libc = _RecordingLibc()
    monkeypatch.setattr(memory, "_libc", libc)
    tmp, desc = _scene(4, 3)
    compile_bytes(tmp, desc)
    settings = [call for call in libc.calls if call[0] == "mallopt"]
    assert settings == [("mallopt", -3, 32 << 20), ("mallopt", -1, 1 << 30), ("mallopt", -1, 64 << 20)]
    assert libc.calls[-1] == ("trim", 0, 0)  # the kept memory handed back at the end
    libc.calls.clear()
    with pytest.raises(QmapError):
        compile_bytes(b"QMAP TMP 10\nobjects {\n mesh oops\n")
    assert [call for call in libc.calls if call[0] == "mallopt"][-1] == ("mallopt", -1, 64 << 20)
    libc.calls.clear()
    with memory.freed_memory_kept():  # nested (a compile inside a caller's block): set once, restored once
        compile_bytes(tmp, desc)
        assert [call[2] for call in libc.calls if call[0] == "mallopt"] == [32 << 20, 1 << 30]
    assert [call[2] for call in libc.calls if call[0] == "mallopt"] == [32 << 20, 1 << 30, 64 << 20]


@pytest.mark.parametrize("small", [True, False])
def test_a_small_map_keeps_freed_memory_between_stages_and_hands_it_back_once(monkeypatch: pytest.MonkeyPatch,
                                                                            small: bool) -> None:
    """Below the size where threads start, no stage trims (its freed memory is reused by the next ones); a larger
    map trims after the parse, the front end, the trees and the buffers' layout; both hand everything back at the
    end, with the same bytes."""
    from qmap_compiler import compiler, memory

    tmp, desc = _scene(4, 3)
    expected = compile_bytes(tmp, desc)
    libc = _RecordingLibc()
    monkeypatch.setattr(memory, "_libc", libc)
    if not small:
        monkeypatch.setattr(compiler, "_THREADS_FROM_BYTES", 0)
    assert compile_bytes(tmp, desc) == expected
    trims = [call for call in libc.calls if call[0] == "trim"]
    assert len(trims) == (1 if small else 5) and libc.calls[-1] == ("trim", 0, 0)
    libc.calls.clear()
    with memory.stage_memory_kept():  # outside a compile, as in it: a trim between stages is skipped, then not
        memory.release_stage_memory()
    memory.release_stage_memory()
    assert libc.calls == [("trim", 0, 0)]


@pytest.mark.parametrize(("count", "largest", "dtype"), [
    (0, 5, np.int64), (1, 5, np.int64), (1000, 7, np.int64), (100_000, 70_000, np.int64),
    (100_000, 2**31, np.int64), (5000, 3, np.int8), (5000, 60_000, np.uint32), (3000, 2**40, np.int64),
])  # fmt: skip
def test_stable_order_is_the_stable_argsort(count: int, largest: int, dtype: type) -> None:
    from qmap_compiler.arrays import stable_order

    keys = np.random.default_rng(count).integers(0, largest, count).astype(dtype)
    assert np.array_equal(stable_order(keys), np.argsort(keys, kind="stable"))


def test_rows_placed_as_bytes_are_float32_rows_whatever_the_tables_hold() -> None:
    """The vertex tables' rows are copied as byte items: a table of other floats is made float32 first, never cut."""
    from qmap_compiler import layout

    table = np.random.default_rng(5).normal(size=(7, 3))
    assert layout._items(table, 12).tobytes() == table.astype(np.float32).tobytes()


def test_the_write_back_of_the_file_is_started_stretch_by_stretch(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Every stretch of _WRITE_BACK_BYTES written is handed to the kernel's write-back once, in order, from the
    file's start; the file holds the same bytes with the real call (where there is one) and without it."""
    started: list[tuple[int, int]] = []
    real_starter = writer._write_back_starter
    monkeypatch.setattr(writer, "_WRITE_BACK_BYTES", 250_000)
    monkeypatch.setattr(writer, "_write_back_starter", lambda: lambda _handle, offset, count: started.append(
        (offset, count)))  # fmt: skip
    pieces = [bytes([n]) * (100_000 + 777 * n) for n in range(40)]
    target = tmp_path / "m.qmap"
    writer.write_atomic(target, iter(pieces))
    assert target.read_bytes() == b"".join(pieces)
    ends = np.cumsum([len(piece) for piece in pieces])
    assert [offset for offset, _ in started] == [0] + [offset + count for offset, count in started[:-1]]
    assert all(count >= 250_000 for _, count in started) and ends[-1] - sum(count for _, count in started) < 250_000
    assert {offset + count for offset, count in started} <= set(ends.tolist())
    monkeypatch.setattr(writer, "_write_back_starter", real_starter)
    target.write_bytes(b"old")
    writer.write_atomic(target, iter(pieces))
    assert target.read_bytes() == b"".join(pieces)
    stream_without_file = io.BytesIO()  # no file handle: nothing to start, and no error
    writer._write_pieces(stream_without_file, iter(pieces))
    assert stream_without_file.getvalue() == b"".join(pieces)


@pytest.mark.parametrize("faces_at_a_time", [5, 1 << 17])
def test_face_indices_follow_each_face_s_pattern(monkeypatch: pytest.MonkeyPatch, faces_at_a_time: int) -> None:
    """A triangle's indices are v, v+1, v+2 and a quad's v, v+1, v+2, v, v+2, v+3, v its first vertex, in face order
    (made a block of faces at a time)."""
    monkeypatch.setattr(layout, "_FACES_AT_A_TIME", faces_at_a_time)
    sizes = np.random.default_rng(2).choice(np.array([3, 4], np.int8), 1000)
    vertex_start = layout._exclusive_cumsum(sizes)
    index_start = layout._exclusive_cumsum(np.where(sizes == 4, 6, 3))
    expected = [v + step for v, size in zip(vertex_start.tolist(), sizes.tolist(), strict=False)
                for step in ([0, 1, 2] if size == 3 else [0, 1, 2, 0, 2, 3])]  # fmt: skip
    indices = layout._face_indices(sizes, vertex_start, index_start)
    assert indices.dtype == np.uint32 and indices.tolist() == expected


def test_blocks_of_every_kind_read_together_as_each_kind_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Vertex blocks and face blocks (with and without UVs) read in one map over all their groups give what each
    kind gives read alone, block for block (None where a block does not fit)."""
    rng = np.random.default_rng(9)
    text, vertex_blocks, faces_uv, faces_plain = bytearray(b"x"), [], [], []
    for index in range(30):
        count = int(rng.integers(1, 40))
        start = len(text)
        text += b"".join(b"%.9g,%.9g,%.9g\n" % tuple(row) for row in rng.standard_normal((count, 3)))
        vertex_blocks.append((start, len(text), count if index != 4 else count + 1))  # (one with the wrong count)
        text += b"}\n"
        for has_uv, blocks in ((True, faces_uv), (False, faces_plain)):
            start = len(text)
            for _ in range(int(rng.integers(1, 9))):
                corners = rng.integers(0, count, 4)
                uvs = [b" %.6f,%.9g" % tuple(rng.random(2)) if has_uv else b"" for _ in range(4)]
                text += b"4 1 0" + b"".join(b" %d%s" % (c, uv) for c, uv in zip(corners, uvs, strict=True)) + b"\n"
            blocks.append((start, len(text), text[start:].count(b"\n"), count))
            text += b"}\n"
    data = bytes(text)
    monkeypatch.setattr(blockscan, "_GROUP_BYTES", 200)  # many groups of each kind
    maps: list[int] = []
    real_map = blockscan.ordered_map
    monkeypatch.setattr(blockscan, "ordered_map", lambda *args: maps.append(1) or real_map(*args))
    together = blockscan.read_together([blockscan.vertex_plan(data, vertex_blocks),
                                        blockscan.face_plan(data, faces_uv, True),
                                        blockscan.face_plan(data, faces_plain, False)])  # fmt: skip
    assert len(maps) == 1
    alone = [blockscan.parse_vertex_blocks(data, vertex_blocks), blockscan.parse_face_blocks(data, faces_uv, True),
             blockscan.parse_face_blocks(data, faces_plain, False)]  # fmt: skip
    assert together[0][4] is None and sum(block is None for block in together[0]) == 1
    assert all(block is not None for block in together[1] + together[2])
    for kind_together, kind_alone in zip(together, alone, strict=True):
        assert len(kind_together) == len(kind_alone) == 30
        for one, other in zip(kind_together, kind_alone, strict=True):
            assert (one is None) == (other is None)
            if one is not None:
                pairs = zip(*[value if isinstance(value, tuple) else [value] for value in (one, other)], strict=True)
                for a, b in pairs:
                    assert (a is None and b is None) or (a.dtype == b.dtype and a.tobytes() == b.tobytes())


def test_a_parse_alone_keeps_freed_memory_while_it_reads_the_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """parse_tmp on its own (an import) keeps what the block groups free for the next groups and hands it back at
    the end; inside a compile it leaves the compile's settings alone."""
    from qmap_compiler import memory

    tmp, _desc = _scene(3, 4)
    libc = _RecordingLibc()
    monkeypatch.setattr(memory, "_libc", libc)
    expected = parse_tmp(tmp)
    assert [call for call in libc.calls if call[0] == "mallopt"] == [("mallopt", -3, 32 << 20),
                                                                     ("mallopt", -1, 1 << 30),
                                                                     ("mallopt", -1, 64 << 20)]  # fmt: skip
    assert libc.calls[-1] == ("trim", 0, 0)
    libc.calls.clear()
    with memory.freed_memory_kept():
        again = parse_tmp(tmp)
        assert [call for call in libc.calls if call[0] == "mallopt"] == [("mallopt", -3, 32 << 20),
                                                                         ("mallopt", -1, 1 << 30)]  # fmt: skip
    assert [mesh.vertices.tobytes() for mesh in again.meshes] == [mesh.vertices.tobytes() for mesh in expected.meshes]


@pytest.mark.parametrize("seed", range(5))
def test_tree_events_joined_into_one_key_are_in_lexsort_order(seed: int) -> None:
    """The order of a tree's openings and closings from one joined key is np.lexsort's of (depth key, phase,
    position): trees of every shape from the octree builder, one node, deep chains."""
    from qmap_compiler import octree, writer
    from qmap_compiler.layout import node_table

    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 3000))
    faces = rng.uniform(-1, 1, (count, 1, 3)) + 10.0 ** rng.uniform(-4, -1, (count, 1, 1)) * rng.uniform(
        -1, 1, (count, 4, 3))
    faces = faces.astype(np.float32)
    root = octree.root_bounds(faces)
    for rule in (octree.collision_split_rule, lambda local, nodes, ids: np.ones(nodes, bool)):
        table = node_table(octree.build_tree(faces, root, 0.25, int(rng.integers(0, 10)), rule))[0]
        pre = np.arange(table.count)
        expected = np.lexsort((np.concatenate([np.zeros(table.count, np.int64), -table.depth]),
                               np.concatenate([np.ones(table.count, np.int8), np.zeros(table.count, np.int8)]),
                               np.concatenate([pre, pre + table.subtree_size])))  # fmt: skip
        np.testing.assert_array_equal(writer._event_order(table), expected)
