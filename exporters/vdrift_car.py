"""A VDrift car's geometry back into its `.car` file: the wheels' positions, camber, toe and tyre sizes, and the
drawn parts' position, rotation and scale, each written in place on its own line; every other byte of the file
stays. On request, the drawn parts' models too (the JOE exporter's, in each part's own space), with the `.car` in
one atomic write.

The objects are those a VDrift Car import made: a root empty (property `vdrift_car`, the file it came from) whose
children carry `vdrift_section`, the section they stand for."""

from __future__ import annotations

import math
import os

import bpy
from bpy.props import BoolProperty, StringProperty
from mathutils import Matrix, Quaternion

from ..common.operators import (
    ExportScopeMixin,
    PresetSafeExportHelper,
    Summary,
    draw_panel,
    guarded,
    in_file_browser,
    prepare_layout,
)
from ..formats import joe
from ..formats import vdrift_car as car_format
from ..formats.atomic import write_files_atomically
from ..formats.errors import FormatError
from . import joe as joe_export

CAR_PATH = "vdrift_car"  # (the import's property names; an exporter never imports an importer)
SECTION = "vdrift_section"
TIRE_SIZE = "vdrift_tire_size"
POSITION_DECIMALS = 5  # 10 micrometres: what survives Blender's single-precision locations
ANGLE_DECIMALS = 3
SCALE_DECIMALS = 4
SIZE_DECIMALS = 2  # tyre width in mm and aspect in %; the rim in inches gets one more


def car_root(obj: bpy.types.Object | None) -> bpy.types.Object | None:
    while obj is not None and obj.get(CAR_PATH) is None:
        obj = obj.parent
    return obj


def chosen_root(context: bpy.types.Context, operator: ExportScopeMixin) -> bpy.types.Object:
    """The car among the objects to export (visible, selected with Selected Only, or a Collection Exporter's):
    the active object's car, else the only one."""
    roots = {root.as_pointer(): root for root in map(car_root, operator.objects_to_export(context)) if root}
    active = car_root(context.view_layer.objects.active)
    if active is not None and active.as_pointer() in roots:
        return active
    if len(roots) == 1:
        return next(iter(roots.values()))
    if not roots:
        raise FormatError(f"no VDrift car to export ({operator.scope_hint()}): import one with File > Import > "
                          "VDrift Car")  # fmt: skip
    names = ", ".join(sorted(root.name for root in roots.values()))
    raise FormatError(f"several VDrift cars ({names}): make a part of one active, or select one (Selected Only)")


def base_document(root: bpy.types.Object, path: str) -> car_format.CarDocument:
    """The file to update: the one the car was imported from, as it is on disk now (edits made to it since are
    kept); when it is gone, the one at the output path."""
    source = str(root[CAR_PATH])
    if not os.path.isfile(source):
        if not os.path.isfile(path):
            raise FormatError(f"{source}: the car's .car file is gone; export over an existing .car file")
        source = path
    return car_format.load_car(source)


def export_car(context: bpy.types.Context, path: str, operator: EXPORT_SCENE_OT_vdrift_car) -> Summary:
    root = chosen_root(context, operator)
    document = base_document(root, path)
    summary = Summary(files=1, object_kind="changed keys", face_kind="")
    for obj in root.children_recursive:
        section = obj.get(SECTION)
        if not isinstance(section, str):
            continue
        if obj.parent is not root:
            summary.warnings.append(f"{obj.name}: not a child of {root.name!r}; its [{section}] left as it is")
        elif obj.get(TIRE_SIZE) is not None:
            summary.objects += update_wheel(document, obj, section, summary.warnings)
        else:
            summary.objects += update_part(document, obj, section)
    models = model_files(context, root, document, path, operator, summary) if operator.write_models else []
    write_files_atomically([(path, document.to_bytes()), *models])
    summary.files += len(models)
    return summary


def model_files(context: bpy.types.Context, root: bpy.types.Object, document: car_format.CarDocument, path: str,
                operator: EXPORT_SCENE_OT_vdrift_car, summary: Summary) -> list[tuple[str, bytes]]:  # fmt: skip
    """Each drawn part's model, from its mesh in its own space (the .car places it), to the path its section's
    `mesh` names beside the output; a model the car takes from carparts or trackparts is shared with other cars
    and left alone, and a model two parts name is written from the first (both usual in a car: notes)."""
    source = str(root[CAR_PATH])
    car_folder = os.path.dirname(os.path.abspath(source))
    parts = [obj for obj in root.children if obj.type == "MESH" and isinstance(obj.get(SECTION), str)
             and obj.get(TIRE_SIZE) is None]  # fmt: skip
    parts.sort(key=lambda obj: obj[SECTION] != "body")  # (the body first, as VDrift loads it)
    files: dict[str, tuple[str, bytes]] = {}  # the model's path relative to the car -> (the part, the model)
    for part in parts:
        name = document.get(part[SECTION], "mesh")
        found = car_format.find_part(source, name) if name else None
        if found is None or os.path.dirname(os.path.relpath(found, car_folder)).startswith(".."):
            summary.notes.append(f"{part.name}: its model {name!r} is not in the car's folder (shared); not written")
            continue
        relative = os.path.relpath(found, car_folder)
        if relative in files:
            summary.notes.append(f"{part.name}: {relative} is written from {files[relative][0]!r}, which names it too")
            continue
        triangles = joe_export.object_triangles(context, part, operator)
        files[relative] = (part.name, joe.write_joe(joe_export.joe_document(triangles, relative, summary.warnings)))
    out_folder = os.path.dirname(os.path.abspath(path))
    return [(os.path.join(out_folder, relative), data) for relative, (_, data) in files.items()]


