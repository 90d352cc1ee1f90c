"""IQM extensions: the linked list of named sections after the standard ones, and FTE's three (FTE_MESH,
FTE_EVENT, FTE_SKINS) decoded and encoded as FTE's engine reads them and FTE's iqmtool writes them.

Layouts (little-endian; FTE's `engine/common/com_mesh.c`, IQM_FindExtension and Mod_ParseIQMMeshModel, and
`iqm/iqm.cpp`, writeiqm, of fte-team/fteqw):

* extension header (16 bytes): name (text offset), num_data (bytes), ofs_data, ofs_extensions (the next header;
  0 after the last). The engine walks `num_extensions` headers from the file header's `ofs_extensions`, stops at one
  outside the file, whose name lies past the text or whose data ends past the file, and finds a name
  case-insensitively (the first of that name).
* FTE_MESH: one 28-byte record per mesh (contents, surfaceflags, body, geomset, geomid: uint32; mindist, maxdist:
  float); ignored unless its size is exactly 28 x num_meshes.
* FTE_EVENT: 16-byte records (anim, uint32; timestamp, float seconds; evcode, uint32; evdata_str, text offset);
  ignored unless its size is a multiple of 16.
* FTE_SKINS: numskinframes, nummeshskins (uint32), numskins[num_meshes] (uint32), skinframes[numskinframes]
  (material_idx, shadertext_idx: text offsets; 0 = no shader text), meshskins[nummeshskins] (firstframe,
  countframes: uint32; interval: float seconds), the skins of mesh 0 first; ignored unless its size is exactly
  8 + 4 x num_meshes + 8 x numskinframes + 12 x nummeshskins.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import FileBuffer, FormatError, Warnings
from ..iqe.document import FteMeshFields, IqeSkin, IqeSkinFrame

EXTENSION_DTYPE = np.dtype([("name", "<u4"), ("num_data", "<u4"), ("ofs_data", "<u4"), ("ofs_extensions", "<u4")])
FTE_MESH_DTYPE = np.dtype([("contents", "<u4"), ("surfaceflags", "<u4"), ("body", "<u4"), ("geomset", "<u4"),
                           ("geomid", "<u4"), ("mindist", "<f4"), ("maxdist", "<f4")])  # fmt: skip
FTE_EVENT_DTYPE = np.dtype([("anim", "<u4"), ("timestamp", "<f4"), ("evcode", "<u4"), ("evdata_str", "<u4")])
SKINFRAME_DTYPE = np.dtype([("material_idx", "<u4"), ("shadertext_idx", "<u4")])
MESHSKIN_DTYPE = np.dtype([("firstframe", "<u4"), ("countframes", "<u4"), ("interval", "<f4")])
FTE_MESH, FTE_EVENT, FTE_SKINS = "FTE_MESH", "FTE_EVENT", "FTE_SKINS"
_KNOWN = (FTE_MESH, FTE_EVENT, FTE_SKINS)

_HEADER_SIZE = 16 + 27 * 4  # the IQM header's (layout.HEADER.size)
FTE_DEFAULT_RATE = 10.0  # FTE plays an animation whose framerate is 0 (or less) at this rate
# Where the Blender layers keep these values: custom properties named after iqmtool's commands and FTE's fields.
FTE_INTEGER_FIELDS = ("contents", "surfaceflags", "body", "geomset", "geomid")  # uint32, kept as Blender's int32
FTE_FLOAT_FIELDS = ("mindist", "maxdist")  # iqmtool's `lodrange MIN MAX`
PROPERTY_PREFIX = "fte_"  # + a field's name, on a mesh object
SKINS_PROPERTY = "fte_skins"  # on a mesh object: [{"interval": s, "frames": [{"material", "shader"}]}]
EVENTS_PROPERTY = "fte_events"  # on an action: [{"frame", "time", "code", "data"}], the file's events exactly
NameLookup = Callable[[int, str, int], str]  # (text offset, what, byte offset of the field) -> the string


@dataclass
class FteEvent:
    """An FTE_EVENT record with its string resolved: `anim` indexes the model's animations."""

    anim: int
    time: float
    code: int
    data: str


