"""JOE and JPK into Blender: one mesh object per JOE file or pack member."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field

import bpy
import numpy as np
from bpy.props import BoolProperty, FloatProperty, StringProperty
from bpy_extras.io_utils import ImportHelper
from mathutils import Matrix

from ..common import mesh_io, textures, track_settings
from ..common.conventions import JOE_STORED_NORMALS as STORED_NORMALS
from ..common.conventions import collector_paused
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
    said_once,
)
from ..formats import joe, joe_mesh, jpk, vdrift_track
from ..formats.errors import FormatError, read_file_bytes


@dataclass
class JoeImportOptions:
    rewind_clockwise: bool = True
    apply_normal_swap: bool = False
    use_custom_normals: bool = True
    matrix: Matrix | None = None
    find_textures: bool = True
    track_settings: bool = True  # read the track's list.txt / objects.txt into the objects' custom properties


@dataclass
class TrackList:
    """The track object list found beside a model or pack: list.txt (`entries`) or objects.txt (`objects`)."""

    path: str
    kind: str  # vdrift_track.LIST_FILE or OBJECTS_FILE
    text: str
    entries: vdrift_track.ListDocument | None = None
    objects: vdrift_track.ObjectsDocument | None = None


@dataclass
class JoeSource:
    """The models of a .joe file or of a .jpk pack's JOE members, and the pack's own warnings."""

    models: list[tuple[str, joe.JoeDocument]]  # (object name, document)
    pack_warnings: list[str] = field(default_factory=list)
    track: TrackList | None = None


def parse_file(path: str, track_settings: bool = False) -> JoeSource:
    """The file's models; with `track_settings`, also the track object list beside it (see find_track_list)."""
    source = _parse_models(path)
    if track_settings:
        source.track = read_track_list(path, source.pack_warnings)
    return source


def _parse_models(path: str) -> JoeSource:
    if not path.lower().endswith(".jpk"):
        return JoeSource([(os.path.splitext(os.path.basename(path))[0], joe.load_joe(path))])
    pack = jpk.load_jpk(path)
    source = JoeSource([], pack.warnings)
    models = []
    for member in pack.members:
        if not member.name.lower().endswith(".joe"):
            source.pack_warnings.append(f"pack member {member.name!r} is not a .joe model and was skipped")
            continue
        models.append(member)
    documents = joe.read_many([(member.data, f"{path}:{member.name}") for member in models])
    source.models = [(member.name[: -len(".joe")], document) for member, document in zip(models, documents,
                                                                                          strict=True)]  # fmt: skip
    if not source.models:
        source.pack_warnings.append("the pack has no .joe member; nothing imported from it")
    return source


def find_track_list(model_path: str) -> str | None:
    """The track's object list for a model or pack: `list.txt` beside it, else `objects.txt` (VDrift reads the old
    list first), else the same in an `objects` folder beside it; names matched ignoring case."""
    folder = os.path.dirname(os.path.abspath(model_path))
    for place in (folder, os.path.join(folder, "objects")):
        try:
            entries = {name.lower(): name for name in os.listdir(place)}
        except OSError:
            continue
        for name in (vdrift_track.LIST_FILE, vdrift_track.OBJECTS_FILE):
            if name in entries and os.path.isfile(os.path.join(place, entries[name])):
                return os.path.join(place, entries[name])
    return None


def read_track_list(model_path: str, warnings: list[str]) -> TrackList | None:
    """The list found beside the model, parsed; a broken one is said in `warnings` and left out (the models are
    still imported)."""
    path = find_track_list(model_path)
    if path is None:
        return None
    kind = vdrift_track.LIST_FILE if os.path.basename(path).lower() == vdrift_track.LIST_FILE else (
        vdrift_track.OBJECTS_FILE)  # fmt: skip
    try:
        text = vdrift_track.decode(read_file_bytes(path))
        track = TrackList(path, kind, text)
        if kind == vdrift_track.LIST_FILE:
            track.entries = vdrift_track.read_list(text, path)
            warnings += [f"{os.path.basename(path)}: {note}" for note in track.entries.warnings]
        else:
            track.objects = vdrift_track.read_objects(text, path)
    except FormatError as error:
        warnings.append(f"{error}; the track object settings were not read")
        return None
    return track


def build_object(
    context: bpy.types.Context, name: str, document: joe.JoeDocument, options: JoeImportOptions, summary: Summary,
    taken_names: list[tuple[str, str]], arrays: joe_mesh.MeshArrays | None = None,
) -> tuple[bpy.types.Object, list[str]]:
    """The model's object, and its warnings (without its name: a pack says each once for all its members).
    `arrays`: the document's mesh arrays, when made ahead (a car's models, some used several times)."""
    if arrays is None:
        arrays = joe_mesh.mesh_arrays(document, options.rewind_clockwise, options.apply_normal_swap)
    mesh = build_model_mesh(name, arrays, options, summary)
    warnings = list(arrays.warnings)  # (the object's own: a name too long for Blender is said of it alone)
    # A member's name is what list.txt and objects.txt call it: kept for export when Blender must number it.
    obj = mesh_io.link_new_object(context, name, mesh, warnings, taken_names)
    return obj, warnings


