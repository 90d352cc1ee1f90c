"""Byte-level scanning of IQE text with numpy: lines, tokens, commands, and bulk number parsing.

The whole file is classified at once (in pieces, side by side when the caller's PieceMap runs them so): token
starts and ends come from a whitespace mask, the command of each line from its first three bytes. The argument
tokens of the numeric commands asked for are converted together, a piece of text at a time, by `parse_decimals`
straight from the bytes; the rare token it does not take (an exponent, `inf`, a typo) is converted with
`float()`, and only when that fails is the command's group walked line by line, to report the exact line and
column.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from ..bytescan import positions_of
from ..errors import FileBuffer, FormatError
from ..pieces import PieceMap, sequential
from .decimals import parse_decimals

Int64Array = npt.NDArray[np.int64]
Float64Array = npt.NDArray[np.float64]
FloatArray = npt.NDArray[np.float64] | npt.NDArray[np.float32]
NumbersAndCounts = tuple[FloatArray, Int64Array]  # a request's numbers, flat, and how many each line has

# Two-letter commands whose arguments are all numbers; their id is the position in this tuple.
NUMERIC_COMMANDS = (
    "vp",
    "vt",
    "vn",
    "vx",
    "vb",
    "vc",
    "vs",
    *(f"v{slot}" for slot in range(10)),
    "pq",
    "pm",
    "pa",
    "fa",
    "fm",
    "fs",
)
COMMAND_ID = {name: index for index, name in enumerate(NUMERIC_COMMANDS)}
KEYWORD = -1  # a line for the slow keyword path (mesh, joint, ..., or an unknown command)
BLANK = -2
COMMENT = -3
HEADER = -4

FLOAT32_MAX = float(np.finfo(np.float32).max)
_SCAN_BYTES = 1 << 20  # text scanned at a time for token positions: bounds the memory of a large file
_SCAN_LINES = 1 << 18  # lines classified at a time
_INDENT_STEPS = 16  # leading whitespace stepped through for all lines together; deeper indents one line at a time
_WHITESPACE = b" \t\n\r\x0b\x0c"  # C isspace() in the "C" locale, and what bytes.split() splits on
_TOKEN = re.compile(rb"[^ \t\n\r\x0b\x0c]+")
_COMMENT_COMMAND = re.compile(rb"\n[ \t\r\x0b\x0c]*comment(?![^ \t\n\r\x0b\x0c])")

_CODE_TO_ID = np.full(1 << 16, KEYWORD, np.int64)
_CODE_TO_ID_LE = np.full(1 << 16, KEYWORD, np.int8)  # by the two bytes read as a little-endian number (a small
# table: its look-ups stay in the caches)
for _name, _id in COMMAND_ID.items():
    _CODE_TO_ID[ord(_name[0]) << 8 | ord(_name[1])] = _id
    _CODE_TO_ID_LE[ord(_name[0]) | ord(_name[1]) << 8] = _id
_ENDS_COMMAND = np.zeros(256, np.bool_)  # a third byte that ends a two-letter command: whitespace or the text's end
_ENDS_COMMAND[[0, 9, 10, 11, 12, 13, 32]] = True


def _is_space(values: npt.NDArray[np.uint8]) -> npt.NDArray[np.bool_]:
    space: npt.NDArray[np.bool_] = (values == 32) | ((values >= 9) & (values <= 13))
    return space


def split_comment_section(data: FileBuffer) -> tuple[FileBuffer, bytes | None]:
    """Cut the file at the first `comment` command: (the commands before it, the verbatim text after its line)."""
    match = _first_comment_command(data)
    if match is None:
        return data, None
    line_end = data.find(b"\n", match.end())
    body = b"" if line_end < 0 else data[line_end + 1 :]
    return data[: match.start() + 1], body


_LETTERS_LOOKED_AT = 10_000  # o's looked at before the pattern searches the rest of the file itself


def _first_comment_command(data: FileBuffer) -> re.Match[bytes] | None:
    """_COMMENT_COMMAND.search(data), found from the letter 'o': an IQE file's vertex and face lines have none, and
    finding one byte runs at memory speed (the pattern, tried at each of a large file's million line ends, takes
    20 times as long)."""
    position = data.find(b"o")
    for _ in range(_LETTERS_LOOKED_AT):
        if position < 0:
            return None
        if position >= 1 and data[position - 1 : position + 6] == b"comment":
            line_end = data.rfind(b"\n", 0, position)
            match = _COMMENT_COMMAND.match(data, line_end) if line_end >= 0 else None
            if match is not None:
                return match
        position = data.find(b"o", position + 1)
    if position < 0:
        return None
    return _COMMENT_COMMAND.search(data, max(data.rfind(b"\n", 0, position), 0))  # (many o's: names, joints)


def decode_text(raw: bytes) -> tuple[str, bool]:
    """UTF-8 text, or Latin-1 when the bytes are not UTF-8 (then the flag is True)."""
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        return raw.decode("latin-1"), True


class Lines:
    """The lines of the text without their newline, sliced on demand (most are never looked at)."""

    def __init__(self, data: FileBuffer, starts: Int64Array, lengths: Int64Array) -> None:
        self._data = data
        self.starts = starts
        self._lengths = lengths

    def __len__(self) -> int:
        return int(self.starts.shape[0])

    def __getitem__(self, index: int) -> bytes:
        start = int(self.starts[index])
        return self._data[start : start + int(self._lengths[index])]


class _Numbers:
    """The numbers of one `numbers_of_many` request, gathered piece by piece."""

    def __init__(self) -> None:
        self.value_parts: list[FloatArray] = []
        self.count_parts: list[Int64Array] = []
        self.failed = False
        self.usable = True  # every value found within float32's range (checked piece by piece, while at hand)

    @property
    def counts(self) -> Int64Array:
        """The pieces' counts joined; where every line of every piece has as many numbers (a vertex array's, a
        triangle list's), a read-only view of that one count (no array per line: 24 MB at 3M lines)."""
        parts = self.count_parts
        if parts and all(part.strides == (0,) for part in parts) and len({int(part[0]) for part in parts if
                                                                           part.shape[0]}) <= 1:  # fmt: skip
            total = sum(part.shape[0] for part in parts)
            return np.broadcast_to(parts[0][:1] if parts[0].shape[0] else np.zeros(1, np.int64), (total,))
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    @property
    def values(self) -> FloatArray:
        return cast(FloatArray, np.concatenate(self.value_parts)) if self.value_parts else np.zeros(0, np.float64)


