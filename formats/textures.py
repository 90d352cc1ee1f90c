"""Where a model's texture images are, by the rules the engines use; pure Python, no bpy.

Only paths relative to the model's folder are tried, as the engines do (never above or beside it; no folder is
searched through), except where a file the engine reads names one (a Source game's materials, an `iqm.cfg`). File
names are matched ignoring case, as on the engines' Windows origins.

- A material name that is a file name (`barney_face.bmp`, GoldSrc) is looked up as given; a name without an image
  extension (Source's `models/props/sheet`, most IQE materials) is tried with each usual image extension.
- A name with folders is tried relative to the model's folder, under its `materials/` folder (Source), and by its
  last part alone beside the model.
- Source (`find_texture` with a `SourceSearch`, from an SMD or a QC): the material's VMT is looked up in the game's
  `materials/` folder under each `$cdmaterials` folder in order (subfolders are not searched), the VMT's
  `$basetexture` read (through `include`/`patch` VMTs), and its VTF taken, or a TGA or PNG of the same name beside
  it. The game folder is the user's, else found by walking up from the QC's folder (at most 8 levels) to one with a
  `materials/` folder, as game and SDK content trees lay it out. GoldSrc QCs' `$cdtexture` folders are tried first.
- Red Eclipse, Tesseract and Sauerbraten IQMs: the skin the `iqm.cfg` (`md5.cfg`) beside the model names for each
  mesh (`iqmskin`, `exec`, `iqmdir`: `parse_model_config`), else a `skin` image beside the model or above it.
- VDrift JOE models have no materials: a car's `.car` file names each section's `mesh` and `texture` (the first
  texture is the diffuse one; `draw = transparent` blends with its alpha); a track's `objects.txt` names each
  body's `model` and `texture` (`alphablend`), its older `list.txt` gives per object the model, the texture, then
  mipmap, nolighting, skybox and transparent_blend (1: alpha blended); otherwise an image with the model's own
  stem beside it.
"""

from __future__ import annotations

import math
import os
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from . import vmt
from .errors import FormatError

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
    uv_mapping: UvMapping | None = None  # how the material moves the texture on the UV map ($basetexturetransform)
    material_file: str | None = None  # the VMT that named the image


@dataclass(frozen=True)
class UvMapping:
    """A Mapping node's Point transform of Blender UVs (out = location + rotation(scale * in))."""

    location: tuple[float, float]
    rotation: float  # radians, about Z
    scale: tuple[float, float]


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
    _is_file.cache_clear()
    materials_folder.cache_clear()  # (found once for all the materials of an import: a QC may name hundreds)
    _model_textures.cache_clear()
    _existing.cache_clear()
    _folder_of.cache_clear()  # (the working folder may change between imports)


@lru_cache(maxsize=4096)  # (a track's thousands of models ask for a few hundred textures)
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
    return folder if _is_file(folder) else None


@lru_cache(maxsize=4096)
def _is_file(path: str) -> bool:
    """(asked once an import: a track's thousands of models share a few hundred textures)"""
    return os.path.isfile(path)


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


def find_texture(
    material: str, model_path: str, search: SourceSearch | None = None, notes: list[str] | None = None
) -> Texture | None:
    """The image a material name stands for: with `search` (a Source or GoldSrc model), by the engine's rules first
    (`$cdtexture` folders, then the VMT in the game's materials); then relative to the model's folder. FormatError for a
    VMT that cannot be read (the engine would draw its checkerboard). `notes`: why a VMT found gave no image."""
    root = os.path.dirname(os.path.abspath(model_path))
    if search is not None:
        for folder in search.texture_folders:
            found = _image_in(folder, material, [])
            if found is not None:
                return found
        why: list[str] = []
        found = find_source_texture(material, search, root, why) or _image_in(root, material, ["materials/"])
        if found is None and notes is not None:
            notes += why
        return found
    return _image_in(root, material, ["materials/"])


