"""Command line: `python -m qmap_compiler MAP.qmap.tmp [-d MAP.qmap.desc] -o MAP.qmap [options]`,
or `python -m qmap_compiler --info MAP.qmap` to describe an existing file.
"""

from __future__ import annotations

import argparse
import math
import os
import sys

from .compiler import Box, CompileOptions, compile_map
from .errors import QmapError
from .info import describe_model, describe_report
from .interrupts import stopped_by_sigterm
from .reader import read_qmap_file


def parse_bounds(text: str) -> Box:
    """`x1,y1,z1;x2,y2,z2` -> a 6-tuple (raises ValueError on anything else)."""
    corners = text.split(";")
    values = [float(v) for corner in corners for v in corner.split(",")]
    if len(corners) != 2 or len(values) != 6:
        raise ValueError(text)
    return values[0], values[1], values[2], values[3], values[4], values[5]


class UsageError(Exception):
    """A mistake in the command line, found before any work: exit code 2."""


def _checked(args: argparse.Namespace) -> CompileOptions:
    """The compile options, once the command line is known to make sense (UsageError otherwise)."""
    try:
        bounds = parse_bounds(args.bounds) if args.bounds else None
    except ValueError:
        raise UsageError(f"--bounds must look like x1,y1,z1;x2,y2,z2, not {args.bounds!r}") from None
    if bounds is not None and not all(math.isfinite(value) for value in bounds):
        raise UsageError(f"--bounds {args.bounds!r}: every coordinate must be a finite number")
    if bounds is not None and any(bounds[axis] > bounds[axis + 3] for axis in range(3)):
        raise UsageError(f"--bounds {args.bounds!r}: the first corner must be the lower one on every axis")
    options = CompileOptions(k=args.k, max_depth=args.max_depth, bounds=bounds, fix_bounds=args.fix_bounds,
                             drop_degenerate=args.drop_degenerate, skip_unknown_objects=args.skip_unknown_objects)
    try:
        options.validate()
    except QmapError as error:
        raise UsageError(str(error)) from None
    _check_files(args)
    return options


def _check_files(args: argparse.Namespace) -> None:
    inputs = [args.input] + ([args.desc] if args.desc else [])
    for path in inputs:
        if not os.path.isfile(path):
            raise UsageError(f"{path}: no such file")
    if args.info and not args.input.lower().endswith(".tmp"):
        return
    output = args.output or _default_output(args.input)
    folder = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(folder):
        raise UsageError(f"{output}: the folder {folder} does not exist")
    if os.path.isdir(output):
        raise UsageError(f"{output} is a folder, not a file to write")
    for path in inputs:
        if os.path.exists(output) and os.path.samefile(output, path):
            raise UsageError(f"{output} is also an input: compiling would replace the file being read")


def _default_output(tmp_path: str) -> str:
    return tmp_path[:-4] if tmp_path.lower().endswith(".tmp") else tmp_path + ".qmap"


def _argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m qmap_compiler", description="The Final Quest QMAP compiler.")
    parser.add_argument("input", help="MAP.qmap.tmp to compile, or MAP.qmap with --info")
    parser.add_argument("-d", "--desc", help="MAP.qmap.desc material descriptions")
    parser.add_argument("-o", "--output", help="output .qmap (default: the input name without .tmp)")
    parser.add_argument("--k", type=float, default=0.25, help="loose octree factor, 0 <= K < 1 (default 0.25)")
    parser.add_argument("--max-depth", type=int, default=9, help="maximum octree depth (default 9)")
    parser.add_argument("--bounds", help='root box "x1,y1,z1;x2,y2,z2" (default: computed)')
    parser.add_argument("--fix-bounds", action="store_true", help="fix the original's FLT_MIN root-box bug")
    parser.add_argument("--drop-degenerate", action="store_true", help="drop zero-area faces (NaN normals)")
    parser.add_argument("--skip-unknown-objects", action="store_true", help="skip unknown object blocks")
    parser.add_argument("--info", action="store_true", help="print materials, counts and tree statistics")
    parser.add_argument("-v", "--verbose", action="store_true", help="warnings, per-level statistics, timings")
    return parser


def main(argv: list[str]) -> int:
    """Run the command line; returns the exit code (0 ok, 1 compile/read error, 2 usage error)."""
    parser = _argument_parser()
    # "--bounds -60,..." would read as an option; glue the value on so negative corners work.
    argv = [f"--bounds={argv[i + 1]}" if a == "--bounds" and i + 1 < len(argv) else a for i, a in enumerate(argv)
            if i == 0 or argv[i - 1] != "--bounds"]
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:
        return int(stop.code or 0)
    try:
        options = _checked(args)
    except UsageError as error:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    try:
        with stopped_by_sigterm():
            _run(args, options)
    except QmapError as error:
        print(str(error), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: no file was written", file=sys.stderr)
        return 130
    return 0


def _run(args: argparse.Namespace, options: CompileOptions) -> None:
    if args.info and not args.input.lower().endswith(".tmp"):
        print(describe_model(read_qmap_file(args.input)))
        return
    beside = args.input[:-4] + ".desc" if args.input.lower().endswith(".qmap.tmp") else None
    if args.desc is None and beside is not None and os.path.isfile(beside):  # (as Tools.exe, only -d/`/d=` reads one)
        print(f"note: {beside} is not read: material options come from -d {beside}", file=sys.stderr)
    report = compile_map(args.input, args.desc, args.output, options)
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(describe_report(report, args.verbose))
    if args.info and report.output:
        print(describe_model(read_qmap_file(report.output)))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