@dataclass
class ScannedText:
    """The file split into lines with, per line, its command id.

    Token positions are not kept (they would take 16 bytes per token, twice the text): `numbers` finds the tokens
    of the lines it converts, a few megabytes of text at a time.
    """

    path: str | None
    lines: Lines
    command_ids: npt.NDArray[np.int8]
    line_lengths: Int64Array  # bytes, without the newline
    data: FileBuffer
    text: npt.NDArray[np.uint8] | None = None  # `data` as uint8 (a view)
    map_pieces: PieceMap = sequential  # runs the independent pieces of `numbers_of_many`

    @property
    def line_count(self) -> int:
        return len(self.lines)

    def error(self, message: str, line_index: int, column: int | None = 1) -> FormatError:
        return FormatError(message, path=self.path, line=line_index + 1, column=column)

    def token_column(self, line_index: int, token_number: int) -> int:
        """1-based character column of token `token_number` (0 = the command) of a line."""
        line = self.lines[line_index]
        offsets = [match.start() for match in _TOKEN.finditer(line)]
        offset = offsets[token_number] if token_number < len(offsets) else len(line.rstrip(_WHITESPACE))
        return len(decode_text(line[:offset])[0]) + 1

    def lines_of(self, command: str) -> Int64Array:
        return np.flatnonzero(self.command_ids == COMMAND_ID[command])

    def numbers(self, line_indices: Int64Array, what: str) -> NumbersAndCounts:
        """All numbers of the given numeric-command lines, flat, and how many each line has."""
        return self.numbers_of_many([(line_indices, what)])[0]

    def numbers_of_many(self, requests: list[tuple[Int64Array, str]]) -> list[NumbersAndCounts]:
        """`numbers` of several sets of lines (each ascending), reading the text once for all of them: the
        commands of one vertex are usually on neighbouring lines. Pieces of text are read by `map_pieces`."""
        return [finish() for finish in self.numbers_later(requests)]

    def numbers_later(
        self, requests: list[tuple[Int64Array, str]], single: Sequence[bool] = ()
    ) -> list[Callable[[], NumbersAndCounts]]:
        """`numbers_of_many`, the text read now, but each request's numbers checked (a bad one reported) only when
        its function is called: a caller that reads its commands' numbers together still reports their errors in
        the order it checks the commands. `single`: per request (all False when empty), whether its numbers come
        as float32, as `astype` rounds them (each piece's once found within float32's range, while at hand: no
        float64 array of them all is made), not float64."""
        single = list(single) or [False] * len(requests)
        results = [_Numbers() for _ in requests]
        for piece in self.map_pieces(lambda bounds: self._piece_numbers(requests, *bounds, single),
                                     list(self._line_pieces(requests))):  # fmt: skip
            for result, found in zip(results, piece, strict=True):
                if found is None or result.failed:
                    continue
                counts, values, usable = found
                result.count_parts.append(counts)
                if values is None:
                    result.failed = True
                else:
                    result.value_parts.append(values)
                    result.usable &= usable
        return [partial(self._finished, lines, what, wanted, result)
                for (lines, what), wanted, result in zip(requests, single, results, strict=True)]  # fmt: skip

    def _finished(self, lines: Int64Array, what: str, single: bool, result: _Numbers) -> NumbersAndCounts:
        values = self._numbers_slowly(lines, what) if result.failed else result.values
        counts = result.counts if not result.failed else self._token_counts_slowly(lines)
        if result.usable and not result.failed:
            return values, counts
        # (a piece with a number beyond float32 kept its float64 values: a double just past float32's largest
        # would round down to it)
        usable = _usable(values)
        if not usable.all():
            message = f"{what}: the number is not finite or too large for a float"
            self._raise_at_value(lines, counts, int(np.argmin(usable)), message)
        return (values.astype(np.float32) if single else values), counts

    def _piece_numbers(
        self, requests: list[tuple[Int64Array, str]], first: int, last: int, single: list[bool]
    ) -> list[tuple[Int64Array, FloatArray | None, bool] | None]:
        """For each request, the numbers of its lines among lines first..last (None: it has none there): how many
        per line, their values (None where some token is no number: the slow path then reports it; float32 where
        `single` asks for it and all are within its range) and whether all are within float32's range."""
        text = self._text()
        begin, end = int(self.lines.starts[first]), int(self.lines.starts[last] + self.line_lengths[last])
        piece = text[begin:end]  # (offsets below are into the piece)
        starts, ends = _token_spans(piece, last - first)
        line_firsts = _line_first_tokens(piece, starts, ends, self.lines.starts[first : last + 1] - begin)
        counts = np.diff(np.append(line_firsts, starts.shape[0]))  # the tokens of each line of the piece
        # The tokens of every request's lines but their commands, request by request, are converted together
        chosen: list[Int64Array | None] = []
        token_parts: list[Int64Array] = []
        line_counts: list[Int64Array] = []
        for lines, _ in requests:
            low, high = np.searchsorted(lines, (first, last + 1))
            piece_lines = lines[low:high] - first if low < high else None
            chosen.append(piece_lines)
            if piece_lines is not None:
                tokens_per_line = counts[piece_lines]
                if uniform_count(tokens_per_line) is not None:  # (see _Numbers.counts)
                    tokens_per_line = np.broadcast_to(tokens_per_line[:1], tokens_per_line.shape)
                    line_counts.append(np.broadcast_to(tokens_per_line[:1] - 1, tokens_per_line.shape))
                else:
                    line_counts.append(tokens_per_line - 1)
                token_parts.append(_tokens_after_the_first(line_firsts[piece_lines], tokens_per_line))
        taken = np.concatenate(token_parts) if token_parts else np.zeros(0, np.int64)
        sizes = [part.shape[0] for part in token_parts]
        values, parsed = parse_decimals(piece, starts[taken], ends[taken])
        found: list[tuple[Int64Array, FloatArray | None, bool] | None] = []
        bounds = np.cumsum([0, *sizes]).tolist()
        parts = iter(itertools.pairwise(bounds))
        numbers_per_line = iter(line_counts)
        for piece_lines, wanted in zip(chosen, single, strict=True):
            if piece_lines is None:
                found.append(None)
                continue
            part = slice(*next(parts))
            converted = self._converted(values[part], parsed[part], taken[part], starts, ends, begin)
            usable = converted is not None and bool(_usable(converted).all())
            if usable and wanted and converted is not None:
                converted = converted.astype(np.float32)
            found.append((next(numbers_per_line), converted, usable))
        return found

    def _converted(self, values: Float64Array, parsed: npt.NDArray[np.bool_], tokens: Int64Array, starts: Int64Array,
                   ends: Int64Array, begin: int) -> Float64Array | None:  # fmt: skip
        """parse_decimals' values of some tokens with those it did not take converted by float() (None when one is no
        number: the slow path then finds it)."""
        if parsed.all():
            return values
        others = np.flatnonzero(~parsed)
        data = self.data
        token_starts, token_ends = starts[tokens[others]] + begin, ends[tokens[others]] + begin
        texts = [data[start:end] for start, end in zip(token_starts.tolist(), token_ends.tolist(), strict=True)]
        try:
            values[others] = np.array(texts, dtype=np.float64)
        except ValueError:
            return None
        return values

    def _line_pieces(self, requests: list[tuple[Int64Array, str]]) -> Iterator[tuple[int, int]]:
        """(first, last) line of consecutive pieces of a few megabytes of text covering every requested line."""
        asked = [lines for lines, _ in requests if lines.shape[0]]
        if not asked:
            return
        first = min(int(lines[0]) for lines in asked)
        last = max(int(lines[-1]) for lines in asked)
        starts = self.lines.starts
        cuts = np.searchsorted(starts[first : last + 1], np.arange(starts[first], starts[last] + 1, _SCAN_BYTES)[1:])
        bounds = np.unique(np.concatenate(([0], cuts, [last + 1 - first]))) + first
        for low, high in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            yield low, high - 1

    def _text(self) -> npt.NDArray[np.uint8]:
        if self.text is None:
            self.text = np.frombuffer(self.data, np.uint8)
        return self.text

    def integers(
        self,
        values: FloatArray,
        line_indices: Int64Array,
        counts: Int64Array,
        what: str,
        only: npt.NDArray[np.bool_] | None = None,
    ) -> Int64Array:
        """Check that numbers read by `numbers` (those in `only`) are integers within int32; return all as int64."""
        valid = (np.floor(values) == values) & (np.abs(values) < 2.0**31)
        if only is not None:
            valid |= ~only
        if not valid.all():
            self._raise_at_value(line_indices, counts, int(np.argmin(valid)), f"{what}: expected an integer")
        if only is None:  # (every value checked: all within int32 already)
            return values.astype(np.int64)
        in_range = np.abs(values) < 2.0**62  # (NaN and huge numbers where none was asked for: never cast)
        return np.where(valid & in_range, values, 0.0).astype(np.int64)

    def raise_at_value(self, line_indices: Int64Array, counts: Int64Array, value_index: int, message: str) -> None:
        self._raise_at_value(line_indices, counts, value_index, message)

    def _raise_at_value(self, line_indices: Int64Array, counts: Int64Array, value_index: int, message: str) -> None:
        ends = np.cumsum(counts)
        row = int(np.searchsorted(ends, value_index, side="right"))
        token_number = value_index - (int(ends[row - 1]) if row else 0) + 1
        line_index = int(line_indices[row])
        raise self.error(message, line_index, self.token_column(line_index, token_number))

    def _token_counts_slowly(self, line_indices: Int64Array) -> Int64Array:
        return np.array([len(self.lines[line].split()) - 1 for line in line_indices.tolist()], np.int64)

    def _numbers_slowly(self, line_indices: Int64Array, what: str) -> Float64Array:
        values: list[float] = []
        for line_index in line_indices.tolist():
            tokens = self.lines[line_index].split()
            for token_number, token in enumerate(tokens[1:], start=1):
                try:
                    values.append(float(token))
                except ValueError:
                    text = decode_text(token)[0]
                    column = self.token_column(line_index, token_number)
                    raise self.error(f"{what}: {text!r} is not a number", line_index, column) from None
        return np.array(values, dtype=np.float64)


