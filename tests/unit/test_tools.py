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
