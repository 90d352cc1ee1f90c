"""What every import and export operator shares: file lists, scope, reporting, rollback, progress, panels."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, axis_conversion, poll_file_object_drop
from mathutils import Matrix

from ..formats.errors import FormatError
from .progress import progress
from .rollback import rollback_on_error
from .selection import selecting_new_objects


@dataclass
class Summary:
    """What an import or export did, for the one-line report and for the CLI."""

    files: int = 0
    objects: int = 0
    faces: int = 0
    actions: int = 0  # actions an import made or an export wrote (an animation alone is worth saying)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the console says without a warning: nothing is amiss
    seconds: float = 0.0
    written: list[str] = field(default_factory=list)  # the files an export wrote, when it names them (for the CLI)
    face_kind: str = "polygons"  # what `faces` counts ("triangles" for the formats that store only them); "": none
    object_kind: str = "objects"  # what `objects` counts ("materials" for a .qmap.desc); "": none
    textures_found: set[str] = field(default_factory=set)  # image paths an import wired into its materials
    textures_missing: set[str] = field(default_factory=set)  # material (or model) names no image was found for
    textures_unreadable: set[str] = field(default_factory=set)  # image paths found that are not images it can read
    materials_reused: set[str] = field(default_factory=set)  # the file's materials already in Blender, kept as they are
    materials_at_start: set[int] | None = None  # (pointers of the materials there were before the import's first file)

    def line(self, verb: str) -> str:
        pairs = ((self.objects, self.object_kind), (self.faces, self.face_kind), (self.actions, "actions"))
        counts = ", ".join(counted(number, kind) for number, kind in pairs if kind and (number or kind != "actions"))
        text = f"{verb} {counted(self.files, 'files')}{': ' if counts else ''}{counts} in {self.seconds:.2f} s"
        if self.textures_found or self.textures_missing:
            text += f"; {len(self.textures_found)} texture{'s' if len(self.textures_found) != 1 else ''} found"
            if self.textures_missing:
                text += f", {len(self.textures_missing)} not found"
        if self.textures_unreadable:
            text += f"; {counted(len(self.textures_unreadable), 'images')} unreadable"
        if self.materials_reused:
            reused = len(self.materials_reused)
            text += f"; {counted(reused, 'existing materials')} used as {'it is' if reused == 1 else 'they are'}"
        if self.warnings:
            text += f" ({len(self.warnings)} warning{'s' if len(self.warnings) != 1 else ''}, see the console)"
        return text


def counted(number: int, plural: str) -> str:
    """"1 file", "2 files", "1,024 polygons": the noun is given in the plural."""
    return f"{number:,} {plural.removesuffix('s') if number == 1 else plural}"


def said_once(warnings: dict[str, list[str]], alone: dict[str, str] | None = None) -> list[str]:
    """Each warning once, with the pack members it concerns (`warnings`: text -> their names): "name: text", or
    "3 members (a, b, c): text", as a pack's members share many; `alone`: how to name a member said alone."""
    lines = []
    for text, names in warnings.items():
        if len(names) == 1:
            lines.append(f"{(alone or {}).get(names[0], names[0])}: {text}")
            continue
        listed = ", ".join(names[:_NAMES_SHOWN]) + (", ..." if len(names) > _NAMES_SHOWN else "")
        lines.append(f"{len(names)} members ({listed}): {text}")
    return lines


_NAMES_SHOWN = 5


def report_summary(operator: bpy.types.Operator, summary: Summary, verb: str) -> None:
    for warning in summary.warnings:
        print(f"{operator.bl_label}: warning: {warning}")
    for note in summary.notes:
        print(f"{operator.bl_label}: note: {note}")
    if summary.textures_missing:  # a note, not a warning: many models ship without their images
        print(f"{operator.bl_label}: note: no image found for {', '.join(sorted(summary.textures_missing))}")
    if summary.materials_reused:  # (found by name: their nodes are the user's, no image is looked for)
        print(f"{operator.bl_label}: note: materials already in the file were used as they are, without looking for "
              f"their images: {', '.join(sorted(summary.materials_reused))}")  # fmt: skip
    if summary.warnings:
        first = summary.warnings[0]
        more = f" (and {len(summary.warnings) - 1} more)" if len(summary.warnings) > 1 else ""
        operator.report({"WARNING"}, f"{first}{more}")
    operator.report({"INFO"}, summary.line(verb))