def scan_lines(data: FileBuffer, path: str | None, map_pieces: PieceMap = sequential) -> ScannedText:
    """Classify every line; text after a '#' inside a numeric command line is blanked first (it ends parsing).
    Pieces of the text are scanned by `map_pieces`."""
    scanned = _scan(data, path, map_pieces)
    numeric_line_hashes = _numeric_lines_with_hash(data, scanned)
    if not numeric_line_hashes:
        return scanned
    blanked = bytearray(data)
    line_starts = scanned.lines.starts
    for line_index, hash_offset in numeric_line_hashes.items():
        start = int(line_starts[line_index]) + hash_offset
        end = start + len(scanned.lines[line_index]) - hash_offset
        blanked[start:end] = b" " * (end - start)
    return _scan(bytes(blanked), path, map_pieces)


def _line_starts(data: FileBuffer, map_pieces: PieceMap = sequential) -> Int64Array:
    text = np.frombuffer(data, np.uint8)
    newlines = map_pieces(lambda begin: np.flatnonzero(text[begin : begin + _SCAN_BYTES] == 10) + (begin + 1),
                          range(0, text.shape[0], _SCAN_BYTES))  # fmt: skip
    return np.concatenate((np.zeros(1, np.int64), *newlines))


def _numeric_lines_with_hash(data: FileBuffer, scanned: ScannedText) -> dict[int, int]:
    """Numeric command lines that contain '#', mapped to the offset of their first '#'."""
    after_header = int(scanned.lines.starts[1]) if len(scanned.lines) > 1 else len(data)  # (line 0 is no command)
    if data.find(b"#", after_header) < 0:  # (the usual file: its header's is the only one)
        return {}
    hashes = positions_of(np.frombuffer(data, np.uint8), 35)
    line_starts = scanned.lines.starts
    hash_lines = np.searchsorted(line_starts, hashes, side="right") - 1
    numeric = scanned.command_ids[hash_lines] >= 0
    found: dict[int, int] = {}
    for line_index, position in zip(hash_lines[numeric].tolist(), hashes[numeric].tolist(), strict=True):
        found.setdefault(line_index, position - int(line_starts[line_index]))
    return found


