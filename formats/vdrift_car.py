"""VDrift car files (`.car`): read as the game reads them, kept line by line so that a writer changes only the
values it is given and every other byte stays; the car's parts (drawn sections, wheels, tyres) and the geometry
VDrift generates for rims and tyres. Pure Python and numpy, no bpy.

The text is VDrift's INI (`src/cfg/ptree_ini.cpp`): `[a.b]` opens section b inside a (sections of one name merge),
`key = value` sets a key (a later one wins), `#` and `;` start a comment, a dotted key (`tire.size`) lies in a
sub-section. Coordinates: x right, y forward, z up, metres (`docs/Car_parameters.md`).

Wheels are the sub-sections of `[wheel]` (VDrift iterates them sorted: fl, fr, rl, rr). Current cars
(`src/cargraphics.cpp`, `src/physics/cardynamics.cpp`): `[wheel.fl]` has `mesh`, `texture`, `position`, an optional
`scale` (the right wheels' `-1, 1, 1` mirror), `camber` and `toe` (the wheel turned by -camber about y, then by toe
about z: `src/physics/carsuspension.cpp`) and `genrim`; `[wheel.fl.tire]` has `size = width mm, aspect %, rim inch`
and `texture` (an optional `mesh`). The 2009-2010 layout keeps the size in `[wheel.fl]` and the disk in
`[wheel.fl.rim]` (`hubmesh`, `texture`, `scale`); both are read. Files and images are looked up in the car's folder,
then in `data/carparts` and `data/trackparts`, as the game's content manager does.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from .errors import FormatError, read_file_bytes

Vector = tuple[float, float, float]
_COMMENT_OR_END = ";#]\r"
_SEPARATOR = re.compile(r"\s*,\s*")
SEGMENTS = 32  # around a generated tyre or rim, as VDrift's MeshGen makes them
INCH = 0.0254
DECIMALS = 6  # written numbers: micrometres, a thousandth of a degree


@dataclass
class CarLine:
    """One line of the file as it is (`text` without its line break `ending`); a key line knows where its value is."""

    text: str
    ending: str
    number: int
    section: str = ""  # (of a key line: the full dotted section the key belongs to)
    key: str | None = None
    value_start: int = 0
    value_end: int = 0

    @property
    def value(self) -> str:
        return self.text[self.value_start : self.value_end]


@dataclass
class CarDocument:
    lines: list[CarLine]
    path: str | None = None
    header_lines: dict[str, CarLine] = field(default_factory=dict)  # each section's last header line
    _key_index: tuple[int, dict[str, dict[str, CarLine]]] | None = field(default=None, init=False, repr=False,
                                                                         compare=False)

    # ------------------------------------------------------------------------------------------- reading

    def keys(self, section: str) -> dict[str, CarLine]:
        """The section's key lines by key, a later line winning, as in VDrift (from an index of every section's
        keys, made again when lines were added: a car's parts ask for hundreds of keys)."""
        if self._key_index is None or self._key_index[0] != len(self.lines):
            index: dict[str, dict[str, CarLine]] = {}
            for line in self.lines:
                if line.key is not None:
                    index.setdefault(line.section, {})[line.key] = line
            self._key_index = (len(self.lines), index)
        return dict(self._key_index[1].get(section, {}))

    def sections(self) -> list[str]:
        """Every section holding a key, in the order of its first key (sub-sections implied by a dotted key too)."""
        names: dict[str, None] = {}
        for line in self.lines:
            if line.key is not None:
                names.setdefault(line.section, None)
        return list(names)

    def children(self, section: str) -> list[str]:
        """The direct sub-sections of `section`, sorted as VDrift's std::map iterates them."""
        prefix = section + "."
        names = {name[len(prefix) :].split(".")[0] for name in [*self.sections(), *self.header_lines]
                 if name.startswith(prefix)}  # fmt: skip
        return sorted(names, key=lambda name: name.encode("utf-8", "surrogateescape"))

    def line_of(self, section: str, key: str) -> CarLine | None:
        line = self.keys(section).get(key)
        return line if line is not None and line.value else None  # (VDrift skips a key without a value)

    def get(self, section: str, key: str) -> str | None:
        line = self.line_of(section, key)
        return line.value if line is not None else None

    def numbers(self, section: str, key: str, count: int) -> tuple[float, ...] | None:
        """The key's comma-separated numbers (exactly `count`); None when the key is absent."""
        line = self.line_of(section, key)
        if line is None:
            return None
        values = parse_numbers(line, self.path)
        if len(values) != count:
            raise self.error(f"[{section}] {key}: {count} comma-separated numbers expected, found {len(values)}",
                             line, line.value_start)  # fmt: skip
        return values

    def error(self, message: str, line: CarLine, index: int = 0) -> FormatError:
        return FormatError(message, path=self.path, line=line.number, column=index + 1)

    # ------------------------------------------------------------------------------------------- writing

    def set_value(self, section: str, key: str, value: str) -> None:
        """Give the key this value text: in place on its line (the rest of the line, its comment and spacing kept),
        or on a new line after the section's last line when it has no such key (a new section at the end when the
        file has none)."""
        line = self.keys(section).get(key)
        if line is not None:
            line.text = line.text[: line.value_start] + value + line.text[line.value_end :]
            line.value_end = line.value_start + len(value)
            return
        ending = next((item.ending for item in self.lines if item.ending), "\n")
        at = self._end_of_section(section)
        new_lines = [] if at is not None else [CarLine(f"[{section}]", ending, 0)]
        text = f"{key} = {value}"
        new_lines.append(CarLine(text, ending, 0, section, key, len(text) - len(value), len(text)))
        at = len(self.lines) if at is None else at
        if at == len(self.lines) and self.lines and not self.lines[-1].ending:  # (the file ends without a break)
            self.lines[-1].ending, new_lines[-1].ending = ending, ""
        self.lines[at:at] = new_lines
        if len(new_lines) == 2:
            self.header_lines[section] = new_lines[0]
        self._renumber()

    def _end_of_section(self, section: str) -> int | None:
        """Where a new key of the section goes: after its last key line, else after its header."""
        last = None
        for index, line in enumerate(self.lines):
            if (line.key is not None and line.section == section) or self.header_lines.get(section) is line:
                last = index + 1
        return last

    def _renumber(self) -> None:
        for number, line in enumerate(self.lines, 1):
            line.number = number

    def text(self) -> str:
        return "".join(line.text + line.ending for line in self.lines)

    def to_bytes(self) -> bytes:
        return self.text().encode("utf-8", "surrogateescape")


