"""VTF (Valve Texture Format, Source): the largest mipmap of a texture's first frame, first face and first slice,
decoded to 8-bit RGBA. numpy only; DXT blocks are decoded as arrays, all blocks at once.

Layout (VTFLib's VTFFormat.h, the Valve Developer Community page "VTF (Valve Texture Format)"), little-endian:

    0  "VTF\\0"        4  version major (7), minor (0-5)   12 header size
    16 width (u16)     18 height (u16)    20 flags (u32)    24 frames (u16)   26 first frame (u16)
    32 reflectivity (3 floats)            48 bump scale     52 high-res format (i32)   56 mipmap count (u8)
    57 low-res format (i32)               61 low-res width (u8)   62 low-res height (u8)
    63 depth (u16, 7.2+)                  68 resource count (u32, 7.3+)   80 resource entries (7.3+)

7.0 and 7.1 headers are 64 bytes, 7.2 80; the low-res thumbnail follows the header, then the high-res data. From
7.3 a resource directory of 8-byte entries (3-byte tag, flags byte, u32 offset) follows at byte 80: tag
`30 00 00` is the high-res data, `01 00 00` the thumbnail. The high-res data holds the mipmaps smallest first, each
with every frame, each frame every face (6 for a cube map, 7 before 7.5 unless the first frame is 0xFFFF), each face
every depth slice. Rows run top first.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .errors import FormatError, read_file_bytes

HEADER_BYTES_OLD = 64  # 7.0, 7.1
HEADER_BYTES = 80  # 7.2 and later, before the resource entries
MAX_RESOURCES = 32  # VTF_RSRC_MAX_DICTIONARY_ENTRIES
RESOURCE_IMAGE = b"\x30\x00\x00"
RESOURCE_THUMBNAIL = b"\x01\x00\x00"
FLAG_ENVMAP = 0x4000
FLAG_ONEBITALPHA = 0x1000
FLAG_EIGHTBITALPHA = 0x2000
MAX_SIDE = 1 << 15  # no engine loads a larger texture; bounds the work a hostile header can ask for

# Uncompressed formats: id -> (name, bytes per pixel, where R, G, B, A come from in a pixel's bytes: an index,
# or -1 for 0 (none) / -2 for 255 (opaque); grey formats repeat their one value)
_PLAIN: dict[int, tuple[str, int, tuple[int, int, int, int]]] = {
    0: ("RGBA8888", 4, (0, 1, 2, 3)),
    1: ("ABGR8888", 4, (3, 2, 1, 0)),
    2: ("RGB888", 3, (0, 1, 2, -2)),
    3: ("BGR888", 3, (2, 1, 0, -2)),
    5: ("I8", 1, (0, 0, 0, -2)),
    6: ("IA88", 2, (0, 0, 0, 1)),
    8: ("A8", 1, (-1, -1, -1, 0)),
    11: ("ARGB8888", 4, (1, 2, 3, 0)),
    12: ("BGRA8888", 4, (2, 1, 0, 3)),
    16: ("BGRX8888", 4, (2, 1, 0, -2)),
}
# Block-compressed formats: id -> (name, bytes per 4x4 block)
_BLOCKS: dict[int, tuple[str, int]] = {13: ("DXT1", 8), 14: ("DXT3", 16), 15: ("DXT5", 16), 20: ("DXT1_ONEBITALPHA", 8)}
_OTHER_NAMES = {4: "RGB565", 7: "P8", 9: "RGB888_BLUESCREEN", 10: "BGR888_BLUESCREEN", 17: "BGR565",
                18: "BGRX5551", 19: "BGRA4444", 21: "BGRA5551", 22: "UV88", 23: "UVWQ8888",
                24: "RGBA16161616F", 25: "RGBA16161616", 26: "UVLX8888"}  # fmt: skip
# Formats whose pixels can be transparent (DXT1 only through its 1-bit mode, said by the flags)
_ALPHA_FORMATS = {0, 1, 6, 8, 11, 12, 14, 15, 20}

UInt8Array = npt.NDArray[np.uint8]


@dataclass
class VtfImage:
    width: int
    height: int
    version: tuple[int, int]
    format_name: str
    flags: int
    frames: int
    rgba: UInt8Array  # (height, width, 4), top row first
    has_alpha: bool  # the format (or, for DXT1, the flags) holds transparency


def format_name(format_id: int) -> str:
    if format_id in _PLAIN:
        return _PLAIN[format_id][0]
    if format_id in _BLOCKS:
        return _BLOCKS[format_id][0]
    return _OTHER_NAMES.get(format_id, f"format {format_id}")


def image_bytes(format_id: int, width: int, height: int, depth: int = 1) -> int:
    """Bytes one image of this size takes (a block format pads each side to whole 4x4 blocks)."""
    if format_id in _BLOCKS:
        return ((width + 3) // 4) * ((height + 3) // 4) * _BLOCKS[format_id][1] * depth
    return width * height * _PLAIN[format_id][1] * depth


def load_vtf(path: str) -> VtfImage:
    try:
        return read_vtf(read_file_bytes(path))
    except FormatError as error:
        raise error.with_path(path) from None


def read_vtf(data: bytes) -> VtfImage:
    """The largest mipmap of the first frame, face and slice; FormatError (with the byte offset) for anything that
    is not a VTF this can read, or whose sizes do not fit the file."""
    if len(data) < HEADER_BYTES_OLD:
        raise FormatError(f"file is {len(data)} bytes, too short for a VTF header ({HEADER_BYTES_OLD})", offset=0)
    if data[:4] != b"VTF\0":
        raise FormatError(f"not a VTF file: it starts with {data[:4]!r}, not 'VTF\\0'", offset=0)
    major, minor, header_size = struct.unpack_from("<3I", data, 4)
    if major != 7 or minor > 5:
        raise FormatError(f"VTF version {major}.{minor} is not supported (7.0 to 7.5)", offset=4)
    width, height, flags, frames, first_frame = struct.unpack_from("<HHIHH", data, 16)
    format_id, mipmaps = struct.unpack_from("<iB", data, 52)
    thumb_format, thumb_width, thumb_height = struct.unpack_from("<iBB", data, 57)
    least = HEADER_BYTES_OLD if minor < 2 else HEADER_BYTES
    if not least <= header_size <= len(data):
        raise FormatError(f"header size {header_size} is outside {least}..{len(data)} (the file's size)", offset=12)
    depth = struct.unpack_from("<H", data, 63)[0] if minor >= 2 else 1
    if not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE and depth <= MAX_SIDE):
        raise FormatError(f"image size {width}x{height}x{depth} is outside 1..{MAX_SIDE}", offset=16)
    if format_id not in _PLAIN and format_id not in _BLOCKS:
        raise FormatError(f"image format {format_name(format_id)} is not supported (8-bit RGB(A), grey, alpha or "
                          "DXT1/3/5 are)", offset=52)  # fmt: skip
    if mipmaps == 0:
        raise FormatError("the texture has no mipmaps (count 0)", offset=56)
    depth, frames = max(depth, 1), max(frames, 1)
    faces = (7 if minor < 5 and first_frame != 0xFFFF else 6) if flags & FLAG_ENVMAP else 1
    image_offset = _image_offset(data, minor, header_size, thumb_format, thumb_width, thumb_height)
    offset = image_offset
    for level in range(mipmaps - 1, 0, -1):  # the smaller mipmaps come first
        size = image_bytes(format_id, max(width >> level, 1), max(height >> level, 1), max(depth >> level, 1))
        offset += size * frames * faces
    size = image_bytes(format_id, width, height)  # the first slice of the first face of the first frame
    if offset + size > len(data):
        raise FormatError(f"the {width}x{height} {format_name(format_id)} image here needs {size:,} bytes; the file "
                          f"has {max(len(data) - offset, 0):,} after it (cut short, or its sizes are wrong)",
                          offset=offset)  # fmt: skip
    pixels = np.frombuffer(data, np.uint8, size, offset)
    if format_id in _BLOCKS:
        rgba = decode_blocks(pixels, format_id, width, height)
    else:
        rgba = decode_plain(pixels, format_id, width, height)
    has_alpha = format_id in _ALPHA_FORMATS or bool(flags & (FLAG_ONEBITALPHA | FLAG_EIGHTBITALPHA))
    return VtfImage(width, height, (major, minor), format_name(format_id), flags, frames, rgba, has_alpha)


def _image_offset(data: bytes, minor: int, header_size: int, thumb_format: int, thumb_width: int,
                  thumb_height: int) -> int:  # fmt: skip
    """Where the high-res data starts: from the resource directory (7.3+), else after the header and thumbnail."""
    if minor >= 3:
        count = struct.unpack_from("<I", data, 68)[0]
        if count > MAX_RESOURCES or HEADER_BYTES + 8 * count > header_size:
            raise FormatError(f"{count} resource entries: more than {MAX_RESOURCES}, or more than the header's "
                              f"{header_size} bytes hold", offset=68)  # fmt: skip
        for entry in range(count):
            at = HEADER_BYTES + 8 * entry
            if data[at : at + 3] == RESOURCE_IMAGE:
                return int(struct.unpack_from("<I", data, at + 4)[0])
        if count:
            raise FormatError("the resource directory has no high-res image entry (tag 30 00 00)", offset=HEADER_BYTES)
    thumbnail = 0
    if thumb_format in _BLOCKS or thumb_format in _PLAIN:
        thumbnail = image_bytes(thumb_format, thumb_width, thumb_height)
    elif thumb_format != -1:
        raise FormatError(f"low-res image format {format_name(thumb_format)} is not one a thumbnail has", offset=57)
    return header_size + thumbnail


def decode_plain(pixels: UInt8Array, format_id: int, width: int, height: int) -> UInt8Array:
    _, stride, sources = _PLAIN[format_id]
    channels = pixels.reshape(height, width, stride)
    rgba = np.empty((height, width, 4), np.uint8)
    for channel, source in enumerate(sources):
        rgba[..., channel] = channels[..., source] if source >= 0 else (0 if source == -1 else 255)
    return rgba


def decode_blocks(pixels: UInt8Array, format_id: int, width: int, height: int) -> UInt8Array:
    """DXT1 (BC1), DXT3 (BC2) or DXT5 (BC3) blocks to RGBA, cropped to the image's size."""
    block_bytes = _BLOCKS[format_id][1]
    across, down = (width + 3) // 4, (height + 3) // 4
    blocks = pixels.reshape(across * down, block_bytes)
    colour_part = blocks[:, -8:]  # (DXT3/5: the colour half follows the alpha half)
    rgba = _colour_blocks(colour_part, allow_transparent=block_bytes == 8)
    if format_id == 14:
        rgba[..., 3] = _explicit_alpha(blocks[:, :8])
    elif format_id == 15:
        rgba[..., 3] = _interpolated_alpha(blocks[:, :8])
    image = rgba.reshape(down, across, 4, 4, 4).transpose(0, 2, 1, 3, 4).reshape(down * 4, across * 4, 4)
    return np.ascontiguousarray(image[:height, :width])


