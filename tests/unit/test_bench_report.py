"""The benchmark's report writer (tools/bench_report.py): the Markdown page and its SVG chart, from fake rows."""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[2] / "tools"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))  # (the benchmark scripts import each other by module name, as tools/ runs them)

from bench_report import Machine, chart_label, chart_value, machine_info, text_table, write_report  # noqa: E402
from bench_timing import BenchRow  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
MACHINE = Machine("Test CPU 9000", 2, 24.7, "Debian GNU/Linux 12 (bookworm), Linux 6.1", "5.0.1", "3.11.9")
COMMAND = ".venv/bin/python tools/bench.py --sizes 100k --repeat 1 --write-docs docs/benchmarks.md"


def fake_rows() -> list[BenchRow]:
    return [
        BenchRow("SMD", "import 100k triangles, grid (100,352 made)", 0.30, 412.0, "OBJ", 0.10, 380.0, 0.05),
        BenchRow("SMD", "export 100k triangles, grid", 0.20, 400.0, "OBJ", 0.16, 390.0),
        BenchRow("JPK", "import 2,000 small members with textures", 1.8, 450.0, "OBJ", 0.9, 420.0),
        BenchRow("JPK", "export 2,000 small members with textures", 4.2, 600.0, "OBJ", 0.3, 590.0),  # beyond the scale
        BenchRow("IQE", "import 8,000 joints, no mesh (8,000 bones made)", 0.9, 300.0, "floor", 0.4, 290.0, 0.4),
        BenchRow("QMAP compile", "100,012 faces, whole process", 0.4, 110.0, "Tools.exe", 2.2, 151.0),
        BenchRow("QMAP compile", "1,000,356 faces, whole process", 2.0, 390.0, "Tools.exe",
                 peer_note="not run (no --tools-exe)"),
    ]


def test_the_page_and_its_chart_come_from_the_rows(tmp_path: Path) -> None:
    rows = fake_rows()
    page = tmp_path / "docs" / "benchmarks.md"
    chart = write_report(rows, page, MACHINE, COMMAND, "2026-01-31")
    assert chart == tmp_path / "docs" / "benchmarks.svg"
    text = page.read_text(encoding="utf-8")
    assert COMMAND in text and "2026-01-31" in text
    for shown in ("Test CPU 9000 (2 cores)", "24.7 GB", "Debian GNU/Linux 12", "5.0.1", "3.11.9"):
        assert shown in text
    assert "](benchmarks.svg)" in text and "![" in text
    table = [line for line in text.splitlines() if line.startswith("| ")]
    assert len(table) == 2 + len(rows)  # the header, its alignment line, a line per row
    for row in rows:
        assert row.case in text
    assert "not run (no --tools-exe)" in text
    assert not re.search(r"\b(session|issue|round)s?\b", text, re.IGNORECASE)

    root = ET.parse(chart).getroot()  # well-formed XML
    assert root.tag == f"{SVG}svg"
    bars = [rect for rect in root.iter(f"{SVG}rect") if rect.get("class") == "bar"]
    charted = [row for row in rows if chart_value(row) is not None]
    assert len(bars) == len(charted) == len(rows) - 1  # a bar per row whose peer ran
    assert len([line for line in root.iter(f"{SVG}line") if line.get("class") == "mark"]) == 2  # 1x and 2x
    labels = [element.text or "" for element in root.iter(f"{SVG}text")]
    for row in rows:
        assert chart_label(row) in labels
    assert "IQE import 8,000 joints, no mesh" in labels  # (counts in brackets are left to the table)
    assert "Tools.exe: not run (no --tools-exe)" in labels
    widths = [float(bar.get("width", "0")) for bar in bars]
    assert widths[0] > widths[1] > 0  # 3.0x OBJ is drawn longer than 1.25x
    assert max(widths) == widths[3] and "14.00x OBJ" in labels  # 14x: cut at the end of the scale, its value written


def test_the_chart_shows_imports_as_multiples_of_the_peer_and_the_compiler_as_tools_exe_over_ours() -> None:
    rows = fake_rows()
    obj_value = chart_value(rows[0])
    assert obj_value is not None and abs(obj_value[0] - 3.0) < 1e-9 and obj_value[1] == "3.00x OBJ"
    floor_value = chart_value(rows[4])
    assert floor_value is not None and floor_value[1] == "2.25x floor"
    compile_value = chart_value(rows[5])
    assert compile_value is not None and abs(compile_value[0] - 5.5) < 1e-9
    assert chart_value(rows[6]) is None


def test_the_text_table_has_a_line_per_row_and_this_machine_is_described() -> None:
    rows = fake_rows()
    lines = text_table(rows).splitlines()
    assert len(lines) == 1 + len(rows)
    assert "not run (no --tools-exe)" in lines[-1]
    machine = machine_info("5.0.1")
    assert machine.cores >= 1 and machine.cpu and machine.os and machine.blender == "5.0.1"


def test_several_whole_runs_give_every_runs_ratio_and_the_chart_the_worst(tmp_path: Path) -> None:
    rows = fake_rows()
    assert "each run" not in text_table(rows)  # (one run: no column for it)
    rows[0].run_ratios, rows[5].run_ratios = [3.0, 3.6], [0.4 / 2.2, 0.5 / 2.2]
    rows[6].run_ratios = [None, None]
    header, first = text_table(rows).splitlines()[:2]
    assert header.endswith("ours/peer, each run") and first.endswith("3.00 / 3.60")
    worst = chart_value(rows[0])
    assert worst is not None and abs(worst[0] - 3.6) < 1e-9 and worst[1] == "3.60x OBJ"
    slower_compile = chart_value(rows[5])
    assert slower_compile is not None and abs(slower_compile[0] - 2.2 / 0.5) < 1e-9
    page = tmp_path / "benchmarks.md"
    write_report(rows, page, MACHINE, COMMAND, "2026-01-31")
    text = page.read_text(encoding="utf-8")
    assert "| 3.00 / 3.60 |" in text and "every run's ratio" in text