# ------------------------------------------------------------------------------------------------ parsing


def read_car(data: bytes, path: str | None = None) -> CarDocument:
    """Every line kept; bytes that are not UTF-8 (old comments in Latin-1) survive a write unchanged."""
    text = data.decode("utf-8", "surrogateescape")
    document = CarDocument([], path)
    section = ""
    pieces = text.split("\n")
    for number, piece in enumerate(pieces, 1):
        ending = "\n" if number < len(pieces) else ""
        if piece.endswith("\r"):
            piece, ending = piece[:-1], "\r" + ending
        line = CarLine(piece, ending, number)
        document.lines.append(line)
        section = _read_line(document, line, section)
    if document.lines and document.lines[-1].text == "" and not document.lines[-1].ending:
        document.lines.pop()  # (the empty piece after a final line break)
    return document


def load_car(path: str) -> CarDocument:
    return read_car(read_file_bytes(path), path)


def _read_line(document: CarDocument, line: CarLine, section: str) -> str:
    """VDrift's reading of one line; returns the section the next lines are in."""
    text = line.text
    begin = next((index for index, char in enumerate(text) if char not in " \t["), len(text))
    end = next((index for index in range(begin, len(text)) if text[index] in _COMMENT_OR_END), len(text))
    if begin >= end:
        return section  # blank, or a comment
    equals = text.find("=", begin, end)
    if equals < 0:
        if "[" not in text[:begin]:
            raise document.error(f"{text[begin:end].strip()!r} is neither a [section] nor a key = value line",
                                 line, begin)  # fmt: skip
        name = text[begin:end].rstrip(" \t")
        document.header_lines[name] = line
        return name
    key = text[begin:equals].rstrip(" \t")
    start = next((index for index in range(equals + 1, end) if text[index] not in " \t"), end)
    stop = len(text[start:end].rstrip(" \t")) + start
    if start < end and text[start] == "&":
        raise document.error(f"{key} = &...: included files are not supported; copy the included keys into the file",
                             line, start)  # fmt: skip
    full = f"{section}.{key}" if section else key
    line.section, line.key = full.rpartition(".")[0], full.rpartition(".")[2]
    line.value_start, line.value_end = start, stop
    return section


