"""Headless use: `blender --command io_game_formats ...`, or tools/iogf.py with the bpy module.

Every subcommand drives the same operators an artist uses, so options and behaviour match the UI.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import ctypes
import functools
import io
import json
import os
import re
import signal
import socket
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import TYPE_CHECKING, ClassVar, NoReturn

import bpy
import numpy as np

from .batch import cluster
from .batch.pool import READY, Result, Task, result_line
from .batch.runner import Batch, Job, Report, as_given_beside
from .batch.threads import blas_to_one_thread
from .common import progress
from .common.operators import LEGACY_AXIS_OPTIONS, LEGACY_SCOPES, legacy_axis_value
from .common.qmap_io import desc_path_for
from .formats.errors import FormatError
from .formats.smd import load_qc
from .qmap_compiler import QmapError
from .qmap_compiler import resources as qmap_resources
from .qmap_compiler.__main__ import UsageError as CompilerUsageError
from .qmap_compiler.__main__ import add_register_arguments, check_register_arguments
from .qmap_compiler.interrupts import raise_if_interrupted, stopped_by_sigterm

if TYPE_CHECKING:
    from . import qmap_compiler as qc

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
        FileFormat("car", ".car", "import_scene.vdrift_car", "export_scene.vdrift_car"),  # (its parts' models too)
    )
}


class CliError(Exception):
    """A failure to report on stderr with exit code 1."""


class UsageError(CliError):
    """A mistake in the command line, found before any work: exit code 2."""


def format_of(path: str, explicit: str | None = None) -> FileFormat:
    if explicit:
        if explicit.lower() not in FORMATS:
            raise UsageError(f"unknown format {explicit!r}; known: {', '.join(sorted(FORMATS))}")
        return FORMATS[explicit.lower()]
    lowered = path.lower()
    for candidate in sorted(FORMATS.values(), key=lambda f: -len(f.extension)):  # ".qmap.tmp" before ".tmp"
        if lowered.endswith(candidate.extension):
            return candidate
    extension = os.path.splitext(path)[1].lower() or "(none)"
    raise UsageError(f"{path}: unknown file type {extension}; known: {', '.join(sorted(FORMATS))}")


def operator(idname: str) -> Callable[..., set[str]]:
    module, name = idname.split(".")
    function: Callable[..., set[str]] = getattr(getattr(bpy.ops, module), name)
    return function


def parse_settings(pairs: Sequence[str], flag: str = "--set") -> dict[str, object]:
    """`--set key=value` options for the operators; values are Python literals, or plain strings. An option's
    former name is read as its new one, with a note."""
    settings: dict[str, object] = {}
    for pair in pairs:
        key, separator, text = pair.partition("=")
        if not separator or not key.isidentifier():
            raise UsageError(f"{flag} needs KEY=VALUE, got {pair!r}")
        try:
            settings[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            settings[key] = text
    if "export_scope" in settings:
        scope = settings.pop("export_scope")
        if not isinstance(scope, str) or scope.upper() not in LEGACY_SCOPES:
            raise UsageError(f"{flag} export_scope={scope!r}: one of {'|'.join(LEGACY_SCOPES)} (the former name of "
                             "export_selected_objects)")  # fmt: skip
        settings.setdefault("export_selected_objects", scope.upper() == "SELECTED")
        print(f"note: {flag} export_scope is now export_selected_objects (Selected Only): "
              f"export_selected_objects={settings['export_selected_objects']}", file=sys.stderr)
    for legacy, option in LEGACY_AXIS_OPTIONS.items():
        if legacy in settings:
            value = settings.pop(legacy)
            try:
                settings.setdefault(option, legacy_axis_value(str(value)))
            except FormatError as error:
                raise UsageError(f"{flag} {legacy}={value!r}: {error} (the former name of {option})") from None
            print(f"note: {flag} {legacy} is now {option}: {option}={settings[option]}", file=sys.stderr)
    return settings


# ------------------------------------------------------------------------------------------- operator options

HIDDEN_OPTIONS = {"filepath", "directory", "files", "filter_glob", "check_existing", "filename_ext"}


def visible_options(idname: str) -> list[bpy.types.Property]:
    """The options a user may set: the operator's properties but the file-browser ones and hidden ones."""
    properties = operator(idname).get_rna_type().properties
    return [p for p in properties if p.identifier not in HIDDEN_OPTIONS and p.identifier != "rna_type"
            and not p.is_hidden]  # fmt: skip


def type_name(prop: bpy.types.Property) -> str:
    if prop.type == "ENUM":
        return "one of " + "|".join(item.identifier for item in prop.enum_items)
    name = {"BOOLEAN": "bool", "INT": "int", "FLOAT": "float", "STRING": "text"}.get(prop.type, prop.type.lower())
    length = getattr(prop, "array_length", 0)
    return f"{length} {name}s" if length else name


def default_of(prop: bpy.types.Property) -> object:
    if prop.type == "ENUM":
        return prop.default
    if getattr(prop, "array_length", 0):
        return tuple(prop.default_array)
    return prop.default


def check_settings(idname: str | None, settings: dict[str, object], flag: str, what: str) -> None:
    """Refuse unknown keys and values of the wrong type before any work, naming the valid keys or the type."""
    if not settings:
        return
    if idname is None:
        raise UsageError(f"{flag}: {what} has no options")
    options = {prop.identifier: prop for prop in visible_options(idname)}
    for key, value in settings.items():
        if key not in options:
            raise UsageError(f"{flag} {key}: not an option of {what}; valid: {', '.join(sorted(options))}")
        if not value_fits(options[key], value):
            raise UsageError(f"{flag} {key}={value!r}: {what} expects {type_name(options[key])}")
        if (limits := out_of_range(options[key], value)) is not None:
            raise UsageError(f"{flag} {key}={value!r}: {what} takes values from {limits[0]:g} to {limits[1]:g}")


def out_of_range(prop: bpy.types.Property, value: object) -> tuple[float, float] | None:
    """The option's limits when `value` lies outside them (Blender would clamp it silently), else None."""
    if prop.type not in {"INT", "FLOAT"}:
        return None
    low, high = prop.hard_min, prop.hard_max
    items = value if isinstance(value, (tuple, list)) else [value]
    if all(low <= item <= high for item in items if isinstance(item, (int, float))):  # (nan fails too)
        return None
    return low, high


def value_fits(prop: bpy.types.Property, value: object) -> bool:
    length = getattr(prop, "array_length", 0)
    if length:
        return isinstance(value, (tuple, list)) and len(value) == length and all(
            value_fits_scalar(prop.type, item) for item in value
        )
    if prop.type == "ENUM":
        allowed = {item.identifier for item in prop.enum_items}
        return isinstance(value, str) and value in allowed
    return value_fits_scalar(prop.type, value)


def value_fits_scalar(kind: str, value: object) -> bool:
    if kind == "BOOLEAN":
        return isinstance(value, bool)
    if kind == "INT":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "FLOAT":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, str)


