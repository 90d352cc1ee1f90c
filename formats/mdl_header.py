"""The header of a compiled studio model (`.mdl`), to check what studiomdl made of an exported QC.

GoldSrc (version 10): the counts and the names of the bones (with their parents), sequences (with their rate,
frames and loop flag), body parts (with their model counts), textures (with their sizes) and attachments. Source
(versions 44 to 49, whose headers agree up to the attachments): the counts and the model's name. Every table is
checked against the file's size; bad bytes raise FormatError with the byte offset.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .errors import FormatError, read_file_bytes

MAGIC = b"IDST"
GOLDSRC_VERSION = 10
SOURCE_VERSIONS = range(44, 50)

# GoldSrc's studiohdr_t (engine/studio.h): 244 bytes; the offset of each count, and each table row's size.
_GOLDSRC_HEADER = 244
_GOLDSRC_NAME = 8  # char name[64]
_GOLDSRC_COUNTS = {  # field: (offset of the count, offset of the table's index)
    "bones": (140, 144),
    "bone_controllers": (148, 152),
    "hitboxes": (156, 160),
    "sequences": (164, 168),
    "sequence_groups": (172, 176),
    "textures": (180, 184),
    "skin_families": (196, 200),  # (numskinfamilies; numskinref at 192)
    "body_parts": (204, 208),
    "attachments": (212, 216),
}
_BONE, _SEQUENCE, _TEXTURE, _BODY_PART, _ATTACHMENT = 112, 176, 80, 76, 88
_LOOPING = 1  # mstudioseqdesc_t.flags: STUDIO_LOOPING

# Source's studiohdr_t (versions 44-49): checksum at 8, name[64] at 12; counts and indices from 156.
_SOURCE_HEADER = 248
_SOURCE_NAME = 12
_SOURCE_COUNTS = {
    "bones": (156, 160),
    "bone_controllers": (164, 168),
    "hitbox_sets": (172, 176),
    "animations": (180, 184),
    "sequences": (188, 192),
    "textures": (204, 208),
    "texture_folders": (212, 216),
    "skin_families": (224, 228),
    "body_parts": (232, 236),
    "attachments": (240, 244),
}


@dataclass
class Bone:
    name: str
    parent: int  # -1: a root


@dataclass
class Sequence:
    name: str
    fps: float
    frames: int
    loop: bool


@dataclass
class BodyPart:
    name: str
    models: int  # alternatives (a $bodygroup's studio lines; a $body: 1)


@dataclass
class Texture:
    name: str
    width: int
    height: int


@dataclass
class MdlHeader:
    version: int
    name: str  # the model's name as studiomdl stored it ($modelname)
    length: int  # the file's length as the header gives it
    counts: dict[str, int]  # every table's row count (the keys of _GOLDSRC_COUNTS or _SOURCE_COUNTS)
    bones: list[Bone] = field(default_factory=list)  # GoldSrc only (Source: counts alone)
    sequences: list[Sequence] = field(default_factory=list)
    body_parts: list[BodyPart] = field(default_factory=list)
    textures: list[Texture] = field(default_factory=list)
    attachments: list[str] = field(default_factory=list)

    @property
    def engine(self) -> str:
        return "goldsrc" if self.version == GOLDSRC_VERSION else "source"


def read_mdl_header_file(path: str) -> MdlHeader:
    try:
        return read_mdl_header(read_file_bytes(path))
    except FormatError as error:
        raise error.with_path(path) from None


def read_mdl_header(data: bytes) -> MdlHeader:
    if len(data) < 8 or data[:4] != MAGIC:
        raise FormatError(f"not a studio model: it does not start with {MAGIC.decode()}", offset=0)
    version = _int(data, 4)
    if version == GOLDSRC_VERSION:
        return _goldsrc(data)
    if version in SOURCE_VERSIONS:
        return _source(data, version)
    raise FormatError(f"studio model version {version}: known are {GOLDSRC_VERSION} (GoldSrc) and "
                      f"{SOURCE_VERSIONS.start}-{SOURCE_VERSIONS.stop - 1} (Source)", offset=4)  # fmt: skip


def _goldsrc(data: bytes) -> MdlHeader:
    _need(data, 0, _GOLDSRC_HEADER, "the GoldSrc header")
    counts = _counts(data, _GOLDSRC_COUNTS)
    header = MdlHeader(GOLDSRC_VERSION, _text(data, _GOLDSRC_NAME, 64), _int(data, 72), counts)
    header.bones = [Bone(_text(data, at, 32), _int(data, at + 32))
                    for at in _rows(data, "bones", _BONE)]  # fmt: skip
    header.sequences = [Sequence(_text(data, at, 32), _float(data, at + 32), _int(data, at + 56),
                                 bool(_int(data, at + 36) & _LOOPING))
                        for at in _rows(data, "sequences", _SEQUENCE)]  # fmt: skip
    header.body_parts = [BodyPart(_text(data, at, 64), _int(data, at + 64))
                         for at in _rows(data, "body_parts", _BODY_PART)]  # fmt: skip
    header.textures = [Texture(_text(data, at, 64), _int(data, at + 68), _int(data, at + 72))
                       for at in _rows(data, "textures", _TEXTURE)]  # fmt: skip
    header.attachments = [_text(data, at, 32) for at in _rows(data, "attachments", _ATTACHMENT)]
    for row, bone in enumerate(header.bones):
        if not -1 <= bone.parent < len(header.bones):
            at = _int(data, _GOLDSRC_COUNTS["bones"][1]) + row * _BONE + 32
            raise FormatError(f"bone {bone.name!r}: parent {bone.parent} is not a bone", offset=at)
    return header


def _source(data: bytes, version: int) -> MdlHeader:
    _need(data, 0, _SOURCE_HEADER, f"the Source (version {version}) header")
    counts = _counts(data, _SOURCE_COUNTS)
    for name, (count_at, index_at) in _SOURCE_COUNTS.items():  # (rows of at least 4 bytes each)
        _table(data, name, count_at, index_at, 4)
    return MdlHeader(version, _text(data, _SOURCE_NAME, 64), _int(data, 76), counts)


def _counts(data: bytes, fields: dict[str, tuple[int, int]]) -> dict[str, int]:
    counts = {}
    for name, (count_at, _) in fields.items():
        count = _int(data, count_at)
        if count < 0:
            raise FormatError(f"negative count of {name.replace('_', ' ')}: {count}", offset=count_at)
        counts[name] = count
    return counts


def _rows(data: bytes, name: str, size: int) -> range:
    count_at, index_at = _GOLDSRC_COUNTS[name]
    return _table(data, name, count_at, index_at, size)


def _table(data: bytes, name: str, count_at: int, index_at: int, size: int) -> range:
    """The offsets of a table's rows, checked to lie in the file."""
    count, index = _int(data, count_at), _int(data, index_at)
    if count == 0:
        return range(0)
    if index < 0 or index + count * size > len(data):
        raise FormatError(f"{count} {name.replace('_', ' ')} of {size} bytes at {index} do not fit in the file's "
                          f"{len(data)} bytes", offset=index_at)  # fmt: skip
    return range(index, index + count * size, size)


def _need(data: bytes, at: int, size: int, what: str) -> None:
    if at + size > len(data):
        raise FormatError(f"the file ends inside {what} ({len(data)} bytes, {at + size} needed)", offset=len(data))


def _int(data: bytes, at: int) -> int:
    value: int = struct.unpack_from("<i", data, at)[0]
    return value


def _float(data: bytes, at: int) -> float:
    value: float = struct.unpack_from("<f", data, at)[0]
    return value


def _text(data: bytes, at: int, size: int) -> str:
    """A fixed-size, NUL-padded name (studiomdl writes ASCII; other bytes are kept as Latin-1)."""
    return data[at : at + size].split(b"\0", 1)[0].decode("latin-1")
