"""VDrift car import and export in Blender: the whole car from its .car, wheels where the game puts them (right
side mirrored), textures; an edited wheel written back to its one line of the .car, nothing else changed."""

from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

import bpy
import numpy as np
import pytest
from mathutils import Vector

from formats import joe
from tests.blender.conftest import data_state
from tests.joe_fixtures import cube

CAR_TEXT = """# test car
# x right, y forward, z up
[wheel.fl.tire]
texture = tire/touring.png
size = 215, 45, 18

[wheel.fr.tire]
texture = tire/touring.png
size = 215, 45, 18

[wheel.rl.tire]
texture = tire/touring.png
size = 275, 40, 18

[wheel.rr.tire]
texture = tire/touring.png
size = 275, 40, 18

[wheel.fl]
texture = wheel/hub.png
mesh = wheel/hub.joe
position = -0.85, 1.12, -0.27\t# track 1669/2
camber = -1.0

[wheel.fr]
texture = wheel/hub.png
mesh = wheel/hub.joe
scale = -1, 1, 1
position = 0.85, 1.12, -0.27

[wheel.rl]
texture = wheel/hub.png
mesh = wheel/hub.joe
position = -0.8085, -1.51, -0.28

[wheel.rr]
texture = wheel/hub.png
mesh = wheel/hub.joe
scale = -1,1,1
position = 0.8085, -1.51, -0.28

[steering]
texture = body00.png
mesh = interior.joe
position = -0.28, 0.49, 0.16
rotation = 87.5, 0.0, 0.0

[body]
texture = body00.png, body-misc1.png
mesh = body.joe

[interior]
texture = interior.png
mesh = interior.joe

[glass]
texture = glass.png
mesh = glass.joe
draw = transparent

[wheel.fl.brake]
texture = rotor.png
radius = 0.175
friction = 0.7

[wheel.fr.brake]
texture = rotor.png
radius = 0.175
friction = 0.7

[wheel.rl.brake]
texture = rotor.png
radius = 0.125
friction = 0.7

[wheel.rr.brake]
texture = rotor.png
radius = 0.125
friction = 0.7
"""
WHEELS = {"fl": (-0.85, 1.12, -0.27), "fr": (0.85, 1.12, -0.27), "rl": (-0.8085, -1.51, -0.28),
          "rr": (0.8085, -1.51, -0.28)}  # fmt: skip
REAL_CAR = Path("/work/corpus/vdrift_cars/data/cars/360/360.car")
OLD_CAR = Path("/work/corpus/vdrift_cars/data/cars/XS/XS_2009.car")


def write_png(path: Path, rgba: tuple[int, int, int, int], size: int = 4) -> None:
    """A tiny RGBA PNG, written by code."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\0" + bytes(rgba) * size for _ in range(size))
    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
                     + chunk(b"IEND", b""))  # fmt: skip


def disk_model() -> joe.JoeDocument:
    """A unit wheel disk, as VDrift's are: 0.5 m radius in y and z, thin in x."""
    document = cube()
    document.first_frame.positions *= np.array([0.1, 0.5, 0.5], np.float32)
    return document


@pytest.fixture
def car_file(tmp_path: Path) -> Path:
    """data/cars/TEST/TEST.car with its models and images, and the parts it takes from data/carparts."""
    folder = tmp_path / "data" / "cars" / "TEST"
    folder.mkdir(parents=True)
    for name in ("body", "interior"):
        joe.save_joe(str(folder / f"{name}.joe"), cube())
    joe.save_joe(str(folder / "glass.joe"), cube(with_texcoords=False))
    for name, colour in (("body00", (200, 20, 20, 255)), ("interior", (90, 90, 90, 255)), ("glass", (20, 20, 60, 80))):
        write_png(folder / f"{name}.png", colour)
    parts = tmp_path / "data" / "carparts"
    (parts / "wheel").mkdir(parents=True)
    (parts / "tire").mkdir()
    joe.save_joe(str(parts / "wheel" / "hub.joe"), disk_model())
    write_png(parts / "wheel" / "hub.png", (200, 200, 200, 255))
    write_png(parts / "tire" / "touring.png", (30, 30, 30, 255))
    write_png(parts / "rotor.png", (120, 120, 120, 255))
    path = folder / "TEST.car"
    path.write_bytes(CAR_TEXT.encode())
    return path