# ------------------------------------------------------------------------------------------- running operators


class BlenderOutput:
    """Blender's own output (its log lines, the "Error: ..." echo of a report) caught at the file-descriptor level,
    where Blender writes it: only the summary lines and warnings pass, or everything with --verbose. Errors reach
    the user once, on stderr, from the CLI itself."""

    verbose = False
    terminal_fd: int | None = None  # while Blender's output is caught: where stderr went before, for progress lines
    swapped: ClassVar[list[BlenderOutput]] = []  # the catches whose streams are swapped in now, innermost last
    naming: str | None = None  # the input being converted, which each warning line names

    def __enter__(self) -> BlenderOutput:
        if _without_interrupts(self._catch):
            _without_interrupts(self._restore)  # (a Ctrl-C came while the streams were swapped: put them back first)
            raise KeyboardInterrupt
        return self

    def _catch(self) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        flush_c_streams()
        self.capture = tempfile.TemporaryFile()  # noqa: SIM115  (closed in _pass_on, on leaving the block)
        self.saved = (os.dup(1), os.dup(2))
        os.dup2(self.capture.fileno(), 1)
        os.dup2(self.capture.fileno(), 2)
        BlenderOutput.terminal_fd = self.saved[1]
        # Python-level writes too (a traceback Blender prints when an operator raises), wherever sys.stderr points
        self.python_text = io.StringIO()
        self.redirected = contextlib.ExitStack()
        self.redirected.enter_context(contextlib.redirect_stdout(self.python_text))
        self.redirected.enter_context(contextlib.redirect_stderr(self.python_text))
        BlenderOutput.swapped.append(self)

    def __exit__(self, *_: object) -> None:
        if self not in BlenderOutput.swapped:  # (already put back, by put_back_all after an interrupt)
            return
        interrupted = _without_interrupts(self._restore)
        self._pass_on()
        if interrupted:
            raise KeyboardInterrupt

    def _restore(self) -> None:
        BlenderOutput.swapped.remove(self)
        BlenderOutput.terminal_fd = None
        self.redirected.close()
        sys.stdout.flush()
        sys.stderr.flush()
        flush_c_streams()  # Blender 4.x prints its log lines through C's buffered stdout
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)
        for fd in self.saved:
            os.close(fd)

    @classmethod
    def put_back_all(cls) -> None:
        """The streams of every catch still swapped in put back, and what each caught passed on. A Ctrl-C can land
        where neither __enter__ nor __exit__ puts them back (between __enter__'s last step and the with block, or
        in __exit__ before its first): then the interrupted command's own last lines went to the capture too."""
        while cls.swapped:
            capture = cls.swapped[-1]
            _without_interrupts(capture._restore)
            capture._pass_on()

    def _pass_on(self) -> None:
        """The caught output's warnings (and with --verbose everything) printed on."""
        self.capture.seek(0)
        text = self.capture.read().decode("utf-8", errors="replace") + self.python_text.getvalue()
        self.capture.close()
        for line in text.splitlines():
            if ": warning: " in line:
                print(f"{printable(self.naming)}: {line}" if self.naming else line, file=sys.stderr)
            elif self.verbose or line.startswith("Info: "):
                print(line.replace(", see the console)", ")"))  # (the warnings are printed above it)


def _without_interrupts(action: Callable[[], None]) -> bool:
    """action() with Ctrl-C held back until it is done: whether one came meanwhile. BlenderOutput swaps the
    standard streams in several steps: an interrupt between two left them pointing at the capture, and the line
    saying the batch was interrupted went there too. Only on the main thread with Python's own handler (where
    Ctrl-C raises KeyboardInterrupt); elsewhere the action just runs."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):  # fmt: skip
        action()
        return False
    caught: list[int] = []
    signal.signal(signal.SIGINT, lambda number, _frame: caught.append(number))
    try:
        action()
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    return bool(caught)


def flush_c_streams() -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).fflush(None)


def progress_wanted() -> bool:
    """Progress lines only on a terminal: a pipeline reading the output gets none."""
    return sys.stderr.isatty()


def show_progress(text: str) -> None:
    line = f"{text}\n"
    if BlenderOutput.terminal_fd is not None:  # (inside an operator: stderr is being caught)
        os.write(BlenderOutput.terminal_fd, line.encode("utf-8", errors="replace"))
    else:
        sys.stderr.write(line)
        sys.stderr.flush()


def files_read_lines(step: progress.Step) -> None:
    """A line per file an import reads: `[2/5] reading idle.smd`."""
    if step.kind == "file":
        show_progress(f"[{step.done}/{step.total}] reading {printable(step.label)}")


def listening_if_wanted() -> contextlib.AbstractContextManager[None]:
    return progress.listening(files_read_lines) if progress_wanted() else contextlib.nullcontext()


def run_operator(idname: str | None, what: str, **keywords: object) -> None:
    if idname is None:
        raise UsageError(f"{what} is not supported for this format")
    try:
        with BlenderOutput():
            result = operator(idname)("EXEC_DEFAULT", **keywords)
    except (RuntimeError, TypeError) as error:  # an ERROR report, or a bad option
        if "KeyboardInterrupt" in str(error):  # Ctrl-C or SIGTERM inside the operator, which Blender wraps
            raise KeyboardInterrupt from None
        raise CliError(in_cli_words(str(error).strip().removeprefix("Error: "))) from None
    raise_if_interrupted()
    if "FINISHED" not in result:
        raise CliError(f"{what} did not finish ({', '.join(result)})")


def in_cli_words(message: str) -> str:
    """An operator's error as the command line says it: its options instead of the extension's preferences, and
    --verbose instead of a text block, which a headless run does not keep."""
    from .common.studiomdl import LOG_HINT
    from .formats.studiomdl import GAME_FOLDER_HINT

    return message.replace(GAME_FOLDER_HINT, "pass --studiomdl-game DIR, or set VPROJECT").replace(
        LOG_HINT, "--verbose shows studiomdl's log")


def import_files(paths: Sequence[str], settings: dict[str, object]) -> None:
    """One operator call per importer and folder, so files that belong together (a reference SMD and its
    animations or VTA) are imported together, as from the file browser."""
    for (idname, folder), names in import_batches(paths).items():
        files = [{"name": name} for name in names]
        run_operator(idname, f"importing {', '.join(names)}", directory=folder, files=files, **settings)


def import_batches(paths: Sequence[str]) -> dict[tuple[str | None, str], list[str]]:
    batches: dict[tuple[str | None, str], list[str]] = {}
    for path in paths:
        folder, name = os.path.split(os.path.abspath(path))
        batches.setdefault((format_of(path).import_operator, folder), []).append(name)
    return batches


def check_inputs(paths: Sequence[str], settings: dict[str, object], flag: str = "--set") -> None:
    """Every input exists and can be imported, and every import option applies to each importer used."""
    for path in paths:
        if os.path.isdir(path):
            raise UsageError(f"{path}: a folder, not a file (a shell pattern such as {os.path.join(path, '*.smd')} "
                             "gives its files)")  # fmt: skip
        if not os.path.exists(path):
            raise UsageError(f"{path}: no such file")
        if not os.path.isfile(path):
            raise UsageError(f"{path}: {kind_of_file(path)}, not a file to read")
        if not utf8(os.path.abspath(path)):
            raise UsageError(f"{printable(path)}: the path is not UTF-8, which Blender's file paths must be "
                             "(rename the file or its folder)")  # fmt: skip
        if format_of(path).import_operator is None:
            raise UsageError(f"{path}: {format_of(path).name} files cannot be imported")
    for idname in sorted({op for path in paths if (op := format_of(path).import_operator) is not None}):
        check_settings(idname, settings, flag, f"the importer {idname}")


def kind_of_file(path: str) -> str:
    """What stands at `path` when it is not a regular file."""
    mode = os.stat(path).st_mode
    for test, what in ((stat.S_ISFIFO, "a pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):  # fmt: skip
        if test(mode):
            return what
    return "not a regular file"


def utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # (bytes that are not UTF-8 reach Python as surrogate escapes)
        return False
    return True


def printable(path: str) -> str:
    """The path with each byte that is not UTF-8 shown as \\xNN."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def check_folder_can_be_made(folder: str) -> None:
    """-d's folder is a folder, or can be made: no file stands at it or on the way to it."""
    path = os.path.abspath(folder)
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    if not os.path.isdir(path):
        raise UsageError(f"{folder}: not a folder" if path == os.path.abspath(folder)
                         else f"{folder}: {path} is a file, not a folder")  # fmt: skip


