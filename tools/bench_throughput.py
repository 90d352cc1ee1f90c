"""Throughput of `convert` on many small files: SMD -> IQM, files per second four ways, and what limits scaling.

    .venv/bin/python tools/bench_throughput.py                 # 500 files
    .venv/bin/python tools/bench_throughput.py --count 100     # fewer
    .venv/bin/python tools/bench_throughput.py --repeat 1      # (b) and (c) once each

The inputs are made by code (`skinned_smd`): each a tube of a few hundred triangles (--triangles, 400 by default)
skinned to a chain of bones (--bones, 20), two weights per vertex, a little different from file to file. Then:

(a) one Blender process per file, as a hand-written loop does (`tools/iogf.py convert ONE.smd --to iqm -d OUT`),
    on the first --per-process files only (40 by default; each costs a whole Blender start) and given per file;
(b) one `convert --jobs 1`: every file in the command's own Blender process;
(c) one `convert --jobs 2`: two files at a time, one in the command's own process, one in its worker process;
(e) the --jobs 2 command again without --force, every output up to date, against the time of `iogf options smd`
    (Blender's start with the extension, nothing converted);
(d) `convert --scheduler` on a local Dask cluster the script starts (a scheduler and two `dask worker --nthreads
    1`), when the `distributed` package is installed: a first batch (each Dask worker starts its Blender process)
    and a second one (`--force`: the workers' Blender processes are kept from the first).

Every run is a fresh process timed from start to exit (Blender's start included) with `--force`, so nothing is
skipped. Files per second = files / wall seconds. (b) and (c) run --repeat times each, one after the other, and
the fastest run of each is shown: on a shared machine a slow spell can slow one run by a quarter.

Peak memory: the peak resident set (VmHWM in /proc/PID/status, which the kernel keeps as the largest RSS the
process ever had) of each process below the timed command, read every 0.1 s while it runs; the last reading of a
process before it exits is its peak (it may miss a rise in its last 0.1 s: a worker's peak comes while it
converts, long before it exits). (b) is the command's own process, (c) the command's and its worker's, (d) each
Blender process of the Dask workers.

Per-file cost: the `seconds` each file took where it was converted (from --report, whose `converted_by` names the
process): alone (b) against two side by side (c), this says how much slower each converts when two run at once
(shared cores, memory bandwidth, turbo clocks). The command's own CPU time (utime + stime of the batch process in
/proc/PID/stat, without its workers') when it converts nothing itself (with --scheduler), beyond Blender's start,
is what does not run side by side: handing out the tasks, taking the results, the record, the report, the lines.
With N side by side the batch can go no faster than N / (per-file cost) files per second, nor than 1 / (that CPU
per file).

The machine may be shared: other work running at the same time slows some runs more than others; the figures
but (b) and (c) are one run each.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

REPO_ROOT = Path(__file__).resolve().parent.parent
IOGF = [sys.executable, str(REPO_ROOT / "tools" / "iogf.py")]
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def skinned_smd(index: int, triangles: int = 400, bones: int = 20) -> str:
    """A reference SMD: a tube along X of about `triangles` triangles, skinned to a chain of `bones` bones one
    unit apart (each vertex to the two nearest, weights adding to 1); `index` varies the radius and the twist."""
    sides = 10
    rings = max(1, round(triangles / (2 * sides)))
    length = float(bones - 1) if bones > 1 else 1.0
    radius, twist = 0.3 + 0.002 * (index % 50), 0.05 * (index % 7)
    lines = ["version 1", "nodes", *(f'{b} "bone{b}" {b - 1}' for b in range(bones)), "end", "skeleton", "time 0"]
    lines += [f"{b} {0.0 if b == 0 else 1.0:g} 0 0 0 0 0" for b in range(bones)]
    lines += ["end", "triangles"]

    def vertex(ring: int, side: int) -> str:
        x = length * ring / rings
        angle = 2 * math.pi * side / sides + twist * ring
        ny, nz = math.cos(angle), math.sin(angle)
        first = min(int(x), bones - 1)
        second = min(first + 1, bones - 1)
        blend = x - first if second != first else 0.0
        links = f"2 {first} {1 - blend:.4f} {second} {blend:.4f}" if second != first else f"1 {first} 1"
        return (f"{first} {x:.5f} {radius * ny:.5f} {radius * nz:.5f} 0 {ny:.5f} {nz:.5f} {side / sides:.4f} "
                f"{ring / rings:.4f} {links}")  # fmt: skip

    for ring in range(rings):
        for side in range(sides):
            a, b = vertex(ring, side), vertex(ring, side + 1)
            c, d = vertex(ring + 1, side), vertex(ring + 1, side + 1)
            lines += ["skin", a, c, b, "skin", b, c, d]
    return "\n".join([*lines, "end", ""])


def make_inputs(folder: Path, count: int, triangles: int = 400, bones: int = 20) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(count):
        path = folder / f"model{index:04d}.smd"
        path.write_text(skinned_smd(index, triangles, bones))
        paths.append(str(path))
    return paths


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# Processes, from /proc (Linux).


def parent_of(pid: int) -> int | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(text[text.rindex(")") + 2 :].split()[1])


def descendants(root: int) -> list[int]:
    """Every process below `root` (children, their children...)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (parent := parent_of(int(entry))) is not None:
            children.setdefault(parent, []).append(int(entry))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def peak_kib(pid: int) -> int | None:
    """VmHWM: the largest resident set the process has had, in KiB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def cpu_seconds(pid: int) -> float | None:
    """The process's own user + system CPU time (not its children's)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def is_worker(pid: int, text: str | None = None) -> bool:
    """A batch's Blender worker (the bootstrap `cli.worker_command` starts with the bpy module, or a Blender
    binary running `worker`)."""
    text = command_line(pid) if text is None else text
    return 'main(["worker"]' in text or text.rstrip().endswith(" worker")