def _image_in(root: str, material: str, prefixes: list[str]) -> Texture | None:
    """An image the name stands for under root (as given, under each prefix, and by its last part alone)."""
    goldsrc_masked = os.path.basename(material.strip()).startswith("{")  # GoldSrc: `{` textures are alpha-tested
    entries = _entries(root)
    for candidate in candidate_names(material):
        tries = [candidate, *(prefix + candidate for prefix in prefixes)]
        if "/" in candidate:
            tries.append(candidate.rsplit("/", 1)[1])
        for relative in tries:
            if _first_part_missing(entries, relative):
                continue
            found = _existing(root, relative)
            if found is not None:
                key = bmp_key_color(found) if goldsrc_masked else None  # (an 8-bit BMP has no alpha: its key colour)
                return Texture(found, use_alpha=goldsrc_masked, alpha_test=goldsrc_masked, key_color=key)
    return None


def _first_part_missing(entries: dict[str, str], relative: str) -> bool:
    """Whether `_existing` would find no entry for the path's first part in a folder of these `entries`: told
    without its call (most names a material stands for are not there: 16 tries a material)."""
    head = relative.split("/", 1)[0]
    return head not in ("", ".") and "\\" not in head and head.lower() not in entries


# ------------------------------------------------------------------------------------------------ Source

MAX_GAME_LEVELS = 8  # how far above the QC's folder the game's materials folder is looked for
MAX_MATERIAL_FOLDERS = 32  # studiomdl's $cdmaterials limit
MAX_INCLUDES = 8  # `include` VMTs followed in a row (a loop stops here)
SOURCE_IMAGE_EXTENSIONS = (".vtf", ".tga", ".png")  # what $basetexture names, in the order looked for


@dataclass(frozen=True)
class SourceSearch:
    """What a QC (or the user) says about where a model's materials are."""

    material_folders: tuple[str, ...] = ()  # $cdmaterials, relative to the game's materials folder, in order
    texture_folders: tuple[str, ...] = ()  # GoldSrc $cdtexture folders (absolute)
    game_folder: str = ""  # the user's game folder (holding `materials/`), else found from `start_folder`
    start_folder: str = ""  # the QC's folder (else the model's)


@lru_cache(maxsize=256)
def materials_folder(search: SourceSearch, model_folder: str) -> str | None:
    """The game's `materials/` folder: the user's game folder's (or the folder itself when it is one), else the
    first found walking up from the QC's folder: `<game>/materials`, or `<root>/game/<game>/materials` from an SDK
    content tree `<root>/content/<game>/...`."""
    if search.game_folder:
        game = os.path.abspath(search.game_folder)
        if os.path.basename(os.path.normpath(game)).lower() == "materials":
            return game if os.path.isdir(game) else None
        return _existing_folder(game, "materials")
    folder = os.path.abspath(search.start_folder or model_folder)
    for _ in range(MAX_GAME_LEVELS + 1):
        found = _existing_folder(folder, "materials")
        parent = os.path.dirname(folder)
        if found is None and os.path.basename(parent).lower() == "content":
            found = _existing_folder(os.path.dirname(parent), f"game/{os.path.basename(folder)}/materials")
        if found is not None:
            return found
        if parent == folder:
            break
        folder = parent
    return None


def _existing_folder(root: str, relative: str) -> str | None:
    folder = root
    for part in relative.split("/"):
        name = _entries(folder).get(part.lower())
        if name is None or not os.path.isdir(os.path.join(folder, name)):
            return None
        folder = os.path.join(folder, name)
    return folder


def game_path(text: str) -> str:
    """A path as the engine reads it: `\\` as `/`, no empty parts (`models\\props\\` is `models/props`)."""
    return "/".join(part for part in text.replace("\\", "/").split("/") if part)