def guarded(operator: bpy.types.Operator, work: Callable[[], Summary], verb: str) -> set[str]:
    """Run an import or export; bad input and I/O errors become one ERROR report, never a traceback."""
    started = time.perf_counter()
    try:
        summary = work()
    except FormatError as error:
        operator.report({"ERROR"}, str(error))
        return {"CANCELLED"}
    except OSError as error:
        operator.report({"ERROR"}, f"{error.filename or ''}: {error.strerror or error}".lstrip(": "))
        return {"CANCELLED"}
    summary.seconds = time.perf_counter() - started
    report_summary(operator, summary, verb)
    LAST_SUMMARY[0] = summary
    return {"FINISHED"}


# The summary of the last finished import or export, for scripts (the example job, the CLI) that call operators
# through bpy.ops, which returns only {'FINISHED'}.
LAST_SUMMARY: list[Summary] = [Summary()]


def import_all(
    context: bpy.types.Context,
    paths: list[str],
    parse: Callable[[str], object],
    build: Callable[[str, object, Summary], None],
) -> Summary:
    """Parse every file before touching bpy.data, then build; a failure removes whatever was created."""
    summary = Summary(files=len(paths))
    documents = []
    with progress(context, 2 * len(paths), files=len(paths)) as tracker:
        for path in paths:
            tracker.file(path)
            documents.append((path, parse(path)))
            tracker.step()
        with rollback_on_error(), selecting_new_objects(context):
            for path, document in documents:
                with naming_the_file(path):
                    build(path, document, summary)
                tracker.step()
    return summary


@contextmanager
def naming_the_file(path: str) -> Iterator[None]:
    """An error found while building from a file (not while reading it) names the file it was found in."""
    try:
        yield
    except FormatError as error:
        raise error.with_path(path) from None


# ------------------------------------------------------------------------------------------------ mixins


class ImportFilesMixin:
    """Multi-file import from the file browser, drag and drop (a popup with the options) or scripts."""

    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE", "SKIP_PRESET"})
    files: CollectionProperty(type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE", "SKIP_PRESET"})

    def selected_paths(self) -> list[str]:
        names = [entry.name for entry in self.files if entry.name]
        if names and self.directory:
            return [os.path.join(self.directory, name) for name in names]
        return [self.filepath]

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        if self.filepath:  # a drop: confirm the options, then run
            return self.invoke_popup(context)
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}


SCALE_LIMITS = {"name": "Scale", "default": 1.0, "min": 1e-6, "max": 1e6, "soft_min": 0.001, "soft_max": 1000.0}
IMPORT_SCALE = {
    **SCALE_LIMITS,
    "description": "Multiply the file's coordinates by this; change it when the file's units are not the scene's "
    "(a model that comes in far too large or too small)",
}
AXIS_ITEMS = (  # Blender's OBJ importer and exporter name the axes so
    ("X", "X", "Positive X axis"),
    ("Y", "Y", "Positive Y axis"),
    ("Z", "Z", "Positive Z axis"),
    ("NEGATIVE_X", "-X", "Negative X axis"),
    ("NEGATIVE_Y", "-Y", "Negative Y axis"),
    ("NEGATIVE_Z", "-Z", "Negative Z axis"),
)
AXIS_DESCRIPTIONS = {
    "import": {
        "forward_axis": "The file's axis that becomes Blender's Y axis; change it when models come in facing the "
        "wrong way",
        "up_axis": "The file's axis that becomes Blender's Z (up) axis; change it when models come in lying down",
    },
    "export": {
        "forward_axis": "The file axis that Blender's Y axis is written as; change it when the game expects "
        "another forward axis",
        "up_axis": "The file axis that Blender's Z (up) axis is written as; change it when the game expects "
        "another up axis",
    },
}
LEGACY_AXES = ("X", "Y", "Z", "-X", "-Y", "-Z")  # values of the former `axis_forward` / `axis_up`
LEGACY_AXIS_OPTIONS = {"axis_forward": "forward_axis", "axis_up": "up_axis"}


def legacy_axis_value(value: str) -> str:
    """A former `axis_forward`/`axis_up` value ("-Z") as the option's value today ("NEGATIVE_Z")."""
    if value.upper() not in LEGACY_AXES:
        raise FormatError(f"axis {value!r}: one of {'|'.join(LEGACY_AXES)}")
    return "NEGATIVE_" + value[1].upper() if value.startswith("-") else value.upper()


def conversion_axis(identifier: str) -> str:
    """An option's axis ("NEGATIVE_Z") as bpy_extras' axis_conversion names it ("-Z")."""
    return "-" + identifier[-1] if identifier.startswith("NEGATIVE_") else identifier


