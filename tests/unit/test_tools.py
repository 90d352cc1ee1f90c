"""The project's own tooling: the test-count line that tools/test.sh prints over every stage."""

from __future__ import annotations

from pathlib import Path

from tools.test_summary import main


def test_counts_add_up_over_files_and_a_crashed_run_counts_as_a_failure(tmp_path: Path) -> None:
    (tmp_path / "a.xml").write_text(
        '<testsuites><testsuite tests="10" failures="1" errors="1" skipped="2"/></testsuites>'
    )
    (tmp_path / "b.xml").write_text('<testsuite tests="3" failures="0" errors="0" skipped="0"/>')
    files = [str(tmp_path / name) for name in ("a.xml", "b.xml", "never-written.xml")]
    assert main(files) == "9 passed, 3 failed, 2 skipped"


def test_the_fuzz_pass_tells_refusals_from_escapes_and_runaway_work(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import time

    from formats.errors import FormatError
    from tools import fuzz

    def refuses(data: bytes) -> None:
        raise FormatError("bad")

    def escapes(data: bytes) -> None:
        raise IndexError("out of range")

    assert fuzz.run_one(refuses, b"x")[0] == "refused"
    assert fuzz.run_one(escapes, b"x")[0] == "IndexError: out of range"
    monkeypatch.setattr(fuzz, "SECONDS_PER_INPUT", 0.05)
    assert fuzz.run_one(lambda data: time.sleep(1), b"x")[0].startswith("over its time limit")
    monkeypatch.undo()
    tally = fuzz.fuzz("smd", fuzz.smd_reader, [fuzz.SMD_FIXTURE], False, 40, 1)
    assert tally.tried == 40 and not tally.failures and tally.refused


def test_the_sweep_groups_messages_and_tells_losses_from_count_changes() -> None:
    from tools import sweep

    assert sweep.pattern_of("bldg15.dof-00: 8 of 50 texcoords are NaN or infinite: read as 0") == (
        "<name>: N of N texcoords are NaN or infinite: read as N")  # fmt: skip
    assert sweep.pattern_of("m.qc line 12: 'gone.smd' not found") == "<file>: '…' not found"
    base = {"objects": 3, "vertices": 10, "triangles": 12, "bones": 2, "actions": 1, "frames": 5, "shape_keys": 0}
    own = {"target": "smd", "export": {"warnings": []}, "counts": {**base, "objects": 1, "vertices": 9}}
    other = {"target": "iqe", "export": {"warnings": ["w"]}, "counts": {**base, "triangles": 11}}
    record = {"path": "/x/model.qc", "counts": base, "own": own, "other": other}
    found = list(sweep.mismatches(record))
    assert [lost for lost, _ in found] == [False, True]  # (SMD merges objects; a triangle fewer is lost)
    assert found[1][1] == "model.qc -> iqe: triangles 12 -> 11 (w)"
    grown = {**record, "other": {"target": "jpk", "export": {"warnings": []}, "counts": {**base, "objects": 4}}}
    assert [lost for lost, _ in sweep.mismatches(grown)] == [False, False]  # (a model split under a limit)
