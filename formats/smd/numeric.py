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

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import FormatError

_MICRO = 1_000_000
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_TOKEN = re.compile(r"\S+")
_TRAILING_COMMENT = re.compile(r"//|#|;")


@dataclass
class NumericLines:
    """Numbers of many lines, flattened: line i holds values[starts[i] : starts[i] + counts[i]]."""

    values: npt.NDArray[np.float64]
    counts: npt.NDArray[np.int64]

    @property
    def starts(self) -> npt.NDArray[np.int64]:
        return np.cumsum(self.counts) - self.counts


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


def parse_micro_units(data: bytes, line_count: int) -> NumericLines | None:
    """Tier 1 on `line_count` lines of ASCII text; None when it cannot vouch for the result."""
    buffer = np.frombuffer(data, dtype=np.uint8)
    line_ends = np.flatnonzero(buffer == ord("\n"))
    if line_ends.size != line_count - 1:
        return None
    low = buffer < 32
    control = np.flatnonzero(low) if int(np.count_nonzero(low)) != line_ends.size else None
    if control is not None and not np.all((buffer[control] == ord("\t")) | (buffer[control] == ord("\n"))):
        return None  # other control bytes: let the float scanner decide what they are
    # Token bounds: where the bytes switch between blank and not (a blank byte assumed on either side); they
    # alternate start, end, start, ...
    blank = np.ones(buffer.size + 2, dtype=np.bool_)
    np.less_equal(buffer, 32, out=blank[1:-1])
    edges = np.flatnonzero(blank[1:] != blank[:-1])
    starts, ends = edges[0::2], edges[1::2]
    # A trailing sentinel is read only when every token before it was one whole integer, dots removed.
    undotted = data.translate(None, b".")
    integers = _scan(undotted + b" 0", np.int64)
    if integers is None or integers.size != starts.size + 1:
        return None
    integers = integers[:-1]
    has_dot = (ends - starts >= 7) & (buffer[np.maximum(ends - 7, 0)] == ord("."))
    if int(np.count_nonzero(has_dot)) != len(data) - len(undotted):
        return None  # a dot elsewhere than before exactly 6 decimals
    if integers.size and max(int(integers.max()), -int(integers.min())) >= 10**15:
        return None  # beyond exact doubles, or clamped by the scanner
    values = integers.astype(np.float64)
    np.divide(values, _MICRO, out=values, where=has_dot)
    before = np.searchsorted(starts, line_ends)
    counts = np.diff(np.concatenate([[0], before, [starts.size]]))
    return NumericLines(values, counts.astype(np.int64))


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
