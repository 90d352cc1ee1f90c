"""Command line: `python -m qmap_compiler MAP.qmap.tmp [-d MAP.qmap.desc] -o MAP.qmap [options]`,
or `python -m qmap_compiler --info MAP.qmap` to describe an existing file. `--register Resources.dat` adds or
updates the compiled map's entry in the game's resource list.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import TYPE_CHECKING, NoReturn

# Before numpy loads: the compiler makes no BLAS call, and OpenBLAS's threads, started with numpy on every core and
# spinning there a while, took a 100k-face map's whole process about a tenth of its time on two cores
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from . import resource_states
from .compiler import Box, CompileOptions, compile_map
from .errors import QmapError
from .info import describe_model, describe_report
from .interrupts import stopped_by_sigterm
from .reader import read_qmap_file

if TYPE_CHECKING:
    from . import resources


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
    _check_registration(args)
    return options


def _check_registration(args: argparse.Namespace) -> None:
    """The --register options make sense together (UsageError otherwise); the list itself is read later."""
    if not args.register and not args.show_resource_line:
        check_register_arguments(args, [])
        return
    if args.info and not args.input.lower().endswith(".tmp"):
        raise UsageError("--register goes with a compile, not with --info of an existing .qmap")
    if not args.register and not args.game_folder:
        raise UsageError("--show-resource-line needs --register RESOURCES.dat or --game-folder DIR")
    check_register_arguments(args, [args.output or _default_output(args.input)])


def check_register_arguments(args: argparse.Namespace, map_paths: list[str]) -> list[str]:
    """The entries' file names of the maps, once the --register options are known to make sense (UsageError
    otherwise: the list itself is read later). The extension's command line shares this."""
    if not args.register and not getattr(args, "show_resource_line", False):
        extra = [flag for flag, value in (("--resource-name", args.resource_name), ("--game-folder", args.game_folder),
                                          ("--resource-state", args.resource_state != "keep")) if value]  # fmt: skip
        if extra:
            raise UsageError(f"{extra[0]} goes with --register RESOURCES.dat")
        return []
    from . import resources  # (the resource list's module only when a map is registered: not at start-up)

    if args.register and not os.path.isfile(args.register):
        raise UsageError(f"{args.register}: no such file (--register names the game's existing Resources.dat)")
    if args.game_folder and not os.path.isdir(args.game_folder):
        raise UsageError(f"--game-folder {args.game_folder}: no such folder")
    if args.resource_name is not None and len(map_paths) > 1:
        raise UsageError("--resource-name names one map: with several maps each is named after its file")
    try:
        files = [resources.map_file_name(args.register, path, args.game_folder) for path in map_paths]
        if args.resource_name is not None:
            resources.encoded(args.resource_name, "resource name")
        for file in files:
            resources.encoded(file, "map's file name")
    except QmapError as error:
        raise UsageError(error.message) from None
    return files


def add_register_arguments(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """--register and its options (the extension's command line shares them), in a group of their own."""
    group = parser.add_argument_group("the game's resource list")
    group.add_argument("--register", metavar="RESOURCES.dat",
                       help="after compiling, add the map's QMap entry to this resource list, or update the entry "
                       "of the same name (no other byte of the file changes)")  # fmt: skip
    group.add_argument("--resource-name", metavar="NAME",
                       help="the map's resource name (default: the name of the entry that already names this map, "
                       "else the map's file name without .qmap)")  # fmt: skip
    group.add_argument("--resource-state", choices=[state.lower() for state in resource_states.STATES], default="keep",
                       help="keep (default: an existing entry keeps its state, a new one has none), none (loaded "
                       "on first use), load (loaded at start), lock (loaded at start, never unloaded)")  # fmt: skip
    group.add_argument("--game-folder", metavar="DIR",
                       help="the folder the game runs in, which the entry's file name is relative to (default: "
                       "the folder above the resource list's)")  # fmt: skip
    return group


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
    add_register_arguments(parser).add_argument(
        "--show-resource-line", action="store_true",
        help="print the map's entry as --register would write it, and change no file")
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
    if args.register:  # a list the engine could not read (or a name it holds twice) stops before the compile
        _plan_registration(args, args.output or _default_output(args.input))
    if args.info and not args.input.lower().endswith(".tmp"):
        print(describe_model(read_qmap_file(args.input)))
        return
    beside = args.input[:-4] + ".desc" if args.input.lower().endswith(".qmap.tmp") else None
    if args.desc is None and beside is not None and os.path.isfile(beside):  # (as Tools.exe, only -d/`/d=` reads one)
        print(f"note: {beside} is beside the map but not used: its material options are read only when passed with "
              f"-d {beside}", file=sys.stderr)
    report = compile_map(args.input, args.desc, args.output, options)
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(describe_report(report, args.verbose))
    if args.info and report.output:
        print(describe_model(read_qmap_file(report.output)))
    if report.output and (args.register or args.show_resource_line):
        print(_registered(args, report.output))


def _plan_registration(args: argparse.Namespace, map_path: str) -> resources.Registration:
    """The map's entry in the --register list (read now), or as a new entry when only --game-folder is given."""
    from . import resources

    file = resources.map_file_name(args.register, map_path, args.game_folder)
    listing = resources.read_resources(args.register) if args.register else resources.parse_resources(b"", "")
    return resources.plan_registration(listing, file, args.resource_name, args.resource_state.upper())


def _registered(args: argparse.Namespace, map_path: str) -> str:
    if args.show_resource_line:
        return _plan_registration(args, map_path).line()
    from . import resources

    registration = resources.register_map(args.register, map_path, args.resource_name,
                                          args.resource_state.upper(), args.game_folder)  # fmt: skip
    if registration.warning:
        print(f"warning: {registration.warning}", file=sys.stderr)
    return resources.describe_registration(registration, args.register)


def exit_at_once(code: int) -> NoReturn:
    """End the process with `code` once the output streams are flushed, without the interpreter's teardown: freeing
    every module (numpy's many) costs a whole process tens of milliseconds and nothing of a finished run needs it.
    A stream that cannot be flushed (a closed pipe) leaves through the usual exit, which reports it as before."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        raise SystemExit(code) from None
    os._exit(code)


if __name__ == "__main__":
    exit_at_once(main(sys.argv[1:]))
