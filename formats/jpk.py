"""VDrift JPK ("JoePack", JPK01.00): an uncompressed archive with a table of contents (FAT) in front.

Members are found through each FAT entry's offset and length only, never by reading on sequentially: real
packs carry stale bytes after the last member, and nothing in the format orders the data.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .atomic import write_bytes_atomically
from .errors import FormatError, read_file_bytes

SIGNATURE = b"JPK01.00"
HEADER = struct.Struct("<8sII")
ENTRY_HEAD = struct.Struct("<II")


@dataclass
class JpkMember:
    name: str
    data: bytes


@dataclass
class JpkDocument:
    members: list[JpkMember]
    warnings: list[str] = field(default_factory=list)


def read_jpk(data: bytes, path: str | None = None) -> JpkDocument:
    try:
        return _read(data)
    except FormatError as error:
        if path:
            error.with_path(path)
        raise


def load_jpk(path: str) -> JpkDocument:
    return read_jpk(read_file_bytes(path), path)


def _read(data: bytes) -> JpkDocument:
    if len(data) < HEADER.size:
        raise FormatError(f"file is {len(data)} bytes, too short for the 16-byte JPK header", offset=0)
    signature, member_count, name_size = HEADER.unpack_from(data, 0)
    if signature != SIGNATURE:
        raise FormatError(f"not a JPK01.00 pack (starts with {signature!r})", offset=0)
    entry_size = ENTRY_HEAD.size + name_size
    table_size = member_count * entry_size
    if table_size > len(data) - HEADER.size:
        raise FormatError(
            f"the table of contents of {member_count} entries of {entry_size} bytes runs past the end of the file",
            offset=8,
        )
    by_name: dict[str, JpkMember] = {}
    warnings: list[str] = []
    for index in range(member_count):
        entry_offset = HEADER.size + index * entry_size
        member = _read_entry(data, entry_offset, name_size, index)
        if member.name in by_name:
            warnings.append(f"member name {member.name!r} appears more than once; the last entry wins, as in VDrift")
            del by_name[member.name]
        by_name[member.name] = member
    return JpkDocument(members=list(by_name.values()), warnings=warnings)


def _read_entry(data: bytes, entry_offset: int, name_size: int, index: int) -> JpkMember:
    member_offset, length = ENTRY_HEAD.unpack_from(data, entry_offset)
    raw_name = data[entry_offset + ENTRY_HEAD.size : entry_offset + ENTRY_HEAD.size + name_size]
    # A name that fills the field has no terminator; anything after the first NUL is padding.
    name = raw_name.split(b"\0", 1)[0].decode("latin-1")
    if not name:
        raise FormatError(f"member {index} has an empty name", offset=entry_offset + ENTRY_HEAD.size)
    if member_offset > len(data) or length > len(data) - member_offset:
        raise FormatError(
            f"member {name!r} claims bytes {member_offset}..{member_offset + length} but the file has {len(data)}",
            offset=entry_offset,
        )
    return JpkMember(name=name, data=data[member_offset : member_offset + length])


def write_jpk(document: JpkDocument) -> bytes:
    """A contiguous pack: header, FAT sized to the longest name, then the members in FAT order."""
    names = [_encode_name(member.name) for member in document.members]
    if len(set(names)) != len(names):
        raise FormatError("two members of the pack have the same name")
    name_size = max((len(name) for name in names), default=0)
    offset = HEADER.size + len(names) * (ENTRY_HEAD.size + name_size)
    table: list[bytes] = [HEADER.pack(SIGNATURE, len(names), name_size)]
    for name, member in zip(names, document.members, strict=True):
        table.append(ENTRY_HEAD.pack(offset, len(member.data)) + name.ljust(name_size, b"\0"))
        offset += len(member.data)
    if offset > 0xFFFFFFFF:
        raise FormatError("the pack would exceed 4 GiB, the limit of its 32-bit offsets")
    return b"".join(table + [member.data for member in document.members])


def save_jpk(path: str, document: JpkDocument) -> None:
    # Replaces the file whole: VDrift's own exporter updated packs in place and left stale tails behind.
    write_bytes_atomically(path, write_jpk(document))


def _encode_name(name: str) -> bytes:
    try:
        encoded = name.encode("ascii")
    except UnicodeEncodeError:
        raise FormatError(f"pack member name {name!r} is not ASCII, which VDrift's packs need") from None
    if not encoded or b"\0" in encoded:
        raise FormatError(f"pack member name {name!r} is empty or contains a NUL byte")
    return encoded
