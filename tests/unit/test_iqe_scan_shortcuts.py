"""The IQE reader's shortcuts for text as exporters write it give what the general paths give: token spans with
whitespace as every byte up to 32, the first token of each line found after newlines instead of searched, lines
that start with their token, command ids from a small table, the search for '#' after the header, the requested
tokens gathered line by line instead of sorted, float32's range checked piece by piece, integer checks, corner
indices without a backward search, and a mesh's corners when its faces are one run."""

from __future__ import annotations

import re

import numpy as np
import pytest

from formats.errors import FormatError
from formats.iqe import IqeDocument, IqeMesh, read_iqe, reader, write_iqe
from formats.iqe.scan import (
    COMMAND_ID,
    COMMENT,
    KEYWORD,
    _command_ids,
    _command_ids_bytewise,
    _first_token_starts,
    _line_first_tokens,
    _token_spans,
    _tokens_after_the_first,
    scan_lines,
    uniform_count,
)

LAYOUTS = [
    b"vp 1 2 3\nvt 0.5 0.25\nvn 0 0 1\nfm 0 1 2",  # as exporters write: one space, one newline
    b"vp 1 2 3\r\nvt 0.5 0.25\r\nfm 0 1 2",  # CR before each newline
    b"vp\t1 2 3\nvt 0.5\x0b0.25\nfm 0\x0c1 2",  # tab, vertical tab, form feed
    b"  vp 1 2 3\n\tvt 0.5 0.25\nfm 0 1 2",  # indented lines
    b"vp 1 2 3 \nvt 0.5 0.25  \nfm 0 1 2 ",  # trailing spaces
    b"vp 1 2 3\n\n\nvt 0.5 0.25\n \nfm 0 1 2",  # blank lines, one of a space
    b"vp 1\x012 3\nvt 0.5\x1f0.25\nfm \x00 1 2",  # control bytes that are no whitespace: inside tokens
    b"vp  1   2 3\nvt 0.5 0.25\nfm 0 1 2\n",  # double spaces, a newline at the end
    b"\n\nvp 1 2 3",  # blank lines first
    b"x",
    b"",
    b"\n",
]


def _exact_spans(text: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    space = np.ones(text.shape[0] + 2, np.bool_)
    space[1:-1] = (text == 32) | ((text >= 9) & (text <= 13))
    flips = np.flatnonzero(space[1:] != space[:-1]).reshape(-1, 2)
    return flips[:, 0], flips[:, 1]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_token_spans_and_line_first_tokens_equal_the_general_ones(layout: bytes) -> None:
    text = np.frombuffer(layout, np.uint8)
    expected_starts, expected_ends = _exact_spans(text)
    newlines = int(np.count_nonzero(text == 10))
    for count in (None, newlines):
        starts, ends = _token_spans(text, count)
        assert np.array_equal(starts, expected_starts) and np.array_equal(ends, expected_ends)
    line_starts = np.concatenate(([0], np.flatnonzero(text == 10) + 1)).astype(np.int64)
    firsts = _line_first_tokens(text, expected_starts, expected_ends, line_starts)
    assert np.array_equal(firsts, np.searchsorted(expected_starts, line_starts))
    assert firsts.dtype == np.searchsorted(expected_starts, line_starts).dtype


def test_line_first_tokens_of_a_piece_that_starts_a_line_later() -> None:
    """The lines of a piece start at their own offsets (the first 0 within the piece)."""
    text = np.frombuffer(b"vp 1 2 3\nvt 4 5\nvn 6 7 8", np.uint8)
    starts, ends = _token_spans(text, 2)
    assert np.array_equal(_line_first_tokens(text, starts, ends, np.array([0, 9, 16])), [0, 4, 7])
    assert np.array_equal(_line_first_tokens(text, starts, ends, np.array([0, 9])), np.searchsorted(starts, [0, 9]))


def test_integers_of_checked_values_are_those_of_the_general_path() -> None:
    scanned = scan_lines(b"# Inter-Quake Export\nfa 0 -0 7 -3 2147483647 -2147483647\n", None)
    lines = scanned.lines_of("fa")
    values, counts = scanned.numbers(lines, "'fa'")
    integers = scanned.integers(values, lines, counts, "'fa' vertex index")
    assert integers.dtype == np.int64
    assert integers.tolist() == [0, 0, 7, -3, 2147483647, -2147483647]
    only = np.array([True, True, False, True, True, True])
    assert scanned.integers(values, lines, counts, "x", only=only).tolist() == integers.tolist()


def _grid_mesh(name: str, material: str, offset: float) -> IqeMesh:
    positions = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], np.float32) + offset
    return IqeMesh(name, material, positions, face_corners=np.array([0, 1, 2, 0, 2, 3, 3, 2, 1], np.int32),
                   face_sizes=np.array([3, 3, 3], np.int32))  # fmt: skip


