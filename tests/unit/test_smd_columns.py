"""The SMD reader's quick ways: numbers parsed a segment of the block at a time into one table when every line holds
as many, and the vertex columns read from that table, against the general passes on varied input."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from formats.errors import FormatError
from formats.smd import numeric, read_smd, reader


def _line(rng: np.random.Generator, links: int, extra: int = 0) -> str:
    numbers = [f"{rng.integers(0, 4)}"] + [f"{value:.6f}" for value in rng.uniform(-2000, 2000, 8)]
    if links >= 0:
        numbers.append(str(links))
        for _ in range(links):
            numbers += [str(rng.integers(0, 4)), f"{rng.uniform(0, 1):.6f}"]
        numbers += ["0"] * extra
    return " ".join(numbers)


def _text(lines: list[str], materials: list[str]) -> bytes:
    body = "".join(materials[t % len(materials)] + "\n" + "".join(line + "\n" for line in lines[3 * t : 3 * t + 3])
                   for t in range(len(lines) // 3))  # fmt: skip
    return f'version 1\nnodes\n0 "a" -1\n1 "b" 0\n2 "c" 1\n3 "d" 2\nend\ntriangles\n{body}end\n'.encode()


def _general_numbers(numbers: numeric.NumericLines) -> numeric.NumericLines:
    """The same numbers without `width`: every line's count and start as the general passes have them."""
    return numeric.NumericLines(np.array(numbers.values), np.array(numbers.counts))


def _as_plain(document: object) -> object:
    if dataclasses.is_dataclass(document):
        return {field.name: _as_plain(getattr(document, field.name)) for field in dataclasses.fields(document)}
    if isinstance(document, list):
        return [_as_plain(item) for item in document]
    if isinstance(document, np.ndarray):
        return str(document.dtype), document.shape, np.ascontiguousarray(document).tobytes()
    return document


