"""Headless use: `blender --command io_game_formats ...`, or tools/iogf.py with the bpy module.

Every subcommand drives the same operators an artist uses, so options and behaviour match the UI.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import bpy

COMMAND_ID = "io_game_formats"


@dataclass(frozen=True)
class FileFormat:
    name: str
    extension: str
    import_operator: str | None
    export_operator: str | None


FORMATS: dict[str, FileFormat] = {
    f.name: f
    for f in (
        FileFormat("joe", ".joe", "import_scene.joe", "export_scene.joe"),
        FileFormat("jpk", ".jpk", "import_scene.joe", "export_scene.jpk"),
        FileFormat("smd", ".smd", "import_scene.valve_smd", "export_scene.valve_smd"),
        FileFormat("vta", ".vta", "import_scene.valve_smd", "export_scene.valve_smd"),
        FileFormat("qc", ".qc", "import_scene.valve_smd", None),  # imports the SMDs and VTAs a QC names
        FileFormat("qci", ".qci", "import_scene.valve_smd", None),
        FileFormat("iqe", ".iqe", "import_scene.iqe", "export_scene.iqe"),
        FileFormat("iqm", ".iqm", "import_scene.iqm", "export_scene.iqm"),
        FileFormat("qmap_tmp", ".qmap.tmp", "import_scene.qmap_tmp", "export_scene.qmap_tmp"),
        FileFormat("qmap", ".qmap", "import_scene.qmap", "export_scene.qmap"),
    )
}


class CliError(Exception):
    """A failure to report on stderr with exit code 1."""


def format_of(path: str, explicit: str | None = None) -> FileFormat:
    if explicit:
        if explicit.lower() not in FORMATS:
            raise CliError(f"unknown format {explicit!r}; known: {', '.join(sorted(FORMATS))}")
        return FORMATS[explicit.lower()]
    lowered = path.lower()
    for candidate in sorted(FORMATS.values(), key=lambda f: -len(f.extension)):  # ".qmap.tmp" before ".tmp"
        if lowered.endswith(candidate.extension):
            return candidate
    extension = os.path.splitext(path)[1].lower() or "(none)"
    raise CliError(f"{path}: unknown file type {extension}; known: {', '.join(sorted(FORMATS))}")


def operator(idname: str | None, what: str) -> Callable[..., set[str]]:
    if idname is None:
        raise CliError(f"{what} is not supported for this format")
    module, name = idname.split(".")
    function: Callable[..., set[str]] = getattr(getattr(bpy.ops, module), name)
    return function


def parse_settings(pairs: Sequence[str]) -> dict[str, object]:
    """`--set key=value` options for the operators; values are Python literals, or plain strings."""
    settings: dict[str, object] = {}
    for pair in pairs:
        key, separator, text = pair.partition("=")
        if not separator or not key.isidentifier():
            raise CliError(f"--set needs key=value, got {pair!r}")
        try:
            settings[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            settings[key] = text
    return settings


def run_operator(idname: str | None, what: str, **keywords: object) -> None:
    try:
        result = operator(idname, what)("EXEC_DEFAULT", **keywords)
    except (RuntimeError, TypeError) as error:  # an ERROR report, or an unknown option
        raise CliError(str(error).strip().removeprefix("Error: ")) from None
    if "FINISHED" not in result:
        raise CliError(f"{what} did not finish ({', '.join(result)})")


def import_files(paths: Sequence[str], settings: dict[str, object]) -> None:
    """One operator call per importer and folder, so files that belong together (a reference SMD and its
    animations or VTA) are imported together, as from the file browser."""
    batches: dict[tuple[str | None, str], list[str]] = {}
    for path in paths:
        if not os.path.isfile(path):
            raise CliError(f"{path}: no such file")
        folder, name = os.path.split(os.path.abspath(path))
        batches.setdefault((format_of(path).import_operator, folder), []).append(name)
    for (idname, folder), names in batches.items():
        files = [{"name": name} for name in names]
        run_operator(idname, f"importing {', '.join(names)}", directory=folder, files=files, **settings)


def stem_of(path: str) -> str:
    """The file name without its format's extension ("map.qmap.tmp" -> "map")."""
    name = os.path.basename(path)
    try:
        return name[: -len(format_of(name).extension)]
    except CliError:
        return os.path.splitext(name)[0]


