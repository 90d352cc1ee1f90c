"""Clear errors for bad input, no partial output files, the CLI and the strict `.qmap` reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from qmap_compiler import QmapError, compile_bytes, compile_map, read_qmap
from qmap_compiler.__main__ import main

GOOD = (b'QMAP TMP 10\nobjects {\n mesh "P" {\n  0,0,0 0,0,0 1,1,1 30 1\n  materials 1 { "M" }\n'
        b"  vertices 4 { 0,0,0 1,0,0 1,1,0 0,1,0 }\n  faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 }\n }\n}\n")


def _with(old: bytes, new: bytes) -> bytes:
    assert old in GOOD
    return GOOD.replace(old, new)


BAD_INPUTS = {
    "vertex index out of range": (_with(b"3 0,1 }", b"4 0,1 }"), (7, 37), "out of range"),
    "face with 5 corners": (_with(b"faces 1 { 4", b"faces 1 { 5"), (7, 13), "3 or 4"),
    "face with 2 corners": (_with(b"faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 }", b"faces 1 { 2 0 0 0 0,0 1 1,0 }"),
                            (7, 13), "3 or 4"),
    "material name over 255 bytes": (_with(b'"M"', b'"' + b"n" * 256 + b'"'), (5, 17), "255"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_a_located_error_and_leaves_no_file(case: str, tmp_path: Path) -> None:
    data, (line, column), message = BAD_INPUTS[case]
    source = tmp_path / "map.qmap.tmp"
    source.write_bytes(data)
    with pytest.raises(QmapError) as caught:
        compile_map(source, out_path=tmp_path / "map.qmap")
    assert message in caught.value.message
    assert (caught.value.file, caught.value.line, caught.value.column) == (str(source), line, column)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["map.qmap.tmp"]


@pytest.mark.parametrize(
    ("tmp", "desc"),
    [
        (b"QMAP TMP 10 objects { }", None),
        (_with(b"faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 }", b"faces 0 { }"), None),
        (GOOD, b'QMAP DESC 10 materials { "M" { skip; } }'),
    ],
    ids=["no objects", "no faces", "all skipped"],
)
def test_empty_map_is_an_error(tmp: bytes, desc: bytes | None) -> None:
    with pytest.raises(QmapError, match="empty"):
        compile_bytes(tmp, desc)


def test_renamed_material_over_255_bytes_points_into_the_desc() -> None:
    desc = b'QMAP DESC 10\nmaterials {\n "M" { name "' + b"x" * 300 + b'"; }\n}\n'
    with pytest.raises(QmapError) as caught:
        compile_bytes(GOOD, desc, desc_name="m.qmap.desc")
    assert (caught.value.file, caught.value.line, caught.value.column) == ("m.qmap.desc", 3, 13)


def test_failed_compile_keeps_an_existing_target_byte_identical(tmp_path: Path) -> None:
    source = tmp_path / "map.qmap.tmp"
    target = tmp_path / "map.qmap"
    source.write_bytes(GOOD)
    compile_map(source, out_path=target)
    before = target.read_bytes()
    source.write_bytes(_with(b"3 0,1 }", b"9 0,1 }"))
    with pytest.raises(QmapError):
        compile_map(source, out_path=target)
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["map.qmap", "map.qmap.tmp"]


def test_default_output_name_drops_tmp(tmp_path: Path) -> None:
    source = tmp_path / "level.qmap.tmp"
    source.write_bytes(GOOD)
    report = compile_map(source)
    assert report.output == str(tmp_path / "level.qmap") and (tmp_path / "level.qmap").is_file()


def test_cli_compiles_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "m.qmap.tmp"
    source.write_bytes(GOOD)
    out = tmp_path / "m.qmap"
    assert main([str(source), "-o", str(out), "--k", "0.5", "--max-depth", "3", "--verbose", "--info"]) == 0
    assert out.read_bytes() == compile_bytes(GOOD, options=__import__("qmap_compiler").CompileOptions(k=0.5,
                                                                                                      max_depth=3))
    printed = capsys.readouterr().out
    assert '"M"' in printed and "collision tree" in printed and "timing parse" in printed
    assert main(["--info", str(out)]) == 0
    assert "draw: 4 vertices, 6 indices" in capsys.readouterr().out


def test_cli_bounds_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "m.qmap.tmp"
    source.write_bytes(GOOD)
    out = tmp_path / "m.qmap"
    assert main([str(source), "-o", str(out), "--bounds", "-60,-20,-60;60,40,0"]) == 0
    assert read_qmap(out.read_bytes()).draw_nodes.boxes[0].tolist() == [-60, -20, -60, 60, 40, 0]
    assert "warning: the geometry reaches outside the given root box" in capsys.readouterr().err  # (z = 1 > 0)
    assert main([str(source), "-o", str(out), "--bounds", "1,2;3"]) == 2
    assert main([str(source), "-o", str(out), "--bounds", "-60,-20,-60;60,40,60"]) == 0
    assert "reaches outside the given root box" not in capsys.readouterr().err
    assert main([str(source), "-o", str(out), "--bounds", "1,1,1;1,1,1"]) == 0  # legal, but it holds nothing
    assert "warning: the geometry reaches outside the given root box" in capsys.readouterr().err


def test_cli_error_message_and_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "m.qmap.tmp"
    source.write_bytes(_with(b"QMAP TMP 10", b"QMAP TMP 11"))
    assert main([str(source), "-o", str(tmp_path / "m.qmap")]) == 1
    assert capsys.readouterr().err.strip() == f"{source}:1:10: wrong version (expected QMAP TMP 10)"
    assert main([str(tmp_path / "missing.qmap.tmp")]) == 2
    assert main([str(source), "--k", "1.5"]) == 2
    assert not (tmp_path / "m.qmap").exists()


def test_reader_rejects_damaged_files() -> None:
    data = compile_bytes(GOOD)
    read_qmap(data)
    problems = {
        "truncated": data[:-1],
        "trailing byte": data + b"\0",
        "bad magic": b"TFQMAP11" + data[8:],
        "huge vertex count": data[:14] + b"\xff\xff\xff\x7f" + data[18:],
        "index past the vertices": data[:246] + b"\x09" + data[247:],
        "HasSubNodes not a bool": data[:294] + b"\x02" + data[295:],
        "fragment out of range": data[:303] + b"\x09" + data[304:],
    }
    for name, damaged in problems.items():
        with pytest.raises(QmapError) as caught:
            read_qmap(damaged, "x.qmap")
        assert caught.value.offset is not None and caught.value.file == "x.qmap", name


def test_positions_kept_when_the_text_is_let_go_locate_errors_as_before() -> None:
    from qmap_compiler.tokenizer import Source

    raw = b"".join(b"line %d \\\n joined\r\n  mesh \"%s\"\n" % (n, b"n" * n) for n in range(300))
    positions = [7, 5000, 12, 9000, 5000, len(raw) - 3, 0]  # unsorted, repeated, at both ends
    source = Source(raw, "m.qmap.tmp")
    expected = {pos: source.error(pos, "x") for pos in positions}
    source.forget_text(reversed(positions))
    assert source.raw == source.text == b""
    for pos, error in expected.items():
        again = source.error(pos, "x")
        assert (again.line, again.column, again.offset) == (error.line, error.column, error.offset), pos


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["{source}", "-o", "{source}"], "is also an input: compiling would replace the file being read"),
        (["{source}", "-d", "{desc}", "-o", "{desc}"], "is also an input"),
        (["{source}", "-o", "{folder}/missing/m.qmap"], "the folder"),
        (["{source}", "-o", "{folder}"], "is a folder, not a file to write"),
        (["{folder}/missing.qmap.tmp"], "missing.qmap.tmp: no such file"),
        (["{source}", "-d", "{folder}/missing.qmap.desc"], "missing.qmap.desc: no such file"),
        (["{source}", "--k", "1.5"], "K must satisfy 0 <= K < 1"),
        (["{source}", "--max-depth", "-3"], "depth must be >= 0"),
        (["{source}", "--bounds", "10,10,10;-10,-10,-10"], "the first corner must be the lower one"),
        (["{source}", "--bounds", "nan,0,0;1,1,1"], "every coordinate must be a finite number"),
        (["{source}", "--bounds", "1,2;3"], "--bounds must look like"),
    ],
)
def test_cli_refuses_a_mistake_before_any_work_with_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], message: str
) -> None:
    source = tmp_path / "m.qmap.tmp"
    source.write_bytes(GOOD)
    desc = tmp_path / "m.qmap.desc"
    desc.write_bytes(b"QMAP DESC 10\nmaterials {\n}\n")
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    argv = [a.format(source=source, desc=desc, folder=tmp_path) for a in arguments]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert message in error and "python -m qmap_compiler: error: " in error, error
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before


def test_cli_stops_on_sigterm_as_on_ctrl_c_and_keeps_the_old_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    import os
    import signal

    import qmap_compiler.__main__ as cli

    source = tmp_path / "m.qmap.tmp"
    source.write_bytes(GOOD)
    out = tmp_path / "m.qmap"
    out.write_bytes(b"old map")

    def terminated(*_arguments: object, **_keywords: object) -> object:
        os.kill(os.getpid(), signal.SIGTERM)  # as a CI timeout would, in the middle of the compile
        raise AssertionError("SIGTERM did not stop the compile")

    monkeypatch.setattr(cli, "compile_map", terminated)
    assert main([str(source), "-o", str(out)]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["m.qmap", "m.qmap.tmp"]
    assert out.read_bytes() == b"old map"
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handler is put back


def test_the_compiler_writes_through_a_link_and_into_a_device(tmp_path: Path) -> None:
    import os

    source = tmp_path / "m.qmap.tmp"
    source.write_bytes(GOOD)
    real = tmp_path / "real.qmap"
    real.write_bytes(b"old")
    link = tmp_path / "link.qmap"
    link.symlink_to(real)
    assert main([str(source), "-o", str(link)]) == 0
    assert link.is_symlink() and read_qmap(real.read_bytes()).materials
    assert main([str(source), "-o", os.devnull]) == 0
    assert Path(os.devnull).is_char_device()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_cli_notes_a_desc_beside_the_source_that_it_does_not_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As Tools.exe (`/d=`), the material options are read only from -d; one lying beside the source is named."""
    source = tmp_path / "m.qmap.tmp"
    source.write_bytes(GOOD)
    out = tmp_path / "m.qmap"
    assert main([str(source), "-o", str(out)]) == 0
    assert "note:" not in capsys.readouterr().err
    desc = tmp_path / "m.qmap.desc"
    desc.write_bytes(b"QMAP DESC 10\nmaterials {\n}\n")
    assert main([str(source), "-o", str(out)]) == 0
    note = f"note: {desc} is beside the map but not used: its material options are read only when passed with -d {desc}"
    assert note in capsys.readouterr().err
    assert main([str(source), "-d", str(desc), "-o", str(out)]) == 0
    assert "note:" not in capsys.readouterr().err


