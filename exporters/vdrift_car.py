"""A VDrift car's geometry back into its `.car` file: the wheels' positions and tyre sizes, and the drawn parts'
position, rotation and scale, each written in place on its own line; every other byte of the file stays.

The objects are those a VDrift Car import made: a root empty (property `vdrift_car`, the file it came from) whose
children carry `vdrift_section`, the section they stand for. Models are written with the JOE exporter."""

from __future__ import annotations

import math
import os

import bpy
from bpy.props import StringProperty

from ..common.operators import PresetSafeExportHelper, Summary, guarded
from ..formats import vdrift_car as car_format
from ..formats.atomic import write_bytes_atomically
from ..formats.errors import FormatError

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


def chosen_root(context: bpy.types.Context, collection: str = "") -> bpy.types.Object:
    """The car of the active object; else the one car among the selected objects (or the collection's)."""
    if collection:
        holder = bpy.data.collections.get(collection)
        if holder is None:
            raise FormatError(f"collection {collection!r} does not exist")
        candidates = list(holder.all_objects)
    else:
        active = car_root(context.view_layer.objects.active)
        if active is not None:
            return active
        candidates = [obj for obj in context.scene.objects if obj.select_get()]
    roots = {root.as_pointer(): root for root in map(car_root, candidates) if root is not None}
    if len(roots) != 1:
        raise FormatError("no VDrift car chosen: make a car imported with File > Import > VDrift Car (or one of its "
                          "parts) active" if not roots else "several VDrift cars chosen: make one of them active")
    return next(iter(roots.values()))


def base_document(root: bpy.types.Object, path: str) -> car_format.CarDocument:
    """The file to update: the one at the output path, else the one the car was imported from."""
    source = path if os.path.isfile(path) else str(root[CAR_PATH])
    if not os.path.isfile(source):
        raise FormatError(f"{source}: the car's .car file is gone; export over an existing .car file")
    return car_format.load_car(source)


def export_car(context: bpy.types.Context, path: str, collection: str = "") -> Summary:
    root = chosen_root(context, collection)
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
    write_bytes_atomically(path, document.to_bytes())
    return summary


def update_wheel(document: car_format.CarDocument, wheel: bpy.types.Object, section: str,
                 warnings: list[str]) -> int:  # fmt: skip
    """Position from the wheel's location; camber and toe from its rotation about Y (negated) and Z (about X it
    only spins); the tyre size from its scale: X the width, Y and Z the diameter."""
    changed = car_format.update_numbers(document, section, "position", tuple(wheel.location), POSITION_DECIMALS)
    _, camber, toe = (math.degrees(angle) for angle in wheel.rotation_euler)
    changed |= car_format.update_numbers(document, section, "camber", (-camber,), ANGLE_DECIMALS, (0,))
    changed |= car_format.update_numbers(document, section, "toe", (toe,), ANGLE_DECIMALS, (0,))
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
    changed |= car_format.update_numbers(document, where, "size", values, SIZE_DECIMALS + 1)
    return int(changed)


def update_part(document: car_format.CarDocument, part: bpy.types.Object, section: str) -> int:
    """A drawn part's position, rotation (degrees) and scale; a key the section lacks is added only when the part
    moved from what the game assumes without it."""
    degrees = tuple(math.degrees(angle) for angle in part.rotation_euler)
    changes = (
        car_format.update_numbers(document, section, "position", tuple(part.location), POSITION_DECIMALS, (0, 0, 0)),
        car_format.update_numbers(document, section, "rotation", degrees, ANGLE_DECIMALS, (0, 0, 0)),
        car_format.update_numbers(document, section, "scale", tuple(part.scale), SCALE_DECIMALS, (1, 1, 1)),
    )
    return sum(changes)


# ------------------------------------------------------------------------------------------------- operator


class EXPORT_SCENE_OT_vdrift_car(bpy.types.Operator, PresetSafeExportHelper):
    """Write a VDrift car's wheel positions, tyre sizes and part placements into its .car file, each value in
    place (comments, order and every other key stay byte for byte)"""

    bl_idname = "export_scene.vdrift_car"
    bl_label = "Export VDrift Car"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".car"
    filter_glob: StringProperty(default="*.car", options={"HIDDEN"})
    collection: StringProperty(name="Collection", options={"HIDDEN"})

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        root = car_root(context.view_layer.objects.active)
        if root is not None and not self.filepath:  # (the file it came from: the update is in place)
            self.filepath = str(root[CAR_PATH])
            context.window_manager.fileselect_add(self)
            return {"RUNNING_MODAL"}
        result: set[str] = super().invoke(context, event)
        return result

    def execute(self, context: bpy.types.Context) -> set[str]:
        return guarded(self, lambda: export_car(context, self.filepath, self.collection), "Exported")


def menu_export(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    self.layout.operator(EXPORT_SCENE_OT_vdrift_car.bl_idname, text="VDrift Car (.car)")


classes = (EXPORT_SCENE_OT_vdrift_car,)