def build_model_mesh(
    name: str, arrays: joe_mesh.MeshArrays, options: JoeImportOptions, summary: Summary
) -> bpy.types.Mesh:
    """The model's mesh."""
    positions, corner_normals = arrays.positions, arrays.corner_normals
    if options.matrix is not None and not mesh_io.is_identity(options.matrix):
        positions = mesh_io.transform_points(positions, options.matrix)
        corner_normals = mesh_io.transform_normals(corner_normals, options.matrix).astype(np.float32)
    mesh = mesh_io.new_mesh(name, positions, arrays.corner_verts, triangle_starts(arrays.face_count))
    if arrays.corner_texcoords is not None:
        mesh_io.add_uv_map(mesh, "UVMap", arrays.corner_texcoords)
    mesh_io.set_smooth(mesh)
    if options.use_custom_normals:
        mesh_io.add_corner_vectors(mesh, STORED_NORMALS, corner_normals)
        prepared = arrays.normals if corner_normals is arrays.corner_normals else None  # (not if transformed)
        mesh_io.set_custom_normals(mesh, arrays.corner_verts, corner_normals, prepared)
    summary.objects += 1
    summary.faces += arrays.face_count
    return mesh


_triangle_starts = np.zeros(0, np.intc)


def triangle_starts(count: int) -> np.ndarray:
    """0, 3, 6...: the first corner of each of `count` triangles, as Blender takes them (sliced from one array for
    all the members of a pack)."""
    global _triangle_starts
    if len(_triangle_starts) < count:
        _triangle_starts = np.arange(max(count, 4096), dtype=np.intc) * 3
    return _triangle_starts[:count]


def import_joe_files(context: bpy.types.Context, paths: list[str], options: JoeImportOptions) -> Summary:
    made = textures.JoeMaterials()  # the materials of the models, by texture
    if options.matrix is not None and mesh_io.is_identity(options.matrix):  # (asked once, not once per member)
        options = dataclasses.replace(options, matrix=None)
    parsed: list[JoeSource] = []
    arrays_of: dict[int, list[joe_mesh.MeshArrays]] = {}  # id(source) -> its models' arrays

    def parse(path: str) -> JoeSource:
        parsed.append(parse_file(path, options.track_settings))
        return parsed[-1]

    def model_arrays(source: JoeSource) -> list[joe_mesh.MeshArrays]:
        """The source's mesh arrays; on the first call, those of every file of the import, made together (every
        file is parsed before any is built): a car's tens of small models cost as one."""
        if not arrays_of:
            documents = [document for each in parsed for _, document in each.models]
            arrays = iter(joe_mesh.mesh_arrays_of_many(documents, options.rewind_clockwise, options.apply_normal_swap))
            arrays_of.update((id(each), [next(arrays) for _ in each.models]) for each in parsed)
        return arrays_of.pop(id(source))

    def build(path: str, source: object, summary: Summary) -> None:
        assert isinstance(source, JoeSource)
        packed = path.lower().endswith(".jpk")
        summary.warnings += [f"{os.path.basename(path)}: {text}" for text in source.pack_warnings]
        taken_names: list[tuple[str, str]] = []
        said: dict[str, list[str]] = {}  # warning -> the models it concerns
        noted: dict[str, list[str]] = {}  # note -> the models it concerns
        members: list[str] = []
        meshes: list[tuple[str, bpy.types.Mesh, list[str]]] = []
        # Every mesh with its material first, then the objects: Blender's material append visits every object
        # in the file (a pack's members made one by one would cost the square of their number).
        for (name, document), model in zip(source.models, model_arrays(source), strict=True):
            mesh = build_model_mesh(name, model, options, summary)
            members.append(f"{name}.joe" if packed else os.path.basename(path))
            meshes.append((name, mesh, model.warnings))
            for text in document.notes:
                noted.setdefault(text, []).append(name)
            if options.find_textures:  # a member's texture is found by its name in the pack's folder
                textures.texture_joe_mesh(mesh, path, f"{name}.joe" if packed else None, summary, made)
        objects: list[bpy.types.Object] = []
        collection = context.collection
        for name, mesh, warnings in meshes:
            objects.append(mesh_io.link_new_object(context, name, mesh, warnings, taken_names, collection))
            for text in warnings:
                said.setdefault(text, []).append(name)
        summary.warnings += said_once(said)
        summary.notes += said_once(noted)
        if source.track is not None:
            summary.warnings += apply_track_list(source.track, list(zip(members, objects, strict=True)), packed)
        if taken_names:  # (one line for a pack imported twice, not one per member)
            summary.warnings.append(f"{os.path.basename(path)}: {mesh_io.taken_names_note(taken_names)}")

    textures.new_search()  # (once an import: a car's models share its folder and its .car files)
    with collector_paused():  # (a track's pack and list make tens of thousands of Python objects)
        return import_all(context, paths, parse, build)


