"""The benchmark table of tools/bench.py as text, and as a Markdown page with an SVG chart (no bpy here, and no
plotting library: the chart is written as plain SVG text).

    write_report(rows, Path("docs/benchmarks.md"), machine_info("5.0.1"), command, "2026-01-31")

writes the page and, beside it, the chart (`benchmarks.svg`) that the page embeds.
"""

from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from bench_timing import BenchRow

COLUMNS = ("format", "case", "ours s", "peak MB", "peer", "peer s", "peer peak MB", "ours/peer", "ours/floor")
NUMERIC = {"ours s", "peak MB", "peer s", "peer peak MB", "ours/peer", "ours/floor"}

ABOUT = (
    "Each format's importer and exporter runs on the same geometry as Blender's own C++ OBJ importer and exporter, "
    "in the same process and the same run, and the table gives our time over OBJ's (lower is better; 1.0 is as "
    "fast). Where OBJ has nothing alike (a skeleton without a mesh, an animation), the peer is the floor: the bpy "
    "calls alone that make (import) or read (export) the same Blender data from ready arrays, so our time over it "
    "shows what the file's parsing and conversions add. The QMAP compiler runs as a whole process "
    "(`python -m qmap_compiler`), timed from spawn to exit (its bytecode compiled beforehand, as Python leaves it "
    "after a first run), against the original Tools.exe under Wine when it is "
    "given (the Wine server kept running, so that its start is not counted). Times are the best of the runs; peak "
    "memory is the peak resident set of the whole process while the case ran: the benchmark's own process (Blender "
    "included) for imports and exports, the child process alone for the compiler and Tools.exe."
)
RUNS_NOTE = (
    " With several whole runs, the figures are the first run's, the last column gives every run's ratio, and the "
    "chart each row's worst."
)
NOTES = (
    "ours/peer: our time over the peer's (lower is better); ours/floor: our time over the bpy calls alone that "
    "build or read the same data from ready arrays; peak MB: peak resident set of the whole process while the case "
    "ran (imports and exports: the benchmark process, Blender included, its peak reset before each run; compile: "
    "the compiler's own process, and Tools.exe's under Wine)."
)


@dataclass
class Machine:
    cpu: str
    cores: int
    ram_gb: float
    os: str
    blender: str
    python: str

    def lines(self) -> list[tuple[str, str]]:
        return [("CPU", f"{self.cpu} ({self.cores} cores)"), ("RAM", f"{self.ram_gb:.1f} GB"), ("OS", self.os),
                ("Blender (bpy module)", self.blender), ("Python", self.python)]  # fmt: skip


def _first_value(path: str, key: str) -> str | None:
    """The value of the first `key: value` line of a /proc or /etc file."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                name, _, value = line.partition(":" if ":" in line else "=")
                if name.strip() == key:
                    return value.strip().strip('"')
    except OSError:
        return None
    return None


def machine_info(blender: str) -> Machine:
    """This machine: CPU model (/proc/cpuinfo), core count, RAM, OS and kernel; `blender`: bpy's version."""
    cpu = _first_value("/proc/cpuinfo", "model name") or platform.processor() or platform.machine()
    memory = _first_value("/proc/meminfo", "MemTotal")  # "24683652 kB"
    ram_gb = int(memory.split()[0]) * 1024 / 1e9 if memory else 0.0
    distribution = _first_value("/etc/os-release", "PRETTY_NAME")
    system = f"{distribution}, {platform.system()} {platform.release()}" if distribution else platform.platform()
    return Machine(cpu, os.cpu_count() or 0, ram_gb, system, blender, platform.python_version())


# ------------------------------------------------------------------------------------------------ table


EACH_RUN = "ours/peer, each run"  # the column added when a benchmark made several whole runs


def columns(rows: list[BenchRow]) -> tuple[str, ...]:
    return (*COLUMNS, EACH_RUN) if any(len(row.run_ratios) > 1 for row in rows) else COLUMNS


def each_run(row: BenchRow) -> str:
    return " / ".join(f"{ratio:.2f}" if ratio else "-" for ratio in row.run_ratios) if row.peer_time else "-"


