"""The game's resource list (`Resources.dat`, spec §9.1): read it as the engine's resource manager does, and add or
update a map's `QMap "<name>" [LOAD|LOCK] "<file>" ;` entry changing no other byte of the file.

The list is a sequence of `<type> "<name>" [LOAD|LOCK] <parameters> ;` in the Tokenizer syntax (§4): raw bytes,
Windows-1250 by convention, backslashes escaped inside strings. Every resource type the engine registers ends its
parameters with `;`, so the parameters of the other types are kept as they are, unread. Resource names are
compared byte for byte (the engine's std::map of names is case-sensitive) and must be unique across the list.
File names are relative to the folder the game runs in, which in the shipped game is the folder above the one
holding the list (`Game\\Resources.dat` names `"Game\\\\Fpp.qmap"`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from .errors import QmapError
from .resource_states import STATES
from .tokenizer import Kind, Source, Token, Tokenizer
from .writer import write_atomic

ENCODING = "cp1250"
QMAP_TYPE = b"QMap"
STATE_WORDS = (b"LOAD", b"LOCK")
# The types the game registers (Main.cpp: RegisterTypesD3d, QMesh, Multishader, QMap, Terrain).
KNOWN_TYPES = frozenset({b"texture", b"CubeTexture", b"d3dxfont", b"d3dxeffect", b"font", b"TextureSurface",
                         b"QMesh", b"Multishader", b"QMap", b"Terrain"})  # fmt: skip
_LINE_END_AFTER = re.compile(rb"[ \t\x0b]*(?://[^\r\n]*)?(\r\n|\n)")


@dataclass(frozen=True)
class Span:
    """Bytes `start:end` of the raw file."""

    start: int
    end: int


@dataclass(frozen=True)
class Resource:
    """One declaration of the list. `state`, `file` and their spans are read for QMap entries only."""

    kind: bytes
    name: bytes
    state: bytes | None
    file: bytes | None
    line: int
    column: int
    start: int  # raw offset of the type word
    name_end: int  # raw offset just after the name string
    state_span: Span | None
    file_span: Span | None
    end: int  # raw offset just after the closing ';'

    def where(self, filename: str) -> str:
        return f"{filename}:{self.line}:{self.column}"


@dataclass(frozen=True)
class ResourceList:
    data: bytes
    filename: str
    resources: tuple[Resource, ...]

    @property
    def newline(self) -> bytes:
        """The file's own line ending (its first one); CR LF, as on the game's Windows, for a file of one line."""
        first = self.data.find(b"\n")
        if first < 0:
            return b"\r\n"
        return b"\r\n" if first > 0 and self.data[first - 1] == 0x0D else b"\n"


@dataclass(frozen=True)
class Registration:
    """What registering a map does to the list: the new bytes, and what happened to which entry."""

    data: bytes
    action: str  # "added", "updated" or "unchanged"
    name: str
    line_text: bytes  # the entry as it reads after the change (its bytes from the type to the ';')
    line_number: int
    warning: str | None = None  # another entry names the same file (legal, but the game then has two names for it)

    @property
    def changed(self) -> bool:
        return self.action != "unchanged"

    def line(self) -> str:
        return self.line_text.decode(ENCODING, errors="replace")


# ------------------------------------------------------------------------------------------------- reading


def parse_resources(data: bytes, filename: str) -> ResourceList:
    """Every declaration of a resource list; QmapError with file, line and column for anything the engine would
    not read (a lexical error, a missing name or ';', an unknown type, a QMap entry of another shape)."""
    source = Source(data, filename)
    tokens = Tokenizer(source)
    resources: list[Resource] = []
    while tokens.peek().kind is not Kind.EOF:
        resources.append(_declaration(tokens, source))
    return ResourceList(data, filename, tuple(resources))


def _declaration(tokens: Tokenizer, source: Source) -> Resource:
    kind = tokens.expect_any_ident()
    if kind.text not in KNOWN_TYPES:
        known = ", ".join(sorted(word.decode() for word in KNOWN_TYPES))
        raise tokens.error(kind, f"unknown resource type '{kind.text.decode()}' (the game knows {known})")
    name = tokens.expect_string()
    state: Token | None = None
    if tokens.peek().kind is Kind.IDENT and tokens.peek().text in STATE_WORDS:
        state = tokens.next()
    file: Token | None = None
    if kind.text == QMAP_TYPE:
        file = tokens.expect_string()
        close = tokens.expect_symbol(b";")
    else:
        close = _skip_parameters(tokens, kind)
    error = source.error(kind.pos, "")
    assert error.line is not None and error.column is not None
    return Resource(
        kind.text, name.value, state.text if state else None, file.value if file else None, error.line,
        error.column, _raw_span(source, kind).start, _raw_span(source, name).end,
        _raw_span(source, state) if state else None, _raw_span(source, file) if file else None,
        _raw_span(source, close).end,
    )  # fmt: skip


def _skip_parameters(tokens: Tokenizer, kind: Token) -> Token:
    while True:
        token = tokens.next()
        if token.kind is Kind.EOF:
            raise tokens.error(kind, f"the {kind.text.decode()} resource has no ';' before the end of the file")
        if token.kind is Kind.SYMBOL and token.text == b";":
            return token


def _raw_span(source: Source, token: Token) -> Span:
    """The token's bytes in the raw file (a line continuation inside it included)."""
    last = source.original_offset(token.pos + len(token.text) - 1)
    return Span(source.original_offset(token.pos), last + 1)


