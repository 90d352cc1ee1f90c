"""*Compile* on the SMD export: after the QC is written, the studiomdl of the extension's preferences (or the one
the command line names) builds the model; its log goes into the text block `studiomdl.log` and the console, its
warnings into the export's, and its first error, naming the QC's line, into the error report. The running and the
log reading are `formats/studiomdl.py`'s."""

from __future__ import annotations

import os

import bpy
from bpy.props import BoolProperty, StringProperty

from ..formats.errors import FormatError
from ..formats.studiomdl import CompileRun, compile_qc
from .operators import Summary
from .preferences import preferences

LOG_TEXT = "studiomdl.log"  # the text block holding the last compile's log
LOG_HINT = f"the log is in the text {LOG_TEXT}"  # (the command line, without text blocks, words it its way)


class StudiomdlCompileMixin:
    """The SMD export's Compile option; the two hidden ones let the command line override the preferences."""

    compile_qc: BoolProperty(
        name="Compile", default=False,
        description="After writing the QC, compile it with the studiomdl set in the extension's preferences "
        "(Source: into the Game Folder's models/; GoldSrc: beside the QC, or into the Game Folder's models/); its "
        f"log goes into the text block {LOG_TEXT}. Needs Write QC",
    )  # fmt: skip
    studiomdl_path: StringProperty(
        name="studiomdl", default="", subtype="FILE_PATH", options={"HIDDEN", "SKIP_SAVE"},
        description="The studiomdl to run; empty: the one in the extension's preferences",
    )  # fmt: skip
    game_folder: StringProperty(
        name="Game Folder", default="", subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"},
        description="The game folder for the compile; empty: the one in the extension's preferences",
    )  # fmt: skip


def compile_if_wanted(operator: bpy.types.Operator, context: bpy.types.Context, summary: Summary) -> None:
    """After an SMD export: compile the QC it wrote when Compile is on."""
    if not operator.compile_qc:
        return
    if not operator.write_qc:
        summary.warnings.append("Compile needs Write QC: nothing was compiled")
        return
    compile_exported_qc(operator, context, os.path.splitext(operator.filepath)[0] + ".qc", operator.flavour, summary)


def compile_exported_qc(
    operator: bpy.types.Operator, context: bpy.types.Context, qc_path: str, flavour: str, summary: Summary
) -> CompileRun:
    """Compile the QC an export wrote; FormatError (the export's files stay written) when it cannot be run or
    studiomdl fails, after the export's warnings are printed (its summary is not reported then)."""
    try:
        return _compile(operator, context, qc_path, flavour, summary)
    except FormatError:
        for warning in summary.warnings:
            print(f"{operator.bl_label}: warning: {warning}")
        raise


def _compile(
    operator: bpy.types.Operator, context: bpy.types.Context, qc_path: str, flavour: str, summary: Summary
) -> CompileRun:
    studiomdl, game = _chosen_tools(operator, context)
    engine = "goldsrc" if flavour == "GOLDSRC" else "source"
    try:
        run = compile_qc(studiomdl, qc_path, engine, game)
    except FormatError as error:
        raise FormatError(f"Compile: {error} (the exported files are written)") from None
    _show_log(run)
    summary.warnings += [f"studiomdl: {warning}" for warning in run.warnings]
    if not run.ok:
        first, more = run.errors[0], len(run.errors) - 1
        extra = f" (and {more} more)" if more else ""
        raise FormatError(f"studiomdl: {first}{extra}; the exported files are written, {LOG_HINT}")
    made = ", ".join(_shown(path, qc_path) for path in run.outputs) or "no file (its log names none)"
    summary.notes.append(f"studiomdl compiled {made} in {run.seconds:.2f} s (log: text {LOG_TEXT})")
    operator.report({"INFO"}, f"Compiled {made} with studiomdl in {run.seconds:.2f} s")
    return run


def _chosen_tools(operator: bpy.types.Operator, context: bpy.types.Context) -> tuple[str, str]:
    """The studiomdl and game folder: the operator's (the command line's), else the preferences'."""
    settings = preferences(context)
    studiomdl = operator.studiomdl_path or (settings.studiomdl_path if settings is not None else "")
    game = operator.game_folder or (settings.game_folder if settings is not None else "")
    if not studiomdl:
        raise FormatError("Compile: no studiomdl is set: name it in the extension's preferences (Edit > "
                          "Preferences > Add-ons > Game Formats), or with the command line's --studiomdl (the "
                          "exported files are written)")  # fmt: skip
    return bpy.path.abspath(studiomdl), bpy.path.abspath(game).rstrip("/\\") if game else ""


def _show_log(run: CompileRun) -> None:
    """The log into the text block (replaced at each compile) and the console."""
    text = bpy.data.texts.get(LOG_TEXT) or bpy.data.texts.new(LOG_TEXT)
    text.clear()
    text.write(f"$ {' '.join(run.command)}\n{run.log}\n(exit code {run.exit_code}, {run.seconds:.2f} s)\n")
    print(f"studiomdl: {' '.join(run.command)}")
    for line in run.log.splitlines():
        print(f"studiomdl: {line}")


def _shown(path: str, qc_path: str) -> str:
    """A written file named relative to the QC's folder when it is inside it."""
    relative = os.path.relpath(path, os.path.dirname(qc_path))
    return path if relative.startswith("..") else relative
