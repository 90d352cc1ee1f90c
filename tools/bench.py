"""Every benchmark in one run and one table: each format's import and export against Blender's C++ OBJ
importer/exporter on the same geometry, cases OBJ has nothing like against the bpy calls alone (the "floor"), the
QMAP compiler against the original Tools.exe, and the peak memory of each.

    .venv/bin/python tools/bench.py [--repeat 3] [--runs 2] [--sizes 100k,1m] [--only smd,iqe,track,...]
                                    [--tools-exe PATH]        (or $IOGF_TOOLS_EXE; needs Wine)
                                    [--write-docs docs/benchmarks.md]

Mesh cases, at each size: a smooth UV-mapped grid (vertices shared by their faces) and the same surface with every
triangle corner distinct (hard edges and UV seams everywhere). "floor" is how long the bpy calls alone take to
build the same mesh from ready arrays (vertices, corners, faces, UVs): our import time over it shows what the
format's parsing and conversions cost. JOE holds at most 32,000 faces per file, so JOE cases are JPK packs of
25,000-triangle members.

Cases of one size each (`--only` names in brackets):
- [track] a track-like JPK of 2,000 small JOE members (24-300 triangles) sharing 300 tiny PNG textures named by
  a VDrift list.txt beside it: imported (textures found, materials made) and exported again, against OBJ
  importing and exporting the same 2,000 objects (an OBJ with 2,000 `o` objects and a .mtl naming the images);
- [car] a car-like folder of 30 JOE models (50-2,000 triangles), each with its own PNG, named by two `.car` files
  beside them (29 parts, and four wheels of one model with their tyres): the 30 files imported at once (as selected
  in the file browser), and the car from its `.car` file (its wheels and tyres placed), each against OBJ importing
  the same objects with their images;
- [many] an IQE of 100 small meshes (968 triangles each, a material each), imported and exported, and a QC of 60
  such SMDs ($body), imported, against OBJ importing and exporting the same objects: the cost of each object;
- [joints] an IQE of 8,000 joints in a tree with their `pq` base poses and no mesh, imported, against the floor:
  bpy making 8,000 bones (head, tail, parent) in one edit-mode session;
- [animated] an IQE of 100k triangles skinned to 50 joints with a 100-frame animation (and again with 400 frames,
  and with 200 joints: as many more joint-frames each way), imported and exported, against its floor: for import,
  making the mesh (UVs, custom normals), the armature and the action's F-curves from ready arrays (foreach_set,
  keyframe_points.add); for export, reading every array the exporter needs and the action's keys (foreach_get).
  The floor makes no vertex groups (no bpy call makes them in bulk): ours does.

QMAP compile, at each size: the generated scenes of tools/bench_qmap.py, compiled by `python -m qmap_compiler` as a
child process timed whole (spawn to exit; its bytecode compiled beforehand, as Python leaves it after a first
run), and by Tools.exe under Wine the same way, with the Wine server kept running (its start-up not counted);
Tools.exe is never shipped: take it from the TFQ repository. Without it the compile rows show our figures only.

Ratios are our time over the peer's: lower is better, 1.0 is as fast. Peak memory is the peak resident set of the
whole process while the case ran: the benchmark process itself (Blender included; its peak, VmHWM, is reset before
each run) for imports, exports and floors; the child process alone for the compiler and Tools.exe (os.wait4's
rusage of that child). --write-docs writes the table, the machine and the command line as a Markdown page, with
an SVG chart beside it (tools/bench_report.py). Figures only, no asserts.
"""

from __future__ import annotations

import argparse
import compileall
import datetime
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_cases import Skeleton, car_folder, many_meshes_iqe, many_smds_qc, skeleton, track_pack
from bench_report import machine_info, text_table, write_report
from bench_timing import BenchRow, peak_memory_mb, release_free_memory, reset_peak_memory, whole_process
from bpy_extension import enable_extension  # must come before `import bpy`

enable_extension()
import bpy  # noqa: E402
from bench_iqe import read_floor  # noqa: E402
from bench_iqe_codec import grid_document  # noqa: E402
from bench_qmap import generate_scene  # noqa: E402

