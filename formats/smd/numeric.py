"""Bulk conversion of whitespace-separated numeric lines, the hot path of SMD/VTA reading.

Three tiers, each used only when the one before cannot vouch for its result:
1. numbers written with 0 or exactly 6 decimals (the `%.6f` convention of every exporter) are parsed as integers in
   micro-units by numpy's C integer scanner, several times faster than float parsing;
2. any other decimal notation goes through numpy's C float scanner;
3. a per-line Python pass that strips trailing comments and either succeeds or names the exact line and column.
Tier 1 finds token and line bounds with numpy on the bytes; tier 2 tells lines apart by a sentinel token appended
to each line. Either way the per-line field counts come without tokenising lines in Python.
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import FormatError

_MICRO = 1_000_000
# (each part unambiguous: a run of digits cannot be split two ways, so matching never backtracks more than linearly)
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
MAX_NUMBER_CHARACTERS = 128  # (a float's 39 digits and 50 decimals with room to spare)
_TOKEN = re.compile(r"\S+")
_TRAILING_COMMENT = re.compile(r"//|#|;")


@dataclass
class NumericLines:
    """Numbers of many lines, flattened: line i holds values[starts[i] : starts[i] + counts[i]]. `width`, when
    set: every line holds that many numbers (values is then a (lines, width) table's rows end to end: `table`)."""

    values: npt.NDArray[np.float64]
    counts: npt.NDArray[np.int64]
    width: int | None = None

    @property
    def starts(self) -> npt.NDArray[np.int64]:
        if self.width is not None:
            return np.arange(self.counts.size, dtype=np.int64) * self.width
        return np.cumsum(self.counts) - self.counts

    @property
    def table(self) -> npt.NDArray[np.float64]:
        """(lines, width) the numbers of each line (a view); only with `width`."""
        assert self.width is not None
        return self.values.reshape(-1, self.width)


def parse_numeric_lines(lines: Sequence[str], line_numbers: Sequence[int], path: str | None) -> NumericLines:
    """Parse every line as numbers; raise FormatError at the first token that is not a finite number."""
    if not lines:
        return NumericLines(np.zeros(0), np.zeros(0, dtype=np.int64))
    data = "\n".join(lines).encode("ascii", errors="replace")  # '?' never parses: non-ASCII goes to tier 3
    parsed = parse_micro_units(data, len(lines)) or _parse_floats(data, len(lines))
    return parsed or _parse_precisely(lines, line_numbers, path)


def _scan(data: bytes, dtype: type[np.int64] | type[np.float64]) -> npt.NDArray[np.generic] | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # "could not be read to its end": we check counts
        try:
            return np.fromstring(data, dtype=dtype, sep=" ")
        except ValueError:
            return None


PAD = 8  # blank bytes before the text in a padded buffer: every token end has 7 bytes before it to look at
_SENTINEL = b" 0 "  # after the text: a token read only when every one before it was one whole integer
_SEGMENT = 1 << 18  # bytes of text parsed at a time


def padded_buffer(data: bytes | memoryview, size: int | None = None) -> npt.NDArray[np.uint8]:
    """The text as a writable uint8 buffer framed for `parse_padded_micro_units`: PAD spaces before it, the
    sentinel after it. The caller may blank text bytes (offset by PAD) before parsing."""
    size = len(data) if size is None else size
    padded = padded_frame(size)
    padded[PAD : PAD + size] = np.frombuffer(data, dtype=np.uint8, count=size)
    return padded


def padded_frame(size: int) -> npt.NDArray[np.uint8]:
    """A `padded_buffer` for a text of `size` bytes, the text itself left for the caller to write."""
    padded = np.empty(PAD + size + len(_SENTINEL), dtype=np.uint8)
    padded[:PAD] = ord(" ")
    padded[PAD + size :] = np.frombuffer(_SENTINEL, dtype=np.uint8)
    return padded


def parse_micro_units(data: bytes, line_count: int) -> NumericLines | None:
    """Tier 1 on `line_count` lines of ASCII text; None when it cannot vouch for the result."""
    return parse_padded_micro_units(padded_buffer(data), line_count)


def parse_padded_micro_units(
    padded: npt.NDArray[np.uint8], line_count: int, line_starts: npt.NDArray[np.int64] | None = None
) -> NumericLines | None:
    """Tier 1 on the `line_count` lines of a `padded_buffer`; `line_starts` (offsets into the text), when the
    caller knows them, spare a scan for line ends. None when it cannot vouch for the result.

    The text is taken a segment of whole lines at a time: the work then stays in the CPU caches and needs no
    temporaries as large as the text."""
    size = padded.size - PAD - len(_SENTINEL)
    if line_starts is None:
        line_starts = np.empty(line_count, dtype=np.int64)
        line_ends = np.flatnonzero(padded[PAD : PAD + size] == ord("\n"))
        if line_ends.size != line_count - 1:
            return None
        line_starts[0] = 0
        np.add(line_ends, 1, out=line_starts[1:])
    return _parse_segments(size, line_starts, lambda begin, end: (padded, PAD))


Blanker = Callable[[npt.NDArray[np.uint8], int, int, int], None]


def parse_micro_units_by_segment(
    text: npt.NDArray[np.uint8], line_starts: npt.NDArray[np.int64], blank: Blanker | None = None
) -> NumericLines | None:
    """parse_padded_micro_units of the lines of `text` (unpadded) that start at `line_starts` (the last one
    running to the text's end; the text before the first is not read), without a padded copy of the whole text:
    each segment is copied into one small padded frame, where `blank(frame, offset, begin, end)` may blank the
    bytes of text[begin:end] that are no numbers (text byte i is frame[i + offset]), as the caller would blank a
    `padded_buffer`. The same result as that buffer's, with a text's worth less memory touched."""
    size = text.size
    if not line_starts.size:
        return NumericLines(np.zeros(0), np.zeros(0, dtype=np.int64))
    frame = np.empty(0, np.uint8)

    def segment_frame(begin: int, end: int) -> tuple[npt.NDArray[np.uint8], int]:
        nonlocal frame
        if frame.size < PAD + end - begin + 1:
            frame = np.empty(max(PAD + end - begin + 1, min(2 * _SEGMENT, PAD + size + 1)), np.uint8)
            frame[:PAD] = ord(" ")
        frame[PAD : PAD + end - begin] = text[begin:end]
        frame[PAD + end - begin] = ord(" ")  # (read after the text's last segment: as the sentinel's blank)
        if blank is not None:
            blank(frame, PAD - begin, begin, end)
        return frame, PAD - begin

    return _parse_segments(size, line_starts, segment_frame)


def _parse_segments(
    size: int,
    line_starts: npt.NDArray[np.int64],
    segment_frame: Callable[[int, int], tuple[npt.NDArray[np.uint8], int]],
) -> NumericLines | None:
    """Tier 1 on a text of `size` bytes, a segment of whole lines at a time: segment_frame(begin, end) gives a
    padded frame holding text[begin:end] and the offset of the text in it (frame[begin + offset] is text[begin];
    the byte before it blank, and the one after it too for the text's last segment). Where every line holds as
    many numbers, they are written into one table as they are read (no list of pieces joined at the end)."""
    line_count = line_starts.size
    cuts = np.unique(np.searchsorted(line_starts, np.arange(_SEGMENT, size, _SEGMENT)))
    # A cut inside the last line finds no line start after it (line_count): that segment is the last one anyway.
    bounds = [0, *cuts[(cuts > 0) & (cuts < line_count)].tolist(), line_count]
    values: list[npt.NDArray[np.float64]] = []
    counts: list[npt.NDArray[np.int64]] = []
    table: npt.NDArray[np.float64] | None = None  # while every line so far holds `width` numbers
    width = 0
    for first, stop in itertools.pairwise(bounds):
        begin = int(line_starts[first])
        end = int(line_starts[stop]) if stop < line_count else size
        frame, offset = segment_frame(begin, end)
        parsed = _parse_segment(
            frame, begin + offset, end + offset, line_starts[first:stop] + offset, stop == line_count
        )  # fmt: skip
        if parsed is None:
            return None
        if first == 0 and stop > 0 and _all_equal(parsed.counts):
            width = int(parsed.counts[0])
            table = np.empty((line_count, width), np.float64)
        if table is not None and _all_equal(parsed.counts) and int(parsed.counts[0]) == width:
            table[first:stop] = parsed.values.reshape(stop - first, width)
            continue
        if table is not None:  # a line of another count: the lines before are one piece, the rest go as pieces
            values.append(table[:first].reshape(-1))
            counts.append(np.full(first, width, np.int64))
            table = None
        values.append(parsed.values)
        counts.append(parsed.counts)
    if table is not None:
        # (each line's count: one number seen everywhere, as no memory)
        return NumericLines(table.reshape(-1), np.broadcast_to(np.int64(width), (line_count,)), width)
    return NumericLines(np.concatenate(values), np.concatenate(counts))


def _all_equal(counts: npt.NDArray[np.int64]) -> bool:
    return bool(counts.size) and int(counts.min()) == int(counts.max())


def _parse_segment(
    padded: npt.NDArray[np.uint8], begin: int, end: int, line_starts: npt.NDArray[np.int64], last: bool
) -> NumericLines | None:
    """Tier 1 on padded[begin:end], whole lines starting at `line_starts` (offsets into `padded`); the byte
    before `begin` is blank, and so is the one at `end` but for the `last` segment (the text's end)."""
    text = padded[begin:end]
    newline_count = int(np.count_nonzero(text == ord("\n")))
    if newline_count != line_starts.size - (1 if last else 0):
        return None
    low = text < 32
    if int(np.count_nonzero(low)) != newline_count:
        control = np.flatnonzero(low)
        if not np.all((text[control] == ord("\t")) | (text[control] == ord("\n"))):
            return None  # other control bytes: let the float scanner decide what they are
    # Token bounds: where the bytes switch between blank and not, a blank byte on either side (a segment but the
    # last ends with a line end); they alternate start, end, start, ...
    blank = padded[begin - 1 : end + 1 if last else end] <= 32
    edges = np.flatnonzero(blank[1:] != blank[:-1])
    edges += begin
    starts, ends = edges[0::2], edges[1::2]
    whole = text.tobytes()
    undotted = whole.translate(None, b".")
    integers = _scan(undotted + _SENTINEL, np.int64)  # the sentinel is read only if every token before it was
    if integers is None or integers.size != starts.size + 1:
        return None
    integers = integers[:-1]
    has_dot = ends - starts >= 7
    has_dot &= padded[ends - 7] == ord(".")
    if int(np.count_nonzero(has_dot)) != len(whole) - len(undotted):
        return None  # a dot elsewhere than before exactly 6 decimals
    if integers.size and max(int(integers.max()), -int(integers.min())) >= 10**15:
        return None  # beyond exact doubles, or clamped by the scanner
    values = np.divide(integers, np.where(has_dot, float(_MICRO), 1.0))
    return NumericLines(values, _line_counts(padded, starts, line_starts))


def _line_counts(
    padded: npt.NDArray[np.uint8], starts: npt.NDArray[np.int64], line_starts: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Tokens per line, from the token starts (both offsets into `padded`)."""
    line_count = line_starts.size
    if not starts.size or not line_count:
        return np.zeros(line_count, dtype=np.int64)
    # Usually each line begins with a token: the tokens that start a line then split the others by line.
    begins = np.zeros(int(starts[-1]) + 1 - int(line_starts[0]), dtype=np.bool_)
    inside = line_starts[line_starts <= starts[-1]] - line_starts[0]
    begins[inside] = True
    first_tokens = np.flatnonzero(begins[starts - line_starts[0]])
    if first_tokens.size == line_count:
        counts = np.empty(line_count, dtype=np.int64)
        np.subtract(first_tokens[1:], first_tokens[:-1], out=counts[:-1])
        counts[-1] = starts.size - first_tokens[-1]
        return counts
    before = np.searchsorted(starts, line_starts[1:])
    return np.diff(np.concatenate([[0], before, [starts.size]])).astype(np.int64)


def _parse_floats(data: bytes, line_count: int) -> NumericLines | None:
    values = _scan(data.replace(b"\n", b" inf\n") + b" inf", np.float64)
    if values is None:
        return None
    infinite = np.isinf(values)
    line_ends = np.flatnonzero(infinite)
    if line_ends.size != line_count or np.isnan(values).any():
        return None  # a stray inf, nan, or text: let the precise pass say where
    counts = np.diff(line_ends, prepend=-1) - 1
    return NumericLines(values[~infinite].astype(np.float64), counts.astype(np.int64))


def strip_trailing_comment(line: str) -> str:
    found = _TRAILING_COMMENT.search(line)
    return line if found is None else line[: found.start()]


def token_columns(line: str) -> list[tuple[str, int]]:
    """Tokens of a numeric line (trailing comment removed) with their 1-based columns."""
    return [(m.group(), m.start() + 1) for m in _TOKEN.finditer(strip_trailing_comment(line))]


def column_of_token(line: str, index: int) -> int:
    """1-based column of token `index`, or just past the end of the line when there are fewer tokens."""
    tokens = token_columns(line)
    if index < len(tokens):
        return tokens[index][1]
    return len(line.rstrip()) + 1


def parse_number(token: str, line_number: int, column: int, path: str | None) -> float:
    if len(token) > MAX_NUMBER_CHARACTERS:
        raise FormatError(f"expected a number, found a word of {len(token):,} characters", path=path,
                          line=line_number, column=column)  # fmt: skip
    if _NUMBER.fullmatch(token) is None:
        raise FormatError(f"expected a number, found {token!r}", path=path, line=line_number, column=column)
    value = float(token)
    if not np.isfinite(value):
        raise FormatError(f"number out of range: {token!r}", path=path, line=line_number, column=column)
    return value


def _parse_precisely(lines: Sequence[str], line_numbers: Sequence[int], path: str | None) -> NumericLines:
    values: list[float] = []
    counts: list[int] = []
    for line, line_number in zip(lines, line_numbers, strict=True):
        tokens = token_columns(line)
        values.extend(parse_number(token, line_number, column, path) for token, column in tokens)
        counts.append(len(tokens))
    return NumericLines(np.array(values, dtype=np.float64), np.array(counts, dtype=np.int64))
