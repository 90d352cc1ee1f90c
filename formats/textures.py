"""Where a model's texture images are, by the rules the engines use; pure Python, no bpy.

Only paths relative to the model's folder are tried, as the engines do (never above or beside it; no folder is
searched through). File names are matched ignoring case, as on the engines' Windows origins.

- A material name that is a file name (`barney_face.bmp`, GoldSrc) is looked up as given; a name without an image
  extension (Source's `models/props/sheet`, most IQE materials) is tried with each usual image extension.
- A name with folders is tried relative to the model's folder, under its `materials/` folder (Source), and by its
  last part alone beside the model.
- VDrift JOE models have no materials: a car's `.car` file names each section's `mesh` and `texture` (the first
  texture is the diffuse one; `draw = transparent` blends with its alpha); a track's `objects.txt` names each
  body's `model` and `texture` (`alphablend`), its older `list.txt` gives per object the model, the texture, then
  mipmap, nolighting, skybox and transparent_blend (1: alpha blended); otherwise an image with the model's own
  stem beside it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache

IMAGE_EXTENSIONS = (".png", ".tga", ".bmp", ".jpg", ".jpeg", ".dds", ".tif", ".tiff")
MIN_LIST_PARAMETERS = 14  # VDrift's old track object list: its first line, parameters per object, is at least this
_CAR_LINE = re.compile(r"^\s*(?:\[(?P<section>[^\]]*)\]|(?P<key>[\w.]+)\s*=\s*(?P<value>.*?))\s*(?:#.*)?$")


_SIGNATURES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"BM", b"DDS ", b"II*\0", b"MM\0*", b"GIF8", b"v/1\x01",
               b"#?RADIANCE", b"#?RGBE", b"\x01\xda", b"8BPS")  # PNG JPEG BMP DDS TIFF GIF EXR HDR SGI PSD  # fmt: skip
_TGA_TYPES = {1, 2, 3, 9, 10, 11}  # colour-mapped, true-colour, grey; raw or run-length encoded
_TGA_DEPTHS = {8, 15, 16, 24, 32}


def looks_like_an_image(path: str) -> bool:
    """Whether the file starts as an image does, whatever its extension says (Blender, like the engines' image
    loaders, goes by the content: a PNG named `.tga` is read): a known signature, or a TGA header (a TGA has no
    signature: its type, size and depth). A damaged or truncated file is then not wired into a material, where it
    would only draw pink. Reads 18 bytes, not the image."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(18)
    except OSError:
        return False
    if head.startswith(_SIGNATURES) or (head.startswith(b"RIFF") and b"WEBP" in head):
        return True
    width, height = int.from_bytes(head[12:14], "little"), int.from_bytes(head[14:16], "little")
    return len(head) == 18 and head[2] in _TGA_TYPES and width > 0 and height > 0 and head[16] in _TGA_DEPTHS


@dataclass(frozen=True)
class Texture:
    path: str
    use_alpha: bool = False  # the engine blends or masks with the image's alpha
    alpha_test: bool = False  # masks (each pixel drawn or not), rather than blends
    key_color: tuple[int, int, int] | None = None  # (sRGB 0-255) the colour drawn transparent instead of an alpha


def bmp_key_color(path: str) -> tuple[int, int, int] | None:
    """The colour GoldSrc draws transparent in a `{` texture: the last (256th) entry of an 8-bit BMP's palette
    (usually pure blue). None for any other image."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(54)
            if len(head) < 54 or not head.startswith(b"BM"):
                return None
            info_size = int.from_bytes(head[14:18], "little")
            bits, used = int.from_bytes(head[28:30], "little"), int.from_bytes(head[46:50], "little")
            if bits != 8 or used not in (0, 256) or not 12 <= info_size <= 1024:
                return None
            stream.seek(14 + info_size + 4 * 255)
            entry = stream.read(4)  # blue, green, red, reserved
    except OSError:
        return None
    return (entry[2], entry[1], entry[0]) if len(entry) == 4 else None


@lru_cache(maxsize=256)
def _entries(folder: str) -> dict[str, str]:
    """A folder's entries by lower-case name."""
    try:
        return {name.lower(): name for name in os.listdir(folder)}
    except OSError:
        return {}


def clear_cache() -> None:
    """Forget listed folders and read lists (a new import may follow changes on disk)."""
    _entries.cache_clear()
    _model_textures.cache_clear()