def parse_numbers(line: CarLine, path: str | None = None) -> tuple[float, ...]:
    values = []
    position = line.value_start
    for part in line.value.split(","):
        stripped = part.strip()
        try:
            number = float(stripped)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            column = position + (len(part) - len(part.lstrip()))
            raise FormatError(f"{line.key}: {stripped!r} is not a number", path=path, line=line.number,
                              column=column + 1)
        values.append(number)
        position += len(part) + 1
    return tuple(values)


# ------------------------------------------------------------------------------------------------ writing


def format_number(value: float, decimals: int = DECIMALS) -> str:
    text = f"{round(value, decimals):.{decimals}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def formatted_numbers(values: tuple[float, ...], old: str | None, decimals: int = DECIMALS,
                      old_values: tuple[float, ...] | None = None) -> str:  # fmt: skip
    """The numbers, separated as the old value separated its own (`-1,1,1` stays without spaces); a number equal to
    the old one at its place (`old_values`, read from `old`) keeps its old text (`1.60` stays `1.60`)."""
    separators = _SEPARATOR.findall(old) if old else []
    tokens = [token.strip() for token in old.split(",")] if old else []
    if len(separators) != len(values) - 1:
        separators = [", "] * (len(values) - 1)
    if old_values is None or len(old_values) != len(values) or len(tokens) != len(values):
        tokens, old_values = [""] * len(values), tuple(math.nan for _ in values)

    def text_of(index: int) -> str:
        unchanged = same_number(old_values[index], values[index], decimals)
        return tokens[index] if unchanged else format_number(values[index], decimals)

    text = text_of(0)
    for index, separator in enumerate(separators, 1):
        text += separator + text_of(index)
    return text


def same_number(old: float, new: float, decimals: int = DECIMALS) -> bool:
    """Whether `new` is the file's `old` number: equal as written to `decimals`, or within single precision (what
    Blender gives back of a number it stored)."""
    if not math.isfinite(old):
        return False
    return format_number(old, decimals) == format_number(new, decimals) or abs(new - old) <= abs(old) * 2.0**-23


def same_numbers(old: tuple[float, ...] | None, new: tuple[float, ...], decimals: int = DECIMALS) -> bool:
    """Whether the new values would be written as the old ones (then the line is left as it is)."""
    return old is not None and len(old) == len(new) and all(
        same_number(a, b, decimals) for a, b in zip(old, new, strict=True))  # fmt: skip


def update_numbers(document: CarDocument, section: str, key: str, values: tuple[float, ...],
                   decimals: int = DECIMALS, default: tuple[float, ...] | None = None) -> bool:
    """Write the values unless they round (to `decimals`) to the file's, or to `default` when the file has no such
    key (what the game then uses); only the numbers that changed get new text. True when the file changed."""
    line = document.line_of(section, key)
    read = parse_numbers(line, document.path) if line is not None else None
    old = read if read is not None else default
    if old is not None and len(old) == 1 and len(values) > 1:
        old = old * len(values)  # (a one-number scale)
    if same_numbers(old, values, decimals):
        return False
    text = line.value if line is not None else None
    document.set_value(section, key, formatted_numbers(values, text, decimals, read))
    return True


# ------------------------------------------------------------------------------------------------ the car


@dataclass
class Drawable:
    """A drawn section (`[body]`, `[glass]`, `[interior]`, `[steering]`, ...): a model and its textures."""

    section: str
    mesh: str
    textures: list[str]
    position: Vector | None = None
    rotation: Vector | None = None  # degrees, applied x, then y, then z (VDrift's Quat(x, y, z): Euler ZYX)
    scale: Vector | None = None
    draw: str = ""  # "transparent" (blended with the first texture's alpha), "emissive", or ""