@pytest.mark.parametrize("segment", [64, 1000, 1 << 18])
@pytest.mark.parametrize("shape", ["rigid", "goldsrc", "links", "mixed", "late change"])
@pytest.mark.parametrize("materials", [["skin"], ["skin", "metal_long_name"]])
def test_segments_of_the_block_read_as_the_padded_block(
    segment: int, shape: str, materials: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(len(shape) + segment)
    count = 3 * 300
    links = {"rigid": [0] * count, "goldsrc": [-1] * count, "links": [2] * count,
             "mixed": rng.integers(0, 4, count).tolist(),
             "late change": [1] * (count - 3) + [3, 0, 1]}[shape]  # fmt: skip
    lines = [_line(rng, link) for link in links]
    data = _text(lines, materials)
    monkeypatch.setattr(numeric, "_SEGMENT", segment)
    document = read_smd(data, "t.smd")
    # every line parsed at once from a padded copy of the block, the material lines blanked
    start = data.index(b"triangles\n") + len(b"triangles\n")
    block = data[start : data.rindex(b"end\n")]
    padded = numeric.padded_buffer(block.rstrip(b"\n"))
    block_lines = block.rstrip(b"\n").split(b"\n")
    offsets = np.cumsum([0] + [len(line) + 1 for line in block_lines[:-1]])
    for index in range(0, len(block_lines), 4):
        padded[numeric.PAD + offsets[index] : numeric.PAD + offsets[index] + len(block_lines[index]) + 1] = ord(" ")
    vertex_starts = np.array([offsets[i] for i in range(len(block_lines)) if i % 4], np.int64)
    expected = numeric.parse_padded_micro_units(padded, vertex_starts.size, vertex_starts)
    assert expected is not None and document.triangles is not None
    buffer = np.frombuffer(block.rstrip(b"\n"), np.uint8)
    material_starts = np.array(offsets[0::4], np.int64)
    lengths = np.array([len(line) + 1 for line in block_lines[0::4]], np.int64)
    one_line = len(materials) == 1
    bytes_ = None if one_line else reader._material_bytes(material_starts, lengths)
    blanker = reader._material_blanker(material_starts, lengths, bytes_)
    by_segment = numeric.parse_micro_units_by_segment(buffer, vertex_starts, blanker)
    assert by_segment is not None
    np.testing.assert_array_equal(by_segment.values, expected.values)
    np.testing.assert_array_equal(by_segment.counts, expected.counts)
    uniform = shape in ("rigid", "goldsrc", "links")
    assert (by_segment.width is not None) == uniform and (expected.width is not None) == uniform
    # the table's columns give the triangles the general passes give
    names = [materials[t % len(materials)] for t in range(count // 3)]
    indices = np.array([materials.index(name) for name in names], np.int32)
    line_numbers = list(range(count))
    quick = reader._VertexColumns(by_segment, lines, line_numbers, None).triangles(materials, indices)
    general_columns = reader._VertexColumns(_general_numbers(by_segment), lines, line_numbers, None)
    general = general_columns.triangles(materials, indices)
    assert _as_plain(quick) == _as_plain(general)
    assert _as_plain(document.triangles) == _as_plain(general)
    # and the corners of repeated lines (a line per corner, as the reader finds them), gathered from the table
    corner_lines = rng.integers(0, count, 3 * 500)
    quick_corners = reader._VertexColumns(by_segment, lines, line_numbers, None).triangles(materials, indices[:500],
                                                                                          corner_lines)  # fmt: skip
    assert _as_plain(quick_corners) == _as_plain(general_columns.triangles(materials, indices[:500], corner_lines))


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [(0, "1.500000", "parent bone"), (0, "-1", "parent bone"), (0, "3000000000", "parent bone"),
     (9, "-1", "link count"), (9, "0.500000", "link count"), (9, "2", "fewer weight links"), (0, "x", None)],
)  # fmt: skip
@pytest.mark.parametrize("row", [0, 4, 899])
def test_a_bad_number_of_a_table_is_reported_as_by_the_general_passes(
    column: int, value: str, message: str | None, row: int
) -> None:
    rng = np.random.default_rng(row)
    lines = [_line(rng, 1) for _ in range(900)]
    tokens = lines[row].split(" ")
    tokens[column] = value
    lines[row] = " ".join(tokens)
    data = _text(lines, ["skin"])
    numbers = numeric.parse_numeric_lines(lines, list(range(900)), None) if message else None
    if numbers is not None and numbers.width is not None:
        errors = []
        for given in (numbers, _general_numbers(numbers)):
            with pytest.raises(FormatError) as caught:
                reader._VertexColumns(given, lines, [10 + i for i in range(900)], None)
            errors.append((str(caught.value), caught.value.line, caught.value.column))
        assert errors[0] == errors[1] and message in errors[0][0]
    with pytest.raises(FormatError) as caught:
        read_smd(data, "t.smd")
    assert caught.value.line == 10 + row + row // 3  # (the nodes take 7 lines, then `triangles`, a material)


def test_line_numbers_of_every_vertex_line_as_counted() -> None:
    numbers = reader._LineNumbers(20, range(12), vertex_lines=True)
    expected = (20 + reader._block_line_of_vertex(np.arange(12))).tolist()
    assert [numbers[i] for i in range(12)] == expected
    assert numbers[2:7] == expected[2:7] and numbers[-1] == expected[-1] and len(numbers) == 12
    with pytest.raises(IndexError):
        numbers[12]


def test_columns_held_per_line_are_made_per_corner_as_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(4)
    pool = [_line(rng, int(links)) for links in rng.integers(0, 3, 200)]
    lines = [pool[i] for i in rng.integers(0, len(pool), 3 * 4000)]  # (repeated lines: read once each)
    data = _text(lines, ["skin", "metal"])
    monkeypatch.setattr(reader, "_PER_LINE_FROM", 1 << 40)
    at_once = read_smd(data, "t.smd").triangles
    monkeypatch.setattr(reader, "_PER_LINE_FROM", 1)
    held = read_smd(data, "t.smd").triangles
    assert at_once is not None and held is not None and held.corner_lines is not None
    assert at_once.line_rows("positions") is None
    line_corner = np.unique(held.corner_lines, return_index=True)[1]
    for name in ("positions", "normals", "uvs"):
        rows = held.line_rows(name)
        assert rows is not None  # the lines' rows: those of each line's first corner
        np.testing.assert_array_equal(rows, getattr(at_once, name).reshape(-1, rows.shape[1])[line_corner])
    assert _as_plain(held) == _as_plain(at_once)  # (every column asked for: made per corner)
    assert held.line_rows("positions") is None  # made: the per-corner array is the one to take
    again = read_smd(data, "t.smd").triangles
    assert again is not None
    again.corner_lines = None  # (per-corner arrays changed: their rows per line no longer stand for them)
    assert again.line_rows("normals") is None
    np.testing.assert_array_equal(again.normals, at_once.normals)
    with pytest.raises(AttributeError):
        again.not_a_column  # noqa: B018
