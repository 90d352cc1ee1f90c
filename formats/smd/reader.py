"""SMD / VTA reader with studiomdl's tolerance (spec Part B, bar Part F).

Accepted: keywords in any case; `end` with surrounding spaces; blank lines and `//` `#` `;` comment lines inside
blocks; LF, CRLF or CR; no final newline; no `version` line; unquoted bone names (warning). A file with
neither a `version` line nor a block (empty, or only blanks and comments) is an error. Small blocks are read
line by line; the triangles block and long skeleton / vertex-animation blocks are converted in bulk (numeric.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import overload

import numpy as np
import numpy.typing as npt

from ..bytescan import positions_of
from ..dedup import LineWords, byte_words, first_equal_lines
from ..errors import FileBuffer, FormatError
from .document import (
    Flavour,
    FloatArray,
    IntArray,
    SkeletonFrame,
    SmdDocument,
    SmdNode,
    Triangles,
    VertexFrame,
    empty_floats,
)
from .numeric import (
    PAD,
    Blanker,
    NumericLines,
    column_of_token,
    padded_frame,
    parse_micro_units_by_segment,
    parse_numeric_lines,
    parse_padded_micro_units,
)
from .weights import select_links

_END_LINE = re.compile(r"\n[ \t]*end[ \t]*(?=\n|\Z)", re.IGNORECASE)  # a leading literal keeps re fast
_END_LINE_BYTES = re.compile(_END_LINE.pattern.encode(), re.IGNORECASE)
_MIGHT_START_END = np.isin(np.arange(256), list(b"eE \t"))  # bytes an `end` line can start with
_WINDOW = 1 << 13  # bytes searched for a block's end by the regular expression alone (a longer block: through its
# line ends, which its reader needs anyway; the expression would scan 64 KB of a triangles block in vain)
_MOST_CANDIDATES = 1000  # more lines that might be `end`: the regular expression is quicker
_VERTEX_LIKE = re.compile(r"[-+]?\d+(?:\s+\S+){8}")
_QUOTED_OR_WORD = re.compile(r'"([^"]*)"|"|(\S+)')
_INT32_MAX = 2**31 - 1
_CHUNK = 32768  # rows gathered at a time
_BLOCKS = ("nodes", "skeleton", "triangles", "vertexanimation")
# A `nodes` or `skeleton` block of up to this many characters is parsed once for every file with the same text at the
# same line (a QC's meshes each repeat their model's bones and rest pose): its numbers are a few, its fixed cost not
_REPEATED_BLOCK_CHARACTERS = 16384


def is_comment(stripped: str) -> bool:
    return stripped.startswith(("//", "#", ";"))


class _Block:
    """The text between a block keyword line and its `end` line; decoded and split into lines only when asked."""

    def __init__(
        self, first_line: int, data: str | bytes | memoryview, line_ends: npt.NDArray[np.int64] | None = None
    ) -> None:
        self.first_line = first_line  # line number of lines[0]
        self._data = data  # the text, or its ASCII bytes
        self._line_ends = line_ends  # offsets of its line ends, when known

    @cached_property
    def text(self) -> str:
        return self._data if isinstance(self._data, str) else bytes(self._data).decode("ascii")

    @cached_property
    def data(self) -> bytes | memoryview:
        """The text encoded as UTF-8."""
        return self._data.encode() if isinstance(self._data, str) else self._data

    @cached_property
    def line_ends(self) -> npt.NDArray[np.int64]:
        """Offsets of the line ends in `data`."""
        if self._line_ends is not None:
            return self._line_ends
        return positions_of(np.frombuffer(self.data, dtype=np.uint8), ord("\n"))

    @cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n") if self.text else []

    def numbers(self, indexes: Sequence[int] | npt.NDArray[np.int64]) -> Sequence[int]:
        return _LineNumbers(self.first_line, indexes)


class _LineNumbers(Sequence[int]):
    """File line numbers of some block lines, computed only when an error needs one. With `vertex_lines`, the
    indexes count the vertex lines of a block of 4 lines per triangle (as _block_line_of_vertex numbers them)."""

    def __init__(
        self, first: int, indexes: Sequence[int] | npt.NDArray[np.int64], vertex_lines: bool = False
    ) -> None:  # fmt: skip
        self.first, self.indexes, self.vertex_lines = first, indexes, vertex_lines

    def __len__(self) -> int:
        return len(self.indexes)

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[int]: ...

    def __getitem__(self, index: int | slice) -> int | Sequence[int]:
        if isinstance(index, slice):
            return [self._line(int(i)) for i in self.indexes[index]]
        return self._line(int(self.indexes[index]))

    def _line(self, index: int) -> int:
        return self.first + (index + index // 3 + 1 if self.vertex_lines else index)


class _Cursor:
    """Walks the normalised text line by line, and hands over whole blocks up to their `end` line.

    An ASCII file without CR is walked as bytes, the same text byte for byte: only the lines read one by one are
    decoded, and a long block's end is found through its line ends (numpy), which its reader then reuses."""

    def __init__(self, text: str | FileBuffer) -> None:
        self.text = text
        self.pos = 0
        self.line = 1

    def next_line(self) -> tuple[int, str] | None:
        if self.pos > len(self.text) or (self.pos == len(self.text) and self.pos > 0):
            return None
        if isinstance(self.text, str):
            end = self.text.find("\n", self.pos)
            end = len(self.text) if end < 0 else end
            line = self.text[self.pos : end]
        else:
            end = self.text.find(b"\n", self.pos)
            end = len(self.text) if end < 0 else end
            line = self.text[self.pos : end].decode("ascii")
        found = (self.line, line)
        self.pos, self.line = end + 1, self.line + 1
        return found

    def take_block(self, keyword: str, warnings: list[str]) -> _Block:
        match, line_ends = self._find_end(max(self.pos - 1, 0))
        stop = len(self.text) if match is None else match.start()
        block: _Block
        if stop <= self.pos:
            block = _Block(self.line, "")
        elif isinstance(self.text, str):
            block = _Block(self.line, self.text[self.pos : stop])
        else:
            if line_ends is not None:
                line_ends = line_ends[np.searchsorted(line_ends, self.pos) : np.searchsorted(line_ends, stop)]
                line_ends -= self.pos  # (in place: _find_end made them for this block alone)
            block = _Block(self.line, memoryview(self.text)[self.pos : stop], line_ends)
        first = self.pos
        if match is None:
            warnings.append(f"'{keyword}' block starting at line {self.line - 1} has no 'end'; read to end of file")
            self.pos = len(self.text) + 1
        else:
            self.pos = match.end() + 1
        if stop > first:
            self.line += self._line_breaks(first, stop, line_ends, block) + 1
        self.line += match is not None
        return block

    def _line_breaks(
        self, start: int, stop: int, line_ends: npt.NDArray[np.int64] | None, block: _Block
    ) -> int:  # fmt: skip
        """The line ends in text[start:stop], the block just taken: counted in place (a short block's, which
        numpy would find at several times the cost), or those already found."""
        if isinstance(self.text, str):
            return self.text.count("\n", start, stop)
        if line_ends is not None or not isinstance(self.text, bytes):  # (a file in memory of its own: no count)
            return int(block.line_ends.size)
        return self.text.count(b"\n", start, stop)

    def _find_end(self, start: int) -> tuple[re.Match[str] | re.Match[bytes] | None, npt.NDArray[np.int64] | None]:
        """The first `end` line at or after `start`, and for a long stretch of bytes the line ends found on the
        way (from `start` on; None when not looked for)."""
        if isinstance(self.text, str):
            return _END_LINE.search(self.text, start), None
        window = start + _WINDOW
        if window >= len(self.text):
            return _END_LINE_BYTES.search(self.text, start), None
        found = _END_LINE_BYTES.search(self.text, start, window)  # short blocks: no need to look further
        if found is not None and found.end() == window:  # (`\Z` matches at `window`: a match reaching it must
            found = _END_LINE_BYTES.match(self.text, found.start())  # hold in the whole text, where it may be longer)
        if found is not None:
            return found, None
        buffer = np.frombuffer(self.text, dtype=np.uint8)
        line_ends = positions_of(buffer[start:], ord("\n"))
        line_ends += start
        # An `end` line starts after a line end with `e`, `E`, a space or a tab: the regular expression decides.
        following = np.take(buffer[1:], line_ends, mode="clip")  # (a final line end is followed by itself)
        candidates = line_ends[_MIGHT_START_END[following]]
        if candidates.size > _MOST_CANDIDATES:
            return _END_LINE_BYTES.search(self.text, start), line_ends
        for candidate in candidates.tolist():
            found = _END_LINE_BYTES.match(self.text, candidate)
            if found is not None:
                return found, line_ends
        return None, line_ends