@dataclass
class TireSize:
    width_mm: float
    aspect: float  # sidewall height in % of the width
    rim_inch: float
    section: str = ""  # where the size is written
    key: str = "size"

    @property
    def width(self) -> float:
        return self.width_mm * 0.001

    @property
    def rim_radius(self) -> float:
        return self.rim_inch * INCH * 0.5

    @property
    def radius(self) -> float:
        """The tyre's radius as VDrift's physics has it: rim radius plus sidewall height."""
        return self.rim_radius + self.width * self.aspect * 0.01

    def scaled(self, width_factor: float, radius_factor: float) -> TireSize:
        """The size of a tyre `width_factor` times as wide and `radius_factor` times as large: rim and sidewall
        both grow with the radius, so the aspect changes by radius_factor / width_factor."""
        return TireSize(self.width_mm * width_factor, self.aspect * radius_factor / width_factor,
                        self.rim_inch * radius_factor, self.section, self.key)  # fmt: skip

    def values(self) -> tuple[float, float, float]:
        return (self.width_mm, self.aspect, self.rim_inch)


@dataclass
class Wheel:
    name: str  # "fl"
    section: str  # "wheel.fl"
    position: Vector
    size: TireSize
    mesh: str | None  # the wheel's (disk's) model
    textures: list[str]
    mirror: Vector | None  # its `scale`, `-1, 1, 1` on the right side
    generate_rim: bool
    tire_mesh: str | None
    tire_textures: list[str]
    tire_mirror: Vector | None = None  # (the 2009-2010 layout mirrors the right tyres too)
    camber: float = 0.0  # degrees about y (forward), negated: VDrift turns the wheel by -camber
    toe: float = 0.0  # degrees about z (up)
    brake_radius: float = 0.0  # the brake disc's, in metres (0: no disc drawn)
    brake_mesh: str | None = None
    brake_textures: list[str] = field(default_factory=list)


@dataclass
class Car:
    drawables: list[Drawable]
    wheels: list[Wheel]
    warnings: list[str] = field(default_factory=list)


def car_parts(document: CarDocument) -> Car:
    car = Car(_drawables(document), [])
    for name in document.children("wheel"):
        car.wheels.append(_wheel(document, name, car.warnings))
    if not car.wheels:
        line = document.lines[0] if document.lines else CarLine("", "", 1)
        raise document.error("no [wheel.XX] sections: not a car file of a layout this importer reads", line)
    if len(car.wheels) != 4:
        car.warnings.append(f"VDrift needs exactly 4 wheels, the file has {len(car.wheels)}")
    return car


def _drawables(document: CarDocument) -> list[Drawable]:
    """The top-level sections with a texture, as VDrift draws them (the body first)."""
    names = [name for name in document.sections() if "." not in name and name != "wheel"]
    names.sort(key=lambda name: name != "body")
    found = []
    for name in names:
        textures = texture_list(document.get(name, "texture"))
        if not textures:
            continue
        mesh = document.get(name, "mesh")
        if mesh is None:
            line = document.line_of(name, "texture")
            assert line is not None
            raise document.error(f"[{name}] has a texture but no mesh (VDrift refuses the car)", line)
        found.append(Drawable(name, mesh, textures, _vector(document, name, "position"),
                              _vector(document, name, "rotation"), scale_of(document, name),
                              (document.get(name, "draw") or "").strip()))  # fmt: skip
    return found