def read_resources(path: str | os.PathLike[str]) -> ResourceList:
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise QmapError(f"cannot read: {error.strerror}", str(path)) from None
    return parse_resources(data, str(path))


# ------------------------------------------------------------------------------------------------- writing


def quoted(value: bytes) -> bytes:
    """A Tokenizer string holding `value`: backslash and quote escaped, control bytes as \\xHH."""
    out = bytearray(b'"')
    for byte in value:
        if byte in (0x5C, 0x22):
            out += b"\\" + bytes([byte])
        elif byte < 0x20 or byte == 0x7F:
            out += b"\\x%02X" % byte
        else:
            out.append(byte)
    return bytes(out + b'"')


def encoded(text: str, what: str, filename: str | None = None) -> bytes:
    """`text` in Windows-1250, or a QmapError naming the characters it cannot hold."""
    try:
        return text.encode(ENCODING)
    except UnicodeEncodeError as error:
        bad = text[error.start : error.end]
        raise QmapError(f"the {what} {text!r} has characters Windows-1250 cannot encode ({bad!r})", filename) from None


def resource_line(name: bytes, file: bytes, state: str) -> bytes:
    """`QMap "<name>" [LOAD|LOCK] "<file>";` (state NONE or KEEP: none)."""
    word = state.encode() + b" " if state in ("LOAD", "LOCK") else b""
    return b"QMap " + quoted(name) + b" " + word + quoted(file) + b";"


def game_path(
    map_path: str | os.PathLike[str], game_folder: str | os.PathLike[str], filename: str | None = None
) -> str:
    """The map's file name as the engine opens it: relative to the game's folder, with backslashes."""
    folder = os.path.abspath(game_folder)
    target = os.path.abspath(map_path)
    try:
        inside = os.path.normcase(os.path.commonpath([folder, target])) == os.path.normcase(folder)
    except ValueError:  # (another drive)
        inside = False
    if not inside or os.path.normcase(target) == os.path.normcase(folder):
        raise QmapError(f"the map {target} is not inside the game folder {folder}: the engine opens its files "
                        "relative to the folder it runs in (move the map there, or choose the game folder)", filename)
    return os.path.relpath(target, folder).replace(os.sep, "\\").replace("/", "\\")