def output_format(path: str | None, explicit: str | None) -> FileFormat:
    """The format to write `path` in (None: files named by the format); `explicit` (--to, --format) must agree
    with the path's extension."""
    target = format_of(path or "", explicit) if explicit else format_of(path or "")
    if explicit and path is not None:
        try:
            by_extension = format_of(path)
        except UsageError:
            raise UsageError(f"{path}: a {target.name} file should end with {target.extension}") from None
        if by_extension is not target and by_extension.export_operator != target.export_operator:
            raise UsageError(f"{path} has the extension of {by_extension.name} files, not {target.name}")
    if target.export_operator is None:
        writable = ", ".join(sorted(f.name for f in FORMATS.values() if f.export_operator))
        raise UsageError(f"{target.name} files cannot be written; the formats written are {writable}")
    return target


def check_outputs(inputs: Sequence[str], outputs: Sequence[tuple[str, str]], made_folder: str | None = None) -> None:
    """Refuse, before any work, outputs (file, what writes it) that would replace an input or a file an input
    names (a QC's SMDs), that two inputs would both write, or whose folder is missing (but `made_folder`, which
    the command makes). An output ending in `_*.smd` stands for the animation SMDs an SMD export names so. (Files
    are looked up in sets: a batch of thousands is checked in about as many steps.)"""
    seen: dict[str, str] = {}
    made = os.path.abspath(made_folder) if made_folder else None
    read = files_read(inputs)
    read_files = FileSet(read)
    patterns = PatternIndex([(path, writer) for path, writer in outputs if path.endswith(PATTERNS)])
    for source in read:
        for pattern, writer in patterns.matching(source):
            _refuse_pattern_over_input(pattern, writer, source)
    for path, writer in outputs:
        if path.endswith(PATTERNS):
            continue
        for pattern, other in patterns.matching(path):
            if other != writer:
                raise UsageError(f"{other} writes {written_as(pattern)} as {pattern}, and {writer} would write "
                                 f"{path} over one of them")  # fmt: skip
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder) and folder != made:
            raise UsageError(f"{path}: the folder {folder} does not exist")
        if os.path.isdir(path):
            raise UsageError(f"{path} is a folder, not a file to write")
        if path in read_files:
            raise UsageError(f"{path} is also an input: {writer} would replace the file being read")
        key = os.path.normcase(os.path.realpath(path))
        if key in seen:
            raise UsageError(f"{seen[key]} and {writer} would both write {path}")
        seen[key] = writer