def _scan(data: FileBuffer, path: str | None, map_pieces: PieceMap = sequential) -> ScannedText:
    text = np.frombuffer(data, np.uint8)
    line_starts = _line_starts(data, map_pieces)
    line_lengths = np.diff(np.append(line_starts, len(data) + 1)) - 1

    def classify(begin: int) -> npt.NDArray[np.int8]:
        """The command ids of lines begin.. (a bounded number: the temporaries are a few arrays per line)."""
        lines = slice(begin, begin + _SCAN_LINES)
        first_starts = _first_token_starts(data, line_starts[lines], line_lengths[lines])
        ids = np.full(first_starts.shape[0], BLANK, np.int8)
        with_token = np.flatnonzero(first_starts >= 0)
        ids[with_token] = _command_ids(text, first_starts[with_token])
        return ids

    command_ids = np.concatenate(map_pieces(classify, range(0, line_starts.shape[0], _SCAN_LINES)))
    command_ids[0] = HEADER
    lines = Lines(data, line_starts, line_lengths)
    scanned = ScannedText(path, lines, command_ids, line_lengths, data)
    scanned.text = text
    return scanned


def _usable(values: FloatArray) -> npt.NDArray[np.bool_]:
    """Which values a float32 holds (false for NaN too): the document stores float32."""
    usable: npt.NDArray[np.bool_] = np.abs(values) <= FLOAT32_MAX
    return usable


