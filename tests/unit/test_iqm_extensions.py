"""IQM extensions (FTE_MESH, FTE_EVENT, FTE_SKINS) and DarkPlaces framegroups: read, written, read back the same;
what is written passes the checks FTE's engine makes before it reads them (engine/common/com_mesh.c)."""

from __future__ import annotations

import copy
import random
import struct
from pathlib import Path

import numpy as np
import pytest

from formats import iqe, iqm
from formats.errors import FormatError, Warnings
from formats.iqe.document import FteMeshFields, IqeEvent, IqeSkin, IqeSkinFrame
from formats.iqm.extensions import EXTENSION_DTYPE
from formats.iqm.layout import HEADER, HEADER_FIELDS
from tests.mutations import fuzz_count, mutate_counts, mutations
from tests.unit.test_structured_fuzz import IQE_FIXTURE

CORPUS = Path("/work/corpus/iqm_ext")
FTE_FILE = CORPUS / "drill_fte.iqm"  # written by FTE's iqmtool (see the corpus's fte_src/drill.cmd)
NUCLIDE_FILE = CORPUS / "nuclide_logo.iqm"  # a public model of FTE's iqmtool (VeraVisions/nuclide base/models/logo.iqm)
XONOTIC = sorted((CORPUS / "xonotic").glob("*.framegroups"))
TWO_ANIMATIONS = IQE_FIXTURE + b"""animation "idle"
framerate 10
loop
frame
pq 0 0 0 0 0 0 1
pq 0 1 0 0 0 0 1
frame
pq 0 0 0 0 0 0 1
pq 0 1 0 0 0 0.7071 0.7071
frame
pq 0 0 0 0 0 0 1
pq 0 1 0 0 0 0 1
"""


def fte_document() -> iqe.IqeDocument:
    """Two meshes (one mesh name, two materials), two animations, every FTE section filled."""
    document = iqe.read_iqe(TWO_ANIMATIONS)
    second = copy.deepcopy(document.meshes[0])
    second.material = "metal"
    document.meshes.append(second)
    document.meshes[0].fte = FteMeshFields(contents=1, surfaceflags=0x80, body=3, geomset=2, geomid=1,
                                           mindist=0.5, maxdist=250.25)  # fmt: skip
    document.meshes[1].skins = [IqeSkin([IqeSkinFrame("metal_0"), IqeSkinFrame("metal_1", "{ map $diffuse }")], 0.25),
                                IqeSkin([IqeSkinFrame("rust")], 0.0)]  # fmt: skip
    document.animations[1].events = [IqeEvent(0.1, 7, "footstep left"), IqeEvent(0.15, 8, "sound/step.wav")]
    document.animations[0].events = [IqeEvent(0.0, 0xFFFFFFF0, "")]  # (a code of 2^31 or more too)
    return document


def header_of(data: bytes) -> dict[str, int]:
    return dict(zip(HEADER_FIELDS, HEADER.unpack_from(data, 0)[1:], strict=True))


def fte_finds(data: bytes, name: str) -> tuple[int, int] | None:
    """(offset, size) of extension `name` as FTE's IQM_FindExtension finds it, or None."""
    header = header_of(data)
    text = data[header["ofs_text"] : header["ofs_text"] + header["num_text"]]
    at = header["ofs_extensions"]
    for _ in range(header["num_extensions"]):
        name_offset, size, offset, following = struct.unpack_from("<4I", data, at)
        if at > len(data) or name_offset > header["num_text"] or offset + size > len(data):
            return None
        if text[name_offset : text.index(b"\0", name_offset)].decode().upper() == name:
            return offset, size
        at = following
    return None