class FileSet:
    """Files by identity: a path is in the set when it is one of them (the same file through another path or a
    link), or, not existing yet, names the same place."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.identities = {identity for path in paths if (identity := _identity(path)) is not None}
        self.places = {os.path.normcase(os.path.realpath(path)) for path in paths}

    def __contains__(self, path: object) -> bool:
        assert isinstance(path, str)
        identity = _identity(path)
        if identity is not None:
            return identity in self.identities
        return os.path.normcase(os.path.realpath(path)) in self.places


def _identity(path: str) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_dev, status.st_ino


ACTION_FILES = "_*.smd"  # (an output standing for `<stem>_<action>.smd`, whose action names are known only later)
NUMBERED_PARTS = "_<n>.joe"  # (one standing for `<stem>_2.joe`...: the parts of a model over VDrift's limits)
QC_BUILD_FILES = "/*.smd"  # (Write QC: each mesh an SMD named after it, in the QC's folder)
PATTERNS = (ACTION_FILES, NUMBERED_PARTS, QC_BUILD_FILES)


class PatternIndex:
    """Outputs that stand for files named only later (`<stem>_*.smd`, `<stem>_<n>.joe`, a QC build's `*.smd`),
    indexed by folder and stem: which of them a path could be is found without comparing it with each."""

    def __init__(self, patterns: Sequence[tuple[str, str]]) -> None:
        self.by_stem: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
        self.by_folder: dict[str, list[tuple[str, str]]] = {}
        for pattern, writer in patterns:
            suffix = next(end for end in PATTERNS if pattern.endswith(end))
            stem = os.path.normcase(os.path.realpath(pattern[: -len(suffix)]))
            if suffix == QC_BUILD_FILES:
                self.by_folder.setdefault(stem, []).append((pattern, writer))
            else:
                key = (os.path.dirname(stem), os.path.basename(stem), suffix)
                self.by_stem.setdefault(key, []).append((pattern, writer))

    def matching(self, path: str) -> list[tuple[str, str]]:
        real = os.path.normcase(os.path.realpath(path))
        folder, name = os.path.split(real)
        found = list(self.by_folder.get(folder, [])) if name.endswith((".smd", ".vta")) else []
        if name.endswith(".smd"):  # <stem>_<action>.smd: every `_` may end the stem
            for at in [index for index, char in enumerate(name) if char == "_"]:
                found += self.by_stem.get((folder, name[:at], ACTION_FILES), [])
        part = re.fullmatch(r"(.*)_[0-9]+\.joe", name)
        if part is not None:
            found += self.by_stem.get((folder, part.group(1), NUMBERED_PARTS), [])
        return found


def written_as(pattern: str) -> str:
    """What the files of an output pattern are."""
    if pattern.endswith(NUMBERED_PARTS):
        return "the parts of a model over VDrift's limits"
    return "each mesh (Write QC)" if pattern.endswith(QC_BUILD_FILES) else "each action"


def _refuse_pattern_over_input(pattern: str, writer: str, source: str) -> None:
    one = "a part" if pattern.endswith(NUMBERED_PARTS) else "a mesh of that name" if pattern.endswith(
        QC_BUILD_FILES) else "an action of that name"  # fmt: skip
    raise UsageError(f"{source} is an input, and {writer} writes {written_as(pattern)} as {pattern} beside it: {one} "
                     "would replace it (write the output elsewhere)")


def files_read(inputs: Sequence[str]) -> list[str]:
    """The inputs, and the files a QC among them names or includes (they are read too)."""
    read = list(inputs)
    for path in inputs:
        if path.lower().endswith((".qc", ".qci")):
            try:
                qc = load_qc(path)
            except FormatError:
                continue  # (the import says what is wrong with it)
            for mesh in qc.meshes:
                read += [mesh.path, *(flex.path for flex in mesh.flex_files)]
            read += qc.animations + list(dict.fromkeys(qc.included))
    return read


def same_file(first: str, second: str) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:  # one does not exist yet
        return os.path.normcase(os.path.realpath(first)) == os.path.normcase(os.path.realpath(second))


def files_written(path: str, target: FileFormat, settings: dict[str, object]) -> Iterator[str]:
    """The file an export writes, and the sources the QMAP exporters write beside it; for an SMD export, what its
    mode and Write QC write (with Write QC the meshes and actions are files of their own, not the chosen one)."""
    if target.export_operator == "export_scene.valve_smd":
        yield from smd_files_written(path, settings)
        return
    yield path
    source = path + ".tmp" if target.name == "qmap" else path
    if target.name == "qmap":
        yield source
    if target.name in {"qmap", "qmap_tmp"} and settings.get("write_desc", True):
        yield desc_path_for(source)
    if target.name == "joe" and settings.get("split_large_models", True):
        yield os.path.splitext(path)[0] + NUMBERED_PARTS


def smd_files_written(path: str, settings: dict[str, object]) -> Iterator[str]:
    """What the SMD exporter writes (exporters/smd.py): without Write QC, the chosen file, `<stem>.vta` (All) and
    `<stem>_<action>.smd` (All, or every action); with it, `<stem>.qc`, each mesh as `<its name>.smd` (and
    `.vta`) in the folder (Reference, All) and every action as `<stem>_<action>.smd` (Animation, All)."""
    stem = os.path.splitext(path)[0]
    mode, scope = settings.get("export_mode", "REFERENCE"), settings.get("action_scope", "ACTIVE")
    if path.lower().endswith(".vta"):
        mode = "VTA"
    if not settings.get("write_qc"):
        yield path
        if mode == "ALL":
            yield stem + ".vta"
        if mode == "ALL" or (mode == "ANIMATION" and scope != "ACTIVE"):
            yield stem + ACTION_FILES
        return
    yield stem + ".qc"
    if mode == "VTA":
        yield path
    if mode in ("REFERENCE", "ALL"):
        yield os.path.dirname(os.path.abspath(path)) + QC_BUILD_FILES
    if mode in ("ANIMATION", "ALL"):
        yield stem + ACTION_FILES


def written_beside(compiled: bool) -> str:
    """The files the export wrote beside its output, counted (an SMD's .vta and animations; a map's sources)."""
    from .common.operators import LAST_SUMMARY

    more = 0 if compiled else LAST_SUMMARY[0].files - 1
    return f" (and {more} more beside it)" if more > 0 else ""


def files_the_export_wrote(output: str) -> list[str]:
    """The files the last export named as written (none: it does not name them), in the form `output` was given
    in: an SMD export with Write QC writes the QC and an SMD per mesh, not the chosen file."""
    from .common.operators import LAST_SUMMARY

    return [as_given_beside(path, output) for path in LAST_SUMMARY[0].written]


def described_outputs(output: str, written: Sequence[str], beside: str = "") -> str:
    """What an export made, for its line: the chosen file (and how many more beside it), or, when the export wrote
    other files instead (Write QC), the first of those it is built from (the QC) and how many more."""
    shown = [as_given_beside(path, output) for path in written]
    if not shown or any(same_file(path, output) for path in shown):
        return f"{output}{beside}"
    main = next((path for path in shown if path.lower().endswith(".qc")), shown[0])
    more = len(shown) - 1
    return f"{main} (and {more} more beside it)" if more else main


def stem_of(path: str) -> str:
    """The file name without its format's extension ("map.qmap.tmp" -> "map")."""
    name = os.path.basename(path)
    try:
        return name[: -len(format_of(name).extension)]
    except UsageError:
        return os.path.splitext(name)[0]


def export_scene(path: str, target: FileFormat, settings: dict[str, object], collection: str | None) -> None:
    keywords: dict[str, object] = {"filepath": os.path.abspath(path), **settings}  # (the visible objects)
    if collection:
        if collection not in bpy.data.collections:  # (a mistake in the command line: nothing is written)
            known = ", ".join(sorted(repr(c.name) for c in bpy.data.collections)) or "none"
            raise UsageError(f"--collection: no collection named {collection!r} in the scene (it has: {known})")
        if not bpy.data.collections[collection].all_objects:
            raise UsageError(f"--collection: collection {collection!r} holds no objects")
        keywords["collection"] = collection
    from .common.operators import LAST_SUMMARY, Summary

    LAST_SUMMARY[0] = Summary()  # (a worker's previous export named its own files)
    run_operator(target.export_operator, f"exporting {path}", **keywords)


def reset_scene() -> None:
    with BlenderOutput():
        bpy.ops.wm.read_homefile(use_empty=True)
    raise_if_interrupted()  # (Ctrl-C while the file loads is dropped by Blender's load handlers)


# ------------------------------------------------------------------------------------------- subcommands


def command_import(args: argparse.Namespace) -> None:
    settings = parse_settings(args.set)
    check_inputs(args.files, settings)
    if args.output and not args.output.lower().endswith(".blend"):
        raise UsageError(f"{args.output}: the scene is saved as a .blend file")
    if args.output:
        check_outputs(args.files, [(args.output, "saving the scene")])
    reset_scene()
    with listening_if_wanted():
        import_files(args.files, settings)
    if args.output:
        try:
            with BlenderOutput():
                bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath(args.output))
        except RuntimeError as error:
            raise CliError(f"{args.output}: cannot save the scene ({str(error).strip()})") from None
        print(f"saved {args.output}")
    print(f"imported {len(args.files)} file(s): {len(bpy.data.objects)} objects")


