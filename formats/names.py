"""Names in the text formats that quote them ("..."), IQE and SMD: neither has an escape."""

from __future__ import annotations

UNQUOTABLE = {'"': "'", "\n": " ", "\r": " ", "\x00": " "}  # characters a quoted name cannot hold -> written instead


def quotable_name(name: str) -> tuple[str, bool]:
    """A writable version of `name` (quotes become apostrophes, line breaks spaces) and whether it changed."""
    cleaned = "".join(UNQUOTABLE.get(character, character) for character in name)
    return cleaned, cleaned != name