def _expand_565(colours: npt.NDArray[np.uint16]) -> npt.NDArray[np.int32]:
    """(N,) RGB565 -> (N, 3) 8-bit values, bits repeated into the low bits as decoders do."""
    value = colours.astype(np.int32)
    red, green, blue = (value >> 11) & 31, (value >> 5) & 63, value & 31
    return np.stack([(red << 3) | (red >> 2), (green << 2) | (green >> 4), (blue << 3) | (blue >> 2)], axis=1)


def _colour_blocks(colour: UInt8Array, *, allow_transparent: bool) -> UInt8Array:
    """(N, 8) colour blocks -> (N, 16, 4) RGBA, pixel i of a block at row i // 4, column i % 4. Each block's four
    RGBA colours are gathered as 32-bit words (one look-up a pixel, not four)."""
    ends = colour[:, :4].copy().view("<u2")  # (N, 2): colour 0, colour 1
    first, second = _expand_565(ends[:, 0]), _expand_565(ends[:, 1])
    four_colour = (ends[:, 0] > ends[:, 1]) | (not allow_transparent)
    palette = np.empty((len(colour), 4, 4), np.uint8)
    palette[:, 0, :3], palette[:, 1, :3] = first, second
    mode = four_colour[:, None]
    palette[:, 2, :3] = np.where(mode, (2 * first + second + 1) // 3, (first + second) // 2)
    palette[:, 3, :3] = np.where(mode, (first + 2 * second + 1) // 3, 0)
    palette[:, :, 3] = 255
    palette[:, 3, 3] = np.where(four_colour, 255, 0)
    words = palette.view(np.uint32).reshape(len(colour), 4)
    codes = colour[:, 4:].copy().view("<u4")  # (N, 1): 2 bits a pixel, pixel 0 in the lowest bits
    indices = (codes >> (2 * np.arange(16, dtype=np.uint32))) & 3
    return np.take_along_axis(words, indices.astype(np.intp), axis=1).view(np.uint8).reshape(len(colour), 16, 4)


def _explicit_alpha(alpha: UInt8Array) -> UInt8Array:
    """(N, 8) DXT3 alpha halves: 4 bits a pixel, pixel 0 in the lowest bits -> (N, 16)."""
    nibbles: UInt8Array = np.stack([alpha & 15, alpha >> 4], axis=2).reshape(len(alpha), 16)
    return nibbles * np.uint8(17)


def _interpolated_alpha(alpha: UInt8Array) -> UInt8Array:
    """(N, 8) DXT5 alpha halves: two end values, then 3 bits a pixel (48 bits, little-endian) -> (N, 16)."""
    first, second = alpha[:, 0].astype(np.int32), alpha[:, 1].astype(np.int32)
    eight = (first > second)[:, None]
    step = np.arange(1, 7, dtype=np.int32)[None, :]
    palette = np.empty((len(alpha), 8), np.int32)
    palette[:, 0], palette[:, 1] = first, second
    between8 = ((7 - step) * first[:, None] + step * second[:, None] + 3) // 7  # 6 values between
    between6 = ((5 - step[:, :4]) * first[:, None] + step[:, :4] * second[:, None] + 2) // 5  # 4 values, then 0, 255
    six = np.concatenate([between6, np.zeros((len(alpha), 1), np.int32), np.full((len(alpha), 1), 255, np.int32)],
                         axis=1)  # fmt: skip
    palette[:, 2:] = np.where(eight, between8, six)
    bits = np.zeros((len(alpha), 8), np.uint8)
    bits[:, :6] = alpha[:, 2:]
    codes = bits.view("<u8")  # (N, 1)
    indices = (codes >> (3 * np.arange(16, dtype=np.uint64))) & np.uint64(7)
    return np.take_along_axis(palette.astype(np.uint8), indices.astype(np.intp), axis=1)