def command_export(args: argparse.Namespace) -> None:
    settings = parse_settings(args.set)
    for blend in args.blends:
        if not os.path.isfile(blend):
            raise UsageError(f"{blend}: no such file")
        if not blend.lower().endswith(".blend"):
            raise UsageError(f"{blend}: export reads a .blend file (to convert other files, use convert)")
    if args.output_dir and not args.format:
        raise UsageError("--format is needed with -d/--output-dir")
    if args.output and len(args.blends) > 1:
        raise UsageError("several .blend files are exported with -d FOLDER (one file each), not into one -o file")
    target = output_format(args.output, args.format)
    check_settings(target.export_operator, settings, "--set", f"the exporter {target.export_operator}")
    with_studiomdl(args, target, settings)
    if target.name == "qmap":
        compile_options_for(target, settings)
    if args.output:
        check_outputs(args.blends, [(p, f"exporting {args.output}") for p in files_written(args.output, target,
                                                                                            settings)])  # fmt: skip
        check_registration(args, target, [args.output])
        with BlenderOutput():
            bpy.ops.wm.open_mainfile(filepath=os.path.abspath(args.blends[0]))
        raise_if_interrupted()
        export_scene(args.output, target, settings, args.collection)
        print(f"exported {described_outputs(args.output, files_the_export_wrote(args.output), written_beside(False))}")
        register_maps(args, [args.output])
        return
    check_folder_can_be_made(args.output_dir)
    outputs = {blend: os.path.join(args.output_dir, stem_of(blend) + target.extension) for blend in args.blends}
    check_registration(args, target, list(outputs.values()))
    check_outputs(args.blends, [(written, f"exporting {blend}") for blend, output in outputs.items()
                                for written in files_written(output, target, settings)],
                  made_folder=args.output_dir)  # fmt: skip
    report = open_report(args.report, args.blends, list(outputs.values()))
    os.makedirs(args.output_dir, exist_ok=True)
    jobs = [export_job(blend, outputs[blend], target, settings, args.collection) for blend in args.blends]
    run_batch(args, jobs, "exporting", report)
    register_maps(args, list(outputs.values()))


def export_job(blend: str, output: str, target: FileFormat, settings: dict[str, object], collection: str | None) -> Job:
    written = list(files_written(output, target, settings))
    task = {"kind": "export", "inputs": [blend], "output": output, "target": target.name, "collection": collection,
            "export_settings": repr(settings), "one_output": False, "label": blend,
            "verbose": BlenderOutput.verbose}  # fmt: skip
    fingerprint = repr([extension_version(), os.path.abspath(blend), target.name, collection,
                        sorted(settings.items(), key=repr)])  # fmt: skip
    return Job([blend], output, task, fingerprint, [blend], [p for p in written if not p.endswith(PATTERNS)])


def command_convert(args: argparse.Namespace) -> None:
    import_settings = parse_settings(args.import_set, "--import-set")
    export_settings = parse_settings(args.set)
    if args.output_dir and not args.to:
        raise UsageError("--to is needed with -d/--output-dir")
    target = output_format(args.output, args.to)
    check_inputs(args.inputs, import_settings, "--import-set")
    check_car_target(args.inputs, target, one_output=args.output is not None)
    check_settings(target.export_operator, export_settings, "--set", f"the exporter {target.export_operator}")
    with_studiomdl(args, target, export_settings)
    if target.name == "qmap":
        compile_options_for(target, export_settings)
    compiled = compiles_sources(args.inputs, target, args.output_dir is not None)
    if compiled:
        check_compile_settings(import_settings, export_settings)
    if args.output_dir:
        check_folder_can_be_made(args.output_dir)
        outputs = {path: os.path.join(args.output_dir, stem_of(path) + target.extension) for path in args.inputs}
    else:
        outputs = {path: args.output for path in args.inputs[:1]}  # (every input goes into the one output)
    check_registration(args, target, list(outputs.values()))
    check_outputs(args.inputs, [
        (written, f"converting {path}")
        for path, output in outputs.items()
        for written in ([output] if compiled else files_written(output, target, export_settings))
    ], made_folder=args.output_dir)  # fmt: skip
    report = open_report(args.report, args.inputs, list(outputs.values()))
    if args.output_dir:
        try:
            os.makedirs(args.output_dir, exist_ok=True)
        except OSError as error:  # (a read-only parent, a file on the way): before any file is converted
            raise CliError(f"{args.output_dir}: cannot make this folder: {error.strerror}") from None
    groups = [[path] for path in args.inputs] if args.output_dir else [list(args.inputs)]
    settings = ConvertSettings(target, import_settings, export_settings, compiled)
    jobs = [conversion_job(group, outputs[group[0]], settings, not args.output_dir) for group in groups]
    run_batch(args, jobs, "converting", report, single=not args.output_dir)
    register_maps(args, list(outputs.values()))


def check_car_target(inputs: Sequence[str], target: FileFormat, one_output: bool) -> None:
    """A .car is written only over a car a .car import made (the exporter updates that file's keys in place): from
    .car inputs, one per output."""
    if target.name != "car":
        return
    others = [path for path in inputs if format_of(path).name != "car"]
    if others:
        raise UsageError(f"{others[0]}: a .car is written from a VDrift car imported from a .car (it updates that "
                         "file's wheels and parts), not from other files; convert them to joe or jpk")  # fmt: skip
    if one_output and len(inputs) > 1:
        raise UsageError("a .car file holds one car: convert several with -d FOLDER (one .car each)")


# ------------------------------------------------------------------------------- compiling an exported QC


def add_studiomdl_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("compiling an SMD export's QC")
    group.add_argument("--studiomdl", metavar="PATH",
                       help="compile the exported QC with this studiomdl (sets write_qc and compile_qc; a Windows "
                       ".exe runs through Wine on Linux and macOS)")  # fmt: skip
    group.add_argument("--studiomdl-game", metavar="DIR",
                       help="the game folder of the compile (Source: studiomdl's -game, the folder holding "
                       "gameinfo.txt; GoldSrc: the model is moved into its models/)")  # fmt: skip


def with_studiomdl(args: argparse.Namespace, target: FileFormat, settings: dict[str, object]) -> None:
    """--studiomdl as the SMD exporter's settings (they override the extension's preferences), checked before any
    work."""
    if args.studiomdl_game and not args.studiomdl:
        raise UsageError("--studiomdl-game goes with --studiomdl PATH")
    if not args.studiomdl:
        return
    if target.export_operator != "export_scene.valve_smd":
        raise UsageError(f"--studiomdl compiles the QC of an SMD export, not {target.name} files")
    if not os.path.isfile(args.studiomdl):
        raise UsageError(f"--studiomdl {args.studiomdl}: no such file")
    if args.studiomdl_game and not os.path.isdir(args.studiomdl_game):
        raise UsageError(f"--studiomdl-game {args.studiomdl_game}: no such folder")
    refused = [key for key in ("write_qc", "compile_qc") if settings.get(key) is False]
    if refused:
        raise UsageError(f"--studiomdl compiles the QC: it does not go with --set {refused[0]}=False")
    settings.update(write_qc=True, compile_qc=True, studiomdl_path=os.path.abspath(args.studiomdl))
    if args.studiomdl_game:
        settings["game_folder"] = os.path.abspath(args.studiomdl_game)


# ------------------------------------------------------------------------------- the game's resource list


