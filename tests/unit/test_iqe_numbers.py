"""The bulk number conversions of the IQE codec: text to float64 exactly as float() reads it, and float32 to
text that reads back to the same float32."""

from __future__ import annotations

import numpy as np
import pytest

from formats.errors import FormatError
from formats.iqe import IqeDocument, IqeMesh, faces_repeating_a_vertex, read_iqe, write_iqe
from formats.iqe.decimals import parse_decimals
from formats.iqe.numtext import compact, float_fields, int_fields, table_lines

TRICKY_TOKENS = [
    "0", "-0", "+5", "5.", ".5", "-.5", "+.5", "0.000123456789", "1234567890123456", "12345678901234567",
    "9007199254740993", "9007199254740991", "0.1", "123456789", "00000000000000001", "0000000000000000.5",
    "-0.0", "99999999.99999999", "1.2.3", "-", ".", "+.", "--5", "+-1", "1e5", "1E-5", "nan", "inf", "1_0",
    "1a", "a1", "0x10", "5-", "1.5e", "\u0661", "99999999999999.9", "0.000000000000001", "7.00000000", "-12.5",
]  # fmt: skip


def _tokens_of(text: bytes) -> tuple[np.ndarray, np.ndarray]:
    buffer = np.frombuffer(text, np.uint8)
    space = (buffer == 32) | ((buffer >= 9) & (buffer <= 13))
    start_mask, end_mask = ~space, ~space
    start_mask[1:] &= space[:-1]
    end_mask[:-1] &= space[1:]
    return np.flatnonzero(start_mask), np.flatnonzero(end_mask) + 1


def _float_or_none(token: bytes) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def test_parsed_decimals_equal_float_and_others_are_left_to_it() -> None:
    random = np.random.default_rng(7)
    values = np.concatenate(
        (
            random.random(5000) * 20 - 10,
            random.random(5000).astype(np.float32),
            random.integers(0, 10**9, 2000),
            random.random(2000) * 1e-4,
        )
    )
    generated = [f"{value:.9g}" for value in values.tolist()] + [f"{value:.15f}" for value in values[:3000].tolist()]
    everything = [token.encode() for token in TRICKY_TOKENS + generated]
    short = [token for token in everything if len(token.lstrip(b"+-")) <= 8]  # the one-word path
    whole = [token.encode() for token in ["0", "-0", "+7", "12345678", "-00000001", "1-", "7a", "-", "+"]]
    whole += [str(value).encode() for value in np.random.default_rng(8).integers(-(10**7), 10**8, 3000).tolist()]
    for tokens in (everything, short, whole):
        text = b" ".join(tokens) + b"\n"
        starts, ends = _tokens_of(text)
        assert starts.shape[0] == len(tokens)
        parsed_values, parsed = parse_decimals(np.frombuffer(text, np.uint8), starts, ends)
        assert parsed.sum() > 0.6 * len(tokens)  # not: exponents, .15f (over 16 characters)
        for token, value, ok in zip(tokens, parsed_values.tolist(), parsed.tolist(), strict=True):
            expected = _float_or_none(token)
            if ok:
                assert expected is not None, token
                assert value == expected and np.signbit(value) == np.signbit(expected), token
            elif tokens is whole and expected is not None:
                assert not token.lstrip(b"+-").isdigit() or len(token.lstrip(b"+-")) > 8, token


@pytest.mark.parametrize("lead", [0, 1, 5, 8, 11, 15, 16, 17, 30])
def test_parser_reads_tokens_at_both_ends_of_the_text_without_padding(lead: int) -> None:
    # Tokens are read from the 16 bytes that end with them: those ending in the first 16 bytes take another path.
    tokens = [b"1.25", b"-7", b"123456789.5", b"+0.5"]
    text = b" " * lead + b" ".join(tokens)
    starts, ends = _tokens_of(text)
    values, parsed = parse_decimals(np.frombuffer(text, np.uint8), starts, ends)
    assert parsed.all() and values.tolist() == [1.25, -7.0, 123456789.5, 0.5]


def _tokens(fields: list) -> list[bytes]:  # type: ignore[type-arg]
    return compact(table_lines(b"x", fields)).split()[1::2]


