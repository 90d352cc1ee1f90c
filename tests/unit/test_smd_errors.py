"""SMD / VTA reader errors: exact line and column, and a mutation fuzz test proving only FormatError escapes."""

from __future__ import annotations

import contextlib
import mmap
import os
import random

import pytest

from formats.errors import FormatError
from formats.smd import read_smd, write_smd

BASE = """version 1
nodes
0 "root" -1
1 "arm" 0
end
skeleton
time 0
0 0.000000 0.000000 0.000000 0.000000 0.000000 0.000000
1 1.000000 0.000000 0.000000 0.000000 0.000000 0.500000
end
triangles
skin
0 0.000000 0.000000 0.000000 0.000000 0.000000 1.000000 0.000000 0.000000 2 0 0.500000 1 0.500000
0 1.000000 0.000000 0.000000 0.000000 0.000000 1.000000 1.000000 0.000000 1 1 1.000000
0 1.000000 1.000000 0.000000 0.000000 0.000000 1.000000 1.000000 1.000000 0
end
vertexanimation
time 0
0 0.000000 0.000000 0.000000 0.000000 0.000000 1.000000
end
"""


def replace_line(number: int, text: str) -> bytes:
    lines = BASE.split("\n")
    lines[number - 1] = text
    return "\n".join(lines).encode()


@pytest.mark.parametrize(
    ("line", "text", "column", "message"),
    [
        (3, '0 "root -1', 3, "unterminated quote"),
        (3, 'x "root" -1', 1, "bone id"),
        (4, '1 "arm" 0 extra', 11, "expected a bone line"),
        (7, "time x", 6, "whole frame number"),
        (8, "0 0.000000 0.000000 abc 0.000000 0.000000 0.000000", 21, "expected a number"),
        (8, "0 0.000000 0.000000 0.000000 0.000000 0.000000", 47, "needs 7 numbers"),
        (9, "-1 1.000000 0.000000 0.000000 0.000000 0.000000 0.500000", 1, "bone id must be a whole number"),
        (
            13,
            "0 0.000000 0.000000 0.000000 0.000000 0.000000 1.000000 0.000000 0.000000 2 0 0.500000 1",
            89,
            "fewer weight links",
        ),
        (14, "0 1.000000 0.000000 0.000000 0.000000 0.000000 1.000000 1.000000", 65, "at least 9 numbers"),
        (14, "0.5 1.000000 0.000000 0.000000 0.000000 0.000000 1.000000 1.000000 0.000000 0", 1, "parent bone"),
        (15, "0 1.000000 1.000000 0.000000 0.000000 0.000000 1.000000 1.000000 1.000000 1.5 0 1", 75, "link count"),
        (15, "0 1.000000 1.000000 0.000000 0.000000 0.000000 1.000000 1.000000 1.0e999 0", 66, "out of range"),
        (15, "0 1.000000 1.000000 0.000000 0.000000 0.000000 1.000000 1.000000 1.000000 1 -2 1", 77, "link bone"),
        (19, "1 0 0 0 0 0", 12, "needs 7 numbers"),
        (1, "vershun 1", 1, "unknown keyword"),
        (1, "version one", 9, "whole number"),
        (11, "triangles please", 11, "unexpected text"),
    ],
)
def test_error_line_and_column(line: int, text: str, column: int, message: str) -> None:
    with pytest.raises(FormatError, match=message) as caught:
        read_smd(replace_line(line, text), "bad.smd")
    assert (caught.value.path, caught.value.line, caught.value.column) == ("bad.smd", line, column)


def test_data_before_time_and_vertex_line_as_material() -> None:
    with pytest.raises(FormatError, match="before the first 'time'") as caught:
        read_smd(BASE.replace("time 0\n0 0.000000", "0 0.000000", 1).encode())
    assert caught.value.line == 7
    doubled = BASE.replace(
        "0 1.000000 1.000000 0.000000", "0 1.000000 1.000000 0.000000 0 0 0 0 0 0\n0 1.000000 1.000000 0.000000", 1
    )
    with pytest.raises(FormatError):
        read_smd(doubled.encode())


def test_parent_loop_is_an_error() -> None:
    with pytest.raises(FormatError, match="parent loop"):
        read_smd(b'nodes\n0 "a" 1\n1 "b" 0\nend\n')


@pytest.mark.parametrize("data", [b"", b"\r\n  \t\n", b"// made by hand\n# nothing else\n; really\n"])
def test_an_empty_file_is_an_error(data: bytes) -> None:
    with pytest.raises(FormatError, match="empty file: an SMD or VTA file starts with a 'version' line") as caught:
        read_smd(data, "empty.smd")
    assert (caught.value.path, caught.value.line) == ("empty.smd", 1)


def test_a_version_line_without_blocks_is_still_read() -> None:
    doc = read_smd(b"// skeleton-only animations need no triangles\nversion 1\n")
    assert (doc.version, doc.nodes, doc.triangles) == (1, [], None)