def check_registration(args: argparse.Namespace, target: FileFormat, outputs: Sequence[str]) -> None:
    """--register and its options make sense (UsageError), and the list can take every map (CliError), before any
    file is written."""
    if args.register and target.name != "qmap":
        raise UsageError(f"--register lists compiled maps (.qmap), not {target.name} files")
    try:
        files = check_register_arguments(args, list(outputs))
    except CompilerUsageError as error:
        raise UsageError(str(error)) from None
    if not files:
        return
    try:
        listing = qmap_resources.read_resources(args.register)
        for file in files:
            qmap_resources.plan_registration(listing, file, args.resource_name, args.resource_state.upper())
    except QmapError as error:
        raise CliError(str(error)) from None


def register_maps(args: argparse.Namespace, outputs: Sequence[str]) -> None:
    """Each map's entry added or updated in the --register list, in the order of the outputs."""
    if not args.register:
        return
    for output in outputs:
        try:
            registration = qmap_resources.register_map(args.register, output, args.resource_name,
                                                       args.resource_state.upper(), args.game_folder)  # fmt: skip
        except QmapError as error:
            raise CliError(str(error)) from None
        if registration.warning:
            print(f"{output}: warning: {registration.warning}", file=sys.stderr)
        print(qmap_resources.describe_registration(registration, args.register))


def run_batch(
    args: argparse.Namespace, jobs: list[Job], verb: str, report: Report | None, single: bool = False
) -> None:
    """Run the jobs (skipping those up to date), print each one's lines in input order and a summary line; exit
    code 1 when any failed (`single`: the one job of `convert -o`, whose error is the command's)."""
    batch = Batch(local=run_task, command=worker_command, workers=args.jobs, scheduler=args.scheduler,
                  force=args.force, verbose=BlenderOutput.verbose)  # fmt: skip
    failures: list[str] = []
    writers: dict[str, str] = {}  # each file written so far: the input whose conversion wrote it

    def finished(job: Job, result: Result) -> None:
        show_result(job, result, failures)
        if result.get("status") == "ok":
            warn_of_files_written_twice(job, result.get("written", []), writers)
        if report is not None:
            report.write(job, result)

    def started(index: int) -> None:
        if progress_wanted() and not single:
            show_progress(f"[{index + 1}/{len(jobs)}] {verb} {printable(jobs[index].inputs[0])}")

    done = "exported" if verb == "exporting" else "converted"
    try:
        with listening_if_wanted() if single else contextlib.nullcontext():
            tally = batch.run(jobs, finished, started)
    except cluster.SchedulerUnavailable as error:
        raise CliError(str(error)) from None
    except KeyboardInterrupt:  # (what was done before: the summary line still ends the output)
        BlenderOutput.put_back_all()
        if batch.tally is not None:
            print(batch.tally.line(done))
        raise
    finally:
        if report is not None:
            report.stream.close()
    print(tally.line(done))
    if failures and not single:
        raise CliError(f"{len(failures)} of {len(jobs)} {'conversions' if verb == 'converting' else 'exports'} "
                       "failed")  # fmt: skip
    if failures:
        raise CliError(failures[0])


def warn_of_files_written_twice(job: Job, written: Sequence[str], writers: dict[str, str]) -> None:
    """A file two conversions of the batch wrote (Write QC meshes of one name, in one folder): the later one's is
    kept, which the check before the work could not foresee (mesh names are known only in Blender)."""
    for path in written:
        key = os.path.normcase(os.path.realpath(path))
        earlier = writers.setdefault(key, job.inputs[0])
        if earlier != job.inputs[0]:
            print(f"{printable(job.inputs[0])}: warning: {path} was also written from "
                  f"{printable(earlier)}, whose file it replaced (write them into folders of their own)",
                  file=sys.stderr)  # fmt: skip


@dataclass(frozen=True)
class ConvertSettings:
    target: FileFormat
    import_settings: dict[str, object]
    export_settings: dict[str, object]
    compiled: bool


def conversion_job(inputs: list[str], output: str, settings: ConvertSettings, one_output: bool) -> Job:
    """One conversion as a task a worker can run, with what decides whether a rerun may skip it."""
    target = settings.target
    written = [output] if settings.compiled else list(files_written(output, target, settings.export_settings))
    task = {
        "inputs": inputs, "output": output, "target": target.name, "compiled": settings.compiled,
        "one_output": one_output,
        "import_settings": repr(settings.import_settings), "export_settings": repr(settings.export_settings),
        "label": inputs[0] if len(inputs) == 1 else shortened(", ".join(inputs)),
        "verbose": BlenderOutput.verbose,  # (a worker's Blender lines, studiomdl's log, with --verbose)
    }  # fmt: skip
    fingerprint = repr([extension_version(), [os.path.abspath(path) for path in inputs], task["target"],
                        sorted(settings.import_settings.items(), key=repr),
                        sorted(settings.export_settings.items(), key=repr), settings.compiled])  # fmt: skip
    sources = files_read(inputs)
    if settings.compiled and import_settings_use_desc(settings.import_settings):
        sources.append(desc_path_for(inputs[0]))
    concrete = [path for path in written if not path.endswith(PATTERNS)]
    return Job(inputs, output, task, fingerprint, sources, concrete)


def shortened(text: str, most: int = 200) -> str:
    return text if len(text) <= most else text[: most - 3] + "..."


def import_settings_use_desc(settings: dict[str, object]) -> bool:
    return bool(settings.get("use_desc", True))


@functools.cache
def extension_version() -> str:
    """The manifest's version: an output made by another version is made again."""
    import tomllib

    with open(os.path.join(os.path.dirname(__file__), "blender_manifest.toml"), "rb") as stream:
        return str(tomllib.load(stream).get("version", ""))


def open_report(path: str | None, inputs: Sequence[str], outputs: Sequence[str]) -> Report | None:
    """--report FILE.jsonl, refused before any work when it cannot be written or would replace a file in use."""
    if path is None:
        return None
    if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise UsageError(f"--report {path}: the folder {os.path.dirname(os.path.abspath(path))} does not exist")
    for other in [*files_read(inputs), *outputs]:
        if same_file(path, other):
            raise UsageError(f"--report {path} is also an input or an output")
    try:
        return Report(open(path, "w", encoding="utf-8"))  # (closed when the batch ends)
    except OSError as error:
        raise UsageError(f"--report {path}: cannot write it ({error.strerror})") from None


def show_result(job: Job, result: Result, failures: list[str]) -> None:
    """A conversion's lines, as a serial run prints them: its summaries, its warnings (each naming its input), and
    where it went or why it failed."""
    sys.stdout.write(result.get("stdout", ""))
    sys.stderr.write(result.get("stderr", ""))
    label = printable(job.inputs[0]) if len(job.inputs) == 1 and not job.task["one_output"] else \
        f"{len(job.inputs)} file(s)"  # fmt: skip
    status = result.get("status")
    # (each line in one write: print() writes its end apart, and a Ctrl-C between the two left the summary line on
    # the end of this one)
    if status == "skipped":
        sys.stdout.write(f"{label} -> {described_outputs(job.output, result.get('written', []))} (up to date)\n")
    elif status == "ok":
        written, beside = result.get("written", []), result.get("beside", "")
        sys.stdout.write(f"{label} -> {described_outputs(job.output, written, beside)}\n")
    else:
        message = str(result.get("error") or "failed")
        failures.append(message)
        if not job.task["one_output"]:  # (-o: the one error is the command's, printed once at the end)
            named = message if os.path.basename(job.inputs[0]) in message else f"{job.inputs[0]}: {message}"
            sys.stderr.write(f"error: {named}\n")
    sys.stdout.flush()
    sys.stderr.flush()