def material_stem(material: str) -> str:
    """The material's name as studiomdl looks it up: `\\` as `/`, without a `.vmt` or image extension."""
    name = game_path(material.strip().strip('"'))
    stem, extension = os.path.splitext(name)
    return stem if extension.lower() in (".vmt", *IMAGE_EXTENSIONS) else name


def find_vmt(material: str, search: SourceSearch, materials: str) -> str | None:
    """The VMT of a material: `<materials>/<folder>/<name>.vmt` for each $cdmaterials folder in order (the name
    alone when the QC names none)."""
    stem = material_stem(material)
    if not stem:
        return None
    for folder in search.material_folders[:MAX_MATERIAL_FOLDERS] or ("",):
        folder = game_path(folder)
        found = _existing(materials, f"{folder}/{stem}.vmt" if folder else f"{stem}.vmt")
        if found is not None:
            return found
    return None


def read_material(path: str, materials: str) -> vmt.VmtDocument:
    """A VMT with the VMTs it includes applied (`patch`: the included one's parameters, extended)."""
    document = vmt.load_vmt(path)
    chain = [os.path.normcase(path)]
    while document.include is not None:
        include = game_path(document.include)
        relative = include[len("materials/"):] if include.lower().startswith("materials/") else include
        found = _existing(materials, relative if relative.lower().endswith(".vmt") else relative + ".vmt")
        if found is None:
            raise FormatError(f"the VMT it includes, {document.include!r}, was not found", path=path)
        if os.path.normcase(found) in chain or len(chain) > MAX_INCLUDES:
            raise FormatError(f"includes loop or nest more than {MAX_INCLUDES} deep ({document.include!r})", path=path)
        chain.append(os.path.normcase(found))
        document = document.merged_with(vmt.load_vmt(found))
    return document


def find_source_texture(
    material: str, search: SourceSearch, model_folder: str, notes: list[str] | None = None
) -> Texture | None:
    """The image of a Source material: its VMT's `$basetexture` (a VTF, or a TGA or PNG of that name), with the
    VMT's alpha mode and texture transform. None when there is no VMT, or it names no image that is there (then
    said in `notes`: often an image of the base game, inside its VPK archives)."""
    materials = materials_folder(search, model_folder)
    if materials is None:
        return None
    path = find_vmt(material, search, materials)
    if path is None:
        return None
    document = read_material(path, materials)
    base = game_path(document.parameters.get("$basetexture", "").strip())
    if not base:
        if notes is not None:
            notes.append(f"{material}: its VMT {path} names no $basetexture")
        return None
    if os.path.splitext(base)[1].lower() in SOURCE_IMAGE_EXTENSIONS:
        base = os.path.splitext(base)[0]
    image = next((found for extension in SOURCE_IMAGE_EXTENSIONS
                  if (found := _existing(materials, base + extension)) is not None), None)  # fmt: skip
    if image is None:
        if notes is not None:
            notes.append(f"{material}: its VMT {path} names the texture {base!r}, which is not in {materials}")
        return None
    alpha_test = document.flag("$alphatest")
    use_alpha = alpha_test or document.flag("$translucent")
    mapping = uv_mapping(document.parameters.get("$basetexturetransform", ""))
    return Texture(image, use_alpha=use_alpha, alpha_test=alpha_test, uv_mapping=mapping, material_file=path)


_TRANSFORM_WORD = re.compile(r"(center|scale|rotate|translate)\s+([-+.\deE]+)(?:\s+([-+.\deE]+))?", re.IGNORECASE)