@pytest.mark.parametrize("seed", [0, 1])
def test_float_fields_read_back_to_the_same_float32(seed: int) -> None:
    random = np.random.default_rng(seed)
    bits = random.integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32)
    values = bits.view(np.float32)
    values = values[np.isfinite(values)]
    special = np.array(
        [0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 1e-5, 3.0517578125e-05, 999999.0, 999998.9, 1e6, 1e7, 16777216.0, 1e-45,
         3.4028235e38, -3.4028235e38, 1.1754944e-38, 9.999999, 0.99999994, 2.0**-15, 2.0**-16, 123.456],
        np.float32,
    )  # fmt: skip
    for sample in (values, special, (random.random(100_000) * 20 - 10).astype(np.float32)):
        fields = float_fields(sample)
        tokens = _tokens([fields])
        assert len(tokens) == sample.shape[0]
        assert fields.lengths.tolist() == [len(token) for token in tokens]
        back = np.array([float(token) for token in tokens]).astype(np.float32)
        assert np.array_equal(back.view(np.uint32), sample.view(np.uint32))
        assert max(len(token) for token in tokens) <= 16
    assert _tokens([float_fields(special)])[:6] == [b"0", b"-0", b"1", b"-1", b"0.100000001", b"0.5"]



@pytest.mark.parametrize("seed", [0, 1, 2])
def test_float32_fields_are_those_of_their_float64_values(seed: int) -> None:
    """float32 values are formatted as they are (no float64 copy and back): the same bytes and lengths as the same
    values given as float64, for a column of a table (strided), a whole array, few values and repeated ones, NaN
    and infinity among them."""
    random = np.random.default_rng(seed)
    bits = random.integers(0, 2**32, 30_000, dtype=np.uint64).astype(np.uint32)
    table = bits.view(np.float32).reshape(-1, 3).copy()
    for offset, special in enumerate((np.nan, np.inf, -np.inf, 0.0, -0.0)):
        table[offset::7, 1] = special
    table[:, 2] = random.choice(np.array([0.0, 0.25, -3.5, 1e-3], np.float32), len(table))  # (repeats: looked up)
    with np.errstate(invalid="ignore"):  # (NaN and infinity cast along the way, then written with %.9g)
        for values in (table[:, 0], table[:, 1], table[:, 2], table.ravel(), table[:50, 0], table[:0, 0]):
            single, double = float_fields(values), float_fields(values.astype(np.float64))
            assert single.chars.tobytes() == double.chars.tobytes() and single.chars.shape == double.chars.shape
            assert single.lengths.tolist() == double.lengths.tolist()


def test_int_fields() -> None:
    numbers = np.concatenate((np.arange(-1050, 1050), [0, 9_999_999, 10**7, -(10**7), 2**40, -(2**40), 2**31 - 1]))
    fields = int_fields(numbers)
    tokens = _tokens([fields])
    assert [int(token) for token in tokens] == numbers.tolist()
    assert fields.lengths.tolist() == [len(token) for token in tokens]


@pytest.mark.parametrize(("lowest", "highest"), [(0, 528), (-300, 40), (9_999_000, 9_999_999), (-9_999_999, -9_999_900),
                                                 (5, 5), (-10_000_000, -9_999_990), (10_000_000, 10_000_100)])
def test_int_fields_of_few_distinct_values_are_the_plain_ones(lowest: int, highest: int) -> None:
    """Many integers of a short span (a mesh's corners) are formatted once per value and looked up: the same
    bytes and lengths as formatting each (also at the limit of one word, and past it, where they are not)."""
    numbers = np.random.default_rng(abs(highest)).integers(lowest, highest + 1, 20_000)
    numbers[:2] = lowest, highest
    looked_up = int_fields(numbers)
    plain = [int_fields(part) for part in np.array_split(numbers, 10)]  # (too few each for the lookup)
    assert looked_up.chars.shape[1] == max(part.chars.shape[1] for part in plain)
    text = compact(table_lines(b"x", [looked_up], None))
    assert text == b"".join(compact(table_lines(b"x", [part], None)) for part in plain)
    np.testing.assert_array_equal(looked_up.lengths, np.concatenate([part.lengths for part in plain]))


