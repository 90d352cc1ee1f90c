"""CommonLib-compatible tokenizer for the `.qmap.tmp` and `.qmap.desc` text formats (spec §4).

Input is raw bytes and is never decoded: names stay opaque byte strings. Line continuations (a backslash
followed by LF or CR LF) are removed before tokenising; positions in errors refer to the original bytes.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from .errors import QmapError
from .f32math import f32_scalar

SYMBOLS = frozenset(b"`~!@#$%^&*()=[]{};:,.<>?\\|/")
WHITESPACE = b" \t\r\n\x0b"
_CONTINUATION = re.compile(rb"\\(?:\r\n|\n|\r)")
_IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(rb"[0-9+\-][0-9A-Za-z+\-.]*")
_SKIPPABLE = re.compile(rb"[ \t\r\n\x0b]*")
_STRING_RUN = re.compile(rb'[^"\\\r\n]*')
# The common tokens in one match (comments, '/', escapes and errors take the general path).
_QUICK_TOKEN = re.compile(
    rb'[ \t\r\n\x0b]*(?:(?P<i>[A-Za-z_][A-Za-z0-9_]*)|(?P<n>[0-9+\-][0-9A-Za-z+\-.]*)'
    rb'|(?P<s>[`~!@#$%^&*()=\[\]{};:,.<>?\\|])|"(?P<q>[^"\\\r\n]*)")'
)
_FLOAT_SYNTAX = re.compile(rb"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[dDeE][+-]?[0-9]+)?")
_HEX_DIGITS = frozenset(b"0123456789abcdefABCDEF")
_SIMPLE_ESCAPES = {
    ord("n"): 10, ord("t"): 9, ord("v"): 11, ord("b"): 8, ord("r"): 13, ord("f"): 12, ord("a"): 7,
    ord("0"): 0, ord("\\"): 92, ord("?"): 63, ord('"'): 34, ord("'"): 39,
}
UINT32_MAX = 0xFFFFFFFF


class Kind(Enum):
    """Token kinds of the tokenizer."""

    EOF = "end of file"
    SYMBOL = "symbol"
    IDENT = "identifier"
    STRING = "string"
    CHAR = "character constant"
    INTEGER = "integer"
    FLOAT = "float"


@dataclass(slots=True)
class Token:
    """One token: its kind, its source text, its start in the joined text and, for strings, the value."""

    kind: Kind
    text: bytes
    pos: int
    value: bytes = b""

    def describe(self) -> str:
        """A short human description for error messages."""
        if self.kind is Kind.EOF:
            return "end of file"
        shown = self.text[:40].decode("latin-1")
        return f"{self.kind.value} '{shown}'"


class Source:
    """The bytes of one input file, with continuations joined and a map back to original positions."""

    def __init__(self, raw: bytes, filename: str) -> None:
        self.raw = raw
        self.filename = filename
        self.text, self._anchors, self._deltas = _join_continuations(raw)
        self._kept: dict[int, tuple[int | None, int | None, int | None]] | None = None

    def original_offset(self, pos: int) -> int:
        """Offset in the raw file of position `pos` in the joined text."""
        i = bisect.bisect_right(self._anchors, pos) - 1
        return pos + (self._deltas[i] if i >= 0 else 0)

    def error(self, pos: int, message: str) -> QmapError:
        """A QmapError located at joined-text position `pos` (1-based line and column of the raw file)."""
        if self._kept is not None:
            line, column, offset = self._kept.get(pos, (None, None, None))
            return QmapError(message, self.filename, line, column, offset)
        offset = min(self.original_offset(pos), len(self.raw))
        line = self.raw.count(b"\n", 0, offset) + 1
        column = offset - (self.raw.rfind(b"\n", 0, offset) + 1) + 1
        return QmapError(message, self.filename, line, column, offset)

    def forget_text(self, positions: Iterable[int]) -> None:
        """Let the file's bytes go, keeping the line and column of `positions`: the only places errors may still
        be reported at (a compile then holds no copy of a large file while it works on the faces). The lines are
        counted in one pass over the file, however many positions there are."""
        kept: dict[int, tuple[int | None, int | None, int | None]] = {}
        line, counted_to = 1, 0
        for pos in sorted(set(positions)):
            offset = min(self.original_offset(pos), len(self.raw))
            line += self.raw.count(b"\n", counted_to, offset)
            counted_to = offset
            kept[pos] = (line, offset - (self.raw.rfind(b"\n", 0, offset) + 1) + 1, offset)
        self._kept = kept
        self.raw = self.text = b""


def _join_continuations(raw: bytes) -> tuple[bytes, list[int], list[int]]:
    """Remove backslash-newline pairs; a backslash before a lone CR loses only the CR (the original's quirk)."""
    if b"\\" not in raw or (b"\\\n" not in raw and b"\\\r" not in raw):  # (one byte is found much quicker)
        return raw, [], []
    pieces: list[bytes] = []
    anchors: list[int] = []
    deltas: list[int] = []
    last = 0
    out_len = 0
    removed = 0
    for match in _CONTINUATION.finditer(raw):
        keep_backslash = match.group() == b"\\\r"
        head = raw[last : match.start() + (1 if keep_backslash else 0)]
        pieces.append(head)
        out_len += len(head)
        removed += match.end() - match.start() - (1 if keep_backslash else 0)
        anchors.append(out_len)
        deltas.append(removed)
        last = match.end()
    pieces.append(raw[last:])
    return b"".join(pieces), anchors, deltas


class Tokenizer:
    """Pull tokenizer over a Source; `pos` can be moved past a region that was parsed another way."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.text = source.text
        self.pos = 0
        self._peeked: Token | None = None

    def error(self, token: Token, message: str) -> QmapError:
        return self.source.error(token.pos, message)

    def peek(self) -> Token:
        if self._peeked is None:
            self._peeked = self._scan()
        return self._peeked

    def next(self) -> Token:
        token = self.peek()
        self._peeked = None
        return token

    def unpeeked(self) -> bool:
        """No token is held by peek(): `pos` is where the next token's scan starts."""
        return self._peeked is None

    def seek(self, pos: int) -> None:
        """Continue scanning at joined-text position `pos` (after a region parsed by a fast path)."""
        self._peeked = None
        self.pos = pos

    # ----------------------------------------------------------------- scanning
    def _skip_blank(self) -> int:
        text = self.text
        pos = self.pos
        while True:
            pos = _SKIPPABLE.match(text, pos).end()  # type: ignore[union-attr]
            if text.startswith(b"//", pos):
                newline = text.find(b"\n", pos)
                pos = len(text) if newline < 0 else newline
            elif text.startswith(b"/*", pos):
                close = text.find(b"*/", pos + 2)
                if close < 0:
                    raise self.source.error(pos, "unclosed comment /* */")
                pos = close + 2
            else:
                return pos

    def _scan(self) -> Token:
        quick = _QUICK_TOKEN.match(self.text, self.pos)
        if quick is not None:
            kind = quick.lastgroup or "s"
            start = quick.start(kind)
            self.pos = quick.end()
            if kind == "i":
                return Token(Kind.IDENT, quick.group(kind), start)
            if kind == "n":
                word = quick.group(kind)
                return Token(number_kind(word), word, start)
            if kind == "s":
                return Token(Kind.SYMBOL, quick.group(kind), start)
            return Token(Kind.STRING, self.text[start - 1 : self.pos], start - 1, quick.group(kind))
        return self._scan_general()

    def _scan_general(self) -> Token:
        text = self.text
        pos = self._skip_blank()
        if pos >= len(text):
            self.pos = pos
            return Token(Kind.EOF, b"", pos)
        byte = text[pos]
        if byte in SYMBOLS:
            self.pos = pos + 1
            return Token(Kind.SYMBOL, text[pos : pos + 1], pos)
        if byte == 0x22:
            return self._scan_string(pos)
        if byte == 0x27:
            return self._scan_char(pos)
        match = _IDENT.match(text, pos)
        if match:
            self.pos = match.end()
            return Token(Kind.IDENT, match.group(), pos)
        match = _NUMBER.match(text, pos)
        if match:
            self.pos = match.end()
            word = match.group()
            return Token(number_kind(word), word, pos)
        raise self.source.error(pos, f"unrecognised character (code {byte})")

    def _scan_escape(self, start: int, pos: int, out: bytearray) -> int:
        """Decode the escape sequence whose backslash is at `pos`; return the position after it."""
        text = self.text
        if pos + 1 >= len(text):
            raise self.source.error(start, "unterminated string")
        code = text[pos + 1]
        if code in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[code])
            return pos + 2
        if code == ord("x"):
            digits = text[pos + 2 : pos + 4]
            if len(digits) == 2 and all(d in _HEX_DIGITS for d in digits):
                out.append(int(digits, 16))
                return pos + 4
        shown = chr(code) if 32 <= code < 127 else f"\\x{code:02x}"
        raise self.source.error(start, f"unknown escape sequence \\{shown}")

    def _scan_string(self, start: int) -> Token:
        text = self.text
        out = bytearray()
        pos = start + 1
        while True:
            run_end = _STRING_RUN.match(text, pos).end()  # type: ignore[union-attr]
            out += text[pos:run_end]
            pos = run_end
            if pos >= len(text):
                raise self.source.error(start, "unterminated string")
            byte = text[pos]
            if byte == 0x22:
                self.pos = pos + 1
                return Token(Kind.STRING, text[start : pos + 1], start, bytes(out))
            if byte in (10, 13):
                raise self.source.error(start, "line break inside a string")
            pos = self._scan_escape(start, pos, out)

    def _scan_char(self, start: int) -> Token:
        text = self.text
        out = bytearray()
        pos = start + 1
        if pos < len(text) and text[pos] == 0x5C:
            pos = self._scan_escape(start, pos, out)
        elif pos < len(text) and text[pos] not in (0x27, 10, 13):
            out.append(text[pos])
            pos += 1
        if pos >= len(text) or text[pos] != 0x27 or not out:
            raise self.source.error(start, "malformed character constant")
        self.pos = pos + 1
        return Token(Kind.CHAR, text[start : pos + 1], start, bytes(out))

    # ----------------------------------------------------------------- grammar helpers
    def expect_symbol(self, symbol: bytes) -> Token:
        token = self.next()
        if token.kind is not Kind.SYMBOL or token.text != symbol:
            raise self.error(token, f"expected '{symbol.decode()}', found {token.describe()}")
        return token

    def expect_ident(self, word: bytes) -> Token:
        token = self.next()
        if token.kind is not Kind.IDENT or token.text != word:
            raise self.error(token, f"expected '{word.decode()}', found {token.describe()}")
        return token

    def expect_any_ident(self) -> Token:
        token = self.next()
        if token.kind is not Kind.IDENT:
            raise self.error(token, f"expected an identifier, found {token.describe()}")
        return token

    def expect_string(self) -> Token:
        token = self.next()
        if token.kind is not Kind.STRING:
            raise self.error(token, f"expected a string, found {token.describe()}")
        return token

    def get_uint(self) -> int:
        token = self.next()
        return uint_value(token, self)

    def get_float(self) -> float:
        token = self.next()
        return float_value(token, self)

    def is_symbol(self, symbol: bytes) -> bool:
        token = self.peek()
        return token.kind is Kind.SYMBOL and token.text == symbol