def uv_mapping(transform: str) -> UvMapping | None:
    """`$basetexturetransform "center cx cy scale sx sy rotate degrees translate tx ty"` (the engine's default:
    center .5 .5, scale 1 1, rotate 0, translate 0 0) as a Mapping node of Blender UVs, whose V runs up where the
    engine's T runs down. The engine samples at center + R(S(t - center)) + translate; in Blender's UVs the center
    is (cx, 1 - cy), the turn goes the other way and the translation's V is negated. None for the identity."""
    values = {"center": (0.5, 0.5), "scale": (1.0, 1.0), "rotate": (0.0, 0.0), "translate": (0.0, 0.0)}
    for match in _TRANSFORM_WORD.finditer(transform):
        try:
            first = float(match.group(2))
            second = float(match.group(3)) if match.group(3) is not None else first
        except ValueError:
            continue
        values[match.group(1).lower()] = (first, second)
    (cx, cy), (sx, sy), (tx, ty) = values["center"], values["scale"], values["translate"]
    angle = -math.radians(values["rotate"][0])
    if (sx, sy) == (1.0, 1.0) and angle == 0.0 and (tx, ty) == (0.0, 0.0):
        return None
    center = (cx, 1.0 - cy)
    cos, sin = math.cos(angle), math.sin(angle)
    turned = (cos * sx * center[0] - sin * sy * center[1], sin * sx * center[0] + cos * sy * center[1])
    location = (center[0] + tx - turned[0], center[1] - ty - turned[1])
    return UvMapping(location, angle, (sx, sy))


# ------------------------------------------------------------------------------------------------ VDrift


def joe_texture(model_path: str, member: str | None = None) -> Texture | None:
    """The texture of a JOE model (`member`: the model's name inside a JPK), by VDrift's conventions."""
    root = _folder_of(model_path)
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


@lru_cache(maxsize=64)  # (a pack's thousands of members are in one folder)
def _folder_of(path: str) -> str:
    return os.path.dirname(os.path.abspath(path))


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
    lines = [line for line in map(str.strip, text.splitlines()) if line and not line.startswith("#")]
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


# ------------------------------------------------------------------------------------------------ Tesseract

MODEL_CONFIGS = ("iqm.cfg", "md5.cfg")  # what Red Eclipse, Tesseract and Sauerbraten run beside a model
SKIN_COMMANDS = ("iqmskin", "md5skin")
LOAD_COMMANDS = ("iqmload", "md5load")
DIR_COMMANDS = ("iqmdir", "md5dir")  # the folder later skins are relative to, a game path
MAX_EXECS = 8  # configs run in a row by `exec` (a loop stops here)
MAX_CONFIG_RUNS = 32  # configs run in all for one model
DEFAULT_SKIN = "skin"  # what the engines load for a model without a config: skin.jpg/.png beside it, else above
_CFG_WORD = re.compile(r'"([^"\n]*)"?|(//[^\n]*)|([;\n])|([^\s;"]+)')


def parse_model_config(text: str, model_name: str, read_exec: Callable[[str], str | None] | None = None,
                       ) -> dict[str, tuple[str, str]]:  # fmt: skip
    """The skins an engine config (`iqm.cfg`) gives the model `model_name` (its file name): mesh name ("*": every
    mesh) -> (the folder, the diffuse image as written, `<dds>`-style prefixes removed). The folder is "" for the
    model's own, else the game path an `iqmdir` set. A skin command applies to the part last loaded (`iqmload
    FILE`), a later one replacing an earlier one's, as in the engines' `loopskins`; a config that loads no part of
    this name gives nothing. `exec FILE` runs `read_exec(FILE)`'s text (a game path) in turn; conditions (`if`)
    are not evaluated: the commands of both branches run, the later winning."""
    skins: dict[str, tuple[str, str]] = {}
    state = {"loaded": "", "folder": ""}
    runs = [0]  # (configs run in all: a config executing itself twice would otherwise double each level)

    def run(source: str, depth: int) -> None:
        runs[0] += 1
        for words in _config_commands(source):
            command, arguments = words[0].lower(), words[1:]
            if command in LOAD_COMMANDS and arguments:
                state["loaded"] = os.path.basename(arguments[0].replace("\\", "/"))
            elif command in DIR_COMMANDS and arguments:
                state["folder"] = arguments[0].replace("\\", "/").strip("/")
            elif command == "exec" and arguments and read_exec is not None and depth < MAX_EXECS \
                    and runs[0] < MAX_CONFIG_RUNS:  # fmt: skip
                included = read_exec(arguments[0])
                if included is not None:
                    run(included, depth + 1)
            elif command in SKIN_COMMANDS and len(arguments) > 1 and _same_model(state["loaded"], model_name):
                if arguments[0] == "*":  # (every mesh: it replaces what was said of each before)
                    skins.clear()
                skins[arguments[0]] = (state["folder"], re.sub(r"^(<[^>]*>)+", "", arguments[1]))

    run(text, 0)
    return skins


