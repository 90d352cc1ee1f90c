"""The command line refuses a mistake before doing any work, in one line with exit code 2 (run in this process:
nothing is imported, the scene keeps its sentinel object, and no file is written)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from types import ModuleType

import bpy
import pytest

from formats import joe
from tests import joe_fixtures as fx
from tests.blender.scene_helpers import cube

MISTAKES = [
    (["convert", "{model}", "--to", "iqe", "-o", "{out}/x.joe"], "x.joe has the extension of joe files, not iqe"),
    (["convert", "{model}", "--to", "obj", "-o", "{out}/x.obj"], "unknown format 'obj'"),
    (["convert", "{model}", "-o", "{out}/x.obj"], "unknown file type .obj"),
    (["convert", "{model}", "--to", "iqe", "-o", "{out}/x.txt"], "a iqe file should end with .iqe"),
    (["convert", "{model}", "-o", "{out}/x.qc"], "qc files cannot be written"),
    (["convert", "{model}", "--to", "qc", "-d", "{out}"], "qc files cannot be written"),
    (["convert", "{model}", "-d", "{out}"], "--to is needed with -d"),
    (["convert", "{model}", "-o", "{out}/x.iqe", "--set", "scale"], "--set needs KEY=VALUE, got 'scale'"),
    (["convert", "{model}", "-o", "{out}/x.iqe", "--set", "bogus=1"],
     "--set bogus: not an option of the exporter export_scene.iqe; valid: apply_modifiers, "),
    (["convert", "{model}", "-o", "{out}/x.iqe", "--set", "global_scale=big"],
     "--set global_scale='big': the exporter export_scene.iqe expects float"),
    (["convert", "{model}", "-o", "{out}/x.iqe", "--set", "export_scope=ALL"],
     "--set export_scope='ALL': one of SELECTED|VISIBLE|SCENE (the former name of export_selected_objects)"),
    (["convert", "{model}", "-o", "{out}/x.iqe", "--set", "export_selected_objects=1"],
     "--set export_selected_objects=1: the exporter export_scene.iqe expects bool"),
    (["convert", "{model}", "-o", "{out}/x.iqe", "--import-set", "rewind_clockwise=1"],
     "--import-set rewind_clockwise=1: the importer import_scene.joe expects bool"),
    (["convert", "{model}", "-o", "{out}/x.iqe", "--import-set", "nope=1"],
     "--import-set nope: not an option of the importer import_scene.joe; valid: "),
    (["convert", "{out}/missing.joe", "-o", "{out}/x.iqe"], "missing.joe: no such file"),
    (["convert", "{model_dir}", "--to", "iqe", "-d", "{out}"], ": a folder, not a file (a shell pattern such as "),
    (["import", "{model}", "-o", "{out}/scene.joe"], "scene.joe: the scene is saved as a .blend file"),
    (["export", "{out}/missing.blend", "-o", "{out}/x.iqe"], "missing.blend: no such file"),
    (["options", "obj"], "unknown format 'obj'"),
    (["convert", "{model}", "--to", "joe", "-o", "{model}"], "box.joe is also an input: converting "),
    (["convert", "{model}", "--to", "joe", "-d", "{model_dir}"], "box.joe is also an input"),
    (["convert", "{model}", "--to", "iqe", "-d", "{model}"], "box.joe: not a folder"),
    (["convert", "{model}", "--to", "iqe", "-d", "{model}/sub/out"], "box.joe is a file, not a folder"),
    (["convert", "{model}", "-o", "{out}/missing/x.iqe"], "x.iqe: the folder "),
    (["import", "{model}", "-o", "{out}/missing/x.blend"], "x.blend: the folder "),
    (["export", "{model}", "-o", "{out}/x.iqe"], "box.joe: export reads a .blend file"),
    (["convert", "{model}", "-o", "{out}/x.iqe", "--set", "global_scale=0"],
     "--set global_scale=0: the exporter export_scene.iqe takes values from "),
    (["convert", "{model}", "-o", "{out}/x.iqe", "--set", "max_influences=99"], "takes values from 1 to "),
    (["convert", "{model}", "-o", "{out}/x.qmap", "--set", "k=1.5"],
     "--set k=1.5: the exporter export_scene.qmap takes "),
    (["convert", "{model}", "-o", "{out}/x.qmap", "--set", "max_depth=21"], "takes values from 0 to 20"),
    (["convert", "{model}", "-o", "{out}/x.qmap", "--set", "use_bounds=True", "--set", "bounds_min=(0, 2, 0)"],
     "--set Fixed Bounds: Bounds Min exceeds Bounds Max on Y 2 > 0"),
]  # fmt: skip


@pytest.mark.parametrize(("arguments", "message"), MISTAKES, ids=[" ".join(a[:1] + a[2:4]) for a, _ in MISTAKES])
def test_a_mistake_is_refused_before_any_work_with_exit_code_2(
    arguments: list[str], message: str, tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "box.joe"
    model.write_bytes(fx.cube_bytes())
    out = tmp_path / "out"
    out.mkdir()
    sentinel = cube("Sentinel")
    argv = [a.format(model=model, model_dir=tmp_path, out=out) for a in arguments]
    assert extension.cli.main(argv, prog="iogf") == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("iogf: error: ") and message in line, line
    assert list(bpy.context.scene.objects) == [sentinel]
    assert list(out.iterdir()) == []


def test_options_lists_each_option_with_type_default_and_description(
    extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert extension.cli.main(["options", "smd"], prog="iogf") == 0
    text = capsys.readouterr().out
    assert "smd import options" in text and "smd export options" in text
    assert "  flavour = 'SOURCE'  (one of SOURCE|GOLDSRC)" in text
    assert "  use_custom_normals = True  (bool)\n      Use the file's normals as custom split normals" in text
    assert "filepath" not in text and "filter_glob" not in text
    assert extension.cli.main(["options", "qc"], prog="iogf") == 0
    assert "qc: no export" in capsys.readouterr().out


def test_known_options_of_the_right_type_are_accepted(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "box.joe"
    model.write_bytes(fx.cube_bytes())
    out = tmp_path / "box.iqe"
    argv = ["convert", str(model), "-o", str(out), "--set", "global_scale=2", "--import-set", "rewind_clockwise=False"]
    assert extension.cli.main(argv, prog="iogf") == 0
    assert out.is_file()
    last = capsys.readouterr().out.splitlines()[-2:]
    assert last[0] == f"1 file(s) -> {out}" and last[1].startswith("1 converted, 0 skipped, 0 failed in ")


def test_inputs_of_one_name_from_two_folders_are_refused_for_one_output_folder(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.joe").write_bytes(fx.cube_bytes())
    argv = ["convert", str(tmp_path / "a" / "x.joe"), str(tmp_path / "b" / "x.joe"), "--to", "iqe", "-d",
            str(tmp_path / "out")]  # fmt: skip
    assert extension.cli.main(argv, prog="iogf") == 2
    assert "would both write" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_qmap_source_converted_to_a_map_is_compiled_as_it_is(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """As the standalone compiler does: the same bytes, the sources beside it untouched (through a scene they
    would be rewritten and their numbers rounded again)."""
    import qmap_compiler as qc

    source = tmp_path / "level.qmap.tmp"
    source.write_bytes(b'QMAP TMP 10\nobjects {\n mesh "P" {\n  0,0,0 0,0,0 1,1,1 30 1\n  materials 1 { "M" }\n'
                       b"  vertices 4 { 0,0,0 1,0,0 1,1,0 0,1,0 }\n"
                       b"  faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 }\n }\n}\n")
    desc = tmp_path / "level.qmap.desc"
    desc.write_bytes(b"QMAP DESC 10\n// hand-written\nmaterials {\n \"M\" { name \"wall\"; }\n}\n")
    sources = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    out = tmp_path / "level.qmap"
    argv = ["convert", str(source), "--to", "qmap", "-o", str(out), "--set", "k=0.5", "--set", "max_depth=3"]
    assert extension.cli.main(argv, prog="iogf") == 0, capsys.readouterr().err
    expected = qc.compile_bytes(source.read_bytes(), desc.read_bytes(), qc.CompileOptions(k=0.5, max_depth=3))
    assert out.read_bytes() == expected
    made = {path.name: path.read_bytes() for path in tmp_path.iterdir() if path != out}
    assert made.pop(".iogf-convert.json") and made == sources  # (and the record of what was made, for a rerun)
    assert extension.cli.main([*argv[:6], "--import-set", "use_desc=False"], prog="iogf") == 0
    assert out.read_bytes() == qc.compile_bytes(source.read_bytes())  # without the desc
    assert extension.cli.main([*argv[:6], "--import-set", "global_scale=2"], prog="iogf") == 2
    assert extension.cli.main([*argv[:6], "--set", "apply_modifiers=False"], prog="iogf") == 2
    assert "--set apply_modifiers does not apply" in capsys.readouterr().err


def test_sigterm_inside_an_operator_ends_as_an_interruption(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blender turns the interrupt raised inside an operator into a RuntimeError: it is still an interruption
    (exit 130, one line), not a failed file with a traceback."""
    import os
    import signal

    model = tmp_path / "box.joe"
    model.write_bytes(fx.cube_bytes())
    exporter = extension.exporters.iqe

    def terminated(*_arguments: object) -> None:
        os.kill(os.getpid(), signal.SIGTERM)  # as a CI timeout would, in the middle of the export

    monkeypatch.setattr(exporter, "build_document", terminated)
    out = tmp_path / "box.iqe"
    assert extension.cli.main(["convert", str(model), "-o", str(out)], prog="iogf") == 130
    error = capsys.readouterr().err
    assert "interrupted" in error and "Traceback" not in error, error
    assert not out.exists()