def _wheel(document: CarDocument, name: str, warnings: list[str]) -> Wheel:
    section = f"wheel.{name}"
    rim, tire = f"{section}.rim", f"{section}.tire"
    header = document.header_lines.get(section) or document.lines[0]
    position = _vector(document, section, "position")
    if position is None:
        raise document.error(f"[{section}] has no position", header)
    size_at = next((where for where in (tire, section) if document.get(where, "size") is not None), None)
    size_line = document.line_of(size_at, "size") if size_at is not None else None
    if size_at is None or size_line is None:
        raise document.error(f"[{section}] has no tyre size ([{tire}] size = width, aspect, rim)", header)
    numbers = document.numbers(size_at, "size", 3)
    assert numbers is not None
    size = TireSize(numbers[0], numbers[1], numbers[2], section=size_at)
    if size.width_mm <= 0 or size.rim_inch <= 0 or size.aspect < 0:
        raise document.error(f"[{size_at}] size {size_line.value!r}: width and rim must be positive", size_line,
                             size_line.value_start)  # fmt: skip
    mesh = document.get(section, "mesh") or document.get(rim, "hubmesh")
    textures = texture_list(document.get(section, "texture") or document.get(rim, "texture"))
    mirror = scale_of(document, section) or scale_of(document, rim)
    genrim = (document.get(section, "genrim") or "true").strip() in ("1", "true", "on")
    if mesh is None:
        warnings.append(f"[{section}] names no wheel mesh: only the tyre is shown")
    camber, toe = ((document.numbers(section, key, 1) or (0.0,))[0] for key in ("camber", "toe"))
    brake = f"{section}.brake"
    return Wheel(
        name, section, position, size, mesh, textures, mirror, genrim, document.get(tire, "mesh"),
        texture_list(document.get(tire, "texture")), scale_of(document, tire), camber, toe,
        brake_radius=max((document.numbers(brake, "radius", 1) or (0.0,))[0], 0.0),
        brake_mesh=document.get(brake, "mesh"), brake_textures=texture_list(document.get(brake, "texture")),
    )  # fmt: skip


def _vector(document: CarDocument, section: str, key: str) -> Vector | None:
    values = document.numbers(section, key, 3)
    return (values[0], values[1], values[2]) if values is not None else None


def scale_of(document: CarDocument, section: str) -> Vector | None:
    """A section's `scale`; one number (`scale = 0.72`, which VDrift reads as 0.72, 0, 0) as a uniform scale."""
    line = document.line_of(section, "scale")
    if line is None:
        return None
    values = parse_numbers(line, document.path)
    if len(values) == 1:
        return (values[0], values[0], values[0])
    return _vector(document, section, "scale")


def texture_list(value: str | None) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()] if value else []


# ------------------------------------------------------------------------------------------------ files


def part_folders(car_path: str) -> list[str]:
    """Where the game looks for a car's models and images: its folder, then data/carparts and data/trackparts."""
    car_folder = os.path.dirname(os.path.abspath(car_path))
    data = os.path.dirname(os.path.dirname(car_folder))
    return [car_folder, os.path.join(data, "carparts"), os.path.join(data, "trackparts")]


Listings = dict[str, dict[str, str] | None]  # folder -> its entries by lower-case name (None: not a folder)


