"""The example script: build a small scene, export it to every implemented format, import each
result back, render a Workbench view of every imported result into one picture, build the installable zip into
dist/, and print a summary. Output goes to out/.

    bash tools/example.sh          (sets up .venv if missing, then runs this)
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bpy_extension import REPO_ROOT, enable_extension  # must come before `import bpy`

extension = enable_extension()
import bpy  # noqa: E402
import numpy as np  # noqa: E402
from mathutils import Vector  # noqa: E402

OUT = Path(os.environ.get("IOGF_EXAMPLE_OUT", REPO_ROOT / "out"))  # overridable for the test of the example script
DIST = Path(os.environ.get("IOGF_EXAMPLE_DIST", REPO_ROOT / "dist"))
VIEW_SIZE = (360, 240)  # pixels of each format's view in the picture
# Warnings the example scene causes on purpose, and why: printed with the summary so that a clean run is visible.
EXPECTED_WARNINGS = {
    "armature objects are not exported to QMAP": "QMAP maps are static: the rig is left out of both QMAP exports",
    "cannot hold its shape keys": "the body's shape key is for the SMD's .vta; the other formats have no morphs",
    "which the Reference mode leaves out": "the example writes the body's .vta in an export of its own",
}


def material(name: str, colour: tuple[float, float, float, float]) -> bpy.types.Material:
    mat = bpy.data.materials.new(name)
    mat.diffuse_color = colour
    return mat


def example_scene() -> None:
    """A toy car: a bevelled body with UVs, sharp edges and a shape key, skinned to a small rig with a
    10-frame "Bounce" action; four smooth wheels; and a separate glass part."""
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.mesh.primitive_cube_add(size=1.0)
    body = bpy.context.active_object
    body.name = "body"
    body.scale = (1.8, 4.2, 0.9)
    body.location = (0, 0, 0.75)
    bpy.ops.object.transform_apply(location=False, rotation=False, scale=True)
    body.modifiers.new("Bevel", "BEVEL").width = 0.05
    body.data.materials.append(material("paint", (0.8, 0.1, 0.1, 1)))
    body.shape_key_add(name="Basis")
    squash = body.shape_key_add(name="Squash")
    squash.value = 0.0  # (new keys start at 1.0 on Blender 5.0+, at 0 before)
    squash.data.foreach_set("co", [c * (1.0 if i % 3 != 2 else 0.7) for i, c in enumerate(
        value for vertex in body.data.vertices for value in vertex.co)])  # fmt: skip
    rig_body(body)
    rig = bpy.data.objects["rig"]
    bpy.ops.mesh.primitive_uv_sphere_add(segments=24, ring_count=12, radius=0.7, location=(0, -0.3, 1.3))
    glass = bpy.context.active_object
    glass.name = "glass"
    glass.scale = (1.1, 1.6, 0.5)
    glass.data.materials.append(material("glass", (0.2, 0.3, 0.4, 0.5)))
    bpy.ops.object.shade_smooth()
    skin_to(glass, rig, "body")
    tyre = material("tyre", (0.05, 0.05, 0.05, 1))
    for index, (x, y) in enumerate(((-0.9, 1.3), (0.9, 1.3), (-0.9, -1.3), (0.9, -1.3))):
        bpy.ops.mesh.primitive_cylinder_add(vertices=32, radius=0.35, depth=0.25, location=(x, y, 0.35))
        wheel = bpy.context.active_object
        wheel.name = f"wheel{index}"
        wheel.rotation_euler = (0, math.pi / 2, 0)
        wheel.data.materials.append(tyre)
        bpy.ops.object.shade_smooth_by_angle(angle=math.radians(40))
        skin_to(wheel, rig, "root")


def skin_to(obj: bpy.types.Object, rig: bpy.types.Object, bone: str) -> None:
    """Every vertex of `obj` follows `bone` (the glass rides with the body, the wheels with the root)."""
    group = obj.vertex_groups.new(name=bone)
    group.add(list(range(len(obj.data.vertices))), 1.0, "REPLACE")
    obj.modifiers.new("Armature", "ARMATURE").object = rig
    obj.parent = rig
    obj.matrix_parent_inverse = rig.matrix_world.inverted()


def scene_triangles() -> int:
    depsgraph = bpy.context.evaluated_depsgraph_get()
    total = 0
    for obj in bpy.context.scene.objects:
        if obj.type != "MESH":
            continue
        evaluated = obj.evaluated_get(depsgraph)
        total += len(evaluated.to_mesh().loop_triangles)
        evaluated.to_mesh_clear()
    return total


def rig_body(body: bpy.types.Object) -> None:
    """A root bone and a body bone; the body follows the body bone, which bounces for 10 frames."""
    armature = bpy.data.armatures.new("rig")
    rig = bpy.data.objects.new("rig", armature)
    bpy.context.scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    root = armature.edit_bones.new("root")
    root.tail = (0, 0.5, 0)
    bone = armature.edit_bones.new("body")
    bone.head, bone.tail, bone.parent = (0, 0, 0.75), (0, 0, 1.5), root
    bpy.ops.object.mode_set(mode="OBJECT")
    group = body.vertex_groups.new(name="body")
    group.add(list(range(len(body.data.vertices))), 1.0, "REPLACE")
    body.modifiers.new("Armature", "ARMATURE").object = rig
    body.parent = rig
    pose_bone = rig.pose.bones["body"]
    for frame, height in ((1, 0.0), (5, 0.2), (10, 0.0)):
        pose_bone.location = (0, height, 0)
        pose_bone.keyframe_insert("location", frame=frame)
    rig.animation_data.action.name = "Bounce"


def paint_texture(path: Path, size: int = 64) -> None:
    """A red and white checker image named like the body's material, beside the exported files: importers whose
    format names materials (SMD, IQE, IQM) find it and wire it to the body."""
    rows, columns = np.indices((size, size)) // 8
    checker = ((rows + columns) % 2).astype(np.float32)
    pixels = np.ones((size, size, 4), np.float32)
    pixels[..., 1] = pixels[..., 2] = checker * 0.9 + 0.1  # red squares between white ones
    image = bpy.data.images.new("paint", size, size)
    image.pixels.foreach_set(pixels.ravel())
    image.filepath_raw = str(path)
    image.file_format = "PNG"
    image.save()
    bpy.data.images.remove(image)


def output_path(name: str, suffix: str) -> Path:
    # The compiled map gets its own stem: compiling writes <stem>.qmap.tmp and .qmap.desc beside the .qmap, which
    # would otherwise replace the .qmap.tmp export's files after their sizes were reported.
    return OUT / (f"example_compiled{suffix}" if name == "qmap" else f"example{suffix}")


def run_format(name: str, fmt: object) -> dict[str, object]:
    export_operator, import_operator = fmt.export_operator, fmt.import_operator  # type: ignore[attr-defined]
    path = output_path(name, fmt.extension)  # type: ignore[attr-defined]
    example_scene()
    started = time.perf_counter()
    module, op = export_operator.split(".")
    getattr(getattr(bpy.ops, module), op)(filepath=str(path))
    export_seconds = time.perf_counter() - started
    warnings = list(extension.common.operators.LAST_SUMMARY[0].warnings)
    bpy.ops.wm.read_homefile(use_empty=True)
    # A VTA holds only vertex animation: it is imported together with the reference SMD it belongs to.
    companion = OUT / "example.smd" if name == "vta" else None
    files = [{"name": p.name} for p in (companion, path) if p is not None]
    started = time.perf_counter()
    module, op = import_operator.split(".")
    getattr(getattr(bpy.ops, module), op)(directory=str(OUT), files=files)
    import_seconds = time.perf_counter() - started
    summary = extension.common.operators.LAST_SUMMARY[0]
    warnings += summary.warnings
    bpy.ops.wm.save_as_mainfile(filepath=str(OUT / f"example_{name}_reimported.blend"), check_existing=False)
    objects = len(bpy.data.objects)
    render_view(name, OUT / "views" / f"{name}.png")
    return {
        "format": name,
        "file": path.name,
        "path": path,
        "objects": objects,
        "polygons": summary.faces,
        "unexpected": [w for w in warnings if not any(key in w for key in EXPECTED_WARNINGS)],
        "expected": [w for w in warnings if any(key in w for key in EXPECTED_WARNINGS)],
        "export s": export_seconds,
        "import s": import_seconds,
    }


# ------------------------------------------------------------------------------------------------ the picture


def render_view(label: str, target: Path) -> None:
    """A Workbench render of the imported scene from a three-quarter view that frames every mesh, with the
    format's name written above it."""
    scene = bpy.context.scene
    meshes = [obj for obj in scene.objects if obj.type == "MESH"]
    corners = [obj.matrix_world @ Vector(corner) for obj in meshes for corner in obj.bound_box]
    low = Vector(np.min(corners, axis=0))
    high = Vector(np.max(corners, axis=0))
    centre, radius = (low + high) / 2, max((high - low).length / 2, 0.1)
    camera = bpy.data.objects.new("view", bpy.data.cameras.new("view"))
    scene.collection.objects.link(camera)
    direction = Vector((1.0, -1.5, 0.9)).normalized()
    camera.data.lens = 50
    half_angle = camera.data.angle / 2
    camera.location = centre + direction * (radius * 1.35 / math.sin(half_angle))
    camera.rotation_euler = (-direction).to_track_quat("-Z", "Y").to_euler()
    scene.camera = camera
    text = bpy.data.objects.new("label", bpy.data.curves.new("label", "FONT"))
    text.data.body = label.upper().replace("_", ".")
    text.data.align_x = "CENTER"
    text.data.size = radius * 0.35
    text.location = centre + Vector((0, 0, (high.z - low.z) / 2 + radius * 0.15))
    text.rotation_euler = camera.rotation_euler
    scene.collection.objects.link(text)
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "TEXTURE"  # the images the imports found, else the material's colour
    scene.display.shading.show_cavity = True
    scene.render.resolution_x, scene.render.resolution_y = VIEW_SIZE
    scene.render.resolution_percentage = 100
    scene.render.film_transparent = False
    scene.render.image_settings.file_format = "PNG"
    scene.render.filepath = str(target)
    target.parent.mkdir(exist_ok=True)
    bpy.ops.render.render(write_still=True)


