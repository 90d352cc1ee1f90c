"""The options of a QC `$sequence` and `$animation`, read by studiomdl's grammar (GoldSrc's and Source's at once:
their keywords do not clash), so that only what studiomdl reads as a file is looked up as one.

GoldSrc reads every word that is not an option as an SMD; Source reads it as the name of an earlier `$animation`,
else as a file. Options take a fixed number of words (`fps 30`, `blend "move_x" -1 1`, `activity ACT_IDLE 1`),
some a variable one (`event 5004 1 "sound.wav"`: the options word only on the line of the frame; `ikrule`,
`align`, `blendlayer`, `keyvalues { ... }`). Event options, sound and sound-script names, attachments, pose
parameters, bones, weight lists and activities are names, never files. GoldSrc matches some options by their first
letters (`looping`, `frames`, `transition`...); so does this, for words not in quotes (a quoted `"blend_a"` is a
file, as QCs quote file names), after every exact word of both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar


class Word(Protocol):
    text: str
    quoted: bool
    path: str
    line: int


W = TypeVar("W", bound=Word)


# option -> the words it takes (numbers and names), Source's and GoldSrc's
_FIXED = {
    # sequence options
    "activity": 2, "activitymodifier": 1, "actmod": 1, "snap": 0, "delta": 0, "worldspace": 0, "post": 0,
    "predelta": 0, "autoplay": 0, "realtime": 0, "hidden": 0, "blendwidth": 1, "blend": 3, "calcblend": 3,
    "blendref": 1, "blendcomp": 1, "blendcenter": 1, "node": 1, "transition": 2, "rtransition": 2, "exitphase": 1,
    "fadein": 1, "fadeout": 1, "posecycle": 1, "addlayer": 1, "iklock": 3, "animtag": 2, "worldrelative": 0,
    "rootdriver": 1, "deform": 0, "pivot": 3, "fps": 1, "origin": 3, "rotate": 1, "scale": 1,
    # animation options (Source: also of a sequence, after its first animation)
    "if": 1, "angles": 3, "motionrollback": 1, "loop": 0, "startloop": 1, "percentstartloop": 1, "noforceloop": 0,
    "fudgeloop": 0, "frame": 2, "framestart": 1, "blockname": 1, "noautoik": 0, "autoik": 0, "noanimblock": 0,
    "noanimblockstall": 0, "nostallframes": 0, "cmdlist": 1,
    # order-dependent commands ($cmdlist's too)
    "fixuploop": 2, "weightlist": 1, "subtract": 2, "presubtract": 2, "alignto": 1, "match": 1,
    "worldspaceblend": 1, "alignboneto": 2, "matchblend": 5, "worldspaceblendloop": 2, "rotateto": 1,
    "derivative": 1, "compress": 1, "numframes": 1, "noanimation": 0, "lineardelta": 0, "splinedelta": 0,
    "counterrotate": 1, "counterrotateto": 4, "noanim_keepduration": 0, "reverse": 0, "appendanim": 1,
}  # fmt: skip
# GoldSrc's options matched by their first letters (after every exact word above)
_PREFIXES = (("loop", 0), ("frame", 2), ("blend", 3), ("node", 1), ("tran", 2), ("rtra", 2), ("weight", 1),
             ("snap", 0), ("start", 1))  # fmt: skip
_MOTION_TYPES = frozenset(("x", "y", "z", "xr", "yr", "zr", "lx", "ly", "lz", "lxr", "lyr", "lzr", "lm", "lq", "ax",
                           "ay", "az", "axr", "ayr", "azr"))  # fmt: skip
_IK_TYPES = {"touch": 1, "footstep": 0, "attachment": 1, "release": 0, "unlatch": 0}
_IK_OPTIONS = {"height": 1, "target": 1, "range": 4, "floor": 1, "pad": 1, "radius": 1, "contact": 1,
               "usesequence": 0, "usesource": 0, "fakeorigin": 3, "fakerotate": 3, "bone": 1}  # fmt: skip
_LAYER_FLAGS = {"xfade": 0, "spline": 0, "noblend": 0, "local": 0, "poseparameter": 1}


@dataclass
class SequenceParts(Generic[W]):
    """What the words after a sequence's name hold: the words that are files or earlier `$animation`s (in
    order), and its frame rate and loop flag when it gives them."""

    references: list[W] = field(default_factory=list)
    fps: float | None = None
    loop: bool = False


def sequence_parts(words: Sequence[W]) -> SequenceParts[W]:
    """Read the words of a `$sequence` after its name (braces included)."""
    parts: SequenceParts[W] = SequenceParts()
    at = 0
    while at < len(words):
        word = words[at]
        if not word.quoted and word.text in ("{", "}"):
            at += 1
            continue
        at = _option(words, at, parts)
    return parts


def animation_options(words: Sequence[W]) -> SequenceParts[W]:
    """Read the words of an `$animation` after its name and its one file (options only)."""
    parts = sequence_parts(words)
    parts.references = []  # (studiomdl refuses anything else)
    return parts


def _option(words: Sequence[W], at: int, parts: SequenceParts[W]) -> int:
    """Read the option (or reference) at `at`; return the index after it."""
    name = words[at].text.lower()
    if name == "event":
        return _event(words, at)
    if name in ("ikrule", "ikfixup"):
        return _ikrule(words, at + 1)
    if name == "keyvalues":
        return block_end(words, at + 1)
    if name in ("align", "alignbone", "walkframe", "walkalignto", "walkalign"):
        return _motion_command(words, at + 1, name)
    if name == "blendlayer":
        return _flags(words, _after(words, at + 1, 5), _LAYER_FLAGS, words[at].line)
    if name == "localhierarchy":
        end = _after(words, at + 1, 2)
        return _after(words, end + 1, 4) if _is(words, end, "range") else end
    if name == "forceboneposrot":
        return _flags(words, _after(words, at + 1, 1), {"pos": 3, "rot": 3}, words[at].line)
    if name == "fps" and at + 1 < len(words):
        parts.fps = _positive_number(words[at + 1].text, parts.fps)
    if name in _FIXED:
        parts.loop |= name == "loop"
        return _after(words, at + 1, _FIXED[name])
    if name.startswith("act_"):  # an activity and its weight
        return _after(words, at + 1, 1)
    if name in _MOTION_TYPES:
        return at + 1
    for prefix, count in _PREFIXES if not words[at].quoted else ():  # (a quoted word is a file name: blend_a)
        if name.startswith(prefix):
            parts.loop |= prefix == "loop"
            return _after(words, at + 1, count)
    if name == "animation" and at + 1 < len(words):  # GoldSrc: `animation <smd>`
        at += 1
    parts.references.append(words[at])
    return at + 1


def _event(words: Sequence[Word], at: int) -> int:
    """`event <id> <frame> [<options>]`: the options word only on the frame's line, and a word starting with `}`
    is the end of the block (as studiomdl reads it: one word, a sound or sound-script name, never a file)."""
    end = _after(words, at + 1, 2)
    frame = words[end - 1] if end - 1 > at else words[at]
    if end < len(words) and same_line(words[end], frame) and not words[end].text.startswith("}"):
        return end + 1
    return end


def _ikrule(words: Sequence[Word], at: int) -> int:
    """`ikrule <chain> <type> [type's word] [options]`: Source's inverse kinematics; no word of it is a file."""
    at = _after(words, at, 1)
    if at < len(words) and words[at].text.lower() in _IK_TYPES:
        at = _after(words, at + 1, _IK_TYPES[words[at].text.lower()])
    while at < len(words) and words[at].text.lower() in _IK_OPTIONS:
        at = _after(words, at + 1, _IK_OPTIONS[words[at].text.lower()])
    return at