SMD_LINES = 'version 1\nnodes\n0 "root" -1\nend\nskeleton\ntime 0\n0 0 0 0 0 0 0\nend\n'
FILES_READ_OR_WRITTEN_ALONGSIDE = [
    (["convert", "{dir}/cube.qc", "--to", "smd", "-d", "{dir}"], "cube.smd is also an input: converting "),
    (["convert", "{dir}/cube.qc", "-o", "{dir}/cube.smd"], "cube.smd is also an input"),
    (["convert", "{dir}/cube.smd", "{dir}/other.vta", "-o", "{dir}/other.smd", "--set", "export_mode=ALL"],
     "other.vta is also an input"),
    (["convert", "{dir}/cube.qc", "-o", "{dir}/a.smd", "--set", "export_mode=ALL"],
     "a_walk.smd is an input, and converting "),
    (["convert", "{dir}/a_walk.smd", "-o", "{dir}/a.smd", "--set", "export_mode=ANIMATION", "--set",
      "action_scope=ALL"], "each action as "),
]  # fmt: skip


@pytest.mark.parametrize(("arguments", "message"), FILES_READ_OR_WRITTEN_ALONGSIDE,
                         ids=[str(i) for i in range(len(FILES_READ_OR_WRITTEN_ALONGSIDE))])  # fmt: skip
