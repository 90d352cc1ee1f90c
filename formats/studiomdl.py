"""Running a studiomdl the user names on a QC, and reading its log (standard library only, no Blender).

The command: GoldSrc's studiomdl takes the QC's name and runs in the QC's folder, where `$cd "."` points;
Source's gets `-nop4 -game <game folder> <the QC>` (without a game folder, the VPROJECT variable must name one).
A Windows `.exe` runs through Wine on Linux and macOS, its paths given as Wine's Z: drive names them.

Where the model goes: Source's studiomdl writes `<game>/models/<$modelname>` itself. GoldSrc's writes
`$modelname` relative to the QC's folder (its folder is made first: studiomdl would not make it); with a game
folder the files it wrote (`x.mdl`, and `xT.mdl`, `x01.mdl`... for split textures and sequence groups) are then
moved to `<game>/models/`, keeping the path `$modelname` gives under `models/`.

The log: each `ERROR`/`WARNING` becomes a message naming the QC and the line it concerns: the line the log gives
(Source: `x.qc(12): - ...`; GoldSrc: `Line 12 is incomplete`), else the line of the command or file the message
names (`bad command $foo`, `./body.smd doesn't exist`, an SMD studiomdl was reading when it failed).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .errors import FormatError
from .smd.qc import tokenize

TIMEOUT_SECONDS = 600.0  # a large Source model takes minutes; a hung Wine prefix would wait forever


@dataclass
class CompileMessage:
    severity: str  # "error" or "warning"
    text: str  # the message as studiomdl gave it, without its location
    file: str | None = None  # the QC (or the SMD) it concerns
    line: int | None = None

    def __str__(self) -> str:
        where = [os.path.basename(self.file)] if self.file else []
        where += [f"line {self.line}"] if self.line is not None else []
        return f"{', '.join(where)}: {self.text}" if where else self.text


@dataclass
class CompileRun:
    command: list[str]
    exit_code: int
    log: str
    seconds: float
    messages: list[CompileMessage] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)  # the files studiomdl wrote (after any move), absolute

    @property
    def errors(self) -> list[CompileMessage]:
        return [message for message in self.messages if message.severity == "error"]

    @property
    def warnings(self) -> list[CompileMessage]:
        return [message for message in self.messages if message.severity == "warning"]

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.errors


# ------------------------------------------------------------------------------------------------ the command


def is_windows_program(path: str) -> bool:
    return path.lower().endswith(".exe")


def wine_path(path: str) -> str:
    """An absolute path as a Windows program under Wine sees it (Wine's Z: drive is the root folder)."""
    return "Z:" + os.path.abspath(path).replace("/", "\\")


def native_path(path: str) -> str:
    """A path a studiomdl printed, as this system names it (Wine's `Z:\\tmp\\x.mdl` is `/tmp/x.mdl`)."""
    if re.match(r"^[zZ]:[\\/]", path) and os.name == "posix":
        path = path[2:]
    return path.replace("\\", "/") if os.name == "posix" else path


GAME_FOLDER_HINT = "set the Game Folder in the extension's preferences, or VPROJECT"  # (the CLI names its option)


def studiomdl_command(
    studiomdl: str, qc_path: str, flavour: str, game_folder: str = "", *, platform: str = sys.platform,
    which: Callable[[str], str | None] = shutil.which, environment: Mapping[str, str] | None = None,
) -> list[str]:
    """The command line (run in the QC's folder); FormatError when it cannot be run here."""
    if not os.path.isfile(studiomdl):
        raise FormatError(f"{studiomdl}: no such studiomdl")
    windows_program = is_windows_program(studiomdl) and not platform.startswith("win")
    prefix = [studiomdl]
    if windows_program:
        wine = which("wine")
        if wine is None:
            raise FormatError(f"{os.path.basename(studiomdl)} is a Windows program: running it on this system needs "
                              "Wine, which is not installed (no 'wine' on the PATH)")  # fmt: skip
        prefix = [wine, studiomdl]
    name = wine_path if windows_program else os.path.abspath
    if flavour == "goldsrc":
        return [*prefix, os.path.basename(qc_path)]
    if game_folder:
        if not os.path.isdir(game_folder):
            raise FormatError(f"{game_folder}: the game folder does not exist")
        return [*prefix, "-nop4", "-game", name(game_folder), name(qc_path)]
    if not (os.environ if environment is None else environment).get("VPROJECT"):
        raise FormatError("Source's studiomdl needs the game folder (the one holding gameinfo.txt), where it "
                          f"writes models/: {GAME_FOLDER_HINT}")
    return [*prefix, "-nop4", name(qc_path)]


# ------------------------------------------------------------------------------------------------ running


def compile_qc(
    studiomdl: str, qc_path: str, flavour: str, game_folder: str = "", timeout: float = TIMEOUT_SECONDS
) -> CompileRun:
    """Run studiomdl on the QC and read its log; FormatError when it cannot run or does not end in time."""
    qc_path = os.path.abspath(qc_path)
    folder = os.path.dirname(qc_path)
    command = studiomdl_command(studiomdl, qc_path, flavour, game_folder)
    qc_text = _read_text(qc_path)
    model_name = modelname_of(qc_text)
    if flavour == "goldsrc" and model_name:
        os.makedirs(os.path.dirname(os.path.join(folder, model_name)) or folder, exist_ok=True)
    started = time.perf_counter()
    exit_code, log = _run(command, folder, timeout)
    run = CompileRun(command, exit_code, log, time.perf_counter() - started)
    run.messages = parse_log(log, qc_path, qc_text)
    if exit_code != 0 and not run.errors:
        run.messages.append(CompileMessage("error", f"studiomdl stopped with exit code {exit_code}", qc_path))
    written = [os.path.normpath(os.path.join(folder, native_path(path))) for path in outputs_in_log(log)]
    run.outputs = [path for path in written if os.path.isfile(path)]
    if run.ok and flavour == "goldsrc" and game_folder:
        run.outputs = move_into_game(run.outputs, folder, game_folder)
    return run


def _run(command: list[str], folder: str, timeout: float) -> tuple[int, str]:
    """The exit code and the log (stdout and stderr as one, in order); the whole process group is stopped at the
    time limit (Wine starts helpers of its own)."""
    own_group = os.name == "posix"
    try:
        process = subprocess.Popen(command, cwd=folder, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, start_new_session=own_group)  # fmt: skip
    except OSError as error:
        raise FormatError(f"{command[0]}: cannot run it ({error.strerror or error})") from None
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        if own_group:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
        process.communicate()
        raise FormatError(f"studiomdl did not finish within {timeout:g} s; it was stopped") from None
    return process.returncode, output.decode("utf-8", errors="replace").replace("\r\n", "\n")


def move_into_game(outputs: list[str], qc_folder: str, game_folder: str) -> list[str]:
    """GoldSrc: the files studiomdl wrote beside the QC, moved to `<game>/models/` under the path they had
    (a `$modelname` starting with `models/` is not put into `models/models/`)."""
    moved = []
    for path in outputs:
        relative = os.path.relpath(path, qc_folder).replace(os.sep, "/")
        if relative.lower().startswith("models/"):
            relative = relative[len("models/") :]
        target = os.path.join(game_folder, "models", *relative.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.move(path, target)
        moved.append(target)
    return moved


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            return stream.read()
    except OSError as error:
        raise FormatError(f"cannot read the QC: {error.strerror or error}", path=path) from None


# ------------------------------------------------------------------------------------------------ the log

_SOURCE_LOCATED = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\):\s*-?\s*(?P<text>.*)$")
_LABELLED = re.compile(r"^\s*(?P<kind>ERROR|WARNING)\s*:\s*(?P<text>.*)$", re.IGNORECASE)
_BANNER = re.compile(r"^\s*\*{3,}\s*ERROR\b.*\*{3,}\s*$", re.IGNORECASE)  # GoldSrc: `*** ERROR ***` above it
_GRABBING = re.compile(r"^grabbing (?P<file>.+)$")
_WRITING = re.compile(r"^writing (?P<file>.+):\s*$")
_LINE_NUMBER = re.compile(r"\bline (?P<line>\d+)\b", re.IGNORECASE)
_SMD_LINE = re.compile(r"^Error\((?P<line>\d+)\)", re.IGNORECASE)
_COMMAND = re.compile(r"\$\w+")
_NAMED = re.compile(r"""'([^']+)'|"([^"]+)"|(\S+\.(?:smd|vta|qci?|dmx|bmp))""", re.IGNORECASE)
_ABORTED = "Aborted Processing on"  # (Source's line after each error: the error says why)
_SMD_READING = ("error(", "error on line", "bogus bone index", "unexpected eof", "bad version",
                "unknown studio command", "could not open file")  # fmt: skip


def parse_log(log: str, qc_path: str, qc_text: str) -> list[CompileMessage]:
    """The errors and warnings of a studiomdl log, each located in the QC where the log or its words allow."""
    finder = QcLines(qc_path, qc_text)
    messages: list[CompileMessage] = []
    reading: str | None = None  # the SMD studiomdl said it was grabbing last
    lines = log.splitlines()
    for row, line in enumerate(lines):
        if (grabbing := _GRABBING.match(line.strip())) is not None:
            reading = grabbing.group("file")
            continue
        if _BANNER.match(line):
            text = next((after.strip() for after in lines[row + 1 :] if after.strip()), "")
            if text and not _LABELLED.match(text):
                messages.append(finder.locate(CompileMessage("error", text), reading))
            continue
        labelled = _LABELLED.match(line)
        if labelled is None or _ABORTED in line:
            continue
        kind = "error" if labelled.group("kind").upper() == "ERROR" else "warning"
        messages.append(finder.locate(_with_source_location(kind, labelled.group("text").strip()), reading))
    return messages


def _with_source_location(kind: str, text: str) -> CompileMessage:
    located = _SOURCE_LOCATED.match(text)
    if located is None:
        return CompileMessage(kind, text)
    return CompileMessage(kind, located.group("text").strip(), located.group("file"), int(located.group("line")))


def outputs_in_log(log: str) -> list[str]:
    """The files studiomdl says it writes (`writing x.mdl:`), as it names them."""
    return [match.group("file").strip() for line in log.splitlines()
            if (match := _WRITING.match(line.strip())) is not None]  # fmt: skip


def modelname_of(qc_text: str) -> str | None:
    words = _words(qc_text, "")
    for at, (word, _, _) in enumerate(words[:-1]):
        if word.lower() == "$modelname":
            return words[at + 1][0].replace("\\", "/")
    return None


def _words(qc_text: str, path: str) -> list[tuple[str, bool, int]]:
    """The QC's words: (text, quoted, line)."""
    try:
        return [(token.text, token.quoted, token.line) for token in tokenize(qc_text, path)]
    except FormatError:  # (studiomdl says what is wrong with it)
        return []


class QcLines:
    """Where in the QC a message belongs: its commands and the words on each line."""

    def __init__(self, qc_path: str, qc_text: str) -> None:
        self.path = qc_path
        self.commands: list[tuple[str, int]] = []  # ($command lowercased, line)
        self.words: list[tuple[str, int]] = []  # (every word lowercased, its `\` as `/`, line)
        for text, quoted, line in _words(qc_text, qc_path):
            word = text.lower().replace("\\", "/")
            self.words.append((word, line))
            if word.startswith("$") and not quoted:
                self.commands.append((word, line))

    def locate(self, message: CompileMessage, reading: str | None = None) -> CompileMessage:
        if message.file is not None:  # (Source named it)
            if os.path.basename(message.file.replace("\\", "/")).lower() == os.path.basename(self.path).lower():
                message.file = self.path
            return message
        if (numbered := _LINE_NUMBER.search(message.text)) is not None and "incomplete" in message.text.lower():
            message.file, message.line = self.path, int(numbered.group("line"))
            return message
        line = self.command_line(message.text)
        if line is None:
            line = self.file_line(message.text)
        if line is None and reading is not None and message.text.lower().startswith(_SMD_READING):
            line = self.line_naming(reading)
            if (numbered := _SMD_LINE.match(message.text)) is not None:  # ("Error(12) : ...": the SMD's line)
                rest = message.text[numbered.end() :].lstrip(" :")
                message.text = f"{os.path.basename(reading)}, line {numbered.group('line')}: {rest}"
        if line is not None:
            message.file, message.line = self.path, line
        return message

    def command_line(self, text: str) -> int | None:
        for command in _COMMAND.findall(text):
            lines = [line for word, line in self.commands if word == command.lower()]
            if lines:  # ("Two $cd in one model": the second)
                return lines[1] if text.lower().startswith("two ") and len(lines) > 1 else lines[0]
        return None

    def file_line(self, text: str) -> int | None:
        for match in _NAMED.finditer(text):
            named = next(group for group in match.groups() if group)
            if (line := self.line_naming(named)) is not None:
                return line
        return None

    def line_naming(self, named: str) -> int | None:
        """The first line holding a word equal to `named`, its folder (`./`) and `.smd` aside."""
        wanted = _bare(named)
        if not wanted:
            return None
        for word, line in self.words:
            if _bare(word) == wanted:
                return line
        return None


def _bare(name: str) -> str:
    name = name.lower().replace("\\", "/").strip()
    name = name.removeprefix("./")
    return name[:-4] if name.endswith(".smd") else name
