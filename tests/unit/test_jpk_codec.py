"""JPK packs: the real pack with its quirks, hand-made tables, and the contiguous writer."""

from __future__ import annotations

import pytest

from formats import joe, jpk
from formats.errors import FormatError
from tests import joe_fixtures as fx
from tests.sample_paths import sample_dir


def test_garage_pack_reads_every_member_and_ignores_the_stale_tail() -> None:
    path = sample_dir("joe") / "track_garage_objects.jpk"
    data = path.read_bytes()
    pack = jpk.read_jpk(data, str(path))
    assert len(pack.members) == 37
    names = [m.name for m in pack.members]
    assert sum(len(name) == 19 for name in names) == 5  # names filling maxstrlen, unterminated
    assert names[0] == "joist.007.joe" and names[-1] == "Cube.020.joe"
    documents = [joe.read_joe(m.data, m.name) for m in pack.members]
    assert (documents[0].first_frame.face_count, documents[-1].first_frame.face_count) == (10, 8)
    assert all(not d.warnings for d in documents)
    assert jpk.write_jpk(pack) == data[:17659]  # contiguous rewrite = the original without its 12,257 stale bytes


def test_members_are_found_by_offset_not_by_order_and_gaps_are_skipped() -> None:
    first, second = fx.cube_bytes(), fx.cube_bytes(with_texcoords=False)
    table_end = 16 + 2 * (8 + 8)
    gap = b"garbage!"
    data = second + gap + first + b"trailing"
    entries = [
        (table_end + len(second) + len(gap), len(first), b"a.joe"),
        (table_end, len(second), b"longname"),  # exactly maxstrlen: no terminator
    ]
    pack = jpk.read_jpk(fx.raw_jpk(entries, 8, data))
    assert [(m.name, m.data) for m in pack.members] == [("a.joe", first), ("longname", second)]


def test_duplicate_names_keep_the_last_entry_with_a_warning() -> None:
    one, two = fx.cube_bytes(), fx.cube_bytes(with_texcoords=False)
    table_end = 16 + 2 * (8 + 6)
    entries = [(table_end, len(one), b"x.joe"), (table_end + len(one), len(two), b"x.joe")]
    pack = jpk.read_jpk(fx.raw_jpk(entries, 6, one + two))
    assert [m.data for m in pack.members] == [two]
    assert any("more than once" in w for w in pack.warnings)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"JPK01.0", "too short"),
        (fx.raw_jpk([], 4, b"").replace(b"JPK01.00", b"JPK02.00"), "not a JPK01.00"),
        (fx.raw_jpk([], 4, b"", count=1_000_000), "runs past the end"),
        (fx.raw_jpk([(24, 100, b"m.joe")], 0, b"x" * 10), "empty name"),
        (fx.raw_jpk([(30, 100, b"m.joe")], 6, b"x" * 10), "claims bytes"),
        (fx.raw_jpk([(2**32 - 1, 1, b"m.joe")], 6, b""), "claims bytes"),
    ],
    ids=["short", "signature", "count", "empty-name", "member-past-end", "offset-past-end"],
)
def test_bad_packs_are_format_errors(data: bytes, message: str) -> None:
    with pytest.raises(FormatError, match=message) as caught:
        jpk.read_jpk(data, "bad.jpk")
    assert caught.value.path == "bad.jpk" and caught.value.offset is not None


def test_writer_pads_names_to_the_longest_and_refuses_non_ascii_and_duplicates() -> None:
    data = fx.pack_of({"a.joe": b"1", "bbbb.joe": b"22"})
    assert data[12:16] == (8).to_bytes(4, "little")
    assert [m.data for m in jpk.read_jpk(data).members] == [b"1", b"22"]
    with pytest.raises(FormatError, match="not ASCII"):
        fx.pack_of({"caf\u00e9.joe": b""})
    with pytest.raises(FormatError, match="same name"):
        jpk.write_jpk(jpk.JpkDocument([jpk.JpkMember("a", b""), jpk.JpkMember("a", b"")]))


def test_saving_replaces_a_longer_pack_entirely(tmp_path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "objects.jpk"
    target.write_bytes(b"X" * 10_000)
    jpk.save_jpk(str(target), jpk.JpkDocument([jpk.JpkMember("a.joe", fx.cube_bytes())]))
    assert target.stat().st_size == 16 + 13 + len(fx.cube_bytes())