def cells(row: BenchRow, names: tuple[str, ...] = COLUMNS) -> list[str]:
    """The row's table cells, in the order of `names` (COLUMNS, and EACH_RUN)."""
    extra = [each_run(row)] if EACH_RUN in names else []
    if row.peer_time:
        peer = [row.peer or "", f"{row.peer_time:.3f}", f"{row.peer_peak_mb:.0f}" if row.peer_peak_mb else "-"]
    else:
        peer = [row.peer or "-", row.peer_note or "-", "-"]
    return [
        row.format, row.case, f"{row.ours:.3f}", f"{row.peak_mb:.0f}" if row.peak_mb else "-", *peer,
        f"{row.ratio:.2f}" if row.ratio else "-", f"{row.ours / row.floor:.2f}" if row.floor else "-", *extra,
    ]  # fmt: skip


def text_table(rows: list[BenchRow]) -> str:
    """The table for a terminal: columns as wide as their widest cell."""
    names = columns(rows)
    table = [list(names), *(cells(row, names) for row in rows)]
    widths = [max(len(line[column]) for line in table) for column in range(len(names))]
    lines = []
    for line in table:
        parts = [cell.rjust(width) if name in NUMERIC else cell.ljust(width)
                 for cell, width, name in zip(line, widths, names, strict=True)]  # fmt: skip
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def markdown_table(rows: list[BenchRow]) -> str:
    names = columns(rows)
    align = ["---:" if name in NUMERIC or name == EACH_RUN else "---" for name in names]
    lines = [f"| {' | '.join(names)} |", f"| {' | '.join(align)} |"]
    lines += [f"| {' | '.join(cell.replace('|', '/') for cell in cells(row, names))} |" for row in rows]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ chart


def chart_value(row: BenchRow) -> tuple[float, str] | None:
    """What the chart draws for a row: (value, its label), of its worst run. Imports and exports: our time as a
    multiple of the peer's (OBJ, or the floor); the compiler: Tools.exe's time over ours. None: the peer did not
    run."""
    if not row.peer_time or not row.ours:
        return None
    ratio = max([ratio for ratio in row.run_ratios if ratio] or [row.ours / row.peer_time])
    if row.peer == "Tools.exe":
        return 1 / ratio, f"Tools.exe {1 / ratio:.2f}x ours"
    return ratio, f"{ratio:.2f}x {row.peer}"


def chart_label(row: BenchRow) -> str:
    """The row's name on the chart: its format and case without the parts in brackets (counts made)."""
    return " ".join(f"{row.format} {re.sub(r'[(][^()]*[)]', '', row.case)}".split())


def _colour(row: BenchRow) -> str:
    if row.peer == "Tools.exe" or "compile" in row.format.lower():
        return "#54a24b"
    return "#f58518" if row.case.lower().startswith("export") else "#4c78a8"


SCALE_CAP = 6.0  # the chart's scale ends here at most: longer bars are cut (marked, their value written)