def _keep_axes_apart(changed: str, other: str) -> Callable[[Any, Any], None]:
    """When Forward and Up are set to one axis, the other turns to the next axis, as Blender's OBJ options do."""

    def update(self: Any, _context: Any) -> None:
        if getattr(self, changed)[-1] == getattr(self, other)[-1]:
            value = getattr(self, other)
            setattr(self, other, value[:-1] + "XYZ"[("XYZ".index(value[-1]) + 1) % 3])

    return update


def axis_options(direction: str, forward_axis: str = "Y", up_axis: str = "Z") -> Callable[[type], type]:
    """Forward Axis and Up Axis options named and valued as Blender's OBJ options (`forward_axis`, `up_axis`:
    X ... NEGATIVE_Z), and their former names (`axis_forward`, `axis_up`: X ... -Z), hidden, which scripts and
    saved presets still set; `direction` is "import" or "export"."""

    def decorate(cls: type) -> type:
        if "__annotations__" not in cls.__dict__:
            cls.__annotations__ = {}
        descriptions = AXIS_DESCRIPTIONS[direction]
        cls.__annotations__["forward_axis"] = EnumProperty(
            name="Forward Axis", items=AXIS_ITEMS, default=forward_axis, description=descriptions["forward_axis"],
            update=_keep_axes_apart("forward_axis", "up_axis"),
        )  # fmt: skip
        cls.__annotations__["up_axis"] = EnumProperty(
            name="Up Axis", items=AXIS_ITEMS, default=up_axis, description=descriptions["up_axis"],
            update=_keep_axes_apart("up_axis", "forward_axis"),
        )  # fmt: skip
        for legacy in LEGACY_AXIS_OPTIONS:
            cls.__annotations__[legacy] = StringProperty(options={"HIDDEN", "SKIP_SAVE", "SKIP_PRESET"})
        return cls

    return decorate


def axes_matrix(operator: Any, direction: str) -> Matrix:
    """The axis conversion an import (file to Blender) or export (Blender to file) applies; a former
    `axis_forward`/`axis_up` a script or preset set wins over the option it became."""
    forward, up = (
        conversion_axis(legacy_axis_value(getattr(operator, legacy)) if getattr(operator, legacy)
                        else getattr(operator, option))
        for legacy, option in LEGACY_AXIS_OPTIONS.items()
    )  # fmt: skip
    if forward[-1] == up[-1]:
        raise FormatError(f"Forward Axis {forward} and Up Axis {up} are one axis: choose two different ones")
    return _conversion(forward, up, direction).copy()


@functools.cache
def _conversion(forward: str, up: str, direction: str) -> Matrix:
    """(kept: an export asks once per object, and bpy_extras works it out in Python each time)"""
    if direction == "import":
        return axis_conversion(from_forward=forward, from_up=up).to_4x4()
    return axis_conversion(to_forward=forward, to_up=up).to_4x4()


SELECTED_ONLY = {
    "name": "Selected Only",
    "default": False,
    "description": "Export only the selected objects; off: every object visible in the viewport, as Blender's own "
    "exporters do (a Collection Exporter exports its collection)",
}
LEGACY_SCOPES = ("SELECTED", "VISIBLE", "SCENE")  # the former `export_scope`, still read from scripts and presets


APPLY_MODIFIERS = {
    "name": "Apply Modifiers",
    "default": True,
    "description": "Export the meshes as their modifiers shape them, as the viewport shows them; off: the meshes "
    "without modifiers",
}


class ObjectScopeMixin:
    """Which objects to export; `collection` is filled in by Collection Exporters."""

    collection: StringProperty(name="Collection", options={"HIDDEN"})
    export_selected_objects: BoolProperty(**SELECTED_ONLY)
    # The option's former name and values (SELECTED, VISIBLE, SCENE), which scripts and saved presets still set:
    # SELECTED is Selected Only, the others the visible objects.
    export_scope: StringProperty(options={"HIDDEN", "SKIP_SAVE", "SKIP_PRESET"})
    apply_modifiers: BoolProperty(**APPLY_MODIFIERS)

    def selected_only(self) -> bool:
        return bool(self.export_selected_objects) or self.export_scope.upper() == "SELECTED"

    def scope_hint(self) -> str:
        """Where the objects came from, for a "nothing to export" message."""
        if self.collection:
            return f"collection {self.collection!r} holds none"
        return "none is selected (Selected Only)" if self.selected_only() else "none is visible"

    def objects_to_export(self, context: bpy.types.Context) -> list[bpy.types.Object]:
        if self.collection:
            collection = bpy.data.collections.get(self.collection)
            if collection is None:
                raise FormatError(f"collection {self.collection!r} does not exist")
            if not collection.all_objects:
                raise FormatError(f"nothing to export: collection {self.collection!r} holds no objects")
            return list(collection.all_objects)
        scene_objects = list(context.scene.objects)
        if self.selected_only():
            return [obj for obj in scene_objects if obj.select_get()]
        return [obj for obj in scene_objects if obj.visible_get()]


