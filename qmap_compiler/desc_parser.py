"""Parser for `.qmap.desc` material description files (spec §6)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import QmapError
from .tokenizer import Kind, Source, Tokenizer, uint_value


@dataclass
class MaterialDesc:
    """Options for one source material. `name_pos` locates the rename in the desc for error messages."""

    skip: bool = False
    tex_gen: bool = False
    tex_scale: float = 1.0
    new_name: bytes = b""
    name_pos: int | None = None


@dataclass
class DescDocument:
    """A parsed `.qmap.desc`: the first entry for each source material name wins."""

    entries: dict[bytes, MaterialDesc] = field(default_factory=dict)
    source: Source | None = None
    warnings: list[str] = field(default_factory=list)

    def name_error(self, desc: MaterialDesc, message: str) -> QmapError:
        """An error located at the `name` option of `desc`, or at the file when there is none."""
        if self.source is not None and desc.name_pos is not None:
            return self.source.error(desc.name_pos, message)
        return QmapError(message, self.source.filename if self.source else None)


def parse_desc(data: bytes, filename: str = "<desc>") -> DescDocument:
    """Parse a `.qmap.desc` document; raises QmapError for anything the grammar does not allow."""
    source = Source(data, filename)
    tokens = Tokenizer(source)
    document = DescDocument(source=source)
    tokens.expect_ident(b"QMAP")
    tokens.expect_ident(b"DESC")
    version = tokens.next()
    if uint_value(version, tokens) != 10:
        raise tokens.error(version, "wrong version (expected QMAP DESC 10)")
    tokens.expect_ident(b"materials")
    tokens.expect_symbol(b"{")
    while not tokens.is_symbol(b"}"):
        name = tokens.expect_string().value
        entry = _parse_entry(tokens)
        # std::map::insert semantics: a later duplicate is parsed and then dropped.
        document.entries.setdefault(name, entry)
    tokens.expect_symbol(b"}")
    end = tokens.next()
    if end.kind is not Kind.EOF:
        raise tokens.error(end, f"expected end of file, found {end.describe()}")
    return document


def _parse_entry(tokens: Tokenizer) -> MaterialDesc:
    entry = MaterialDesc()
    tokens.expect_symbol(b"{")
    while not tokens.is_symbol(b"}"):
        command = tokens.next()
        if command.kind is not Kind.IDENT:
            raise tokens.error(command, f"expected a material option, found {command.describe()}")
        word = command.text
        if word in (b"skip", b"drop"):
            entry.skip = True
        elif word == b"tex":
            _parse_tex(tokens, entry)
        elif word == b"name":
            name = tokens.expect_string()
            entry.new_name = name.value
            entry.name_pos = name.pos
        else:
            raise tokens.error(command, f"unknown command '{word.decode('latin-1')}'")
        tokens.expect_symbol(b";")
    tokens.expect_symbol(b"}")
    return entry


def _parse_tex(tokens: Tokenizer, entry: MaterialDesc) -> None:
    sub = tokens.next()
    if sub.kind is Kind.IDENT and sub.text == b"gen":
        entry.tex_gen = True
    elif sub.kind is Kind.IDENT and sub.text == b"scale":
        entry.tex_scale = tokens.get_float()
    else:
        raise tokens.error(sub, f"unknown tex command {sub.describe()} (expected 'gen' or 'scale')")