def decode_text(data: bytes, warnings: list[str]) -> str:
    """UTF-8 (BOM allowed), else Windows-1252 as older exporters wrote; line ends normalised to LF."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        warnings.append("file is not UTF-8; read as Windows-1252")
        text = data.decode("cp1252", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def read_smd(data: FileBuffer, path: str | None = None, *, blank_material: str | None = None) -> SmdDocument:
    """Parse an SMD or VTA file. A triangle with a blank material line is dropped with a warning, as studiomdl
    does, unless `blank_material` names a material to give it instead."""
    _refuse_binary(data, path)
    doc = SmdDocument()
    # ASCII without CR reads as itself: walked as bytes, no need to decode it all
    plain = _is_ascii(data) and data.find(b"\r") < 0
    text: str | FileBuffer = data if plain else decode_text(bytes(data), doc.warnings)
    cursor = _Cursor(text)
    seen: set[str] = set()
    saw_version = False
    while (item := cursor.next_line()) is not None:
        line_number, line = item
        stripped = line.strip()
        if not stripped or is_comment(stripped):
            continue
        word = stripped.split()[0]
        keyword = word.lower()
        column = line.index(word) + 1
        if keyword == "version":
            doc.version = _read_version(line, line_number, doc.warnings, path)
            saw_version = True
        elif keyword in _BLOCKS:
            _check_block_line(line, word, line_number, path)
            if keyword in seen:
                raise FormatError(f"second '{keyword}' block", path=path, line=line_number, column=column)
            seen.add(keyword)
            _read_block(doc, keyword, cursor.take_block(keyword, doc.warnings), path, blank_material)
        elif keyword == "end":
            doc.warnings.append(f"line {line_number}: 'end' outside a block ignored")
        else:
            raise FormatError(_unknown_keyword(word, not saw_version and not seen), path=path, line=line_number,
                              column=column)  # fmt: skip
    if not saw_version and not seen:  # nothing but blank and comment lines: refused, as every other format does
        raise FormatError("empty file: an SMD or VTA file starts with a 'version' line", path=path, line=1)
    if not saw_version:
        doc.warnings.append("no 'version' line; read as version 1")
    _check_references(doc)
    return doc


def _unknown_keyword(word: str, first: bool) -> str:
    """The message for a line that starts no SMD block (`first`: nothing of the file read before it): binary data
    is called so, not quoted at length."""
    if not word.isprintable():
        if first:
            return "not an SMD or VTA file: it starts with binary data, not 'version' or a block name"
        return "binary data where an SMD keyword or block should be"
    return f"unknown keyword {word[:40] + '...' if len(word) > 40 else word!r}"


_BINARY_LOOKS = 4096  # bytes looked at for a NUL, which no text file holds


def _is_ascii(data: FileBuffer) -> bool:
    if isinstance(data, bytes):
        return data.isascii()
    return not data or int(np.frombuffer(data, np.uint8).max()) < 0x80


def _refuse_binary(data: FileBuffer, path: str | None) -> None:
    """A file of another kind (an image, a model given the .smd extension) is called so before it is parsed."""
    nul = data.find(b"\0", 0, _BINARY_LOOKS)
    if nul >= 0 and not data[:_BINARY_LOOKS].lstrip().lower().startswith((b"version", b"nodes", b"//")):
        raise FormatError("not an SMD or VTA file: it holds binary data", path=path, offset=nul)


def _check_block_line(line: str, word: str, line_number: int, path: str | None) -> None:
    rest = line.split(None, 1)[1].strip() if len(line.split(None, 1)) > 1 else ""
    if rest and not is_comment(rest):
        column = line.index(rest, line.index(word) + len(word)) + 1
        raise FormatError(f"unexpected text after '{word}'", path=path, line=line_number, column=column)


def _second_token_column(line: str) -> int:
    tokens = list(re.finditer(r"\S+", line))
    return tokens[1].start() + 1 if len(tokens) > 1 else len(line.rstrip()) + 1


def _read_version(line: str, line_number: int, warnings: list[str], path: str | None) -> int:
    parts = line.split()
    if len(parts) < 2 or not re.fullmatch(r"[-+]?\d+", parts[1]):
        column = _second_token_column(line)
        raise FormatError("'version' needs a whole number", path=path, line=line_number, column=column)
    version = int(parts[1])
    if version not in (1, 2):
        warnings.append(f"line {line_number}: unknown version {version}; read as version 1")
        return 1
    return version


def _read_block(doc: SmdDocument, keyword: str, block: _Block, path: str | None, blank_material: str | None) -> None:
    if keyword in ("nodes", "skeleton") and len(block.text) <= _REPEATED_BLOCK_CHARACTERS:
        try:
            nodes, frames, warnings = _small_block(keyword, block.first_line, block.text)
        except FormatError as error:
            raise error if path is None else error.with_path(path) from None
        doc.warnings.extend(warnings)
        if keyword == "nodes":
            doc.nodes = [SmdNode(*node) for node in nodes]
        else:
            doc.skeleton = [SkeletonFrame(time, ids.copy(), positions.copy(), rotations.copy(), comment, line)
                            for time, ids, positions, rotations, comment, line in frames]  # fmt: skip
    elif keyword == "nodes":
        doc.nodes = _read_nodes(block, doc.warnings, path)
    elif keyword == "skeleton":
        doc.skeleton = _skeleton_frames(block, path)
    elif keyword == "vertexanimation":
        doc.vertex_animation = [
            VertexFrame(time, ids, values[:, :3].copy(), values[:, 3:].copy())
            for time, _comment, ids, values, _line in _read_timed_block(block, "vertex", path)
        ]
    else:
        doc.triangles, doc.flavour = _read_triangles(block, doc.warnings, path, blank_material)


def _skeleton_frames(block: _Block, path: str | None) -> list[SkeletonFrame]:
    return [
        SkeletonFrame(time, ids, values[:, :3].copy(), values[:, 3:].copy(), comment, line)
        for time, comment, ids, values, line in _read_timed_block(block, "bone", path)
    ]


_SmallBlock = tuple[
    tuple[tuple[int, str, int], ...],  # nodes: id, name, parent
    tuple[tuple[int, IntArray, FloatArray, FloatArray, str, int], ...],  # skeleton frames (read-only arrays)
    tuple[str, ...],  # the warnings its reading gave
]


@lru_cache(maxsize=32)
def _small_block(keyword: str, first_line: int, text: str) -> _SmallBlock:
    """A short `nodes` or `skeleton` block read once for every file holding it at the same line: the result
    depends on nothing else (the path only names the file in an error, and errors are not kept: each file raises
    its own). Callers copy what they keep."""
    warnings: list[str] = []
    block = _Block(first_line, text)
    if keyword == "nodes":
        nodes = tuple((node.id, node.name, node.parent) for node in _read_nodes(block, warnings, None))
        return nodes, (), tuple(warnings)
    frames = []
    for frame in _skeleton_frames(block, None):
        for array in (frame.bone_ids, frame.positions, frame.rotations):
            array.flags.writeable = False  # (shared by every file with this block)
        frames.append((frame.time, frame.bone_ids, frame.positions, frame.rotations, frame.comment, frame.line))
    return (), tuple(frames), tuple(warnings)


# ---- nodes -------------------------------------------------------------------------------------------------------


def _read_nodes(block: _Block, warnings: list[str], path: str | None) -> list[SmdNode]:
    nodes: dict[int, SmdNode] = {}
    unquoted = 0
    for index, line in enumerate(block.lines):
        stripped = line.strip()
        if not stripped or is_comment(stripped):
            continue
        node, quoted = _parse_node(line, block.first_line + index, path)
        unquoted += not quoted
        if node.id in nodes and nodes[node.id] != node:  # (the same line twice is harmless: real files have them)
            warnings.append(f"line {block.first_line + index}: bone id {node.id} defined twice; the later one kept")
        nodes[node.id] = node
    if unquoted:
        warnings.append(f"{unquoted} bone name(s) not in double quotes (studiomdl would reject them)")
    ordered = list(nodes.values())
    _check_parents(ordered, block, warnings, path)
    return ordered


def _parse_node(line: str, line_number: int, path: str | None) -> tuple[SmdNode, bool]:
    tokens = [
        (m.group(1) if m.group(1) is not None else m.group(2), m.start() + 1, m.group(2) is None)
        for m in _QUOTED_OR_WORD.finditer(line)
    ]
    if len(tokens) >= 4 and is_comment(tokens[3][0] or ""):
        tokens = tokens[:3]
    for text, column, _quoted in tokens:
        if text is None:
            raise FormatError("unterminated quote in bone name", path=path, line=line_number, column=column)
    if len(tokens) != 3:
        column = tokens[3][1] if len(tokens) > 3 else len(line.rstrip()) + 1
        raise FormatError('expected a bone line: <id> "<name>" <parent id>', path=path, line=line_number, column=column)
    bone_id = _parse_int(tokens[0], 0, line_number, path)
    parent = _parse_int(tokens[2], -1, line_number, path)
    return SmdNode(bone_id, str(tokens[1][0]), parent), tokens[1][2]


def _parse_int(token: tuple[str | None, int, bool], minimum: int, line_number: int, path: str | None) -> int:
    text, column, _quoted = token
    if text is None or not re.fullmatch(r"[-+]?\d+", text) or not minimum <= int(text) <= _INT32_MAX:
        raise FormatError(f"expected a bone id, found {text!r}", path=path, line=line_number, column=column)
    return int(text)


def _check_parents(nodes: list[SmdNode], block: _Block, warnings: list[str], path: str | None) -> None:
    ids = {node.id for node in nodes}
    missing = [node for node in nodes if node.parent != -1 and node.parent not in ids]
    for node in missing:
        warnings.append(f"bone {node.name!r} has unknown parent id {node.parent}; made a root")
        node.parent = -1
    parent_of = {node.id: node.parent for node in nodes}
    for node in nodes:
        seen = {node.id}
        current = node.parent
        while current != -1:
            if current in seen:
                raise FormatError(
                    f"bone {node.name!r} is its own ancestor (parent loop)", path=path, line=block.first_line
                )
            seen.add(current)
            current = parent_of[current]


# ---- skeleton and vertexanimation --------------------------------------------------------------------------------


def _read_timed_block(
    block: _Block, what: str, path: str | None
) -> list[tuple[int, str, IntArray, FloatArray, int]]:
    """`time N` headers followed by `<id> a b c d e f` lines; returns (time, comment, ids, (n, 6) values, the time
    line's number)."""
    headers: list[tuple[int, str, int, int]] = []  # time, comment, index of its first data line, its line
    data_lines: list[str] = []
    data_indexes: list[int] = []
    for index, line in enumerate(block.lines):
        if line[:1].isdigit() and headers:  # the usual data line: no need to look further here
            data_lines.append(line)
            data_indexes.append(index)
            continue
        stripped = line.lstrip()
        if not stripped or is_comment(stripped):
            continue
        if stripped[:4].lower() == "time" and (len(stripped) == 4 or stripped[4].isspace()):
            number = block.first_line + index
            headers.append((*_parse_time(line, number, path), len(data_lines), number))
            continue
        if not headers:
            raise FormatError(
                f"{what} line before the first 'time' line",
                path=path,
                line=block.first_line + index,
                column=len(line) - len(stripped) + 1,
            )
        data_lines.append(line)
        data_indexes.append(index)
    numbers = parse_numeric_lines(data_lines, block.numbers(data_indexes), path)
    table = _fixed_width_table(numbers, 7, data_lines, block.numbers(data_indexes), f"{what} line", path)
    ids = _integer_column(table[:, 0], 0, data_lines, block.numbers(data_indexes), 0, f"{what} id", path)
    frames = []
    bounds = [start for _time, _comment, start, _line in headers] + [len(data_lines)]
    for (time, comment, start, time_line), stop in zip(headers, bounds[1:], strict=True):
        frames.append((time, comment, ids[start:stop].copy(), table[start:stop, 1:].copy(), time_line))
    return frames


def _parse_time(line: str, line_number: int, path: str | None) -> tuple[int, str]:
    body = line.strip()
    parts = body.split(None, 2)
    if len(parts) < 2 or not re.fullmatch(r"[-+]?\d+", parts[1]) or abs(int(parts[1])) > _INT32_MAX:
        column = _second_token_column(line)
        raise FormatError("'time' needs a whole frame number", path=path, line=line_number, column=column)
    comment = parts[2].strip() if len(parts) > 2 else ""
    for marker in ("//", "#", ";"):
        if comment.startswith(marker):
            comment = comment[len(marker) :].strip()
            break
    return int(parts[1]), comment


def _fixed_width_table(
    numbers: NumericLines, width: int, lines: Sequence[str], line_numbers: Sequence[int], what: str, path: str | None
) -> FloatArray:
    wrong = np.flatnonzero(numbers.counts != width)
    if wrong.size:
        row = int(wrong[0])
        count = int(numbers.counts[row])
        column = column_of_token(lines[row], min(count, width))
        raise FormatError(
            f"{what} needs {width} numbers, found {count}", path=path, line=line_numbers[row], column=column
        )
    return numbers.values.reshape(-1, width)


def _integer_column(
    values: FloatArray,
    minimum: int,
    lines: Sequence[str],
    line_numbers: Sequence[int],
    token: int | IntArray,
    what: str,
    path: str | None,
) -> IntArray:
    """Whole numbers in [minimum, 2**31) as int32, else FormatError at the offending token."""
    bad = (values != np.floor(values)) | (values < minimum) | (values > _INT32_MAX)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        index = token if isinstance(token, int) else int(token[row])
        raise FormatError(
            f"{what} must be a whole number >= {minimum}, found {values[row]:g}",
            path=path,
            line=line_numbers[row],
            column=column_of_token(lines[row], index),
        )
    return values.astype(np.int32)


# ---- triangles ---------------------------------------------------------------------------------------------------


@dataclass
class _TriangleLayout:
    materials: list[str]  # one per kept triangle, stripped
    vertex_lines: list[int]  # block line indexes, 3 per kept triangle
    blank_materials: int  # triangles whose material line was blank


def _read_triangles(
    block: _Block, warnings: list[str], path: str | None, blank_material: str | None
) -> tuple[Triangles, Flavour]:
    quick = _quick_triangles(block, warnings, path)
    if quick is not None:
        return quick
    layout = _fast_layout(block, blank_material)
    if layout is not None:
        try:
            return _build_triangles(block, layout, warnings, path, blank_material)
        except FormatError:
            pass  # perhaps misaligned by a stray line: the careful layout decides
    layout = _careful_layout(block, path, blank_material)
    return _build_triangles(block, layout, warnings, path, blank_material)


def _quick_triangles(block: _Block, warnings: list[str], path: str | None) -> tuple[Triangles, Flavour] | None:
    """The commonest block, straight from its bytes: 4 lines per triangle, named materials, `%.6f`-style numbers,
    no comments, nothing wrong. None when any of that is not so: the line-based passes then decide."""
    data = block.data
    line_ends = block.line_ends
    line_count = line_ends.size + 1
    if not len(data) or line_count % 4:
        return None
    buffer = np.frombuffer(data, dtype=np.uint8)
    starts = np.empty(line_count, dtype=np.int64)
    starts[0] = 0
    np.add(line_ends, 1, out=starts[1:])
    # The bytes of every material line with its line end: gathered, they split into the names; blanked out, the
    # block holds only numbers, 3 lines per triangle.
    material_starts = starts[0::4]
    lengths = line_ends[0::4] + 1 - material_starts
    material_bytes = raw_names = None
    only_line = _one_material_line(buffer, material_starts, lengths)
    if only_line is None:
        material_bytes = _material_bytes(material_starts, lengths)
        raw_names = buffer[material_bytes].tobytes().split(b"\n")[:-1]
    rows: dict[str, int] = {}
    row_of_raw: dict[bytes, int] = {}
    for raw in [only_line] if only_line is not None else dict.fromkeys(raw_names or []):
        name = raw.decode().strip()
        if not name or name.startswith("//") or _VERTEX_LIKE.match(name):
            return None  # blank material lines, comments or a misalignment
        row_of_raw[raw] = rows.setdefault(name, len(rows))
    vertex_starts, vertex_ends = _vertex_line_bounds(starts, line_ends, buffer.size)
    distinct = _distinct_vertex_lines(buffer, vertex_starts, vertex_ends)
    if distinct is None:  # every line read where it stands, a segment of the block copied at a time
        numbers = parse_micro_units_by_segment(buffer, vertex_starts, _material_blanker(material_starts, lengths,
                                                                                        material_bytes))  # fmt: skip
        lines = _LazyLines(data, vertex_starts, vertex_ends)
        line_numbers: Sequence[int] = _LineNumbers(block.first_line, range(vertex_starts.size), vertex_lines=True)
    else:  # each distinct line read once, from a text of those lines alone
        first_lines, corner_lines = distinct
        read_lines = _block_line_of_vertex(first_lines)
        line_numbers = block.numbers(read_lines)
        first_starts, first_ends = vertex_starts[first_lines], vertex_ends[first_lines]
        padded, text_starts = _padded_lines(buffer, first_starts, first_ends)
        numbers = parse_padded_micro_units(padded, read_lines.size, text_starts)
        lines = _LazyLines(padded[PAD:].data, text_starts, text_starts + (first_ends - first_starts))
    if numbers is None:
        return None
    try:
        corners = _VertexColumns(numbers, lines, line_numbers, path)
    except FormatError:
        return None
    extra_fields = corners.extra_fields if distinct is None else int(corners.has_extra_fields[corner_lines].sum())
    if extra_fields:
        warnings.append(f"{extra_fields} vertex line(s) have fields after their weight links; ignored")
    if raw_names is None:
        material_indices = np.zeros(material_starts.size, np.int32)
    else:
        material_indices = np.fromiter(map(row_of_raw.__getitem__, raw_names), np.int32, len(raw_names))
    flavour: Flavour = "goldsrc" if bool(np.all(numbers.counts == 9)) else "source"
    if distinct is None:
        return corners.triangles(list(rows), material_indices), flavour
    return corners.triangles(list(rows), material_indices, corner_lines), flavour


def _material_blanker(
    material_starts: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64], material_bytes: npt.NDArray[np.int64] | None
) -> Blanker:
    """What blanks the material lines (their line ends too) of a piece of the block, for
    parse_micro_units_by_segment: one material line throughout a word at a time, others byte by byte."""

    def blank(frame: npt.NDArray[np.uint8], offset: int, begin: int, end: int) -> None:
        if material_bytes is None:
            inside = material_starts[np.searchsorted(material_starts, begin) : np.searchsorted(material_starts, end)]
            if inside.size:
                _blank_lines(frame, inside + offset, int(lengths[0]))
        else:
            inside = material_bytes[np.searchsorted(material_bytes, begin) : np.searchsorted(material_bytes, end)]
            frame[inside + offset] = ord(" ")

    return blank


