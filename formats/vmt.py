"""VMT (Valve Material Type, Source): the KeyValues text of a material, read for its shader and parameters.

    "VertexLitGeneric"            // the shader; `//` comments run to the line's end
    {
        "$basetexture" "models/props/crate"
        $translucent 1            // tokens quoted or bare; keys compared ignoring case
        "$envmap" "env_cubemap" [$X360]   // a condition: kept only where it holds on a PC
        "VertexLitGeneric_DX8" { ... }    // nested blocks (fallbacks, proxies) are kept by name, one level
    }

A `patch` material (`patch { include "materials/x.vmt" insert { ... } replace { ... } }`) names another VMT whose
parameters it extends; `include` gives the name, `merged_with` applies the blocks once the caller has read it.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from .errors import FormatError, read_file_bytes

MAX_VMT_BYTES = 1 << 20  # real VMTs are a few hundred bytes
MAX_DEPTH = 32  # nested blocks (real VMTs: two or three)
_TOKEN = re.compile(r'"([^"\n]*)"|"|(//[^\n]*)|([{}])|([^\s{}"]+)')
_PC_CONDITIONS = {"$win32": True, "$windows": True, "$x360": False, "$ps3": False, "$gameconsole": False,
                  "$osx": False, "$linux": False, "$posix": False}  # fmt: skip


@dataclass
class VmtDocument:
    shader: str  # as written ("VertexLitGeneric", "patch"...)
    parameters: dict[str, str] = field(default_factory=dict)  # lower-case key -> value (the first of a key)
    blocks: dict[str, dict[str, str]] = field(default_factory=dict)  # nested blocks by lower-case name

    @property
    def include(self) -> str | None:
        """The VMT a `patch` material extends (a path from the game folder, `materials/...vmt`)."""
        return self.parameters.get("include") if self.shader.lower() == "patch" else None

    def merged_with(self, base: VmtDocument) -> VmtDocument:
        """This patch applied to the material it includes: its `insert` keys added, its `replace` keys replaced."""
        parameters = dict(base.parameters)
        for key, value in self.blocks.get("insert", {}).items():
            parameters.setdefault(key, value)
        for key, value in self.blocks.get("replace", {}).items():
            parameters[key] = value
        return VmtDocument(base.shader, parameters, dict(base.blocks))

    def number(self, key: str, default: float = 0.0) -> float:
        """A parameter read as a number, as the material system does (`1`, `0.5`, `"1"`; else the default)."""
        text = self.parameters.get(key.lower(), "").strip()
        try:
            return float(text)
        except ValueError:
            return default

    def flag(self, key: str) -> bool:
        return self.number(key) != 0


@dataclass(slots=True)
class _Token:
    text: str
    quoted: bool
    line: int
    column: int


def load_vmt(path: str) -> VmtDocument:
    data = read_file_bytes(path)
    if len(data) > MAX_VMT_BYTES:
        raise FormatError(f"{len(data):,} bytes: more than a material file holds ({MAX_VMT_BYTES:,})", path=path)
    try:
        return read_vmt(data.decode("utf-8", errors="replace"))
    except FormatError as error:
        raise error.with_path(path) from None


def read_vmt(text: str) -> VmtDocument:
    tokens = _tokenize(text.lstrip("\ufeff"))
    if not tokens:
        raise FormatError("empty material: no shader name", line=1, column=1)
    shader = tokens[0]
    if shader.text in "{}" and not shader.quoted:
        raise FormatError(f"a material starts with its shader's name, not {shader.text!r}", line=shader.line,
                          column=shader.column)  # fmt: skip
    if len(tokens) < 2 or tokens[1].text != "{" or tokens[1].quoted:
        where = tokens[1] if len(tokens) > 1 else shader
        raise FormatError(f"'{{' expected after the shader name {shader.text!r}", line=where.line,
                          column=where.column)  # fmt: skip
    document = VmtDocument(shader.text)
    end = _block(tokens, 2, document.parameters, document.blocks, 1)
    if end < len(tokens):
        extra = tokens[end]
        raise FormatError(f"text after the material's closing '}}': {extra.text!r}", line=extra.line,
                          column=extra.column)  # fmt: skip
    return document


def _block(tokens: list[_Token], at: int, values: dict[str, str], blocks: dict[str, dict[str, str]] | None,
           depth: int) -> int:  # fmt: skip
    """Read key/value pairs and nested blocks up to the block's `}`; return the index after it."""
    opening = tokens[at - 1]
    if depth > MAX_DEPTH:
        raise FormatError(f"blocks nested more than {MAX_DEPTH} deep", line=opening.line, column=opening.column)
    while at < len(tokens):
        key = tokens[at]
        if key.text == "}" and not key.quoted:
            return at + 1
        if key.text == "{" and not key.quoted:
            raise FormatError("'{' where a key was expected", line=key.line, column=key.column)
        if at + 1 >= len(tokens):
            break
        value = tokens[at + 1]
        if value.text == "{" and not value.quoted:
            inner: dict[str, str] = {}
            at = _block(tokens, at + 2, inner, None, depth + 1)
            if blocks is not None:
                blocks.setdefault(key.text.lower(), inner)
            continue
        if value.text == "}" and not value.quoted:
            raise FormatError(f"key {key.text!r} has no value", line=key.line, column=key.column)
        at += 2
        holds = True
        if at < len(tokens) and not tokens[at].quoted and tokens[at].text.startswith("["):
            holds = _condition_holds(tokens[at].text)
            at += 1
        if holds:
            values.setdefault(key.text.lower(), value.text)
    raise FormatError(f"the block opened at line {opening.line} is never closed", line=opening.line,
                      column=opening.column)  # fmt: skip


def _condition_holds(text: str) -> bool:
    """`[$X360]`, `[!$WIN32]`...: whether it holds on a Windows PC (an unknown condition holds)."""
    condition = text.strip("[]").strip().lower()
    name = condition.lstrip("!")
    return _PC_CONDITIONS[name] != condition.startswith("!") if name in _PC_CONDITIONS else True


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    line_starts = [0] + [match.end() for match in re.finditer("\n", text)]
    for match in _TOKEN.finditer(text):
        if match.group(2):
            continue
        line = bisect.bisect_right(line_starts, match.start())
        column = match.start() - line_starts[line - 1] + 1
        if match.group(0) == '"':
            raise FormatError("unterminated quote", line=line, column=column)
        quoted = match.group(1) is not None
        tokens.append(_Token(match.group(1) if quoted else (match.group(3) or match.group(4)), quoted, line, column))
    return tokens