def default_game_folder(resources_path: str | os.PathLike[str]) -> str:
    """The folder above the list's own, as in the shipped game (Game\\Resources.dat, Engine\\Resources.dat)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(resources_path)))


def _same_file(first: bytes, second: bytes) -> bool:
    """Windows file names: case and the kind of slash do not matter."""
    def key(name: bytes) -> str:
        return name.replace(b"/", b"\\").decode(ENCODING, errors="replace").lower()

    return key(first) == key(second)


def plan_registration(listing: ResourceList, file: str, name: str | None = None, state: str = "KEEP") -> Registration:
    """The list with the map's entry added or updated (nothing written). `file` is the engine's file name (see
    `game_path`); `name` defaults to the entry that already names this file, else to the file's stem."""
    if state not in STATES:
        raise ValueError(f"state must be one of {', '.join(STATES)}, not {state!r}")
    file_bytes = encoded(file, "map's file name", listing.filename)
    same_file = [r for r in listing.resources if r.kind == QMAP_TYPE and _same_file(r.file or b"", file_bytes)]
    if name is None and same_file:  # (its bytes as they are: they may not all be Windows-1250 characters)
        name_bytes = same_file[0].name
        name = name_bytes.decode(ENCODING, errors="replace")
    else:
        name = _stem(file) if name is None else name
        name_bytes = encoded(name, "resource name", listing.filename)
    if not name_bytes:
        raise QmapError("the resource name is empty: the game finds a map by its name", listing.filename)
    entry = _entry_named(listing, name_bytes, name)
    if entry is None:
        registration = _added(listing, name, name_bytes, file_bytes, state)
    else:
        registration = _updated(listing, entry, name, name_bytes, file_bytes, state)
    others = [r for r in same_file if r.name != name_bytes]
    return replace(registration, warning=_another_name(others, name, listing.filename)) if others else registration


def _another_name(others: list[Resource], name: str, filename: str) -> str:
    """The warning for a map the list then names twice: which entry names it too, and how to keep one name."""
    other = others[0]
    shown = other.name.decode(ENCODING, errors="replace")
    return (f"{other.where(filename)} already names this file as QMap {shown!r}: the game now lists the map under "
            f"both {shown!r} and {name!r} (rename that entry, or register under {shown!r} to keep one name)")


def _stem(file: str) -> str:
    base = file.replace("/", "\\").rsplit("\\", 1)[-1]
    return base[: -len(".qmap")] if base.lower().endswith(".qmap") else base


def _entry_named(listing: ResourceList, name_bytes: bytes, name: str) -> Resource | None:
    named = [r for r in listing.resources if r.name == name_bytes]
    others = [r for r in named if r.kind != QMAP_TYPE]
    if others:
        raise QmapError(f"the name {name!r} is already the {others[0].kind.decode()} resource at "
                        f"{others[0].where(listing.filename)}: the game needs every resource name once")
    if len(named) > 1:
        raise QmapError(f"the name {name!r} is declared {len(named)} times ({named[0].where(listing.filename)}, "
                        f"{named[1].where(listing.filename)}): the game would refuse the list; remove one first")
    return named[0] if named else None


def _updated(
    listing: ResourceList, entry: Resource, name: str, name_bytes: bytes, file: bytes, state: str
) -> Registration:
    assert entry.file_span is not None
    data = listing.data
    edits: list[tuple[int, int, bytes]] = []  # (start, end, replacement) of raw bytes
    if entry.file != file:
        edits.append((entry.file_span.start, entry.file_span.end, quoted(file)))
    wanted = entry.state if state == "KEEP" else (None if state == "NONE" else state.encode())
    if wanted != entry.state:
        edits.append(_state_edit(data, entry, wanted))
    new_data = data
    for start, end, replacement in sorted(edits, reverse=True):
        new_data = new_data[:start] + replacement + new_data[end:]
    result = _checked(listing, new_data, len(listing.resources), name_bytes, wanted, file)
    action = "updated" if edits else "unchanged"
    return Registration(new_data, action, name, *_entry_text(result, name_bytes))


def _state_edit(data: bytes, entry: Resource, wanted: bytes | None) -> tuple[int, int, bytes]:
    """Replace, insert or remove the state word, keeping the entry's spacing."""
    assert entry.file_span is not None
    if entry.state_span is not None and wanted is not None:
        return entry.state_span.start, entry.state_span.end, wanted
    if entry.state_span is not None:  # removed with the blanks after it (or before it, at the end of a line)
        start, end = entry.state_span.start, entry.state_span.end
        after = len(data[end:]) - len(data[end:].lstrip(b" \t"))
        if after:
            return start, end + after, b""
        before = len(data[:start]) - len(data[:start].rstrip(b" \t"))
        return start - before, end, b""
    assert wanted is not None
    gap = data[entry.name_end : entry.file_span.start]
    if not gap:  # "name""file"
        return entry.file_span.start, entry.file_span.start, b" " + wanted + b" "
    separator = gap if not gap.strip(b" \t\r\n\x0b") else b" "  # the name-to-file spacing, repeated
    return entry.file_span.start, entry.file_span.start, wanted + separator


