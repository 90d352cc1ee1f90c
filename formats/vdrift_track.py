"""VDrift track object lists: `objects/list.txt` (the old format every shipped track uses) and `objects/objects.txt`
(the newer one), read and written as VDrift's track loader (`src/trackloader.cpp`) reads them; pure Python.

Both are kept whole: every comment, blank line and value is kept as read, so a list written back differs only
where a setting changed. Text is decoded as Latin-1 (every byte stands for itself) and written the same way.

`list.txt`: whitespace-separated values (the game reads it with `>>`); a value that starts with `#` makes the rest
of its line a comment (the game skips at most 1,024 characters, through the line's end). The first value is the
number of values per entry (the game has required 17 since December 2011; before, 14 to 17 were accepted, the
last ones left out); then one entry per model, in the fields of LIST_FIELDS, values past the 17th ignored.
An entry's text is everything from the end of the previous entry's last line to the end of its own last line (its
`#entry N` comment goes with it), so entries can be reordered, dropped or added.

`objects.txt`: an INI file read as VDrift's `read_ini` does: `[section]` lines, `key = value` lines, `;` or `#`
start a comment (so does `]`), dotted names nest. Each `[object.NAME]` is an object; its body is the subsection
`[object.NAME.body]` (or keys `body.KEY` under `[object.NAME]`), holding `model`, `texture` and the keys of
OBJECT_FIELDS. A body included from another file (`body = &file`) is not the pack's: left as it is. The game loads
the objects sorted by name, so their order in the file does not matter; it is kept.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from .errors import FormatError

LIST_FILE = "list.txt"
OBJECTS_FILE = "objects.txt"
LIST_VALUES = 17  # what VDrift has required since 2011 (trackloader.cpp `expected_params`)
MIN_LIST_VALUES = 14  # what older releases accepted (fields past the count left at their defaults)

Value = bool | int | float | str


@dataclass(frozen=True, eq=False)  # (hashed by identity, in C: parse_value's cache is asked 30,000 times a list)
class TrackField:
    name: str  # in the file (objects.txt key) or VDrift's source (list.txt)
    kind: type  # bool, int, float or str
    default: Value
    description: str


LIST_FIELDS: tuple[TrackField, ...] = (
    TrackField("model", str, "", "The model's file name (its pack member)"),
    TrackField("texture", str, "", "The diffuse image (the game also loads NAME-misc1.png and NAME-misc2.png)"),
    TrackField("mipmap", bool, True, "Mipmap the texture"),
    TrackField("nolighting", bool, False, "Draw without lighting"),
    TrackField("skybox", bool, False, "Part of the sky box (drawn behind everything, follows the camera)"),
    TrackField("transparent_blend", int, 0, "0: opaque; 1: alpha blended; 2: double-sided (never culled)"),
    TrackField("bump_wavelength", float, 1.0, "Surface bump wavelength (read, unused by today's game)"),
    TrackField("bump_amplitude", float, 0.0, "Surface bump amplitude (read, unused by today's game)"),
    TrackField("driveable", bool, False, "Driveable (deprecated: the game uses Collidable)"),
    TrackField("collidable", bool, True, "Cars collide with the model (its triangles are the collision mesh)"),
    TrackField("friction_notread", float, 1.0, "Friction for tyres without tread (unused by today's game)"),
    TrackField("friction_tread", float, 0.9, "Friction for treaded tyres (unused by today's game)"),
    TrackField("rolling_resistance", float, 1.0, "Rolling resistance (unused by today's game)"),
    TrackField("rolling_drag", float, 0.0, "Rolling drag (unused by today's game)"),
    TrackField("isashadow", bool, False, "A baked shadow: not drawn when dynamic shadows are on"),
    TrackField("clamptexture", int, 0, "Texture edges: 0 repeat, 1 clamp U and V, 2 clamp U, 3 clamp V"),
    TrackField("surface", int, 0, "The surface (of surfaces.txt, counted from 0) cars drive on"),
)

OBJECT_FIELDS: tuple[TrackField, ...] = (
    TrackField("model", str, "", "The model's file name (its pack member)"),
    TrackField("texture", str, "", "Images, comma-separated: diffuse, misc1, misc2"),
    TrackField("mipmap", bool, True, "Mipmap the textures"),
    TrackField("nolighting", bool, False, "Draw without lighting"),
    TrackField("skybox", bool, False, "Part of the sky box"),
    TrackField("alphablend", bool, False, "Alpha blended"),
    TrackField("doublesided", bool, False, "Double-sided (never culled)"),
    TrackField("isashadow", bool, False, "A baked shadow: not drawn when dynamic shadows are on"),
    TrackField("clampuv", int, 0, "Texture edges: 0 repeat, 1 clamp U and V, 2 clamp U, 3 clamp V"),
    TrackField("surface", int, 0, "The surface (of surfaces.txt, counted from 0) of a static collidable body"),
    TrackField("mass", float, 0.0, "Present: collidable; under 0.001 static, else a dynamic body of this mass"),
)
_OBJECT_KEYS = {spec.name: spec for spec in OBJECT_FIELDS}
_BOOL_WORDS = ("1", "true", "on")  # PTree's bool: anything else is false


@lru_cache(maxsize=4096)  # (a track's thousands of entries repeat a few dozen distinct values)
def parse_value(spec: TrackField, raw: str, ini: bool = False) -> Value:
    """The value the game reads from `raw` (ValueError when it is no number where one belongs). A list.txt bool is
    read as an integer (1: true); an objects.txt one is true only when exactly `1`, `true` or `on`."""
    if spec.kind is str:
        return raw
    if spec.kind is bool and ini:
        return raw in _BOOL_WORDS
    if _NUMBER.fullmatch(raw) is None:
        raise ValueError(raw)
    number = float(raw)
    if not -(2.0**31) < number < 2.0**31:  # (also infinity: what the game's 32-bit numbers cannot hold)
        raise ValueError(raw)
    if spec.kind is bool:
        return number == 1
    return int(number) if spec.kind is int else number


def format_value(spec: TrackField, value: Value) -> str:
    if spec.kind is bool:
        return "1" if value else "0"
    if spec.kind in (int, float) and isinstance(value, float) and not math.isfinite(value):
        raise FormatError(f"{spec.name} is {value!r}: the game reads a finite number there")
    if spec.kind is int:
        return str(int(value))
    if spec.kind is float:
        text = repr(float(value))
        return text if "e" in text or "." in text or "n" in text else f"{text}.0"
    return str(value)


def same_value(spec: TrackField, raw: str, value: Value, ini: bool = False) -> bool:
    """Whether `value` is what `raw` already says (then `raw` is written as it was)."""
    try:
        return parse_value(spec, raw, ini) == (spec.kind(value) if spec.kind is not str else str(value))
    except (TypeError, ValueError, OverflowError):  # (OverflowError: an infinite value for an int field)
        return False


_NUMBER = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*")


def position(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of `offset` in `text`."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


# ------------------------------------------------------------------------------------------------ list.txt

_TOKEN = re.compile(r"[^ \t\n\v\f\r]+")  # (C's isspace, not Python's wider \s)
COMMENT_SKIP = 1024  # characters the game skips after a `#` value (`ignore(1024, '\n')`)


def tokens(text: str, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, int]]:
    """(start, end) of each value the game reads, comments skipped as it skips them: a `#` value and what follows it
    to the end of its line, at most COMMENT_SKIP characters after it. (One scan: a track's list holds 30,000.)"""
    stop = len(text) if stop is None else stop
    return iter([match.span() for match in _VALUE_OR_COMMENT.finditer(text, start, stop) if match.lastindex is None])


# (a comment and what it skips of its line, or a value; the newline itself need not be skipped: it is a space)
_VALUE_OR_COMMENT = re.compile(rf"(#[^ \t\n\v\f\r]*[^\n]{{0,{COMMENT_SKIP}}})|[^ \t\n\v\f\r]+")


@dataclass
class ListEntry:
    text: str  # the entry as read: its leading comments and blank lines, its values, the rest of its last line
    spans: list[tuple[int, int]]  # each value's (start, end) in `text`
    offset: int = 0  # where `text` starts in the file read
    settings: dict[str, Value] | None = field(default=None, compare=False, repr=False)  # entry_settings, once read

    @property
    def values(self) -> list[str]:
        return [self.text[start:end] for start, end in self.spans]

    @property
    def model(self) -> str:
        start, end = self.spans[0]
        return self.text[start:end]


@dataclass
class ListDocument:
    head: str  # up to the end of the count's line
    count: int  # values per entry
    entries: list[ListEntry]
    tail: str  # after the last entry's line
    warnings: list[str] = field(default_factory=list)


def _boundary(text: str, end: int, next_start: int) -> int:
    """Where a piece of the list that ends with a value at `end` stops: after its line, or at the next value."""
    newline = text.find("\n", end, next_start)
    return newline + 1 if newline >= 0 else next_start


def read_list(text: str, path: str | None = None) -> ListDocument:
    try:
        return _read_list(text)
    except FormatError as error:
        if path:
            error.with_path(path)
        raise


def _read_list(text: str) -> ListDocument:
    spans = list(tokens(text))
    if not spans:
        raise FormatError("the object list is empty: it must start with the number of values per entry", line=1,
                          column=1)  # fmt: skip
    count_token = text[spans[0][0] : spans[0][1]]
    if not count_token.isdigit() or not MIN_LIST_VALUES <= int(count_token) <= 10_000:
        line, column = position(text, spans[0][0])
        raise FormatError(f"the number of values per entry must be {LIST_VALUES} (at least {MIN_LIST_VALUES}), "
                          f"not {count_token!r}", line=line, column=column)  # fmt: skip
    count = int(count_token)
    warnings = []
    if count != LIST_VALUES:
        warnings.append(f"the list has {count} values per entry; VDrift since 2011 loads only lists of {LIST_VALUES}")
    values = spans[1:]
    if len(values) % count:
        first = values[len(values) - len(values) % count]
        line, column = position(text, first[0])
        raise FormatError(f"the last entry (model {text[first[0]:first[1]]!r}) has {len(values) % count} of its "
                          f"{count} values", line=line, column=column)  # fmt: skip
    ends = [end for _, end in values[count - 1 :: count]]
    starts = [start for start, _ in values[count::count]] + [len(text)]
    cut = _boundary(text, spans[0][1], values[0][0] if values else len(text))
    head = text[:cut]
    entries = []
    for number, (end, next_start) in enumerate(zip(ends, starts, strict=True)):
        stop = _boundary(text, end, next_start)
        own = values[number * count : (number + 1) * count]
        entries.append(ListEntry(text[cut:stop], [(a - cut, b - cut) for a, b in own], cut))
        cut = stop
    document = ListDocument(head, count, entries, text[cut:], warnings)
    read: dict[str, dict[str, Value]] = {}
    for entry in entries:
        _check_entry(entry, text, read)
    return document


def _check_entry(entry: ListEntry, text: str, read: dict[str, dict[str, Value]]) -> None:
    """Every number of the entry is one the game reads; its settings are kept for entry_settings. `read`: the
    numbers of the entries before, by their text (a track's thousands of entries repeat a few dozen)."""
    spans = entry.spans[: len(LIST_FIELDS)]
    numbers_text = entry.text[spans[2][0] : spans[-1][1]]  # (LIST_FIELDS: model, texture, then numbers)
    numbers = read.get(numbers_text)
    if numbers is None:
        numbers = read[numbers_text] = _numbers(entry, text)
    (model_start, model_end), (texture_start, texture_end) = spans[:2]
    entry.settings = {LIST_FIELDS[0].name: entry.text[model_start:model_end],
                      LIST_FIELDS[1].name: entry.text[texture_start:texture_end], **numbers}  # fmt: skip


def _numbers(entry: ListEntry, text: str) -> dict[str, Value]:
    numbers: dict[str, Value] = {}
    for spec, (start, end) in zip(LIST_FIELDS[2:], entry.spans[2:], strict=False):
        try:
            numbers[spec.name] = parse_value(spec, entry.text[start:end])
        except ValueError:
            line, column = position(text, entry.offset + start)
            raise FormatError(f"{spec.name} of model {entry.model!r} must be a number (of 32 bits), not "
                              f"{entry.text[start:end]!r}", line=line, column=column) from None  # fmt: skip
    return numbers


def entry_settings(entry: ListEntry) -> dict[str, Value]:
    """The entry's fields as the game reads them (model and texture as text)."""
    if entry.settings is not None:  # (read with the list)
        return dict(entry.settings)
    return {spec.name: parse_value(spec, raw) for spec, raw in zip(LIST_FIELDS, entry.values, strict=False)}


def parse_entry(text: str, count: int) -> ListEntry:
    """An entry's text as kept with an object (the count of the list it came from)."""
    spans = list(tokens(text))
    if len(spans) != count:
        raise FormatError(f"a kept list entry has {len(spans)} values, not {count}")
    return ListEntry(text, spans)


_ENTRY_COMMENT = re.compile(r"#entry (\d+)")


def updated_entry(
    entry: ListEntry | None, count: int, settings: Mapping[str, Value], number: int, newline: str = "\n",
    old_number: int | None = None,
) -> str:
    """The entry's text with the fields of `settings` that differ from what it says replaced (the rest exactly as
    read), and its `#entry N` comment renumbered when it moved; without `entry`, a new one in listedit's layout."""
    if entry is None:
        lines = [format_value(spec, settings.get(spec.name, spec.default)) for spec in LIST_FIELDS[:count]]
        lines += ["0"] * (count - len(lines))
        return newline + f"#entry {number}" + newline + newline.join(lines) + newline
    text = entry.text
    pieces: list[str] = []
    cut = 0
    fields = zip(LIST_FIELDS, entry.spans, strict=False)
    numbers = _numbers_said(tuple([text[start:end] for start, end in entry.spans[2 : len(LIST_FIELDS)]]))
    if numbers is not None and numbers.items() <= settings.items():  # (as same_value would find for each)
        fields = zip(LIST_FIELDS[:2], entry.spans, strict=False)  # (only the model and texture may differ)
    for spec, (start, end) in fields:
        raw = text[start:end]
        if spec.name in settings and not same_value(spec, raw, settings[spec.name]):
            replacement = format_value(spec, settings[spec.name])
            if not replacement or _TOKEN.fullmatch(replacement) is None or replacement.startswith("#"):
                raise FormatError(f"{spec.name} {replacement!r} of model {entry.model!r} cannot be written to a list "
                                  "(empty, or with spaces, or starting with #)")  # fmt: skip
            pieces += [text[cut:start], replacement]
            cut = end
    pieces.append(text[cut:])
    result = "".join(pieces)
    if old_number is not None and old_number != number:
        lead_end = entry.spans[0][0]
        lead = _ENTRY_COMMENT.sub(lambda m: f"#entry {number}" if int(m[1]) == old_number else m[0],
                                  result[:lead_end], count=1)  # fmt: skip
        result = lead + result[lead_end:]
    return result


def unchanged_entry(
    text: str, count: int, settings: Mapping[str, Value], number: int, old_number: int | None = None
) -> str | None:
    """`text` when updated_entry(parse_entry(text, count), count, settings, number, old_number=old_number) would
    write it as it is (every field of `settings` says what it says, every number among them, and the entry keeps its
    number); None when that cannot be told this quickly (then ask those): a track's thousands of entries, most
    unchanged since read, without the scan of tokens and the entry's pieces for each."""
    if old_number is not None and old_number != number:
        return None
    values = _plain_values(text)
    if values is None or len(values) != count:
        return None
    numbers = _numbers_said(tuple(values[2 : len(LIST_FIELDS)]))
    if numbers is None or not numbers.items() <= settings.items():  # (updated_entry's test: the numbers kept)
        return None
    for name, raw in zip(("model", "texture"), values, strict=False):  # (LIST_FIELDS' first two, kind str)
        if name in settings and str(settings[name]) != raw:
            return None
    return text


# Blank lines and comment lines (a `#` value first on its line), as an entry's `#entry N` lead: no values in them
# while each comment is shorter than what the game skips of its line (the whole lead is)
_COMMENT_LINES = re.compile(r"(?:[ \t\v\f\r]*(?:#[^\n]*)?\n)*")


def _plain_values(text: str) -> list[str] | None:
    """The values tokens finds in an entry's text, where every comment is in lines before its values (None: some
    comment may sit among them)."""
    start = 0
    if "#" in text:
        start = text.find("\n", text.rfind("#")) + 1
        if not start or start > COMMENT_SKIP or _COMMENT_LINES.fullmatch(text, 0, start) is None:
            return None
    if _SPLIT_ALSO.search(text, start) is None:
        return text[start:].split()  # (quicker than the token pattern)
    return _TOKEN.findall(text, start)


_SPLIT_ALSO = re.compile("[\x1c-\x1f\x85\xa0]")  # what str.split takes for a space in Latin-1 and C does not


@lru_cache(maxsize=4096)  # (a track's thousands of entries repeat a few dozen)
def _numbers_said(values: tuple[str, ...]) -> dict[str, Value] | None:
    """The settings an entry's values after the model and texture say (None if one is no number). A setting equal
    to what its value says is what same_value finds the same: equal numbers stay equal as the field's kind."""
    try:
        return {spec.name: parse_value(spec, raw) for spec, raw in zip(LIST_FIELDS[2:], values, strict=False)}
    except ValueError:
        return None


def write_list(head: str, entries: Sequence[str], tail: str) -> str:
    return head + "".join(entries) + tail


def encode(text: str) -> bytes:
    return text.encode("latin-1")


def decode(data: bytes) -> str:
    return data.decode("latin-1")


# ------------------------------------------------------------------------------------------------ objects.txt


@dataclass
class IniLine:
    text: str  # the line with its end
    section: str | None = None  # a `[section]` line's name
    key: str | None = None  # a `key = value` line's full dotted name (with its section)
    value_span: tuple[int, int] | None = None  # the value's (start, end) in `text`

    @property
    def value(self) -> str:
        assert self.value_span is not None
        return self.text[self.value_span[0] : self.value_span[1]]


@dataclass
class TrackBody:
    """One `[object.NAME]` whose body is in the file: its settings and where they are written."""

    name: str  # NAME
    keys: dict[str, int]  # body key -> its line's index (the last one: the game keeps the last)
    prefix: str  # how a new key line is written: "" under [object.NAME.body], "body." under [object.NAME]
    insert_after: int  # the index of the line a new key goes after

    def settings(self, lines: Sequence[IniLine]) -> dict[str, Value]:
        result: dict[str, Value] = {}
        for key, index in self.keys.items():
            if key in _OBJECT_KEYS:
                try:
                    result[key] = parse_value(_OBJECT_KEYS[key], lines[index].value, ini=True)
                except ValueError:
                    continue  # (the game reads such a number as 0; kept as written)
        return result


@dataclass
class ObjectsDocument:
    lines: list[IniLine]
    bodies: list[TrackBody]

    @property
    def text(self) -> str:
        return "".join(line.text for line in self.lines)

    def body_of(self, model: str) -> TrackBody | None:
        """The first object (in file order) whose body is `model` (compared ignoring case if none is equal)."""
        models = [(body, self.lines[body.keys["model"]].value.strip()) for body in self.bodies if "model" in body.keys]
        for body, name in models:
            if name == model:
                return body
        return next((body for body, name in models if name.lower() == model.lower()), None)


def _ini_line(text: str, section: str) -> IniLine:
    """One line as VDrift's read_ini reads it (including its off-by-one section names without `[`)."""
    line = text.rstrip("\n")
    begin = _first_not_of(line, " \t[", 0)
    end = _first_of(line, ";#]\r", begin)
    if not line or begin >= end:
        return IniLine(text)
    equals = line.find("=", begin)
    if equals < 0 or equals >= end:
        last = _last_not_of(line, " \t\r]", end)
        return IniLine(text, section=line[begin : begin + last])  # (the game's substr(begin, last))
    value_start = _first_not_of(line, " \t\r", equals + 1)
    key_end = _last_not_of(line, " \t", equals - 1)
    if value_start >= end:
        return IniLine(text)
    key = line[begin : begin + key_end + 1]  # (the game's substr(begin, key_end + 1): indented keys get mangled)
    return IniLine(text, key=f"{section}.{key}" if section else key, value_span=(value_start, min(end, len(line))))


def _first_not_of(line: str, chars: str, start: int) -> int:
    return next((i for i in range(start, len(line)) if line[i] not in chars), len(line) + 1)


def _first_of(line: str, chars: str, start: int) -> int:
    return next((i for i in range(start, len(line)) if line[i] in chars), len(line) + 1)


def _last_not_of(line: str, chars: str, start: int) -> int:
    return next((i for i in range(min(start, len(line) - 1), -1, -1) if line[i] not in chars), -1)


def read_objects(text: str, path: str | None = None) -> ObjectsDocument:
    lines: list[IniLine] = []
    section = ""
    bodies: dict[str, TrackBody] = {}
    for number, raw in enumerate(text.splitlines(keepends=True), 1):
        if "\0" in raw:
            raise FormatError("objects.txt holds a NUL byte: not a text file", path=path, line=number,
                              column=raw.index("\0") + 1)  # fmt: skip
        line = _ini_line(raw, section)
        lines.append(line)
        index = len(lines) - 1
        if line.section is not None:
            section = line.section
            parts = section.split(".")
            if len(parts) == 3 and parts[0] == "object" and parts[2] == "body":
                bodies.setdefault(parts[1], TrackBody(parts[1], {}, "", index)).insert_after = index
            continue
        if line.key is None:
            continue
        parts = line.key.split(".")
        if len(parts) == 4 and parts[0] == "object" and parts[2] == "body":
            written = line.key[len(section) + 1 :] if section else line.key
            body = bodies.setdefault(parts[1], TrackBody(parts[1], {}, written[: -len(parts[3])], index))
            body.keys[parts[3]] = index
            body.insert_after = max(body.insert_after, index)
    kept = [body for body in bodies.values() if "model" in body.keys]
    return ObjectsDocument(lines, kept)


def updated_objects(document: ObjectsDocument, changes: Mapping[str, Mapping[str, Value]],
                    added: Sequence[tuple[str, Mapping[str, Value]]] = ()) -> str:  # fmt: skip
    """The file with each body's (by object NAME) settings of `changes` that differ written in place (a key it
    lacks added after its last line), and `added` (object NAME, settings) as new objects at the end."""
    texts = [line.text for line in document.lines]
    extra: dict[int, list[str]] = {}
    newline = "\r\n" if any(t.endswith("\r\n") for t in texts) else "\n"
    for body in document.bodies:
        for key, value in changes.get(body.name, {}).items():
            spec = _OBJECT_KEYS.get(key)
            if spec is None:
                continue
            if key in body.keys:
                line = document.lines[body.keys[key]]
                if not same_value(spec, line.value, value, ini=True):  # (a new value drops the spaces before a
                    # comment: the game would read a bool `1   ` as false)
                    start, end = line.value_span or (0, 0)
                    texts[body.keys[key]] = line.text[:start] + _ini_value(spec, value) + line.text[end:]
            elif value != spec.default:
                extra.setdefault(body.insert_after, []).append(f"{body.prefix}{key} = {_ini_value(spec, value)}")
    pieces = []
    for index, text in enumerate(texts):
        pieces.append(text)
        if index in extra:
            if not text.endswith("\n"):
                pieces.append(newline)
            pieces += [line + newline for line in extra[index]]
    result = "".join(pieces)
    for name, settings in added:
        if result and not result.endswith("\n"):
            result += newline
        keys = [f"{key} = {_ini_value(_OBJECT_KEYS[key], value)}" for key, value in settings.items()
                if key in _OBJECT_KEYS and (key in ("model", "texture") or value != _OBJECT_KEYS[key].default)]
        result += newline.join(["", f"[object.{name}.body]", *keys]) + newline
    return result


def _ini_value(spec: TrackField, value: Value) -> str:
    text = format_value(spec, value)
    if any(char in text for char in ";#]\r\n") or not text.strip():
        raise FormatError(f"{spec.name} {text!r} cannot be written to objects.txt (empty, or with ; # ] or a line end)")
    return text