def test_base_fixture_is_valid() -> None:
    doc = read_smd(BASE.encode())
    assert doc.triangles is not None and len(doc.triangles) == 1
    assert read_smd(write_smd(doc)).nodes == doc.nodes


FRAGMENTS = [
    b"",
    b" ",
    b"\n",
    b"\r\n",
    b"end",
    b"time",
    b"-",
    b".",
    b"1e9",
    b"nan",
    b'"',
    b"//",
    b"#",
    b"99999999999",
    b"\x00",
    b"\xff",
    b"triangles\n",
    b"0 0 0",
    b"-1",
    b"1.2.3",
    b"\t",
    b"inf",
    b"nodes\n",
]


def mutate(data: bytes, rng: random.Random) -> bytes:
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        position = rng.randrange(len(buffer) + 1)
        action = rng.randrange(4)
        if action == 0 and buffer:
            del buffer[position : position + rng.randint(1, 8)]
        elif action == 1:
            buffer[position:position] = rng.choice(FRAGMENTS)
        elif action == 2 and buffer:
            buffer[min(position, len(buffer) - 1)] = rng.randrange(256)
        else:
            start = rng.randrange(len(buffer) + 1)
            buffer[position:position] = buffer[start : start + rng.randint(1, 40)]
    return bytes(buffer)


def test_mutation_fuzz_only_format_error_escapes() -> None:
    count = int(os.environ.get("IOGF_FUZZ_COUNT", "3000"))
    rng = random.Random(20240601)
    seeds = [BASE.encode(), BASE.replace("\n", "\r\n").encode(), BASE.encode().replace(b"0.000000", b"0.0")]
    for _ in range(count):
        data = mutate(rng.choice(seeds), rng)
        try:
            doc = read_smd(data, "fuzz.smd")
        except FormatError as error:
            assert error.line is None or error.line >= 1
            continue
        with contextlib.suppress(FormatError):
            write_smd(doc)


def test_a_binary_file_is_called_so_not_quoted() -> None:
    from tests import joe_fixtures

    for data in (joe_fixtures.cube_bytes(), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"):  # a model, an image
        with pytest.raises(FormatError, match="not an SMD or VTA file: it holds binary data") as caught:
            read_smd(data, "cone.smd")
        assert len(str(caught.value)) < 200
    with pytest.raises(FormatError, match="not an SMD or VTA file: it starts with binary data") as caught:
        read_smd(b"\x01\x02\x03 1\n", "odd.smd")  # (no NUL: the first line's word says it)
    assert (caught.value.line, caught.value.column) == (1, 1)
    with pytest.raises(FormatError, match="binary data where an SMD keyword or block should be") as caught:
        read_smd(b"version 1\nnodes\n0 \"root\" -1\nend\n\x01\x02\x03\n", "cut.smd")
    assert caught.value.line == 5
    with pytest.raises(FormatError, match=r"unknown keyword 'x{40}\.\.\.'"):
        read_smd(b"x" * 300 + b" 1\n", "long.smd")


@pytest.mark.parametrize("line", [8, 13, 19], ids=["skeleton", "triangles", "vertexanimation"])
def test_a_long_run_of_digits_is_refused_at_once_at_its_column(line: int) -> None:
    from formats.smd import read_vta
    from tests.time_guard import no_runaway

    fields = BASE.split("\n")[line - 1].split(" ")
    fields[2] = "1" * 200_000 + "x"  # (a backtracking number pattern took hours on this)
    data = replace_line(line, " ".join(fields))
    for reader in (read_smd, read_vta) if line == 19 else (read_smd,):
        with no_runaway(), pytest.raises(FormatError) as raised:
            reader(data)
        assert (raised.value.line, raised.value.column) == (line, len(fields[0]) + len(fields[1]) + 3)
    if line != 19:
        assert "a word of 200,001 characters" in str(raised.value)


@pytest.mark.parametrize("form", ["bytes", "mapped", "CRLF"])
@pytest.mark.parametrize(
    ("line", "text", "column"),
    [(15, "0 1.000000 1.000000 0.000000 0.000000 0.000000 1.000000 1.000000 1.000000 1.5 0 1", 75),
     (19, "1 0 0 0 0 0", 12)],
)  # fmt: skip
def test_lines_after_blocks_are_numbered_alike_whatever_holds_the_text(
    form: str, line: int, text: str, column: int
) -> None:
    """The lines of each block taken are counted in the bytes of a file read into memory, among the line ends
    found in a file mapped into memory of its own, and in the text decoded from a file with CR LF line ends."""
    data = replace_line(line, text)
    if form == "CRLF":
        data = data.replace(b"\n", b"\r\n")
    held: bytes | mmap.mmap = data
    if form == "mapped":
        held = mmap.mmap(-1, len(data))
        held.write(data)
    with pytest.raises(FormatError) as caught:
        read_smd(held, "bad.smd")
    assert (caught.value.line, caught.value.column) == (line, column)
