"""VDrift .car codec: read as the game reads it, every byte kept, values changed in place, errors with line and column;
the car's parts and the geometry VDrift generates for rims and tyres."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from formats import vdrift_car as car
from formats.errors import FormatError
from tests.mutations import fuzz_count, mutations

CAR = b"""# a comment \xe9 in Latin-1
[engine]
position = 0.0, -1.0, -0.05
mass = 150.0 ; semicolon comment

[wheel.fl.tire]
texture = tire/touring.png
size = 215, 45, 18

[wheel.fr.tire]
texture = tire/touring.png
size = 215, 45, 18

[wheel.fl]
texture = wheel/hub.png, wheel/hub-misc1.png
mesh = wheel/hub.joe
position = -0.85, 1.12, -0.27\t# track 1669/2
camber = -1.0

[wheel.fr]
texture = wheel/hub.png
mesh = wheel/hub.joe
scale = -1,1,1
position = 0.85, 1.12, -0.27
tire.type = tire/sports.tire

[body]
texture = body00.png, body-misc1.png
mesh = body.joe

[glass]
texture = glass.png
mesh = glass.joe
draw = transparent

[steering]
texture = steering_wheel.png
mesh = steering_wheel.joe
position = -0.28, 0.49, 0.16
rotation = 87.5, 0.0, 0.0