def _added(listing: ResourceList, name: str, name_bytes: bytes, file: bytes, state: str) -> Registration:
    data, newline = listing.data, listing.newline
    line = resource_line(name_bytes, file, state)
    maps = [r for r in listing.resources if r.kind == QMAP_TYPE]
    if maps:  # on a line of its own after the last QMap entry's line
        end = maps[-1].end
        rest = _LINE_END_AFTER.match(data, end)
        if rest is not None and not rest.group().rstrip(b"\r\n").endswith(b"\\"):
            new_data = data[: rest.end()] + line + rest.group(1) + data[rest.end() :]
        else:  # something follows on that line: the entry goes between
            new_data = data[:end] + newline + line + data[end:]
    else:  # at the end, on a line of its own
        lead = b"" if not data or data.endswith(b"\n") else newline * (2 if data.endswith(b"\\") else 1)
        new_data = data + lead + line + newline
    word = state.encode() if state in ("LOAD", "LOCK") else None
    result = _checked(listing, new_data, len(listing.resources) + 1, name_bytes, word, file)
    return Registration(new_data, "added", name, *_entry_text(result, name_bytes))


def _checked(
    listing: ResourceList, new_data: bytes, count: int, name_bytes: bytes, state: bytes | None, file: bytes
) -> ResourceList:
    """The edited list read back: every other entry as it was, the map's entry once and as wanted."""
    try:
        result = parse_resources(new_data, listing.filename)
    except QmapError as error:  # (a case the edit rules above do not foresee: refuse rather than break the list)
        raise QmapError(f"cannot change the list safely ({error.message})", listing.filename) from None

    def plain(resource: Resource) -> tuple[bytes, bytes, bytes | None, bytes | None]:
        return resource.kind, resource.name, resource.state, resource.file

    before = [plain(r) for r in listing.resources if r.name != name_bytes]
    after = [plain(r) for r in result.resources if r.name != name_bytes]
    entry = [plain(r) for r in result.resources if r.name == name_bytes]
    if len(result.resources) != count or before != after or entry != [(QMAP_TYPE, name_bytes, state, file)]:
        raise QmapError("cannot change the list safely (its other entries would read differently)", listing.filename)
    return result


def _entry_text(listing: ResourceList, name_bytes: bytes) -> tuple[bytes, int]:
    """The bytes of the map's entry (from its type to its ';') and its line number."""
    entry = next(r for r in listing.resources if r.name == name_bytes)
    return listing.data[entry.start : entry.end], entry.line


def register_map(
    resources_path: str | os.PathLike[str], map_path: str | os.PathLike[str], name: str | None = None,
    state: str = "KEEP", game_folder: str | os.PathLike[str] | None = None,
) -> Registration:  # fmt: skip
    """Add or update the map's entry in the resource list at `resources_path`, written atomically (not at all when
    the entry is already as wanted). The map's file name is taken relative to `game_folder` (default: the folder
    above the list's)."""
    listing = read_resources(resources_path)
    registration = plan_registration(listing, map_file_name(resources_path, map_path, game_folder), name, state)
    if registration.changed:
        write_atomic(resources_path, registration.data)
    return registration


def map_file_name(resources_path: str | os.PathLike[str] | None, map_path: str | os.PathLike[str],
                  game_folder: str | os.PathLike[str] | None = None) -> str:  # fmt: skip
    """The map's file name as an entry of the list names it."""
    if game_folder is None:
        if resources_path is None:
            raise ValueError("the game folder is needed when there is no resource list")
        game_folder = default_game_folder(resources_path)
    return game_path(map_path, game_folder, None if resources_path is None else str(resources_path))


def describe_registration(registration: Registration, resources_path: str | os.PathLike[str]) -> str:
    """`Resources.dat:76: added QMap "Dungeon" "Game\\\\Dungeon.qmap";` (one line for a log or a terminal)."""
    verb = {"added": "added", "updated": "updated", "unchanged": "already up to date:"}[registration.action]
    return f"{resources_path}:{registration.line_number}: {verb} {registration.line()}"
