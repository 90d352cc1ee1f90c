"""`convert` for pipelines: files converted side by side in worker processes give a serial run's bytes and lines;
a rerun converts only what changed; the report holds one JSON object per input; warnings name their input; Ctrl-C
stops every worker and leaves no half-written file."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from tools.bpy_extension import REPO_ROOT


def static_smd(x: float, rows: int = 1) -> str:
    """A static SMD: one bone, a strip of `rows` squares (two triangles each) starting at `x`."""
    lines = ['version 1', 'nodes', '0 "root" -1', 'end', 'skeleton', 'time 0', '0 0 0 0 0 0 0', 'end', 'triangles']
    for row in range(rows):
        y0, y1 = row * 0.5, row * 0.5 + 0.5
        for corners in (((x, y0), (x + 1, y0), (x, y1)), ((x + 1, y0), (x + 1, y1), (x, y1))):
            lines.append("skin")
            lines += [f"0 {cx:g} {cy:g} 0 0 0 1 {cx - x:g} {cy:g}" for cx, cy in corners]
    return "\n".join([*lines, "end", ""])


def inputs(folder: Path, count: int, rows: int = 1) -> list[str]:
    folder.mkdir(exist_ok=True)
    paths = []
    for index in range(count):
        path = folder / f"part{index}.smd"
        path.write_text(static_smd(index * 2.0, rows + index))
        paths.append(str(path))
    return paths


def convert(extension: ModuleType, *argv: str) -> int:
    return int(extension.cli.main(["convert", *argv], prog="iogf"))


def stable(text: str, *folders: Path) -> list[str]:
    """Output lines without what differs between runs: timings and the output folder's name."""
    for folder in folders:
        text = text.replace(str(folder), "OUT")
    return [re.sub(r"in [0-9.]+ s", "in T s", line) for line in text.splitlines()]