def run_task(task: Task) -> Result:
    """Convert one task in this process (a worker's, or a serial batch's): what it printed, warnings naming its
    input, its error, what it made and how long it took."""
    started = time.perf_counter()
    inputs, output, target = list(task["inputs"]), str(task["output"]), FORMATS[task["target"]]
    import_settings = ast.literal_eval(task.get("import_settings", "{}"))
    export_settings = ast.literal_eval(task["export_settings"])
    out, err = io.StringIO(), io.StringIO()
    result: Result = {"status": "ok", "error": None, "counts": {}}
    BlenderOutput.naming = task["label"]
    BlenderOutput.verbose = bool(task.get("verbose", BlenderOutput.verbose))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            if task.get("kind") == "export":
                result["counts"] = export_blend(inputs[0], output, target, export_settings, task["collection"])
            elif task["compiled"]:
                compile_source(inputs, output, target, import_settings, export_settings)
            else:
                result["counts"] = convert_files(inputs, output, target, import_settings, export_settings)
            result["beside"] = written_beside(bool(task.get("compiled")))
            if not task.get("compiled") and (written := files_the_export_wrote(output)):
                result["written"] = written
    except CliError as error:
        result.update(status="failed", error=as_given(str(error), inputs))
    finally:
        BlenderOutput.naming = None
    text = err.getvalue()
    result.update(stdout=out.getvalue(), stderr=text, seconds=time.perf_counter() - started,
                  warnings=[line for line in text.splitlines() if ": warning: " in line],
                  converted_by=f"{socket.gethostname()}:{os.getpid()}")  # fmt: skip
    return result


def as_given(message: str, inputs: Sequence[str]) -> str:
    """Paths in a message as the user gave them (readers name files by their absolute paths)."""
    for path in inputs:
        message = message.replace(os.path.abspath(path), path)
    return message


def command_worker(_: argparse.Namespace) -> None:
    """A batch's worker: tasks as JSON lines on stdin, each result as one marked line on stdout (and one when it is
    ready for the first)."""
    os.write(1, result_line(READY))
    for line in sys.stdin:
        if line.strip():
            task = json.loads(line)
            if "cwd" in task:  # (a cluster's task: relative paths are the submitting machine's)
                os.chdir(task["cwd"])
            result = run_task(task)
            sys.stdout.flush()
            os.write(1, result_line(result))


# The command that starts a worker: Blender's binary running this extension, or (the bpy module) this Python
# loading the extension as this process did: from the source tree (the `dev` repository tools/bpy_extension.py
# makes), or from the user's installed extensions.
WORKER_BOOTSTRAP = """
import importlib, os, signal, sys
module, source = sys.argv[1], sys.argv[2]
caught = []  # (a stop while Blender starts is acted on once it has: see tools/bpy_extension.signals_held)
previous = signal.signal(signal.SIGTERM, lambda number, frame: caught.append(number))
if module.split(".")[1] == "dev":
    sys.path.insert(0, os.path.join(source, "tools"))
    from bpy_extension import enable_extension
    extension = enable_extension()
else:
    import bpy
    import addon_utils
    addon_utils.enable(module, default_set=False)
    extension = importlib.import_module(module)
signal.signal(signal.SIGTERM, previous)
sys.exit(130 if caught else extension.cli.main(["worker"], prog="worker"))
"""


def worker_command() -> list[str]:
    if bpy.app.binary_path:
        return [bpy.app.binary_path, "--background", "--command", COMMAND_ID, "worker"]
    source = os.path.dirname(os.path.realpath(__file__))
    return [sys.executable, "-c", WORKER_BOOTSTRAP, str(__package__), source]


def convert_files(paths: Sequence[str], output: str, target: FileFormat, import_settings: dict[str, object],
                  export_settings: dict[str, object]) -> dict[str, int]:  # fmt: skip
    """Import the files into an empty scene and export it; what the import made, counted."""
    reset_scene()
    import_files(paths, import_settings)
    counts = scene_counts()
    export_scene(output, target, export_settings, None)
    return counts


def export_blend(blend: str, output: str, target: FileFormat, settings: dict[str, object],
                 collection: str | None) -> dict[str, int]:  # fmt: skip
    """Open a .blend and export its scene (or a collection); what the scene holds, counted."""
    try:
        with BlenderOutput():
            bpy.ops.wm.open_mainfile(filepath=os.path.abspath(blend))
    except RuntimeError as error:
        raise CliError(f"{blend}: cannot open it ({str(error).strip()})") from None
    raise_if_interrupted()
    counts = scene_counts()
    export_scene(output, target, settings, collection)
    return counts


def scene_counts() -> dict[str, int]:
    objects = list(bpy.context.scene.objects)
    triangles = 0
    for obj in objects:
        if obj.type == "MESH" and len(obj.data.polygons):
            sizes = np.empty(len(obj.data.polygons), np.int64)
            obj.data.polygons.foreach_get("loop_total", sizes)
            triangles += int((sizes - 2).sum())
    bones = sum(len(obj.data.bones) for obj in objects if obj.type == "ARMATURE")
    return {"objects": len(objects), "triangles": triangles, "bones": bones, "actions": len(bpy.data.actions)}


# A .qmap.tmp converted to .qmap is compiled as it is (with the .qmap.desc beside it), as the standalone compiler
# and Tools.exe do: through a Blender scene its numbers would be rounded again and the sources rewritten.
COMPILE_OPTIONS = {"k", "max_depth", "use_bounds", "bounds_min", "bounds_max", "fix_bounds", "drop_degenerate"}


def compiles_sources(inputs: Sequence[str], target: FileFormat, one_output_each: bool) -> bool:
    sources = all(format_of(path).name == "qmap_tmp" for path in inputs)
    return target.name == "qmap" and sources and (one_output_each or len(inputs) == 1)


def check_compile_settings(import_settings: dict[str, object], export_settings: dict[str, object]) -> None:
    for key in import_settings:
        if key != "use_desc":
            raise UsageError(f"--import-set {key} does not apply: a .qmap.tmp is compiled as it is, without "
                             "importing it (only use_desc does)")  # fmt: skip
    for key in export_settings:
        if key not in COMPILE_OPTIONS:
            raise UsageError(f"--set {key} does not apply: a .qmap.tmp is compiled as it is, without a Blender "
                             f"scene; compile options: {', '.join(sorted(COMPILE_OPTIONS))}")  # fmt: skip