def contact_sheet(views: list[Path], target: Path, columns: int = 4) -> None:
    """The views side by side, `columns` to a row, as one PNG."""
    width, height = VIEW_SIZE
    rows = math.ceil(len(views) / columns)
    sheet = np.zeros((rows * height, columns * width, 4), np.float32)
    sheet[..., 3] = 1.0  # an empty cell is black, like the renders around it
    for index, view in enumerate(views):
        image = bpy.data.images.load(str(view))
        pixels = np.empty(width * height * 4, np.float32)
        image.pixels.foreach_get(pixels)
        row, column = divmod(index, columns)
        top = (rows - 1 - row) * height  # Blender's pixels start at the bottom row
        sheet[top : top + height, column * width : (column + 1) * width] = pixels.reshape(height, width, 4)
        bpy.data.images.remove(image)
    result = bpy.data.images.new("views", columns * width, rows * height)
    result.pixels.foreach_set(sheet.ravel())
    result.filepath_raw = str(target)
    result.file_format = "PNG"
    result.save()


def build_zip() -> Path:
    """The installable extension, built by Blender's own extension tool into dist/."""
    DIST.mkdir(exist_ok=True)
    result = subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "package.py"), "--output-dir", str(DIST)],
                            capture_output=True, text=True, check=False)  # fmt: skip
    if result.returncode != 0:
        raise RuntimeError(f"building the zip failed: {result.stderr.strip() or result.stdout.strip()}")
    return max(DIST.glob("io_game_formats-*.zip"), key=lambda p: p.stat().st_mtime)