def update_wheel(document: car_format.CarDocument, wheel: bpy.types.Object, section: str,
                 warnings: list[str]) -> int:  # fmt: skip
    """Position from the wheel's location; camber and toe from its rotation about Y (negated) and Z (about X it
    only spins); the tyre size from its scale: X the width, Y and Z the diameter."""
    _, camber, toe = xyz_degrees(wheel)
    changed = (car_format.update_numbers(document, section, "position", tuple(wheel.location), POSITION_DECIMALS)
               + car_format.update_numbers(document, section, "camber", (-camber,), ANGLE_DECIMALS, (0,))
               + car_format.update_numbers(document, section, "toe", (toe,), ANGLE_DECIMALS, (0,)))  # fmt: skip
    width_factor, y, z = (abs(value) for value in wheel.scale)
    if not math.isclose(y, z, rel_tol=1e-4):
        warnings.append(f"{wheel.name}: scaled unevenly in Y and Z; the tyre's diameter follows their mean")
    imported = car_format.TireSize(*(float(value) for value in wheel[TIRE_SIZE]))
    if width_factor <= 0 or y + z <= 0:
        raise FormatError(f"{wheel.name}: scaled to nothing; a tyre needs a width and a diameter")
    size = imported.scaled(width_factor, (y + z) / 2)
    where = next((at for at in (f"{section}.tire", section) if document.get(at, "size") is not None), None)
    if where is None:
        raise FormatError(f"[{section}] has no tyre size in this file; export over the car it was imported from")
    values = (round(size.width_mm, SIZE_DECIMALS), round(size.aspect, SIZE_DECIMALS),
              round(size.rim_inch, SIZE_DECIMALS + 1))
    return changed + car_format.update_numbers(document, where, "size", values, SIZE_DECIMALS + 1)


def xyz_degrees(obj: bpy.types.Object) -> tuple[float, float, float]:
    """The object's rotation as VDrift's angles: degrees about x, then y, then z, whatever its rotation mode."""
    if obj.rotation_mode == "QUATERNION":
        rotation = obj.rotation_quaternion.to_euler("XYZ")
    elif obj.rotation_mode == "AXIS_ANGLE":
        angle, *axis = obj.rotation_axis_angle
        rotation = Quaternion(axis, angle).to_euler("XYZ")
    else:
        rotation = obj.rotation_euler.to_matrix().to_euler("XYZ") if obj.rotation_mode != "XYZ" else obj.rotation_euler
    x, y, z = (math.degrees(angle) for angle in rotation)
    return (x, y, z)


def update_part(document: car_format.CarDocument, part: bpy.types.Object, section: str) -> int:
    """A drawn part's position, rotation (degrees) and scale; a key the section lacks is added only when the part
    moved from what the game assumes without it."""
    degrees = xyz_degrees(part)
    changes = (
        car_format.update_numbers(document, section, "position", tuple(part.location), POSITION_DECIMALS, (0, 0, 0)),
        car_format.update_numbers(document, section, "rotation", degrees, ANGLE_DECIMALS, (0, 0, 0)),
        car_format.update_numbers(document, section, "scale", tuple(part.scale), SCALE_DECIMALS, (1, 1, 1)),
    )
    return sum(changes)


# ------------------------------------------------------------------------------------------------- operator


class EXPORT_SCENE_OT_vdrift_car(bpy.types.Operator, PresetSafeExportHelper, ExportScopeMixin):
    """Write a VDrift car's wheel positions, camber, toe and tyre sizes and its parts' placements into its .car
    file, each value in place (comments, order and every other key stay byte for byte)"""

    bl_idname = "export_scene.vdrift_car"
    bl_label = "Export VDrift Car"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".car"
    filter_glob: StringProperty(default="*.car", options={"HIDDEN"})
    write_models: BoolProperty(
        name="Write Models", default=False,
        description="Also write each drawn part's model (body.joe, glass.joe, ...: those in the car's folder) from "
        "its mesh, beside the .car",
    )  # fmt: skip

    def export_matrix(self, obj: bpy.types.Object) -> Matrix:
        return Matrix.Identity(4)  # (a part's model is in its own space: the .car places it)

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        root = car_root(context.view_layer.objects.active)
        if root is not None and not self.filepath:  # (the file it came from: the update is in place)
            self.filepath = str(root[CAR_PATH])
            context.window_manager.fileselect_add(self)
            return {"RUNNING_MODAL"}
        result: set[str] = super().invoke(context, event)
        return result

    def execute(self, context: bpy.types.Context) -> set[str]:
        return guarded(self, lambda: export_car(context, self.filepath, self), "Exported")

    def draw(self, context: bpy.types.Context) -> None:
        prepare_layout(self.layout)
        scope = ("export_selected_objects",) if in_file_browser(context) else ()
        draw_panel(self.layout, self, "IOGF_vdrift_car_export_include", "Include",
                   (*scope, "write_models", "apply_modifiers"))  # fmt: skip


def menu_export(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    self.layout.operator(EXPORT_SCENE_OT_vdrift_car.bl_idname, text="VDrift Car (.car)")


classes = (EXPORT_SCENE_OT_vdrift_car,)