from formats.iqe import IqeDocument, save_iqe  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
EXTENSION = "bl_ext.dev.io_game_formats"  # the extension's package, as tools/bpy_extension.py loads it

SIZES = {"100k": 100_000, "1m": 1_000_000}
MEMBER_TRIANGLES = 25_000  # JOE members of a JPK pack (a JOE file holds at most 32,000 faces)
# format: (extension, import operator, export operator, extra export options)
FORMATS: dict[str, tuple[str, str, str, dict[str, object]]] = {
    "JOE": (".jpk", "import_scene.joe", "export_scene.jpk", {}),
    "SMD": (".smd", "import_scene.valve_smd", "export_scene.valve_smd", {}),
    "IQE": (".iqe", "import_scene.iqe", "export_scene.iqe", {}),
    "IQM": (".iqm", "import_scene.iqm", "export_scene.iqm", {}),
    "QMAP": (".qmap.tmp", "import_scene.qmap_tmp", "export_scene.qmap_tmp", {"write_desc": False}),
}
CASES = ("TRACK", "CAR", "MANY", "JOINTS", "ANIMATED")  # the cases of one size each (see the module's docstring)
TRACK_MEMBERS, TRACK_TEXTURES = 2000, 300
JOINTS = 8000
ANIMATED_SIDE = 224  # 224 quads a side: 100,352 triangles
# (joints, frames) of the animated cases: the second and third add as many joint-frames to the first, one by frames
# and one by joints, so that the time above the floor shows whether it grows with joints x frames alone
ANIMATED_SIZES = ((50, 100), (50, 400), (200, 100))
NO_TOOLS_EXE = "not run (no --tools-exe)"


def timed(repeat: int, setup: Callable[[], object], work: Callable[[], object]) -> tuple[float, float]:
    """Best time of `repeat` runs, and the highest peak resident set of this whole process (MB) during any of
    them: the peak (VmHWM) is reset to the resident set before each run, so that an earlier case's does not count."""
    best, peak = float("inf"), 0.0
    for _ in range(repeat):
        setup()
        os.sync()  # files written by earlier runs reach the disk now, not while this one is timed
        release_free_memory()
        reset_peak_memory()
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
        peak = max(peak, peak_memory_mb())
    return best, peak


def nothing() -> None:
    """No setup: the run works on what the previous step left (an export of the scene just imported)."""


def operator(idname: str) -> Callable[..., set[str]]:
    module, name = idname.split(".")
    function: Callable[..., set[str]] = getattr(getattr(bpy.ops, module), name)
    return function


# ------------------------------------------------------------------------------------------------ geometry