def test_files_a_qc_names_and_files_an_smd_export_writes_alongside_are_checked_too(
    arguments: list[str], message: str, tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("cube.smd", "a_walk.smd"):
        (tmp_path / name).write_text(SMD_LINES)
    (tmp_path / "other.vta").write_text(SMD_LINES.replace("0 0 0 0 0 0 0\n", ""))
    (tmp_path / "cube.qc").write_text('$modelname "cube.mdl"\n$body studio "cube.smd"\n$sequence walk "a_walk.smd"\n')
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    argv = [a.format(dir=tmp_path) for a in arguments]
    assert extension.cli.main(argv, prog="iogf") == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert message in line, line
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before


def test_action_files_of_one_conversion_are_not_replaced_by_another_and_subfolders_are_not_beside(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("a.smd", "a_walk.smd"):
        (tmp_path / name).write_text(SMD_LINES)
    (tmp_path / "a.qc").write_text('$modelname "a.mdl"\n$body studio "a.smd"\n$sequence walk "a_walk.smd"\n')
    (tmp_path / "a_walk.qc").write_text('$modelname "w.mdl"\n$body studio "a.smd"\n')
    out = tmp_path / "out"
    argv = ["convert", str(tmp_path / "a.qc"), str(tmp_path / "a_walk.qc"), "--to", "smd", "-d", str(out), "--set",
            "export_mode=ALL"]  # fmt: skip
    assert extension.cli.main(argv, prog="iogf") == 2  # a's walk would be out/a_walk.smd, a_walk.qc's reference too
    assert "would write " in capsys.readouterr().err and not out.exists()
    parts = tmp_path / "a_parts"
    parts.mkdir()
    (parts / "body.smd").write_text(SMD_LINES + "triangles\nskin\n0 0 0 0 0 0 1 0 0\n0 1 0 0 0 0 1 1 0\n"
                                    "0 0 1 0 0 0 1 0 1\nend\n")  # fmt: skip
    argv = ["convert", str(parts / "body.smd"), "-o", str(tmp_path / "a.smd"), "--set", "export_mode=ALL"]
    assert extension.cli.main(argv, prog="iogf") == 0  # a_parts/body.smd is in a folder, not an a_*.smd beside a.smd


@pytest.mark.parametrize(("name", "message"), [
    ("Nope", "--collection: no collection named 'Nope' in the scene (it has: "),
    ("Empty", "--collection: collection 'Empty' holds no objects"),
])  # fmt: skip
def test_an_unknown_or_empty_collection_is_a_mistake_in_the_command_line(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str], name: str, message: str
) -> None:
    cube("Body")
    bpy.context.scene.collection.children.link(bpy.data.collections.new("Empty"))
    blend = tmp_path / "scene.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)
    out = tmp_path / "out"
    out.mkdir()
    argv = ["export", str(blend), "-o", str(out / "x.iqe"), "--collection", name]
    assert extension.cli.main(argv, prog="iogf") == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"iogf: error: {message}"), line
    assert list(out.iterdir()) == []