def main() -> int:
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir()
    example_scene()
    bpy.ops.wm.save_as_mainfile(filepath=str(OUT / "example_source.blend"), check_existing=False)
    paint_texture(OUT / "paint.png")
    print(f"\nExample scene: {len(bpy.data.objects)} objects, {scene_triangles()} triangles with modifiers applied")
    rows = []
    failures = 0
    for name, fmt in extension.cli.FORMATS.items():
        if not (fmt.export_operator and fmt.import_operator) or name == "car":  # (a .car is written over one)
            continue
        try:
            rows.append(run_format(name, fmt))
        except RuntimeError as error:
            failures += 1
            print(f"{name}: FAILED: {error}")
    picture = OUT / "example_views.png"
    contact_sheet([OUT / "views" / f"{row['format']}.png" for row in rows], picture)
    zip_path = build_zip()
    header = ("format", "file", "bytes", "objects", "polygons", "warnings", "export s", "import s")
    widths = (10, 26, 9, 8, 9, 9, 9, 9)
    print("\n" + "".join(f"{h:>{w}}" for h, w in zip(header, widths, strict=True)))
    unexpected = 0
    for row in rows:
        row["bytes"] = row["path"].stat().st_size  # type: ignore[attr-defined]  # the file as left on disk
        row["warnings"] = len(row["unexpected"]) + len(row["expected"])  # type: ignore[arg-type]
        unexpected += len(row["unexpected"])  # type: ignore[arg-type]
        print("".join(f"{row[h]:>{w}.3f}" if isinstance(row[h], float) else f"{row[h]!s:>{w}}"
                      for h, w in zip(header, widths, strict=True)))  # fmt: skip
    expected = sorted({w for row in rows for w in row["expected"]})  # type: ignore[attr-defined]
    for key, reason in EXPECTED_WARNINGS.items():
        if any(key in w for w in expected):
            print(f"expected warning: {key!r}: {reason}")
    print(f"unexpected warnings: {unexpected}" + (" (each is printed above with its reason)" if unexpected else ""))
    print(f"\nFiles written to {OUT}/ (each import also saved as example_<format>_reimported.blend)")
    print(f"Picture of every imported result: {picture}")
    print(f"Installable zip: {zip_path} (Blender: Edit > Preferences > Get Extensions > Install from Disk)")
    return 1 if failures or unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
