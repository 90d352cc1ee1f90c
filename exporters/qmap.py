"""The Blender scene to The Final Quest's `.qmap.tmp` (+ `.qmap.desc`), and straight on to a compiled `.qmap`.

Replaces the Blender 2.44 export script: mesh objects with their transform (or baked into the vertices when the
transform has shear or mirroring), material slots, UVs, faces of 3 or 4 corners, smooth flags, and point and
spot lights. Names are Windows-1250; numbers use `%.9g`, which the original tokenizer reads and which keeps
float32 values exact.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import bpy
import numpy as np
from bpy.props import BoolProperty, FloatProperty, FloatVectorProperty, IntProperty, StringProperty
from mathutils import Euler, Matrix

from .. import qmap_compiler as qc
from ..common import mesh_io
from ..common.operators import (
    APPLY_MODIFIERS,
    ObjectScopeMixin,
    PresetSafeExportHelper,
    Summary,
    draw_panel,
    guarded,
    has_faces,
    in_file_browser,
    prepare_layout,
    refuse_if_nothing_left,
)
from ..common.progress import progress
from ..common.qmap_io import OCTREE_DISPLAY, compiler_call, desc_path_for, encode_name
from ..formats.atomic import Content, write_files_atomically
from ..formats.errors import FormatError

NUMBER_FORMAT = "%.9g"
SKIPPED_WITH_WARNING = {"CURVE", "SURFACE", "META", "FONT", "ARMATURE", "LATTICE", "CURVES", "POINTCLOUD",
                        "VOLUME", "GPENCIL", "GREASEPENCIL", "SPEAKER", "LIGHT_PROBE"}  # fmt: skip
REPORT_TEXT = "QMAP compile report"  # the text block holding the last compile's report
AUTO_SMOOTH_ANGLE = 30.0  # parsed and ignored by the compiler; the 2.44 default


# ------------------------------------------------------------------------------------------------ gathering


@dataclass
class SceneExport:
    tmp: qc.TmpDocument = field(default_factory=qc.TmpDocument)
    desc: qc.DescDocument = field(default_factory=qc.DescDocument)
    warnings: list[str] = field(default_factory=list)
    faces: int = 0


Transform = tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]


def object_transform(obj: bpy.types.Object) -> Transform | None:
    """(position, XYZ Euler radians, scale) of the object in the world, or None when those cannot express its
    matrix (shear, mirroring). An object placed by its own XYZ channels alone (no parent, constraint or delta
    moving it) is written with them as they are: what a .qmap.tmp import set comes back unchanged, a zero size
    included."""
    matrix = obj.matrix_world
    determinant = matrix.determinant()
    own = _own_channels(obj)
    if own is not None and determinant >= 0.0:
        return own
    if determinant <= 0.0:
        return None
    location, euler, scale = decomposed = _decomposed(matrix)
    rebuilt = Matrix.LocRotScale(location, Euler(euler, "XYZ"), scale)
    difference = np.abs(np.array(matrix) - np.array(rebuilt)).max()
    if difference > 1e-5 * max(1.0, float(np.abs(np.array(matrix)).max())):
        return None
    return decomposed


def _decomposed(matrix: Matrix) -> Transform:
    location, rotation, scale = matrix.decompose()
    return tuple(location), tuple(rotation.to_euler("XYZ")), tuple(scale)


def _own_channels(obj: bpy.types.Object) -> Transform | None:
    if obj.parent is not None or obj.rotation_mode != "XYZ":
        return None
    own: Transform = (tuple(obj.location), tuple(obj.rotation_euler), tuple(obj.scale))
    rebuilt = np.array(Matrix.LocRotScale(own[0], Euler(own[1], "XYZ"), own[2]))
    actual = np.array(obj.matrix_world)
    for part in (np.s_[:3, :3], np.s_[:3, 3]):  # (each against its own size: a far location hides no turn)
        if np.abs(actual[part] - rebuilt[part]).max() > 1e-6 * max(1.0, float(np.abs(rebuilt[part]).max())):
            return None  # constraints, drivers' pending changes or delta transforms move it
    return own


def mesh_faces(mesh: bpy.types.Mesh) -> dict[str, np.ndarray]:
    """Faces of 3 or 4 corners in polygon order (n-gons replaced in place by their triangles), padded to 4."""
    starts, sizes = mesh_io.face_corners(mesh)
    materials = mesh_io.face_materials(mesh)
    smooth = mesh_io.smooth_faces(mesh)
    if _triangles_only(mesh):  # (face f is corners 3f..3f+2: no gathers)
        loops = np.empty((len(sizes), 4), np.int64)
        loops[:, :3] = np.arange(3 * len(sizes)).reshape(-1, 3)
        loops[:, 3] = loops[:, 0]
        return {"loops": loops, "sizes": sizes, "materials": materials, "smooth": smooth}
    small = np.flatnonzero(sizes <= 4)
    loops = starts[small, None] + np.minimum(np.arange(4), sizes[small, None] - 1)
    loops[sizes[small] == 3, 3] = starts[small][sizes[small] == 3]  # a triangle repeats corner 0 in slot 3
    owner = small
    face_sizes = sizes[small]
    if (sizes > 4).any():
        triangle_loops, triangle_polygons = mesh_io.triangle_corners(mesh)
        from_ngons = sizes[triangle_polygons] > 4
        triangles = triangle_loops.reshape(-1, 3)[from_ngons]
        loops = np.concatenate([loops, np.concatenate([triangles, triangles[:, :1]], axis=1)])
        owner = np.concatenate([owner, triangle_polygons[from_ngons]])
        face_sizes = np.concatenate([face_sizes, np.full(len(triangles), 3, np.intc)])
        order = np.argsort(owner, kind="stable")
        loops, owner, face_sizes = loops[order], owner[order], face_sizes[order]
    return {"loops": loops, "sizes": face_sizes, "materials": materials[owner], "smooth": smooth[owner]}


def _triangles_only(mesh: bpy.types.Mesh) -> bool:
    """Whether every face is a triangle (every face has at least 3 corners)."""
    return len(mesh.loops) == 3 * len(mesh.polygons)


def _per_face_corner(values: np.ndarray, loops: np.ndarray, triangles_only: bool) -> np.ndarray:
    """values[loops]: each face's 4 corner slots. Of a mesh of triangles only (loops 3f, 3f+1, 3f+2, 3f), made
    by two copies instead of a gather."""
    if not triangles_only:
        return values[loops]
    by_face = values.reshape(len(loops), 3, *values.shape[1:])
    corners = np.empty((len(loops), 4, *values.shape[1:]), values.dtype)
    corners[:, :3] = by_face
    corners[:, 3] = by_face[:, 0]
    return corners


def mesh_object(obj: bpy.types.Object, mesh: bpy.types.Mesh, name: bytes, materials: list[bytes]) -> qc.MeshObject:
    faces = mesh_faces(mesh)
    triangles_only = _triangles_only(mesh)
    corner_vert = mesh_io.corner_vertices_of(mesh)
    vertices = mesh_io.vertex_positions_of(mesh)
    uvs = None
    if mesh.uv_layers.active is not None:
        uvs = _per_face_corner(mesh_io.corner_floats(mesh.uv_layers.active.uv, "vector", 2), faces["loops"],
                               triangles_only)  # fmt: skip
    indices = _per_face_corner(np.asarray(corner_vert, np.int64), faces["loops"], triangles_only)
    transform = object_transform(obj)
    if transform is None:  # bake: exact even with shear; mirroring turns faces inside out, so rewind them
        vertices = mesh_io.transform_points(vertices, obj.matrix_world).astype(np.float32)
        transform = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
        if obj.matrix_world.determinant() < 0.0:
            indices, uvs = _rewound(indices, uvs, faces["sizes"])
    position, orientation, size = transform
    if not (np.isfinite(vertices).all() and (uvs is None or np.isfinite(uvs).all())):
        raise FormatError(f"object {obj.name!r} has coordinates that are not finite numbers")
    if not np.isfinite([*position, *orientation, *size]).all():  # (a finite location and scale whose product is not)
        raise FormatError(f"object {obj.name!r} is placed beyond what a float holds (its location, rotation and "
                          "scale together)")  # fmt: skip
    return qc.MeshObject(
        name=name, position=position, orientation=orientation, size=size,
        auto_smooth_angle=AUTO_SMOOTH_ANGLE, has_uv=uvs is not None, materials=materials,
        material_pos=[0] * len(materials), vertices=np.asarray(vertices, np.float32),
        face_sizes=faces["sizes"].astype(np.int8), face_materials=np.asarray(faces["materials"], np.int64),
        face_smooth=np.asarray(faces["smooth"], bool), face_indices=indices,
        face_uvs=None if uvs is None else np.asarray(uvs, np.float32),
    )  # fmt: skip  (asarray: no copy of what already has its type)


def _rewound(indices: np.ndarray, uvs: np.ndarray | None, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    order = np.where((sizes == 4)[:, None], [0, 3, 2, 1], [0, 2, 1, 0])
    rows = np.arange(len(sizes))[:, None]
    return indices[rows, order], None if uvs is None else uvs[rows, order]


def _lamp_transform(obj: bpy.types.Object) -> Transform:
    return _own_channels(obj) or _decomposed(obj.matrix_world)


def lamp_object(obj: bpy.types.Object, name: bytes) -> qc.LampObject | None:
    light = obj.data
    if light.type not in {"POINT", "SPOT"}:
        return None
    position, orientation, size = _lamp_transform(obj)
    return qc.LampObject(
        name=name, position=position, orientation=orientation,
        size=size, lamp_type="Lamp" if light.type == "POINT" else "Spot",
        distance=float(light.cutoff_distance), color=tuple(light.color),
        softness=float(getattr(light, "spot_blend", 0.0)), angle=math.degrees(getattr(light, "spot_size", 0.0)),
    )  # fmt: skip


def material_entry(material: bpy.types.Material | None, scene: bpy.types.Scene) -> qc.MaterialDesc | None:
    """The desc entry of a material (of empty slots: the scene's), None when every option is the default."""
    settings = material.qmap if material is not None else scene.qmap.empty_slot
    entry = qc.MaterialDesc(
        skip=settings.skip, tex_gen=settings.tex_gen, tex_scale=float(settings.tex_scale),
        new_name=encode_name(settings.output_name, "output name of material") if settings.output_name else b"",
    )  # fmt: skip
    return None if entry == qc.MaterialDesc() else entry


def gather_scene(context: bpy.types.Context, objects: list[bpy.types.Object], apply_modifiers: bool) -> SceneExport:
    export = SceneExport()
    depsgraph = context.evaluated_depsgraph_get()
    with progress(context, len(objects)) as tracker:
        for obj in tracker.each(objects):
            if not obj.get(OCTREE_DISPLAY):  # the panel's octree boxes show a compiled map; they are not part of it
                gather_object(context, obj, depsgraph, apply_modifiers, export)
    chosen_meshes = sum(1 for obj in objects if obj.type == "MESH" and not obj.get(OCTREE_DISPLAY))
    if not chosen_meshes:
        raise FormatError("no mesh objects to export: a QMAP map needs geometry")
    refuse_if_nothing_left(len(export.tmp.meshes), chosen_meshes)
    return export


def gather_object(
    context: bpy.types.Context, obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph, apply_modifiers: bool,
    export: SceneExport,
) -> None:
    name = encode_name(mesh_io.original_name(obj), "object")
    if obj.type == "MESH":
        materials = [slot.material for slot in obj.material_slots]
        names = [encode_name(mesh_io.original_name(m), "material") if m else b"" for m in materials]
        with mesh_io.evaluated_mesh(obj, depsgraph, apply_modifiers) as mesh:
            exported = mesh_object(obj, mesh, name, names)
        if not has_faces(obj.name, len(exported.face_sizes), export.warnings):
            return
        note = mesh_io.unheld_data_note(obj, "QMAP", one_uv_map=True, colors=False, shapes_applied=apply_modifiers)
        export.warnings += [note] if note else []
        export.tmp.meshes.append(exported)
        export.faces += len(exported.face_sizes)
        for material, encoded in zip(materials, names, strict=True):
            entry = material_entry(material, context.scene)
            if entry is not None and encoded not in export.desc.entries:
                export.desc.entries[encoded] = entry
    elif obj.type == "LIGHT":
        lamp = lamp_object(obj, name)
        if lamp is None:
            export.warnings.append(f"{obj.name}: {obj.data.type.lower()} lights are not QMAP lamps; skipped")
        else:
            export.tmp.lamps.append(lamp)
    elif obj.type in SKIPPED_WITH_WARNING:
        export.warnings.append(f"{obj.name}: {obj.type.lower()} objects are not exported to QMAP; skipped")


def format_sources(export: SceneExport, write_desc: bool) -> tuple[list[bytes], bytes | None]:
    """The .qmap.tmp (in pieces) and .qmap.desc texts (CRLF, as the original exporter wrote them on Windows)."""
    tmp_pieces = compiler_call(qc.tmp_pieces, export.tmp, NUMBER_FORMAT, b"\r\n")
    desc_bytes = compiler_call(qc.format_desc, export.desc, NUMBER_FORMAT, b"\r\n") if write_desc else None
    return tmp_pieces, desc_bytes


def write_tmp(export: SceneExport, tmp_path: str, write_desc: bool) -> None:
    """Both files are fully formatted before either is written."""
    tmp_pieces, desc_bytes = format_sources(export, write_desc)
    files: list[tuple[str, Content]] = [(tmp_path, tmp_pieces)]
    if desc_bytes is not None:
        files.append((desc_path_for(tmp_path), desc_bytes))
    write_files_atomically(files)  # both replaced, or neither


def compile_options(settings: object) -> qc.CompileOptions:
    """Compile options from anything with the QMAP option names (an operator or the scene settings); fixed bounds
    that are not finite or whose minimum exceeds the maximum are refused."""
    bounds = None
    if getattr(settings, "use_bounds", False):
        low, high = tuple(settings.bounds_min), tuple(settings.bounds_max)
        check_bounds(low, high)
        bounds = (low[0], low[2], low[1], high[0], high[2], high[1])  # Blender (x, y, z) -> map (x, z, y)
    return qc.CompileOptions(
        k=settings.k, max_depth=settings.max_depth, bounds=bounds,
        fix_bounds=settings.fix_bounds, drop_degenerate=settings.drop_degenerate,
    )  # fmt: skip


def check_bounds(low: tuple[float, ...], high: tuple[float, ...]) -> None:
    """The rule of the standalone compiler's --bounds, in the panel's and the operators' words."""
    if not all(math.isfinite(value) for value in low + high):
        raise FormatError(f"Fixed Bounds: every coordinate must be a finite number (Bounds Min {_xyz(low)}, "
                          f"Bounds Max {_xyz(high)})")  # fmt: skip
    inverted = [f"{axis} {a:g} > {b:g}" for axis, a, b in zip("XYZ", low, high, strict=True) if a > b]
    if inverted:
        raise FormatError(f"Fixed Bounds: Bounds Min exceeds Bounds Max on {', '.join(inverted)}; the minimum "
                          "must be the lower corner on every axis")  # fmt: skip


def _xyz(values: tuple[float, ...]) -> str:
    return f"({', '.join(f'{value:g}' for value in values)})"


def compile_tmp(tmp_path: str, qmap_path: str, options: qc.CompileOptions) -> qc.CompileReport:
    desc = desc_path_for(tmp_path)
    return compiler_call(qc.compile_map, tmp_path, desc if os.path.isfile(desc) else None, qmap_path, options)


def with_extension(path: str, extension: str) -> str:
    """`path` ending in `extension`, with any partial form of it ("x.qmap", "x.tmp") completed, not doubled."""
    folder, name = os.path.split(path)
    if not name or name.lower().endswith(extension):
        return path
    for part in (".qmap", ".tmp", ".desc"):
        if name.lower().endswith(part):
            name = name[: -len(part)]
            break
    return os.path.join(folder, name + extension)


def report_summary(report: qc.CompileReport, summary: Summary) -> None:
    summary.faces = report.faces
    summary.warnings.extend(report.warnings)


# ------------------------------------------------------------------------------------------------ operators


class QmapCompileOptionsMixin:
    k: FloatProperty(name="K", default=0.25, min=0.0, max=0.999, description="Loose-octree factor, 0 <= K < 1")
    max_depth: IntProperty(name="Max Depth", default=9, min=0, max=20, description="Deepest octree level")
    use_bounds: BoolProperty(name="Fixed Bounds", default=False, description="Use a fixed root box")
    bounds_min: FloatVectorProperty(name="Bounds Min", size=3, subtype="XYZ", description="Blender coordinates")
    bounds_max: FloatVectorProperty(name="Bounds Max", size=3, subtype="XYZ", description="Blender coordinates")
    fix_bounds: BoolProperty(
        name="Fix Bounds Bug", default=False,
        description="Compute the automatic root box correctly instead of reproducing the original's FLT_MIN bug",
    )  # fmt: skip
    drop_degenerate: BoolProperty(
        name="Drop Degenerate Faces", default=False, description="Drop zero-area faces instead of writing NaN normals"
    )


class QmapSceneMixin(ObjectScopeMixin):
    apply_modifiers: BoolProperty(**{**APPLY_MODIFIERS, "default": False})  # the original exported raw meshes
    write_desc: BoolProperty(
        name="Write .qmap.desc", default=True, description="Write the materials' QMAP options beside the .qmap.tmp"
    )


def export_tmp(context: bpy.types.Context, path: str, operator: QmapSceneMixin) -> Summary:
    return export_objects(context, operator.objects_to_export(context), path, operator.apply_modifiers,
                          operator.write_desc)  # fmt: skip


def export_objects(
    context: bpy.types.Context, objects: list[bpy.types.Object], path: str, apply_modifiers: bool, write_desc: bool
) -> Summary:
    export = gather_scene(context, objects, apply_modifiers)
    write_tmp(export, path, write_desc)
    summary = Summary(files=2 if write_desc else 1, objects=len(export.tmp.meshes) + len(export.tmp.lamps))
    summary.faces = export.faces
    summary.warnings.extend(export.warnings)
    return summary


@dataclass
class MapPaths:
    """Where an export and compile writes: the .qmap.tmp, the .qmap.desc beside it, and the .qmap."""

    tmp: str
    qmap: str

    @property
    def desc(self) -> str:
        return desc_path_for(self.tmp)


def export_and_compile(context: bpy.types.Context, qmap_path: str, operator: QmapSceneMixin) -> Summary:
    """X.qmap.tmp and X.qmap.desc beside X.qmap, compiled: see `export_and_compile_objects`."""
    objects = operator.objects_to_export(context)
    return export_and_compile_objects(context, objects, MapPaths(qmap_path + ".tmp", qmap_path),
                                      operator.apply_modifiers, operator.write_desc, operator)  # fmt: skip


def export_and_compile_objects(
    context: bpy.types.Context, objects: list[bpy.types.Object], paths: MapPaths, apply_modifiers: bool,
    write_desc: bool, settings: object,
) -> Summary:
    """Write the .qmap.tmp (and its .qmap.desc) and compile them into the .qmap: the compile runs in memory
    first, so all the files are replaced or none (a compile that fails leaves every old file as it was); without
    `write_desc` an old .qmap.desc is not used. `settings` holds the compile options."""
    options = compile_options(settings)  # bad bounds are refused before any work
    export = gather_scene(context, objects, apply_modifiers)
    tmp_pieces, desc_bytes = format_sources(export, write_desc)
    tmp_bytes = b"".join(tmp_pieces)
    del tmp_pieces
    report = qc.CompileReport(output=paths.qmap)
    with failure_recorded(context.scene, paths.qmap):
        data = compiler_call(lambda: qc.compile_bytes(tmp_bytes, desc_bytes, options, tmp_name=paths.tmp,
                                                      desc_name=paths.desc, report=report))  # fmt: skip
        files: list[tuple[str, Content]] = [(paths.qmap, data), (paths.tmp, tmp_bytes)]
        if desc_bytes is not None:
            files.append((paths.desc, desc_bytes))
        write_files_atomically(files)  # all replaced, or none
    store_report(context.scene, report)
    summary = Summary(files=len(files), objects=len(export.tmp.meshes) + len(export.tmp.lamps))
    summary.warnings += export.warnings
    report_summary(report, summary)
    return summary


def compile_to(context: bpy.types.Context, tmp_path: str, qmap_path: str, settings: object) -> qc.CompileReport:
    options = compile_options(settings)
    with failure_recorded(context.scene, qmap_path):
        report = compile_tmp(tmp_path, qmap_path, options)
    store_report(context.scene, report)
    return report


class EXPORT_SCENE_OT_qmap_tmp(bpy.types.Operator, PresetSafeExportHelper, QmapSceneMixin):
    """Export the scene as a QMAP intermediate map (.qmap.tmp) and its material options (.qmap.desc)"""

    bl_idname = "export_scene.qmap_tmp"
    bl_label = "Export QMAP Source"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".qmap.tmp"
    filter_glob: StringProperty(default="*.qmap.tmp", options={"HIDDEN"})

    def check(self, context: bpy.types.Context) -> bool:
        """ExportHelper's own check knows single extensions only and would grow "x.qmap.qmap.tmp"."""
        current: str = self.filepath
        self.filepath = with_extension(current, ".qmap.tmp")
        return bool(self.filepath != current)

    def execute(self, context: bpy.types.Context) -> set[str]:
        return guarded(self, lambda: export_tmp(context, self.filepath, self), "Exported")

    def draw(self, context: bpy.types.Context) -> None:
        prepare_layout(self.layout)
        scope = ("export_selected_objects",) if in_file_browser(context) else ()
        draw_panel(self.layout, self, "IOGF_qmap_tmp_include", "Include", (*scope, "apply_modifiers", "write_desc"))


class EXPORT_SCENE_OT_qmap(bpy.types.Operator, PresetSafeExportHelper, QmapSceneMixin, QmapCompileOptionsMixin):
    """Export the scene to .qmap.tmp and .qmap.desc beside the target, then compile them into the .qmap"""

    bl_idname = "export_scene.qmap"
    bl_label = "Export and Compile QMAP"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".qmap"
    filter_glob: StringProperty(default="*.qmap", options={"HIDDEN"})

    def execute(self, context: bpy.types.Context) -> set[str]:
        def work() -> Summary:
            return export_and_compile(context, self.filepath, self)

        return guarded(self, work, "Exported and compiled")

    def draw(self, context: bpy.types.Context) -> None:
        prepare_layout(self.layout)
        scope = ("export_selected_objects",) if in_file_browser(context) else ()
        draw_panel(self.layout, self, "IOGF_qmap_include", "Include", (*scope, "apply_modifiers", "write_desc"))
        draw_panel(
            self.layout, self, "IOGF_qmap_compile", "Compile",
            ("k", "max_depth", "fix_bounds", "drop_degenerate", "use_bounds", "bounds_min", "bounds_max"),
        )  # fmt: skip


def store_report(scene: bpy.types.Scene, report: qc.CompileReport) -> None:
    """Keep the last compile's report on the scene (shown by the QMAP panel) and as a text block."""
    text = qc.describe_report(report, verbose=True)
    # (the compiler speaks in map axes; the panel's bounds are in Blender's: map x, y, z = Blender x, z, y)
    text = text.replace("root box: ", "root box (map axes: Blender x, z, y): ", 1)
    text += "".join(f"\nwarning: {warning}" for warning in report.warnings)
    store_report_text(scene, text)


@contextmanager
def failure_recorded(scene: bpy.types.Scene, qmap_path: str) -> Iterator[None]:
    """A compile that fails replaces the last report with its error, so the panel does not go on showing the
    previous compile's report as if it were this one's."""
    try:
        yield
    except (FormatError, OSError) as error:
        message = str(error) if isinstance(error, FormatError) else f"{error.filename or ''}: {error.strerror or error}"
        store_report_text(scene, f"error: compile failed: {message.lstrip(': ')}\n"
                                 f"{os.path.basename(qmap_path)} was not replaced")  # fmt: skip
        raise


def store_report_text(scene: bpy.types.Scene, text: str) -> None:
    settings = getattr(scene, "qmap", None)
    if settings is not None:
        settings.report.clear()
        for line in text.splitlines():
            settings.report.add().text = line
    block = bpy.data.texts.get(REPORT_TEXT) or bpy.data.texts.new(REPORT_TEXT)
    block.from_string(text)


def menu_export(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    self.layout.operator(EXPORT_SCENE_OT_qmap_tmp.bl_idname, text="The Final Quest map source (.qmap.tmp)")
    self.layout.operator(EXPORT_SCENE_OT_qmap.bl_idname, text="The Final Quest map, compiled (.qmap)")


classes = (EXPORT_SCENE_OT_qmap_tmp, EXPORT_SCENE_OT_qmap)