def render_svg(rows: list[BenchRow]) -> str:
    """Horizontal bars, one per row with a chart value, on a linear scale with lines at 1x and 2x; a bar beyond
    SCALE_CAP is cut at the end of the scale and ends in a white notch."""
    label_width, bar_width, row_height, top, right = 400, 420, 22, 74, 170
    width, height = label_width + bar_width + right, top + row_height * len(rows) + 40
    values = [value for row in rows if (value := chart_value(row)) is not None]
    scale_max = min(SCALE_CAP, max(2.5, *(value * 1.05 for value, _ in values))) if values else 2.5
    step = 0.5 if scale_max <= 3 else 1

    def x(value: float) -> float:
        return label_width + bar_width * value / scale_max

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        '<text x="10" y="20" font-size="14" font-weight="bold">Time as a multiple of the peer\'s</text>',
        '<text x="10" y="37" fill="#444444">imports and exports: ours / the peer\'s (OBJ or the floor), lower is '
        'better; compile: Tools.exe\'s / ours, higher is better</text>',
        '<rect x="10" y="46" width="12" height="12" fill="#4c78a8"/><text x="26" y="57">import</text>',
        '<rect x="90" y="46" width="12" height="12" fill="#f58518"/><text x="106" y="57">export</text>',
        '<rect x="170" y="46" width="12" height="12" fill="#54a24b"/><text x="186" y="57">compile</text>',
    ]

    def haloed(at: str, text: str, fill: str = "#000000") -> str:
        """Text over a white outline of itself, legible over the grid lines (drawn twice: not every renderer
        knows paint-order)."""
        return (f'<text {at} fill="#ffffff" stroke="#ffffff" stroke-width="3">{text}</text>'
                f'<text {at} fill="{fill}">{text}</text>')  # fmt: skip

    bottom = top + row_height * len(rows)
    tick = 0.0
    while tick <= scale_max:
        parts.append(f'<line x1="{x(tick):.1f}" y1="{top - 4}" x2="{x(tick):.1f}" y2="{bottom}" stroke="#e4e4e4"/>')
        parts.append(f'<text x="{x(tick):.1f}" y="{bottom + 16}" text-anchor="middle" fill="#555555">{tick:g}x</text>')
        tick += step
    texts = []  # drawn last, over the bars and the 1x and 2x lines
    for index, row in enumerate(rows):
        y = top + row_height * index
        label = escape(chart_label(row))
        texts.append(f'<text x="{label_width - 8}" y="{y + 15}" text-anchor="end">{label}</text>')
        value = chart_value(row)
        if value is None:
            note = escape(f"{row.peer or 'peer'}: {row.peer_note or 'not run'}")
            texts.append(haloed(f'x="{label_width + 4}" y="{y + 15}"', note, "#777777"))
            continue
        amount, text = value
        end = x(min(amount, scale_max))
        bar = f'x="{label_width}" y="{y + 3}" width="{end - label_width:.1f}" height="{row_height - 6}"'
        parts.append(f'<rect class="bar" {bar} fill="{_colour(row)}"><title>{escape(text)}</title></rect>')
        if amount > scale_max:  # cut: a notch at its end
            parts.append(f'<path d="M {end - 9:.1f} {y + 3} l 5 {(row_height - 6) / 2} l -5 {(row_height - 6) / 2} '
                         f'h 9 v {-(row_height - 6)} z" fill="#ffffff"/>')  # fmt: skip
        texts.append(haloed(f'x="{end + 4:.1f}" y="{y + 15}"', escape(text)))
    for mark in (1.0, 2.0):
        parts.append(f'<line class="mark" x1="{x(mark):.1f}" y1="{top - 8}" x2="{x(mark):.1f}" y2="{bottom + 4}" '
                     'stroke="#222222" stroke-dasharray="4 3"/>')  # fmt: skip
        parts.append(f'<text x="{x(mark):.1f}" y="{top - 11}" text-anchor="middle" font-weight="bold">{mark:g}x</text>')
    parts += texts
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


# ------------------------------------------------------------------------------------------------ page


def render_page(rows: list[BenchRow], machine: Machine, command: str, date: str, chart_name: str) -> str:
    machine_lines = "\n".join(f"- {name}: {value}" for name, value in machine.lines())
    return f"""# Benchmarks

{ABOUT}

Generated by `tools/bench.py --write-docs`; run it again to bring the figures up to date.

## Machine

{machine_lines}

## Command

```
{command}
```

Run on {date}.

## Results

{markdown_table(rows)}

{NOTES}{RUNS_NOTE if EACH_RUN in columns(rows) else ""}

![Each case's time as a multiple of its peer's: bars against lines at 1x and 2x]({chart_name})
"""


def write_report(rows: list[BenchRow], page: Path, machine: Machine, command: str, date: str) -> Path:
    """Write the Markdown page `page` and its chart beside it (the page's name with .svg); returns the chart's
    path."""
    chart = page.with_suffix(".svg")
    page.parent.mkdir(parents=True, exist_ok=True)
    chart.write_text(render_svg(rows), encoding="utf-8")
    page.write_text(render_page(rows, machine, command, date, chart.name), encoding="utf-8")
    return chart