def uniform_count(counts: Int64Array) -> int | None:
    """The one count of these lines' numbers when every line has as many (None otherwise, or for no lines)."""
    if not counts.shape[0]:
        return None
    if counts.strides == (0,) or (counts == counts[0]).all():
        return int(counts[0])
    return None


def _tokens_after_the_first(line_firsts: Int64Array, counts: Int64Array) -> Int64Array:
    """The numbers of the tokens of some lines (their first token's number and how many they hold, ascending) but
    each line's first: for lines of as many tokens each (a vertex array's, a triangle list's), one broadcast sum."""
    after = counts - 1 if counts.strides != (0,) else np.broadcast_to(counts[:1] - 1, counts.shape)
    if not after.shape[0]:
        return np.zeros(0, np.int64)
    if after.strides == (0,) or (after == after[0]).all():
        return (line_firsts[:, None] + np.arange(1, int(after[0]) + 1)).ravel()
    tokens: Int64Array = np.repeat(line_firsts + 1 - (np.cumsum(after) - after), after) + np.arange(int(after.sum()))
    return tokens


def _token_spans(text: npt.NDArray[np.uint8], newlines: int | None = None) -> tuple[Int64Array, Int64Array]:
    """Start and end offsets of the tokens of `text`: where its whitespace mask, with a space before and after the
    text, flips (the flips alternate start, end, start, ...). `newlines`: how many '\\n' the text holds, if known:
    when no other byte is below 32 (no tab, CR or control byte), whitespace is every byte up to 32, one comparison
    instead of four."""
    space = np.ones(text.shape[0] + 2, np.bool_)
    if newlines is not None and np.count_nonzero(np.less(text, 32, out=space[1:-1])) == newlines:
        np.less_equal(text, 32, out=space[1:-1])
    else:
        space[1:-1] = _is_space(text)
    flips = np.flatnonzero(space[1:] != space[:-1]).reshape(-1, 2)
    return flips[:, 0], flips[:, 1]