@dataclass
class Watched:
    """A timed run: its wall time, the peak memory of the processes below it, and its own CPU time."""

    seconds: float = 0.0
    root: int = 0
    peaks: dict[int, int] = field(default_factory=dict)  # pid -> VmHWM KiB, the last reading
    names: dict[int, str] = field(default_factory=dict)
    own_cpu: float = 0.0
    cpu_before_workers: float | None = None  # its own CPU time when its first worker was seen
    returncode: int = 0


def watched_run(command: Sequence[str], also: Sequence[int] = (), log: Path | None = None) -> Watched:
    """Run `command` to its end, its output into `log` (or nowhere), reading the peak memory of it, of the
    processes below it and below `also` (the Dask workers), every 0.1 s."""
    watched = Watched()
    out = open(log, "w") if log else subprocess.DEVNULL  # noqa: SIM115  (closed below)
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=out, stderr=out, cwd=REPO_ROOT)
    watched.root = process.pid
    try:
        while process.poll() is None:
            below = descendants(process.pid)
            for pid in [process.pid, *below, *(p for a in also for p in descendants(a))]:
                if (peak := peak_kib(pid)) is not None:
                    watched.peaks[pid] = peak
                    watched.names[pid] = command_line(pid)  # (again: a child just forked has its parent's)
            cpu = cpu_seconds(process.pid)
            watched.own_cpu = cpu if cpu is not None else watched.own_cpu
            if watched.cpu_before_workers is None and any(is_worker(pid) for pid in below):
                watched.cpu_before_workers = watched.own_cpu
            time.sleep(0.1)
        watched.seconds = time.perf_counter() - started
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        if log:
            out.close()  # type: ignore[union-attr]
    watched.returncode = process.returncode
    return watched


def worker_peaks(watched: Watched) -> list[int]:
    return [peak for pid, peak in watched.peaks.items() if is_worker(pid, watched.names[pid])]