[driver]
texture = driver.png
mesh = driver.joe
scale = 0.72
"""

OLD_LAYOUT = b"""[wheel.fl]
size = 215, 45, 17
position = -0.736, 1.14, -0.47
[wheel.fl.rim]
texture = oem_wheel.png
hubmesh = oem_wheel.joe
[wheel.fl.tire]
texture = tire/touring.png
[wheel.fr]
size = 215, 45, 17
position = 0.736, 1.14, -0.47
[wheel.fr.rim]
texture = oem_wheel.png
hubmesh = oem_wheel.joe
scale = -1, 1, 1
[wheel.fr.tire]
texture = tire/touring.png
scale = -1, 1, 1
"""


def changed_lines(before: bytes, after: bytes) -> list[tuple[bytes, bytes]]:
    old, new = before.split(b"\n"), after.split(b"\n")
    assert len(old) == len(new)
    return [(a, b) for a, b in zip(old, new, strict=True) if a != b]


# ------------------------------------------------------------------------------------------------ reading


def test_every_byte_is_kept() -> None:
    for data in (CAR, CAR.replace(b"\n", b"\r\n"), CAR.rstrip(b"\n"), b"", b"\n\n", OLD_LAYOUT):
        assert car.read_car(data).to_bytes() == data


def test_sections_and_keys_as_vdrift_reads_them() -> None:
    document = car.read_car(CAR)
    assert document.get("engine", "mass") == "150.0"  # (the ; comment is not part of the value)
    assert document.get("wheel.fl", "position") == "-0.85, 1.12, -0.27"
    assert document.get("wheel.fr.tire", "type") == "tire/sports.tire"  # a dotted key lies in a sub-section
    assert document.children("wheel") == ["fl", "fr"]
    assert document.numbers("steering", "rotation", 3) == (87.5, 0.0, 0.0)
    assert document.get("engine", "missing") is None


def test_a_later_key_wins() -> None:
    document = car.read_car(b"[a]\nk = 1\n[b]\nk = 5\n[a]\nk = 2\n")
    assert document.get("a", "k") == "2"
    assert document.get("b", "k") == "5"


def test_the_parts_of_a_car() -> None:
    parts = car.car_parts(car.read_car(CAR))
    assert [part.section for part in parts.drawables] == ["body", "glass", "steering", "driver"]
    glass = parts.drawables[1]
    assert glass.draw == "transparent" and glass.textures == ["glass.png"]
    assert parts.drawables[2].rotation == (87.5, 0.0, 0.0)
    assert parts.drawables[3].scale == (0.72, 0.72, 0.72)  # one number: uniform
    left, right = parts.wheels
    assert (left.section, left.position, left.mirror) == ("wheel.fl", (-0.85, 1.12, -0.27), None)
    assert right.mirror == (-1.0, 1.0, 1.0)
    assert left.textures == ["wheel/hub.png", "wheel/hub-misc1.png"] and left.mesh == "wheel/hub.joe"
    assert left.size.values() == (215.0, 45.0, 18.0) and left.size.section == "wheel.fl.tire"
    assert left.size.radius == pytest.approx(18 * 0.0254 / 2 + 0.215 * 0.45)  # cardynamics.cpp LoadTire
    assert left.tire_textures == ["tire/touring.png"] and left.generate_rim
    assert (left.camber, left.toe, right.camber) == (-1.0, 0.0, 0.0)
    assert parts.warnings == ["VDrift needs exactly 4 wheels, the file has 2"]


def test_the_2009_layout_size_in_the_wheel_and_the_disk_in_its_rim() -> None:
    left, right = car.car_parts(car.read_car(OLD_LAYOUT)).wheels
    assert left.size.section == "wheel.fl" and left.size.values() == (215.0, 45.0, 17.0)
    assert (left.mesh, left.textures, left.mirror) == ("oem_wheel.joe", ["oem_wheel.png"], None)
    assert right.mirror == (-1.0, 1.0, 1.0) and right.tire_mirror == (-1.0, 1.0, 1.0)


# ------------------------------------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    ("text", "line", "column", "words"),
    [
        (b"[wheel.fl]\nposition = 1, x, 3\n", 2, 15, "'x' is not a number"),
        (b"[wheel.fl]\nposition = 1, 2\n[wheel.fl.tire]\nsize = 1,2,3\n", 2, 12, "3 comma-separated numbers"),
        (b"[engine]\n  stray words\n", 2, 3, "neither a [section] nor a key = value"),
        (b"[wheel.fl]\ntire = &tire/a.tire\n", 2, 8, "included files are not supported"),
        (b"[engine]\nmass = 1\n", 1, 1, "no [wheel.XX] sections"),
        (b"[wheel.fl]\nposition = 1, 2, 3\n", 1, 1, "no tyre size"),
        (b"\n[wheel.fl]\nmesh = a.joe\n", 2, 1, "has no position"),
        (b"[wheel.fl]\nposition = 1,2,3\nsize = 0, 45, 16\n", 3, 8, "width and rim must be positive"),
        (b"[wheel.fl]\nposition = 1,2,3\nsize = 1,2,3\n[body]\ntexture = a.png\n", 5, 1, "no mesh"),
    ],
)
def test_errors_name_the_line_and_column(text: bytes, line: int, column: int, words: str) -> None:
    with pytest.raises(FormatError) as caught:
        car.car_parts(car.read_car(text, "x.car"))
    error = caught.value
    assert (error.path, error.line, error.column) == ("x.car", line, column)
    assert words in error.message


def test_folders_and_devices_are_refused_without_reading_them(tmp_path: Path) -> None:
    for path in (str(tmp_path), "/dev/zero"):
        with pytest.raises(FormatError, match=r"not a file|folder"):
            car.load_car(path)


def test_only_format_errors_escape_whatever_the_bytes() -> None:
    """What the importer runs before touching Blender, and a write of every wheel back, on mutated cars."""
    accepted = rejected = 0
    for data in mutations([CAR, OLD_LAYOUT, CAR.replace(b"\n", b"\r\n")], fuzz_count(1_500), seed=20261202):
        try:
            document = car.read_car(data, "fuzz.car")
            parts = car.car_parts(document)
            for wheel in parts.wheels:
                car.generated_tire(wheel.size), car.generated_rim(wheel.size), car.generated_brake(1.0)
                car.update_numbers(document, wheel.section, "position", (1.0, 2.0, 3.0))
            assert car.read_car(document.to_bytes()).to_bytes() == document.to_bytes()
            accepted += 1
        except FormatError:
            rejected += 1
    assert accepted and rejected


# ------------------------------------------------------------------------------------------------ writing


def test_a_value_changes_in_place_and_nothing_else() -> None:
    document = car.read_car(CAR)
    assert car.update_numbers(document, "wheel.fl", "position", (-0.9, 1.2, -0.27), 5)
    assert changed_lines(CAR, document.to_bytes()) == [
        (b"position = -0.85, 1.12, -0.27\t# track 1669/2", b"position = -0.9, 1.2, -0.27\t# track 1669/2")
    ]


def test_equal_values_leave_the_line_as_it_is() -> None:
    document = car.read_car(CAR)
    single = np.float32(-0.27)  # (what Blender's single-precision location gives back)
    assert not car.update_numbers(document, "wheel.fl", "position", (-0.85, 1.12, float(single)), 5)
    assert not car.update_numbers(document, "driver", "scale", (0.72, 0.72, 0.72), 4)
    assert not car.update_numbers(document, "body", "position", (0.0, 0.0, 0.0), 5, (0, 0, 0))
    assert document.to_bytes() == CAR


def test_only_the_changed_number_gets_new_text() -> None:
    data = CAR.replace(b"-0.85, 1.12, -0.27", b"-0.725, 1.60, -0.36").replace(b"scale = 0.72", b"scale = 0.80, 0.80")
    document = car.read_car(data)
    moved = (float(np.float32(-0.725)), float(np.float32(1.6)), float(np.float32(-0.36 + 0.05)))
    assert car.update_numbers(document, "wheel.fl", "position", moved, 5)
    assert car.update_numbers(document, "driver", "scale", (0.8, 0.9), 4)
    assert changed_lines(data, document.to_bytes()) == [
        (b"position = -0.725, 1.60, -0.36\t# track 1669/2", b"position = -0.725, 1.60, -0.31\t# track 1669/2"),
        (b"scale = 0.80, 0.80", b"scale = 0.80, 0.9"),
    ]


def test_separators_are_kept() -> None:
    document = car.read_car(CAR)
    car.update_numbers(document, "wheel.fr", "scale", (-1.0, 1.0, 1.25), 4)
    assert changed_lines(CAR, document.to_bytes()) == [(b"scale = -1,1,1", b"scale = -1,1,1.25")]


def test_a_missing_key_goes_after_the_sections_last_key() -> None:
    document = car.read_car(CAR)
    assert car.update_numbers(document, "body", "position", (0.0, 0.5, 0.0), 5, (0, 0, 0))
    text = document.to_bytes()
    assert b"[body]\ntexture = body00.png, body-misc1.png\nmesh = body.joe\nposition = 0, 0.5, 0\n\n[glass]" in text
    assert text.replace(b"position = 0, 0.5, 0\n", b"", 1) == CAR
    assert car.read_car(text).get("body", "position") == "0, 0.5, 0"


def test_a_missing_section_goes_at_the_end_with_the_files_line_breaks() -> None:
    data = CAR.replace(b"\n", b"\r\n").rstrip(b"\r\n")
    document = car.read_car(data)
    document.set_value("extra", "position", "1, 2, 3")
    assert document.to_bytes() == data + b"\r\n[extra]\r\nposition = 1, 2, 3"


def test_keys_read_after_a_change_see_it() -> None:
    """The keys are read from an index, made again when lines are added."""
    document = car.read_car(CAR)
    assert document.get("body", "mesh") == "body.joe" and document.get("body", "position") is None
    document.set_value("body", "mesh", "hood.joe")  # in place
    document.set_value("body", "position", "0, 1, 0")  # a new line
    document.set_value("extra", "position", "1, 2, 3")  # a new section
    assert document.get("body", "mesh") == "hood.joe" and document.get("body", "position") == "0, 1, 0"
    assert document.get("extra", "position") == "1, 2, 3"
    assert {key: line.value for key, line in document.keys("body").items()} == {
        key: line.value for key, line in car.read_car(document.to_bytes()).keys("body").items()}


def test_numbers_are_written_short() -> None:
    assert [car.format_number(value) for value in (1.0, -0.0, 0.1 + 0.2, -1e-9, 215.0, 2.5e-7)] == [
        "1", "0", "0.3", "0", "215", "0"]  # fmt: skip
    assert car.format_number(87.49999, 3) == "87.5"


def test_a_scaled_tyre_keeps_its_rim_and_sidewall_in_proportion() -> None:
    size = car.TireSize(215, 45, 18)
    bigger = size.scaled(1.2, 1.1)
    assert bigger.width_mm == pytest.approx(258) and bigger.rim_inch == pytest.approx(19.8)
    assert bigger.radius == pytest.approx(size.radius * 1.1)
    assert bigger.width == pytest.approx(size.width * 1.2)


# ------------------------------------------------------------------------------------------------ geometry


def test_generated_tyre_and_rim_follow_the_size() -> None:
    size = car.TireSize(215, 45, 18)
    tire = car.generated_tire(size)
    radii = np.hypot(tire.positions[:, 1], tire.positions[:, 2])
    assert radii.max() == pytest.approx(size.radius)  # the tread
    assert radii.min() == pytest.approx(size.rim_radius * 1.08)  # the bead, where the rim's flange is
    assert np.abs(tire.positions[:, 0]).max() <= size.width / 2
    assert tire.quads.shape == (7 * car.SEGMENTS, 4) and tire.corner_uvs.shape == (7 * car.SEGMENTS * 4, 2)
    rim = car.generated_rim(size)
    assert np.hypot(rim.positions[:, 1], rim.positions[:, 2]).max() == pytest.approx(size.rim_radius * 1.08)
    assert rim.quads.shape == (3 * car.SEGMENTS, 4)


def test_the_tread_faces_outwards() -> None:
    tire = car.generated_tire(car.TireSize(205, 55, 16))
    tread = tire.quads[3 * car.SEGMENTS : 4 * car.SEGMENTS]  # the band between rings 3 and 4
    corners = tire.positions[tread]
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 3] - corners[:, 0])
    centres = corners.mean(axis=1)
    radial = centres * np.array([0.0, 1.0, 1.0])
    assert (np.einsum("ij,ij->i", normals, radial) > 0).all()


def test_a_brake_disc_is_read_and_generated() -> None:
    text = OLD_LAYOUT + b"[wheel.fl.brake]\ntexture = rotor.png\nradius = 0.175 # 350mm\n"
    left, right = car.car_parts(car.read_car(text)).wheels
    assert (left.brake_radius, left.brake_textures, left.brake_mesh) == (0.175, ["rotor.png"], None)
    assert (right.brake_radius, right.brake_textures) == (0.0, [])
    disc = car.generated_brake(0.175)
    assert np.hypot(disc.positions[:, 1], disc.positions[:, 2]).max() == pytest.approx(0.175)
    assert np.abs(disc.positions[:, 0]).max() == pytest.approx(0.0125)
    assert disc.corner_uvs.min() == pytest.approx(0.0) and disc.corner_uvs.max() == pytest.approx(1.0)


def test_the_disk_is_moved_and_scaled_as_vdrift_does() -> None:
    offset, scale = car.disk_transform(car.TireSize(215, 45, 18))
    assert offset == (-0.375, 0.0, 0.0)
    assert scale == pytest.approx((0.215, 18 * 0.0254, 18 * 0.0254))


def test_parts_are_found_beside_the_car_then_in_carparts(tmp_path: Path) -> None:
    folder = tmp_path / "data" / "cars" / "XS"
    folder.mkdir(parents=True)
    (folder / "Body.JOE").write_bytes(b"x")
    parts = tmp_path / "data" / "carparts" / "wheel"
    parts.mkdir(parents=True)
    (parts / "hub.joe").write_bytes(b"x")
    car_path = str(folder / "XS.car")
    assert car.find_part(car_path, "body.joe") == str(folder / "Body.JOE")
    assert car.find_part(car_path, "wheel/hub.joe") == str(parts / "hub.joe")
    assert car.find_part(car_path, "../XS/body.joe") is None
    assert car.find_part(car_path, "missing.joe") is None
    listings: car.Listings = {}  # (a car's import lists each folder once for all its names)
    assert car.find_part(car_path, "BODY.joe", listings) == str(folder / "Body.JOE")
    assert car.find_part(car_path, "wheel/hub.joe", listings) == str(parts / "hub.joe")
    (parts / "hub.joe").unlink()
    assert car.find_part(car_path, "wheel/hub.joe", listings) is None  # (listed, but not a file now)
    assert set(listings) >= {str(folder), str(tmp_path / "data" / "carparts")}


# ------------------------------------------------------------------------------------------------ real cars

CORPUS = Path("/work/corpus/vdrift_cars")


def test_real_cars_read_and_write_back_byte_for_byte() -> None:
    cars = sorted(CORPUS.glob("data/cars/*/*.car")) + sorted(CORPUS.glob("car_files/*.car"))
    if not cars:
        pytest.skip(f"no VDrift cars in {CORPUS}")
    for path in cars:
        data = path.read_bytes()
        document = car.read_car(data, str(path))
        assert document.to_bytes() == data
        parts = car.car_parts(document)
        assert [wheel.name for wheel in parts.wheels] == ["fl", "fr", "rl", "rr"]
        assert all(wheel.mirror == (-1, 1, 1) for wheel in parts.wheels if wheel.name.endswith("r"))
        assert all(math.copysign(1, wheel.position[0]) == (1 if wheel.name.endswith("r") else -1)
                   for wheel in parts.wheels)  # fmt: skip  (x is right: the left wheels are at negative x)
        front, rear = parts.wheels[0].position[1], parts.wheels[2].position[1]
        assert front > 0 > rear  # y is forward
        assert parts.drawables[0].section == "body"