def import_car(path: Path, **options: object) -> set[str]:
    result: set[str] = bpy.ops.import_scene.vdrift_car(filepath=str(path), **options)
    return result


def export_car(path: Path) -> set[str]:
    result: set[str] = bpy.ops.export_scene.vdrift_car(filepath=str(path))
    return result


def last_summary(extension):  # type: ignore[no-untyped-def]
    return extension.common.operators.LAST_SUMMARY[0]


def world_radius(obj: bpy.types.Object, centre: Vector) -> float:
    return max(math.hypot(*((obj.matrix_world @ vertex.co) - centre).yz) for vertex in obj.data.vertices)


# ------------------------------------------------------------------------------------------------ import


def test_the_whole_car_arrives_with_its_wheels_in_place(car_file: Path, extension) -> None:  # type: ignore[no-untyped-def]
    assert import_car(car_file) == {"FINISHED"}
    root = bpy.data.objects["TEST"]
    assert root.type == "EMPTY" and root["vdrift_car"] == str(car_file)
    assert bpy.context.view_layer.objects.active == root
    created = {obj.name for obj in bpy.data.objects}
    assert {obj.name for obj in bpy.context.selected_objects} == created
    for section in ("body", "glass", "interior", "steering"):
        part = bpy.data.objects[f"TEST {section}"]
        assert part.parent == root and part["vdrift_section"] == section
    steering = bpy.data.objects["TEST steering"]
    assert tuple(steering.location) == pytest.approx((-0.28, 0.49, 0.16))
    assert math.degrees(steering.rotation_euler.x) == pytest.approx(87.5)
    assert tuple(map(math.degrees, bpy.data.objects["TEST wheel.fl"].rotation_euler)) == pytest.approx((0, 1, 0))
    for name, position in WHEELS.items():
        wheel = bpy.data.objects[f"TEST wheel.{name}"]
        assert wheel.parent == root and wheel["vdrift_section"] == f"wheel.{name}"
        wheel.rotation_euler = (0, 0, 0)  # (the camber: VDrift turns the wheel by -camber about y)
        bpy.context.view_layer.update()
        assert tuple(wheel.matrix_world.translation) == pytest.approx(position)
        disk, rim, tire, brake = (bpy.data.objects[f"TEST wheel.{name} {part}"]
                                  for part in ("disk", "rim", "tire", "brake"))  # fmt: skip
        assert {disk.parent, rim.parent, tire.parent, brake.parent} == {wheel}
        brake_radius = 0.175 if name[0] == "f" else 0.125
        assert world_radius(brake, wheel.matrix_world.translation) == pytest.approx(brake_radius, rel=1e-5)
        size = (0.215, 45, 18) if name[0] == "f" else (0.275, 40, 18)
        radius = 18 * 0.0254 / 2 + size[0] * size[1] / 100
        assert world_radius(tire, wheel.matrix_world.translation) == pytest.approx(radius, abs=1e-5)
        disk_y = [(disk.matrix_world @ vertex.co).y - position[1] for vertex in disk.data.vertices]
        assert max(disk_y) == pytest.approx(18 * 0.0254 / 2, rel=1e-4)  # (a unit disk scaled to the rim)
        # The disk sits on the wheel's outer side: VDrift moves it towards -x, and mirrors the right wheels.
        disk_x = np.mean([(disk.matrix_world @ vertex.co).x for vertex in disk.data.vertices])
        outward = -1 if name[1] == "l" else 1
        assert (disk_x - position[0]) * outward > 0.05
        assert tuple(disk.scale) == ((-1, 1, 1) if name[1] == "r" else (1, 1, 1))
    summary = last_summary(extension)
    assert summary.line("Imported").startswith("Imported 1 file: 25 objects")
    assert len(summary.textures_found) == 6 and not summary.textures_missing