def report_costs(path: Path) -> dict[str, list[float]]:
    """Each file's `seconds` from a --report, by the process that converted it."""
    costs: dict[str, list[float]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            entry = json.loads(line)
            costs.setdefault(str(entry["converted_by"]), []).append(float(entry["seconds"]))
    return costs


@dataclass
class Cluster:
    address: str
    workers: list[int]  # the `dask worker` processes
    stopped: list[int] = field(default_factory=list)  # at the end: every process that was stopped


@contextlib.contextmanager
def dask_cluster(workers: int, folder: Path) -> Iterator[Cluster]:
    """A scheduler and `workers` Dask workers (one thread each) on 127.0.0.1, started in the project folder with
    this Python, logging into `folder`; every process below them is stopped at the end, whatever happened."""
    port = free_port()
    cluster = Cluster(f"tcp://127.0.0.1:{port}", [])
    started: list[subprocess.Popen[bytes]] = []
    logs = []
    try:
        log = open(folder / "scheduler.log", "wb")  # noqa: SIM115
        logs.append(log)
        started.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port),
             "--no-dashboard"], cwd=REPO_ROOT, stdout=log, stderr=log))  # fmt: skip
        wait_for_port(port, 30)
        for number in range(workers):
            log = open(folder / f"worker{number}.log", "wb")  # noqa: SIM115
            logs.append(log)
            started.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", cluster.address, "--nthreads", "1",
                 "--no-dashboard"], cwd=REPO_ROOT, stdout=log, stderr=log))  # fmt: skip
        cluster.workers = [p.pid for p in started[1:]]
        wait_for_workers(cluster.address, workers, 60)
        yield cluster
    finally:
        cluster.stopped = stop_all(started)
        for log in logs:
            log.close()


def wait_for_port(port: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {seconds} s") from None
            time.sleep(0.1)


def wait_for_workers(address: str, count: int, seconds: float) -> None:
    import distributed

    with distributed.Client(address, timeout=seconds) as client:
        client.wait_for_workers(count, timeout=seconds)


def stop_all(processes: Sequence[subprocess.Popen[bytes]]) -> list[int]:
    """SIGTERM to each process and everything below it (found before any is stopped: an orphan is no longer below
    its parent), then SIGKILL to what is left after 10 s; the processes stopped."""
    pids = []
    for process in processes:
        pids += [process.pid, *descendants(process.pid)]
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    for process in processes:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
    while time.monotonic() < deadline and any(alive(pid) for pid in pids):
        time.sleep(0.1)
    for pid in pids:
        if alive(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait()
    return pids


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rindex(")") + 2] != "Z"


def mib(kib: int) -> str:
    return f"{kib / 1024:.0f} MiB"


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=500, help="how many files (500)")
    parser.add_argument("--triangles", type=int, default=400, help="triangles per file (400)")
    parser.add_argument("--bones", type=int, default=20, help="bones per file (20)")
    parser.add_argument("--per-process", type=int, default=40,
                        help="how many files (a) converts, one Blender process each (40)")  # fmt: skip
    parser.add_argument("--repeat", type=int, default=3, help="runs of (b) and (c), one after the other; the "
                        "fastest of each is shown (3)")  # fmt: skip
    parser.add_argument("--keep", metavar="FOLDER", help="make the files here and keep them (default: a temporary "
                        "folder, removed)")  # fmt: skip
    parser.add_argument("--write-docs", metavar="PAGE.md", help="also write the figures, machine and command line "
                        "as a Markdown page, e.g. docs/throughput.md")  # fmt: skip
    args = parser.parse_args(argv)
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="iogf-throughput-"))
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(Tee(sys.stdout, printed)):
            status = run(args, folder)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    if status == 0 and args.write_docs:
        write_page(Path(args.write_docs), printed.getvalue(), ["tools/bench_throughput.py", *argv])
    return status


class Tee(io.TextIOBase):
    """Writes to both streams: the figures shown as they come, and kept for the page."""

    def __init__(self, *streams: IO[str]) -> None:
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
            stream.flush()
        return len(text)