def _existing(root: str, relative: str) -> str | None:
    """root/relative with each part matched ignoring case, if it is a file inside root."""
    folder = root
    parts = [part for part in relative.replace("\\", "/").split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        return None
    for index, part in enumerate(parts):
        found = _entries(folder).get(part.lower())
        if found is None:
            return None
        folder = os.path.join(folder, found)
        if index < len(parts) - 1 and not os.path.isdir(folder):
            return None
    return folder if os.path.isfile(folder) else None


def candidate_names(name: str) -> list[str]:
    """The file names a material name may stand for, most likely first."""
    name = name.strip().strip('"').replace("\\", "/")
    if not name:
        return []
    stem, extension = os.path.splitext(name)
    names = [name] if extension.lower() in IMAGE_EXTENSIONS else []
    base = stem if extension.lower() in IMAGE_EXTENSIONS else name
    names += [base + ext for ext in IMAGE_EXTENSIONS if base + ext not in names]
    return names


def find_texture(material: str, model_path: str) -> Texture | None:
    """The image a material name stands for, in the model's folder tree."""
    root = os.path.dirname(os.path.abspath(model_path))
    goldsrc_masked = os.path.basename(material.strip()).startswith("{")  # GoldSrc: `{` textures are alpha-tested
    for candidate in candidate_names(material):
        tries = [candidate, f"materials/{candidate}"]
        if "/" in candidate:
            tries.append(candidate.rsplit("/", 1)[1])
        for relative in tries:
            found = _existing(root, relative)
            if found is not None:
                key = bmp_key_color(found) if goldsrc_masked else None  # (an 8-bit BMP has no alpha: its key colour)
                return Texture(found, use_alpha=goldsrc_masked, alpha_test=goldsrc_masked, key_color=key)
    return None


# ------------------------------------------------------------------------------------------------ VDrift


def joe_texture(model_path: str, member: str | None = None) -> Texture | None:
    """The texture of a JOE model (`member`: the model's name inside a JPK), by VDrift's conventions."""
    root = os.path.dirname(os.path.abspath(model_path))
    model = member or os.path.basename(model_path)
    for texture, alpha in _model_textures(root).get(model.lower(), ()):
        found = _existing(root, texture)
        if found is not None:
            return Texture(found, use_alpha=alpha)
    stem = model[: -len(".joe")] if model.lower().endswith(".joe") else model
    for candidate in candidate_names(stem):
        found = _existing(root, candidate)
        if found is not None:
            return Texture(found)
    return None


@lru_cache(maxsize=64)
def _model_textures(root: str) -> dict[str, list[tuple[str, bool]]]:
    """Each model the folder's `.car` files, `objects.txt` and `list.txt` name (lower case), with its (texture,
    alpha) entries in that order: read once for all the members of a pack (a track's may hold thousands)."""
    textures: dict[str, list[tuple[str, bool]]] = {}
    for model, texture, alpha in (*_described_entries(root), *_list_entries(root)):
        textures.setdefault(model.lower(), []).append((texture, alpha))
    return textures


def _described_entries(root: str) -> list[tuple[str, str, bool]]:
    """(model, diffuse texture, alpha) of every section of the folder's `.car` files and `objects.txt`."""
    entries = []
    for name in sorted(_entries(root).values()):
        if name.lower().endswith(".car") or name.lower() == "objects.txt":
            entries += parse_sections(_read_text(os.path.join(root, name)))
    return entries


def parse_sections(text: str) -> list[tuple[str, str, bool]]:
    """(model, diffuse texture, alpha) of each section of a `.car` or `objects.txt` that names both."""
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] = sections.setdefault("", {})
    for line in text.splitlines():
        match = _CAR_LINE.match(line)
        if match is None:
            continue
        if match["section"] is not None:
            current = sections.setdefault(match["section"].strip(), {})
        else:
            current[match["key"].lower()] = match["value"].strip()
    entries = []
    for values in sections.values():
        model = values.get("mesh", values.get("model"))
        if model and "texture" in values:
            diffuse = values["texture"].split(",")[0].strip()
            alpha = values.get("draw", "").lower() == "transparent" or values.get("alphablend", "").lower() in (
                "1", "true", "on")  # fmt: skip
            entries.append((model, diffuse, alpha))
    return entries


def _list_entries(root: str) -> list[tuple[str, str, bool]]:
    """(model, texture, alpha blended) of the objects in the folder's `list.txt` (VDrift's old track format)."""
    path = _existing(root, "list.txt")
    if path is None:
        return []
    return parse_list(_read_text(path))


def parse_list(text: str) -> list[tuple[str, str, bool]]:
    """The first line is the parameter count N (17 today, at least 14); then N lines per object: model, texture,
    mipmap, nolighting, skybox, transparent_blend (1: alpha blended, 2: double-sided), ..."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    if not lines or not lines[0].isdigit() or int(lines[0]) < MIN_LIST_PARAMETERS:
        return []
    per_object = int(lines[0])
    entries = []
    for start in range(1, len(lines) - per_object + 1, per_object):
        block = lines[start : start + per_object]
        entries.append((block[0], block[1], block[5] == "1"))
    return entries


def _read_text(path: str) -> str:
    try:
        with open(path, "rb") as stream:
            return stream.read(1 << 20).decode("utf-8", errors="replace")
    except OSError:
        return ""