def test_textures_are_wired_glass_blends(car_file: Path) -> None:
    import_car(car_file)
    def image_of(name: str) -> str:
        material = bpy.data.objects[name].data.materials[0]
        nodes = material.node_tree.nodes
        return next(node.image.name for node in nodes if node.type == "TEX_IMAGE")

    assert image_of("TEST body") == "body00.png"
    assert image_of("TEST wheel.fr disk") == image_of("TEST wheel.fr rim") == "hub.png"
    assert image_of("TEST wheel.rl tire") == "touring.png"
    assert bpy.data.objects["TEST body"].data.materials[0] == bpy.data.objects["TEST steering"].data.materials[0]
    glass = bpy.data.objects["TEST glass"].data.materials[0]
    links = {link.to_socket.name for link in glass.node_tree.links if link.from_node.type == "TEX_IMAGE"}
    assert links == {"Base Color", "Alpha"}


def test_without_rims_and_tyres_only_the_wheel_models(car_file: Path) -> None:
    import_car(car_file, generate_wheels=False)
    assert "TEST wheel.fl disk" in bpy.data.objects
    assert not [obj for obj in bpy.data.objects if obj.name.endswith((" rim", " tire", " brake"))]


def test_genrim_false_keeps_the_wheel_model_as_it_is(car_file: Path) -> None:
    right = "position = 0.85, 1.12, -0.27"
    car_file.write_text(CAR_TEXT.replace(right, f"{right}\ngenrim = false"))
    import_car(car_file)
    assert "TEST wheel.fr rim" not in bpy.data.objects and "TEST wheel.fl rim" in bpy.data.objects
    disk = bpy.data.objects["TEST wheel.fr disk"]
    assert max(abs(vertex.co.y) for vertex in disk.data.vertices) == pytest.approx(0.5)  # (unscaled)


def test_a_tyre_or_brake_with_its_own_model_uses_it(car_file: Path) -> None:
    text = CAR_TEXT.replace("[wheel.rr.tire]\n", "[wheel.rr.tire]\nmesh = wheel/hub.joe\n")
    car_file.write_text(text.replace("[wheel.rl.brake]\n", "[wheel.rl.brake]\nmesh = interior.joe\n"))
    import_car(car_file)
    tire, brake = bpy.data.objects["TEST wheel.rr tire"], bpy.data.objects["TEST wheel.rl brake"]
    assert len(tire.data.polygons) == len(brake.data.polygons) == 12  # (the models: cubes)
    assert len(bpy.data.objects["TEST wheel.rl tire"].data.polygons) == 7 * 32  # (generated)


def test_axes_turn_the_root_only(car_file: Path, tmp_path: Path) -> None:
    import_car(car_file, forward_axis="NEGATIVE_Y", global_scale=2.0)
    wheel = bpy.data.objects["TEST wheel.fl"]
    assert tuple(wheel.location) == pytest.approx(WHEELS["fl"])
    assert tuple(wheel.matrix_world.translation) == pytest.approx((1.7, -2.24, -0.54))
    out = tmp_path / "copy.car"
    export_car(out)
    assert out.read_bytes() == car_file.read_bytes()


def test_a_failed_import_leaves_blender_data_as_it_was(car_file: Path) -> None:
    car_file.write_bytes(CAR_TEXT.replace("position = 0.85, 1.12", "position = 0.85, y").encode())
    before = data_state()
    with pytest.raises(RuntimeError, match=r"TEST.car, line 29, column 18: position: 'y' is not a number"):
        import_car(car_file)
    assert data_state() == before


