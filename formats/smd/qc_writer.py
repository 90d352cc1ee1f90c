"""A QC that builds a model from the SMDs an export wrote (studiomdl's grammar, Source or GoldSrc flavour): the
model's name and folders, its meshes ($body, $model with its VTA's shapes, $bodygroup), its sequences with their
rate and loop, its attachments, its collision model, GoldSrc's masked textures. File names are relative to the QC's
folder, written with forward slashes, as studiomdl reads them on every system."""

from __future__ import annotations

from dataclasses import dataclass, field

from .document import Flavour


@dataclass
class QcBody:
    name: str
    smd: str  # relative to the QC
    vta: str | None = None  # its shapes' VTA (Source `$model` ... `flexfile`)
    shapes: list[str] = field(default_factory=list)  # shape names in the VTA's time order (time 1, 2...)


@dataclass
class QcBodygroup:
    name: str
    smds: list[str | None]  # one `studio` each: alternatives, one shown at a time; None: a `blank` choice


@dataclass
class QcSequence:
    name: str
    smd: str
    fps: float
    loop: bool
    activity: str | None = None  # `activity ACT_... weight` (GoldSrc: `ACT_... weight`)
    activity_weight: float = 1.0


@dataclass
class QcAttachment:
    name: str
    bone: str
    offset: tuple[float, float, float]
    rotation: tuple[float, float, float] = (0.0, 0.0, 0.0)  # Source's `rotate PITCH YAW ROLL`, degrees


@dataclass
class QcModel:
    model_name: str  # `$modelname`: "props/crate.mdl" (Source: under <game>/models/), "crate.mdl" (GoldSrc)
    materials: list[str] = field(default_factory=list)  # Source `$cdmaterials` folders (under <game>/materials/)
    surface_prop: str | None = None  # Source `$surfaceprop`
    up_axis: str | None = None  # "Y" or "X": `$upaxis` (Z is studiomdl's default)
    bodies: list[QcBody] = field(default_factory=list)
    bodygroups: list[QcBodygroup] = field(default_factory=list)
    sequences: list[QcSequence] = field(default_factory=list)
    attachments: list[QcAttachment] = field(default_factory=list)
    collision: str | None = None  # the physics SMD (Source `$collisionmodel`)
    masked_textures: list[str] = field(default_factory=list)  # GoldSrc `$texrendermode <texture> masked`
    cd_texture: str = "."  # GoldSrc `$cdtexture`: where its textures are, from the QC's folder


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "/").replace('"', "'") + '"'


def _number(value: float) -> str:
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def _stem(smd: str) -> str:
    """GoldSrc's studiomdl adds `.smd` itself: its $body and $sequence name the file without it."""
    return smd[:-4] if smd.lower().endswith(".smd") else smd


def qc_text(model: QcModel, flavour: Flavour = "source") -> str:
    """The QC, lines ending in LF (studiomdl reads LF and CRLF alike)."""
    goldsrc = flavour == "goldsrc"
    lines = [f"$modelname {_quoted(model.model_name)}"]
    if goldsrc:
        lines += ['$cd "."', f"$cdtexture {_quoted(model.cd_texture)}", "$scale 1.0"]
    else:
        lines += [f"$cdmaterials {_quoted(folder)}" for folder in model.materials]
        if model.surface_prop:
            lines.append(f"$surfaceprop {_quoted(model.surface_prop)}")
    if model.up_axis and model.up_axis != "Z" and not goldsrc:  # (GoldSrc has no $upaxis)
        lines.append(f"$upaxis {model.up_axis}")
    lines.append("")
    for body in model.bodies:
        lines += _body_lines(body, goldsrc)
    for group in model.bodygroups:
        lines.append(f"$bodygroup {_quoted(group.name)}")
        lines.append("{")
        lines += ["\tblank" if smd is None else f"\tstudio {_quoted(_stem(smd) if goldsrc else smd)}"
                  for smd in group.smds]  # fmt: skip
        lines.append("}")
    if goldsrc:  # (after the meshes that name the textures)
        lines += [f"$texrendermode {_quoted(texture)} masked" for texture in model.masked_textures]
    if model.attachments:
        lines.append("")
    for index, attachment in enumerate(model.attachments):
        offset = " ".join(_number(value) for value in attachment.offset)
        label = str(index) if goldsrc else _quoted(attachment.name)
        turned = any(abs(angle) >= 5e-7 for angle in attachment.rotation) and not goldsrc  # (GoldSrc has no rotate)
        rotate = " rotate " + " ".join(_number(angle) for angle in attachment.rotation) if turned else ""
        lines.append(f"$attachment {label} {_quoted(attachment.bone)} {offset}{rotate}")
    if model.sequences:
        lines.append("")
    for sequence in model.sequences:
        smd = _stem(sequence.smd) if goldsrc else sequence.smd
        loop = " loop" if sequence.loop else ""
        activity = ""
        if sequence.activity:
            keyword = "" if goldsrc else "activity "
            name = "".join(sequence.activity.split())  # (a name, unquoted: GoldSrc reads a bare ACT_ word)
            activity = f" {keyword}{name} {_number(sequence.activity_weight)}"
        lines.append(f"$sequence {_quoted(sequence.name)} {_quoted(smd)} fps {_number(sequence.fps)}{loop}{activity}")
    if model.collision and not goldsrc:
        lines += ["", f"$collisionmodel {_quoted(model.collision)}", "{", "\t$concave", "}"]
    return "\n".join(lines) + "\n"


def _body_lines(body: QcBody, goldsrc: bool) -> list[str]:
    if goldsrc or body.vta is None:
        return [f"$body {_quoted(body.name)} {_quoted(_stem(body.smd) if goldsrc else body.smd)}"]
    lines = [f"$model {_quoted(body.name)} {_quoted(body.smd)}", "{", f"\tflexfile {_quoted(body.vta)}", "\t{",
             "\t\tdefaultflex frame 0"]  # fmt: skip
    lines += [f"\t\tflex {_quoted(shape)} frame {time}" for time, shape in enumerate(body.shapes, 1)]
    lines += ["\t}"]
    lines += [f"\tflexcontroller shapes range 0 1 {_quoted(shape)}" for shape in body.shapes]
    lines += [f"\t%{shape} = {shape}" for shape in body.shapes if shape.isidentifier()]
    lines.append("}")
    return lines
