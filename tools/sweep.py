"""The corpus sweep: every model file in some folders imported, exported back to its own format and to one other,
and each export imported again, with Blender's OBJ importer and exporter timed on the same geometry.

    .venv/bin/python tools/sweep.py FOLDER... [--jobs 2] [--timeout 120] [--json results.jsonl]
                                    [--formats iqe,iqm,smd,qc,joe,jpk] [--limit N] [--slowest 10]

Each file goes through the operators an artist uses, with their default options (the export's scope is the
selection the import left, as after an import in the UI), in a scene of its own:

    import  ->  export to its own format  ->  import that into an empty scene
            ->  export to another format   ->  import that into an empty scene

The other format: IQE -> IQM, IQM -> IQE, SMD and QC -> IQE, JOE -> JPK, JPK -> IQE. A QC is exported as SMDs
with every action and shape key (Export Mode: All, Actions: All), since it stands for several files. Files a QC
names are swept alone as well; VTA and QCI files only through a QC.

Printed per format: how many files imported cleanly, with warnings, were refused (an error report), or failed
(a Python traceback, a crash of Blender, or over the time limit); the same for each export and re-import; every
distinct warning and error text (numbers and quoted names replaced by placeholders) with its count and an
example; every count that differs between the import and a re-import (mesh objects, vertices, triangles, bones,
actions, animation frames, shape keys) with the warnings the export gave, losses first (vertex counts change with
how each format shares vertices; SMD and JOE hold one mesh a file); and the files slowest against OBJ
(our import time over the OBJ import time of the same meshes with their materials and images, and the same for
export).

Workers are Blender processes (the bpy module of the venv) that take one file at a time, so a crash or a hang
costs one file: the worker is started again after it. Figures only; the sweep changes no file it reads.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TOOLS = Path(__file__).resolve().parent
# format name -> (extensions, import operator, export operator, other format)
FORMATS: dict[str, tuple[tuple[str, ...], str, str, str]] = {
    "iqe": ((".iqe",), "import_scene.iqe", "export_scene.iqe", "iqm"),
    "iqm": ((".iqm",), "import_scene.iqm", "export_scene.iqm", "iqe"),
    "smd": ((".smd",), "import_scene.valve_smd", "export_scene.valve_smd", "iqe"),
    "qc": ((".qc",), "import_scene.valve_smd", "export_scene.valve_smd", "iqe"),
    "joe": ((".joe",), "import_scene.joe", "export_scene.joe", "jpk"),
    "jpk": ((".jpk",), "import_scene.joe", "export_scene.jpk", "iqe"),
}
OUTPUT_EXTENSION = {"iqe": ".iqe", "iqm": ".iqm", "smd": ".smd", "qc": ".smd", "joe": ".joe", "jpk": ".jpk"}
COUNTED = ("objects", "vertices", "triangles", "bones", "actions", "frames", "shape_keys")
MERGING = {"smd", "joe"}  # formats that hold one mesh a file: the objects of a scene become one


def format_of(path: str) -> str | None:
    lowered = path.lower()
    for name, (extensions, *_rest) in FORMATS.items():
        if lowered.endswith(extensions):
            return name
    return None


def model_files(folders: Iterable[str], formats: set[str]) -> list[str]:
    found = []
    for folder in folders:
        if os.path.isfile(folder):
            found.append(os.path.abspath(folder))
            continue
        for root, dirs, names in os.walk(folder):
            dirs.sort()
            found += [os.path.abspath(os.path.join(root, name)) for name in sorted(names)
                      if format_of(name) in formats]  # fmt: skip
    return found


# ------------------------------------------------------------------------------------------------ the worker


class Worker:
    """One Blender: sweeps the files it is given, one JSON line per file on the result pipe."""

    def __init__(self) -> None:
        sys.path.insert(0, str(TOOLS))
        from bpy_extension import enable_extension

        self.extension = enable_extension()
        import bpy

        self.bpy = bpy
        self.operators = self.extension.common.operators

    def reset(self) -> None:
        self.bpy.ops.wm.read_homefile(use_empty=True)

    def call(self, idname: str, **keywords: Any) -> tuple[str, list[str], str, float]:
        """(status, warnings, error, seconds) of one operator call."""
        module, name = idname.split(".")
        function = getattr(getattr(self.bpy.ops, module), name)
        self.operators.LAST_SUMMARY[0] = self.operators.Summary()
        started = time.perf_counter()
        try:
            result = function("EXEC_DEFAULT", **keywords)
        except Exception as error:  # (an ERROR report, or a traceback: told apart below)
            seconds = time.perf_counter() - started
            text = str(error).strip().removeprefix("Error: ")
            return ("traceback" if "Traceback" in text else "refused"), [], text, seconds
        seconds = time.perf_counter() - started
        if "FINISHED" not in result:
            return "refused", [], f"did not finish ({', '.join(result)})", seconds
        warnings = list(self.operators.LAST_SUMMARY[0].warnings)
        return ("warnings" if warnings else "ok"), warnings, "", seconds

    def import_files(self, kind: str, paths: list[str]) -> tuple[str, list[str], str, float]:
        folder = os.path.dirname(paths[0])
        files = [{"name": os.path.basename(path)} for path in paths]
        return self.call(FORMATS[kind][1], directory=folder, files=files)

    def counts(self) -> dict[str, int]:
        bpy = self.bpy
        import numpy as np

        meshes = [obj for obj in bpy.context.scene.objects if obj.type == "MESH"]
        triangles = vertices = shape_keys = 0
        for obj in meshes:
            mesh = obj.data
            sizes = np.empty(len(mesh.polygons), np.int64)
            mesh.polygons.foreach_get("loop_total", sizes)
            triangles += int((sizes - 2).sum())
            vertices += len(mesh.vertices)
            if mesh.shape_keys:
                shape_keys += len(mesh.shape_keys.key_blocks) - 1
        armatures = [obj for obj in bpy.context.scene.objects if obj.type == "ARMATURE"]
        frames = sum(round(action.frame_range[1] - action.frame_range[0]) + 1 for action in bpy.data.actions)
        return {"objects": len(meshes), "vertices": vertices, "triangles": triangles,
                "bones": sum(len(obj.data.bones) for obj in armatures), "actions": len(bpy.data.actions),
                "frames": frames, "shape_keys": shape_keys}  # fmt: skip

    def sweep(self, path: str, scratch: str) -> dict[str, Any]:
        kind = format_of(path)
        assert kind is not None
        record: dict[str, Any] = {"path": path, "format": kind, "bytes": os.path.getsize(path)}
        self.reset()
        status, warnings, error, seconds = self.import_files(kind, [path])
        record["import"] = {"status": status, "warnings": warnings, "error": error, "seconds": seconds}
        if status not in ("ok", "warnings"):
            return record
        record["counts"] = self.counts()
        record["obj"] = self.obj_times(scratch)
        for step, target in (("own", kind), ("other", FORMATS[kind][3])):
            self.reset()
            self.import_files(kind, [path])  # (the same scene again: an OBJ import replaced it)
            record[step] = self.export_and_reimport(kind, target, os.path.join(scratch, step))
        return record

    def obj_times(self, scratch: str) -> dict[str, float] | None:
        """Blender's OBJ export of the imported meshes with their materials (a .mtl naming their images), and its
        import of that file into an empty scene: the same objects, materials and images ours made."""
        if not any(obj.type == "MESH" for obj in self.bpy.context.scene.objects):
            return None
        obj_file = os.path.join(scratch, "same.obj")
        started = time.perf_counter()
        self.bpy.ops.wm.obj_export(filepath=obj_file, export_selected_objects=False, export_materials=True,
                                   export_animation=False)  # fmt: skip
        export_seconds = time.perf_counter() - started
        self.reset()
        started = time.perf_counter()
        self.bpy.ops.wm.obj_import(filepath=obj_file)
        return {"export": export_seconds, "import": time.perf_counter() - started}

    def export_and_reimport(self, kind: str, target: str, folder: str) -> dict[str, Any]:
        os.makedirs(folder, exist_ok=True)
        for name in os.listdir(folder):
            os.remove(os.path.join(folder, name))
        output = os.path.join(folder, "out" + OUTPUT_EXTENSION[target])
        options: dict[str, Any] = {"export_mode": "ALL", "action_scope": "ALL"} if target == "qc" else {}
        status, warnings, error, seconds = self.call(FORMATS[target][2], filepath=output, **options)
        target = "smd" if target == "qc" else target  # (a QC's export is SMDs and VTAs, imported as such)
        step: dict[str, Any] = {"target": target, "export": {"status": status, "warnings": warnings,
                                                             "error": error, "seconds": seconds}}  # fmt: skip
        if status not in ("ok", "warnings"):
            return step
        extensions = FORMATS[target][0] + ((".vta",) if target == "smd" else ())
        written = sorted(os.path.join(folder, name) for name in os.listdir(folder)
                         if name.lower().endswith(extensions))  # fmt: skip
        self.reset()
        status, warnings, error, seconds = self.import_files(target, written)
        step["reimport"] = {"status": status, "warnings": warnings, "error": error, "seconds": seconds}
        if status in ("ok", "warnings"):
            step["counts"] = self.counts()
        return step


def run_worker(result_fd: int) -> None:
    worker = Worker()
    results = os.fdopen(result_fd, "w", buffering=1)
    results.write(json.dumps({"ready": True}) + "\n")
    with tempfile.TemporaryDirectory(prefix="iogf-sweep-") as scratch:
        for line in sys.stdin:
            path = line.rstrip("\n")
            try:
                record = worker.sweep(path, scratch)
            except Exception as error:  # (a fault of the sweep itself: reported as one)
                record = {"path": path, "format": format_of(path), "sweep_error": repr(error)}
            results.write(json.dumps(record) + "\n")


# ------------------------------------------------------------------------------------------------ the driver


@dataclass
class WorkerProcess:
    process: subprocess.Popen[str]
    results: Any  # the read end of the result pipe
    path: str | None = None  # the file it is sweeping
    started: float = 0.0
    buffer: str = ""
    ready: bool = False


def start_worker() -> WorkerProcess:
    read_end, write_end = os.pipe()
    process = subprocess.Popen(
        [sys.executable, __file__, "--worker", str(write_end)], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, pass_fds=(write_end,), text=True,
    )  # fmt: skip
    os.close(write_end)
    return WorkerProcess(process, os.fdopen(read_end, "r"))


def feed(worker: WorkerProcess, queue: list[str]) -> None:
    if queue and worker.ready and worker.path is None:
        worker.path = queue.pop(0)
        worker.started = time.monotonic()
        assert worker.process.stdin is not None
        worker.process.stdin.write(worker.path + "\n")
        worker.process.stdin.flush()


def stop(worker: WorkerProcess) -> None:
    worker.process.kill()
    worker.process.wait()
    worker.results.close()


def sweep_all(paths: list[str], jobs: int, timeout: float, progress: bool) -> Iterator[dict[str, Any]]:
    queue = list(paths)
    workers = [start_worker() for _ in range(min(jobs, len(paths)))]
    done = 0
    while workers:
        for worker in workers:
            feed(worker, queue)
        readable, _, _ = select.select([w.results for w in workers], [], [], 1.0)
        for worker in list(workers):
            failure = None
            if worker.results in readable:
                chunk = os.read(worker.results.fileno(), 1 << 16).decode()
                if not chunk:
                    failure = f"Blender exited (code {worker.process.wait()})"
                worker.buffer += chunk
                while "\n" in worker.buffer:
                    line, worker.buffer = worker.buffer.split("\n", 1)
                    record = json.loads(line)
                    if record.get("ready"):
                        worker.ready = True
                        continue
                    worker.path = None
                    done += 1
                    if progress:
                        print(f"\r{done}/{len(paths)}", end="", file=sys.stderr, flush=True)
                    yield record
            if worker.path is not None and time.monotonic() - worker.started > timeout:
                failure = f"over the time limit of {timeout:g} s"
            if failure is None:
                if not queue and worker.path is None and worker.ready:
                    stop(worker)
                    workers.remove(worker)
                continue
            stop(worker)
            workers.remove(worker)
            if worker.path is not None:
                done += 1
                yield {"path": worker.path, "format": format_of(worker.path), "import": {
                    "status": "failed", "warnings": [], "error": failure, "seconds": timeout}}  # fmt: skip
            if queue:
                workers.append(start_worker())
    if progress:
        print(file=sys.stderr)


# ------------------------------------------------------------------------------------------------ the report

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")


def pattern_of(text: str) -> str:
    """A message with its names and numbers taken out, so that one kind of message is counted once."""
    first = text.split("\n")[0]
    first = re.sub(r"^[^:]*\.(?:smd|qc|qci|vta|iqe|iqm|joe|jpk)\b[^:]*: ", "<file>: ", first, flags=re.I)
    first = re.sub(r"^[^ :'<]+(?: \(pack member '[^']*'\))?: ", "<name>: ", first)  # (an object's or a file's name)
    return _NUMBER.sub("N", _QUOTED.sub("'…'", first))[:200]


@dataclass
class Tally:
    statuses: Counter[str] = field(default_factory=Counter)
    messages: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)

    def add(self, status: str, texts: Iterable[str], path: str) -> None:
        self.statuses[status] += 1
        for text in texts:
            key = pattern_of(text)
            self.messages[key] += 1
            self.examples.setdefault(key, f"{os.path.basename(path)}: {text.splitlines()[0][:300]}")


def mismatches(record: dict[str, Any]) -> Iterator[tuple[bool, str]]:
    """(whether something was lost, the line) for each re-import whose counts differ from the import's. Vertex
    counts change with how formats share vertices and objects merge into one in SMD and JOE: those are not losses."""
    base = record.get("counts")
    for step in ("own", "other"):
        result = record.get(step) or {}
        counts = result.get("counts")
        if base is None or counts is None:
            continue
        differing = [key for key in COUNTED if base[key] != counts[key]]
        merged = result["target"] in MERGING  # (a count that grew is no loss: a model split under a limit)
        lost = [key for key in differing if key != "vertices" and counts[key] < base[key]
                and not (key == "objects" and merged)]  # fmt: skip
        if differing:
            said = "; ".join(result["export"]["warnings"]) or "no warning"
            changes = ", ".join(f"{key} {base[key]:,} -> {counts[key]:,}" for key in differing)
            yield bool(lost), f"{os.path.basename(record['path'])} -> {result['target']}: {changes} ({said[:400]})"


def report(records: list[dict[str, Any]], slowest: int) -> None:
    by_format: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_format[record["format"]].append(record)
    print(f"{'format':6} {'files':>6} {'stage':10} {'ok':>6} {'warned':>6} {'refused':>7} {'failed':>6}")
    tallies: dict[tuple[str, str], Tally] = {}
    for kind, group in sorted(by_format.items()):
        for stage in ("import", "own", "own reimport", "other", "other reimport"):
            tally = tallies.setdefault((kind, stage), Tally())
            for record in group:
                step = stage_result(record, stage)
                if step is None:
                    continue
                status = step["status"]
                tally.add("failed" if status in ("traceback", "failed") else status, step["warnings"], record["path"])
                if step["error"]:
                    key = "ERROR " + pattern_of(step["error"])
                    tally.messages[key] += 1
                    tally.examples.setdefault(key, f"{os.path.basename(record['path'])}: {step['error'][:300]}")
            s = tally.statuses
            if sum(s.values()):
                print(f"{kind:6} {len(group):6} {stage:10} {s['ok']:6} {s['warnings']:6} {s['refused']:7} "
                      f"{s['failed']:6}")  # fmt: skip
    for record in records:
        if "sweep_error" in record:
            print(f"sweep fault: {record['path']}: {record['sweep_error']}")
    print("\nmessages (count, kind, example):")
    for (kind, stage), tally in sorted(tallies.items()):
        for key, count in tally.messages.most_common():
            print(f"  {count:5}  {kind} {stage}: {key}\n         e.g. {tally.examples[key]}")
    found = [found for record in records for found in mismatches(record)]
    print(f"\ncount mismatches: {sum(lost for lost, _ in found)} with something lost (triangles, bones, actions, "
          "frames, shape keys, or objects where the format keeps them):")  # fmt: skip
    for lost, line in found:
        if lost:
            print(f"  {line}")
    print(f"vertex counts or merged objects only: {sum(not lost for lost, _ in found)}")
    for lost, line in found:
        if not lost:
            print(f"  {line}")
    ratios = []
    for record in records:
        obj = record.get("obj")
        if obj and obj["import"] > 0:
            ours = record["import"]["seconds"]
            own = (record.get("own") or {}).get("export", {})
            export_ratio = own.get("seconds", 0.0) / obj["export"] if obj["export"] > 0 else 0.0
            ratios.append((ours / obj["import"], export_ratio, ours, obj["import"], record["path"]))
    print(f"\nslowest imports against OBJ (ours / OBJ's on the same meshes; of {len(ratios)} files):")
    for ratio, export_ratio, ours, theirs, path in sorted(ratios, reverse=True)[:slowest]:
        print(f"  {ratio:7.1f}x  {ours:7.3f} s vs {theirs:7.3f} s  (export {export_ratio:5.1f}x)  {path}")
    print(f"\nslowest exports against OBJ (of {len(ratios)} files):")
    for ratio, export_ratio, _ours, _theirs, path in sorted(ratios, key=lambda r: -r[1])[:slowest]:
        print(f"  {export_ratio:7.1f}x  (import {ratio:5.1f}x)  {path}")
    total = sum(r[2] for r in ratios), sum(r[3] for r in ratios)
    if total[1]:
        print(f"\nall imports: {total[0]:.1f} s, OBJ {total[1]:.1f} s ({total[0] / total[1]:.2f}x)")


def stage_result(record: dict[str, Any], stage: str) -> dict[str, Any] | None:
    if stage == "import":
        return record.get("import")
    step, _, part = stage.partition(" ")
    result = record.get(step)
    if not result:
        return None
    return result.get("reimport" if part else "export")


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        run_worker(int(sys.argv[2]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", help="folders (searched through) or files")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="Blender processes at once")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds one file may take")
    parser.add_argument("--formats", default=",".join(FORMATS), help="formats to sweep (default: all)")
    parser.add_argument("--limit", type=int, default=0, help="at most this many files (0: all)")
    parser.add_argument("--slowest", type=int, default=10, help="how many of the slowest files to list")
    parser.add_argument("--json", help="also write every file's record to this JSON-lines file")
    parser.add_argument("--report", help="only print the report of a JSON-lines file written before")
    args = parser.parse_args()
    if args.report:
        with open(args.report, encoding="utf-8") as lines:
            report([json.loads(line) for line in lines], args.slowest)
        return 0
    formats = {name.strip() for name in args.formats.split(",")}
    unknown = formats - set(FORMATS)
    if unknown:
        parser.error(f"unknown formats {', '.join(sorted(unknown))}; known: {', '.join(FORMATS)}")
    for folder in args.folders:
        if not os.path.exists(folder):
            parser.error(f"{folder}: no such file or folder")
    paths = model_files(args.folders, formats)
    if args.limit:
        paths = paths[: args.limit]
    if not paths:
        parser.error("no model files found")
    started = time.monotonic()
    records = []
    sink = open(args.json, "w", encoding="utf-8") if args.json else None  # noqa: SIM115
    for record in sweep_all(paths, max(args.jobs, 1), args.timeout, sys.stderr.isatty()):
        records.append(record)
        if sink:
            sink.write(json.dumps(record) + "\n")
            sink.flush()
    if sink:
        sink.close()
    records.sort(key=lambda r: paths.index(r["path"]))
    report(records, args.slowest)
    print(f"\n{len(records)} files in {time.monotonic() - started:.0f} s with {args.jobs} Blender processes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