def surface(triangles: int, distinct: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(positions, triangle corner indices, corner UVs) of a wavy grid with about `triangles` triangles; with
    `distinct`, every corner has its own vertex."""
    side = int(np.sqrt(triangles / 2))
    xs, ys = np.meshgrid(np.linspace(0, 10, side + 1), np.linspace(0, 10, side + 1))
    zs = np.sin(xs * 1.3) * np.cos(ys * 0.7)
    positions = np.stack([xs.ravel(), ys.ravel(), zs.ravel()], axis=1).astype(np.float32)
    corner = (np.arange(side)[:, None] * (side + 1) + np.arange(side)[None, :]).ravel()
    quads = np.stack([corner, corner + 1, corner + side + 2, corner + side + 1], axis=1)
    tris = np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]]).astype(np.intc)
    uvs = positions[tris.ravel(), :2] / 10
    if distinct:
        positions = positions[tris.ravel()]
        tris = np.arange(tris.size, dtype=np.intc).reshape(-1, 3)
        uvs = uvs + np.repeat(np.arange(len(tris)) % 7, 3)[:, None] * 0.001  # a seam at every edge
    return positions, tris, uvs.astype(np.float32)


def build_mesh(name: str, positions: np.ndarray, tris: np.ndarray, uvs: np.ndarray, smooth: bool) -> bpy.types.Mesh:
    """The bpy calls alone: the floor every importer stands on."""
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(len(positions))
    mesh.vertices.foreach_set("co", positions.ravel())
    mesh.loops.add(tris.size)
    mesh.loops.foreach_set("vertex_index", tris.ravel())
    mesh.polygons.add(len(tris))
    mesh.polygons.foreach_set("loop_start", np.arange(len(tris), dtype=np.intc) * 3)
    mesh.update(calc_edges=True)
    mesh.polygons.foreach_set("use_smooth", np.full(len(tris), smooth))
    mesh.uv_layers.new(name="UVMap").uv.foreach_set("vector", uvs.ravel())
    return mesh


def scene(triangles: int, distinct: bool, member_triangles: int | None) -> None:
    """An empty scene holding the surface: one object, or objects of `member_triangles` (JPK members)."""
    bpy.ops.wm.read_homefile(use_empty=True)
    parts = 1 if member_triangles is None else max(1, triangles // member_triangles)
    for index in range(parts):
        positions, tris, uvs = surface(triangles // parts, distinct)
        positions = positions + np.float32([index * 11, 0, 0])
        mesh = build_mesh(f"part{index:02d}", positions, tris, uvs, smooth=not distinct)
        bpy.context.scene.collection.objects.link(bpy.data.objects.new(f"part{index:02d}", mesh))


def empty() -> None:
    bpy.ops.wm.read_homefile(use_empty=True)


# ------------------------------------------------------------------------------------------------ cases


def mesh_rows(name: str, size: str, distinct: bool, repeat: int, folder: Path) -> list[BenchRow]:
    extension, import_id, export_id, options = FORMATS[name]
    triangles = SIZES[size]
    kind = "every corner distinct" if distinct else "grid"
    members = MEMBER_TRIANGLES if name == "JOE" else None
    ours_file, obj_file = folder / f"bench{extension}", folder / "bench.obj"
    export_ours = operator(export_id)
    import_ours = operator(import_id)

    def make_scene() -> None:
        scene(triangles, distinct, members)

    ours_export = timed(repeat, make_scene, lambda: export_ours(filepath=str(ours_file),
                                                               **options))  # fmt: skip
    obj_export = timed(repeat, make_scene, lambda: bpy.ops.wm.obj_export(
        filepath=str(obj_file), export_selected_objects=False, export_materials=False))  # fmt: skip
    ours_import = timed(repeat, empty, lambda: import_ours(filepath=str(ours_file)))
    made = sum(len(o.data.polygons) for o in bpy.data.objects if o.type == "MESH")
    obj_import = timed(repeat, empty, lambda: bpy.ops.wm.obj_import(filepath=str(obj_file)))
    positions, tris, uvs = surface(triangles, distinct)
    floor, _ = timed(repeat, empty, lambda: build_mesh("floor", positions, tris, uvs, smooth=not distinct))
    case = f"{size} triangles, {kind}"
    return [
        BenchRow(name, f"import {case} ({made:,} made)", ours_import[0], ours_import[1], "OBJ", obj_import[0],
                 obj_import[1], floor),
        BenchRow(name, f"export {case}", ours_export[0], ours_export[1], "OBJ", obj_export[0], obj_export[1]),
    ]


def track_rows(repeat: int, folder: Path) -> list[BenchRow]:
    """A track-like JPK of many small members whose textures list.txt names, against OBJ with the same objects."""
    pack = track_pack(folder / "track", TRACK_MEMBERS, TRACK_TEXTURES)
    ours_out = folder / "track_out" / "track_out.jpk"  # (in a folder of its own: the export writes a list.txt
    ours_out.parent.mkdir(exist_ok=True)  # beside it, which the other cases' JOE imports would read)
    obj_file = pack.path.with_suffix(".obj")  # beside the images: its .mtl names them relative to it

    def import_ours() -> None:
        bpy.ops.import_scene.joe(filepath=str(pack.path))

    ours_import = timed(repeat, empty, import_ours)
    objects = sum(1 for o in bpy.data.objects if o.type == "MESH")
    made = f"{objects:,} objects, {len(bpy.data.materials)} materials, {len(bpy.data.images)} images made"
    ours_export = timed(repeat, nothing, lambda: bpy.ops.export_scene.jpk(filepath=str(ours_out)))
    obj_export = timed(repeat, nothing, lambda: bpy.ops.wm.obj_export(
        filepath=str(obj_file), export_selected_objects=False, export_materials=True))  # fmt: skip
    obj_import = timed(repeat, empty, lambda: bpy.ops.wm.obj_import(filepath=str(obj_file)))
    obj_objects = sum(1 for o in bpy.data.objects if o.type == "MESH")
    if obj_objects != objects:
        print(f"note: OBJ made {obj_objects:,} objects, ours {objects:,}", flush=True)
    case, triangles = f"{pack.members:,} small members with textures", f"{pack.triangles / 1000:.0f}k triangles"
    return [
        BenchRow("JPK", f"import {case} ({triangles}; {made})", ours_import[0], ours_import[1], "OBJ",
                 obj_import[0], obj_import[1]),
        BenchRow("JPK", f"export {case} ({triangles})", ours_export[0], ours_export[1], "OBJ", obj_export[0],
                 obj_export[1]),
    ]


def car_rows(repeat: int, folder: Path) -> list[BenchRow]:
    """A car folder's JOE files imported at once, and the car from its .car file, against OBJ importing the same
    objects with their images."""
    car = car_folder(folder / "car")
    files = [{"name": path.name} for path in car.models]
    obj_file = car.car.with_name("car.obj")  # beside the images: its .mtl names them relative to it
    rows = []
    for what, run in (
        (f"a car folder: {len(car.models)} files at once", lambda: bpy.ops.import_scene.joe(
            directory=str(car.car.parent), files=files)),
        ("a car from its .car file", lambda: bpy.ops.import_scene.vdrift_car(filepath=str(car.car))),
    ):  # fmt: skip
        ours = timed(repeat, empty, run)
        meshes = [o for o in bpy.data.objects if o.type == "MESH"]
        triangles = sum(len(o.data.polygons) for o in meshes)
        made = f"{len(meshes)} objects, {len(bpy.data.materials)} materials, {len(bpy.data.images)} images made"
        bpy.ops.wm.obj_export(filepath=str(obj_file), export_selected_objects=False, export_materials=True)
        obj = timed(repeat, empty, lambda: bpy.ops.wm.obj_import(filepath=str(obj_file)))
        case = f"import {what} ({triangles / 1000:.0f}k faces; {made})"
        rows.append(BenchRow("JOE", case, ours[0], ours[1], "OBJ", obj[0], obj[1]))
    return rows


def many_rows(repeat: int, folder: Path) -> list[BenchRow]:
    """An IQE of 100 small meshes and a QC of 60 small SMDs, each mesh with its own material: what a file of many
    objects costs per object, against OBJ importing (and exporting) the same objects."""
    iqe_path, obj_file = folder / "many.iqe", folder / "many.obj"
    iqe_triangles = many_meshes_iqe(iqe_path)
    ours_import = timed(repeat, empty, lambda: bpy.ops.import_scene.iqe(filepath=str(iqe_path)))
    iqe_objects = sum(1 for o in bpy.data.objects if o.type == "MESH")
    ours_export = timed(repeat, nothing, lambda: bpy.ops.export_scene.iqe(filepath=str(folder / "many_out.iqe")))
    obj_export = timed(repeat, nothing, lambda: bpy.ops.wm.obj_export(
        filepath=str(obj_file), export_selected_objects=False, export_materials=True))  # fmt: skip
    obj_import = timed(repeat, empty, lambda: bpy.ops.wm.obj_import(filepath=str(obj_file)))
    qc_path, qc_triangles = many_smds_qc(folder / "many_qc")
    qc_import = timed(repeat, empty, lambda: bpy.ops.import_scene.valve_smd(filepath=str(qc_path)))
    qc_objects = sum(1 for o in bpy.data.objects if o.type == "MESH")
    qc_obj_file = folder / "many_qc.obj"
    bpy.ops.wm.obj_export(filepath=str(qc_obj_file), export_selected_objects=False, export_materials=True)
    qc_obj_import = timed(repeat, empty, lambda: bpy.ops.wm.obj_import(filepath=str(qc_obj_file)))
    iqe_case = f"{iqe_objects} meshes of {iqe_triangles // iqe_objects:,} triangles, a material each"
    return [
        BenchRow("IQE", f"import {iqe_case}", ours_import[0], ours_import[1], "OBJ", obj_import[0], obj_import[1]),
        BenchRow("IQE", f"export {iqe_case}", ours_export[0], ours_export[1], "OBJ", obj_export[0], obj_export[1]),
        BenchRow("QC", f"import {qc_objects} SMDs of {qc_triangles // max(qc_objects, 1):,} triangles, a material "
                 "each", qc_import[0], qc_import[1], "OBJ", qc_obj_import[0], qc_obj_import[1]),
    ]


def bones_floor(bones: Skeleton, heads: list[list[float]], tails: list[list[float]]) -> bpy.types.Object:
    """The bpy calls alone that make the skeleton's bones: one edit-mode session of edit_bones.new, head, tail,
    parent. Returns the armature object."""
    armature = bpy.data.armatures.new("floor")
    obj = bpy.data.objects.new("floor", armature)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    edit_bones = armature.edit_bones
    made: list[bpy.types.EditBone] = []
    for name, parent, head, tail in zip(bones.names, bones.parents, heads, tails, strict=True):
        bone = edit_bones.new(name)
        bone.head = head
        bone.tail = tail
        if parent >= 0:
            bone.parent = made[parent]
        made.append(bone)
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj


def joints_rows(repeat: int, folder: Path) -> list[BenchRow]:
    """An IQE of a large skeleton and no mesh, against the bpy calls that make as many bones."""
    bones = skeleton(JOINTS)
    source = folder / "joints.iqe"
    source.write_text(bones.iqe_text(), encoding="ascii")
    ours = timed(repeat, empty, lambda: bpy.ops.import_scene.iqe(filepath=str(source)))
    made = sum(len(o.data.bones) for o in bpy.data.objects if o.type == "ARMATURE")
    heads, tails = (array.tolist() for array in bones.heads_and_tails())
    floor = timed(repeat, empty, lambda: bones_floor(bones, heads, tails))
    return [BenchRow("IQE", f"import {JOINTS:,} joints, no mesh ({made:,} bones made)", ours[0], ours[1], "floor",
                     floor[0], floor[1], floor=floor[0])]  # fmt: skip


class AnimatedArrays:
    """What the bpy calls of the animated IQE's import floor take, ready: mesh arrays, bones, F-curve keys."""

    def __init__(self, document: IqeDocument) -> None:
        mesh = document.meshes[0]
        self.positions = np.ascontiguousarray(mesh.positions, np.float32)
        self.corners = mesh.blender_corners().astype(np.intc)
        texcoords = mesh.blender_texcoords()
        assert texcoords is not None and mesh.normals is not None
        self.uvs = np.ascontiguousarray(texcoords[self.corners], np.float32)
        self.normals = np.asarray(mesh.normals, np.float64)
        poses = document.base_pose_array()
        self.bones = Skeleton([j.name for j in document.joints], [j.parent for j in document.joints], poses[:, :7])
        heads, tails = self.bones.heads_and_tails()
        self.heads, self.tails = heads.tolist(), tails.tolist()
        animation = document.animations[0]
        frames = animation.frames
        if animation.loop:  # (as the importer keys a looping animation: its first pose again at the end)
            frames = np.concatenate((frames, frames[:1]))
        times = 1.0 + np.arange(len(frames), dtype=np.float32)
        channels = (("location", [0, 1, 2]), ("rotation_quaternion", [6, 3, 4, 5]), ("scale", [7, 8, 9]))
        self.curves: list[tuple[str, int, str, np.ndarray]] = []  # (data path, index, group, keys (time, value))
        for row, name in enumerate(self.bones.names):
            for prop, columns in channels:
                for index, column in enumerate(columns):
                    keys = np.column_stack([times, frames[:, row, column]]).astype(np.float32).ravel()
                    self.curves.append((f'pose.bones["{name}"].{prop}', index, name, keys))


def animated_floor(arrays: AnimatedArrays) -> None:
    """The bpy calls alone that make what the animated IQE's import makes (bar the vertex groups): the mesh with
    its UVs and custom normals, the armature's bones, and the action's F-curves from ready keys."""
    compat = sys.modules[f"{EXTENSION}.common.compat"]
    mesh = bpy.data.meshes.new("floor")
    mesh.vertices.add(len(arrays.positions))
    mesh.attributes["position"].data.foreach_set("vector", arrays.positions.ravel())
    mesh.loops.add(len(arrays.corners))
    mesh.attributes[".corner_vert"].data.foreach_set("value", arrays.corners)
    mesh.polygons.add(len(arrays.corners) // 3)
    mesh.polygons.foreach_set("loop_start", np.arange(0, len(arrays.corners), 3, dtype=np.intc))
    mesh.update(calc_edges=True)
    mesh.uv_layers.new(name="UVMap", do_init=False).uv.foreach_set("vector", arrays.uvs.ravel())
    mesh.polygons.foreach_set("use_smooth", np.ones(len(mesh.polygons), bool))
    mesh.normals_split_custom_set_from_vertices(arrays.normals)
    obj = bpy.data.objects.new("floor", mesh)
    bpy.context.scene.collection.objects.link(obj)
    rig = bones_floor(arrays.bones, arrays.heads, arrays.tails)
    obj.parent = rig
    obj.modifiers.new("Armature", "ARMATURE").object = rig
    action = bpy.data.actions.new("floor")
    slot, channels = compat.new_action_channels(action, rig)
    for path, index, group, keys in arrays.curves:
        curve = compat.new_fcurve(channels, path, index, group)
        points = curve.keyframe_points
        points.add(len(keys) // 2)
        points.foreach_set("co", keys)
        points.foreach_set("interpolation", np.ones(len(keys) // 2, np.intc))  # linear
        curve.update()
    for bone in rig.pose.bones:
        bone.rotation_mode = "QUATERNION"
    animation = rig.animation_data_create()
    animation.action = action
    if slot is not None:
        animation.action_slot = slot


def read_action_floor() -> None:
    """The bpy side of the animated export alone: bench_iqe's read_floor (every mesh array and vertex weight the
    exporter reads), and every key of the armatures' actions (one foreach_get per F-curve)."""
    animation = sys.modules[f"{EXTENSION}.common.animation"]
    read_floor()
    for obj in bpy.context.scene.objects:
        source = animation.active_action(obj) if obj.type == "ARMATURE" else None
        for curve in animation.fcurves_of(source) if source is not None else ():
            points = curve.keyframe_points
            points.foreach_get("co", np.empty(2 * len(points), np.float32))


def animated_rows(repeat: int, folder: Path) -> list[BenchRow]:
    """bench_iqe.py's animated grid (100k triangles) at each of ANIMATED_SIZES, imported and exported, against the
    bpy calls alone that make (import) or read (export) the same data."""
    return [row for joints, frames in ANIMATED_SIZES for row in animated_size_rows(repeat, folder, joints, frames)]


def animated_size_rows(repeat: int, folder: Path, joint_count: int, frame_count: int) -> list[BenchRow]:
    document = grid_document(ANIMATED_SIDE, joint_count=joint_count, frame_count=frame_count)
    source, ours_out = folder / "animated.iqe", folder / "animated_out.iqe"
    save_iqe(source, document)
    ours_import = timed(repeat, empty, lambda: bpy.ops.import_scene.iqe(filepath=str(source)))
    triangles = sum(len(o.data.polygons) for o in bpy.data.objects if o.type == "MESH")
    ours_export = timed(repeat, nothing, lambda: bpy.ops.export_scene.iqe(filepath=str(ours_out)))
    export_floor = timed(repeat, nothing, read_action_floor)
    arrays = AnimatedArrays(document)
    import_floor = timed(repeat, empty, lambda: animated_floor(arrays))
    joints, frames = len(document.joints), frame_count
    case = f"{triangles // 1000}k triangles, {joints} joints, {frames} frames"
    return [
        BenchRow("IQE", f"import {case}", ours_import[0], ours_import[1], "floor", import_floor[0], import_floor[1],
                 floor=import_floor[0]),
        BenchRow("IQE", f"export {case}", ours_export[0], ours_export[1], "floor", export_floor[0], export_floor[1],
                 floor=export_floor[0]),
    ]


def tools_exe_run(tools_exe: str, tmp: Path, desc: Path, out: Path) -> tuple[float, float]:
    """Tools.exe under Wine, timed as a whole process: wall time and its maximum resident set (MB)."""
    command = ["wine", tools_exe, "/Map", f"/i={tmp}", f"/d={desc}", f"/o={out}"]
    elapsed, peak, code = whole_process(command, out.with_suffix(".log"), env={**os.environ, "WINEDEBUG": "-all"})
    if code != 0:
        raise RuntimeError(f"Tools.exe failed ({code}); see {out.with_suffix('.log')}")
    return elapsed, peak


def compiler_run(tmp: Path, desc: Path, out: Path) -> tuple[float, float]:
    """`python -m qmap_compiler` (this Python, from the repository root) as a whole process: wall time from spawn
    to exit and its maximum resident set (MB). The .qmap.desc is given, as to Tools.exe."""
    command = [sys.executable, "-m", "qmap_compiler", str(tmp), "-d", str(desc), "-o", str(out)]
    elapsed, peak, code = whole_process(command, out.with_suffix(".log"), cwd=REPO_ROOT)
    if code != 0:
        raise RuntimeError(f"python -m qmap_compiler failed ({code}); see {out.with_suffix('.log')}")
    return elapsed, peak


def compile_rows(size: str, repeat: int, folder: Path, tools_exe: str | None) -> list[BenchRow]:
    faces = SIZES[size]
    steps, spread, share = (5, 60.0, 0.1) if faces <= 100_000 else (10, 200.0, 0.4)
    tmp, desc, count = generate_scene(folder, f"compile{size}", faces, steps, spread, share, 2024)
    ours_out, peer_out = folder / f"ours{size}.qmap", folder / f"peer{size}.qmap"
    # Bytecode compiled beforehand, as Python leaves it after a user's first run (here it may not be: where
    # PYTHONDONTWRITEBYTECODE is set, every run would compile the package's sources again).
    compileall.compile_dir(REPO_ROOT / "qmap_compiler", quiet=1)
    ours = [compiler_run(tmp, desc, ours_out) for _ in range(repeat)]
    row = BenchRow("QMAP compile", f"{count:,} faces, whole process", min(r[0] for r in ours), max(r[1] for r in ours),
                   peer="Tools.exe", peer_note=NO_TOOLS_EXE)  # fmt: skip
    if tools_exe:
        runs = [tools_exe_run(tools_exe, tmp, desc, peer_out) for _ in range(repeat)]
        row.peer_time, row.peer_peak_mb, row.peer_note = min(r[0] for r in runs), max(r[1] for r in runs), None
        if ours_out.read_bytes() != peer_out.read_bytes():
            row.case += " (OUTPUT DIFFERS)"
    return [row]


def start_wine(tools_exe: str, folder: Path) -> bool:
    """Keep the Wine server running and warm it up, so that Wine's start-up is not counted. Whether this started
    it (no Wine server was running; without pgrep to tell, one is assumed to be)."""
    running = shutil.which("pgrep") is None or subprocess.run(["pgrep", "-x", "wineserver"], check=False,
                                                              stdout=subprocess.DEVNULL).returncode == 0  # fmt: skip
    subprocess.Popen(["wineserver", "-p"], env={**os.environ, "WINEDEBUG": "-all"}, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    tmp, desc, _ = generate_scene(folder, "warmup", 10, 2, 5.0, 0.0, 1)
    tools_exe_run(tools_exe, tmp, desc, folder / "warmup.qmap")
    return not running


# ------------------------------------------------------------------------------------------------ table


def whole_run(sizes: list[str], chosen: set[str], repeat: int, folder: Path, tools_exe: str | None) -> list[BenchRow]:
    """Every chosen case once (each the best of `repeat`)."""
    rows: list[BenchRow] = []
    for size in sizes:
        for name in FORMATS:
            if chosen and name not in chosen:
                continue
            for distinct in (False, True):
                rows += mesh_rows(name, size, distinct, repeat, folder)
                print(f"done: {name} {size} {'distinct' if distinct else 'grid'}", flush=True)
    cases = {"TRACK": track_rows, "CAR": car_rows, "MANY": many_rows, "JOINTS": joints_rows, "ANIMATED": animated_rows}
    for name, case_rows in cases.items():
        if not chosen or name in chosen:
            rows += case_rows(repeat, folder)
            print(f"done: {name.lower()}", flush=True)
    if not chosen or "COMPILE" in chosen:
        for size in sizes:
            rows += compile_rows(size, repeat, folder, tools_exe)
            print(f"done: compile {size}", flush=True)
    return rows


def print_table(rows: list[BenchRow]) -> None:
    print("\n" + text_table(rows))
    print("ours/peer: our time over the peer's in this run (lower is better); ours/floor: our time over the bpy calls "
          "alone that build or read the same data from ready arrays; peak MB: the whole process's peak resident set "
          "while the case ran (this process for imports and exports, the child process for compiles)")


def command_line() -> str:
    """This run's command line as typed from the repository root (the Python by its path relative to it)."""
    python = sys.executable
    relative = os.path.relpath(python)
    return shlex.join([relative if not relative.startswith("..") else python, *sys.argv])


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--repeat", type=int, default=3, help="runs of each case; the best time is shown (default: 3)")
    parser.add_argument("--runs", type=int, default=1, help="whole runs of every case; the table gives the first "
                        "run's figures and every run's ratio (default: 1)")  # fmt: skip
    parser.add_argument("--sizes", default="100k", help="comma-separated: 100k, 1m (default: 100k)")
    parser.add_argument("--only", default="", help="comma-separated: joe, smd, iqe, iqm, qmap (mesh cases at each "
                        "size), track (JPK of 2,000 members with textures), car (30 JOE files with textures), many "
                        "(IQE of 100 meshes, QC of 60 SMDs), joints (IQE of 8,000 joints), animated (IQE 100k "
                        "triangles; 50 joints x 100 frames, 50 x 400, 200 x 100), compile (default: all)")
    parser.add_argument("--tools-exe", default=os.environ.get("IOGF_TOOLS_EXE"),
                        help="Tools.exe, run under Wine (default: $IOGF_TOOLS_EXE)")  # fmt: skip
    parser.add_argument("--write-docs", type=Path, metavar="PAGE.md",
                        help="also write the table, machine and command line as a Markdown page, with its SVG chart "
                        "beside it (PAGE.svg), e.g. docs/benchmarks.md")  # fmt: skip
    args = parser.parse_args()
    sizes = [size.strip().lower() for size in args.sizes.split(",") if size.strip()]
    chosen = {name.strip().upper() for name in args.only.split(",") if name.strip()}
    if unknown := [size for size in sizes if size not in SIZES]:
        parser.error(f"unknown size {unknown[0]!r}; known: {', '.join(SIZES)}")
    if unknown_names := sorted(chosen - {*FORMATS, *CASES, "COMPILE"}):
        parser.error(f"unknown case {unknown_names[0].lower()!r}; known: {', '.join([*FORMATS, *CASES]).lower()}, "
                     "compile")  # fmt: skip
    if chosen and "COMPILE" not in chosen:
        args.tools_exe = None  # (no compile row: Tools.exe is not needed, nor Wine)
    if args.tools_exe and shutil.which("wine") is None:
        parser.error("--tools-exe needs Wine (Debian: apt-get install wine wine32:i386)")
    command, date = command_line(), datetime.date.today().isoformat()
    folder = Path(tempfile.mkdtemp(prefix="iogf-bench-"))
    print(f"Blender {bpy.app.version_string}, best of {args.repeat}, {args.runs} whole run(s); Tools.exe: "
          f"{args.tools_exe or 'not given'}")  # fmt: skip
    started_wine = False
    try:
        if args.tools_exe and (not chosen or "COMPILE" in chosen):
            started_wine = start_wine(args.tools_exe, folder)
        runs = [whole_run(sizes, chosen, args.repeat, folder, args.tools_exe) for _ in range(args.runs)]
    finally:
        if started_wine:  # the Wine server this run started goes down with it (one running before stays up)
            subprocess.run(["wineserver", "-k"], env={**os.environ, "WINEDEBUG": "-all"}, check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        shutil.rmtree(folder, ignore_errors=True)
    rows = runs[0]
    for index, row in enumerate(rows):  # (each run's ratio beside the first run's figures)
        row.run_ratios = [run[index].ratio for run in runs]
    print_table(rows)
    if args.write_docs:
        chart = write_report(rows, args.write_docs, machine_info(bpy.app.version_string), command, date)
        print(f"wrote {args.write_docs} and {chart}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