@dataclass
class IqmExtensions:
    """What a file's extensions hold: FTE's decoded, the others only named."""

    names: list[str] = field(default_factory=list)  # every extension of the file, in list order
    fte_meshes: list[FteMeshFields] | None = None  # one per mesh
    fte_events: list[FteEvent] = field(default_factory=list)
    fte_skins: list[list[IqeSkin]] | None = None  # per mesh, its skins


@dataclass
class _Found:
    name: str
    offset: int  # of its data
    size: int


def decode_extensions(
    data: FileBuffer, count: int, first: int, names: NameLookup, mesh_count: int, anim_count: int,
    warnings: Warnings,
) -> IqmExtensions:  # fmt: skip
    """The extensions of a file whose header gives `count` of them from byte `first`. A broken list stops where
    FTE's engine stops reading it, said in a warning; a malformed FTE section is left out as FTE leaves it out (one
    naming a string outside the text section too, where FTE would read "<BADSTRING>"): never a FormatError, the
    model is whole without them."""
    result = IqmExtensions()
    found: list[_Found] = []
    offset, seen = first, set()
    for index in range(count):
        if offset in seen or offset < _HEADER_SIZE or offset + EXTENSION_DTYPE.itemsize > len(data):
            warnings.add(f"IQM extension {index} of {count} at byte {offset} lies outside the file or repeats one: "
                         "it and the ones after it ignored")  # fmt: skip
            break
        seen.add(offset)
        record = np.frombuffer(data, EXTENSION_DTYPE, 1, offset)[0]
        data_offset, size = int(record["ofs_data"]), int(record["num_data"])
        if data_offset + size > len(data):
            warnings.add(f"IQM extension {index} (header at byte {offset}): its {size} bytes at byte {data_offset} "
                         "end past the end of the file; it and the ones after it ignored")  # fmt: skip
            break
        try:
            name = names(int(record["name"]), f"extension {index} name", offset)
        except FormatError as error:
            warnings.add(f"IQM extension {index}: {error.message}; it and the ones after it ignored")
            break
        found.append(_Found(name, data_offset, size))
        offset = int(record["ofs_extensions"])
    result.names = [extension.name for extension in found]
    by_name: dict[str, _Found] = {}
    for extension in found:
        by_name.setdefault(extension.name.upper(), extension)  # (the engine finds the first of a name)
    meshes, events, skins = by_name.get(FTE_MESH), by_name.get(FTE_EVENT), by_name.get(FTE_SKINS)
    if meshes is not None:
        result.fte_meshes = _fte_meshes(data, meshes, mesh_count, warnings)
    try:  # (a string outside the text section leaves the section out: the model is still the model)
        if events is not None:
            result.fte_events = _fte_events(data, events, names, anim_count, warnings)
    except FormatError as error:
        warnings.add(f"FTE_EVENT ignored: {error.message}")
    try:
        if skins is not None:
            result.fte_skins = _fte_skins(data, skins, names, mesh_count, warnings)
    except FormatError as error:
        warnings.add(f"FTE_SKINS ignored: {error.message}")
    others = [name for name in result.names if name.upper() not in _KNOWN]
    if others:
        warnings.add(f"{len(others)} IQM extensions ignored: {', '.join(dict.fromkeys(others))}")
    return result


def _fte_meshes(data: FileBuffer, found: _Found, mesh_count: int, warnings: Warnings) -> list[FteMeshFields] | None:
    if found.size != mesh_count * FTE_MESH_DTYPE.itemsize or not found.size:
        warnings.add(f"FTE_MESH ignored: {found.size} bytes for {mesh_count} meshes (FTE reads it only when it holds "
                     f"{FTE_MESH_DTYPE.itemsize} per mesh)")  # fmt: skip
        return None
    records = np.frombuffer(data, FTE_MESH_DTYPE, mesh_count, found.offset)
    return [FteMeshFields(int(r["contents"]), int(r["surfaceflags"]), int(r["body"]), int(r["geomset"]),
                          int(r["geomid"]), float(r["mindist"]), float(r["maxdist"])) for r in records]  # fmt: skip