def test_faces_in_one_run_and_in_several_give_each_mesh_its_own_corners() -> None:
    document = IqeDocument(meshes=[_grid_mesh("a", "m1", 0.0), _grid_mesh("b", "m2", 5.0), _grid_mesh("c", "m1", 9.0)])
    text = write_iqe(document)
    read = read_iqe(text)
    assert [(m.name, m.material) for m in read.meshes] == [("a", "m1"), ("b", "m2"), ("c", "m1")]
    for mesh, source in zip(read.meshes, document.meshes, strict=True):
        assert np.array_equal(mesh.positions, source.positions)
        assert np.array_equal(mesh.face_sizes, source.face_sizes)
        assert np.array_equal(mesh.face_corners, source.face_corners)
    # a mesh block whose faces come in two runs (its material changes back and forth): the general path
    lines = text.decode().splitlines()
    at = lines.index('material "m1"', lines.index('mesh "a"'))
    faces = [i for i, line in enumerate(lines) if line.startswith("fm ") and i > at][:3]
    lines.insert(faces[1], 'material "m3"')
    lines.insert(faces[2] + 1, 'material "m1"')
    split = read_iqe("\n".join(lines).encode() + b"\n")
    keys = [(m.name, m.material, m.face_corners.tolist()) for m in split.meshes]
    assert keys == [("a", "m1", [0, 1, 2, 3, 2, 1]), ("a", "m3", [0, 1, 2]), ("b", "m2", [0, 1, 2, 0, 2, 3, 3, 2, 1]),
                    ("c", "m1", [0, 1, 2, 0, 2, 3, 3, 2, 1])]  # fmt: skip
    assert np.array_equal(split.meshes[1].positions, document.meshes[0].positions[[0, 2, 3]])


def test_negative_corner_indices_count_back_from_the_vertices_so_far() -> None:
    text = b"# Inter-Quake Export\nmesh a\nvp 0 0 0\nvp 1 0 0\nvp 0 1 0\nfa -3 -2 -1\nvp 1 1 0\nfa 1 -1 2\n"
    mesh = read_iqe(text).meshes[0]
    assert mesh.face_corners.tolist() == [0, 1, 2, 1, 3, 2]


@pytest.mark.parametrize("layout", [*LAYOUTS, b"vp 1\n  \nvt 2", b"vp 1\nvt 2\n", b"\tvp 1\nvt 2", b"# c\nvp 1"])
def test_first_token_of_each_line_and_its_command_as_found_one_at_a_time(layout: bytes) -> None:
    text = np.frombuffer(layout, np.uint8)
    line_starts = np.concatenate(([0], np.flatnonzero(text == 10) + 1)).astype(np.int64)
    line_lengths = np.diff(np.append(line_starts, len(layout) + 1)) - 1
    expected = []
    for start, length in zip(line_starts.tolist(), line_lengths.tolist(), strict=True):
        match = re.search(rb"[^ \t\n\r\x0b\x0c]", layout[start : start + length])
        expected.append(start + match.start() if match else -1)
    firsts = _first_token_starts(layout, line_starts, line_lengths)
    assert firsts.dtype == np.int64 and firsts.tolist() == expected
    with_token = firsts[firsts >= 0]
    assert _command_ids(text, with_token).tolist() == _command_ids_bytewise(text, with_token).tolist()


def test_command_ids_of_every_two_letter_word_equal_those_read_a_byte_at_a_time() -> None:
    words = [bytes((a, b, c)) for a in b"vfpx#V" for b in b"ptnxbcs0123456789qmaz#" for c in b" \tx"]
    layout = b"\n".join(words) + b"\nvp"
    text = np.frombuffer(layout, np.uint8)
    starts = np.arange(0, 4 * len(words) + 1, 4, dtype=np.int64)
    ids = _command_ids(text, starts)
    assert ids.tolist() == _command_ids_bytewise(text, starts).tolist()
    assert ids[-1] == ids[0] == COMMAND_ID["vp"] and (ids == KEYWORD).any() and (ids == COMMENT).any()