def _same_model(loaded: str, model_name: str) -> bool:
    """Whether `iqmload`'s name is the model: the same file, or the same stem (the IQE an IQM was compiled from)."""
    return os.path.splitext(loaded)[0].lower() == os.path.splitext(model_name)[0].lower() != ""


def _config_commands(text: str) -> list[list[str]]:
    """CubeScript, as far as model configs use it: words, "quoted strings", // comments, commands ended by a line
    break or `;`; the brackets of blocks (`if 1 [ ... ]`) are dropped, their commands kept."""
    commands: list[list[str]] = []
    words: list[str] = []
    for match in _CFG_WORD.finditer(text):
        quoted, comment, end, word = match.groups()
        if end is not None:
            if words:
                commands.append(words)
            words = []
        elif quoted is not None:
            words.append(quoted)
        elif comment is None:
            word = word.strip("[]")
            if word:
                words.append(word)
    if words:
        commands.append(words)
    return commands


def model_config_skins(model_path: str) -> dict[str, Texture] | None:
    """The images the engine config beside the model (`iqm.cfg`, `md5.cfg`) names for it, by mesh name ("*":
    every mesh), those that exist; None when no config there loads this model. A game path (`exec`, `iqmdir`) is
    looked for from each folder above the model's in turn, as far as MAX_GAME_LEVELS."""
    folder = os.path.dirname(os.path.abspath(model_path))
    for config in MODEL_CONFIGS:
        path = _existing(folder, config)
        if path is None:
            continue

        def read_exec(game_path: str) -> str | None:
            found = _game_file(folder, game_path)
            return _read_text(found) if found is not None else None

        named = parse_model_config(_read_text(path), os.path.basename(model_path), read_exec)
        if named:
            images = {mesh: _existing_relative(folder, image) if not game_folder
                      else _game_file(folder, posixpath.join(game_folder, image))
                      for mesh, (game_folder, image) in named.items()}  # fmt: skip
            return {mesh: Texture(image) for mesh, image in images.items() if image is not None}
    return None


def _game_file(model_folder: str, game_path: str) -> str | None:
    """A file the game names from its root: tried from the model's folder and each one above it."""
    relative = posixpath.normpath(game_path.replace("\\", "/"))
    folder = model_folder
    for _ in range(MAX_GAME_LEVELS + 1):
        found = _existing_relative(folder, relative)
        if found is not None:
            return found
        folder = os.path.dirname(folder)
    return None


def default_skin(model_path: str) -> Texture | None:
    """What the engines load for a model without a config: its folder's `skin` image, else the folder above's."""
    folder = os.path.dirname(os.path.abspath(model_path))
    return _image_in(folder, DEFAULT_SKIN, []) or _image_in(os.path.dirname(folder), DEFAULT_SKIN, [])


def _existing_relative(folder: str, relative: str) -> str | None:
    """folder/relative, which may climb (`../diffuse.png`, as configs write it), each part matched ignoring case."""
    parts = [part for part in relative.replace("\\", "/").split("/") if part not in ("", ".")]
    while parts and parts[0] == "..":
        folder, parts = os.path.dirname(folder), parts[1:]
    return _existing(folder, "/".join(parts)) if parts else None