def export_scene(path: str, format_name: str | None, settings: dict[str, object], collection: str | None) -> None:
    target = format_of(path, format_name)
    keywords: dict[str, object] = {"filepath": os.path.abspath(path), "export_scope": "SCENE", **settings}
    if collection:
        if collection not in bpy.data.collections:
            raise CliError(f"no collection named {collection!r} in the scene")
        keywords["collection"] = collection
    run_operator(target.export_operator, f"exporting {path}", **keywords)


def reset_scene() -> None:
    bpy.ops.wm.read_homefile(use_empty=True)


# ------------------------------------------------------------------------------------------- subcommands


def command_import(args: argparse.Namespace) -> None:
    reset_scene()
    import_files(args.files, parse_settings(args.set))
    if args.output:
        bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath(args.output))
        print(f"saved {args.output}")
    print(f"imported {len(args.files)} file(s): {len(bpy.data.objects)} objects")


def command_export(args: argparse.Namespace) -> None:
    if not os.path.isfile(args.blend):
        raise CliError(f"{args.blend}: no such file")
    bpy.ops.wm.open_mainfile(filepath=os.path.abspath(args.blend))
    export_scene(args.output, args.format, parse_settings(args.set), args.collection)
    print(f"exported {args.output}")


def command_convert(args: argparse.Namespace) -> None:
    import_settings = parse_settings(args.import_set)
    export_settings = parse_settings(args.set)
    if args.output_dir:
        os.makedirs(args.output_dir, exist_ok=True)
        target = format_of("", args.to)
        failures = 0
        for path in args.inputs:  # a batch goes on past a bad file and fails at the end
            stem = stem_of(path)
            output = os.path.join(args.output_dir, stem + target.extension)
            try:
                reset_scene()
                import_files([path], import_settings)
                export_scene(output, target.name, export_settings, None)
            except CliError as error:
                failures += 1
                print(f"error: {path}: {error}", file=sys.stderr)
                continue
            print(f"{path} -> {output}")
        if failures:
            raise CliError(f"{failures} of {len(args.inputs)} conversions failed")
    else:
        reset_scene()
        import_files(args.inputs, import_settings)
        export_scene(args.output, args.to, export_settings, None)
        print(f"{len(args.inputs)} file(s) -> {args.output}")


def build_parser() -> argparse.ArgumentParser:
    known = ", ".join(sorted(FORMATS))
    parser = argparse.ArgumentParser(
        prog=f"blender --command {COMMAND_ID}",
        description=f"Import, export and convert game formats headless. Formats: {known}.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    imp = commands.add_parser("import", help="import files into an empty scene, optionally save it as .blend")
    imp.add_argument("files", nargs="+", help="files to import (the type comes from the extension)")
    imp.add_argument("-o", "--output", help="save the scene to this .blend")
    imp.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="an import option")
    imp.set_defaults(run=command_import)

    exp = commands.add_parser("export", help="export a .blend's scene or one of its collections")
    exp.add_argument("blend", help="the .blend file to open")
    exp.add_argument("-o", "--output", required=True, help="the file to write (its extension picks the format)")
    exp.add_argument("--format", help=f"override the format ({known})")
    exp.add_argument("--collection", help="export only this collection's objects")
    exp.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="an export option")
    exp.set_defaults(run=command_export)

    conv = commands.add_parser("convert", help="convert files to another format")
    conv.add_argument("inputs", nargs="+", help="input files of any importable format")
    conv.add_argument("--to", required=True, help=f"output format ({known})")
    where = conv.add_mutually_exclusive_group(required=True)
    where.add_argument("-o", "--output", help="one output file holding every input")
    where.add_argument("-d", "--output-dir", help="one output file per input, in this folder")
    conv.add_argument("--import-set", action="append", default=[], metavar="KEY=VALUE", help="an import option")
    conv.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="an export option")
    conv.set_defaults(run=command_convert)
    return parser


def main(argv: Sequence[str]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exit_request:  # --help, or a usage error already printed by argparse
        return int(exit_request.code or 0)
    try:
        args.run(args)
    except CliError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0