class PresetSafeExportHelper(ExportHelper):
    """Blender's ExportHelper, but a preset leaves the file path out (as Blender's own OBJ exporter does): loading
    one must not replace the file name being typed with the path it was saved with."""

    filepath: StringProperty(
        name="File Path", description="Filepath used for exporting the file", maxlen=1024, subtype="FILE_PATH",
        options={"SKIP_PRESET"},
    )  # fmt: skip


class ExportScopeMixin(ObjectScopeMixin):
    """Object scope plus the usual transform options (world matrix, scale, axes)."""

    apply_transform: BoolProperty(
        name="Apply Object Transform", default=True, description="Write world-space positions and normals"
    )
    global_scale: FloatProperty(
        **SCALE_LIMITS, description="Multiply the written coordinates by this; change it when the game uses "
        "other units than Blender's (metres by default)",
    )  # fmt: skip

    def export_matrix(self, obj: bpy.types.Object) -> Matrix:
        return self.export_matrices()(obj)

    def export_matrices(self) -> Callable[[bpy.types.Object], Matrix]:
        """export_matrix with the options read once, for an export of many objects (reading them costs more than
        the product)."""
        scaled_axes = Matrix.Scale(self.global_scale, 4) @ axes_matrix(self, "export")
        if self.apply_transform:
            return lambda obj: scaled_axes @ obj.matrix_world
        return lambda obj: scaled_axes @ Matrix.Identity(4)


def import_matrix(operator: bpy.types.Operator) -> Matrix:
    axes = axes_matrix(operator, "import")
    return Matrix.Scale(operator.global_scale, 4) @ axes


def has_faces(name: str, face_count: int, warnings: list[str]) -> bool:
    """The one rule of every exporter for an object without faces: a warning, and the object is left out
    (`refuse_if_nothing_left` then refuses an export that kept nothing)."""
    if face_count:
        return True
    warnings.append(f"{name}: no faces; left out")
    return False


def refuse_if_nothing_left(kept: int, chosen: int) -> None:
    if not kept:
        raise FormatError(
            f"nothing to export: none of the {chosen} mesh object{'s' if chosen != 1 else ''} has faces "
            "(add faces, or choose other objects)"
        )


def geometry_objects(objects: Iterable[bpy.types.Object]) -> list[bpy.types.Object]:
    """Objects that can become triangles: meshes, and curves, surfaces, text and metaballs through to_mesh."""
    return [obj for obj in objects if obj.type in {"MESH", "CURVE", "SURFACE", "FONT", "META"}]


def file_handler(
    idname: str, label: str, import_operator: str, export_operator: str, extensions: str, drops: bool = True
) -> type[bpy.types.FileHandler]:
    """Drag and drop of `extensions` (";"-separated) into the 3D viewport or the outliner; the export operator
    also makes the format available as a Collection Exporter. Without `drops`, only the latter (another handler
    takes the drops: Blender hands each handler its own extensions, so one drop of two kinds would be split)."""

    def poll_drop(cls: type, context: bpy.types.Context) -> bool:
        return drops and bool(poll_file_object_drop(context))

    namespace = {
        "bl_idname": idname, "bl_label": label, "bl_import_operator": import_operator,
        "bl_export_operator": export_operator, "bl_file_extensions": extensions, "poll_drop": classmethod(poll_drop),
    }  # fmt: skip
    return type(idname, (bpy.types.FileHandler,), namespace)


# ------------------------------------------------------------------------------------------------ drawing


def in_file_browser(context: bpy.types.Context) -> bool:
    space = getattr(context, "space_data", None)
    return getattr(space, "type", None) == "FILE_BROWSER"


def draw_panel(
    layout: bpy.types.UILayout, operator: object, idname: str, title: str, names: Iterable[str], closed: bool = False
) -> None:
    """One collapsible section of operator options."""
    header, body = layout.panel(idname, default_closed=closed)
    header.label(text=title)
    if body:
        for name in names:
            body.prop(operator, name)


def prepare_layout(layout: bpy.types.UILayout) -> None:
    layout.use_property_split = True
    layout.use_property_decorate = False
