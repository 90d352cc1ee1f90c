"""VTF decoding: every supported pixel format against known pixels, versions 7.0-7.5 (7.3+ through the resource
directory), the largest mipmap of the first frame and face, rows top first, and FormatError with the byte offset."""

from __future__ import annotations

import struct
import time

import numpy as np
import pytest

from formats import vtf
from formats.errors import FormatError
from tests import vtf_fixtures as fx
from tests.time_guard import no_runaway

# A 4x2 image, top row first: red, green, blue, half-transparent white / black, grey, yellow, clear cyan
PIXELS = np.array([[[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255], [255, 255, 255, 128]],
                   [[0, 0, 0, 255], [128, 128, 128, 255], [255, 255, 0, 255], [0, 255, 255, 0]]],
                  np.uint8)  # fmt: skip


def expected_plain(name: str) -> np.ndarray:
    """What the format keeps of PIXELS (no alpha: opaque; grey: the red channel; A8: black with alpha)."""
    rgba = PIXELS.copy()
    if name in ("RGB888", "BGR888", "BGRX8888", "I8"):
        rgba[..., 3] = 255
    if name in ("I8", "IA88"):
        rgba[..., 1] = rgba[..., 2] = rgba[..., 0]
    if name == "A8":
        rgba[..., :3] = 0
    return rgba


@pytest.mark.parametrize("minor", [0, 2, 5])
@pytest.mark.parametrize("name", ["RGBA8888", "ABGR8888", "RGB888", "BGR888", "I8", "IA88", "A8", "ARGB8888",
                                  "BGRA8888", "BGRX8888"])  # fmt: skip
def test_uncompressed_formats_give_their_known_pixels(name: str, minor: int) -> None:
    format_id = fx.FORMATS[name]
    data = fx.make_vtf(fx.encode_plain(PIXELS, format_id), format_id, 4, 2, minor=minor, mipmaps=3)
    image = vtf.read_vtf(data)
    assert (image.width, image.height, image.version, image.format_name) == (4, 2, (7, minor), name)
    np.testing.assert_array_equal(image.rgba, expected_plain(name))


def test_dxt1_ends_and_thirds_are_exact() -> None:
    """White and black ends: codes 0-3 give 255, 0, 170 and 85 in every DXT1 decoder; the blocks of an 8x4 image
    sit side by side, pixel 0 top left."""
    white_black = fx.dxt_colour_block(0xFFFF, 0x0000, [0, 1, 2, 3] * 4)
    red_blue = fx.dxt_colour_block(fx.rgb565(255, 0, 0), fx.rgb565(0, 0, 255), [0] * 8 + [1] * 8)
    image = vtf.read_vtf(fx.make_vtf(white_black + red_blue, 13, 8, 4, minor=2))
    assert image.rgba[0, :4, 0].tolist() == [255, 0, 170, 85]
    assert image.rgba[:, :4, 3].min() == 255
    assert image.rgba[0, 4].tolist() == [255, 0, 0, 255] and image.rgba[3, 7].tolist() == [0, 0, 255, 255]


def test_dxt1_three_colour_blocks_are_transparent_at_code_3() -> None:
    block = fx.dxt_colour_block(0x0000, 0xFFFF, [0, 1, 2, 3] * 4)  # colour 0 <= colour 1: three colours and clear
    image = vtf.read_vtf(fx.make_vtf(block, 13, 4, 4, minor=2))
    assert image.rgba[0].tolist() == [[0, 0, 0, 255], [255, 255, 255, 255], [127, 127, 127, 255], [0, 0, 0, 0]]


