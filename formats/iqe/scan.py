"""Byte-level scanning of IQE text with numpy: lines, tokens, commands, and bulk number parsing.

The whole file is classified at once: token starts and ends come from a whitespace mask, the command of each
line from its first three bytes. The argument tokens of one numeric command are converted together by
`parse_decimals` straight from the bytes; the rare token it does not take (an exponent, `inf`, a typo) is
converted with `float()`, and only when that fails is the group walked line by line, to report the exact line
and column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import FormatError
from .decimals import PAD, padded_bytes, parse_decimals

Int64Array = npt.NDArray[np.int64]
Float64Array = npt.NDArray[np.float64]

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
_WHITESPACE = b" \t\n\r\x0b\x0c"  # C isspace() in the "C" locale, and what bytes.split() splits on
_TOKEN = re.compile(rb"[^ \t\n\r\x0b\x0c]+")
_COMMENT_COMMAND = re.compile(rb"\n[ \t\r\x0b\x0c]*comment(?![^ \t\n\r\x0b\x0c])")

_CODE_TO_ID = np.full(1 << 16, KEYWORD, np.int64)
for _name, _id in COMMAND_ID.items():
    _CODE_TO_ID[ord(_name[0]) << 8 | ord(_name[1])] = _id


def _is_space(values: npt.NDArray[np.uint8]) -> npt.NDArray[np.bool_]:
    space: npt.NDArray[np.bool_] = (values == 32) | ((values >= 9) & (values <= 13))
    return space


def split_comment_section(data: bytes) -> tuple[bytes, bytes | None]:
    """Cut the file at the first `comment` command: (the commands before it, the verbatim text after its line)."""
    match = _COMMENT_COMMAND.search(data)
    if match is None:
        return data, None
    line_end = data.find(b"\n", match.end())
    body = b"" if line_end < 0 else data[line_end + 1 :]
    return data[: match.start() + 1], body


def decode_text(raw: bytes) -> tuple[str, bool]:
    """UTF-8 text, or Latin-1 when the bytes are not UTF-8 (then the flag is True)."""
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        return raw.decode("latin-1"), True


class Lines:
    """The lines of the text without their newline, sliced on demand (most are never looked at)."""

    def __init__(self, data: bytes, starts: Int64Array, lengths: Int64Array) -> None:
        self._data = data
        self._starts = starts
        self._ends = starts + lengths

    def __len__(self) -> int:
        return int(self._starts.shape[0])

    def __getitem__(self, index: int) -> bytes:
        return self._data[self._starts[index] : self._ends[index]]


@dataclass
class ScannedText:
    """The file split into lines with, per line, its first token, token count and command id."""

    path: str | None
    lines: Lines
    token_counts: Int64Array
    command_ids: Int64Array
    line_lengths: Int64Array  # bytes, without the newline
    data: bytes
    first_tokens: Int64Array  # index of each line's first token in token_starts (its count when blank)
    token_starts: Int64Array  # byte offsets of every token of the text
    token_ends: Int64Array
    padded_data: npt.NDArray[np.uint8] | None = None  # the text with PAD zero bytes around it

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

    def numbers(self, line_indices: Int64Array, what: str) -> tuple[Float64Array, Int64Array]:
        """All numbers of the given numeric-command lines, flat, and how many each line has."""
        counts = self.token_counts[line_indices] - 1
        total = int(counts.sum())
        skipped = self.first_tokens[line_indices] + 1 - (np.cumsum(counts) - counts)  # the command tokens
        tokens = np.repeat(skipped, counts) + np.arange(total)
        starts, ends = self.token_starts[tokens], self.token_ends[tokens]
        values, parsed = parse_decimals(self._padded(), starts, ends)
        if not parsed.all():
            others = np.flatnonzero(~parsed)
            data = self.data
            texts = [data[start:end] for start, end in zip(starts[others].tolist(), ends[others].tolist(), strict=True)]
            try:
                values[others] = np.array(texts, dtype=np.float64)
            except ValueError:
                values = self._numbers_slowly(line_indices, what)
        usable = np.abs(values) <= FLOAT32_MAX  # also false for NaN; the document stores float32
        if not usable.all():
            message = f"{what}: the number is not finite or too large for a float"
            self._raise_at_value(line_indices, counts, int(np.argmin(usable)), message)
        return values, counts

    def _padded(self) -> npt.NDArray[np.uint8]:
        if self.padded_data is None:
            self.padded_data = padded_bytes(self.data)
        return self.padded_data

    def integers(
        self,
        values: Float64Array,
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
        return np.where(valid, values, 0.0).astype(np.int64)

    def raise_at_value(self, line_indices: Int64Array, counts: Int64Array, value_index: int, message: str) -> None:
        self._raise_at_value(line_indices, counts, value_index, message)

    def _raise_at_value(self, line_indices: Int64Array, counts: Int64Array, value_index: int, message: str) -> None:
        ends = np.cumsum(counts)
        row = int(np.searchsorted(ends, value_index, side="right"))
        token_number = value_index - (int(ends[row - 1]) if row else 0) + 1
        line_index = int(line_indices[row])
        raise self.error(message, line_index, self.token_column(line_index, token_number))

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


def scan_lines(data: bytes, path: str | None) -> ScannedText:
    """Classify every line; text after a '#' inside a numeric command line is blanked first (it ends parsing)."""
    scanned = _scan(data, path)
    numeric_line_hashes = _numeric_lines_with_hash(data, scanned)
    if not numeric_line_hashes:
        return scanned
    blanked = bytearray(data)
    line_starts = _line_starts(data)
    for line_index, hash_offset in numeric_line_hashes.items():
        start = int(line_starts[line_index]) + hash_offset
        end = start + len(scanned.lines[line_index]) - hash_offset
        blanked[start:end] = b" " * (end - start)
    return _scan(bytes(blanked), path)


def _line_starts(data: bytes) -> Int64Array:
    newlines = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
    return np.concatenate((np.zeros(1, np.int64), newlines.astype(np.int64) + 1))


def _numeric_lines_with_hash(data: bytes, scanned: ScannedText) -> dict[int, int]:
    """Numeric command lines that contain '#', mapped to the offset of their first '#'."""
    if b"#" not in data:
        return {}
    hashes = np.flatnonzero(np.frombuffer(data, np.uint8) == 35)
    line_starts = _line_starts(data)
    hash_lines = np.searchsorted(line_starts, hashes, side="right") - 1
    numeric = scanned.command_ids[hash_lines] >= 0
    found: dict[int, int] = {}
    for line_index, position in zip(hash_lines[numeric].tolist(), hashes[numeric].tolist(), strict=True):
        found.setdefault(line_index, position - int(line_starts[line_index]))
    return found


def _scan(data: bytes, path: str | None) -> ScannedText:
    padded = padded_bytes(data)
    buffer = padded[PAD : PAD + len(data)]
    line_starts = _line_starts(data)
    # Tokens start and end where the whitespace mask (with a space before and after the text) flips; the flips
    # alternate start, end, start, ...
    space = np.ones(buffer.shape[0] + 2, np.bool_)
    space[1:-1] = _is_space(buffer)
    flips = np.flatnonzero(space[1:] != space[:-1]).reshape(-1, 2)
    token_starts, token_ends = flips[:, 0], flips[:, 1]
    first_token = np.searchsorted(token_starts, line_starts)
    token_counts = np.diff(np.append(first_token, token_starts.shape[0])).astype(np.int64)
    has_token = token_counts > 0
    command_ids = np.full(line_starts.shape[0], BLANK, np.int64)
    command_ids[has_token] = _command_ids(padded, token_starts[first_token[has_token]] + PAD)
    command_ids[0] = HEADER
    line_lengths = np.diff(np.append(line_starts, len(data) + 1)) - 1
    lines = Lines(data, line_starts, line_lengths)
    scanned = ScannedText(
        path, lines, token_counts, command_ids, line_lengths, data, first_token, token_starts, token_ends
    )
    scanned.padded_data = padded
    return scanned


def _command_ids(padded: npt.NDArray[np.uint8], starts: Int64Array) -> Int64Array:
    """Command id of the tokens at these offsets into `padded` (which has zero bytes after the text)."""
    first, second, third = (padded[starts + k].astype(np.int64) for k in range(3))
    letter = ((first | 32) >= ord("a")) & ((first | 32) <= ord("z"))
    two_letters = letter & ((third == 0) | _is_space(third))
    ids = np.where(two_letters, _CODE_TO_ID[(first << 8 | second) & 0xFFFF], KEYWORD)
    ids[first == ord("#")] = COMMENT
    return ids