def _fte_events(
    data: FileBuffer, found: _Found, names: NameLookup, anim_count: int, warnings: Warnings
) -> list[FteEvent]:
    if found.size % FTE_EVENT_DTYPE.itemsize:
        warnings.add(f"FTE_EVENT ignored: {found.size} bytes is not a whole number of {FTE_EVENT_DTYPE.itemsize}-byte "
                     "events")  # fmt: skip
        return []
    records = np.frombuffer(data, FTE_EVENT_DTYPE, found.size // FTE_EVENT_DTYPE.itemsize, found.offset)
    events, outside, timeless = [], 0, 0
    for index, record in enumerate(records):
        if int(record["anim"]) >= anim_count:
            outside += 1
            continue
        if not np.isfinite(record["timestamp"]):
            timeless += 1
            continue
        where = found.offset + index * FTE_EVENT_DTYPE.itemsize
        text = names(int(record["evdata_str"]), f"FTE_EVENT {index} data", where + 12)
        events.append(FteEvent(int(record["anim"]), float(record["timestamp"]), int(record["evcode"]), text))
    if outside:
        warnings.add(f"{outside} FTE_EVENT events of animations the file does not have ignored")
    if timeless:
        warnings.add(f"{timeless} FTE_EVENT events at a time that is not a number ignored")
    return events


def _fte_skins(
    data: FileBuffer, found: _Found, names: NameLookup, mesh_count: int, warnings: Warnings
) -> list[list[IqeSkin]] | None:
    header_size = 4 * (2 + mesh_count)
    if found.size < header_size:
        warnings.add(f"FTE_SKINS ignored: {found.size} bytes, too short for its counts of {mesh_count} meshes")
        return None
    counts = np.frombuffer(data, "<u4", 2 + mesh_count, found.offset).astype(np.int64)
    frame_count, skin_count, per_mesh = int(counts[0]), int(counts[1]), counts[2:]
    frames_at = found.offset + header_size
    skins_at = frames_at + frame_count * SKINFRAME_DTYPE.itemsize
    if found.size != header_size + frame_count * SKINFRAME_DTYPE.itemsize + skin_count * MESHSKIN_DTYPE.itemsize:
        warnings.add(f"FTE_SKINS ignored: {found.size} bytes do not hold its {frame_count} skin frames and "
                     f"{skin_count} skins exactly")  # fmt: skip
        return None
    if int(per_mesh.sum()) > skin_count:
        warnings.add(f"FTE_SKINS ignored: its meshes have {int(per_mesh.sum())} skins, more than its {skin_count}")
        return None
    frames = np.frombuffer(data, SKINFRAME_DTYPE, frame_count, frames_at)
    records = np.frombuffer(data, MESHSKIN_DTYPE, skin_count, skins_at)
    if skin_count and int((records["firstframe"].astype(np.int64) + records["countframes"]).max()) > frame_count:
        warnings.add(f"FTE_SKINS ignored: a skin uses frames beyond its {frame_count}")
        return None

    def frame(index: int) -> IqeSkinFrame:
        where = frames_at + index * SKINFRAME_DTYPE.itemsize
        material = names(int(frames[index]["material_idx"]), f"FTE_SKINS frame {index} material", where)
        shader_offset = int(frames[index]["shadertext_idx"])
        shader = names(shader_offset, f"FTE_SKINS frame {index} shader", where + 4) if shader_offset else ""
        return IqeSkinFrame(material, shader)

    result: list[list[IqeSkin]] = []
    next_skin = 0
    for count in per_mesh.tolist():
        skins = []
        for record in records[next_skin : next_skin + count]:
            first = int(record["firstframe"])
            skins.append(IqeSkin([frame(i) for i in range(first, first + int(record["countframes"]))],
                                 float(record["interval"])))  # fmt: skip
        result.append(skins)
        next_skin += count
    return result


def event_frame(time: float, framerate: float) -> float:
    """The frame (from 0) at which FTE plays an event `time` seconds into an animation of `framerate`."""
    return time * (framerate if framerate > 0.0 else FTE_DEFAULT_RATE)


def event_time(frame: float, framerate: float) -> float:
    return frame / (framerate if framerate > 0.0 else FTE_DEFAULT_RATE)


def as_int32(value: int) -> int:
    """A uint32 as the int32 of the same bits (Blender's integer properties are 32-bit signed)."""
    return value - (1 << 32) if value >= 1 << 31 else value


def as_uint32(value: int) -> int:
    return value & 0xFFFFFFFF


# ---------------------------------------------------------------------------------------------- writing


def encode_extensions(
    extensions: IqmExtensions, mesh_count: int, text: Callable[[str], int]
) -> list[tuple[int, bytes]]:
    """(name offset, data) of each FTE section `extensions` holds, in iqmtool's order; `text` gives a string's
    offset in the text section."""
    pieces: list[tuple[int, bytes]] = []
    if extensions.fte_meshes is not None:
        if len(extensions.fte_meshes) != mesh_count:
            raise FormatError(f"FTE_MESH has {len(extensions.fte_meshes)} records for {mesh_count} meshes")
        records = np.array([(m.contents, m.surfaceflags, m.body, m.geomset, m.geomid, m.mindist, m.maxdist)
                            for m in extensions.fte_meshes], FTE_MESH_DTYPE)  # fmt: skip
        pieces.append((text(FTE_MESH), records.tobytes()))
    if extensions.fte_events:
        name = text(FTE_EVENT)
        events = np.array([(e.anim, e.time, e.code, text(e.data)) for e in extensions.fte_events], FTE_EVENT_DTYPE)
        pieces.append((name, events.tobytes()))
    if extensions.fte_skins is not None and any(extensions.fte_skins):
        pieces.append(_encode_skins(extensions.fte_skins, mesh_count, text))
    return pieces


def _encode_skins(skins: list[list[IqeSkin]], mesh_count: int, text: Callable[[str], int]) -> tuple[int, bytes]:
    if len(skins) != mesh_count:
        raise FormatError(f"FTE_SKINS has skins of {len(skins)} meshes for {mesh_count} meshes")
    name = text(FTE_SKINS)
    frames: list[tuple[int, int]] = []
    records: list[tuple[int, int, float]] = []
    for mesh_skins in skins:
        for skin in mesh_skins:
            records.append((len(frames), len(skin.frames), skin.interval))
            frames += [(text(f.material), text(f.shader) if f.shader else 0) for f in skin.frames]
    counts = np.array([len(frames), len(records), *(len(mesh_skins) for mesh_skins in skins)], "<u4")
    body = counts.tobytes() + np.array(frames, SKINFRAME_DTYPE).tobytes() + np.array(records, MESHSKIN_DTYPE).tobytes()
    return name, body


def extension_headers(pieces: list[tuple[int, bytes]], at: int) -> bytes:
    """The headers of `pieces` laid out at byte `at`, each piece's data following the headers in turn (every
    piece's size is a multiple of 4, so each stays 4-byte aligned as FTE's iqmtool aligns them)."""
    headers = np.zeros(len(pieces), EXTENSION_DTYPE)
    data_at = at + len(pieces) * EXTENSION_DTYPE.itemsize
    for index, (name, data) in enumerate(pieces):
        following = at + (index + 1) * EXTENSION_DTYPE.itemsize if index + 1 < len(pieces) else 0
        headers[index] = (name, len(data), data_at, following)
        data_at += len(data)
    return headers.tobytes()
