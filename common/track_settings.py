"""A VDrift track object's settings (its entry of the track's `list.txt` or `objects.txt`) as custom properties
of its Blender object, shared by the JOE/JPK importer and exporter.

Each setting is a custom property `vdrift_<field>` (Object Properties > Custom Properties: check boxes, numbers
with their ranges and the game's meaning as tooltip). What the list file needs to be written back as read is kept
in hidden properties (`_vdrift_track...`: a leading underscore hides a custom property in Blender's panel): for
list.txt the entry's own text, the text before the first and after the last entry, and the values per entry; for
objects.txt the name of the Text datablock holding the file (one per import) and of the object's section.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeAlias

import bpy

from ..formats import vdrift_track as vt
from ..formats.errors import FormatError

PREFIX = "vdrift_"
KIND = "_vdrift_track"  # "list.txt" or "objects.txt"
ENTRY = "_vdrift_track_entry"  # list.txt: the entry's text as read
INDEX = "_vdrift_track_index"  # list.txt: the entry's number when read (its `#entry N` comment is renumbered)
COUNT = "_vdrift_track_count"  # list.txt: values per entry
HEAD = "_vdrift_track_head"  # list.txt: the text before the first entry
TAIL = "_vdrift_track_tail"  # list.txt: the text after the last entry
UNLISTED = "_vdrift_track_unlisted"  # list.txt: the member had no entry, and gets none when written back
TEXT = "_vdrift_track_text"  # objects.txt: the Text datablock holding the file
SECTION = "_vdrift_track_object"  # objects.txt: NAME of the object's [object.NAME]

_RANGES: dict[str, tuple[int, int]] = {"transparent_blend": (0, 2), "clamptexture": (0, 3), "clampuv": (0, 3)}


@functools.cache
def fields(kind: str) -> tuple[vt.TrackField, ...]:
    """The settings of a list kind, but the model (the object's pack member names it)."""
    return tuple(spec for spec in (vt.LIST_FIELDS if kind == vt.LIST_FILE else vt.OBJECT_FIELDS)
                 if spec.name != "model")  # fmt: skip


@functools.cache
def _keys(kind: str) -> tuple[tuple[str, str], ...]:
    """(setting, its property's name) of each setting of a list kind."""
    return tuple((spec.name, PREFIX + spec.name) for spec in fields(kind))


def set_settings(obj: bpy.types.Object, kind: str, settings: dict[str, vt.Value]) -> None:
    for spec in fields(kind):
        if spec.name not in settings:
            continue
        key = PREFIX + spec.name
        obj[key] = settings[spec.name]
        low, high = _RANGES.get(spec.name, (0, 2**31 - 1) if spec.kind is int else (None, None))
        ui = obj.id_properties_ui(key)
        if spec.kind is bool or spec.kind is str or low is None:
            ui.update(description=spec.description)
        else:
            ui.update(description=spec.description, min=low, max=high, soft_min=low, soft_max=high)


Properties: TypeAlias = bpy.types.Object | Mapping[str, Any]  # an object, or its custom properties read at once


def properties_of(obj: bpy.types.Object) -> dict[str, Any]:
    """The object's custom properties in one call (each `obj.get` is a call of its own: a track's 2,000 objects ask
    two dozen each)."""
    return dict(obj.items())


def settings_of(obj: Properties, kind: str) -> dict[str, vt.Value]:
    """The object's settings of `kind` (a property the user deleted is left out: written as it was read)."""
    return {name: value for name, key in _keys(kind) if isinstance(value := obj.get(key), _PLAIN)}


_PLAIN = (bool, int, float, str)  # (a tuple: isinstance of a union is slower, and asked 30,000 times a list)


def kind_of(obj: Properties) -> str | None:
    kind = obj.get(KIND)
    return kind if kind in (vt.LIST_FILE, vt.OBJECTS_FILE) else None


def apply_list(models: list[tuple[bpy.types.Object, int | None]], document: vt.ListDocument) -> None:
    """Give each object its entry of the list: (object, entry index; None: the list has none for it)."""
    with _settings_writer() as write:
        for obj, index in models:
            fixed: dict[str, vt.Value] = {KIND: vt.LIST_FILE, COUNT: document.count, HEAD: document.head,
                                          TAIL: document.tail}  # fmt: skip
            if index is None:
                write(obj, vt.LIST_FILE, {**fixed, UNLISTED: True}, {})
                continue
            entry = document.entries[index]
            write(obj, vt.LIST_FILE, {**fixed, ENTRY: entry.text, INDEX: index}, vt.entry_settings(entry))


def apply_objects(models: list[tuple[bpy.types.Object, vt.TrackBody | None]], text: bpy.types.Text,
                  document: vt.ObjectsDocument) -> None:  # fmt: skip
    """Give each object the settings of its body of the file held in `text`: (object, body; None: no object of the
    file has it)."""
    defaults = {spec.name: spec.default for spec in vt.OBJECT_FIELDS if spec.name != "mass"}  # (mass: only if given)
    with _settings_writer() as write:
        for obj, body in models:
            fixed: dict[str, vt.Value] = {KIND: vt.OBJECTS_FILE, TEXT: text.name}
            if body is None:
                write(obj, vt.OBJECTS_FILE, {**fixed, UNLISTED: True}, {})
                continue
            write(obj, vt.OBJECTS_FILE, {**fixed, SECTION: body.name}, {**defaults, **body.settings(document.lines)})


SettingsWrite = Callable[[bpy.types.Object, str, dict[str, vt.Value], dict[str, vt.Value]], None]


@contextmanager
def _settings_writer() -> Iterator[SettingsWrite]:
    """write(obj, kind, fixed, settings): the hidden properties `fixed`, then the settings of `kind`, as custom
    properties of `obj`, in that order (as set_settings gives them). Two calls an object instead of a few dozen: the
    first object of each set of properties (names and types) gives them, with their descriptions and ranges, to a
    scratch object, which the further ones copy before their own values replace its (a value of the same type keeps
    the description and range). A track has thousands of objects."""
    templates: dict[tuple[tuple[str, ...], tuple[type, ...]], bpy.types.Object] = {}

    def write(obj: bpy.types.Object, kind: str, fixed: dict[str, vt.Value], settings: dict[str, vt.Value]) -> None:
        properties = obj.id_properties_ensure()
        if not settings:  # (nothing with a description to copy)
            properties.update(fixed)
            return
        values = fixed.copy()
        for name, key in _keys(kind):
            if name in settings:
                values[key] = settings[name]
        shape = (tuple(values), tuple(map(type, values.values())))
        template = templates.get(shape)
        if template is None:
            template = templates[shape] = bpy.data.objects.new("iogf track settings", None)
            template.id_properties_ensure().update(fixed)
            set_settings(template, kind, settings)
        properties.update(template.id_properties_ensure())
        properties.update(values)

    try:
        yield write
    finally:
        for template in templates.values():  # (linked nowhere, used by nothing: no pass over every block's users)
            bpy.data.objects.remove(template, do_unlink=False, do_id_user=False)


# ------------------------------------------------------------------------------------------------ export


def list_file(models: list[tuple[str, bpy.types.Object]], warnings: list[str]) -> tuple[str, str] | None:
    """(file name, text) of the object list for a pack's members (member name, object) in pack order, from the
    objects' settings, in the kind the first object carrying settings was read from; None when none carries any."""
    carrier = next((obj for _, obj in models if kind_of(obj) is not None), None)
    if carrier is None:
        return None
    if kind_of(carrier) == vt.LIST_FILE:
        text = _list_text(models, carrier, warnings)
        return (vt.LIST_FILE, text) if text is not None else None
    return vt.OBJECTS_FILE, _objects_text(models, carrier, warnings)


def _list_text(
    models: list[tuple[str, bpy.types.Object]], carrier: bpy.types.Object, warnings: list[str]
) -> str | None:
    """The list.txt of the members; None when none of them gets an entry (a list of nothing is not written)."""
    head, tail, count = str(carrier.get(HEAD, "")), str(carrier.get(TAIL, "")), int(carrier.get(COUNT, vt.LIST_VALUES))
    newline = "\r\n" if "\r\n" in head + str(carrier.get(ENTRY, "")) else "\n"
    texts: list[str] = []
    fresh: list[str] = []
    entered: set[str] = set()  # objects whose kept entry is written (the further parts of a split model get new ones)
    for member, obj in models:
        properties = properties_of(obj)
        listed = kind_of(properties) == vt.LIST_FILE
        settings = settings_of(properties, vt.LIST_FILE) if listed else {}
        if listed and properties.get(UNLISTED) and properties.get(ENTRY) is None and not settings:
            continue  # (the list had no entry for it: none is added, unless the user gave it settings)
        settings["model"] = member
        kept = _kept_text(properties, count) if listed and obj.name not in entered else None
        unchanged = None
        if kept is not None:  # (most entries of a track: written as they were read, when nothing says otherwise)
            unchanged = vt.unchanged_entry(kept, count, settings, len(texts), _kept_number(properties))
        if unchanged is not None:
            entered.add(obj.name)
            texts.append(unchanged)
            continue
        entry = _parsed_entry(kept, count) if kept is not None else None
        if entry is None:
            settings.setdefault("texture", image_name(obj, member))
            if not listed:
                fresh.append(obj.name)
        entered.add(obj.name)
        number = _kept_number(properties) if entry is not None else None
        try:
            texts.append(vt.updated_entry(entry, count, settings, len(texts), newline, number))
        except FormatError as error:  # (a setting the list cannot hold: said of its object)
            raise FormatError(f"object {obj.name!r}: {error}") from None
    if not texts:
        return None
    _say_fresh(fresh, vt.LIST_FILE, warnings)
    return vt.write_list(head, texts, tail)


def _kept_text(obj: Properties, count: int) -> str | None:
    """The object's entry text as read, when it is an entry of `count` values (None: none kept, or another list's)."""
    text = obj.get(ENTRY)
    return text if isinstance(text, str) and obj.get(COUNT) == count else None


def _kept_number(obj: Properties) -> int | None:
    old = obj.get(INDEX)
    return old if isinstance(old, int) else None


def _parsed_entry(text: str, count: int) -> vt.ListEntry | None:
    try:
        return vt.parse_entry(text, count)
    except FormatError:
        return None


def _objects_text(models: list[tuple[str, bpy.types.Object]], carrier: bpy.types.Object,
                  warnings: list[str]) -> str:  # fmt: skip
    block = bpy.data.texts.get(str(carrier.get(TEXT, "")))
    if block is None:
        warnings.append(f"objects.txt: the Text {carrier.get(TEXT)!r} that held the track's file is gone; "
                        "objects.txt is written anew from the objects' settings")  # fmt: skip
    document = vt.read_objects(block.as_string() if block is not None else "")
    names = {body.name for body in document.bodies}
    changes: dict[str, dict[str, vt.Value]] = {}
    added: list[tuple[str, dict[str, vt.Value]]] = []
    fresh: list[str] = []
    for member, obj in models:
        settings = settings_of(obj, vt.OBJECTS_FILE) if kind_of(obj) == vt.OBJECTS_FILE else {}
        if kind_of(obj) == vt.OBJECTS_FILE and obj.get(UNLISTED) and obj.get(SECTION) is None and not settings:
            continue
        section = obj.get(SECTION)
        ours = kind_of(obj) == vt.OBJECTS_FILE and block is not None and obj.get(TEXT) == block.name
        settings["model"] = member
        if ours and isinstance(section, str) and section in names and section not in changes:
            changes[section] = settings
            continue
        settings.setdefault("texture", image_name(obj, member))
        if kind_of(obj) is None:
            fresh.append(obj.name)
        name = _unused(member.removesuffix(".joe").replace(".", "_"), names)
        names.add(name)
        added.append((name, settings))
    _say_fresh(fresh, vt.OBJECTS_FILE, warnings)
    return vt.updated_objects(document, changes, added)


def _unused(name: str, taken: set[str]) -> str:
    number, candidate = 1, name
    while candidate in taken:
        number += 1
        candidate = f"{name}_{number}"
    return candidate


def _say_fresh(names: list[str], kind: str, warnings: list[str]) -> None:
    if names:
        more = f" and {len(names) - 1} more" if len(names) > 1 else ""
        warnings.append(f"{kind}: {names[0]!r}{more} had no track settings: written with default ones (mipmapped, "
                        "collidable; texture: the material's image, else the member's name with .png)")  # fmt: skip


def image_name(obj: bpy.types.Object, member: str) -> str:
    """The file name of the first image of the object's materials, else the member's name with `.png`."""
    for slot in obj.material_slots:
        tree = slot.material.node_tree if slot.material is not None else None
        for node in tree.nodes if tree is not None else ():
            image = getattr(node, "image", None)
            if node.type == "TEX_IMAGE" and image is not None:
                name = os.path.basename(bpy.path.abspath(image.filepath)) or image.name
                if name and " " not in name:
                    return name
    return os.path.splitext(member)[0] + ".png"
