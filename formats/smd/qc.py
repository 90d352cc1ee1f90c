"""Reading a QC (studiomdl's compile script) for what an importer needs: the reference SMDs, the VTAs of each model
with their shape names (QC `flex` / `flexpair ... frame N`), the animation SMDs and `$upaxis`.

Followed: `//`, `;`, `#` and `/* */` comments, quoted tokens, `{ }` blocks, `$include` (relative to the including
file, then to the root QC; an include inside a block counts), `$pushd` / `$popd` / `$cd` (where later files are
looked up), `$definevariable` with `$name$` substitution, `$definemacro` (a body of lines holding `\\`, as
studiomdl reads it, its `$param$` words replaced by a use's arguments). File names are matched without regard
to case and with `\\` read as `/`, so QCs written on Windows load on Linux and macOS (two defects of Blender
Source Tools, specs/smd.md D.8). `$cdmaterials` and `$cdtexture` are kept for the texture search. Other commands
are skipped up to the next `$` command; LOD meshes are left out with a note. FTE's iqmtool/vvmtool scripts, also
named .qc (`scene <file> fps 30` lines, no `$`), are read for the SMDs they name.
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass, field

from ..errors import FormatError, read_file_bytes
from .qc_sequence import animation_options, block_end, same_line, sequence_parts

_TOKEN = re.compile(r'"([^"]*)"|"|(/\*)|((?://|;|#)[^\n]*)|([{}])|([^\s{}"]+)')
_VARIABLE = re.compile(r"\$(\w+)\$")
_COMMAND = re.compile(r"\$\w+")
MAX_INCLUDE_DEPTH = 64  # files open at once; real QCs nest two or three deep
MAX_INCLUDES = 10_000  # $include commands followed in all
MAX_EXPANDED_TOKENS = 1_000_000  # words after includes are spliced in (a large real QC has a few thousand)
MAX_PUSHD_DEPTH = 64  # $pushd folders open at once (real QCs: one or two)
MAX_FOLDER_CHARACTERS = 4096  # the path a $pushd / $cd makes
MAX_QC_FILE_BYTES = 16 << 20
MAX_QC_TOTAL_BYTES = 64 << 20
MAX_MATERIAL_FOLDERS = 32  # $cdmaterials folders a Source model holds


@dataclass
class QcFlexFile:
    """A VTA of a `$model`, and the shape names its `flex` / `flexpair` lines give to time numbers."""

    path: str
    names: dict[int, str] = field(default_factory=dict)


COLLISION_COMMANDS = ("$collisionmodel", "$collisionjoints")


@dataclass
class QcMesh:
    """A reference SMD (`$body`, `$model`, `$bodygroup studio`, `$collisionmodel`...) and its VTAs."""

    path: str
    command: str
    flex_files: list[QcFlexFile] = field(default_factory=list)
    bodygroup: str = ""  # the `$bodygroup` naming it among its alternatives


@dataclass
class QcAttachment:
    """`$attachment NAME BONE X Y Z [rotate PITCH YAW ROLL] [absolute] ...`: a point on a bone (GoldSrc names it by
    an index)."""

    name: str
    bone: str
    offset: tuple[float, float, float]  # in the bone's frame; model space when `absolute`
    rotation: tuple[float, float, float] = (0.0, 0.0, 0.0)  # pitch, yaw, roll in degrees (Source's `rotate`)
    absolute: bool = False


@dataclass
class QcDocument:
    up_axis: str | None = None  # "X", "Y" or "Z" from `$upaxis`
    meshes: list[QcMesh] = field(default_factory=list)
    animations: list[str] = field(default_factory=list)  # SMD paths, first use order, each once
    sequence_names: dict[str, str] = field(default_factory=dict)  # SMD path -> the $sequence naming it alone
    frame_rates: dict[str, float] = field(default_factory=dict)  # SMD path -> its sequence's `fps` (studiomdl: 30)
    loops: dict[str, bool] = field(default_factory=dict)  # SMD path -> its sequence's `loop` option
    # Later sequences of one SMD each that an earlier sequence already named: (path, name, fps, loop)
    repeated_sequences: list[tuple[str, str, float, bool]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what is left out as it should be (LOD meshes)
    included: list[str] = field(default_factory=list)  # the $include files read, in reading order (repeats too)
    material_folders: list[str] = field(default_factory=list)  # $cdmaterials (Source), in order, each once
    texture_folders: list[str] = field(default_factory=list)  # $cdtexture (GoldSrc), absolute, in order
    attachments: list[QcAttachment] = field(default_factory=list)
    # What a Write QC export writes again: the engine's names, blank bodygroup choices, sequences' activities
    model_name: str | None = None  # `$modelname`, as written
    surface_prop: str | None = None  # Source `$surfaceprop`
    cd_texture: str | None = None  # GoldSrc's first `$cdtexture`, as written (relative to the QC's folder)
    bodygroup_blanks: dict[str, list[int]] = field(default_factory=dict)  # group -> places of its `blank` choices
    activities: dict[str, tuple[str, float]] = field(default_factory=dict)  # sequence name -> activity, weight
    left_out: list[str] = field(default_factory=list)  # what the model has that a written QC leaves out, each once


# Commands a Write QC export writes (or that only arrange the reading); the others are named in `left_out`
WRITTEN_COMMANDS = frozenset((
    "$modelname", "$cd", "$cdmaterials", "$cdtexture", "$surfaceprop", "$upaxis", "$body", "$model", "$bodygroup",
    "$sequence", "$animation", "$attachment", "$collisionmodel", "$texrendermode", "$scale", "$pushd", "$popd",
    "$continue", "$lod", "$origin"))  # fmt: skip
# Sequence options a written QC leaves out, by the words that give them
_LEFT_OUT_OPTIONS = (("events", ("event",)), ("motion extraction (LX, LY...)", ("lx", "ly", "lz", "lxr", "lyr", "lzr",
                     "lm", "lq")), ("blends and layers", ("blend", "blendlayer", "addlayer", "blendwidth")),
                     ("IK rules", ("ikrule", "iklock")))  # fmt: skip


@dataclass(slots=True)
class _Token:
    text: str
    quoted: bool
    path: str
    line: int
    column: int


def tokenize(text: str, path: str, limit: int = MAX_EXPANDED_TOKENS) -> list[_Token]:
    """QC tokens with their positions; FormatError for an unterminated quote or block comment, and once there are
    more than `limit` (before the work of making the rest)."""
    tokens: list[_Token] = []
    line_starts = [0] + [match.end() for match in re.finditer("\n", text)]
    position = 0
    while True:
        match = _TOKEN.search(text, position)
        if match is None:
            return tokens
        line = _line_of(line_starts, match.start())
        column = match.start() - line_starts[line - 1] + 1
        if match.group(0) == '"':
            raise FormatError("unterminated quote", path=path, line=line, column=column)
        if match.group(2):  # a block comment
            end = text.find("*/", match.end())
            if end < 0:
                raise FormatError("unterminated /* comment", path=path, line=line, column=column)
            position = end + 2
            continue
        position = match.end()
        if match.group(3):
            continue
        quoted = match.group(1) is not None
        token = match.group(1) if quoted else (match.group(4) or match.group(5))
        tokens.append(_Token(token, quoted, path, line, column))
        if len(tokens) > limit:
            raise FormatError(f"more than {limit:,} words: more than a QC and its includes may hold", path=path,
                              line=line, column=column)  # fmt: skip


def _macro_definition(raw: list[_Token], at: int, marks: dict[int, int]) -> tuple[int, list[str], list[_Token]]:
    """`$definemacro name param... \\` then the body, as Source's studiomdl (scriplib's DefineMacro) reads it: a line
    goes on to the next when it holds `\\` anywhere (in a `//` comment too), and what follows the `\\` is
    blanked; the first line without one is the body's last. `marks`: the file's line -> column of its first
    `\\`. Returns where the definition ends, the parameters (lower case) and the body's words."""
    head = raw[at]
    last_line = head.line
    while last_line in marks:
        last_line += 1
    end = at + 1
    params: list[str] = []
    body: list[_Token] = []
    while end < len(raw) and raw[end].path == head.path and head.line <= raw[end].line <= last_line:
        token = raw[end]
        if token.column < marks.get(token.line, token.column + 1):  # (before the line's `\\`)
            if token.line == head.line:
                params.append(token.text.lower())
            else:
                body.append(token)
        end += 1
    return end, params, body