def write_page(page: Path, figures: str, command: list[str]) -> None:
    """The figures as printed, with the machine and the command that measured them."""
    from bench_report import machine_info

    blender = subprocess.run([sys.executable, "-c", "import bpy; print(bpy.app.version_string)"], capture_output=True,
                             text=True, check=False).stdout.strip().splitlines()  # fmt: skip
    machine = machine_info(blender[-1] if blender else "?")
    lines = [
        "# Batch throughput", "",
        "Many small files converted by `convert`, as files per second: one Blender process per file (the loop a "
        "pipeline writes itself), one `convert --jobs 1`, `convert --jobs 2`, and a local Dask cluster of two "
        "workers (`--scheduler`), with each process's peak memory. What each row measures, and how: the docstring "
        "of `tools/bench_throughput.py`.", "",
        "Generated by `tools/bench_throughput.py --write-docs`; run it again to bring the figures up to date.", "",
        "## Machine", "", *(f"- {name}: {value}" for name, value in machine.lines()), "",
        "## Command", "", "```", f".venv/bin/python {' '.join(command)}", "```", "",
        f"Run on {time.strftime('%Y-%m-%d')}.", "",
        "## Figures", "", "```", figures.rstrip(), "```", "",
    ]  # fmt: skip
    page.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {page}")


