"""The main job on a bundled example: build a small scene, export it to every implemented format, import each
result back, and print a summary. Output goes to out/.

    bash tools/example.sh          (sets up .venv if missing, then runs this)
"""

from __future__ import annotations

import math
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bpy_extension import REPO_ROOT, enable_extension  # must come before `import bpy`

extension = enable_extension()
import bpy  # noqa: E402

OUT = REPO_ROOT / "out"


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
    bpy.ops.mesh.primitive_uv_sphere_add(segments=24, ring_count=12, radius=0.7, location=(0, -0.3, 1.3))
    glass = bpy.context.active_object
    glass.name = "glass"
    glass.scale = (1.1, 1.6, 0.5)
    glass.data.materials.append(material("glass", (0.2, 0.3, 0.4, 0.5)))
    bpy.ops.object.shade_smooth()
    for index, (x, y) in enumerate(((-0.9, 1.3), (0.9, 1.3), (-0.9, -1.3), (0.9, -1.3))):
        bpy.ops.mesh.primitive_cylinder_add(vertices=32, radius=0.35, depth=0.25, location=(x, y, 0.35))
        wheel = bpy.context.active_object
        wheel.name = f"wheel{index}"
        wheel.rotation_euler = (0, math.pi / 2, 0)
        bpy.ops.object.shade_smooth_by_angle(angle=math.radians(40))


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


def run_format(name: str, fmt: object) -> dict[str, object]:
    export_operator, import_operator = fmt.export_operator, fmt.import_operator  # type: ignore[attr-defined]
    suffix = fmt.extension  # type: ignore[attr-defined]
    path = OUT / f"example{suffix}"
    example_scene()
    started = time.perf_counter()
    module, op = export_operator.split(".")
    getattr(getattr(bpy.ops, module), op)(filepath=str(path), export_scope="SCENE")
    export_seconds = time.perf_counter() - started
    export_warnings = len(extension.common.operators.LAST_SUMMARY[0].warnings)
    bpy.ops.wm.read_homefile(use_empty=True)
    # A VTA holds only vertex animation: it is imported together with the reference SMD it belongs to.
    companion = OUT / "example.smd" if name == "vta" else None
    files = [{"name": p.name} for p in (companion, path) if p is not None]
    started = time.perf_counter()
    module, op = import_operator.split(".")
    getattr(getattr(bpy.ops, module), op)(directory=str(OUT), files=files)
    import_seconds = time.perf_counter() - started
    import_warnings = len(extension.common.operators.LAST_SUMMARY[0].warnings)
    bpy.ops.wm.save_as_mainfile(filepath=str(OUT / f"example_{name}_reimported.blend"), check_existing=False)
    meshes = [o for o in bpy.data.objects if o.type == "MESH"]
    return {
        "format": name,
        "file": path.name,
        "bytes": path.stat().st_size,
        "objects": len(bpy.data.objects),
        "faces": sum(len(o.data.polygons) for o in meshes),
        "warnings": f"{export_warnings}+{import_warnings}",
        "export s": export_seconds,
        "import s": import_seconds,
    }


def main() -> int:
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir()
    example_scene()
    bpy.ops.wm.save_as_mainfile(filepath=str(OUT / "example_source.blend"), check_existing=False)
    print(f"\nExample scene: {len(bpy.data.objects)} objects, {scene_triangles()} triangles with modifiers applied")
    rows = []
    failures = 0
    for name, fmt in extension.cli.FORMATS.items():
        if not (fmt.export_operator and fmt.import_operator):
            continue
        try:
            rows.append(run_format(name, fmt))
        except RuntimeError as error:
            failures += 1
            print(f"{name}: FAILED: {error}")
    header = ("format", "file", "bytes", "objects", "faces", "warnings", "export s", "import s")
    widths = (10, 18, 9, 8, 7, 9, 9, 9)
    print("\n" + "".join(f"{h:>{w}}" for h, w in zip(header, widths, strict=True)))
    for row in rows:
        print("".join(f"{row[h]:>{w}.3f}" if isinstance(row[h], float) else f"{row[h]!s:>{w}}"
                      for h, w in zip(header, widths, strict=True)))  # fmt: skip
    print("(warnings: export+import; each is printed above with its reason)")
    print(f"\nFiles written to {OUT}/ (each import also saved as example_<format>_reimported.blend)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