def continuation_marks(text: str) -> dict[int, int]:
    """Line -> column (both from 1) of the line's first `\\`, where a macro's definition goes on."""
    marks: dict[int, int] = {}
    line_starts = [0] + [match.end() for match in re.finditer("\n", text)]
    for match in re.finditer(r"\\\\", text):
        line = _line_of(line_starts, match.start())
        marks.setdefault(line, match.start() - line_starts[line - 1] + 1)
    return marks


def _with_arguments(token: _Token, values: dict[str, str]) -> _Token:
    """A macro body's word with `$param$` replaced by its argument."""
    if "$" not in token.text:
        return token
    text = _VARIABLE.sub(lambda match: values.get(match.group(1).lower(), match.group(0)), token.text)
    return _Token(text, token.quoted, token.path, token.line, token.column)


def _line_of(line_starts: list[int], offset: int) -> int:
    return bisect.bisect_right(line_starts, offset)


class _Reader:
    """Reads a QC: its tokens with includes spliced in and variables substituted (as studiomdl's tokenizer does,
    so an `$include` inside a block counts), then its commands."""

    def __init__(self, root: str, document: QcDocument) -> None:
        self.root = os.path.dirname(os.path.abspath(root))
        self.document = document
        self.folders = [""]  # `$pushd` stack, relative to the root QC's folder; the last is where files are found
        self.variables: dict[str, str] = {}  # lower-case name -> value; the first definition holds
        self.macros: dict[str, tuple[list[str], list[_Token]]] = {}  # $definemacro: name -> (parameters, body)
        self.raw_cache: dict[str, list[_Token]] = {}  # normcase(path) -> the file's tokens
        self.marks: dict[str, dict[int, int]] = {}  # normcase(path) -> its lines' `\\` (continuation_marks)
        self.bytes_read = 0
        self.words_read = 0  # words of every file read, each once (a bound on what they can expand to)
        self.animation_names: set[str] = set()
        self.animation_files: dict[str, list[tuple[str, float, bool]]] = {}  # $animation (lower case) -> SMD, fps, loop
        self.too_many_folders = False  # more $cdmaterials folders than studiomdl keeps (said once)

    # ---- files

    def find(self, name: str, *, extensions: tuple[str, ...] = (), beside: str | None = None) -> str | None:
        """An existing file for a QC file name (a backslash read as `/`, case ignored, an extension added when
        missing), looked up in the `$pushd` folder (or `beside` a file's folder), then in the root QC's folder."""
        name = name.replace("\\", "/")
        candidates = [name] if os.path.splitext(name)[1] else [name + extension for extension in extensions]
        places = [(beside, "")] if beside is not None else [(self.root, self.folders[-1])]
        for folder, prefix in [*places, (self.root, "")]:
            for candidate in candidates:
                found = _find_ignoring_case(folder, f"{prefix}/{candidate}" if prefix else candidate)
                if found is not None:
                    return found
        return None

    def tokens_of(self, path: str) -> list[_Token]:
        """The file's tokens, each `$include` replaced by the included file's tokens and each `$definevariable`
        taken out (it applies to the tokens after it). Iterative, and bounded: a hostile QC (an include loop,
        a file included twice at each of many levels, a huge file) gets a FormatError with the include chain."""
        tokens: list[_Token] = []
        includes = 0
        # one entry per open file: its path, its raw tokens, the next one to read, the $include that opened it
        stack: list[tuple[str, list[_Token], int, _Token | None]] = [(path, self.raw_tokens(path, None, []), 0, None)]
        while stack:
            current, raw, at, opened_by = stack[-1]
            if at >= len(raw):
                stack.pop()
                continue
            token = self.substitute(raw[at])
            word = token.text.lower() if not token.quoted else ""
            if word == "$include" and at + 1 < len(raw):
                stack[-1] = (current, raw, at + 2, opened_by)
                name = self.substitute(raw[at + 1])
                chain = [*self.opened_by(stack), name]
                target = self.included(name)
                if target is None:  # (studiomdl stops; an import goes on with what it can find, and says so)
                    self.document.warnings.append(f"{_where(name)}: $include file {name.text!r} not found; "
                                                  "what it would have added is missing")  # fmt: skip
                    continue
                includes += 1
                if os.path.normcase(target) in (os.path.normcase(entry[0]) for entry in stack):
                    raise _include_error("$include loop", chain)
                if len(stack) > MAX_INCLUDE_DEPTH:
                    raise _include_error(f"$include nested more than {MAX_INCLUDE_DEPTH} files deep", chain)
                if includes > MAX_INCLUDES:
                    raise _include_error(f"more than {MAX_INCLUDES:,} $include files in all", chain)
                stack.append((target, self.raw_tokens(target, name, chain), 0, name))
                self.document.included.append(target)
            elif word == "$definemacro" and at + 1 < len(raw):
                marks = self.marks.get(os.path.normcase(raw[at + 1].path), {})
                end, params, body = _macro_definition(raw, at + 1, marks)
                self.macros.setdefault(raw[at + 1].text.lower(), (params, body))
                stack[-1] = (current, raw, end, opened_by)
            elif word[1:] in self.macros and word.startswith("$"):  # a macro's use: its body, with its arguments
                params, body = self.macros[word[1:]]
                arguments = [t.text for t in raw[at + 1 : at + 1 + len(params)] if same_line(t, token)]
                stack[-1] = (current, raw, at + 1 + len(arguments), opened_by)
                if len(stack) > MAX_INCLUDE_DEPTH:
                    raise _include_error(f"macros and $include nested more than {MAX_INCLUDE_DEPTH} deep",
                                         self.opened_by(stack), path)  # fmt: skip
                values = dict(zip(params, arguments, strict=False))
                stack.append((current, [_with_arguments(t, values) for t in body], 0, opened_by))
            elif word == "$definevariable" and at + 2 < len(raw):
                self.variables.setdefault(raw[at + 1].text.lower(), self.substitute(raw[at + 2]).text)
                stack[-1] = (current, raw, at + 3, opened_by)
            else:
                tokens.append(token)
                stack[-1] = (current, raw, at + 1, opened_by)
                if len(tokens) > MAX_EXPANDED_TOKENS:
                    raise _include_error(
                        f"the QC and its includes expand to more than {MAX_EXPANDED_TOKENS:,} words",
                        self.opened_by(stack),
                        path,
                    )
        return tokens

    @staticmethod
    def opened_by(stack: list[tuple[str, list[_Token], int, _Token | None]]) -> list[_Token]:
        return [entry[3] for entry in stack if entry[3] is not None]

    def raw_tokens(self, path: str, opened_by: _Token | None, chain: list[_Token]) -> list[_Token]:
        """A file's tokens before substitution, read once however often it is included; its size is checked
        before it is read."""
        key = os.path.normcase(path)
        if key in self.raw_cache:
            return self.raw_cache[key]
        size = os.path.getsize(path)
        self.bytes_read += size
        if size > MAX_QC_FILE_BYTES or self.bytes_read > MAX_QC_TOTAL_BYTES:
            alone = size > MAX_QC_FILE_BYTES
            what = f"{size:,} bytes" if alone else f"{self.bytes_read:,} bytes with the files before it"
            limit = MAX_QC_FILE_BYTES if alone else MAX_QC_TOTAL_BYTES
            message = f"{os.path.basename(path)} is {what}, more than the {limit:,} a QC is allowed"
            if opened_by is None:
                raise FormatError(message, path=path)
            raise _include_error(message, chain)
        data = read_file_bytes(path)  # (a regular file only: the size above says nothing of a device's)
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = data.decode("cp1252", errors="replace")
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        tokens = tokenize(text, path, MAX_EXPANDED_TOKENS - self.words_read)
        self.words_read += len(tokens)
        self.marks[key] = continuation_marks(text)
        self.raw_cache[key] = tokens
        return self.raw_cache[key]

    def included(self, token: _Token) -> str | None:
        return self.find(token.text, extensions=(".qci", ".qc"), beside=os.path.dirname(token.path))

    def substitute(self, token: _Token) -> _Token:
        if "$" not in token.text[1:]:
            return token
        text = _VARIABLE.sub(lambda match: self.variables.get(match.group(1).lower(), match.group(0)), token.text)
        return _Token(text, token.quoted, token.path, token.line, token.column)

    # ---- commands

    def walk(self, tokens: list[_Token]) -> None:
        at = 0
        while at < len(tokens):
            token = tokens[at]
            if token.quoted or not _COMMAND.fullmatch(token.text):
                at += 1  # stray text: skipped, as studiomdl would complain only about what it reads
                continue
            at = self.command(token.text.lower(), tokens, at + 1)

    def command(self, name: str, tokens: list[_Token], at: int) -> int:
        """Read command `name` whose arguments start at `at`; return where the next command may start."""
        end = _command_end(tokens, at)
        args = tokens[at:end]
        plain = [token.text for token in args]
        if name == "$pushd" and plain:
            if len(self.folders) > MAX_PUSHD_DEPTH:
                raise _at(tokens[at - 1], f"$pushd nested more than {MAX_PUSHD_DEPTH} folders deep")
            self.folders.append(self.folder(f"{self.folders[-1]}/{plain[0]}", tokens[at - 1]))
        elif name == "$popd" and len(self.folders) > 1:
            self.folders.pop()
        elif name == "$cd" and plain:
            self.folders[-1] = self.folder(plain[0], tokens[at - 1])
        elif name == "$upaxis" and plain and plain[0].upper() in ("X", "Y", "Z"):
            self.document.up_axis = plain[0].upper()
        elif name == "$body" and len(plain) >= 2:
            self.mesh(args[1], name)
        elif name == "$model" and len(plain) >= 2:
            self.model(args)
        elif name == "$bodygroup":
            self.bodygroup(args)
        elif name in ("$collisionmodel", "$collisionjoints") and plain:
            self.mesh(args[0], name)
        elif name in ("$sequence", "$animation") and plain:
            self.animation(name, args)
        elif name == "$cdmaterials":
            self.material_folders(args)
        elif name == "$modelname" and plain:
            self.document.model_name = self.document.model_name or plain[0]
        elif name == "$surfaceprop" and plain:
            self.document.surface_prop = plain[0]
        elif name == "$cdtexture" and plain:  # (GoldSrc: relative to the QC's folder)
            self.document.cd_texture = self.document.cd_texture or plain[0]
            folder = os.path.normpath(os.path.join(self.root, plain[0].replace("\\", "/")))
            if folder not in self.document.texture_folders:
                self.document.texture_folders.append(folder)
        elif name == "$attachment":
            self.attachment(tokens[at - 1], plain)
        elif name == "$lod":  # (lower details of the meshes imported: the model is whole without them)
            self.document.notes.append(f"{_where(tokens[at - 1])}: $lod meshes are not imported")
        if name not in WRITTEN_COMMANDS:
            self.left_out(name)
        return end

    def left_out(self, what: str) -> None:
        if what not in self.document.left_out:
            self.document.left_out.append(what)

    def bodygroup(self, args: list[_Token]) -> None:
        """`$bodygroup NAME { studio "file" ... blank ... }`: its meshes, and the places of its `blank` choices."""
        group = args[0].text if args and args[0].text != "{" else ""
        place = 0
        for index, token in enumerate(args):
            word = token.text.lower() if not token.quoted else ""
            if word == "blank":
                self.document.bodygroup_blanks.setdefault(group, []).append(place)
                place += 1
            elif word == "studio" and index + 1 < len(args):
                place += 1
                mesh = self.mesh(args[index + 1], "$bodygroup")
                if mesh is not None and not mesh.bodygroup:
                    mesh.bodygroup = group
    def attachment(self, command: _Token, plain: list[str]) -> None:
        """An `$attachment`, or a warning where its numbers are not numbers (studiomdl would read them as 0)."""
        words = [word.lower() for word in plain]
        try:
            offset = (float(plain[2]), float(plain[3]), float(plain[4]))
            at = words.index("rotate") if "rotate" in words else -1
            rotation = (float(plain[at + 1]), float(plain[at + 2]), float(plain[at + 3])) if at >= 0 else (0.0,) * 3
        except (IndexError, ValueError):
            shown = " ".join(plain[:5])
            self.document.warnings.append(f"{_where(command)}: $attachment {shown!r} is not NAME BONE X Y Z "
                                          "[rotate P Y R]; left out")  # fmt: skip
            return
        self.document.attachments.append(
            QcAttachment(plain[0], plain[1], offset, rotation, "absolute" in words[5:]))

    def material_folders(self, args: list[_Token]) -> None:
        """`$cdmaterials`: several folders may follow one command, `/` or `\\` between their parts; at most 32."""
        folders = self.document.material_folders
        for token in args:
            folder = "/".join(part for part in token.text.replace("\\", "/").split("/") if part)
            if folder in folders:
                continue
            if len(folders) < MAX_MATERIAL_FOLDERS:
                folders.append(folder)
            elif not self.too_many_folders:
                self.too_many_folders = True
                limit = MAX_MATERIAL_FOLDERS
                self.document.warnings.append(f"{_where(token)}: more than {limit} $cdmaterials folders (Source's "
                                              f"limit); the first {limit} are searched")  # fmt: skip

    @staticmethod
    def folder(text: str, command: _Token) -> str:
        """The folder a `$pushd` or `$cd` names, within the bounds of real QCs (as `$include` is bounded)."""
        if len(text) > MAX_FOLDER_CHARACTERS:
            raise _at(command, f"{command.text} makes a folder path of {len(text):,} characters, more than "
                      f"{MAX_FOLDER_CHARACTERS:,}")  # fmt: skip
        return text.replace("\\", "/").strip("/")

    def iqmtool_script(self, tokens: list[_Token]) -> None:
        """An iqmtool/vvmtool script: each `scene <file> [fps N] [loop] [name N]...` line names an SMD (the first
        the model; SMDs of meshes among the others are meshes too, found when read); the transforms it applies
        (`rotate`, `origin`, `scale`) are not, said in a note."""
        lines: dict[tuple[str, int], list[_Token]] = {}
        for token in tokens:
            lines.setdefault((token.path, token.line), []).append(token)
        for words in lines.values():
            command = words[0].text.lower() if not words[0].quoted else ""
            if command in ("rotate", "origin", "scale"):
                self.document.notes.append(f"{_where(words[0])}: {command} is not applied to the imported model")
            if command != "scene" or len(words) < 2:
                continue
            parts = sequence_parts(words[2:])
            if not self.document.meshes:
                self.mesh(words[1], "scene")
                continue
            found = self.smd(words[1])
            if found is not None and found not in self.document.animations:
                self.document.animations.append(found)
                self.document.frame_rates[found] = parts.fps if parts.fps is not None else DEFAULT_FRAME_RATE
                self.document.loops[found] = parts.loop

    def mesh(self, token: _Token, command: str) -> QcMesh | None:
        found = self.smd(token)
        if found is None:
            return None
        collision = command in COLLISION_COMMANDS  # (a simple prop's $collisionmodel often names its $body's SMD)
        for mesh in self.document.meshes:
            if mesh.path == found and (mesh.command in COLLISION_COMMANDS) == collision:
                return mesh
        mesh = QcMesh(found, command)
        self.document.meshes.append(mesh)
        return mesh

    def smd(self, token: _Token) -> str | None:
        if os.path.splitext(token.text)[1].lower() == ".dmx":
            self.document.warnings.append(f"{_where(token)}: {token.text!r} is DMX, which this importer does not read")
            return None
        found = self.find(token.text, extensions=(".smd",))
        if found is None:
            self.document.warnings.append(f"{_where(token)}: {token.text!r} not found")
        return found

    def model(self, args: list[_Token]) -> None:
        mesh = self.mesh(args[1], "$model")
        at = 2
        while at < len(args):
            if args[at].text.lower() == "flexfile" and not args[at].quoted and at + 1 < len(args):
                vta = self.find(args[at + 1].text, extensions=(".vta",))
                if vta is None:
                    self.document.warnings.append(f"{_where(args[at + 1])}: {args[at + 1].text!r} not found")
                after = block_end(args, at + 2)
                if vta is not None and mesh is not None:
                    mesh.flex_files.append(QcFlexFile(vta, _flex_names(args[at + 2 : after])))
                at = after
            else:
                at += 1

    def animation(self, command: str, args: list[_Token]) -> None:
        """The SMDs of a `$sequence` (a blend names several) or `$animation` (its one file), read by studiomdl's
        grammar: option words are never files; a sequence word naming an earlier `$animation` is not one."""
        if command == "$animation":
            parts = animation_options(args[2:])
            parts.references = args[1:2]
        else:
            parts = sequence_parts(args[1:])
            self.sequence_extras(args)
        files = []
        by_animation: list[tuple[str, float, bool]] = []  # the earlier `$animation`s a sequence names: SMD, fps, loop
        for token in parts.references:
            if command == "$sequence" and token.text.lower() in self.animation_names:
                by_animation += self.animation_files.get(token.text.lower(), [])
                continue
            found = self.smd(token)
            if found is not None:
                files.append(found)
            if found is not None and found not in self.document.animations:
                self.document.animations.append(found)
        rate, loop = parts.fps if parts.fps is not None else DEFAULT_FRAME_RATE, parts.loop
        if command == "$animation":
            self.animation_names.add(args[0].text.lower())
            self.animation_files[args[0].text.lower()] = [(path, rate, loop) for path in files]
        if not files and len(by_animation) == 1:  # a sequence of one $animation: an action of its own, with
            path, animation_rate, animation_loop = by_animation[0]  # the animation's fps and loop unless its own
            own_rate = parts.fps if parts.fps is not None else animation_rate
            self.document.repeated_sequences.append((path, args[0].text, own_rate, loop or animation_loop))
            return
        if len(files) == 1:  # one SMD: the action takes the sequence's name (a blend's keep their files')
            if files[0] in self.document.sequence_names:
                if command == "$sequence":  # (a second sequence of it: an action of its own)
                    self.document.repeated_sequences.append((files[0], args[0].text, rate, loop))
                return
            self.document.sequence_names[files[0]] = args[0].text
        for path in files:
            self.document.frame_rates.setdefault(path, rate)
            self.document.loops.setdefault(path, loop)


    def sequence_extras(self, args: list[_Token]) -> None:
        """A `$sequence`'s activity (`activity ACT_X 1`, or GoldSrc's `ACT_X 1`), and what of it a written QC
        leaves out."""
        words = [token.text.lower() if not token.quoted else "" for token in args]
        for at in range(1, len(args)):
            named = words[at] == "activity" and at + 1 < len(args)
            activity = args[at + 1].text if named else args[at].text if words[at].startswith("act_") else ""
            if activity and args[0].text not in self.document.activities:
                weight_at = at + 2 if named else at + 1
                try:
                    weight = float(args[weight_at].text) if weight_at < len(args) else 1.0
                except ValueError:
                    weight = 1.0
                self.document.activities[args[0].text] = (activity, weight)
        for what, option_words in _LEFT_OUT_OPTIONS:
            if any(word in option_words for word in words[1:]):
                self.left_out(f"sequence {what}")