def _line_first_tokens(text: npt.NDArray[np.uint8], starts: Int64Array, ends: Int64Array,
                       line_starts: Int64Array) -> Int64Array:  # fmt: skip
    """The first token at or after each line start (`_token_spans`' of `text`; `line_starts` ascending): a
    search, but where every line starts with a token right after the newline that ends the line before (what
    exporters write), those are the tokens that follow a newline, found in one pass and checked."""
    if starts.shape[0] and line_starts.shape[0] and starts[0] == line_starts[0]:
        after_newline = np.flatnonzero(text[ends[:-1]] == 10) + 1
        if after_newline.shape[0] == line_starts.shape[0] - 1 and np.array_equal(starts[after_newline],
                                                                                   line_starts[1:]):  # fmt: skip
            return np.concatenate((np.zeros(1, np.int64), after_newline))
    return np.searchsorted(starts, line_starts)


def _first_token_starts(data: FileBuffer, line_starts: Int64Array, line_lengths: Int64Array) -> Int64Array:
    """The byte offset of each line's first token, -1 for a blank line. Most lines start with their token; the
    others are stepped through their leading whitespace one byte at a time, all together, and the few indented
    deeper than that are searched one by one."""
    text = np.frombuffer(data, np.uint8)
    first = np.full(line_starts.shape[0], -1, np.int64)
    pending = np.flatnonzero(line_lengths > 0)
    starts = line_starts[pending]
    if not _is_space(np.asarray(text[starts], np.uint8)).any():  # (every line that is not blank starts with its token)
        first[pending] = starts
        return first
    for step in range(_INDENT_STEPS):
        offsets = line_starts[pending] + step
        found = ~_is_space(np.asarray(text[offsets], np.uint8))
        first[pending[found]] = offsets[found]
        pending = pending[~found]
        pending = pending[line_lengths[pending] > step + 1]
    for line in pending.tolist():
        start = int(line_starts[line])
        match = _TOKEN.search(data, start + _INDENT_STEPS, start + int(line_lengths[line]))
        first[line] = match.start() if match else -1
    return first


def _command_ids(text: npt.NDArray[np.uint8], starts: Int64Array) -> npt.NDArray[np.signedinteger[Any]]:
    """Command id of the tokens at these offsets into `text` (a byte past its end reads as 0): the first three
    bytes of each read as one word."""
    if text.shape[0] < 4:
        return _command_ids_bytewise(text, starts)
    words: npt.NDArray[np.uint32] = np.ndarray((text.shape[0] - 3,), np.dtype("<u4"), text, 0, (1,))
    word = words[np.minimum(starts, words.shape[0] - 1)]
    ids = np.where(_ENDS_COMMAND[(word >> np.uint32(16)) & np.uint32(0xFF)], _CODE_TO_ID_LE[word & np.uint32(0xFFFF)],
                   KEYWORD)  # fmt: skip
    ids[(word & np.uint32(0xFF)) == ord("#")] = COMMENT
    near_end = np.flatnonzero(starts > text.shape[0] - 4)  # (their words would reach past the text)
    if near_end.shape[0]:
        ids[near_end] = _command_ids_bytewise(text, starts[near_end])
    return ids


def _command_ids_bytewise(text: npt.NDArray[np.uint8], starts: Int64Array) -> Int64Array:
    """_command_ids a byte at a time."""
    last = text.shape[0] - 1
    first, second, third = (np.where(starts + k <= last, text[np.minimum(starts + k, last)], 0).astype(np.int64)
                            for k in range(3))  # fmt: skip
    letter = ((first | 32) >= ord("a")) & ((first | 32) <= ord("z"))
    two_letters = letter & ((third == 0) | _is_space(third.astype(np.uint8)))
    ids = np.where(two_letters, _CODE_TO_ID[(first << 8 | second) & 0xFFFF], KEYWORD)
    ids[first == ord("#")] = COMMENT
    return ids