def number_kind(word: bytes) -> Kind:
    """INTEGER or FLOAT, for a number token's text."""
    if word[:2] in (b"0x", b"0X"):
        return Kind.INTEGER
    if any(c in word for c in b".dDeE"):
        return Kind.FLOAT
    return Kind.INTEGER


def uint_value(token: Token, tokenizer: Tokenizer) -> int:
    """MustGetUint4: an INTEGER token in decimal, 0x hexadecimal or leading-0 octal, no sign, at most 2**32-1."""
    if token.kind is not Kind.INTEGER:
        raise tokenizer.error(token, f"expected an unsigned integer, found {token.describe()}")
    word = token.text
    try:
        if word == b"0":
            value = 0
        elif word[:2] in (b"0x", b"0X"):
            value = _parse_digits(word[2:], 16)
        elif word[:1] == b"0":
            value = _parse_digits(word[1:], 8)
        else:
            value = _parse_digits(word, 10)
    except ValueError:
        raise tokenizer.error(token, f"cannot convert {_shown(word)} to an unsigned integer") from None
    if value > UINT32_MAX:
        raise tokenizer.error(token, f"unsigned integer {_shown(word)} is out of range")
    return value


def _shown(word: bytes) -> str:
    """A word for a message: quoted, its first 40 characters when it is longer (and how long it is)."""
    text = word[:40].decode("latin-1")
    return f"'{text}'" if len(word) <= 40 else f"'{text}...' ({len(word):,} characters)"


def _parse_digits(digits: bytes, base: int) -> int:
    allowed = b"0123456789abcdefABCDEF"[: base if base <= 10 else 22]
    if not digits or len(digits.lstrip(b"0")) > 40 or any(c not in allowed for c in digits):  # (no uint32 has 40)
        raise ValueError(digits)
    return int(digits, base)


def float_value(token: Token, tokenizer: Tokenizer) -> float:
    """MustGetFloat: atof of an INTEGER or FLOAT token (d/D is an exponent marker), narrowed to float32."""
    if token.kind not in (Kind.INTEGER, Kind.FLOAT):
        raise tokenizer.error(token, f"expected an integer or a float, found {token.describe()}")
    return convert_float_text(token.text, tokenizer, token)


def convert_float_text(word: bytes, tokenizer: Tokenizer, token: Token) -> float:
    if not _FLOAT_SYNTAX.fullmatch(word):
        raise tokenizer.error(token, f"cannot convert {_shown(word)} to a float")
    return narrow_to_float32(float(word.replace(b"d", b"e").replace(b"D", b"e")))


def narrow_to_float32(value: float) -> float:
    """Round a double to float32 (overflow gives inf, as the C cast does) and return it as a Python float."""
    return f32_scalar(value)