DEFAULT_FRAME_RATE = 30.0  # studiomdl's, for a sequence that names none


def _flex_names(tokens: list[_Token]) -> dict[int, str]:
    """Time number -> name from `flex "name" ... frame N` and `flexpair "name" <split> ... frame N`."""
    names: dict[int, str] = {}
    at = 0
    while at < len(tokens):
        word = tokens[at].text.lower()
        if word in ("flex", "flexpair") and not tokens[at].quoted and at + 1 < len(tokens):
            name = tokens[at + 1].text
            look = at + 2
            while look + 1 < len(tokens) and tokens[look].text.lower() not in ("flex", "flexpair", "defaultflex"):
                if tokens[look].text.lower() == "frame" and re.fullmatch(r"\d+", tokens[look + 1].text):
                    names.setdefault(int(tokens[look + 1].text), name)
                    break
                look += 1
            at = look
        else:
            at += 1
    return names


def _command_end(tokens: list[_Token], at: int) -> int:
    """Where a command's arguments end: the next `$` word outside braces (the text up to it includes blocks)."""
    depth = 0
    while at < len(tokens):
        token = tokens[at]
        if not token.quoted and token.text == "{":
            depth += 1
        elif not token.quoted and token.text == "}":
            depth = max(depth - 1, 0)
        elif depth == 0 and not token.quoted and _COMMAND.fullmatch(token.text):
            return at
        at += 1
    return at