def test_side_by_side_gives_the_bytes_lines_and_report_of_one_at_a_time(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    files = inputs(tmp_path / "in", 5)
    for path in files[:4]:  # (the command is busy with these for seconds: its worker starts and takes some)
        Path(path).write_text(static_smd(0.0, 40_000))
    lines = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        assert convert(extension, *files, "--to", "iqe", "-d", str(out), "--jobs", jobs,
                       "--report", str(tmp_path / f"report{jobs}.jsonl")) == 0  # fmt: skip
        captured = capsys.readouterr()
        lines[jobs] = (stable(captured.out, out), stable(captured.err, out))
    assert lines["1"] == lines["2"]
    assert lines["1"][0][-1] == "5 converted, 0 skipped, 0 failed in T s"
    assert [f"{path} -> OUT/part{i}.iqe" for i, path in enumerate(files)] == [
        line for line in lines["1"][0] if " -> " in line
    ]
    for index in range(5):
        name = f"part{index}.iqe"
        assert (tmp_path / "out1" / name).read_bytes() == (tmp_path / "out2" / name).read_bytes()
    reports = [[json.loads(line) for line in (tmp_path / f"report{jobs}.jsonl").read_text().splitlines()]
               for jobs in ("1", "2")]  # fmt: skip
    for first, second in zip(*reports, strict=True):
        assert (first["input"], first["status"], first["counts"]) == (second["input"], second["status"],
                                                                       second["counts"])  # fmt: skip
    assert [entry["input"] for entry in reports[1]] == files
    assert len({entry["converted_by"] for entry in reports[1]}) == 2  # (this process and its one worker)
    assert {entry["converted_by"] for entry in reports[0]} == {f"{socket.gethostname()}:{os.getpid()}"}
    assert reports[1][4]["counts"] == {"objects": 2, "triangles": 10, "bones": 1, "actions": 0}


def test_a_rerun_converts_only_what_changed(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    files = inputs(tmp_path / "in", 3)
    qc, include = tmp_path / "in" / "model.qc", tmp_path / "in" / "bodies.qci"
    qc.write_text('$include "bodies.qci"\n')
    include.write_text('$body "a" "part0.smd"\n')
    out = tmp_path / "out"

    def converted(*extra: str) -> list[str]:
        assert convert(extension, *files, str(qc), "--to", "iqe", "-d", str(out), "--jobs", "1", *extra) == 0
        return [line.split(" -> ")[0] for line in capsys.readouterr().out.splitlines()
                if " -> " in line and "(up to date)" not in line]  # fmt: skip

    assert converted() == [*files, str(qc)]
    assert converted() == []
    Path(files[1]).write_text(static_smd(9.0, 4))
    assert converted() == [files[1]]
    include.write_text('$body "a" "part2.smd"\n')  # (the QC's include changed: its output is made again)
    assert converted() == [str(qc)]
    assert converted("--set", "export_tangents=True") == [*files, str(qc)]  # (other options)
    assert converted("--set", "export_tangents=True") == []
    assert converted("--force") == [*files, str(qc)]
    (out / "part0.iqe").unlink()
    assert converted() == [files[0]]


def test_warnings_name_their_input_and_the_report_says_what_failed(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    good = inputs(tmp_path, 1)[0]
    bad = tmp_path / "bad.smd"
    bad.write_text("garbage\n")
    report = tmp_path / "report.jsonl"
    assert convert(extension, good, str(bad), "--to", "qmap_tmp", "-d", str(tmp_path / "out"), "--jobs", "1",
                   "--report", str(report)) == 1  # fmt: skip
    err = capsys.readouterr().err.splitlines()
    warning = f"{good}: Export QMAP Source: warning: part0_skeleton: armature objects are not exported to QMAP; skipped"
    assert warning in err
    assert f"error: {bad}, line 1, column 1: unknown keyword 'garbage'" in err  # (the path as given, not made absolute)
    entries = [json.loads(line) for line in report.read_text().splitlines()]
    assert [(e["input"], e["status"]) for e in entries] == [(good, "ok"), (str(bad), "failed")]
    assert entries[0]["warnings"] == [warning] and entries[0]["outputs"][0].endswith("part0.qmap.tmp")
    assert entries[1]["error"] == f"{bad}, line 1, column 1: unknown keyword 'garbage'" and not entries[1]["outputs"]


def sigint_as_on_a_terminal() -> None:
    """Ctrl+C's signal handled, also when the tests run in a background job of a non-interactive shell, which
    starts its processes with SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_stops_every_worker_and_a_rerun_converts_what_is_missing(tmp_path: Path) -> None:
    files = inputs(tmp_path / "in", 16, rows=3000)
    for path in files[1:4]:  # (busy for a while after the first is done)
        Path(path).write_text(static_smd(0.0, 40_000))
    out = tmp_path / "out"
    command = [sys.executable, str(REPO_ROOT / "tools" / "iogf.py"), "convert", *files, "--to", "iqe", "-d", str(out),
               "--jobs", "2"]  # fmt: skip
    env = {**os.environ, "BLENDER_USER_RESOURCES": str(tmp_path / "user")}
    batch = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                             preexec_fn=sigint_as_on_a_terminal)  # fmt: skip
    assert batch.stdout is not None
    # Read from the pipe itself until the first file is done (iterating the file object would read ahead into a
    # buffer that communicate() does not see: lines after the first would be lost to the assertions below)
    seen = ""
    while " -> " not in seen and (chunk := os.read(batch.stdout.fileno(), 65536)):
        seen += chunk.decode()
    batch.send_signal(signal.SIGINT)  # (then interrupt the batch)
    rest, err = batch.communicate(timeout=120)
    printed = seen + rest
    assert batch.returncode == 130, err
    assert "interrupted: no file was left half-written" in err
    assert re.fullmatch(r"\d+ converted, 0 skipped, 0 failed in [0-9.]+ s", printed.splitlines()[-1]), printed
    time.sleep(0.5)  # (the workers' own exits)
    assert not [path.name for path in out.iterdir() if path.name.endswith(".tmp")]
    assert 1 <= len(list(out.glob("*.iqe"))) < 16
    # Recorded: what the batch took back from its workers (a file a worker finished as it was stopped is not).
    recorded = len(json.loads((out / ".iogf-convert.json").read_text())["outputs"])
    assert recorded >= 1
    again = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert again.returncode == 0, again.stderr
    summary = again.stdout.splitlines()[-1]
    assert summary.startswith(f"{16 - recorded} converted, {recorded} skipped, 0 failed"), summary


def _streams() -> tuple[tuple[int, int], tuple[int, int], object, object]:
    ends = [os.fstat(fd) for fd in (1, 2)]
    return (ends[0].st_dev, ends[0].st_ino), (ends[1].st_dev, ends[1].st_ino), sys.stdout, sys.stderr


def test_a_ctrl_c_anywhere_in_a_catch_of_blender_s_output_leaves_the_streams_put_back(extension: ModuleType) -> None:
    """The batch's summary line must reach the terminal after Ctrl-C: wherever it lands in the catch of Blender's
    output, the CLI's interrupt handling puts the standard streams back (put_back_all) before it prints."""
    output = extension.cli.BlenderOutput
    before = _streams()
    output().__enter__()  # (the interrupt __exit__ never sees: after __enter__'s last step, before the with block)
    assert _streams() != before
    output.put_back_all()
    assert _streams() == before
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)  # (Python's own, as in the CLI)
    previous = signal.signal(signal.SIGALRM, lambda *_: os.kill(os.getpid(), signal.SIGINT))
    generator = np.random.default_rng(3)
    interrupted = 0
    try:
        for delay in generator.uniform(1e-6, 4e-4, 400).tolist():  # (seen to fail within 100 before the mend)
            try:
                signal.setitimer(signal.ITIMER_REAL, delay)
                with output():
                    sum(range(50))
                time.sleep(0.001)
            except KeyboardInterrupt:
                interrupted += 1
                output.put_back_all()
            assert _streams() == before
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        signal.signal(signal.SIGINT, previous_int)
    assert interrupted > 300


def test_several_blends_export_side_by_side_as_one_at_a_time_and_reruns_skip_them(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    import bpy

    blends = []
    for index in range(3):
        bpy.ops.wm.read_homefile(use_empty=True)
        bpy.ops.mesh.primitive_cube_add(size=1.0 + index)
        blends.append(str(tmp_path / f"scene{index}.blend"))
        bpy.ops.wm.save_as_mainfile(filepath=blends[-1])
    main = extension.cli.main
    for jobs in ("1", "2"):
        assert main(["export", *blends, "--format", "iqe", "-d", str(tmp_path / f"out{jobs}"), "--jobs", jobs],
                    prog="iogf") == 0  # fmt: skip
        lines = capsys.readouterr().out.splitlines()
        assert [line for line in lines if " -> " in line] == [
            f"{blend} -> {tmp_path / f'out{jobs}' / f'scene{i}.iqe'}" for i, blend in enumerate(blends)
        ]
        assert lines[-1].startswith("3 exported, 0 skipped, 0 failed in ")
    for index in range(3):
        name = f"scene{index}.iqe"
        assert (tmp_path / "out1" / name).read_bytes() == (tmp_path / "out2" / name).read_bytes()
    assert main(["export", *blends, "--format", "iqe", "-d", str(tmp_path / "out1")], prog="iogf") == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("0 exported, 3 skipped, 0 failed")
    assert main(["export", *blends, "-o", str(tmp_path / "one.iqe")], prog="iogf") == 2  # (several into one file)
    assert "several .blend files are exported with -d FOLDER" in capsys.readouterr().err


def test_write_qc_reports_and_records_the_qc_and_mesh_files_not_the_chosen_name(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """With Write QC the SMD export writes `<stem>.qc` and an SMD per mesh (named after it), not the chosen file: the
    line, the report and the record name those, and a rerun is up to date only while they are all there."""
    (source,) = inputs(tmp_path / "in", 1)  # part0.smd: its mesh is part0
    out = tmp_path / "out"
    out.mkdir()
    report = tmp_path / "report.jsonl"
    argv = [source, "--to", "smd", "-o", str(out / "model.smd"), "--set", "write_qc=True", "--report", str(report)]
    assert convert(extension, *argv) == 0
    assert sorted(path.name for path in out.iterdir() if not path.name.startswith(".")) == ["model.qc", "part0.smd"]
    lines = capsys.readouterr().out.splitlines()
    assert f"1 file(s) -> {out / 'model.qc'} (and 1 more beside it)" in lines, lines
    (entry,) = [json.loads(line) for line in report.read_text().splitlines()]
    assert sorted(entry["outputs"]) == [str(out / "model.qc"), str(out / "part0.smd")]
    assert convert(extension, *argv[:-2]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert f"1 file(s) -> {out / 'model.qc'} (and 1 more beside it) (up to date)" in lines, lines
    (out / "part0.smd").unlink()  # (a file it wrote is gone: made again)
    assert convert(extension, *argv[:-2]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("1 converted, 0 skipped, 0 failed")
    assert (out / "part0.smd").is_file()


def test_export_of_a_blend_with_write_qc_says_the_files_it_wrote(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    import bpy

    bpy.ops.mesh.primitive_cube_add()
    bpy.context.active_object.name = "Door"
    blend = str(tmp_path / "door.blend")
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    out = tmp_path / "cli"
    out.mkdir()
    argv = ["export", blend, "-o", str(out / "door_model.smd"), "--set", "write_qc=True"]
    assert extension.cli.main(argv, prog="iogf") == 0
    assert not (out / "door_model.smd").exists()
    assert capsys.readouterr().out.splitlines()[-1] == f"exported {out / 'door_model.qc'} (and 1 more beside it)"
    assert (out / "Door.smd").is_file()


def test_write_qc_of_several_inputs_into_one_folder_and_a_mesh_file_two_of_them_write(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Reference mode with Write QC writes no action files and not the chosen names: two models go into one
    folder. Meshes of one name in two of them are one file, which the later one replaces: a warning says so."""
    first, second = inputs(tmp_path / "in", 2)
    out = tmp_path / "out"
    assert convert(extension, first, second, "--to", "smd", "-d", str(out), "--set", "write_qc=True", "-j", "1") == 0
    assert sorted(path.name for path in out.iterdir() if not path.name.startswith(".")) == [
        "part0.qc", "part0.smd", "part1.qc", "part1.smd"]  # fmt: skip
    assert "warning" not in capsys.readouterr().err
    import bpy

    blends = []
    for index in range(2):
        bpy.ops.wm.read_homefile(use_empty=True)
        bpy.ops.mesh.primitive_cube_add(size=1.0 + index)
        bpy.context.active_object.name = "Body"
        blends.append(str(tmp_path / f"prop{index}.blend"))
        bpy.ops.wm.save_as_mainfile(filepath=blends[-1])
    shared = tmp_path / "shared"
    argv = ["export", *blends, "--format", "smd", "-d", str(shared), "--set", "write_qc=True", "-j", "1"]
    assert extension.cli.main(argv, prog="iogf") == 0
    err = capsys.readouterr().err
    assert f"{blends[1]}: warning: {shared / 'Body.smd'} was also written from {blends[0]}" in err


def test_a_rerun_reports_the_outputs_it_skipped_as_the_first_run_wrote_them(
    tmp_path: Path, extension: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # (relative paths, as a pipeline gives them)
    inputs(tmp_path / "in", 2)
    files = ["in/part0.smd", "in/part1.smd"]
    reports = []
    for run in ("first", "again"):
        assert convert(extension, *files, "--to", "smd", "--set", "write_qc=True", "-d", "out", "--jobs", "1",
                       "--report", f"{run}.jsonl") == 0  # fmt: skip
        reports.append([json.loads(line) for line in (tmp_path / f"{run}.jsonl").read_text().splitlines()])
    assert [entry["status"] for entry in reports[1]] == ["skipped", "skipped"]
    assert [entry["outputs"] for entry in reports[1]] == [entry["outputs"] for entry in reports[0]]
    assert all(path.startswith("out/") for entry in reports[0] for path in entry["outputs"])


def loading_blender(pid: int, timeout: float = 60.0) -> None:
    """Wait until the process has begun loading the bpy module (its library is mapped): inside Blender's start
    (without /proc, a while: its start takes a few seconds)."""
    if not os.path.exists(f"/proc/{pid}/maps"):
        time.sleep(0.5)
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/maps") as maps:
            if "/bpy/" in maps.read():
                return
        time.sleep(0.005)
    raise AssertionError("the command did not start loading Blender")


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_while_blender_starts_ends_the_command_cleanly(tmp_path: Path, stop: int) -> None:
    """Ctrl-C or SIGTERM during `import bpy` and the extension's registration (which would raise inside Blender's
    own start, and end with tracebacks, a crash or exit status 0): exit 130, nothing written, nothing left."""
    files = inputs(tmp_path / "in", 3)
    user = tmp_path / "user"
    command = [sys.executable, str(REPO_ROOT / "tools" / "iogf.py"), "convert", *files, "--to", "iqe", "-d",
               str(tmp_path / "out"), "--jobs", "2"]  # fmt: skip
    env = {**os.environ, "BLENDER_USER_RESOURCES": str(user)}
    batch = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                             preexec_fn=sigint_as_on_a_terminal)  # fmt: skip
    loading_blender(batch.pid)  # (well inside the start, however loaded the machine)
    batch.send_signal(stop)
    _, err = batch.communicate(timeout=120)
    assert batch.returncode == 130, err
    assert err.strip().splitlines()[-1] == "interrupted: no file was written", err
    assert not (tmp_path / "out").exists()