def test_a_hash_in_a_numeric_line_ends_it_but_the_header_is_no_command() -> None:
    header_only = b"# Inter-Quake Export # vp 1 2 3\nmesh a\nvp 1 2 3\nvp 4 5 6\nvp 7 8 9\nfm 0 1 2\n"
    assert read_iqe(header_only).meshes[0].positions.tolist() == [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    commented = header_only.replace(b"vp 4 5 6", b"vp 4 5 6 # 7 8")
    assert read_iqe(commented).meshes[0].positions.tolist() == [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert read_iqe(b"# Inter-Quake Export").meshes == []


def _tokens_by_sorting(line_firsts: np.ndarray, counts: np.ndarray, chosen: list[np.ndarray]) -> np.ndarray:
    """The tokens of the chosen lines but each line's first, request by request: a stable sort by request."""
    line_request = np.full(line_firsts.shape[0], len(chosen), np.int8)
    for index, lines in enumerate(chosen):
        line_request[lines] = index
    token_request = np.repeat(line_request, counts)
    token_request[line_firsts[line_request != len(chosen)]] = len(chosen)
    order = np.argsort(token_request, kind="stable")
    return order[: int(np.count_nonzero(token_request != len(chosen)))]


@pytest.mark.parametrize("seed", range(6))
def test_tokens_of_requested_lines_but_their_commands_equal_a_stable_sort_by_request(seed: int) -> None:
    random = np.random.default_rng(seed)
    counts = random.integers(1, 6, 400) if seed % 2 else np.tile([4, 3, 4, 2], 100)  # varied, or vertex-like
    line_firsts = np.cumsum(counts) - counts
    owner = random.integers(0, 4, 400) if seed % 3 else np.arange(400) % 4
    chosen = [np.flatnonzero(owner == request) for request in range(3)]  # (request 3's lines: not asked)
    expected = _tokens_by_sorting(line_firsts, counts, chosen)
    parts = [_tokens_after_the_first(line_firsts[lines], counts[lines]) for lines in chosen]
    assert np.array_equal(np.concatenate(parts), expected)
    assert [part.dtype for part in parts] == [np.int64] * 3
    assert _tokens_after_the_first(np.zeros(0, np.int64), np.zeros(0, np.int64)).shape == (0,)


def test_numbers_of_interleaved_commands_of_uneven_lines() -> None:
    lines = ["# Inter-Quake Export", "mesh a", "vp 1 2 3", "vt .5", "vn 0 0 1", "vp 4 5 6 7", "vt .25 .75",
             "vn 1 0 0", "vp 8 9 10", "vt 1 2 3", "vn 0 1 0", "fm 0 1 2", "fm 2 1 0 1"]  # fmt: skip
    scanned = scan_lines("\n".join(lines).encode(), None)
    requests = [(scanned.lines_of(command), command) for command in ("vp", "vt", "vn", "fm")]
    together = scanned.numbers_of_many(requests)
    for (request_lines, _), (values, counts) in zip(requests, together, strict=True):
        expected = [float(token) for line in request_lines.tolist() for token in lines[line].split()[1:]]
        assert values.tolist() == expected
        assert counts.tolist() == [len(lines[line].split()) - 1 for line in request_lines.tolist()]


@pytest.mark.parametrize("piece_bytes", [1 << 20, 64])
@pytest.mark.parametrize(("bad", "line", "token"), [("1e39", 41, 2), ("nan", 42, 1), ("-inf", 89, 3), (None, 0, 0)])
def test_a_number_float32_cannot_hold_is_reported_where_it_is(
    monkeypatch: pytest.MonkeyPatch, piece_bytes: int, bad: str | None, line: int, token: int
) -> None:
    """Checked piece by piece as the numbers are read (pieces of a few lines here, of a megabyte in files)."""
    monkeypatch.setattr("formats.iqe.scan._SCAN_BYTES", piece_bytes)
    lines = ["# Inter-Quake Export", "mesh a"]
    for vertex in range(50):
        lines += [f"vp {vertex} {vertex}.5 -{vertex}", f"vt 0.{vertex} {vertex}"]  # vp on odd lines, vt on even
    lines += ["fa 0 1 2"]
    if bad is None:
        assert len(read_iqe("\n".join(lines).encode()).meshes[0].positions) == 50
        return
    tokens = lines[line - 1].split()
    tokens[token] = bad
    lines[line - 1] = " ".join(tokens)
    column = len(" ".join(tokens[:token])) + 2
    with pytest.raises(FormatError) as caught:
        read_iqe("\n".join(lines).encode(), "x.iqe")
    assert str(caught.value) == f"x.iqe, line {line}, column {column}: '{tokens[0]}': the number is not finite or " \
                               "too large for a float"  # fmt: skip


@pytest.mark.parametrize("piece_bytes", [1 << 20, 64])
@pytest.mark.parametrize("bad", [None, "3.40282350e38", "-3.4028236e38", "1e39", "abc"])
def test_numbers_asked_for_as_float32_equal_the_doubles_rounded(
    monkeypatch: pytest.MonkeyPatch, piece_bytes: int, bad: str | None
) -> None:
    """Each piece's numbers converted to float32 as they are read give the float64 numbers' astype(float32); a
    piece holding a double float32 cannot hold (even one that would round down to its largest) reports it as the
    float64 path does."""
    monkeypatch.setattr("formats.iqe.scan._SCAN_BYTES", piece_bytes)
    random = np.random.default_rng(3)
    lines = ["# Inter-Quake Export", "mesh a"]
    for x, y, z in random.normal(0, 100, (60, 3)).tolist():
        lines += [f"vp {x:.9g} {y:.12f} {z:.3e}", "vt 3.4028234e38 .5", "vs 7"]  # (float32's largest, just held)
    lines += ["fm 0 1 2"]
    if bad is not None:
        lines[70] = f"vp 1 {bad} 2"
    scanned = scan_lines("\n".join(lines).encode(), "x.iqe")
    requests = [(scanned.lines_of(command), f"'{command}'") for command in ("vp", "vt", "vs", "fm")]
    outcomes = []
    for single in ([], [True, True, False, False]):
        try:
            outcomes.append([finish() for finish in scanned.numbers_later(requests, single)])
        except FormatError as error:
            outcomes.append(str(error))
    doubles, singles = outcomes
    if bad is not None:
        assert isinstance(doubles, str) and singles == doubles and "line 71" in doubles
        return
    assert not isinstance(doubles, str) and not isinstance(singles, str)
    for index, ((values, counts), (single_values, single_counts)) in enumerate(zip(doubles, singles, strict=True)):
        expected = values.astype(np.float32) if index < 2 else values
        assert single_values.dtype == expected.dtype
        assert np.array_equal(single_values.view(np.uint8), expected.view(np.uint8))
        assert np.array_equal(single_counts, counts)


@pytest.mark.parametrize("piece_bytes", [1 << 20, 48])
def test_counts_of_lines_of_one_shape_are_one_count_and_equal_each_lines(
    monkeypatch: pytest.MonkeyPatch, piece_bytes: int
) -> None:
    """A request whose every line has as many numbers gives its counts as a view of that one count (no array per
    line); pieces of different shapes, or lines of several, give them line by line: the same counts either way."""
    monkeypatch.setattr("formats.iqe.scan._SCAN_BYTES", piece_bytes)
    lines = ["# Inter-Quake Export", "mesh a"]
    for index in range(40):
        lines += [f"vp {index} 1 2", f"vt .5 .{index}", "vn 0 0 1" if index < 25 else "vn 0 0 1 7"]
    lines += ["fa 0 1 2", "fa 2 1 0", "fa 0 1 2 3 4", "fa 1 2 3"]
    scanned = scan_lines("\n".join(lines).encode(), None)
    requests = [(scanned.lines_of(command), command) for command in ("vp", "vt", "vn", "fa")]
    for (request_lines, _), (values, counts) in zip(requests, scanned.numbers_of_many(requests), strict=True):
        expected = [len(lines[line].split()) - 1 for line in request_lines.tolist()]
        assert counts.tolist() == expected
        assert values.tolist() == [float(t) for line in request_lines.tolist() for t in lines[line].split()[1:]]
        assert (counts.strides == (0,)) == (len(set(expected)) == 1)  # (the one-count view where it applies)
        assert uniform_count(counts) == (expected[0] if len(set(expected)) == 1 else None)


@pytest.mark.parametrize("piece_bytes", [1 << 20, 40])
def test_rows_of_positions_and_uvs_given_in_every_width_are_the_padded_ones(
    monkeypatch: pytest.MonkeyPatch, piece_bytes: int
) -> None:
    """Positions and UVs are kept as narrow as the columns read from them where every line gives as many numbers
    (a view of the numbers): each mesh's arrays are those of the padded rows, whatever the lines give."""
    monkeypatch.setattr("formats.iqe.scan._SCAN_BYTES", piece_bytes)
    random = np.random.default_rng(4)
    for vp_width, vt_width in [(3, 2), (4, 4), (1, 1), (2, 3), (3, 0), ("mixed", "mixed")]:
        lines = ["# Inter-Quake Export"]
        positions, uvs = [], []
        for mesh in range(3):
            lines.append(f"mesh m{mesh}")
            for _ in range(5):
                vp = int(random.integers(1, 5)) if vp_width == "mixed" else int(vp_width)
                vt = int(random.integers(1, 5)) if vt_width == "mixed" else int(vt_width)
                numbers = random.normal(0, 10, 4).round(3).tolist()
                lines.append("vp " + " ".join(map(str, numbers[:vp])))
                positions.append([*numbers[:vp], 0.0, 0.0, 0.0][:3])
                if vt_width:
                    lines.append("vt " + " ".join(map(str, numbers[:vt])))
                    uvs.append([*numbers[:vt], 0.0, 0.0][:2])
            lines += ["fm 0 1 2", "fm 2 3 4"]
        document = read_iqe("\n".join(lines).encode())
        got = np.concatenate([mesh.positions for mesh in document.meshes])
        assert all(mesh.positions.flags.c_contiguous and mesh.positions.dtype == np.float32 for mesh in document.meshes)
        assert np.array_equal(got, np.array(positions, np.float32))
        if vt_width:
            assert all(mesh.texcoords.shape[1] == 2 and mesh.texcoords.flags.c_contiguous for mesh in document.meshes)
            assert np.array_equal(np.concatenate([m.texcoords for m in document.meshes]), np.array(uvs, np.float32))


def test_corner_indices_of_fa_and_fm_resolve_as_the_general_sum() -> None:
    """`fa` indices (from the file's first vertex) are taken as they are, `fm` ones counted from their mesh's first
    vertex (one count repeated where every face has as many corners): the file's vertex of each corner as the
    general sum gives it (base + index, or the vertices so far + a negative index), for faces of one size and of
    several; an index past the vertices is reported."""
    head = ["# Inter-Quake Export", "mesh a", *["vp 0 0 0"] * 4, "mesh b", *["vp 1 1 1"] * 4]
    for faces, expected in [
        (["fm 0 1 2", "fm 1 2 3"], {"fm": [4, 5, 6, 5, 6, 7]}),
        (["fm 0 1 2 3", "fm 1 2 3"], {"fm": [4, 5, 6, 7, 5, 6, 7]}),
        (["fa 0 5 6", "fa 6 7 1"], {"fa": [0, 5, 6, 6, 7, 1]}),
        (["fa 0 5 6 1", "fa 6 7 1"], {"fa": [0, 5, 6, 1, 6, 7, 1]}),
        (["fa -1 -2 -3", "fm 0 1 2"], {"fa": [7, 6, 5], "fm": [4, 5, 6]}),
        (["fm -1 0 1", "fa 0 1 2 3"], {"fm": [7, 4, 5], "fa": [0, 1, 2, 3]}),
    ]:
        scanned = scan_lines("\n".join([*head, *faces]).encode(), None)
        vp_lines, mesh_lines = scanned.lines_of("vp"), np.array([1, 6], np.int64)
        for command, corners in expected.items():
            _, counts, resolved = reader._resolved_faces(scanned, command, vp_lines, mesh_lines, 8, None)
            assert resolved.tolist() == corners and counts.sum() == len(corners)
    for bad in (["fa 0 1 8"], ["fm 0 1 4"], ["fa -9 0 1"], ["fm 0 1 2", "fm 0 1 4"]):
        with pytest.raises(FormatError, match="refers to vertex"):
            read_iqe("\n".join([*head, *bad]).encode())