def test_a_failure_while_building_rolls_back(car_file: Path, extension, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    module = extension.importers.vdrift_car

    def broken(*args: object) -> None:
        raise extension.formats.errors.FormatError("broken on purpose")

    monkeypatch.setattr(module._Builder, "wheel", broken)
    before = data_state()
    with pytest.raises(RuntimeError, match="broken on purpose"):
        import_car(car_file)
    assert data_state() == before


def test_a_missing_model_is_said_and_the_rest_imported(car_file: Path, extension) -> None:  # type: ignore[no-untyped-def]
    (car_file.parent / "interior.joe").unlink()
    assert import_car(car_file) == {"FINISHED"}
    assert "TEST body" in bpy.data.objects and "TEST interior" not in bpy.data.objects
    assert any("'interior.joe' not found" in text for text in last_summary(extension).warnings)


# ------------------------------------------------------------------------------------------------ export


def changed_lines(before: bytes, after: bytes) -> list[tuple[str, str]]:
    old, new = before.decode().split("\n"), after.decode().split("\n")
    assert len(old) == len(new)
    return [(a, b) for a, b in zip(old, new, strict=True) if a != b]


def test_an_untouched_car_exports_byte_for_byte(car_file: Path, tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    import_car(car_file)
    out = tmp_path / "out.car"
    assert export_car(out) == {"FINISHED"}
    assert out.read_bytes() == car_file.read_bytes()
    assert last_summary(extension).line("Exported").startswith("Exported 1 file: 0 changed keys")


def test_export_over_another_file_writes_this_cars_file(car_file: Path, tmp_path: Path) -> None:
    import_car(car_file)
    other = tmp_path / "other.car"
    other.write_text("[wheel.fl]\nposition = 9, 9, 9\n")
    car_file.write_bytes(car_file.read_bytes() + b"# edited since the import\n")
    export_car(other)
    assert other.read_bytes() == car_file.read_bytes()  # (the car's own file, as it is now)
    other.write_text(CAR_TEXT.replace("-0.85, 1.12, -0.27", "9, 9, 9") + "# a copy\n")
    car_file.unlink()  # gone: the file at the output path is updated instead
    export_car(other)
    assert other.read_text() == CAR_TEXT + "# a copy\n"


def test_a_moved_wheel_changes_its_position_line_only(car_file: Path, extension) -> None:  # type: ignore[no-untyped-def]
    original = car_file.read_bytes()
    import_car(car_file)
    bpy.data.objects["TEST wheel.fl"].location = (-0.9, 1.2, -0.25)
    bpy.context.view_layer.objects.active = bpy.data.objects["TEST body"]  # (any part of the car chooses it)
    assert export_car(car_file) == {"FINISHED"}  # in place
    assert changed_lines(original, car_file.read_bytes()) == [
        ("position = -0.85, 1.12, -0.27\t# track 1669/2", "position = -0.9, 1.2, -0.25\t# track 1669/2")]
    assert last_summary(extension).objects == 1
    bpy.ops.wm.read_homefile(use_empty=True)
    import_car(car_file)
    assert tuple(bpy.data.objects["TEST wheel.fl"].location) == pytest.approx((-0.9, 1.2, -0.25))
    assert tuple(bpy.data.objects["TEST wheel.fr"].location) == pytest.approx(WHEELS["fr"])


def test_a_turned_wheel_writes_camber_and_toe(car_file: Path, extension) -> None:  # type: ignore[no-untyped-def]
    original = car_file.read_bytes()
    import_car(car_file)
    wheel = bpy.data.objects["TEST wheel.fl"]
    wheel.rotation_euler = (math.radians(30), math.radians(2.5), math.radians(-0.25))  # (x: it only spins)
    export_car(car_file)
    text = car_file.read_text()
    assert "position = -0.85, 1.12, -0.27\t# track 1669/2\ncamber = -2.5\ntoe = -0.25\n\n[wheel.fr]" in text
    assert text.replace("camber = -2.5\ntoe = -0.25\n", "camber = -1.0\n") == original.decode()
    assert last_summary(extension).objects == 2  # (camber and toe)
    for mode in ("QUATERNION", "ZXY", "AXIS_ANGLE"):  # (Blender turns the values into the new mode)
        wheel.rotation_mode = mode
        export_car(car_file)
        assert car_file.read_text() == text, mode


def test_a_scaled_wheel_writes_its_tyre_size_once(car_file: Path, tmp_path: Path) -> None:
    original = car_file.read_bytes()
    import_car(car_file)
    bpy.data.objects["TEST wheel.rr"].scale = (1.2, 1.1, 1.1)
    export_car(car_file)
    assert changed_lines(original, car_file.read_bytes()) == [("size = 275, 40, 18", "size = 330, 36.67, 19.8")]
    exported = car_file.read_bytes()
    export_car(car_file)  # (the size is the imported one scaled: a second export writes the same)
    assert car_file.read_bytes() == exported
    bpy.ops.wm.read_homefile(use_empty=True)
    import_car(car_file)
    tire = bpy.data.objects["TEST wheel.rr tire"]
    radius = 19.8 * 0.0254 / 2 + 0.330 * 0.3667
    assert world_radius(tire, Vector(WHEELS["rr"])) == pytest.approx(radius, rel=1e-4)


def test_a_moved_part_gains_a_position_key(car_file: Path) -> None:
    import_car(car_file)
    bpy.data.objects["TEST body"].location.z = 0.05
    bpy.data.objects["TEST steering"].rotation_euler.x = math.radians(80)
    export_car(car_file)
    text = car_file.read_text()
    assert "[body]\ntexture = body00.png, body-misc1.png\nmesh = body.joe\nposition = 0, 0, 0.05\n\n" in text
    assert "rotation = 80, 0.0, 0.0\n" in text  # (the unchanged angles keep their text)
    assert text.replace("position = 0, 0, 0.05\n", "").replace("rotation = 80, 0.0", "rotation = 87.5, 0.0") \
        == CAR_TEXT  # fmt: skip


def test_models_are_written_on_request_with_the_car(car_file: Path, tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    import_car(car_file)
    bpy.data.objects["TEST wheel.fl disk"].data.vertices[0].co.x += 1.0
    body = bpy.data.objects["TEST body"]
    body.location.y = 0.25  # (placed by the .car: the model stays in its own space)
    body.data.vertices[0].co.z -= 1.0
    out = tmp_path / "out" / "TEST.car"
    out.parent.mkdir()
    assert bpy.ops.export_scene.vdrift_car(filepath=str(out)) == {"FINISHED"}
    assert sorted(path.name for path in out.parent.iterdir()) == ["TEST.car"]  # (models only on request)
    assert bpy.ops.export_scene.vdrift_car(filepath=str(out), write_models=True) == {"FINISHED"}
    assert sorted(path.name for path in out.parent.iterdir()) == ["TEST.car", "body.joe", "glass.joe", "interior.joe"]
    positions = joe.load_joe(str(out.parent / "body.joe")).first_frame.positions
    assert np.abs(positions).max() == pytest.approx(2.0)  # the edited corner, in the model's own space
    assert sorted(map(tuple, positions.tolist()))[0] == (-1.0, -1.0, -2.0)
    summary = last_summary(extension)
    assert summary.files == 4
    assert any("interior.joe is written from" in text for text in summary.notes)  # (steering names it too)
    assert summary.warnings == []  # (a part sharing a model, or a model in carparts, is usual: notes)
    hub = tmp_path / "data" / "carparts" / "wheel" / "hub.joe"
    assert hub.read_bytes() == joe.write_joe(disk_model())  # (a shared part is never written)


def test_a_part_whose_model_is_in_carparts_is_a_note_not_a_warning(car_file: Path, tmp_path: Path, extension) -> None:  # type: ignore[no-untyped-def]
    car_file.write_text(CAR_TEXT + "\n[driver]\ntexture = wheel/hub.png\nmesh = wheel/hub.joe\n")
    import_car(car_file)
    assert bpy.ops.export_scene.vdrift_car(filepath=str(car_file), write_models=True) == {"FINISHED"}
    summary = last_summary(extension)
    assert summary.warnings == []
    assert "TEST driver: its model 'wheel/hub.joe' is not in the car's folder (shared); not written" in summary.notes
    assert (tmp_path / "data" / "carparts" / "wheel" / "hub.joe").read_bytes() == joe.write_joe(disk_model())


def test_the_active_car_or_the_selected_one_is_exported(car_file: Path, tmp_path: Path) -> None:
    import_car(car_file)
    import_car(car_file)  # (a second copy: TEST.001)
    second = bpy.data.objects["TEST.001"]
    second.children[0].location.z += 1.0  # (a part of the second car moved)
    bpy.context.view_layer.objects.active = None
    with pytest.raises(RuntimeError, match=r"several VDrift cars \(TEST, TEST.001\)"):
        export_car(tmp_path / "x.car")
    for obj in bpy.data.objects:
        obj.select_set(obj == bpy.data.objects["TEST body"])
    assert bpy.ops.export_scene.vdrift_car(filepath=str(tmp_path / "first.car"), export_selected_objects=True) \
        == {"FINISHED"}  # fmt: skip
    assert (tmp_path / "first.car").read_bytes() == car_file.read_bytes()  # (nothing of the selected car moved)
    bpy.context.view_layer.objects.active = second.children[0]
    export_car(tmp_path / "second.car")
    assert (tmp_path / "second.car").read_bytes() != car_file.read_bytes()


def test_export_without_a_car_is_a_clear_error(tmp_path: Path) -> None:
    bpy.ops.mesh.primitive_cube_add()
    with pytest.raises(RuntimeError, match=r"no VDrift car to export \(none is visible\)"):
        export_car(tmp_path / "x.car")
    assert not (tmp_path / "x.car").exists()


# ------------------------------------------------------------------------------------------------ a real car


def test_a_real_car_imports_and_exports_byte_for_byte(tmp_path: Path) -> None:
    if not REAL_CAR.is_file():
        pytest.skip(f"no VDrift car at {REAL_CAR}")
    assert import_car(REAL_CAR) == {"FINISHED"}
    for name, x, y in (("fl", -0.85, 1.12), ("fr", 0.85, 1.12), ("rl", -0.8085, -1.51), ("rr", 0.8085, -1.51)):
        assert tuple(bpy.data.objects[f"360 wheel.{name}"].location)[:2] == pytest.approx((x, y))
    assert {"360 body", "360 glass", "360 interior"} <= set(bpy.data.objects.keys())
    out = tmp_path / "360.car"
    export_car(out)
    assert out.read_bytes() == REAL_CAR.read_bytes()
    bpy.data.objects["360 wheel.rl"].location.x = -0.83
    export_car(out)
    assert changed_lines(REAL_CAR.read_bytes(), out.read_bytes()) == [
        ("position = -0.8085, -1.51, -0.28", "position = -0.83, -1.51, -0.28")]


def test_a_real_car_of_the_2009_layout(tmp_path: Path) -> None:
    """Size in [wheel.XX], the disk in [wheel.XX.rim] hubmesh, the right tyres mirrored too; CRLF line breaks."""
    if not OLD_CAR.is_file():
        pytest.skip(f"no VDrift car at {OLD_CAR}")
    assert import_car(OLD_CAR) == {"FINISHED"}
    assert tuple(bpy.data.objects["XS_2009 wheel.fr"].location) == pytest.approx((0.736, 1.14, -0.47))
    assert tuple(bpy.data.objects["XS_2009 wheel.fr disk"].scale) == (-1, 1, 1)
    assert tuple(bpy.data.objects["XS_2009 wheel.fr tire"].scale) == (-1, 1, 1)
    out = tmp_path / "XS.car"
    export_car(out)
    assert out.read_bytes() == OLD_CAR.read_bytes()
    bpy.data.objects["XS_2009 wheel.rl"].scale = (1.0, 17.5 / 17, 17.5 / 17)
    export_car(out)
    old, new = OLD_CAR.read_bytes().split(b"\r\n"), out.read_bytes().split(b"\r\n")
    assert [(a, b) for a, b in zip(old, new, strict=True) if a != b] == [
        (b"size = 245, 40, 17", b"size = 245, 41.18, 17.5")]
