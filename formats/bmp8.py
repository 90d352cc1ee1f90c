"""8-bit palettized BMP, as GoldSrc's studiomdl reads textures (bmpread.c: a 40-byte BITMAPINFOHEADER, 8 bits per
pixel, BI_RGB, rows bottom-up), and the conversion of any RGBA image to one within its rules: sides multiples of 8
of at most 512, 256 colours (median cut, refined by a few k-means rounds), a masked texture's transparent pixels
the palette's last colour (index 255), as GoldSrc's renderer masks it. Pure numpy; pixels are top-down here."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import FormatError

GOLDSRC_MAX_SIDE = 512  # (studiomdl's MAX_DIMENSION; the engine's texture size limit)
GOLDSRC_SIDE_STEP = 8  # sides a multiple of this
GOLDSRC_MAX_NAME = 63  # a texture's file name, `.bmp` included (the MDL's char[64] texture name, and studiomdl's)
TRANSPARENT_INDEX = 255  # a masked texture's (`{` name, STUDIO_NF_MASKED) transparent palette entry
TRANSPARENT_COLOUR = (0, 0, 255)  # (the usual blue, so that the texture shows which pixels are masked)
_FILE_HEADER = struct.Struct("<2sIHHI")  # bfType, bfSize, bfReserved1, bfReserved2, bfOffBits
_INFO_HEADER = struct.Struct("<IiiHHIIiiII")  # biSize ... biClrImportant
_PALETTE_BYTES = 256 * 4
_PIXEL_OFFSET = _FILE_HEADER.size + _INFO_HEADER.size + _PALETTE_BYTES
_KMEANS_ROUNDS = 4
_CHUNK = 16384  # pixels matched against the palette at a time (a 16,384 x 256 table of distances)

Indices = npt.NDArray[np.uint8]
Palette = npt.NDArray[np.uint8]


@dataclass
class Bitmap8:
    indices: Indices  # (H, W) palette index per pixel, top row first
    palette: Palette  # (256, 3) RGB

    @property
    def width(self) -> int:
        return int(self.indices.shape[1])

    @property
    def height(self) -> int:
        return int(self.indices.shape[0])


def write_bmp8(bitmap: Bitmap8) -> bytes:
    """The BMP file: 256 palette entries (BGR0), rows bottom-up, each padded to 4 bytes."""
    height, width = bitmap.indices.shape
    if bitmap.palette.shape != (256, 3) or width <= 0 or height <= 0:
        raise FormatError(f"an 8-bit BMP needs a 256-colour palette and pixels ({width} x {height}, palette "
                          f"{bitmap.palette.shape})")  # fmt: skip
    stride = (width + 3) & ~3
    rows = np.zeros((height, stride), np.uint8)
    rows[:, :width] = bitmap.indices[::-1]
    palette = np.zeros((256, 4), np.uint8)
    palette[:, :3] = bitmap.palette[:, ::-1]
    size = _PIXEL_OFFSET + rows.size
    header = _FILE_HEADER.pack(b"BM", size, 0, 0, _PIXEL_OFFSET)
    info = _INFO_HEADER.pack(_INFO_HEADER.size, width, height, 1, 8, 0, rows.size, 2835, 2835, 256, 0)
    return header + info + palette.tobytes() + rows.tobytes()


def read_bmp8(data: bytes, path: str | None = None) -> Bitmap8:
    """An uncompressed 8-bit BMP (bottom-up or top-down rows), as written by write_bmp8 or an image editor."""
    info = bmp_header(data, path)
    if info.bits != 8 or info.compression != 0:
        raise FormatError(f"not an uncompressed 8-bit BMP ({info.bits} bits, compression {info.compression})",
                          path=path, offset=28)  # fmt: skip
    colours = info.colours or 256
    palette_at = _FILE_HEADER.size + info.header_size
    if colours > 256 or palette_at + 4 * colours > len(data):
        raise FormatError(f"a palette of {colours} colours does not fit the file", path=path, offset=46)
    palette = np.zeros((256, 3), np.uint8)
    entries = np.frombuffer(data, np.uint8, 4 * colours, palette_at).reshape(colours, 4)
    palette[:colours] = entries[:, 2::-1]
    stride = (info.width + 3) & ~3
    if info.offset + stride * info.height > len(data):
        raise FormatError(f"{info.width} x {info.height} pixels do not fit the file ({len(data):,} bytes)",
                          path=path, offset=info.offset)  # fmt: skip
    rows = np.frombuffer(data, np.uint8, stride * info.height, info.offset).reshape(info.height, stride)
    indices = rows[:, : info.width]
    return Bitmap8(np.ascontiguousarray(indices if info.top_down else indices[::-1]), palette)


@dataclass
class BmpHeader:
    width: int
    height: int
    top_down: bool
    bits: int
    compression: int
    colours: int
    offset: int  # of the pixels
    header_size: int


def bmp_header(data: bytes, path: str | None = None) -> BmpHeader:
    if len(data) < _FILE_HEADER.size + _INFO_HEADER.size or data[:2] != b"BM":
        raise FormatError("not a BMP file", path=path, offset=0)
    _, _, _, _, offset = _FILE_HEADER.unpack_from(data)
    size, width, height, planes, bits, compression, _, _, _, colours, _ = _INFO_HEADER.unpack_from(data, 14)
    if size < _INFO_HEADER.size or planes != 1 or width <= 0 or height == 0:
        raise FormatError(f"a BMP header this reader does not know (size {size}, {width} x {height}, {planes} "
                          "planes)", path=path, offset=14)  # fmt: skip
    return BmpHeader(width, abs(height), height < 0, bits, compression, colours, offset, size)


def goldsrc_problems(header: BmpHeader | None, name: str) -> list[str]:
    """What keeps a texture file from GoldSrc's rules (empty: it keeps them); `header` None: not a BMP at all."""
    problems = []
    if header is None:
        problems.append("not a BMP")
    elif header.bits != 8 or header.compression != 0:
        problems.append(f"{header.bits}-bit, not 8-bit indexed")
    if header is not None:
        sides = (header.width, header.height)
        if any(side % GOLDSRC_SIDE_STEP for side in sides):
            problems.append(f"{header.width} x {header.height}: sides not multiples of {GOLDSRC_SIDE_STEP}")
        elif any(side > GOLDSRC_MAX_SIDE for side in sides):
            problems.append(f"{header.width} x {header.height}: over {GOLDSRC_MAX_SIDE} x {GOLDSRC_MAX_SIDE}")
    if len(name) > GOLDSRC_MAX_NAME:
        problems.append(f"a name of {len(name)} characters (at most {GOLDSRC_MAX_NAME})")
    return problems


