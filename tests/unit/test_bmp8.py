"""8-bit BMP as GoldSrc's studiomdl reads it, and the conversion of RGBA images to GoldSrc textures."""

from __future__ import annotations

import struct
import time

import numpy as np
import pytest

from formats.bmp8 import (
    TRANSPARENT_COLOUR,
    Bitmap8,
    bmp_header,
    goldsrc_bitmap,
    goldsrc_problems,
    goldsrc_side,
    quantize,
    read_bmp8,
    resample,
    write_bmp8,
)
from formats.errors import FormatError


def _bitmap(height: int, width: int) -> Bitmap8:
    rng = np.random.default_rng(7)
    return Bitmap8(rng.integers(0, 256, (height, width), dtype=np.uint8),
                   rng.integers(0, 256, (256, 3), dtype=np.uint8))  # fmt: skip


def test_write_and_read_back_with_row_padding() -> None:
    for height, width in ((8, 8), (3, 5), (16, 24)):
        bitmap = _bitmap(height, width)
        data = write_bmp8(bitmap)
        stride = (width + 3) & ~3
        assert len(data) == 14 + 40 + 1024 + stride * height
        size, offset = struct.unpack_from("<I", data, 2)[0], struct.unpack_from("<I", data, 10)[0]
        assert (size, offset) == (len(data), 1078)  # (studiomdl reads bfSize - the header as the pixels)
        header = bmp_header(data)
        assert (header.width, header.height, header.bits, header.compression, header.top_down) == (
            width, height, 8, 0, False)  # fmt: skip
        again = read_bmp8(data)
        assert np.array_equal(again.indices, bitmap.indices) and np.array_equal(again.palette, bitmap.palette)
    data = write_bmp8(_bitmap(2, 4))
    assert np.array_equal(np.frombuffer(data, np.uint8, 4, 1078), _bitmap(2, 4).indices[1])  # (bottom row first)
    assert np.array_equal(np.frombuffer(data, np.uint8, 3, 54), _bitmap(2, 4).palette[0, ::-1])  # (BGR)


def test_bad_files_are_refused_with_offsets() -> None:
    with pytest.raises(FormatError) as caught:
        read_bmp8(b"PNG" + bytes(60), "a.bmp")
    assert caught.value.offset == 0 and caught.value.path == "a.bmp"
    data = bytearray(write_bmp8(_bitmap(8, 8)))
    struct.pack_into("<H", data, 28, 24)
    with pytest.raises(FormatError, match="not an uncompressed 8-bit BMP"):
        read_bmp8(bytes(data))
    with pytest.raises(FormatError, match="do not fit the file"):
        read_bmp8(write_bmp8(_bitmap(8, 8))[:-1])
    with pytest.raises(FormatError):
        write_bmp8(Bitmap8(np.zeros((8, 8), np.uint8), np.zeros((16, 3), np.uint8)))


def test_goldsrc_rules() -> None:
    good = bmp_header(write_bmp8(_bitmap(16, 32)))
    assert goldsrc_problems(good, "skin.bmp") == []
    assert goldsrc_problems(bmp_header(write_bmp8(_bitmap(12, 32))), "skin.bmp") == [
        "32 x 12: sides not multiples of 8"]
    assert goldsrc_problems(None, "x" * 61 + ".png") == ["not a BMP", "a name of 65 characters (at most 63)"]
    big = bmp_header(write_bmp8(_bitmap(8, 520)))
    assert goldsrc_problems(big, "big.bmp") == ["520 x 8: over 512 x 512"]
    assert [goldsrc_side(side) for side in (1, 4, 5, 12, 100, 511, 2048)] == [8, 8, 8, 16, 104, 512, 512]


def test_resample_keeps_flat_colour_and_averages_when_shrinking() -> None:
    flat = np.full((30, 50, 4), 0.25, np.float32)
    assert np.allclose(resample(flat, 8, 512), 0.25)
    stripes = np.zeros((4, 8, 1), np.float32)
    stripes[:, 1::2] = 1.0
    assert np.allclose(resample(stripes, 4, 4), 0.5, atol=0.13)  # (no stripe survives a halving)
    ramp = np.linspace(0, 1, 16, dtype=np.float32)[None, :, None].repeat(2, axis=0)
    grown = resample(ramp, 2, 32)[0, :, 0]
    assert np.all(np.diff(grown) >= -1e-6) and grown[0] == pytest.approx(0.0) and grown[-1] == pytest.approx(1.0)


def test_quantize_exact_when_few_colours() -> None:
    colours = np.array([[1, 2, 3], [9, 9, 9], [1, 2, 3], [0, 0, 0]], np.uint8)
    palette, indices = quantize(colours, 256)
    assert np.array_equal(palette[indices], colours) and len(palette) == 3


def test_quantize_many_colours_is_close_and_fast() -> None:
    rng = np.random.default_rng(1)
    pixels = rng.integers(0, 256, (512 * 512, 3), dtype=np.uint8)
    started = time.perf_counter()
    palette, indices = quantize(pixels, 256)
    seconds = time.perf_counter() - started
    assert len(palette) == 256 and indices.dtype == np.uint8
    error = np.abs(palette[indices].astype(int) - pixels).mean()
    assert error < 20  # (uniform noise: 256 cells of a 256^3 cube are about 40 wide)
    assert seconds < 20


def test_a_gradient_keeps_its_shades() -> None:
    xs, ys = np.meshgrid(np.linspace(0, 1, 64), np.linspace(0, 1, 64))
    rgba = np.stack([xs, ys, 0.5 * (xs + ys), np.ones_like(xs)], axis=2)
    bitmap = goldsrc_bitmap(rgba, masked=False)
    assert bitmap.indices.shape == (64, 64)
    shown = bitmap.palette[bitmap.indices].astype(float) / 255.0
    assert np.abs(shown - rgba[..., :3]).max() < 0.05


def test_masked_texture_has_transparent_last() -> None:
    rgba = np.zeros((20, 36, 4), np.float32)
    rgba[..., 0] = np.linspace(0, 1, 36)[None, :]
    rgba[..., 3] = 1.0
    rgba[:, :12, 3] = 0.2  # (the left third transparent)
    bitmap = goldsrc_bitmap(rgba, masked=True)
    assert bitmap.indices.shape == (24, 40)  # (20 -> 24, 36 -> 40: the nearest multiples of 8)
    assert tuple(bitmap.palette[255]) == TRANSPARENT_COLOUR
    assert (bitmap.indices[:, :10] == 255).all() and (bitmap.indices[:, 16:] != 255).all()
    clear = goldsrc_bitmap(np.zeros((8, 8, 4)), masked=True)
    assert (clear.indices == 255).all()
    again = read_bmp8(write_bmp8(bitmap))
    assert np.array_equal(again.indices, bitmap.indices)