def run(args: argparse.Namespace, folder: Path) -> int:
    files = make_inputs(folder / "in", args.count, args.triangles, args.bones)
    size = sum(os.path.getsize(path) for path in files) / len(files)
    print(f"{len(files)} SMD files of about {args.triangles} triangles and {args.bones} bones ({size / 1024:.0f} KiB "
          f"each) -> IQM; {os.cpu_count()} cores; (b), (c) the fastest of {args.repeat} runs, the others one run; "
          "on a machine other work may share")  # fmt: skip
    rates: dict[str, float] = {}

    def line(name: str, files_done: int, watched: Watched, note: str = "") -> None:
        rate = files_done / watched.seconds
        rates[name] = rate
        print(f"  {name:<34} {watched.seconds:8.1f} s  {rate:7.2f} files/s  {note}".rstrip())

    # (a) a Blender process per file
    sample = files[: max(1, min(args.per_process, len(files)))]
    total = Watched()
    peaks = []
    for path in sample:
        watched = watched_run([*IOGF, "convert", path, "--to", "iqm", "-d", str(folder / "out_a"), "--force"])
        if watched.returncode != 0:
            print(f"(a) failed on {path}", file=sys.stderr)
            return 1
        total.seconds += watched.seconds
        peaks.append(max(watched.peaks.values()))
    line(f"(a) a process per file ({len(sample)} files)", len(sample), total, f"peak {mib(max(peaks))} per process")

    # (b), (c): one command
    runs: dict[int, Watched] = {}
    for attempt in range(args.repeat):  # (alternately: a slow spell of a shared machine hits both alike)
        for jobs in (1, 2):
            report = folder / f"report{jobs}_{attempt}.jsonl"
            command = [*IOGF, "convert", *files, "--to", "iqm", "-d", str(folder / f"out_{jobs}"), "--jobs",
                       str(jobs), "--force", "--report", str(report)]  # fmt: skip
            watched = watched_run(command, log=folder / f"jobs{jobs}.log")
            if watched.returncode != 0:
                print(f"--jobs {jobs} failed: see {folder / f'jobs{jobs}.log'}", file=sys.stderr)
                return 1
            if jobs not in runs or watched.seconds < runs[jobs].seconds:
                runs[jobs] = watched
                shutil.copyfile(report, folder / f"report{jobs}.jsonl")  # (the best run's, for the scaling)
    for jobs, watched in runs.items():
        if jobs == 1:
            note = f"peak {mib(watched.peaks[watched.root])} (the one process)"
        else:
            note = (f"peak {mib(watched.peaks[watched.root])} (the command), "
                    + ", ".join(mib(p) for p in worker_peaks(watched)) + " (its worker)")  # fmt: skip
        line(f"({'b' if jobs == 1 else 'c'}) convert --jobs {jobs}", len(files), watched, note)
    print(f"  (c) / (b): {rates['(c) convert --jobs 2'] / rates['(b) convert --jobs 1']:.2f}")

    # (e): the same command again with nothing to do, against Blender's start with the extension alone
    again = watched_run([*IOGF, "convert", *files, "--to", "iqm", "-d", str(folder / "out_1"), "--jobs", "2"],
                        log=folder / "rerun.log")  # fmt: skip
    start = watched_run([*IOGF, "options", "smd"])
    if again.returncode != 0 or start.returncode != 0:
        print(f"(e) failed: see {folder / 'rerun.log'}", file=sys.stderr)
        return 1
    print(f"  (e) the rerun with nothing to do    {again.seconds:8.1f} s  (Blender's start with the extension, "
          f"`iogf options smd`: {start.seconds:.1f} s; {again.seconds / start.seconds:.2f} x)")  # fmt: skip

    # (d): a local Dask cluster
    dispatching: Watched | None = None  # (its second batch)
    try:
        import distributed  # noqa: F401
    except ImportError:
        print("  (d) Dask: skipped, the 'distributed' package is not installed (bash tools/setup.sh main)")
    else:
        with dask_cluster(2, folder) as cluster:
            for attempt in ("first batch", "second batch"):
                watched = watched_run([*IOGF, "convert", *files, "--to", "iqm", "-d", str(folder / "out_d"),
                                       "--scheduler", cluster.address, "--force", "--report",
                                       str(folder / "report_d.jsonl")], also=cluster.workers,
                                      log=folder / "dask.log")  # fmt: skip
                if watched.returncode != 0:
                    print(f"(d) failed: see {folder / 'dask.log'}", file=sys.stderr)
                    return 1
                blender = worker_peaks(watched)
                dask = [peak for pid, peak in watched.peaks.items() if "multiprocessing" in watched.names[pid]
                        and "resource_tracker" not in watched.names[pid]]  # fmt: skip
                dispatching = watched
                line(f"(d) Dask, 2 workers, {attempt}", len(files), watched,
                     "peak " + ", ".join(mib(p) for p in blender) + " per Blender worker, "
                     + ", ".join(mib(p) for p in dask) + " per Dask worker")  # fmt: skip
        names = [Path(path).with_suffix(".iqm").name for path in files]
        same = all((folder / "out_d" / name).read_bytes() == (folder / "out_1" / name).read_bytes() for name in names)
        print(f"  (d) outputs byte-identical to (b): {same}")

    # What limits scaling.
    one = report_costs(folder / "report1.jsonl")
    two = report_costs(folder / "report2.jsonl")
    alone = [seconds for costs in one.values() for seconds in costs]
    per_one = sum(alone) / len(alone)
    print("scaling:")
    each = ", ".join(f"{sum(costs) / len(costs) * 1000:.1f} ms ({len(costs)} files)" for costs in two.values())
    side = [seconds for costs in two.values() for seconds in costs]
    print(f"  per-file cost: {per_one * 1000:.1f} ms alone (b); side by side (c): {each} "
          f"({sum(side) / len(side) / per_one:.2f} x)")  # fmt: skip
    if dispatching is not None:
        busy = max(0.0, dispatching.own_cpu - start.own_cpu) / len(files)
        print(f"  the command's own CPU per file when it converts nothing (the Dask second batch, beyond Blender's "
              f"start): {busy * 1000:.2f} ms (handing out the tasks, taking the results, the record, the report, the "
              f"lines): a ceiling of {1 / busy if busy else math.inf:.0f} files/s however many side by side")
    fixed = runs[1].seconds - sum(alone)
    print(f"  fixed cost of a command (Blender's start, the batch's checks, the exit): {fixed:.1f} s with --jobs 1")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