# ------------------------------------------------------------------------------------------------ conversion


def goldsrc_side(side: int) -> int:
    """The nearest multiple of 8 to `side`, from 8 to 512."""
    nearest = (side + GOLDSRC_SIDE_STEP // 2) // GOLDSRC_SIDE_STEP * GOLDSRC_SIDE_STEP  # (halves up)
    return int(min(GOLDSRC_MAX_SIDE, max(GOLDSRC_SIDE_STEP, nearest)))


def goldsrc_bitmap(rgba: npt.NDArray[np.floating[Any]], masked: bool) -> Bitmap8:
    """(H, W, 4) RGBA in 0..1, top row first, as a GoldSrc texture: resized to goldsrc_side each way, 256 colours;
    `masked`: pixels of alpha under 0.5 are index 255 (the palette's last colour), the others share 255 colours."""
    height, width = rgba.shape[:2]
    pixels = resample(np.asarray(rgba, np.float32), goldsrc_side(height), goldsrc_side(width))
    colours = np.clip(np.rint(pixels[..., :3] * 255.0), 0, 255).astype(np.uint8).reshape(-1, 3)
    shape = pixels.shape[:2]
    if not masked:
        palette, indices = quantize(colours, 256)
        return Bitmap8(indices.reshape(shape), _padded(palette))
    clear = pixels[..., 3].reshape(-1) < 0.5
    indices = np.full(clear.size, TRANSPARENT_INDEX, np.uint8)
    palette = np.zeros((0, 3), np.uint8)
    if not clear.all():
        palette, indices[~clear] = quantize(colours[~clear], TRANSPARENT_INDEX)
    full = _padded(palette)
    full[TRANSPARENT_INDEX] = TRANSPARENT_COLOUR
    return Bitmap8(indices.reshape(shape), full)


def _padded(palette: Palette) -> Palette:
    full = np.zeros((256, 3), np.uint8)
    full[: len(palette)] = palette
    return full


def resample(pixels: npt.NDArray[np.float32], height: int, width: int) -> npt.NDArray[np.float32]:
    """(H, W, C) resized to (height, width, C): a triangle filter as wide as the scale when shrinking (each output
    pixel averages the input it covers), bilinear when growing; edges clamped."""
    rows = _filter_matrix(pixels.shape[0], height)
    columns = _filter_matrix(pixels.shape[1], width)
    resized: npt.NDArray[np.float32] = np.einsum("ih,hwc,jw->ijc", rows, pixels, columns, optimize=True)
    return resized.astype(np.float32, copy=False)


def _filter_matrix(source: int, target: int) -> npt.NDArray[np.float32]:
    """(target, source) weights, each row summing to 1 (every output centre lies within half a pixel of an input
    pixel's, inside the support: no row is empty)."""
    scale = source / target
    support = max(scale, 1.0)
    centres = (np.arange(target) + 0.5) * scale - 0.5
    distance = np.abs(np.arange(source)[None, :] - centres[:, None]) / support
    weights = np.maximum(0.0, 1.0 - distance)
    matrix: npt.NDArray[np.float32] = (weights / weights.sum(axis=1, keepdims=True)).astype(np.float32)
    return matrix


def quantize(colours: npt.NDArray[np.uint8], count: int) -> tuple[Palette, Indices]:
    """(N, 3) RGB to at most `count` colours: the palette and each colour's index. Colours as they are when there
    are no more than `count` distinct ones; otherwise median cut, then a few k-means rounds, on a histogram of 5
    bits per channel (each of its cells the mean of its colours), as image quantizers do: the work does not grow
    with the pixels."""
    wide = colours.astype(np.int64)
    keys = (wide[:, 0] << 16) | (wide[:, 1] << 8) | wide[:, 2]
    distinct, inverse = np.unique(keys, return_inverse=True)
    if len(distinct) <= count:
        palette = np.stack([distinct >> 16, (distinct >> 8) & 255, distinct & 255], axis=1).astype(np.uint8)
        return palette, inverse.reshape(-1).astype(np.uint8)
    cells = ((wide[:, 0] >> 3) << 10) | ((wide[:, 1] >> 3) << 5) | (wide[:, 2] >> 3)
    used, cell = np.unique(cells, return_inverse=True)
    cell = cell.reshape(-1)
    weights = np.bincount(cell, minlength=len(used)).astype(np.float64)
    values = np.stack([np.bincount(cell, wide[:, channel], len(used)) for channel in range(3)], axis=1) / weights[
        :, None]  # fmt: skip
    centres = _median_cut(values, weights, count)
    for _ in range(_KMEANS_ROUNDS):
        nearest = _nearest(values, centres)
        mass = np.bincount(nearest, weights, minlength=len(centres))
        kept = mass > 0
        for channel in range(3):
            sums = np.bincount(nearest, values[:, channel] * weights, minlength=len(centres))
            centres[kept, channel] = sums[kept] / mass[kept]
    palette = np.clip(np.rint(centres), 0, 255).astype(np.uint8)
    return palette, _nearest(values, palette.astype(np.float64)).astype(np.uint8)[cell]


def _median_cut(values: npt.NDArray[np.float64], weights: npt.NDArray[np.float64], count: int
                ) -> npt.NDArray[np.float64]:  # fmt: skip
    """`count` centres: the box of distinct colours with the widest channel range (times its pixels' share) is
    cut at its pixels' weighted median, until there are `count` boxes; each box's weighted mean."""
    boxes: list[npt.NDArray[np.intp]] = []
    spans: list[npt.NDArray[np.float64]] = []
    scores: list[float] = []

    def add(box: npt.NDArray[np.intp]) -> None:
        span = np.ptp(values[box], axis=0)
        boxes.append(box)
        spans.append(span)
        scores.append(float(span.max()) * float(np.sqrt(weights[box].sum())) if len(box) > 1 else -1.0)

    add(np.arange(len(values)))
    while len(boxes) < count:
        widest = int(np.argmax(scores))
        if scores[widest] <= 0:
            break
        box, span = boxes.pop(widest), spans.pop(widest)
        scores.pop(widest)
        channel = int(np.argmax(span))
        ordered = box[np.argsort(values[box, channel], kind="stable")]
        cumulative = np.cumsum(weights[ordered])
        cut = int(np.clip(np.searchsorted(cumulative, cumulative[-1] / 2), 0, len(ordered) - 2)) + 1
        add(ordered[:cut])
        add(ordered[cut:])
    return np.array([np.average(values[box], axis=0, weights=weights[box]) for box in boxes])


def _nearest(values: npt.NDArray[np.float64], centres: npt.NDArray[np.float64]) -> npt.NDArray[np.intp]:
    """Index of the nearest centre to each value (squared RGB distance), a chunk of values at a time (a product of
    three columns each way: quicker than a matrix product of inner size 3)."""
    result = np.empty(len(values), np.intp)
    points, targets = values.astype(np.float32), centres.astype(np.float32)
    squared = (targets**2).sum(axis=1)
    for start in range(0, len(values), _CHUNK):
        chunk = points[start : start + _CHUNK]
        distance = squared[None, :] - 2.0 * chunk[:, :1] * targets[None, :, 0]
        for channel in (1, 2):
            distance -= 2.0 * chunk[:, channel : channel + 1] * targets[None, :, channel]
        result[start : start + _CHUNK] = np.argmin(distance, axis=1)
    return result