@pytest.mark.parametrize("name", ["DXT1", "DXT3", "DXT5"])
def test_block_formats_match_a_pixel_by_pixel_decoder(name: str) -> None:
    format_id = fx.FORMATS[name]
    generator = np.random.default_rng(7)
    width, height = 16, 8
    blocks = []
    for index in range((width // 4) * (height // 4)):
        ends = generator.integers(0, 65536, 2).tolist()
        colour = fx.dxt_colour_block(ends[0], ends[1], generator.integers(0, 4, 16).tolist())
        if format_id == 14:
            blocks.append(fx.dxt3_alpha_block(generator.integers(0, 16, 16).tolist()) + colour)
        elif format_id == 15:
            alpha_ends = sorted(generator.integers(0, 256, 2).tolist(), reverse=index % 2 == 0)  # both modes
            blocks.append(fx.dxt5_alpha_block(*alpha_ends, generator.integers(0, 8, 16).tolist()) + colour)
        else:
            blocks.append(colour)
    data = b"".join(blocks)
    image = vtf.read_vtf(fx.make_vtf(data, format_id, width, height, minor=5, mipmaps=4))
    np.testing.assert_array_equal(image.rgba, fx.reference_dxt(data, format_id, width, height))


def test_dxt5_alpha_modes() -> None:
    eight = fx.dxt5_alpha_block(255, 0, [0, 1, 2, 7] + [0] * 12)  # 255, 0, then 6/7 and 1/7 of the way
    six = fx.dxt5_alpha_block(0, 255, [2, 5, 6, 7] + [0] * 12)  # 4 between, then 0 and 255
    colour = fx.dxt_colour_block(0xFFFF, 0, [0] * 16)
    image = vtf.read_vtf(fx.make_vtf(eight + colour + six + colour, 15, 8, 4))
    assert image.rgba[0, :4, 3].tolist() == [255, 0, 219, 36]
    assert image.rgba[0, 4:, 3].tolist() == [51, 204, 0, 255]


def test_dxt3_alpha_is_four_bits_scaled() -> None:
    block = fx.dxt3_alpha_block([0, 15, 8, 1] * 4) + fx.dxt_colour_block(0xFFFF, 0, [0] * 16)
    assert vtf.read_vtf(fx.make_vtf(block, 14, 4, 4)).rgba[0, :, 3].tolist() == [0, 255, 136, 17]


def test_sizes_not_a_multiple_of_4_are_cropped_from_whole_blocks() -> None:
    block = fx.dxt_colour_block(0xFFFF, 0, [0, 1, 0, 1] * 4)
    image = vtf.read_vtf(fx.make_vtf(block * 2, 13, 6, 2, minor=3))  # 2x1 blocks hold 6x2
    assert image.rgba.shape == (2, 6, 4) and image.rgba[1, 4:, 0].tolist() == [255, 0]


@pytest.mark.parametrize(("minor", "first_frame", "faces"), [(2, 0, 7), (4, 0xFFFF, 6), (5, 0, 6)])
def test_the_first_frame_and_face_of_the_largest_mipmap(minor: int, first_frame: int, faces: int) -> None:
    """Smaller mipmaps come first, each with every frame and face (a cube map before 7.5 has a seventh, the sphere
    map, unless its first frame is 0xFFFF): the image picked is the one after all of them."""
    data = fx.make_vtf(fx.encode_plain(PIXELS, 0), 0, 4, 2, minor=minor, mipmaps=3, frames=2, faces=faces,
                       flags=fx.ENVMAP, first_frame=first_frame)  # fmt: skip
    image = vtf.read_vtf(data)
    np.testing.assert_array_equal(image.rgba, PIXELS)
    assert image.frames == 2


def test_the_resource_directory_places_the_image() -> None:
    """7.3+: the image entry (tag 30 00 00) says where the image is, whatever comes before it (here a CRC entry
    with no data, the thumbnail's entry and a gap)."""
    data = fx.make_vtf(fx.encode_plain(PIXELS, 12), 12, 4, 2, minor=5, mipmaps=2)
    assert data[80:83] == b"CRC" and data[96:99] == b"\x30\x00\x00"
    np.testing.assert_array_equal(vtf.read_vtf(data).rgba, PIXELS)
    moved = bytearray(data)
    struct.pack_into("<I", moved, 100, struct.unpack_from("<I", data, 100)[0] + 1)  # one byte later: other pixels
    assert not np.array_equal(vtf.read_vtf(bytes(moved) + b"\0").rgba, PIXELS)


def test_rows_run_top_first() -> None:
    top = np.zeros((2, 4, 4), np.uint8)
    top[0] = 255
    assert vtf.read_vtf(fx.make_vtf(fx.encode_plain(top, 0), 0, 4, 2)).rgba[0, 0].tolist() == [255] * 4


def broken(data: bytes, offset: int, value: bytes) -> bytes:
    out = bytearray(data)
    out[offset : offset + len(value)] = value
    return bytes(out)


VALID = fx.make_vtf(fx.encode_plain(PIXELS, 0), 0, 4, 2, minor=5, mipmaps=2)


@pytest.mark.parametrize(
    ("data", "offset", "words"),
    [
        (b"VTF\0" + bytes(20), 0, "too short"),
        (broken(VALID, 0, b"DDS "), 0, "not a VTF"),
        (broken(VALID, 4, struct.pack("<II", 7, 6)), 4, "version 7.6"),
        (broken(VALID, 12, struct.pack("<I", 1 << 20)), 12, "header size"),
        (broken(VALID, 16, struct.pack("<H", 0)), 16, "image size"),
        (broken(VALID, 52, struct.pack("<i", 24)), 52, "RGBA16161616F"),
        (broken(VALID, 56, b"\0"), 56, "no mipmaps"),
        (broken(VALID, 68, struct.pack("<I", 33)), 68, "resource entries"),
        (broken(VALID, 96, b"\x31"), 80, "no high-res image entry"),
        (VALID[:-1], 156, "needs 32 bytes"),
        (broken(VALID, 18, struct.pack("<H", 4096)), 148 + 2 * 2048 * 4, "needs 65,536 bytes"),
    ],
)
def test_bad_files_name_the_byte(data: bytes, offset: int, words: str) -> None:
    with pytest.raises(FormatError) as caught:
        vtf.read_vtf(data)
    assert caught.value.offset == offset and words in caught.value.message


def test_a_huge_size_in_a_short_file_is_refused_before_any_work() -> None:
    data = broken(broken(VALID, 16, struct.pack("<HH", 32768, 32768)), 56, b"\x10")
    with no_runaway(2.0), pytest.raises(FormatError, match="needs"):
        vtf.read_vtf(data)


def test_a_1024_dxt5_decodes_well_under_a_second() -> None:
    generator = np.random.default_rng(1)
    data = generator.integers(0, 256, 1024 * 1024, dtype=np.uint8).tobytes()  # 65,536 blocks of 16 bytes
    vtf_bytes = fx.make_vtf(data, 15, 1024, 1024, minor=4, mipmaps=11)
    started = time.perf_counter()
    with no_runaway(5.0):
        image = vtf.read_vtf(vtf_bytes)
    seconds = time.perf_counter() - started
    assert image.rgba.shape == (1024, 1024, 4)
    sample = slice(0, 8 * 16)  # the first 8 blocks of the top row, checked against the reference
    np.testing.assert_array_equal(image.rgba[:4, :32], fx.reference_dxt(data[sample], 15, 32, 4))
    assert seconds < 5.0, seconds


def test_mutated_files_raise_only_format_errors() -> None:
    """Byte edits anywhere (header fields, resource offsets, sizes): a decoded image or a FormatError, quickly."""
    generator = np.random.default_rng(5)
    sources = [VALID, fx.make_vtf(fx.dxt_colour_block(0xFFFF, 0, [1] * 16) * 4, 13, 8, 8, minor=2, mipmaps=4),
               fx.make_vtf(bytes(64), 15, 8, 8, minor=4, mipmaps=2, frames=2)]  # fmt: skip
    with no_runaway(20.0):
        for _ in range(3000):
            data = bytearray(sources[int(generator.integers(len(sources)))])
            for _ in range(int(generator.integers(1, 4))):
                at = int(generator.integers(0, min(len(data), 110)))  # mostly the header and the directory
                data[at] = int(generator.integers(256))
            if generator.random() < 0.2:
                data = data[: int(generator.integers(len(data)))]
            try:
                image = vtf.read_vtf(bytes(data))
            except FormatError:
                continue
            assert image.rgba.shape == (image.height, image.width, 4)