def test_a_long_run_of_digits_is_read_at_once_and_refused_in_few_words() -> None:
    """The fast block reader once took a pass over every number per character of the longest (a 16,000-digit
    coordinate among 400 vertices: 0.57 s); a word that cannot be a number is named by its first characters."""
    from tests.time_guard import no_runaway

    n = 400
    vertices = " ".join(f"{i},0,0" for i in range(n - 1)) + " 0," + "1" * 16_000 + ",0"
    faces = " ".join(f"3 0 0 0 0,0 {i} 0,0 {i + 1} 0,0" for i in range(1, n - 1))
    long_number = _with(b"vertices 4 { 0,0,0 1,0,0 1,1,0 0,1,0 }", f"vertices {n} {{ {vertices} }}".encode()).replace(
        b"faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 }", f"faces {n - 2} {{ {faces} }}".encode())  # fmt: skip
    with no_runaway():
        for _ in range(20):  # (11 s in all before)
            compile_bytes(long_number)  # (atof's infinity, as Tools.exe reads it)
    with pytest.raises(QmapError) as raised:
        compile_bytes(_with(b"vertices 4", b"vertices " + b"1" * 16_000))
    assert str(raised.value).endswith("cannot convert '1111111111111111111111111111111111111111...' (16,000 "
                                      "characters) to an unsigned integer")  # fmt: skip