def _find_ignoring_case(folder: str, relative: str) -> str | None:
    """folder/relative when it exists, else the one path whose parts match it ignoring case."""
    direct = os.path.normpath(os.path.join(folder, relative))
    if os.path.isfile(direct):
        return direct
    current = os.path.normpath(folder) if not os.path.isabs(relative) else os.sep
    for part in [p for p in relative.split("/") if p and p != "."]:
        if part == "..":
            current = os.path.dirname(current)
            continue
        try:
            entries = os.listdir(current)
        except OSError:
            return None
        matches = [entry for entry in entries if entry.lower() == part.lower()]
        if not matches:
            return None
        current = os.path.join(current, matches[0])
    return current if os.path.isfile(current) else None


def _include_error(message: str, chain: list[_Token], path: str | None = None) -> FormatError:
    """A FormatError at the last `$include` of `chain`, naming every include that led there."""
    if not chain:
        return FormatError(message, path=path)
    steps = " > ".join(f"{_where(token)} includes {token.text!r}" for token in chain)
    last = chain[-1]
    return FormatError(f"{message} ({steps})", path=last.path, line=last.line, column=last.column)


def _at(token: _Token, message: str) -> FormatError:
    return FormatError(message, path=token.path, line=token.line, column=token.column)


def _where(token: _Token) -> str:
    return f"{os.path.basename(token.path)} line {token.line}"