def test_ragged_rows_and_empty_tables() -> None:
    table = [float_fields(np.array([1.5, 2.0, -3.25])), int_fields(np.array([7, 8, 9]))]
    text = compact(table_lines(b"vb", table, np.array([2, 1, 0])))
    assert text == b"vb 1.5 7\nvb 2\nvb\n"
    assert compact(table_lines(b"vp", [float_fields(np.zeros(0)), float_fields(np.zeros(0))])) == b""


def test_written_file_reads_back_bit_exactly() -> None:
    random = np.random.default_rng(3)
    bits = random.integers(0, 2**32, (3000, 3), dtype=np.uint64).astype(np.uint32)
    positions = bits.view(np.float32)
    positions[~np.isfinite(positions)] = 0.0
    normals = (random.random((3000, 3)) * 2 - 1).astype(np.float32)
    normals[::7] = np.array([0.0, -4.37113883e-08, 1.0], np.float32)
    corners = random.integers(0, 3000, 3000).astype(np.int32)
    mesh = IqeMesh("m", "", positions, normals=normals, face_corners=corners, face_sizes=np.full(1000, 3, np.int32))
    again = read_iqe(write_iqe(IqeDocument(meshes=[mesh]))).meshes[0]
    assert np.array_equal(again.positions.view(np.uint32), positions.view(np.uint32))
    assert np.array_equal(again.normals.view(np.uint32), normals.view(np.uint32))  # type: ignore[union-attr]
    assert np.array_equal(again.face_corners, corners)


def test_reader_takes_exponents_and_locates_a_bad_number_among_many() -> None:
    header = "# Inter-Quake Export\n"
    good = "".join(f"vp {index}.5 -{index}e-3 1E2\n" for index in range(5000))
    document = read_iqe((header + good + "fm 0 1 2\n").encode())
    positions = document.meshes[0].positions
    assert positions[4999].tolist() == [4999.5, np.float32(-4.999), 100.0]
    bad = good + "vp 1 2 3,5\n" + good
    with pytest.raises(FormatError, match=r"line 5002, column 8: 'vp': '3,5' is not a number"):
        read_iqe((header + bad).encode(), "bad.iqe")


@pytest.mark.parametrize("largest", [4, 16, 40])
def test_faces_of_mixed_sizes_with_flags_and_smoothing_read_back(largest: int) -> None:
    random = np.random.default_rng(largest)
    sizes = random.integers(3, largest + 1, 300).astype(np.int32)
    vertex_count = 2000
    corners = random.integers(0, vertex_count, int(sizes.sum())).astype(np.int32)
    positions = random.random((vertex_count, 3)).astype(np.float32)
    mesh = IqeMesh("m", "", positions, face_corners=corners, face_sizes=sizes)
    mesh.edge_smooth = random.integers(0, 2, corners.shape[0]).astype(np.uint8)
    mesh.face_smooth_groups = (np.arange(300) // 7 % 3).astype(np.int32)
    mesh.face_smooth_angles = np.where(np.arange(300) % 50 < 25, 30.0, 180.0).astype(np.float32)
    mesh.face_smooth_uv = np.zeros(300, np.bool_)
    text = write_iqe(IqeDocument(meshes=[mesh]))
    again = read_iqe(text).meshes[0]
    np.testing.assert_array_equal(again.face_sizes, sizes)
    np.testing.assert_array_equal(again.face_corners, corners)
    np.testing.assert_array_equal(again.edge_smooth, mesh.edge_smooth)  # type: ignore[arg-type]
    np.testing.assert_array_equal(again.face_smooth_groups, mesh.face_smooth_groups)  # type: ignore[arg-type]
    np.testing.assert_array_equal(again.face_smooth_angles, mesh.face_smooth_angles)  # type: ignore[arg-type]
    assert text.count(b"\nsmoothgroup ") > 10


def test_faces_repeating_a_vertex_for_triangles_and_polygons() -> None:
    random = np.random.default_rng(9)
    for largest in (3, 6):
        sizes = random.integers(3, largest + 1, 500)
        corners = random.integers(0, 12, int(sizes.sum()))
        starts = np.cumsum(sizes) - sizes
        expected = [len(set(corners[s : s + n].tolist())) < n for s, n in zip(starts, sizes, strict=True)]
        assert faces_repeating_a_vertex(corners, sizes).tolist() == expected
        assert any(expected) and not all(expected)
