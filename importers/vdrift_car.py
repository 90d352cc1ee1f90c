"""A VDrift car (`.car`) into Blender: its drawn parts (body, glass, interior, ...) and its wheels, each wheel an
empty at the `.car`'s position holding the wheel's disk, the rim and the tyre VDrift generates for its size."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field

import bpy
from bpy.props import BoolProperty, FloatProperty, StringProperty
from bpy_extras.io_utils import ImportHelper
from mathutils import Euler, Matrix, Vector

from ..common import mesh_io, textures
from ..common.operators import (
    IMPORT_SCALE,
    ImportFilesMixin,
    Summary,
    axis_options,
    draw_panel,
    file_handler,
    guarded,
    import_all,
    import_matrix,
    prepare_layout,
)
from ..formats import joe, joe_mesh
from ..formats import textures as texture_rules
from ..formats import vdrift_car as car_format
from .joe import JoeImportOptions, build_object

# Custom properties the exporter maps the objects back by.
CAR_PATH = "vdrift_car"  # on the root empty: the .car file it was imported from
SECTION = "vdrift_section"  # on each part and wheel: its section of the .car
TIRE_SIZE = "vdrift_tire_size"  # on each wheel: the tyre size (width mm, aspect %, rim inch) its scale 1 stands for


@dataclass
class CarImportOptions:
    rewind_clockwise: bool = True
    use_custom_normals: bool = True
    find_textures: bool = True
    generate_wheels: bool = True
    matrix: Matrix = field(default_factory=lambda: Matrix.Identity(4))


@dataclass
class CarSource:
    """Everything read before bpy.data is touched: the car, and each model file it names, once."""

    path: str
    car: car_format.Car
    models: dict[str, joe.JoeDocument]  # model name as the .car writes it -> its document
    warnings: list[str] = field(default_factory=list)
    listings: car_format.Listings = field(default_factory=dict)  # the folders looked in (models, then images)


def parse_file(path: str) -> CarSource:
    document = car_format.load_car(path)
    car = car_format.car_parts(document)
    source = CarSource(path, car, {}, list(car.warnings))
    names = [part.mesh for part in car.drawables]
    names += [name for wheel in car.wheels for name in (wheel.mesh, wheel.tire_mesh, wheel.brake_mesh) if name]
    for name in dict.fromkeys(names):
        found = car_format.find_part(path, name, source.listings)
        if found is None:
            source.warnings.append(f"model {name!r} not found beside the car, in carparts or in trackparts")
            continue
        source.models[name] = joe.load_joe(found)
    return source


class _Builder:
    """Builds one car: its objects, materials shared by texture, and the summary's counts."""

    def __init__(self, context: bpy.types.Context, source: CarSource, options: CarImportOptions,
                 summary: Summary) -> None:  # fmt: skip
        self.context, self.source, self.options, self.summary = context, source, options, summary
        self.made = textures.JoeMaterials()  # the car's materials, one a texture and alpha, shared by its parts
        self.said: dict[str, list[str]] = {}
        self.noted: dict[str, list[str]] = {}
        self.taken_names: list[tuple[str, str]] = []
        self.arrays: dict[str, joe_mesh.MeshArrays] = {}  # model name -> its mesh arrays, made for all at once

    def build(self) -> bpy.types.Object:
        name = os.path.splitext(os.path.basename(self.source.path))[0]
        root = mesh_io.link_new_object(self.context, name, None)
        root.empty_display_type = "ARROWS"
        root[CAR_PATH] = os.path.abspath(self.source.path)
        root.matrix_world = self.options.matrix
        self.summary.objects += 1
        for part in self.source.car.drawables:
            obj = self.model(f"{name} {part.section}", part.mesh, None, part.textures, part.draw == "transparent")
            if obj is not None:
                obj[SECTION] = part.section
                self.place(obj, root, part.position, part.rotation, part.scale)
        for wheel in self.source.car.wheels:
            self.wheel(name, wheel, root)
        self.summary.warnings += [f"{os.path.basename(self.source.path)}: {text}" for text in self.source.warnings]
        self.summary.warnings += [f"{', '.join(names)}: {text}" for text, names in self.said.items()]
        self.summary.notes += [f"{', '.join(names)}: {text}" for text, names in self.noted.items()]
        if self.taken_names:
            self.summary.warnings.append(mesh_io.taken_names_note(self.taken_names))
        return root

    def wheel(self, car_name: str, wheel: car_format.Wheel, root: bpy.types.Object) -> None:
        empty = mesh_io.link_new_object(self.context, f"{car_name} {wheel.section}", None)
        empty.empty_display_type = "SPHERE"
        empty.empty_display_size = wheel.size.radius
        empty[SECTION] = wheel.section
        empty[TIRE_SIZE] = list(wheel.size.values())
        self.place(empty, root, wheel.position, (0.0, -wheel.camber, wheel.toe), None)
        self.summary.objects += 1
        label = f"{car_name} {wheel.section}"
        if wheel.mesh is not None:
            offset, scale = car_format.disk_transform(wheel.size)
            disk = Matrix.Diagonal((*scale, 1.0)) @ Matrix.Translation(offset) if wheel.generate_rim else None
            obj = self.model(f"{label} disk", wheel.mesh, disk, wheel.textures, False)
            if obj is not None:
                self.place(obj, empty, None, None, wheel.mirror)
        if wheel.generate_rim and self.options.generate_wheels:
            rim = self.generated(f"{label} rim", car_format.generated_rim(wheel.size), wheel.textures)
            self.place(rim, empty, None, None, wheel.mirror)
        self.wheel_part(f"{label} tire", empty, wheel.tire_mesh, wheel.tire_textures, wheel.tire_mirror,
                        lambda: car_format.generated_tire(wheel.size))  # fmt: skip
        if wheel.brake_radius > 0 or wheel.brake_mesh is not None:
            self.wheel_part(f"{label} brake", empty, wheel.brake_mesh, wheel.brake_textures, None,
                            lambda: car_format.generated_brake(wheel.brake_radius))  # fmt: skip

    def wheel_part(self, name: str, empty: bpy.types.Object, mesh_name: str | None, texture_names: list[str],
                   mirror: car_format.Vector | None, generate: Callable[[], car_format.Revolved]) -> None:  # fmt: skip
        """A wheel's tyre or brake disc, drawn when it has a texture, as VDrift does: its own model when the .car
        names one, else the one VDrift generates."""
        if not texture_names:
            return
        if mesh_name is not None:
            obj = self.model(name, mesh_name, None, texture_names, False)
        elif self.options.generate_wheels:
            obj = self.generated(name, generate(), texture_names)
        else:
            return
        if obj is not None:
            self.place(obj, empty, None, None, mirror)

    def model(self, name: str, mesh_name: str, matrix: Matrix | None, texture_names: list[str],
              alpha: bool) -> bpy.types.Object | None:  # fmt: skip
        document = self.source.models.get(mesh_name)
        if document is None:
            return None
        options = JoeImportOptions(rewind_clockwise=self.options.rewind_clockwise,
                                   use_custom_normals=self.options.use_custom_normals, matrix=matrix)  # fmt: skip
        obj, warnings = build_object(self.context, name, document, options, self.summary, self.taken_names,
                                     self.model_arrays(mesh_name))  # fmt: skip
        for text in warnings:
            self.said.setdefault(text, []).append(name)
        for text in document.notes:
            self.noted.setdefault(text, []).append(name)
        self.texture(obj, texture_names, alpha)
        return obj

    def model_arrays(self, mesh_name: str) -> joe_mesh.MeshArrays:
        """A model's mesh arrays: those of every model the car names, made together on the first call (a car's tens
        of small models cost as one; a wheel's model is made once for its four wheels)."""
        if not self.arrays:
            names, documents = list(self.source.models), list(self.source.models.values())
            swap = JoeImportOptions().apply_normal_swap  # (as model() builds them)
            arrays = joe_mesh.mesh_arrays_of_many(documents, self.options.rewind_clockwise, swap)
            self.arrays = dict(zip(names, arrays, strict=True))
        return self.arrays[mesh_name]

    def generated(self, name: str, shape: car_format.Revolved, texture_names: list[str]) -> bpy.types.Object:
        corners = shape.quads.ravel()
        mesh = mesh_io.new_mesh(name, shape.positions, corners, [4 * face for face in range(len(shape.quads))])
        mesh_io.add_uv_map(mesh, "UVMap", shape.corner_uvs)
        mesh_io.set_smooth(mesh)
        obj = mesh_io.link_new_object(self.context, name, mesh, None, self.taken_names)
        self.summary.objects += 1
        self.summary.faces += len(mesh.polygons)
        self.texture(obj, texture_names, False)
        return obj

    def texture(self, obj: bpy.types.Object, texture_names: list[str], alpha: bool) -> None:
        """The first (diffuse) texture, found where the game looks for it, in a material the car's parts share."""
        if not self.options.find_textures or not texture_names:
            return
        path = car_format.find_part(self.source.path, texture_names[0], self.source.listings)
        if path is None:
            self.summary.textures_missing.add(texture_names[0])
            return
        key = (path, alpha)
        material = self.made.by_texture.get(key)
        if material is None:
            active = obj.data.uv_layers.active
            material = self.made.by_texture[key] = textures.joe_material(
                texture_rules.Texture(path, use_alpha=alpha), active.name if active is not None else None, self.summary,
                self.made)  # fmt: skip
        obj.data.materials.append(material)

    @staticmethod
    def place(obj: bpy.types.Object, parent: bpy.types.Object, position: car_format.Vector | None,
              rotation: car_format.Vector | None, scale: car_format.Vector | None) -> None:  # fmt: skip
        """In the parent's space, as VDrift places a part relative to the car (rotation in degrees, x then y
        then z)."""
        obj.parent = parent
        obj.matrix_parent_inverse = Matrix.Identity(4)
        if position is not None:
            obj.location = Vector(position)
        if rotation is not None:
            obj.rotation_euler = Euler([math.radians(angle) for angle in rotation], "XYZ")
        if scale is not None:
            obj.scale = Vector(scale)


