"""The QC writer: what it writes, the QC reader reads back (meshes, their VTA's shapes, bodygroups, sequences with
rate and loop, the collision model), in Source and GoldSrc flavours."""

from __future__ import annotations

from pathlib import Path

import pytest

from formats.smd import load_qc
from formats.smd.qc_writer import QcAttachment, QcBody, QcBodygroup, QcModel, QcSequence, qc_text


def model() -> QcModel:
    return QcModel(
        "props/crate.mdl", ["models/props/"], "wood", "Y",
        bodies=[QcBody("body", "body.smd"), QcBody("lid", "lid.smd", "lid.vta", ["open", "half open"])],
        bodygroups=[QcBodygroup("labels", ["label_a.smd", "label_b.smd"])],
        sequences=[QcSequence("idle", "body.smd", 30.0, False), QcSequence("shake", "crate_shake.smd", 12.5, True)],
        attachments=[QcAttachment("top", "root", (0.0, 0.0, 12.25))],
        collision="crate_phys.smd",
    )  # fmt: skip


@pytest.mark.parametrize("flavour", ["source", "goldsrc"])
def test_what_the_writer_writes_the_reader_reads_back(flavour: str, tmp_path: Path) -> None:
    for name in ("body.smd", "lid.smd", "lid.vta", "label_a.smd", "label_b.smd", "crate_shake.smd", "crate_phys.smd"):
        (tmp_path / name).write_text("version 1\n")
    text = qc_text(model(), flavour)  # type: ignore[arg-type]
    (tmp_path / "crate.qc").write_text(text)
    qc = load_qc(tmp_path / "crate.qc")
    assert not qc.warnings
    meshes = [(Path(m.path).name, m.command, m.bodygroup) for m in qc.meshes]
    expected = [("body.smd", "$body", ""), ("lid.smd", "$model" if flavour == "source" else "$body", ""),
                ("label_a.smd", "$bodygroup", "labels"), ("label_b.smd", "$bodygroup", "labels")]  # fmt: skip
    if flavour == "source":
        expected.append(("crate_phys.smd", "$collisionmodel", ""))
        assert [(Path(f.path).name, f.names) for f in qc.meshes[1].flex_files] == [("lid.vta", {1: "open",
                                                                                                 2: "half open"})]
        assert '$attachment "top" "root" 0 0 12.25' in text and '$surfaceprop "wood"' in text
        assert qc.up_axis == "Y"
    else:
        assert '$attachment 0 "root" 0 0 12.25' in text and "$surfaceprop" not in text and qc.up_axis is None
    assert meshes == expected
    names = {Path(path).name: name for path, name in qc.sequence_names.items()}
    assert names == {"body.smd": "idle", "crate_shake.smd": "shake"}
    assert {Path(p).name: rate for p, rate in qc.frame_rates.items()} == {"body.smd": 30.0, "crate_shake.smd": 12.5}
    assert {Path(p).name: loop for p, loop in qc.loops.items()} == {"body.smd": False, "crate_shake.smd": True}


def test_names_with_quotes_and_backslashes_are_written_readably() -> None:
    text = qc_text(QcModel('a"b\\c.mdl', bodies=[QcBody("x", "sub\\x.smd")]))
    assert "$modelname \"a'b/c.mdl\"" in text and '$body "x" "sub/x.smd"' in text


@pytest.mark.parametrize("flavour", ["source", "goldsrc"])
def test_blank_choices_activities_rotations_and_texture_folder_are_read_back(flavour: str, tmp_path: Path) -> None:
    for name in ("body.smd", "cell.smd", "hat.smd", "walk.smd"):
        (tmp_path / name).write_text("version 1\n")
    qc_model = QcModel(
        "gman.mdl", bodies=[QcBody("body", "body.smd")], cd_texture="../textures",
        bodygroups=[QcBodygroup("items", [None, "cell.smd", None, "hat.smd"])],
        sequences=[QcSequence("walk", "walk.smd", 30.0, True, "ACT_WALK", 2.0)],
        attachments=[QcAttachment("muzzle", "root", (1.0, 2.0, 3.0), (-90.0, 45.5, 10.0))],
    )  # fmt: skip
    text = qc_text(qc_model, flavour)  # type: ignore[arg-type]
    (tmp_path / "m.qc").write_text(text)
    qc = load_qc(tmp_path / "m.qc")
    assert not qc.warnings
    assert qc.bodygroup_blanks == {"items": [0, 2]}
    assert [Path(m.path).name for m in qc.meshes if m.bodygroup == "items"] == ["cell.smd", "hat.smd"]
    assert qc.activities == {"walk": ("ACT_WALK", 2.0)}
    assert qc.loops[next(p for p in qc.animations)] is True
    rotation = (0.0, 0.0, 0.0) if flavour == "goldsrc" else (-90.0, 45.5, 10.0)  # (GoldSrc has no rotate)
    assert qc.attachments[0].rotation == rotation
    assert (qc.cd_texture == "../textures") == (flavour == "goldsrc")
