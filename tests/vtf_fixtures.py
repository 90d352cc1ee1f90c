"""Small VTF files made in the tests: any version 7.0-7.5, a mip chain whose smaller levels and later frames are
filler (so a wrong offset shows), a DXT1 thumbnail, and (7.3+) a resource directory with an extra entry first.
Pixel encoders and a per-pixel reference DXT decoder, written independently of `formats.vtf`."""

from __future__ import annotations

import struct

import numpy as np

FORMATS = {"RGBA8888": 0, "ABGR8888": 1, "RGB888": 2, "BGR888": 3, "I8": 5, "IA88": 6, "A8": 8, "ARGB8888": 11,
           "BGRA8888": 12, "BGRX8888": 16, "DXT1": 13, "DXT3": 14, "DXT5": 15}  # fmt: skip
BLOCK_BYTES = {13: 8, 14: 16, 15: 16}
PIXEL_BYTES = {0: 4, 1: 4, 2: 3, 3: 3, 5: 1, 6: 2, 8: 1, 11: 4, 12: 4, 16: 4}
ENVMAP = 0x4000


def level_size(format_id: int, width: int, height: int) -> int:
    if format_id in BLOCK_BYTES:
        return max(1, (width + 3) // 4) * max(1, (height + 3) // 4) * BLOCK_BYTES[format_id]
    return width * height * PIXEL_BYTES[format_id]


def make_vtf(
    largest: bytes, format_id: int, width: int, height: int, *, minor: int = 2, mipmaps: int = 1, frames: int = 1,
    faces: int = 1, flags: int = 0, first_frame: int = 0, resources: bool = True,
) -> bytes:  # fmt: skip
    """A VTF whose first frame's first face at full size is `largest`; every other image is filler (0x5A...)."""
    assert len(largest) == level_size(format_id, width, height)
    thumbnail = bytes(range(8)) * 4  # the header says 8x8 DXT1: 2x2 blocks of 8 bytes
    data = bytearray()
    for level in range(mipmaps - 1, -1, -1):
        size = level_size(format_id, max(width >> level, 1), max(height >> level, 1))
        for frame in range(frames):
            for face in range(faces):
                first = level == 0 and frame == 0 and face == 0
                data += largest if first else bytes([0x5A ^ (frame * 7 + face + level) & 0xFF]) * size
    header_size = 64 if minor < 2 else 80
    entries: list[tuple[bytes, int, int]] = []
    if minor >= 3 and resources:
        header_size = 80 + 3 * 8
    header = bytearray(header_size)
    struct.pack_into("<4s3I", header, 0, b"VTF\0", 7, minor, header_size)
    struct.pack_into("<HHIHH", header, 16, width, height, flags, frames, first_frame)
    struct.pack_into("<3f", header, 32, 0.5, 0.5, 0.5)
    struct.pack_into("<fiB", header, 48, 1.0, format_id, mipmaps)
    struct.pack_into("<iBB", header, 57, 13, 8, 8)
    if minor >= 2:
        struct.pack_into("<H", header, 63, 1)
    if minor >= 3 and resources:
        gap = b"\0" * 12  # resource data kept apart, so the image's entry is what places it
        thumbnail_at = header_size + len(gap)
        image_at = thumbnail_at + len(thumbnail)
        entries = [(b"CRC", 0x02, 0x12345678), (b"\x01\0\0", 0, thumbnail_at), (b"\x30\0\0", 0, image_at)]
        struct.pack_into("<I", header, 68, len(entries))
        for index, (tag, entry_flags, value) in enumerate(entries):
            struct.pack_into("<3sBI", header, 80 + 8 * index, tag, entry_flags, value)
        return bytes(header) + gap + thumbnail + bytes(data)
    return bytes(header) + thumbnail + bytes(data)


def encode_plain(rgba: np.ndarray, format_id: int) -> bytes:
    """(H, W, 4) uint8 top row first -> the format's bytes."""
    r, g, b, a = (rgba[..., i] for i in range(4))
    channels = {0: (r, g, b, a), 1: (a, b, g, r), 2: (r, g, b), 3: (b, g, r), 5: (r,), 6: (r, a), 8: (a,),
                11: (a, r, g, b), 12: (b, g, r, a), 16: (b, g, r, np.full_like(a, 7))}[format_id]  # fmt: skip
    return np.stack(channels, axis=-1).astype(np.uint8).tobytes()


def dxt_colour_block(colour0: int, colour1: int, codes: list[int]) -> bytes:
    """A BC1 colour block: two RGB565 ends and 16 two-bit codes, pixel 0 (top left) first, row by row."""
    bits = sum(code << (2 * index) for index, code in enumerate(codes))
    return struct.pack("<HHI", colour0, colour1, bits)


def dxt3_alpha_block(alphas: list[int]) -> bytes:
    """16 four-bit alpha values, pixel 0 in the lowest bits."""
    return sum(value << (4 * index) for index, value in enumerate(alphas)).to_bytes(8, "little")


def dxt5_alpha_block(alpha0: int, alpha1: int, codes: list[int]) -> bytes:
    return bytes([alpha0, alpha1]) + sum(code << (3 * index) for index, code in enumerate(codes)).to_bytes(6, "little")


def rgb565(red: int, green: int, blue: int) -> int:
    return (red >> 3) << 11 | (green >> 2) << 5 | blue >> 3


def reference_dxt(data: bytes, format_id: int, width: int, height: int) -> np.ndarray:
    """Pixel by pixel, as the DirectX specification words it (the unit tests' independent decoder)."""

    def expand(colour: int) -> list[int]:
        r, g, b = colour >> 11 & 31, colour >> 5 & 63, colour & 31
        return [r << 3 | r >> 2, g << 2 | g >> 4, b << 3 | b >> 2]

    out = np.zeros((height, width, 4), np.uint8)
    block_bytes = BLOCK_BYTES[format_id]
    across = (width + 3) // 4
    for block in range(len(data) // block_bytes):
        chunk = data[block * block_bytes : (block + 1) * block_bytes]
        colour = chunk[-8:]
        c0, c1, bits = struct.unpack("<HHI", colour)
        e0, e1 = expand(c0), expand(c1)
        pairs = list(zip(e0, e1, strict=True))
        if c0 > c1 or format_id != 13:
            palette = [[*e0, 255], [*e1, 255], [*((2 * a + b + 1) // 3 for a, b in pairs), 255],
                       [*((a + 2 * b + 1) // 3 for a, b in pairs), 255]]  # fmt: skip
        else:
            palette = [[*e0, 255], [*e1, 255], [*((a + b) // 2 for a, b in pairs), 255], [0, 0, 0, 0]]
        for pixel in range(16):
            y, x = (block // across) * 4 + pixel // 4, (block % across) * 4 + pixel % 4
            if y >= height or x >= width:
                continue
            value = list(palette[bits >> (2 * pixel) & 3])
            if format_id == 14:
                value[3] = (int.from_bytes(chunk[:8], "little") >> (4 * pixel) & 15) * 17
            elif format_id == 15:
                a0, a1 = chunk[0], chunk[1]
                code = int.from_bytes(chunk[2:8], "little") >> (3 * pixel) & 7
                if a0 > a1:
                    alphas = [a0, a1] + [((7 - i) * a0 + i * a1 + 3) // 7 for i in range(1, 7)]
                else:
                    alphas = [a0, a1] + [((5 - i) * a0 + i * a1 + 2) // 5 for i in range(1, 5)] + [0, 255]
                value[3] = alphas[code]
            out[y, x] = value
    return out