@pytest.mark.parametrize("case", ["compiled", "read error", "usage error"])
def test_the_command_as_a_process_prints_everything_and_exits_with_main_s_code(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    """`python -m qmap_compiler` leaves without the interpreter's teardown: its printed lines must still all arrive
    (through a pipe, buffered as Python buffers one) and its exit code be main()'s."""
    import os
    import subprocess
    import sys

    source = tmp_path / "m.qmap.tmp"
    source.write_bytes(GOOD if case != "read error" else _with(b"QMAP TMP 10", b"QMAP TMP 11"))
    argv = [str(source), "-o", str(tmp_path / "m.qmap"), "-v"] + (["--k", "1.5"] if case == "usage error" else [])
    code = main(argv)
    expected = capsys.readouterr()
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    run = subprocess.run([sys.executable, "-m", "qmap_compiler", *argv], capture_output=True, text=True,
                         env=environment, cwd=Path(__file__).resolve().parents[2], check=False)  # fmt: skip
    assert (run.returncode, case) == ({"compiled": 0, "read error": 1, "usage error": 2}[case], case)
    assert run.returncode == code
    assert _without_timings(run.stdout) == _without_timings(expected.out)
    assert run.stdout.endswith("\n") or not expected.out
    assert run.stderr == expected.err


def _without_timings(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith("timing "))


def test_a_compile_loads_no_module_that_only_other_commands_use(tmp_path: Path) -> None:
    """Every run's start-up pays for each module loaded: a small map's compile needs neither the text writer, nor
    the resource list, nor threads' pools, nor numpy.typing (annotations only)."""
    import subprocess
    import sys

    source = tmp_path / "m.qmap.tmp"
    source.write_bytes(GOOD)
    script = ("import sys; from qmap_compiler.__main__ import main; code = main(sys.argv[1:]); "
              "print(sorted(name for name in ('numpy.typing', 'qmap_compiler.text_writer', 'qmap_compiler.resources', "
              "'concurrent.futures') if name in sys.modules))")  # fmt: skip
    command = [sys.executable, "-c", script, str(source), "-o", str(tmp_path / "m.qmap")]
    run = subprocess.run(command, capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2], check=True)
    assert run.stdout.splitlines()[-1] == "[]"


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts the process's threads in Linux's /proc")
@pytest.mark.parametrize("given", [None, "2"])
def test_the_command_starts_no_blas_threads_unless_told(tmp_path: Path, given: str | None) -> None:
    """OpenBLAS starts a thread on every core with numpy, which the compiler never asks for: the command keeps one
    unless the environment says otherwise."""
    import os
    import subprocess
    import sys

    script = ("import os, sys; import qmap_compiler.__main__; import numpy; "
              "print(os.environ['OPENBLAS_NUM_THREADS'], len(os.listdir('/proc/self/task')))")  # fmt: skip
    environment = {name: value for name, value in os.environ.items() if name != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        environment["OPENBLAS_NUM_THREADS"] = given
    root = Path(__file__).resolve().parents[2]
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=root, env=environment,
                         check=True)  # fmt: skip
    setting, threads = run.stdout.split()
    assert setting == (given or "1")
    if given is None:
        assert threads == "1"