def load_qc(path: str | os.PathLike[str]) -> QcDocument:
    """Read a QC (and what it includes). FormatError for unreadable syntax or a hostile include chain; files it names
    that are missing are warned about."""
    document = QcDocument()
    name = os.path.abspath(os.fspath(path))
    reader = _Reader(name, document)
    try:
        tokens = reader.tokens_of(name)
    except OSError as error:
        raise FormatError(f"cannot read: {error.strerror or error}", path=error.filename or name) from None
    unclosed = _unclosed_brace(tokens)
    if unclosed is not None:
        document.warnings.append(f"{_where(unclosed)}: this '{{' is never closed; the rest of the file is inside it")
    if _is_iqmtool_script(tokens):
        reader.iqmtool_script(tokens)
    else:
        reader.walk(tokens)
    if not document.meshes and not document.animations:
        raise FormatError("the QC names no SMD that could be found", path=name)
    return document


_IQMTOOL_COMMANDS = {"output", "scene", "materialprefix", "rotate", "origin", "scale", "event", "geomset",
                     "geomid", "bone", "mesh", "hitbox", "modelflags", "exec", "skin"}  # fmt: skip


def _is_iqmtool_script(tokens: list[_Token]) -> bool:
    """FTE's iqmtool/vvmtool writes its command files as .qc too: `output`, `scene <file> fps 30`..., no `$`."""
    words = [t for t in tokens if not t.quoted]
    return bool(words) and words[0].text.lower() in _IQMTOOL_COMMANDS and not any(
        _COMMAND.fullmatch(t.text) for t in words)  # fmt: skip


def _unclosed_brace(tokens: list[_Token]) -> _Token | None:
    opened: list[_Token] = []
    for token in tokens:
        if not token.quoted and token.text == "{":
            opened.append(token)
        elif not token.quoted and token.text == "}" and opened:
            opened.pop()
    return opened[0] if opened else None