def find_part(car_path: str, name: str, listings: Listings | None = None) -> str | None:
    """The file a `.car` names, in the folders the game tries; each part of the name matched ignoring case.
    `listings`: the folders listed so far, kept by the caller for the next names (a car names tens of files in the
    same few folders)."""
    parts = [part for part in name.strip().replace("\\", "/").split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        return None
    listings = {} if listings is None else listings
    for folder in part_folders(car_path):
        found = _matching_path(folder, parts, listings)
        if found is not None:
            return found
    return None


def _matching_path(folder: str, parts: list[str], listings: Listings) -> str | None:
    for part in parts:
        if folder not in listings:
            try:
                listings[folder] = {entry.lower(): entry for entry in os.listdir(folder)}
            except OSError:
                listings[folder] = None
        entries = listings[folder]
        if entries is None or part.lower() not in entries:
            return None
        folder = os.path.join(folder, entries[part.lower()])
    return folder if os.path.isfile(folder) else None


# ------------------------------------------------------------------------------------------------ geometry

FloatArray = npt.NDArray[np.float64]
IndexArray = npt.NDArray[np.int64]


@dataclass
class Revolved:
    """A mesh made by turning profile rings around the x axis: positions, quads (4 vertex indices each, CCW seen
    from outside), and each quad corner's UV (Blender's V: from the bottom)."""

    positions: FloatArray
    quads: IndexArray
    corner_uvs: FloatArray


def tire_rings(size: TireSize) -> list[tuple[float, float, float]]:
    """(x, radius, v) of the 8 rings of VDrift's generated tyre (MeshGen::mg_tire), right inner edge to left."""
    width, aspect = size.width, size.aspect
    ratio = aspect / 100.0 if aspect > 1 else (aspect or 0.82)
    rim = size.rim_radius
    inner, tread_width = rim * 1.08, width * 0.75
    tread = ratio / 2.0 if ratio > 2 else width * ratio + rim
    bulge = tread_width * 0.05
    sidewall, shoulder = width * ratio / 2.0 + rim, width * ratio / 1.1 + rim
    half = tread_width / 2.0
    return [(half, inner, 0.0), (half + bulge, sidewall, 0.1), (half + bulge, shoulder, 0.25), (half, tread, 1 / 3),
            (-half, tread, 2 / 3), (-half - bulge, shoulder, 0.75), (-half - bulge, sidewall, 0.9),
            (-half, inner, 1.0)]  # fmt: skip


def rim_rings(size: TireSize, flange_mm: float = 10.0) -> list[tuple[float, float, float]]:
    """(x, radius, v) of the 6 rings of VDrift's generated rim (MeshGen::mg_rim, a 10 mm flange), in 3 tubes:
    rings 0-1, 2-3 and 4-5."""
    inner = size.rim_radius - 0.010
    flange = size.rim_radius * 1.08
    outside = size.width * 0.75
    half_inner = (outside - flange_mm / 1000.0 * 2.0) / 2.0
    return [(outside / 2, flange, 1.0), (half_inner, inner, 0.875), (half_inner, inner, 0.875),
            (-half_inner, inner, 0.75), (-half_inner, inner, 0.875), (-outside / 2, flange, 1.0)]  # fmt: skip


def revolve(rings: list[tuple[float, float, float]], strips: list[tuple[int, int]],
            segments: int = SEGMENTS) -> Revolved:  # fmt: skip
    """Rings turned around x (`segments + 1` vertices each, the seam doubled for its UVs), a band of quads between
    each pair of rings in `strips`. The game's V (from the top) becomes Blender's (from the bottom)."""
    angles = np.arange(segments + 1) * (2 * math.pi / segments)
    profile = np.array(rings, np.float64)
    positions = np.empty((len(rings), segments + 1, 3))
    positions[:, :, 0] = profile[:, :1]
    positions[:, :, 1] = profile[:, 1:2] * np.cos(angles)
    positions[:, :, 2] = profile[:, 1:2] * np.sin(angles)
    around = segments + 1
    step = np.arange(segments)
    quads = np.concatenate([np.stack([a * around + step, b * around + step, b * around + step + 1,
                                      a * around + step + 1], axis=1) for a, b in strips])  # fmt: skip
    uvs = np.stack([np.tile(np.arange(around) / segments, len(rings)), 1.0 - np.repeat(profile[:, 2], around)], 1)
    return Revolved(positions.reshape(-1, 3), quads.astype(np.int64), uvs[quads.ravel()])


def generated_tire(size: TireSize) -> Revolved:
    rings = tire_rings(size)
    return revolve(rings, [(index, index + 1) for index in range(len(rings) - 1)])


def generated_rim(size: TireSize) -> Revolved:
    return revolve(rim_rings(size), [(0, 1), (2, 3), (4, 5)])


def generated_brake(radius: float, thickness: float = 0.025) -> Revolved:
    """VDrift's generated brake disc (MeshGen::mg_brake_rotor, 25 mm thick) at the wheel's centre, its texture
    mapped flat across the disc's faces."""
    half = thickness / 2
    shape = revolve([(-half, 0.0, 0.0), (-half, radius, 0.0), (half, radius, 0.0), (half, 0.0, 0.0)],
                    [(0, 1), (1, 2), (2, 3)])  # fmt: skip
    corners = shape.positions[shape.quads.ravel()]
    shape.corner_uvs = np.stack([0.5 + 0.5 * corners[:, 1] / radius, 0.5 - 0.5 * corners[:, 2] / radius], axis=1)
    return shape


def disk_transform(size: TireSize) -> tuple[Vector, Vector]:
    """(offset, then scale) VDrift puts a unit wheel-disk model through when it generates the rim (genrim, the
    default): moved 0.375 along -x, then scaled to the tyre's width and rim diameter."""
    diameter = size.rim_inch * INCH
    return (-0.375, 0.0, 0.0), (size.width, diameter, diameter)
