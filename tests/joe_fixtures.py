"""Small JOE and JPK files made by code, for what the real samples do not cover (spec joe.md F.5)."""

from __future__ import annotations

import struct

import numpy as np

from formats import joe, jpk

# A unit cube: 8 corners, 12 CCW triangles (seen from outside), one normal per face side.
CUBE_POSITIONS = np.array(
    [[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], np.float32
)  # index = 4x + 2y + z with 0/1 bits
CUBE_QUADS = [  # (corners CCW from outside, outward normal)
    ((0, 1, 3, 2), (-1, 0, 0)),
    ((4, 6, 7, 5), (1, 0, 0)),
    ((0, 4, 5, 1), (0, -1, 0)),
    ((2, 3, 7, 6), (0, 1, 0)),
    ((0, 2, 6, 4), (0, 0, -1)),
    ((1, 5, 7, 3), (0, 0, 1)),
]


def cube_frame(with_texcoords: bool = True) -> joe.JoeFrame:
    vertex, normal = [], []
    for (a, b, c, d), _ in CUBE_QUADS:
        vertex += [(a, b, c), (a, c, d)]
    for side, _ in enumerate(CUBE_QUADS):
        normal += [(side, side, side)] * 2
    texcoords = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    texcoord_indices = [(0, 1, 2), (0, 2, 3)] * 6
    return joe.JoeFrame(
        vertex_indices=np.array(vertex, np.uint16),
        normal_indices=np.array(normal, np.uint16),
        texcoord_indices=np.array(texcoord_indices if with_texcoords else [(0, 0, 0)] * 12, np.uint16),
        positions=CUBE_POSITIONS.copy(),
        normals=np.array([n for _, n in CUBE_QUADS], np.float32),
        texcoords=texcoords if with_texcoords else np.zeros((0, 2), np.float32),
    )


def cube(with_texcoords: bool = True, magic: int = joe.MAGIC_IDP2) -> joe.JoeDocument:
    return joe.JoeDocument(frames=[cube_frame(with_texcoords)], magic=magic)


def cube_bytes(**options: bool) -> bytes:
    return joe.write_joe(cube(**options))


def clockwise_cube() -> joe.JoeDocument:
    document = cube()
    frame = document.first_frame
    frame.vertex_indices = frame.vertex_indices[:, [0, 2, 1]].copy()
    frame.texcoord_indices = frame.texcoord_indices[:, [0, 2, 1]].copy()
    return document


def dof2joe_cube() -> joe.JoeDocument:
    """What dof2joe wrote: magic 0, positions converted (x, -z, y), normals left in the source axes."""
    document = cube(magic=0)
    frame = document.first_frame
    x, y, z = frame.positions.T
    frame.positions = np.stack((x, -z, y), axis=1).astype(np.float32)
    return document


def perpendicular_normals_cube() -> joe.JoeDocument:
    """An authored CCW file on which VDrift's heuristic fires: every normal lies in its face's plane."""
    document = cube()
    frame = document.first_frame
    frame.normals = np.roll(frame.normals, 1, axis=1)  # (x, y, z) -> (z, x, y): perpendicular to the old one
    return document


def raw_joe(
    header: tuple[int, int, int, int] | None = None,
    faces: list[tuple[int, ...]] | None = None,
    counts: tuple[int, int, int] = (3, 0, 1),
    floats: int | None = None,
) -> bytes:
    """Hand-built bytes with arbitrary header and counts, for malformed-input tests."""
    faces = faces if faces is not None else [(0, 1, 2, 0, 0, 0, 0, 0, 0)]
    header = header or (joe.MAGIC_IDP2, 3, len(faces), 1)
    body = b"".join(struct.pack("<9H", *face) for face in faces)
    verts, texcoords, normals = counts
    float_count = floats if floats is not None else 3 * verts + 3 * normals + 2 * texcoords
    floats_bytes = np.arange(float_count, dtype="<f4").tobytes()
    return struct.pack("<4I", *header) + body + struct.pack("<3I", *counts) + floats_bytes


def raw_jpk(entries: list[tuple[int, int, bytes]], name_size: int, data: bytes, count: int | None = None) -> bytes:
    """A pack with a hand-made table: (offset, length, name bytes) per entry, then `data` after the table."""
    table = b"".join(struct.pack("<II", o, n) + name.ljust(name_size, b"\0")[:name_size] for o, n, name in entries)
    return struct.pack("<8sII", b"JPK01.00", len(entries) if count is None else count, name_size) + table + data


def pack_of(models: dict[str, bytes]) -> bytes:
    return jpk.write_jpk(jpk.JpkDocument(members=[jpk.JpkMember(name, data) for name, data in models.items()]))
