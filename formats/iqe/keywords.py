"""The keyword commands (mesh, material, joint, vertexarray, animation, ...): one Python pass, they are few."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import Warnings
from .document import COMPONENT_TYPES, VERTEX_ARRAY_KINDS, IqeVertexArrayFormat
from .scan import COMMENT, KEYWORD, ScannedText, decode_text

_WHITESPACE = " \t\n\r\x0b\x0c"


@dataclass
class JointEntry:
    line: int
    name: str
    parent: int


@dataclass
class KeywordEvents:
    """What the keyword lines said, each entry with its 0-based line index."""

    meshes: list[tuple[int, str]] = field(default_factory=list)
    materials: list[tuple[int, str]] = field(default_factory=list)
    joints: list[JointEntry] = field(default_factory=list)
    vertex_arrays: list[IqeVertexArrayFormat] = field(default_factory=list)
    animations: list[tuple[int, str]] = field(default_factory=list)
    frames: list[int] = field(default_factory=list)
    framerates: list[tuple[int, float]] = field(default_factory=list)
    loops: list[int] = field(default_factory=list)
    smooth_groups: list[tuple[int, int | None]] = field(default_factory=list)  # None: keep the current key
    smooth_angles: list[tuple[int, float]] = field(default_factory=list)
    smooth_uvs: list[tuple[int, bool]] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)


class _Arguments:
    """A cursor over the arguments of one keyword line, reading names and numbers like the compiler."""

    def __init__(self, scanned: ScannedText, line_index: int, text: str, position: int) -> None:
        self.scanned = scanned
        self.line_index = line_index
        self.text = text
        self.position = position

    def _skip_space(self) -> None:
        while self.position < len(self.text) and self.text[self.position] in _WHITESPACE:
            self.position += 1

    def name(self) -> str:
        """A quoted name (up to the next quote, may hold spaces) or a bare token; "" when missing."""
        self._skip_space()
        text, start = self.text, self.position
        if start < len(text) and text[start] == '"':
            end = text.find('"', start + 1)
            if end < 0:
                self.position = len(text)
                return text[start + 1 :].rstrip("\r\n")
            self.position = end + 1
            return text[start + 1 : end]
        end = start
        while end < len(text) and text[end] not in _WHITESPACE:
            end += 1
        self.position = end
        return text[start:end]

    def column(self) -> int:
        """1-based column of the next argument."""
        self._skip_space()
        return self.position + 1

    def token(self) -> tuple[str, int]:
        """The next whitespace-delimited token and its 1-based column ("" at the end of the line)."""
        column = self.column()
        end = self.position
        while end < len(self.text) and self.text[end] not in _WHITESPACE:
            end += 1
        token, self.position = self.text[self.position : end], end
        return token, column

    def integer(self, what: str) -> tuple[int | None, int]:
        """The next word as a 32-bit integer (what the compiler reads), or None at the end of the line."""
        token, column = self.token()
        if not token or token.startswith("#"):
            return None, column
        try:
            value = int(token) if len(token) <= _SHOWN_CHARACTERS else None
        except ValueError:
            value = None
        if value is None:
            raise self.scanned.error(f"{what}: {_shown(token)} is not an integer", self.line_index, column)
        if not _INT32_MIN <= value <= _INT32_MAX:
            raise self.scanned.error(f"{what}: {value} is outside the 32-bit integers "
                                     f"({_INT32_MIN}..{_INT32_MAX})", self.line_index, column)  # fmt: skip
        return value, column

    def number(self, what: str) -> tuple[float | None, int]:
        token, column = self.token()
        if not token or token.startswith("#"):
            return None, column
        try:
            value = float(token)
        except ValueError:
            raise self.scanned.error(f"{what}: {_shown(token)} is not a number", self.line_index, column) from None
        if not math.isfinite(value):
            raise self.scanned.error(f"{what}: the number is not finite", self.line_index, column)
        return value, column


_SHOWN_CHARACTERS = 40  # (longer words are no integer; their text is not quoted back)
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def _shown(token: str) -> str:
    """A word for a message: quoted, or only its length when it is long."""
    return repr(token) if len(token) <= _SHOWN_CHARACTERS else f"a word of {len(token):,} characters"


def read_keywords(scanned: ScannedText, warnings: Warnings) -> KeywordEvents:
    events = KeywordEvents()
    unknown: dict[str, list[int]] = {}
    latin1_lines = 0
    for line_index in np.flatnonzero(scanned.command_ids == COMMENT).tolist():
        text, latin1 = decode_text(scanned.lines[line_index])
        latin1_lines += latin1
        events.comments.append(text.strip(_WHITESPACE)[1:].rstrip("\r"))
    for line_index in np.flatnonzero(scanned.command_ids == KEYWORD).tolist():
        text, latin1 = decode_text(scanned.lines[line_index])
        latin1_lines += latin1
        arguments = _Arguments(scanned, line_index, text, 0)
        command, _ = arguments.token()
        handler = _HANDLERS.get(command)
        if handler is None:
            unknown.setdefault(command, []).append(line_index)
        else:
            handler(events, arguments, warnings)
    for command, lines in unknown.items():
        warnings.add(f"line {lines[0] + 1}: unknown command {command!r} ignored ({len(lines)} lines)")
    if latin1_lines:
        warnings.add(f"{latin1_lines} lines are not UTF-8 and were read as Latin-1")
    return events


def _mesh(events: KeywordEvents, arguments: _Arguments, warnings: Warnings) -> None:
    events.meshes.append((arguments.line_index, arguments.name()))


def _material(events: KeywordEvents, arguments: _Arguments, warnings: Warnings) -> None:
    events.materials.append((arguments.line_index, arguments.name()))


def _joint(events: KeywordEvents, arguments: _Arguments, warnings: Warnings) -> None:
    name = arguments.name()
    parent, column = arguments.integer("joint parent")
    index = len(events.joints)
    if parent is None or parent < 0:
        parent = -1
    elif parent >= index:
        message = (
            f"joint {name!r} (index {index}) has parent {parent}, which is not declared before it; "
            "parents must precede their children"
        )
        raise arguments.scanned.error(message, arguments.line_index, column)
    events.joints.append(JointEntry(arguments.line_index, name, parent))


def _vertex_array(events: KeywordEvents, arguments: _Arguments, warnings: Warnings) -> None:
    line = arguments.line_index + 1
    kind = arguments.name()
    component_column = arguments.column()
    component = arguments.name()
    size, size_column = arguments.integer("vertexarray size")
    name = arguments.name() or kind
    if component not in COMPONENT_TYPES:
        message = f"vertexarray component type {component!r} is unknown (the compiler crashes on it)"
        raise arguments.scanned.error(message, arguments.line_index, component_column)
    if size is None:
        raise arguments.scanned.error("vertexarray needs a component count 1..4", arguments.line_index, size_column)
    if kind not in VERTEX_ARRAY_KINDS:
        warnings.add(f"line {line}: vertexarray type {kind!r} is unknown and ignored")
        return
    if any(existing.kind == kind for existing in events.vertex_arrays):
        warnings.add(f"line {line}: second vertexarray declaration for {kind!r} ignored (the first one wins)")
        return
    if not 1 <= size <= 4:
        warnings.add(f"line {line}: vertexarray size {size} clamped to 1..4")
        size = min(max(size, 1), 4)
    events.vertex_arrays.append(IqeVertexArrayFormat(kind, component, size, name))


def _animation(events: KeywordEvents, arguments: _Arguments, warnings: Warnings) -> None:
    events.animations.append((arguments.line_index, arguments.name()))


def _frame(events: KeywordEvents, arguments: _Arguments, warnings: Warnings) -> None:
    events.frames.append(arguments.line_index)


def _framerate(events: KeywordEvents, arguments: _Arguments, warnings: Warnings) -> None:
    rate, _ = arguments.number("framerate")
    if rate is not None and rate < 0.0:
        warnings.add(f"line {arguments.line_index + 1}: negative framerate {rate} clamped to 0")
    events.framerates.append((arguments.line_index, max(rate or 0.0, 0.0)))


def _loop(events: KeywordEvents, arguments: _Arguments, warnings: Warnings) -> None:
    events.loops.append(arguments.line_index)


def _smooth_group(events: KeywordEvents, arguments: _Arguments, warnings: Warnings) -> None:
    key, _ = arguments.integer("smoothgroup")
    events.smooth_groups.append((arguments.line_index, key))


def _smooth_angle(events: KeywordEvents, arguments: _Arguments, warnings: Warnings) -> None:
    angle, _ = arguments.number("smoothangle")
    # The compiler keeps |cos(clamp(angle))|, so -90 and 90 behave alike and a missing angle means 0.
    events.smooth_angles.append((arguments.line_index, abs(min(max(angle or 0.0, -180.0), 180.0))))


def _smooth_uv(events: KeywordEvents, arguments: _Arguments, warnings: Warnings) -> None:
    value, _ = arguments.integer("smoothuv")
    events.smooth_uvs.append((arguments.line_index, value is None or value > 0))


_HANDLERS = {
    "mesh": _mesh,
    "material": _material,
    "joint": _joint,
    "vertexarray": _vertex_array,
    "animation": _animation,
    "frame": _frame,
    "framerate": _framerate,
    "loop": _loop,
    "smoothgroup": _smooth_group,
    "smoothangle": _smooth_angle,
    "smoothuv": _smooth_uv,
}