def test_a_folder_that_cannot_be_made_is_one_error_line_and_exit_code_1(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "box.joe"
    model.write_bytes(fx.cube_bytes())

    def refused(path: str, exist_ok: bool = False) -> None:  # (as a read-only parent folder does; root ignores modes)
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(extension.cli.os, "makedirs", refused)
    assert extension.cli.main(["convert", str(model), "--to", "iqe", "-d", str(tmp_path / "out")], prog="iogf") == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line == f"error: {tmp_path / 'out'}: cannot make this folder: Permission denied", line


def test_convert_counts_the_files_an_export_writes_beside_its_output(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.unit.test_structured_fuzz import IQE_FIXTURE

    source = tmp_path / "rig.iqe"
    source.write_bytes(IQE_FIXTURE)
    out = tmp_path / "rig.smd"
    argv = ["convert", str(source), "-o", str(out), "--set", "export_mode=ALL"]
    assert extension.cli.main(argv, prog="iogf") == 0
    written = sorted(path.name for path in tmp_path.glob("rig*.smd"))
    assert len(written) > 1  # the reference and an animation file
    more = len(written) - 1
    assert capsys.readouterr().out.splitlines()[-2] == f"1 file(s) -> {out} (and {more} more beside it)"


def test_a_collection_with_nothing_to_export_is_named_in_the_error(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    cube("Body")
    holder = bpy.data.collections.new("CamOnly")
    bpy.context.scene.collection.children.link(holder)
    holder.objects.link(bpy.data.objects.new("Cam", bpy.data.cameras.new("Cam")))
    blend = tmp_path / "scene.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)
    argv = ["export", str(blend), "-o", str(tmp_path / "x.iqe"), "--collection", "CamOnly"]
    assert extension.cli.main(argv, prog="iogf") == 1
    assert "(collection 'CamOnly' holds none)" in capsys.readouterr().err


def test_the_numbered_parts_of_a_split_joe_never_replace_an_input(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("car.joe", "car_2.joe", "car_body.joe"):
        (tmp_path / name).write_bytes(fx.cube_bytes())
    out = tmp_path / "car.joe"
    argv = ["convert", str(tmp_path / "car_2.joe"), "-o", str(tmp_path / "car_x.joe")]
    assert extension.cli.main(argv, prog="iogf") == 0  # (car_x_2.joe... are not inputs)
    argv = ["convert", str(tmp_path / "car_2.joe"), "--to", "joe", "-o", str(tmp_path / "new" / ".." / "car.joe")]
    assert extension.cli.main(argv, prog="iogf") == 2
    assert "car_2.joe is an input, and converting" in capsys.readouterr().err
    assert extension.cli.main([*argv, "--set", "split_large_models=False"], prog="iogf") == 0  # (no parts)
    argv = ["convert", str(tmp_path / "car_body.joe"), "-o", str(out)]  # car_body.joe is no car_<number>.joe
    assert extension.cli.main(argv, prog="iogf") == 0


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX pipes")
def test_an_input_that_is_no_file_is_called_what_it_is(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    pipe = tmp_path / "stream.joe"
    os.mkfifo(pipe)
    odd = tmp_path / os.fsdecode(b"mod\xe8le.joe")
    odd.write_bytes(fx.cube_bytes())
    for source, message in ((pipe, "stream.joe: a pipe (FIFO), not a file to read"),
                            (Path("/dev/zero"), "/dev/zero: a character device, not a file to read"),
                            (odd, "mod\\xe8le.joe: the path is not UTF-8, which Blender's")):  # fmt: skip
        assert extension.cli.main(["convert", str(source), "-o", str(tmp_path / "x.iqe")], prog="iogf") == 2
        err = capsys.readouterr().err
        assert message in err, err
    assert not (tmp_path / "x.iqe").exists()


def test_an_options_former_name_is_read_with_a_note(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "box.joe"
    model.write_bytes(fx.cube_bytes())
    argv = ["convert", str(model), "-o", str(tmp_path / "box.iqe"), "--set", "export_scope=SELECTED"]
    assert extension.cli.main(argv, prog="iogf") == 0
    assert ("note: --set export_scope is now export_selected_objects (Selected Only): export_selected_objects=True"
            in capsys.readouterr().err)  # fmt: skip
    assert (tmp_path / "box.iqe").stat().st_size > 0  # (the import selected what it made)


def test_help_lists_only_the_formats_written_and_summaries_give_no_ui_advice(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert extension.cli.main(["convert", "--help"], prog="iogf") == 0
    after_to = capsys.readouterr().out.split("--to TO", 2)[-1]
    to_help = re.split(r"\n\s+-", after_to, maxsplit=1)[0]  # (to the next option, however argparse wraps)
    assert "smd" in to_help and "qc" not in to_help.replace("qmap", "")
    model = tmp_path / "box.joe"
    model.write_bytes(joe.write_joe(fx.dof2joe_cube()))  # (a warning: VDrift would swap its normals)
    assert extension.cli.main(["convert", str(model), "-o", str(tmp_path / "box.jpk")], prog="iogf") == 0
    out, err = capsys.readouterr()
    assert "warning" in err and "(1 warning)" in out and "see the console" not in out + err
    assert "no image found" not in out + err  # (a JOE names no image: nothing to act on)


def test_a_vdrift_car_is_imported_exported_and_converted(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """.car on the command line: imported into a .blend, exported back over the car it came from (its keys in place),
    converted to other formats as a model; written only from a .car, one car per file."""
    folder = tmp_path / "data" / "cars" / "TEST"
    folder.mkdir(parents=True)
    joe.save_joe(str(folder / "body.joe"), fx.cube())
    car = folder / "TEST.car"
    wheels = "".join(f"[wheel.{side}]\nposition = {x}, {y}, -0.3\n[wheel.{side}.tire]\nsize = 215, 45, 18\n"
                     for side, x, y in (("fl", -0.8, 1.2), ("fr", 0.8, 1.2), ("rl", -0.8, -1.4), ("rr", 0.8, -1.4)))
    car.write_bytes(f"[body]\nmesh = body.joe\nposition = 0, 0.5, 0.25\n{wheels}".encode())
    main = extension.cli.main
    blend = tmp_path / "car.blend"
    assert main(["import", str(car), "-o", str(blend)], prog="iogf") == 0
    assert blend.is_file()
    assert main(["export", str(blend), "-o", str(tmp_path / "back.car")], prog="iogf") == 0
    assert (tmp_path / "back.car").read_bytes() == car.read_bytes()
    assert main(["convert", str(car), "--to", "car", "-d", str(tmp_path / "cars")], prog="iogf") == 0
    assert (tmp_path / "cars" / "TEST.car").read_bytes() == car.read_bytes()
    assert main(["convert", str(car), "-o", str(tmp_path / "car.iqe")], prog="iogf") == 0
    assert (tmp_path / "car.iqe").is_file()
    capsys.readouterr()
    model = tmp_path / "box.joe"
    model.write_bytes(fx.cube_bytes())
    assert main(["convert", str(model), "-o", str(tmp_path / "box.car")], prog="iogf") == 2
    assert "box.joe: a .car is written from a VDrift car imported from a .car" in capsys.readouterr().err
    assert main(["convert", str(car), str(car), "-o", str(tmp_path / "two.car")], prog="iogf") == 2
    assert "a .car file holds one car: convert several with -d FOLDER" in capsys.readouterr().err
    assert not (tmp_path / "box.car").exists() and not (tmp_path / "two.car").exists()