def import_car_files(context: bpy.types.Context, paths: list[str], options: CarImportOptions) -> Summary:
    roots: list[bpy.types.Object] = []

    def build(path: str, source: object, summary: Summary) -> None:
        assert isinstance(source, CarSource)
        textures.new_search()
        roots.append(_Builder(context, source, options, summary).build())

    summary = import_all(context, paths, parse_file, build)
    if roots:  # (the car's root is its main object, as an armature is for a rigged model)
        context.view_layer.objects.active = roots[0]
    return summary


# ------------------------------------------------------------------------------------------------- operator


@axis_options("import")
class IMPORT_SCENE_OT_vdrift_car(bpy.types.Operator, ImportFilesMixin, ImportHelper):
    """Import a VDrift car: body, glass, interior and the other parts its .car file names, and its wheels and
    tyres where the .car puts them"""

    bl_idname = "import_scene.vdrift_car"
    bl_label = "Import VDrift Car"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".car"
    filter_glob: StringProperty(default="*.car", options={"HIDDEN"})

    generate_wheels: BoolProperty(
        name="Rims and Tyres", default=True,
        description="Make the rim, the tyre and the brake disc VDrift generates for each wheel from its sizes; off: "
        "only the models the .car names",
    )  # fmt: skip
    rewind_clockwise: BoolProperty(
        name="Fix Clockwise Faces", default=True,
        description="Turn faces whose corner order opposes their normals, so Blender's face orientation matches",
    )  # fmt: skip
    use_custom_normals: BoolProperty(
        name="Custom Normals", default=True, description="Use the models' normals as custom split normals"
    )
    find_textures: BoolProperty(**textures.FIND_TEXTURES)
    global_scale: FloatProperty(**IMPORT_SCALE)

    def execute(self, context: bpy.types.Context) -> set[str]:
        options = CarImportOptions(
            rewind_clockwise=self.rewind_clockwise, use_custom_normals=self.use_custom_normals,
            find_textures=self.find_textures, generate_wheels=self.generate_wheels, matrix=import_matrix(self),
        )  # fmt: skip
        return guarded(self, lambda: import_car_files(context, self.selected_paths(), options), "Imported")

    def draw(self, context: bpy.types.Context) -> None:
        prepare_layout(self.layout)
        draw_panel(
            self.layout, self, "IOGF_vdrift_car_import_geometry", "Geometry",
            ("generate_wheels", "rewind_clockwise", "use_custom_normals", "find_textures"),
        )  # fmt: skip
        draw_panel(
            self.layout, self, "IOGF_vdrift_car_import_transform", "Transform",
            ("global_scale", "forward_axis", "up_axis"),
        )  # fmt: skip


IOGF_FH_vdrift_car = file_handler(
    "IOGF_FH_vdrift_car", "VDrift Car", "import_scene.vdrift_car", "export_scene.vdrift_car", ".car"
)


def menu_import(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    self.layout.operator(IMPORT_SCENE_OT_vdrift_car.bl_idname, text="VDrift Car (.car)")


classes = (IMPORT_SCENE_OT_vdrift_car, IOGF_FH_vdrift_car)