def apply_track_list(track: TrackList, models: list[tuple[str, bpy.types.Object]], packed: bool) -> list[str]:
    """Each model's entry of the list as its object's settings (common/track_settings.py); the warnings."""
    name = os.path.basename(track.path)
    if track.objects is not None:
        text = bpy.data.texts.new(name)
        text.from_string(track.text)
        track_settings.apply_objects([(obj, track.objects.body_of(member)) for member, obj in models], text,
                                     track.objects)  # fmt: skip
        return []
    assert track.entries is not None
    first: dict[str, int] = {}
    for index, entry in enumerate(track.entries.entries):
        first.setdefault(entry.model, index)
    track_settings.apply_list([(obj, first.get(member)) for member, obj in models], track.entries)
    if not packed:
        return []
    warnings = []
    repeated = len(track.entries.entries) - len(first)
    if repeated:
        warnings.append(f"{name}: {repeated} entries repeat a model listed before; only the first one's settings "
                        "are kept, and written back")  # fmt: skip
    members = {member for member, _ in models}
    absent = [model for model in first if model not in members]
    if absent:
        warnings.append(f"{name}: {len(absent)} entries name models the pack does not have ({absent[0]!r}...); "
                        "they are left out when the pack is exported with its list")  # fmt: skip
    return warnings


# ------------------------------------------------------------------------------------------------- operator


@axis_options("import")
class IMPORT_SCENE_OT_joe(bpy.types.Operator, ImportFilesMixin, ImportHelper):
    """Import VDrift JOE models and JPK model packs"""

    bl_idname = "import_scene.joe"
    bl_label = "Import JOE/JPK"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".joe"
    filter_glob: StringProperty(default="*.joe;*.jpk", options={"HIDDEN"})

    rewind_clockwise: BoolProperty(
        name="Fix Clockwise Faces",
        default=True,
        description="Turn faces whose corner order opposes their normals, so Blender's face orientation matches",
    )
    apply_normal_swap: BoolProperty(
        name="VDrift Normal Swap",
        default=False,
        description="Swap the normals when VDrift's heuristic would (needed by dof2joe output, magic 0)",
    )
    use_custom_normals: BoolProperty(
        name="Custom Normals", default=True, description="Use the file's normals as custom split normals"
    )
    global_scale: FloatProperty(**IMPORT_SCALE)
    find_textures: BoolProperty(**textures.FIND_TEXTURES)
    use_track_settings: BoolProperty(
        name="Track Object Settings",
        default=True,
        description="Read the track's object list beside the pack (objects/list.txt or objects.txt): each model's "
        "settings (mipmap, lighting, transparency, collision, surface...) become its object's custom properties, "
        "written back with the list on JPK export",
    )

    def execute(self, context: bpy.types.Context) -> set[str]:
        options = JoeImportOptions(
            rewind_clockwise=self.rewind_clockwise,
            apply_normal_swap=self.apply_normal_swap,
            use_custom_normals=self.use_custom_normals,
            matrix=import_matrix(self),
            find_textures=self.find_textures,
            track_settings=self.use_track_settings,
        )
        return guarded(self, lambda: import_joe_files(context, self.selected_paths(), options), "Imported")

    def draw(self, context: bpy.types.Context) -> None:
        draw_joe_import_options(self.layout, self)


def draw_joe_import_options(layout: bpy.types.UILayout, operator: object) -> None:
    prepare_layout(layout)
    draw_panel(
        layout, operator, "IOGF_joe_import_geometry", "Geometry",
        ("rewind_clockwise", "use_custom_normals", "apply_normal_swap", "find_textures", "use_track_settings"),
    )  # fmt: skip
    draw_panel(
        layout, operator, "IOGF_joe_import_transform", "Transform", ("global_scale", "forward_axis", "up_axis")
    )  # fmt: skip


IOGF_FH_joe = file_handler("IOGF_FH_joe", "VDrift JOE", "import_scene.joe", "export_scene.joe", ".joe;.jpk")

# The JPK Collection Exporter; drops of .jpk files go to the handler above, with any .joe files dropped beside them.
IOGF_FH_jpk = file_handler("IOGF_FH_jpk", "VDrift JPK", "import_scene.joe", "export_scene.jpk", ".jpk", drops=False)

def menu_import(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    self.layout.operator(IMPORT_SCENE_OT_joe.bl_idname, text="VDrift JOE/JPK (.joe, .jpk)")


classes = (IMPORT_SCENE_OT_joe, IOGF_FH_joe, IOGF_FH_jpk)
