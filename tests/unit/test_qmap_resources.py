"""The game's resource list (Resources.dat): read as the engine reads it, a map's QMap entry added or updated in
place, no other byte changed; the --register options of `python -m qmap_compiler`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from qmap_compiler import QmapError
from qmap_compiler.__main__ import main
from qmap_compiler.resources import (
    default_game_folder,
    game_path,
    parse_resources,
    plan_registration,
    quoted,
    register_map,
)
from tests.sample_paths import sample_dir

SOURCE = (b'QMAP TMP 10\nobjects {\n mesh "P" {\n  0,0,0 0,0,0 1,1,1 30 1\n  materials 1 { "M" }\n'
          b"  vertices 4 { 0,0,0 1,0,0 1,1,0 0,1,0 }\n  faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 }\n }\n}\n")
LISTING = (b'texture "Wall" "Game\\\\Textures\\\\Wall.tga";\n'
           b'QMap "Town" "Game\\\\Town.qmap";\n'
           b"\n"
           b'QMesh "Gun" LOCK "Game\\\\Models\\\\Gun.qmsh";\n')


def sample_listing() -> bytes:
    return (sample_dir("qmap") / "Resources.dat").read_bytes()


def inserted(old: bytes, new: bytes) -> tuple[int, bytes]:
    """Where `new` is `old` with one run of bytes inserted, and that run (fails otherwise)."""
    start = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), len(old))
    extra = len(new) - len(old)
    assert extra > 0 and new[:start] + new[start + extra :] == old
    return start, new[start : start + extra]


# ------------------------------------------------------------------------------------------- the shipped list


def test_the_shipped_list_reads_with_its_two_maps() -> None:
    listing = parse_resources(sample_listing(), "Resources.dat")
    maps = [(r.name, r.state, r.file, r.line) for r in listing.resources if r.kind == b"QMap"]
    assert maps == [(b"PacMan_Map", None, b"Game\\PacMan.qmap", 5), (b"FppMap", None, b"Game\\Fpp.qmap", 75)]
    assert len(listing.resources) == 85
    assert {r.kind for r in listing.resources} == {b"texture", b"QMap", b"QMesh", b"Terrain"}
    assert listing.newline == b"\n"


def test_a_map_already_listed_keeps_its_entry_and_the_file_its_bytes() -> None:
    data = sample_listing()
    registration = plan_registration(parse_resources(data, "Resources.dat"), "Game\\Fpp.qmap")
    assert (registration.action, registration.name, registration.line_number) == ("unchanged", "FppMap", 75)
    assert registration.line() == 'QMap "FppMap" "Game\\\\Fpp.qmap";'
    assert registration.data == data


def test_changing_the_state_touches_only_the_state_word() -> None:
    data = sample_listing()
    other_spelling = plan_registration(parse_resources(data, "Resources.dat"), "game/FPP.QMAP")
    assert other_spelling.name == "FppMap"  # the entry of the same file, as Windows compares names
    locked = plan_registration(parse_resources(data, "Resources.dat"), "Game\\Fpp.qmap", state="LOCK")
    assert locked.action == "updated" and locked.name == "FppMap"
    at, run = inserted(data, locked.data)
    assert run == b"LOCK " and data[:at].endswith(b'QMap "FppMap" ')
    loaded = plan_registration(parse_resources(locked.data, "Resources.dat"), "Game\\Fpp.qmap", state="LOAD")
    assert loaded.data == locked.data.replace(b"LOCK", b"LOAD")
    back = plan_registration(parse_resources(loaded.data, "Resources.dat"), "Game\\Fpp.qmap", state="NONE")
    assert back.data == data


def test_a_new_map_goes_on_a_line_after_the_last_map() -> None:
    data = sample_listing()
    added = plan_registration(parse_resources(data, "Resources.dat"), "Game\\Maps\\Dungeon.qmap", state="LOAD")
    assert (added.action, added.name, added.line_number) == ("added", "Dungeon", 76)
    at, run = inserted(data, added.data)
    assert run == b'QMap "Dungeon" LOAD "Game\\\\Maps\\\\Dungeon.qmap";\n'
    assert data[:at].endswith(b'QMap "FppMap" "Game\\\\Fpp.qmap";\n')
    reread = parse_resources(added.data, "Resources.dat")
    assert [r.name for r in reread.resources if r.kind == b"QMap"] == [b"PacMan_Map", b"FppMap", b"Dungeon"]


def test_register_map_writes_the_list_once(tmp_path: Path) -> None:
    game = tmp_path / "TFQ"
    (game / "Game").mkdir(parents=True)
    listing = game / "Game" / "Resources.dat"
    shutil.copyfile(sample_dir("qmap") / "Resources.dat", listing)
    before = listing.read_bytes()
    registration = register_map(listing, game / "Game" / "Lab.qmap", state="LOCK")
    assert registration.action == "added"
    assert inserted(before, listing.read_bytes())[1] == b'QMap "Lab" LOCK "Game\\\\Lab.qmap";\n'
    again = register_map(listing, game / "Game" / "Lab.qmap")
    assert again.action == "unchanged" and again.line() == 'QMap "Lab" LOCK "Game\\\\Lab.qmap";'
    assert sorted(p.name for p in listing.parent.iterdir()) == ["Resources.dat"]  # no temporary file left


# ------------------------------------------------------------------------------------------- lists made here


def registered(data: bytes, file: str = "Game\\New.qmap", name: str | None = None, state: str = "KEEP") -> bytes:
    return plan_registration(parse_resources(data, "R.dat"), file, name, state).data


def test_an_entry_is_updated_in_place_keeping_its_spacing() -> None:
    data = b'QMap  "Town"\tLOAD   "Game\\\\Old.qmap" ;  // the town\r\ntexture "T" "t.tga";\r\n'
    assert registered(data, "Game\\Town2.qmap", "Town") == data.replace(b"Old", b"Town2")
    assert registered(data, "Game\\Old.qmap", "Town", "NONE") == data.replace(b"LOAD   ", b"")
    multiline = b'QMap "Town"\n\t"Game\\\\Town.qmap";\n'
    assert registered(multiline, "Game\\Town.qmap", "Town", "LOCK") == b'QMap "Town"\n\tLOCK\n\t"Game\\\\Town.qmap";\n'
    glued = b'QMap "Town""Game\\\\Town.qmap";'
    assert registered(glued, "Game\\Town.qmap", "Town", "LOAD") == b'QMap "Town" LOAD "Game\\\\Town.qmap";'


def test_names_match_byte_for_byte_and_strings_by_their_value() -> None:
    data = b'QMap "Town" "Game\\x5CTown.qmap";\n'  # \x5C: the backslash written another way
    assert registered(data, "Game\\Town.qmap", "Town") == data
    assert registered(data, "Game\\Town.qmap") == data  # the default name: the entry of this file
    other_case = registered(data, "Game\\Town.qmap", "town")  # the engine's names are case-sensitive
    assert other_case == data + b'QMap "town" "Game\\\\Town.qmap";\n'


def test_the_default_name_keeps_the_entry_s_own_bytes() -> None:
    data = b'QMap "Mapa\x81" "Game\\\\X.qmap";\n'  # 0x81: no Windows-1250 character, taken as it is
    assert registered(data, "Game\\X.qmap", state="LOCK") == data.replace(b'" "', b'" LOCK "')


def test_new_entries_take_the_file_s_line_ending_and_place() -> None:
    crlf = LISTING.replace(b"\n", b"\r\n")
    assert inserted(crlf, registered(crlf))[1] == b'QMap "New" "Game\\\\New.qmap";\r\n'
    assert inserted(LISTING, registered(LISTING))[0] == LISTING.index(b"\n", LISTING.index(b"QMap")) + 1
    no_map = b'texture "T" "t.tga";'
    assert registered(no_map) == no_map + b'\r\nQMap "New" "Game\\\\New.qmap";\r\n'
    assert registered(b"") == b'QMap "New" "Game\\\\New.qmap";\r\n'
    assert registered(b"// list\n") == b'// list\nQMap "New" "Game\\\\New.qmap";\n'
    shared_line = b'QMap "A" "a.qmap"; texture "T" "t.tga";\n'
    assert registered(shared_line) == b'QMap "A" "a.qmap";\nQMap "New" "Game\\\\New.qmap"; texture "T" "t.tga";\n'
    continued_comment = b'QMap "A" "a.qmap"; // goes on \\\ninto this line\ntexture "T" "t.tga";\n'
    result = registered(continued_comment)  # not inside the comment's second line
    assert [r.name for r in parse_resources(result, "R.dat").resources] == [b"A", b"New", b"T"]


def test_a_line_continuation_inside_the_file_name_is_replaced_with_it() -> None:
    data = b'QMap "Town" "Game\\\\To\\\nwn.qmap";\n'
    assert parse_resources(data, "R.dat").resources[0].file == b"Game\\Town.qmap"
    assert registered(data, "Game\\City.qmap", "Town") == b'QMap "Town" "Game\\\\City.qmap";\n'


def test_strings_are_written_with_the_tokenizer_s_escapes() -> None:
    assert quoted(b'a\\b"c\x01\xb9') == b'"a\\\\b\\"c\\x01\xb9"'
    data = registered(b"", "Maps\\Zamek.qmap", 'Zamek "Świętego" Ł', "LOCK")
    listing = parse_resources(data, "R.dat")
    assert listing.resources[0].name == 'Zamek "Świętego" Ł'.encode("cp1250")
    assert listing.resources[0].file == b"Maps\\Zamek.qmap"


BAD_LISTS = {
    "unknown type": (b'texture "A" "a.tga";\nQmap "B" "b.qmap";\n', (2, 1), "unknown resource type 'Qmap'"),
    "no ';' at the end": (b'texture "A" "a.tga";\ntexture "B" "b.tga"\n', (2, 1), "no ';'"),
    "state the engine does not know": (b'QMap "B" LOADED "b.qmap";', (1, 10), "expected a string"),
    "QMap without its ';'": (b'QMap "B" "b.qmap" texture "A" "a.tga";', (1, 19), "expected ';'"),
    "unclosed string": (b'\n\ntexture "A "a.tga";', (3, 18), "unterminated string"),
    "UTF-8 byte order mark": (b'\xef\xbb\xbftexture "A" "a.tga";', (1, 1), "unrecognised character"),
    "name not a string": (b"texture A;", (1, 9), "expected a string"),
    "unclosed comment": (b'texture "A" "a.tga"; /* no end', (1, 22), "unclosed comment"),
}


@pytest.mark.parametrize("case", sorted(BAD_LISTS))
def test_a_list_the_engine_cannot_read_is_refused_with_its_place(case: str) -> None:
    data, (line, column), message = BAD_LISTS[case]
    with pytest.raises(QmapError) as caught:
        plan_registration(parse_resources(data, "Game/Resources.dat"), "Game\\New.qmap")
    assert message in caught.value.message
    assert (caught.value.file, caught.value.line, caught.value.column) == ("Game/Resources.dat", line, column)


def test_a_name_the_list_holds_otherwise_is_refused() -> None:
    with pytest.raises(QmapError, match=r"already the texture resource at R.dat:1:1"):
        registered(LISTING, name="Wall")
    with pytest.raises(QmapError, match=r"declared 2 times \(R.dat:1:1, R.dat:2:1\)"):
        registered(b'QMap "A" "a.qmap";\nQMap "A" "b.qmap";\n', name="A")


def test_what_windows_1250_cannot_hold_is_refused() -> None:
    with pytest.raises(QmapError, match="resource name 'Дом' has characters Windows-1250 cannot encode"):
        registered(LISTING, name="Дом")
    with pytest.raises(QmapError, match=r"file name .* cannot encode"):
        registered(LISTING, "Game\\地图.qmap")
    with pytest.raises(QmapError, match="empty"):
        registered(LISTING, name="")


def test_file_names_are_relative_to_the_game_folder(tmp_path: Path) -> None:
    listing = tmp_path / "Game" / "Resources.dat"
    assert default_game_folder(listing) == str(tmp_path)
    assert game_path(tmp_path / "Game" / "Maps" / "X.qmap", tmp_path) == "Game\\Maps\\X.qmap"
    with pytest.raises(QmapError, match="not inside the game folder"):
        game_path(tmp_path.parent / "X.qmap", tmp_path)


# ------------------------------------------------------------------------------------------- the command line


def game_with_list(tmp_path: Path, data: bytes = LISTING) -> tuple[Path, Path]:
    (tmp_path / "Game").mkdir()
    (tmp_path / "src").mkdir()
    listing = tmp_path / "Game" / "Resources.dat"
    listing.write_bytes(data)
    source = tmp_path / "src" / "Dungeon.qmap.tmp"
    source.write_bytes(SOURCE)
    return listing, source


def test_command_line_compiles_and_registers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listing, source = game_with_list(tmp_path)
    output = tmp_path / "Game" / "Dungeon.qmap"
    assert main([str(source), "-o", str(output), "--register", str(listing), "--resource-state", "lock"]) == 0
    assert output.is_file()
    entry = b'QMap "Dungeon" LOCK "Game\\\\Dungeon.qmap";\n'
    assert inserted(LISTING, listing.read_bytes())[1] == entry
    assert f'{listing}:3: added QMap "Dungeon" LOCK "Game\\\\Dungeon.qmap";' in capsys.readouterr().out
    assert main([str(source), "-o", str(output), "--register", str(listing), "--resource-name", "Dungeon",
                 "--resource-state", "none"]) == 0  # fmt: skip
    assert inserted(LISTING, listing.read_bytes())[1] == entry.replace(b"LOCK ", b"")
    assert "updated" in capsys.readouterr().out


def test_command_line_shows_the_line_without_changing_the_list(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    listing, source = game_with_list(tmp_path)
    output = tmp_path / "Game" / "Town.qmap"
    assert main([str(source), "-o", str(output), "--register", str(listing), "--show-resource-line",
                 "--resource-state", "load"]) == 0  # fmt: skip
    assert capsys.readouterr().out.splitlines()[-1] == 'QMap "Town" LOAD "Game\\\\Town.qmap";'
    assert listing.read_bytes() == LISTING
    assert main([str(source), "-o", str(output), "--game-folder", str(tmp_path), "--show-resource-line"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == 'QMap "Town" "Game\\\\Town.qmap";'


@pytest.mark.parametrize("extra, message", [
    (["--register", "missing.dat"], "missing.dat: no such file"),
    (["--register", "{list}", "--resource-state", "locked"], "invalid choice: 'locked'"),
    (["--resource-name", "X"], "--resource-name goes with --register"),
    (["--register", "{list}", "--game-folder", "{list}"], "no such folder"),
    (["--register", "{list}", "--game-folder", "{src}"], "not inside the game folder"),
    (["--register", "{list}", "--resource-name", "Дом"], "cannot encode"),
    (["--show-resource-line"], "needs --register"),
])  # fmt: skip
def test_command_line_mistakes_exit_2_before_compiling(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       extra: list[str], message: str) -> None:  # fmt: skip
    listing, source = game_with_list(tmp_path)
    output = tmp_path / "Game" / "Dungeon.qmap"
    values = {"list": str(listing), "src": str(tmp_path / "src")}
    assert main([str(source), "-o", str(output)] + [arg.format(**values) for arg in extra]) == 2
    assert message in capsys.readouterr().err
    assert not output.exists() and listing.read_bytes() == LISTING


def test_command_line_refuses_a_broken_list_before_compiling(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    broken = LISTING + b'texture "Floor" "Game\\\\Floor.tga"\n'
    listing, source = game_with_list(tmp_path, broken)
    output = tmp_path / "Game" / "Dungeon.qmap"
    assert main([str(source), "-o", str(output), "--register", str(listing)]) == 1
    assert f"{listing}:5:1: the texture resource has no ';'" in capsys.readouterr().err
    assert not output.exists() and listing.read_bytes() == broken


def test_a_second_name_for_a_listed_file_is_added_with_a_warning_naming_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Legal for the game, but surprising: the map is then listed under two names."""
    plan = plan_registration(parse_resources(LISTING, "Resources.dat"), "Game\\Town.qmap", "TownMap")
    assert plan.action == "added" and plan.line() == 'QMap "TownMap" "Game\\\\Town.qmap";'
    assert plan.warning == ("Resources.dat:2:1 already names this file as QMap 'Town': the game now lists the map "
                            "under both 'Town' and 'TownMap' (rename that entry, or register under 'Town' to keep "
                            "one name)")  # fmt: skip
    assert plan_registration(parse_resources(LISTING, "Resources.dat"), "Game\\Town.qmap").warning is None
    listing, source = game_with_list(tmp_path)
    output = tmp_path / "Game" / "Town.qmap"
    assert main([str(source), "-o", str(output), "--register", str(listing), "--resource-name", "TownMap"]) == 0
    assert "warning: " + str(listing) + ":2:1 already names this file as QMap 'Town'" in capsys.readouterr().err