def _vertex_line_bounds(
    starts: npt.NDArray[np.int64], line_ends: npt.NDArray[np.int64], size: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Where the vertex lines of a block of 4 lines per triangle start and end (3 of every 4 lines; the block's
    last line ends at its end). Copied from strided views: an index array and a copy of the line ends with the
    block's end appended would be three more arrays of a line each, whose fresh memory costs as much as the work."""
    triangles = starts.size // 4
    vertex_starts = starts.reshape(triangles, 4)[:, 1:].ravel()
    vertex_ends = np.empty_like(vertex_starts)
    by_triangle = vertex_ends.reshape(triangles, 3)
    by_triangle[:-1] = line_ends[: 4 * (triangles - 1)].reshape(triangles - 1, 4)[:, 1:]
    by_triangle[-1] = (line_ends[-2], line_ends[-1], size)
    return vertex_starts, vertex_ends


def _block_line_of_vertex(vertex_lines: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The block line index of each of `vertex_lines` (numbered among the vertex lines: 3 of every 4 lines)."""
    block_lines: npt.NDArray[np.int64] = vertex_lines + vertex_lines // 3 + 1
    return block_lines


def _material_bytes(material_starts: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Where the bytes of the material lines are, their line ends included."""
    firsts: npt.NDArray[np.int64] = np.repeat(material_starts - (np.cumsum(lengths) - lengths), lengths)
    return firsts + np.arange(int(lengths.sum()))


def _blank_lines(text: npt.NDArray[np.uint8], starts: npt.NDArray[np.int64], length: int) -> None:
    """Spaces over the `length` bytes from each of `starts` in `text` (8 at a time where the lines are that long)."""
    if length < 8:
        text[starts[:, None] + np.arange(length)] = ord(" ")
        return
    words = byte_words(text)
    for offset in _word_offsets(length):
        words[starts + offset] = np.uint64(0x2020202020202020)


def _word_offsets(length: int) -> list[int]:
    """Offsets of 8-byte words covering `length` (at least 8) bytes, the last one ending at the end."""
    return [*range(0, length - 8, 8), length - 8]


def _one_material_line(
    buffer: npt.NDArray[np.uint8], material_starts: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64]
) -> bytes | None:
    """The material lines (without line ends) when every one holds the same bytes, the commonest case, found
    without splitting the text into a line per triangle. None otherwise."""
    if not lengths.size or int(lengths.min()) != int(lengths.max()):
        return None
    length, start = int(lengths[0]), int(material_starts[0])
    if length < 8:
        table = buffer[material_starts[:, None] + np.arange(length)]
        return table[0, :-1].tobytes() if bool(np.all(table == table[0])) else None
    # Compared 8 bytes at a time (the last word ending at the line end): a few numbers per line, not a table
    words = byte_words(buffer)
    for offset in _word_offsets(length):
        if not bool(np.all(words[material_starts + offset] == words[start + offset])):
            return None
    return buffer[start : start + length - 1].tobytes()


_MOST_DISTINCT = 0.75  # share of distinct vertex lines above which reading each line once saves too little
_SAMPLE = 3000  # vertex lines looked at first


def _distinct_vertex_lines(
    buffer: npt.NDArray[np.uint8], starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None:
    """Where many vertex lines repeat one another (a vertex is written once per triangle using it): the first
    line of each distinct text, and for each line the rank of its text among those. None when not worth it."""
    # A triangle's neighbours share its vertices, so the first lines tell how much the whole block repeats (a
    # block no longer than the sample is compared whole at once instead)
    if starts.size > _SAMPLE:
        bounds = zip(starts[:_SAMPLE].tolist(), ends[:_SAMPLE].tolist(), strict=True)
        sample = [buffer[start:end].tobytes() for start, end in bounds]
        if len(set(sample)) > _MOST_DISTINCT * len(sample):
            return None
    first = first_equal_lines(buffer, starts, ends)
    if first is None:
        return None
    is_first = first == np.arange(first.size)
    first_lines = np.flatnonzero(is_first)
    if first_lines.size > _MOST_DISTINCT * first.size:
        return None
    rank = np.cumsum(is_first) - 1
    return first_lines, rank[first]


def _padded_lines(
    buffer: npt.NDArray[np.uint8], starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """The lines buffer[starts[i]:ends[i]] joined by line ends in a `padded_buffer`, and where each starts in the
    text. Lines of 8 bytes or more are copied a row of 8-byte words at a time (see LineWords), not a Python object
    per line."""
    lengths = ends - starts
    text_starts = np.zeros(starts.size, np.int64)
    np.cumsum(lengths[:-1] + 1, out=text_starts[1:])
    size = int(text_starts[-1] + lengths[-1]) if starts.size else 0
    padded = padded_frame(size)
    if starts.size and int(lengths.min()) >= 8:
        LineWords(buffer, starts, ends).copy_to(padded, text_starts + PAD)
        padded[text_starts[1:] + PAD - 1] = ord("\n")
    else:
        parts = map(buffer.data.__getitem__, map(slice, starts.tolist(), ends.tolist()))
        padded[PAD : PAD + size] = np.frombuffer(b"\n".join(parts), np.uint8)
    return padded, text_starts


class _LazyLines(Sequence[str]):
    """Lines of encoded text by their byte bounds, decoded only when an error needs one."""

    def __init__(self, data: bytes | memoryview, starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64]) -> None:
        self.data, self.starts, self.ends = data, starts, ends

    def __len__(self) -> int:
        return int(self.starts.size)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        return bytes(self.data[int(self.starts[index]) : int(self.ends[index])]).decode()


def _fast_layout(block: _Block, blank_material: str | None) -> _TriangleLayout | None:
    """The common case, 4 lines per triangle and nothing else; None when the block needs the careful pass."""
    lines = block.lines
    if len(lines) % 4:
        return None
    material_lines = lines[0::4]
    distinct = {raw: raw.strip() for raw in set(material_lines)}
    if any(name.startswith("//") or _VERTEX_LIKE.match(name) for name in distinct.values()):
        return None
    first = np.arange(len(material_lines), dtype=np.int64) * 4 + 1
    materials = [distinct[raw] for raw in material_lines]
    blanks = [t for t, name in enumerate(materials) if not name]
    if any(not _VERTEX_LIKE.match(lines[4 * t + k].strip()) for t in blanks for k in (1, 2, 3)):
        return None  # a stray blank line, not a blank material: let the careful pass realign
    if blanks and blank_material is None:
        first = np.delete(first, blanks)
        materials = [name for name in materials if name]
    elif blanks and blank_material is not None:
        materials = [name or blank_material for name in materials]
    vertex_lines = (first[:, None] + np.arange(3)).reshape(-1)
    return _TriangleLayout(materials, vertex_lines.tolist(), len(blanks))


def _careful_layout(block: _Block, path: str | None, blank_material: str | None) -> _TriangleLayout:
    """Line by line. `//` lines are comments anywhere; blank lines are ignored, except that a blank line followed by
    a vertex line stands for a blank material line. At a material position a `#` or `;` line is a material name only
    when vertex lines follow (studiomdl reads it as one); elsewhere it is a comment."""
    lines = block.lines
    meaningful = [i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("//")]
    layout = _TriangleLayout([], [], 0)
    position = 0
    while position < len(meaningful):
        index = meaningful[position]
        name = lines[index].strip()
        vertex_like = _VERTEX_LIKE.match(name) is not None
        if is_comment(name) and not _vertex_follows(lines, meaningful, position):
            position += 1
            continue
        blank = vertex_like and index > 0 and not lines[index - 1].strip()
        if vertex_like and not blank:
            raise FormatError(
                "expected a material name, found a vertex line", path=path, line=block.first_line + index, column=1
            )
        if not blank:
            position += 1
        corners = [i for i in meaningful[position : position + 3]]
        if len(corners) < 3:
            raise FormatError(
                "triangle needs 3 vertex lines", path=path, line=block.first_line + len(lines) - 1, column=1
            )
        position += 3
        layout.blank_materials += blank
        if blank and blank_material is None:
            continue
        layout.materials.append(blank_material if blank and blank_material is not None else name)
        layout.vertex_lines.extend(corners)
    return layout


def _vertex_follows(lines: list[str], meaningful: list[int], position: int) -> bool:
    following = meaningful[position + 1] if position + 1 < len(meaningful) else None
    return following is not None and _VERTEX_LIKE.match(lines[following].strip()) is not None


def _build_triangles(
    block: _Block, layout: _TriangleLayout, warnings: list[str], path: str | None, blank_material: str | None
) -> tuple[Triangles, Flavour]:
    lines = [block.lines[i] for i in layout.vertex_lines]
    line_numbers = block.numbers(layout.vertex_lines)
    numbers = parse_numeric_lines(lines, line_numbers, path)
    corners = _VertexColumns(numbers, lines, line_numbers, path)
    if layout.blank_materials:  # (an empty block says nothing wrong: a skeleton SMD, as shared skeletons are)
        fate = "dropped, as studiomdl does" if blank_material is None else f"given material {blank_material!r}"
        warnings.append(f"{layout.blank_materials} triangle(s) with a blank material line {fate}")
    if corners.extra_fields:
        warnings.append(f"{corners.extra_fields} vertex line(s) have fields after their weight links; ignored")
    names = {name: row for row, name in enumerate(dict.fromkeys(layout.materials))}  # in order of first use
    material_indices = np.fromiter(map(names.__getitem__, layout.materials), np.int32, len(layout.materials))
    triangles = corners.triangles(list(names), material_indices)
    flavour: Flavour = "goldsrc" if lines and bool(np.all(numbers.counts == 9)) else "source"
    return triangles, flavour


_FLOAT_COLUMNS = (("positions", 1, 3), ("normals", 4, 3), ("uvs", 7, 2))  # name, first number, count
# Corners of repeated lines from which the document holds positions, normals and UVs per line until asked for them
# per corner (Triangles.hold_per_line): every mesh's, as the importer takes the lines' rows (a QC's 60 small SMDs:
# their per-corner columns were 11 MB of fresh pages, then gathered back by line)
_PER_LINE_FROM = 1


class _VertexColumns:
    """Vertex lines split into columns: parent, position, normal, uv, then `links (bone weight)*` (Source)."""

    def __init__(self, numbers: NumericLines, lines: Sequence[str], line_numbers: Sequence[int], path: str | None):
        self.numbers, self.lines, self.line_numbers, self.path = numbers, lines, line_numbers, path
        counts = numbers.counts
        self._fail_where(counts < 9, 9, "vertex line needs at least 9 numbers (bone x y z nx ny nz u v)")
        if numbers.width is None:
            starts = self.starts
            self.parents = self._integers(starts, 0, 0, "parent bone")
            has_links = counts >= 10
            links = np.zeros(counts.size, dtype=np.int64)
            links[has_links] = self._integers(starts[has_links] + 9, 0, 9, "link count", has_links)
        else:  # every line as long: its table's columns, no gathering (nor a start per line)
            self.parents = self._integers(None, 0, 0, "parent bone", values=numbers.table[:, 0])
            has_links = np.full(counts.size, numbers.width >= 10)
            links = np.zeros(counts.size, dtype=np.int64)
            if numbers.width >= 10:
                links = self._integers(None, 0, 9, "link count", values=numbers.table[:, 9]).astype(np.int64)
        needed = 10 + 2 * links
        short = has_links & (counts < needed)
        self._fail_where(short, 10, "fewer weight links than the link count says", token_of=counts)
        self.has_extra_fields = has_links & (counts > needed)
        self.extra_fields = int(np.count_nonzero(self.has_extra_fields))
        self.link_counts = links.astype(np.int32)
        if not links.any():  # (rigid corners only, the parent column: no link to find)
            self.link_bones, self.link_weights = np.zeros(0, np.int32), np.zeros(0, np.float64)
            return
        starts = self.starts
        corner = np.repeat(np.arange(counts.size), links)
        rank = np.arange(corner.size) - np.repeat(np.cumsum(links) - links, links)
        bone_at = starts[corner] + 10 + 2 * rank
        self.link_bones = self._integers(bone_at, 0, bone_at - starts[corner], "link bone", rows=corner)
        self.link_weights = numbers.values[bone_at + 1].astype(np.float64)

    @cached_property
    def starts(self) -> npt.NDArray[np.int64]:
        """Where each line's numbers start in the values."""
        return self.numbers.starts

    def triangles(
        self, material_names: list[str], material_indices: IntArray, corner_lines: npt.NDArray[np.int64] | None = None
    ) -> Triangles:
        """The triangles whose corners are these lines, or with `corner_lines` (a line per corner) those lines."""
        if corner_lines is None:
            return Triangles(
                material_names=material_names,
                material_indices=material_indices,
                parent_bones=self.parents.reshape(-1, 3),
                positions=self.column_block(1, 3).reshape(-1, 3, 3),
                normals=self.column_block(4, 3).reshape(-1, 3, 3),
                uvs=self.column_block(7, 2).reshape(-1, 3, 2),
                link_counts=self.link_counts.reshape(-1, 3),
                link_bones=self.link_bones,
                link_weights=self.link_weights,
            )
        links = select_links(self.link_counts, corner_lines)
        line_columns = {name: self.column_block(first, width) for name, first, width in _FLOAT_COLUMNS}
        per_line = corner_lines.size >= _PER_LINE_FROM
        if per_line:  # (each line's row once, in an array of its own: made per corner when asked for)
            line_columns = {name: np.ascontiguousarray(rows) for name, rows in line_columns.items()}
            corner_columns = {name: empty_floats(0, 3, width) for name, _first, width in _FLOAT_COLUMNS}
        else:  # (rows gathered by np.take: 2 to 3 times quicker than indexing for rows of a few numbers, numpy 1.26;
            # into arrays of their own, not views of one gathered block: the importer gathers their rows again, 10
            # times slower from a view)
            corner_columns = {name: np.take(rows, corner_lines, axis=0).reshape(-1, 3, rows.shape[1])
                              for name, rows in line_columns.items()}  # fmt: skip
        triangles = Triangles(
            material_names=material_names,
            material_indices=material_indices,
            parent_bones=self.parents[corner_lines].reshape(-1, 3),
            positions=corner_columns["positions"],
            normals=corner_columns["normals"],
            uvs=corner_columns["uvs"],
            link_counts=self.link_counts[corner_lines].reshape(-1, 3),
            link_bones=self.link_bones[links],
            link_weights=self.link_weights[links],
            corner_lines=corner_lines,
        )
        if per_line:
            triangles.hold_per_line(line_columns)
        return triangles

    def column_block(self, first: int, width: int) -> FloatArray:
        if self.numbers.width is not None:  # (a view of the table's columns)
            return self.numbers.table[:, first : first + width]
        starts = self.starts
        block = np.empty((starts.size, width), dtype=np.float64)
        offsets = np.arange(first, first + width)
        for start in range(0, starts.size, _CHUNK):  # small index blocks: they stay in the CPU caches
            part = slice(start, start + _CHUNK)
            np.take(self.numbers.values, starts[part, None] + offsets, out=block[part])
        return block

    def _integers(
        self,
        at: npt.NDArray[np.int64] | None,
        minimum: int,
        token: int | npt.NDArray[np.int64],
        what: str,
        mask: npt.NDArray[np.bool_] | None = None,
        rows: npt.NDArray[np.int64] | None = None,
        values: FloatArray | None = None,
    ) -> IntArray:
        """The numbers at `at` (or `values`, the same numbers at hand, one per line; `at` then None) as int32,
        else FormatError."""
        if values is None:
            assert at is not None
            values = self.numbers.values[at]
        else:  # (a table's column: one pass to gather it, then checked through its int32 copy)
            values = np.ascontiguousarray(values)
            with np.errstate(invalid="ignore"):  # (out of range or NaN: any int32 but the value, found below)
                whole = values.astype(np.int32)
            if not ((whole != values) | (whole < minimum)).any():  # (the test below, in two passes fewer)
                return whole
        bad = (values != np.floor(values)) | (values < minimum) | (values > _INT32_MAX)
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            row_of = np.flatnonzero(mask) if mask is not None else (rows if rows is not None else np.arange(bad.size))
            row = int(row_of[first])
            index = token if isinstance(token, int) else int(token[first])
            raise FormatError(
                f"{what} must be a whole number >= {minimum}, found {values[first]:g}",
                path=self.path,
                line=self.line_numbers[row],
                column=column_of_token(self.lines[row], index),
            )
        return values.astype(np.int32)

    def _fail_where(
        self, bad: npt.NDArray[np.bool_], token: int, message: str, token_of: npt.NDArray[np.int64] | None = None
    ) -> None:
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            index = int(token_of[row]) if token_of is not None else min(token, int(self.numbers.counts[row]))
            raise FormatError(
                message, path=self.path, line=self.line_numbers[row], column=column_of_token(self.lines[row], index)
            )


# ---- cross-checks ------------------------------------------------------------------------------------------------


def _check_references(doc: SmdDocument) -> None:
    ids = np.array(sorted(node.id for node in doc.nodes), dtype=np.int64)
    _warn_unknown(ids, [frame.bone_ids for frame in doc.skeleton], "skeleton pose(s) name", doc.warnings)
    if doc.triangles is not None:
        used = [doc.triangles.parent_bones.reshape(-1), doc.triangles.link_bones]
        _warn_unknown(ids, used, "vertex bone reference(s) name", doc.warnings)
    _warn_time_gaps([frame.time for frame in doc.skeleton], "skeleton", doc.warnings)
    if doc.vertex_animation:
        _warn_time_gaps([frame.time for frame in doc.vertex_animation], "vertexanimation", doc.warnings)


def _warn_unknown(ids: npt.NDArray[np.int64], arrays: list[IntArray], what: str, warnings: list[str]) -> None:
    if not arrays:
        return
    # (`ids` sorted and distinct: when they run without a gap, as usual, a range test says the same as np.isin,
    # which sorts, at a quarter of the cost: a QC's many small files pay it each; each array's least and largest
    # id tell it when every id is known, with no copy of them all)
    in_range = bool(ids.size) and int(ids[-1]) - int(ids[0]) + 1 == ids.size
    if in_range and all(not a.size or (int(a.min()) >= ids[0] and int(a.max()) <= ids[-1]) for a in arrays):
        return
    used = np.concatenate([a.reshape(-1).astype(np.int64) for a in arrays])
    unknown = used[(used < ids[0]) | (used > ids[-1])] if in_range else used[~np.isin(used, ids)]
    if unknown.size:
        sample = ", ".join(str(i) for i in np.unique(unknown)[:5])
        warnings.append(f"{unknown.size} {what} bone ids missing from 'nodes' (e.g. {sample})")


def _warn_time_gaps(times: list[int], block: str, warnings: list[str]) -> None:
    if len(times) < 2:
        return
    steps = np.diff(np.array(times, dtype=np.int64))
    if np.any(steps <= 0):
        warnings.append(f"'{block}' time numbers do not always increase")
    gaps = int(np.sum(steps[steps > 1] - 1))
    if gaps:
        warnings.append(f"'{block}' skips {gaps} time number(s); missing frames hold the previous pose")
