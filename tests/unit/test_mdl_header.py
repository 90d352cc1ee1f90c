"""The studio model header reader on files made here: GoldSrc's tables, Source's counts, and every bad offset."""

from __future__ import annotations

import struct

import pytest

from formats.errors import FormatError
from formats.mdl_header import read_mdl_header, read_mdl_header_file


def _name(text: str, size: int) -> bytes:
    return text.encode("ascii").ljust(size, b"\0")


def goldsrc_model(bones: list[tuple[str, int]], sequences: list[tuple[str, float, int, bool]],
                  body_parts: list[tuple[str, int]], textures: list[tuple[str, int, int]],
                  attachments: list[str]) -> bytes:  # fmt: skip
    """A version-10 file: the 244-byte header, then each table as studio.h lays its rows out."""
    tables = b""
    offsets: dict[str, int] = {}

    def add(name: str, rows: list[bytes]) -> None:
        nonlocal tables
        offsets[name] = 244 + len(tables) if rows else 0
        tables += b"".join(rows)

    add("bones", [_name(n, 32) + struct.pack("<ii", parent, 0) + bytes(72) for n, parent in bones])
    add("sequences", [_name(n, 32) + struct.pack("<fi", fps, int(loop)) + bytes(16) + struct.pack("<i", frames)
                      + bytes(116) for n, fps, frames, loop in sequences])  # fmt: skip
    add("body_parts", [_name(n, 64) + struct.pack("<iii", models, 0, 0) for n, models in body_parts])
    add("textures", [_name(n, 64) + struct.pack("<iiii", 0, w, h, 0) for n, w, h in textures])
    add("attachments", [_name(n, 32) + bytes(56) for n in attachments])
    header = bytearray(244)
    header[:8] = b"IDST" + struct.pack("<i", 10)
    header[8:72] = _name("models/crate.mdl", 64)
    struct.pack_into("<i", header, 72, 244 + len(tables))
    for name, count_at, count in (("bones", 140, len(bones)), ("sequences", 164, len(sequences)),
                                  ("textures", 180, len(textures)), ("body_parts", 204, len(body_parts)),
                                  ("attachments", 212, len(attachments))):  # fmt: skip
        struct.pack_into("<ii", header, count_at, count, offsets[name])
    struct.pack_into("<i", header, 196, 1)  # one skin family
    return bytes(header) + tables


def source_model(version: int, counts: dict[int, int] | None = None) -> bytes:
    header = bytearray(408)
    header[:12] = b"IDST" + struct.pack("<ii", version, 1234)
    header[12:76] = _name("props/crate.mdl", 64)
    struct.pack_into("<i", header, 76, len(header))
    for count_at, count in (counts or {156: 3, 188: 2, 204: 1, 232: 2}).items():
        struct.pack_into("<ii", header, count_at, count, 248)  # (rows inside the file)
    return bytes(header)


GOLDSRC = goldsrc_model([("root", -1), ("neck", 0)], [("idle", 30.0, 1, False), ("walk", 24.0, 9, True)],
                        [("body", 1), ("hats", 2)], [("skin.bmp", 64, 32)], ["muzzle"])  # fmt: skip


def test_goldsrc_tables_are_read_with_their_names() -> None:
    header = read_mdl_header(GOLDSRC)
    assert (header.version, header.engine, header.name, header.length) == (10, "goldsrc", "models/crate.mdl",
                                                                           len(GOLDSRC))  # fmt: skip
    assert [(b.name, b.parent) for b in header.bones] == [("root", -1), ("neck", 0)]
    assert [(s.name, s.fps, s.frames, s.loop) for s in header.sequences] == [("idle", 30.0, 1, False),
                                                                             ("walk", 24.0, 9, True)]  # fmt: skip
    assert [(p.name, p.models) for p in header.body_parts] == [("body", 1), ("hats", 2)]
    assert [(t.name, t.width, t.height) for t in header.textures] == [("skin.bmp", 64, 32)]
    assert header.attachments == ["muzzle"]
    assert header.counts["skin_families"] == 1 and header.counts["bones"] == 2


@pytest.mark.parametrize("version", [44, 48, 49])
def test_source_counts_and_name(version: int) -> None:
    header = read_mdl_header(source_model(version))
    assert (header.version, header.engine, header.name) == (version, "source", "props/crate.mdl")
    assert {key: header.counts[key] for key in ("bones", "sequences", "textures", "body_parts")} == {
        "bones": 3, "sequences": 2, "textures": 1, "body_parts": 2}  # fmt: skip
    assert header.bones == []  # (Source: counts alone)


@pytest.mark.parametrize(("data", "offset", "words"), [
    (b"IDSQ" + bytes(300), 0, "does not start with IDST"),
    (b"IDST" + struct.pack("<i", 6) + bytes(300), 4, "version 6"),
    (GOLDSRC[:200], 200, "ends inside the GoldSrc header"),
    (source_model(48)[:247], 247, r"ends inside the Source \(version 48\) header"),
    (GOLDSRC[:140] + struct.pack("<i", -1) + GOLDSRC[144:], 140, "negative count of bones"),
    (GOLDSRC[:140] + struct.pack("<i", 1000) + GOLDSRC[144:], 144, "1000 bones of 112 bytes"),
    (GOLDSRC[:208] + struct.pack("<i", len(GOLDSRC) - 10) + GOLDSRC[212:], 208, "body parts of 76 bytes"),
    (source_model(48, {232: 100_000}), 236, "100000 body parts"),
])  # fmt: skip
def test_bad_bytes_name_their_offset(data: bytes, offset: int, words: str) -> None:
    with pytest.raises(FormatError, match=words) as caught:
        read_mdl_header(data)
    assert caught.value.offset == offset


def test_a_parent_that_is_no_bone_is_refused() -> None:
    data = goldsrc_model([("root", 5)], [], [], [], [])
    with pytest.raises(FormatError, match="parent 5 is not a bone") as caught:
        read_mdl_header(data)
    assert caught.value.offset == 244 + 32


def test_the_file_reader_names_the_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.mdl"
    path.write_bytes(b"nothing")
    with pytest.raises(FormatError) as caught:
        read_mdl_header_file(str(path))
    assert caught.value.path == str(path) and str(caught.value).startswith(f"{path}, byte 0: ")
