"""DarkPlaces' `<model>.framegroups` files (Xonotic names them `<model>.iqm.framegroups`): one animation per line,
`firstframe numframes [fps [loop [name]]]`, numbered over every frame of the model.

Read as DarkPlaces reads them (model_shared.c, Mod_FrameGroupify_ParseGroups): `//` and `/* */` comments, quoted
tokens, fps 20 and looping when left out, a line with one number skipped, tokens after the name ignored, and each
group clamped into the model's frames (first 0..frames-1, count 1..the frames left, fps at least 1). A line
without a name token is named by its `//` comment, as Xonotic's files name them (`0 36 30 0 // dieone`), else
`groupified_N_anim` as the engine names it. Written as Xonotic writes them: `first count fps loop // name`.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

import numpy as np

from ..errors import FormatError, Warnings

SUFFIX = ".framegroups"
DEFAULT_FPS = 20.0
_TOKEN = re.compile(r'[ \t\r\f\v]+|//(?P<comment>[^\n]*)|/\*(?s:.*?)\*/|"(?P<quoted>[^"\n]*)"?|\n|(?P<word>[^\s]+)')


@dataclass
class FrameGroup:
    first_frame: int
    frame_count: int
    fps: float = DEFAULT_FPS
    loop: bool = True
    name: str = ""  # the line's name token or `//` comment; "" when it has neither

    def engine_name(self, index: int) -> str:
        return self.name or f"groupified_{index}_anim"


@dataclass
class _Token:
    text: str
    column: int


def framegroups_path(model_path: str) -> str:
    """Where DarkPlaces looks for a model's framegroups: beside it, the model's whole name + `.framegroups`."""
    return model_path + SUFFIX


def parse_framegroups(text: str, path: str | None = None, warnings: Warnings | None = None) -> list[FrameGroup]:
    """The groups of a framegroups file; a number that is not one raises FormatError with its line and column."""
    groups: list[FrameGroup] = []
    for line_number, tokens, comment in _lines(text):
        if len(tokens) == 1:
            if warnings is not None:
                warnings.add(f"{os.path.basename(path or 'framegroups')} line {line_number}: a first frame without "
                             "a number of frames ignored (as DarkPlaces ignores it)")  # fmt: skip
            continue
        first, count = (_number(tokens[i], int, line_number, path) for i in (0, 1))
        fps = _number(tokens[2], float, line_number, path) if len(tokens) > 2 else DEFAULT_FPS
        loop = _number(tokens[3], int, line_number, path) != 0 if len(tokens) > 3 else True
        name = tokens[4].text if len(tokens) > 4 else comment.strip()
        groups.append(FrameGroup(int(first), int(count), float(fps), loop, name))
    return groups


def _lines(text: str) -> list[tuple[int, list[_Token], str]]:
    """(line number, tokens, text of its `//` comment) of each line with tokens."""
    result: list[tuple[int, list[_Token], str]] = []
    tokens: list[_Token] = []
    comment = ""
    line, line_start, start_line = 1, 0, 1
    for match in _TOKEN.finditer(text):
        piece = match.group(0)
        if match.group("word") is not None or match.group("quoted") is not None:
            if not tokens:
                start_line = line
            value = match.group("word") if match.group("word") is not None else match.group("quoted")
            tokens.append(_Token(value, match.start() - line_start + 1))
        elif match.group("comment") is not None and tokens:
            comment = match.group("comment")
        if "\n" in piece:
            if piece == "\n" and tokens:
                result.append((start_line, tokens, comment))
                tokens, comment = [], ""
            line += piece.count("\n")
            line_start = match.start() + piece.rfind("\n") + 1
    if tokens:
        result.append((start_line, tokens, comment))
    return result


def _number(token: _Token, kind: type[int] | type[float], line: int, path: str | None) -> float:
    try:
        value = float(kind(token.text))
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise FormatError(f"{token.text!r} is not {what}", path=path, line=line, column=token.column) from None
    if not math.isfinite(value):
        raise FormatError(f"{token.text!r} is not a finite number", path=path, line=line, column=token.column)
    return value


def clamped(group: FrameGroup, frame_count: int) -> FrameGroup:
    """The group as DarkPlaces plays it on a model of `frame_count` frames (at least one)."""
    first = min(max(group.first_frame, 0), frame_count - 1)
    count = min(max(group.frame_count, 1), frame_count - first)
    return FrameGroup(first, count, max(1.0, group.fps), group.loop, group.name)


def format_framegroups(groups: list[FrameGroup]) -> str:
    """The file's text: one `first count fps loop // name` line per group (fps as the float32 it is stored as)."""
    lines = []
    for group in groups:
        fps = np.format_float_positional(np.float32(group.fps), trim="-")
        name = " ".join(group.name.split())  # (a comment ends at the line's end)
        lines.append(f"{group.first_frame} {group.frame_count} {fps} {int(group.loop)}" + (f" // {name}" if name
                                                                                            else ""))  # fmt: skip
    return "".join(line + "\n" for line in lines)