def assert_fte_reads(data: bytes) -> None:
    """The checks FTE's loader makes before using each section (their sizes), plus what its reads assume: headers
    and data inside the file and 4-byte aligned, the list ending in 0, strings inside the text section."""
    header = header_of(data)
    assert header["filesize"] == len(data) and header["ofs_extensions"] % 4 == 0
    meshes, skins, events = (fte_finds(data, name) for name in ("FTE_MESH", "FTE_SKINS", "FTE_EVENT"))
    for found in (meshes, skins, events):
        assert found is not None and found[0] % 4 == 0 and found[0] + found[1] <= len(data)
    assert meshes is not None and meshes[1] == 28 * header["num_meshes"]
    assert events is not None and events[1] % 16 == 0
    anims = np.frombuffer(data, "<u4", events[1] // 4, events[0]).reshape(-1, 4)[:, 0]
    assert (anims < header["num_anims"]).all()
    assert skins is not None
    counts = np.frombuffer(data, "<u4", 2 + header["num_meshes"], skins[0])
    assert skins[1] == 8 + 4 * header["num_meshes"] + 8 * int(counts[0]) + 12 * int(counts[1])
    last = header["ofs_extensions"] + EXTENSION_DTYPE.itemsize * (header["num_extensions"] - 1)
    assert struct.unpack_from("<I", data, last + 12)[0] == 0


def test_every_fte_section_is_written_read_back_and_written_again_to_the_same_bytes() -> None:
    document = fte_document()
    data = iqm.write_iqm(document)
    assert_fte_reads(data)
    model = iqm.read_iqm_model(data)
    assert model.extensions.names == ["FTE_MESH", "FTE_EVENT", "FTE_SKINS"]
    assert model.extensions.fte_meshes == [document.meshes[0].fte, FteMeshFields()]  # (iqmtool's defaults)
    back = iqm.read_iqm(data)
    assert back.meshes[0].fte == document.meshes[0].fte and back.meshes[0].skins == []
    assert back.meshes[1].skins == document.meshes[1].skins
    assert [event.data for event in back.animations[1].events] == ["footstep left", "sound/step.wav"]
    assert back.animations[1].events[0].time == float(np.float32(0.1))
    again = iqm.write_iqm(back)  # (the extensions the same bytes; the geometry is compiled anew from what was read)
    assert again[header_of(again)["ofs_extensions"] :] == data[header_of(data)["ofs_extensions"] :]


def test_a_model_without_fte_values_has_no_extensions() -> None:
    data = iqm.write_iqm(iqe.read_iqe(TWO_ANIMATIONS))
    assert header_of(data)["num_extensions"] == 0 and iqm.read_iqm_model(data).extensions.names == []


@pytest.mark.skipif(not FTE_FILE.is_file(), reason="the FTE iqmtool file of /work/corpus/iqm_ext is not here")
def test_a_file_of_ftes_iqmtool_reads_as_its_command_file_says_and_round_trips() -> None:
    warnings = Warnings()
    model = iqm.read_iqm_model(FTE_FILE.read_bytes(), str(FTE_FILE), warnings)
    assert not list(warnings)
    sections = model.extensions
    assert sections.fte_meshes == [FteMeshFields(0x02000000, 0x80, 3, 1, 2, 0.0, 500.0),
                                   FteMeshFields(1, 0, 0, 1, 3, 10.0, 1000.0)]  # fmt: skip
    assert [(e.anim, e.code, e.data) for e in sections.fte_events] == [
        (1, 7, "footstep left"), (1, 8, "sound/drill.wav"), (2, 3, "construct_start")]  # fmt: skip
    assert sections.fte_events[0].time == float(np.float32(5 / 60))  # pose 5 of a 60 fps animation
    assert sections.fte_skins is not None and [len(skins) for skins in sections.fte_skins] == [2, 2]
    assert [len(skin.frames) for skin in sections.fte_skins[0]] == [2, 1]
    written = iqm.write_iqm(iqm.read_iqm(FTE_FILE.read_bytes()))
    assert iqm.read_iqm_model(written).extensions == sections
    assert_fte_reads(written)


@pytest.mark.skipif(not NUCLIDE_FILE.is_file(), reason="Nuclide's logo.iqm of /work/corpus/iqm_ext is not here")
def test_a_public_file_of_ftes_iqmtool_keeps_its_fte_mesh_through_a_round_trip() -> None:
    data = NUCLIDE_FILE.read_bytes()
    warnings = Warnings()
    sections = iqm.read_iqm_model(data, str(NUCLIDE_FILE), warnings).extensions
    assert not list(warnings) and sections.names == ["FTE_MESH"]
    assert sections.fte_meshes == [FteMeshFields()]  # (iqmtool's defaults: CONTENTS_BODY, no geomset)
    written = iqm.write_iqm(iqm.read_iqm(data))
    assert iqm.read_iqm_model(written).extensions == sections


def _set_u32(data: bytes, offset: int, value: int) -> bytes:
    return data[:offset] + struct.pack("<I", value) + data[offset + 4 :]


def test_a_broken_extension_list_stops_where_fte_stops_with_a_warning() -> None:
    data = iqm.write_iqm(fte_document())
    first = header_of(data)["ofs_extensions"]
    for mutant, said in ((_set_u32(data, first + 12, len(data)), "outside the file"),  # the second header outside
                         (_set_u32(data, first + 12, first), "repeats"),  # a loop back to the first
                         (_set_u32(data, first + 4, len(data)), "past the end")):  # the data past the end
        warnings = Warnings()
        model = iqm.read_iqm_model(mutant, None, warnings)
        assert any(said in text for text in warnings)
        assert model.extensions.fte_skins is None and model.extensions.fte_events == []


def test_sections_fte_ignores_are_ignored_with_a_warning() -> None:
    data = iqm.write_iqm(fte_document())
    first = header_of(data)["ofs_extensions"]
    records = np.frombuffer(data, EXTENSION_DTYPE, 3, first)
    mesh_size = int(records[0]["num_data"])
    warnings = Warnings()
    model = iqm.read_iqm_model(_set_u32(data, first + 4, mesh_size - 28), None, warnings)  # one mesh short
    assert model.extensions.fte_meshes is None and any("FTE_MESH ignored" in text for text in warnings)
    events_at = int(records[1]["ofs_data"])
    warnings = Warnings()
    model = iqm.read_iqm_model(_set_u32(data, events_at, 9), None, warnings)  # an event of animation 9
    assert len(model.extensions.fte_events) == 2 and any("animations the file does not have" in t for t in warnings)
    warnings = Warnings()
    model = iqm.read_iqm_model(data[: events_at + 4] + struct.pack("<f", float("inf")) + data[events_at + 8 :], None,
                               warnings)  # fmt: skip
    assert len(model.extensions.fte_events) == 2 and any("not a number" in t for t in warnings)
    skins_at = int(records[2]["ofs_data"])
    warnings = Warnings()
    model = iqm.read_iqm_model(_set_u32(data, skins_at, 99), None, warnings)  # a frame count its size does not hold
    assert model.extensions.fte_skins is None and any("FTE_SKINS ignored" in text for text in warnings)


def test_a_string_outside_the_text_leaves_its_section_out_with_a_warning() -> None:
    data = iqm.write_iqm(fte_document())
    first = header_of(data)["ofs_extensions"]
    records = np.frombuffer(data, EXTENSION_DTYPE, 3, first)
    for mutant, said in ((_set_u32(data, int(records[1]["ofs_data"]) + 12, 1 << 30), "FTE_EVENT ignored"),
                         (_set_u32(data, first + 16, 1 << 30), "extension 1")):  # fmt: skip
        warnings = Warnings()
        model = iqm.read_iqm_model(mutant, None, warnings)
        assert model.extensions.fte_events == [] and any(said in text for text in warnings)


def test_byte_mutants_of_extended_files_raise_only_format_error() -> None:
    seeds = [iqm.write_iqm(fte_document())]
    seeds += [FTE_FILE.read_bytes()] if FTE_FILE.is_file() else []
    tail = [seed[header_of(seed)["ofs_extensions"] :] for seed in seeds]  # (mutate the extensions, not the model)
    outcomes = set()
    with np.errstate(all="ignore"):
        for seed, end, count in zip(seeds, tail, (1500, 300), strict=False):  # (the real file is 378 KB)
            for mutant in mutations([end], fuzz_count(count), seed=20261202):
                try:
                    iqm.read_iqm_model(seed[: len(seed) - len(end)] + mutant + bytes(max(0, len(end) - len(mutant))))
                    outcomes.add("read")
                except FormatError:
                    outcomes.add("rejected")
    assert "read" in outcomes


def test_every_extension_count_and_offset_is_checked_against_the_file() -> None:
    data = iqm.write_iqm(fte_document())
    first, count = header_of(data)["ofs_extensions"], header_of(data)["num_extensions"]
    fields = [16 + 4 * HEADER_FIELDS.index(name) for name in ("num_extensions", "ofs_extensions", "num_text")]
    fields += [first + 16 * index + 4 * word for index in range(count) for word in range(4)]  # every header word
    fields += [int(np.frombuffer(data, EXTENSION_DTYPE, count, first)[2]["ofs_data"]) + 4 * k for k in range(4)]
    rng = random.Random(12)
    for _ in range(fuzz_count(1000)):
        warnings = Warnings()
        try:
            iqm.read_iqm_model(mutate_counts(data, fields, rng), None, warnings)
        except FormatError as error:
            assert error.offset is None or error.offset >= 0


def test_an_unknown_extension_is_named_in_a_warning() -> None:
    data = iqm.write_iqm(fte_document())
    header = header_of(data)
    text = data[header["ofs_text"] : header["ofs_text"] + header["num_text"]]
    weights_offset = text.index(b"skin\0")  # (any string of the text section names it)
    warnings = Warnings()
    model = iqm.read_iqm_model(_set_u32(data, header["ofs_extensions"], weights_offset), None, warnings)
    assert model.extensions.fte_meshes is None and "1 IQM extensions ignored: skin" in list(warnings)


def test_fte_values_iqm_cannot_hold_are_format_errors_before_any_byte() -> None:
    document = fte_document()
    assert document.meshes[0].fte is not None
    document.meshes[0].fte.geomset = -1
    with pytest.raises(FormatError, match="FTE values"):
        iqm.write_iqm(document)
    document = fte_document()
    document.animations[1].events[0].time = float("nan")
    with pytest.raises(FormatError, match="event"):
        iqm.write_iqm(document)


# ------------------------------------------------------------------------------------------------ framegroups

XONOTIC_STYLE = """/*
Generated framegroups file for h_crylink
*/

1 26 30 0 // h_crylink fire
53 101 3.5 1 // h_crylink idle
7
0 2 15 1 "quoted name" ignored tokens
4 3
"""


def test_framegroups_read_as_darkplaces_reads_them() -> None:
    warnings = Warnings()
    groups = iqm.parse_framegroups(XONOTIC_STYLE, "h.iqm.framegroups", warnings)
    assert groups == [iqm.FrameGroup(1, 26, 30.0, False, "h_crylink fire"),
                      iqm.FrameGroup(53, 101, 3.5, True, "h_crylink idle"),
                      iqm.FrameGroup(0, 2, 15.0, True, "quoted name"),
                      iqm.FrameGroup(4, 3, 20.0, True, "")]  # fmt: skip
    assert any("line 7" in text for text in warnings)
    assert groups[3].engine_name(3) == "groupified_3_anim"


def test_a_number_that_is_not_one_is_a_format_error_with_its_line_and_column() -> None:
    with pytest.raises(FormatError) as caught:
        iqm.parse_framegroups("0 10 30 1 // a\n10 ten 30 1 // b\n", "m.iqm.framegroups")
    assert (caught.value.line, caught.value.column) == (2, 4)


@pytest.mark.skipif(not XONOTIC, reason="Xonotic's framegroups files of /work/corpus/iqm_ext are not here")
@pytest.mark.parametrize("path", XONOTIC, ids=[p.name for p in XONOTIC])
def test_xonotics_framegroups_files_round_trip(path: Path) -> None:
    groups = iqm.parse_framegroups(path.read_text(), str(path))
    assert groups and all(group.name for group in groups)
    assert iqm.parse_framegroups(iqm.format_framegroups(groups)) == groups


def test_framegroups_split_the_files_frames_into_animations_with_their_events(tmp_path: Path) -> None:
    document = fte_document()  # animations: wave (1 frame), idle (3 frames at 10 fps, events at 0.1 s and 0.15 s)
    path = tmp_path / "model.iqm"
    path.write_bytes(iqm.write_iqm(document))
    Path(iqm.framegroups_path(str(path))).write_text("0 2 5 0 // first two\n2 9 20 1 // the rest\n")
    read = iqm.load_iqm(path, use_framegroups=True)
    assert [(a.name, a.framerate, a.loop, len(a.frames)) for a in read.animations] == [
        ("first two", 5.0, False, 2), ("the rest", 20.0, True, 2)]  # fmt: skip
    assert any("cut to them" in text for text in read.warnings)
    # idle's events: frame 1 + 0.1 s x 10 fps = frame 2 (the rest's first), frame 2.5
    assert [(e.data, round(e.time, 6)) for e in read.animations[1].events] == [("footstep left", 0.0),
                                                                             ("sound/step.wav", 0.025)]  # fmt: skip
    assert [a.name for a in iqm.load_iqm(path).animations] == ["wave", "idle"]  # (the option off: the file's own)


def test_framegroups_of_a_model_are_written_beside_it_and_read_back_as_its_animations(tmp_path: Path) -> None:
    document = fte_document()
    path = tmp_path / "model.iqm"
    path.write_bytes(iqm.write_iqm(document))
    written = iqm.save_framegroups(path, iqm.compile_document(document))
    assert Path(written).read_text() == "0 1 30 0 // wave\n1 3 10 1 // idle\n"
    read = iqm.load_iqm(path, use_framegroups=True)
    assert [(a.name, a.framerate, a.loop, len(a.frames)) for a in read.animations] == [
        (a.name, a.framerate, a.loop, len(a.frames)) for a in document.animations]  # fmt: skip
    assert [e.data for e in read.animations[1].events] == ["footstep left", "sound/step.wav"]


@pytest.mark.skipif(not FTE_FILE.is_file() or not XONOTIC, reason="the real files of /work/corpus/iqm_ext are not here")
def test_a_real_framegroups_file_splits_a_real_iqm_and_its_export_keeps_the_groups(tmp_path: Path) -> None:
    """Xonotic's h_crylink framegroups (frames 1..254 of 4 groups, frame 0 unused) over the 495 frames of the
    iqmtool file: each group's frames, written as an animation and read back, are the file's frames."""
    model_path = tmp_path / "h_crylink.iqm"
    model_path.write_bytes(FTE_FILE.read_bytes())
    groups_text = (CORPUS / "xonotic" / "h_crylink.iqm.framegroups").read_text()
    Path(iqm.framegroups_path(str(model_path))).write_text(groups_text)
    groups = iqm.parse_framegroups(groups_text)
    document = iqm.load_iqm(model_path, use_framegroups=True)
    source = iqm.read_iqm_model(FTE_FILE.read_bytes()).decoded_frames()
    assert [(a.name, a.framerate, a.loop, len(a.frames)) for a in document.animations] == [
        (g.name, g.fps, g.loop, g.frame_count) for g in groups]  # fmt: skip
    written = iqm.compile_document(document)
    assert [(g.first_frame, g.frame_count) for g in iqm.model_framegroups(written)] == [(0, 26), (26, 26), (52, 101),
                                                                                      (153, 101)]  # fmt: skip
    frames = written.decoded_frames()
    for group, anim in zip(groups, written.anims, strict=True):
        part = frames[anim.first_frame : anim.first_frame + anim.frame_count]
        np.testing.assert_allclose(part, source[group.first_frame : group.first_frame + group.frame_count], atol=2e-3)