def compile_source(paths: Sequence[str], output: str, target: FileFormat, import_settings: dict[str, object],
                   export_settings: dict[str, object]) -> None:  # fmt: skip
    from . import qmap_compiler as qc
    from .common.qmap_io import compiler_call

    options = compile_options_for(target, export_settings)
    desc = desc_path_for(paths[0])  # the .qmap.desc beside the source, as the importer and the panel use it
    use_desc = import_settings.get("use_desc", True) and os.path.isfile(desc)
    try:
        report = compiler_call(qc.compile_map, paths[0], desc if use_desc else None, os.path.abspath(output), options)
    except FormatError as error:
        raise CliError(str(error)) from None
    except OSError as error:
        raise CliError(f"{error.filename or output}: {error.strerror or error}") from None
    for warning in report.warnings:
        print(f"{paths[0]}: warning: {warning}", file=sys.stderr)


def compile_options_for(target: FileFormat, settings: dict[str, object]) -> qc.CompileOptions:
    """The QMAP compile options of `settings` over the exporter's defaults; fixed bounds the compiler would refuse
    (not finite, minimum above maximum) are a mistake in the command line."""
    from .exporters.qmap import compile_options

    assert target.export_operator is not None
    defaults = {prop.identifier: default_of(prop) for prop in visible_options(target.export_operator)}
    try:
        return compile_options(SimpleNamespace(**{**defaults, **settings}))
    except FormatError as error:
        raise UsageError(f"--set {error}") from None


def command_options(args: argparse.Namespace) -> None:
    chosen = format_of("", args.format)
    for what, idname in (("import", chosen.import_operator), ("export", chosen.export_operator)):
        if idname is None:
            print(f"{chosen.name}: no {what}")
            continue
        flags = "import --set, convert --import-set" if what == "import" else "export/convert --set"
        print(f"{chosen.name} {what} options ({flags} KEY=VALUE; bpy.ops.{idname}):")
        for prop in visible_options(idname):
            print(f"  {prop.identifier} = {default_of(prop)!r}  ({type_name(prop)})")
            if prop.description:
                print(f"      {prop.description}")


def add_batch_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("-j", "--jobs", type=positive_count, default=os.cpu_count() or 1, metavar="N",
                         help="work on N files side by side, each in a Blender process of its own (default: one "
                         "per core; 1: one at a time in this process)")  # fmt: skip
    command.add_argument("--force", action="store_true",
                         help="write every output, also those up to date (newer than every file they were made "
                         "from, made with the same options and version: skipped by default)")  # fmt: skip
    command.add_argument("--report", metavar="FILE.jsonl",
                         help="write one JSON object per input: outputs, status (ok, skipped, failed), error, "
                         "warnings, counts, seconds")  # fmt: skip
    command.add_argument("--scheduler", metavar="tcp://HOST:PORT", type=scheduler_address,
                         help="work on a Dask cluster (the 'distributed' package) instead of on this machine; "
                         "inputs and outputs must be at the same paths on every worker")  # fmt: skip


def positive_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is less than 1")
    return value


def scheduler_address(text: str) -> str:
    try:
        return cluster.checked_address(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr (exit code 2), pointing at --help."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser(prog: str) -> argparse.ArgumentParser:
    known = ", ".join(sorted(FORMATS))
    written = ", ".join(sorted(name for name, f in FORMATS.items() if f.export_operator))  # (what --to takes)
    parser = OneLineParser(
        prog=prog,
        description=f"Import, export and convert game formats headless. Formats: {known}.",
        epilog=f"Exit codes: 0 done, 1 a file could not be read or written, 2 a mistake in the command line "
        f"(nothing was done). Options of each format: {prog} options FORMAT.",
    )
    verbose = OneLineParser(add_help=False)  # -v before or after the subcommand
    verbose.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                         help="also show Blender's own log lines")  # fmt: skip
    parser.add_argument("-v", "--verbose", action="store_true", help="also show Blender's own log lines")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser,
                                     metavar="command")  # fmt: skip

    imp = commands.add_parser(
        "import", parents=[verbose], help="import files into an empty scene, optionally save it as .blend"
    )
    imp.add_argument("files", nargs="+", help="files to import (the type comes from the extension)")
    imp.add_argument("-o", "--output", help="save the scene to this .blend")
    imp.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="an import option")
    imp.set_defaults(run=command_import)

    exp = commands.add_parser(
        "export", parents=[verbose], help="export a .blend's scene or one of its collections (several: one file each)"
    )
    exp.add_argument("blends", nargs="+", metavar="blend", help="the .blend file(s) to open")
    exp_where = exp.add_mutually_exclusive_group(required=True)
    exp_where.add_argument("-o", "--output", help="the file to write (its extension picks the format)")
    exp_where.add_argument("-d", "--output-dir", help="one file per .blend, named after it, in this folder (needs "
                           "--format)")  # fmt: skip
    exp.add_argument("--format", help=f"the format, when the extension does not say it ({written})")
    exp.add_argument("--collection", help="export only this collection's objects")
    exp.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="an export option")
    add_batch_options(exp)
    add_register_arguments(exp)
    add_studiomdl_arguments(exp)
    exp.set_defaults(run=command_export)

    conv = commands.add_parser("convert", parents=[verbose], help="convert files to another format")
    conv.add_argument("inputs", nargs="+", help="input files of any importable format")
    conv.add_argument("--to", help=f"output format ({written}); with -o, the extension may say it")
    where = conv.add_mutually_exclusive_group(required=True)
    where.add_argument("-o", "--output", help="one output file holding every input")
    where.add_argument("-d", "--output-dir", help="one output file per input, in this folder")
    conv.add_argument("--import-set", action="append", default=[], metavar="KEY=VALUE", help="an import option")
    conv.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="an export option")
    add_batch_options(conv)
    add_register_arguments(conv)
    add_studiomdl_arguments(conv)
    conv.set_defaults(run=command_convert)

    worker = commands.add_parser("worker", help=argparse.SUPPRESS)  # (a batch's worker process: tasks on stdin)
    worker.set_defaults(run=command_worker)

    opts = commands.add_parser("options", parents=[verbose], help="list a format's import and export options")
    opts.add_argument("format", help=f"a format ({known})")
    opts.set_defaults(run=command_options)
    return parser


def main(argv: Sequence[str], prog: str = f"blender --command {COMMAND_ID}") -> int:
    parser = build_parser(prog)
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exit_request:  # --help, or a usage error already printed
        return int(exit_request.code or 0)
    BlenderOutput.verbose = args.verbose
    blas_to_one_thread()  # (as in each worker: see batch.threads)
    try:
        with stopped_by_sigterm():
            args.run(args)
            sys.stdout.flush()  # (inside: a reader that went away is found here, not at exit)
    except BrokenPipeError:  # the output's reader stopped early (`| head`): end quietly, as Unix tools do
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except UsageError as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    except CliError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        BlenderOutput.put_back_all()
        print("interrupted: no file was left half-written", file=sys.stderr)
        return 130
    return 0