def _motion_command(words: Sequence[Word], at: int, name: str) -> int:
    """`align anim <motion types> src dest`, `alignbone bone anim <types> src dest`, `walkframe frame [types]`,
    `walkalignto frame anim [types]`, `walkalign frame anim <types> ref src`."""
    before, after = {"align": (1, 2), "alignbone": (2, 2), "walkframe": (1, 0), "walkalignto": (2, 0),
                     "walkalign": (2, 2)}[name]  # fmt: skip
    at = _after(words, at, before)
    while at < len(words) and not words[at].quoted and words[at].text.lower() in _MOTION_TYPES:
        at += 1
    return _after(words, at, after)


def _flags(words: Sequence[Word], at: int, flags: dict[str, int], line: int) -> int:
    """Flag words on the command's line after its fixed words, each with its own words."""
    while at < len(words) and words[at].line == line and words[at].text.lower() in flags:
        at = _after(words, at + 1, flags[words[at].text.lower()])
    return at


def _after(words: Sequence[Word], at: int, count: int) -> int:
    """The index after `count` argument words from `at`, stopping at an unquoted brace (a block's edge)."""
    for _ in range(count):
        if at >= len(words) or (not words[at].quoted and words[at].text in ("{", "}")):
            break
        at += 1
    return at


def block_end(words: Sequence[Word], at: int) -> int:
    """After the `{ ... }` at `at` (nested blocks included), or `at` when no block starts there."""
    if at >= len(words) or words[at].quoted or words[at].text != "{":
        return at
    depth = 0
    for index in range(at, len(words)):
        if not words[index].quoted and words[index].text in ("{", "}"):
            depth += 1 if words[index].text == "{" else -1
            if depth == 0:
                return index + 1
    return len(words)


def _is(words: Sequence[Word], at: int, text: str) -> bool:
    return at < len(words) and words[at].text.lower() == text


def same_line(word: Word, other: Word) -> bool:
    return word.path == other.path and word.line == other.line


def _positive_number(text: str, default: float | None) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return default
    return value if value > 0 and value != float("inf") else default
