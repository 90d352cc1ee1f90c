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
