"""QC reading: which SMDs and VTAs a compile script names, with flex shape names, includes and variables."""

from __future__ import annotations

from pathlib import Path

import pytest

from formats.errors import FormatError
from formats.smd import load_qc
from formats.smd import qc as qc_module


def touch(folder: Path, *names: str) -> None:
    for name in names:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("version 1\n")


def test_meshes_flex_names_animations_and_up_axis(tmp_path: Path) -> None:
    touch(tmp_path, "Body_Ref.SMD", "Expressions.vta", "anims/Idle.smd", "anims/walk.smd", "phys.smd", "head.smd")
    (tmp_path / "model.qc").write_text(r"""
$modelname "test/model.mdl"   // a comment
$upaxis y
/* a block
   comment with $body "nothing.smd" */
$definevariable animdir "anims"
$model "body" "body_ref.smd" {
    flexfile "expressions" {
        defaultflex frame 0
        flex "AU1" frame 1 position 0
        flexpair "AU12" 1.0 frame 3 position 0.5
        flex "blink" frame 5
    }
    flexcontroller eyes range -30 30 eyes_updown
    %AU1 = AU1
}
$bodygroup "heads" { studio "head" blank }
$collisionmodel "phys.smd" { $mass 10 }
$pushd "$animdir$"
$sequence "idle" "Idle" loop fps 30 ACT_IDLE 1
$sequence "walk" { "walk.smd" fps 24 }
$popd
$animation "again" "anims\idle.smd"
$lod 10 { replacemodel "body_ref" "body_lod1" }
""")
    qc = load_qc(tmp_path / "model.qc")
    assert qc.up_axis == "Y"
    assert [(Path(m.path).name, m.command) for m in qc.meshes] == [
        ("Body_Ref.SMD", "$model"), ("head.smd", "$bodygroup"), ("phys.smd", "$collisionmodel")]  # fmt: skip
    flex = qc.meshes[0].flex_files
    assert [Path(f.path).name for f in flex] == ["Expressions.vta"]
    assert flex[0].names == {1: "AU1", 3: "AU12", 5: "blink"}
    assert [Path(a).name for a in qc.animations] == ["Idle.smd", "walk.smd"]  # the same file once
    assert {Path(a).name: rate for a, rate in qc.frame_rates.items()} == {"Idle.smd": 30.0, "walk.smd": 24.0}
    assert any("$lod" in note for note in qc.notes) and not qc.warnings


def test_includes_are_found_beside_the_including_file(tmp_path: Path) -> None:
    touch(tmp_path, "ref.smd", "sub/other.smd")
    (tmp_path / "sub").mkdir(exist_ok=True)
    (tmp_path / "sub" / "Part.QCI").write_text('$body "other" "sub\\other.smd"\n$include "more"\n')
    (tmp_path / "sub" / "more.qci").write_text('$upaxis X\n')
    (tmp_path / "main.qc").write_text('$body "main" "ref"\n$include "sub/part.qci"\n')
    qc = load_qc(tmp_path / "main.qc")
    assert [Path(m.path).name for m in qc.meshes] == ["ref.smd", "other.smd"] and qc.up_axis == "X"
    assert [Path(p).name for p in qc.included] == ["Part.QCI", "more.qci"]  # (what a rebuild depends on too)


def test_missing_files_warn_dmx_is_named_and_a_qc_naming_nothing_found_fails(tmp_path: Path) -> None:
    touch(tmp_path, "ref.smd")
    (tmp_path / "m.qc").write_text('$body "a" "absent.smd"\n$body "b" "mesh.dmx"\n$sequence s "anim.dmx"\n')
    with pytest.raises(FormatError, match="names no SMD"):
        load_qc(tmp_path / "m.qc")
    (tmp_path / "m.qc").write_text('$body "a" "absent.smd"\n$body "b" "mesh.dmx"\n$sequence s "anim.dmx"\n'
                                   '$body "c" "ref"\n$sequence "missing" "gone" fps 30\n')  # fmt: skip
    qc = load_qc(tmp_path / "m.qc")
    assert [Path(m.path).name for m in qc.meshes] == ["ref.smd"] and qc.animations == []
    assert len(qc.warnings) == 4  # absent, two DMX, gone
    assert "line 2" in qc.warnings[1] and "DMX" in qc.warnings[1] and "'gone' not found" in qc.warnings[3]


@pytest.mark.parametrize(
    ("text", "message", "line", "column"),
    [
        ('$body "a" "unterminated\n', "unterminated quote", 1, 11),
        ('$body "a" "x.smd"\n/* never closed\n', r"unterminated /\* comment", 2, 1),
    ],
)
def test_errors_say_where(tmp_path: Path, text: str, message: str, line: int, column: int) -> None:
    (tmp_path / "bad.qc").write_text(text)
    with pytest.raises(FormatError, match=message) as failure:
        load_qc(tmp_path / "bad.qc")
    assert (failure.value.line, failure.value.column) == (line, column)


def test_an_include_loop_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.qc").write_text('$include "b.qci"\n')
    (tmp_path / "b.qci").write_text('$include "a.qc"\n')
    with pytest.raises(FormatError, match="loop"):
        load_qc(tmp_path / "a.qc")


def test_includes_inside_blocks_variables_pushd_and_blends(tmp_path: Path) -> None:
    touch(tmp_path, "Models/Src/Ref.smd", "exp.vta", "a1.smd", "a2.smd", "idle.smd", "ACT_IDLE.smd")
    (tmp_path / "flex.qci").write_text('flex "AU1" frame 1 // shape names kept in an include\n')
    (tmp_path / "m.qc").write_text("""$definevariable Dir "models"
$definevariable dir "ignored: the first definition holds"
$pushd "$DIR$\\src"
$model "m" "ref" { flexfile "..\\..\\exp.vta" { $include "flex.qci" } }
$popd
$sequence move { "a1" "a2" blend move_x -1 1 }
$sequence idle { activity ACT_IDLE 1 "idle" }
$bodygroup "studio" { blank }
$sequence open { "a1"
""")
    qc = load_qc(tmp_path / "m.qc")
    assert [Path(m.path).name for m in qc.meshes] == ["Ref.smd"]
    assert qc.meshes[0].flex_files[0].names == {1: "AU1"}
    assert [Path(a).name for a in qc.animations] == ["a1.smd", "a2.smd", "idle.smd"]
    assert len(qc.warnings) == 1 and "never closed" in qc.warnings[0]


# ---- hostile include structures: bounded, iterative, with the chain in the error ---------------------------------


def test_a_file_included_twice_at_each_of_many_levels_is_refused_quickly(tmp_path: Path) -> None:
    touch(tmp_path, "ref.smd")
    for level in range(31):  # 2**31 inclusions if followed: never finished before
        (tmp_path / f"l{level}.qci").write_text(f'$include "l{level + 1}"\n$include "l{level + 1}"\n')
    (tmp_path / "l31.qci").write_text("$upaxis Y\n")
    (tmp_path / "m.qc").write_text('$body "a" "ref"\n$include "l0"\n')
    with pytest.raises(FormatError, match="more than 10,000 \\$include files in all") as raised:
        load_qc(tmp_path / "m.qc")
    assert "m.qc line 2 includes 'l0'" in str(raised.value)


def test_sixteen_doubling_levels_are_refused_by_the_include_count(tmp_path: Path) -> None:
    touch(tmp_path, "ref.smd")
    for level in range(16):
        (tmp_path / f"l{level}.qci").write_text(f'$include "l{level + 1}"\n$include "l{level + 1}"\n')
    (tmp_path / "l16.qci").write_text("$upaxis Y\n" * 10)
    (tmp_path / "m.qc").write_text('$body "a" "ref"\n$include "l0"\n')
    with pytest.raises(FormatError, match="\\$include files in all"):
        load_qc(tmp_path / "m.qc")


def test_a_long_include_chain_is_refused_with_the_chain_not_a_recursion_error(tmp_path: Path) -> None:
    touch(tmp_path, "ref.smd")
    for number in range(1200):
        (tmp_path / f"c{number}.qci").write_text(f'$include "c{number + 1}"\n')
    (tmp_path / "c1200.qci").write_text("$upaxis Y\n")
    (tmp_path / "m.qc").write_text('$body "a" "ref"\n$include "c0"\n')
    with pytest.raises(FormatError, match="nested more than 64 files deep") as raised:
        load_qc(tmp_path / "m.qc")
    message = str(raised.value)
    assert "m.qc line 2 includes 'c0' > c0.qci line 1 includes 'c1' >" in message
    assert raised.value.path is not None and raised.value.path.endswith("c63.qci")


def test_a_loop_names_the_chain(tmp_path: Path) -> None:
    touch(tmp_path, "ref.smd")
    (tmp_path / "a.qci").write_text('$include "b"\n')
    (tmp_path / "b.qci").write_text('\n$include "a"\n')
    (tmp_path / "m.qc").write_text('$body "a" "ref"\n$include "a"\n')
    with pytest.raises(FormatError, match=r"\$include loop .*a\.qci line 1 includes 'b' > b\.qci line 2 includes 'a'"):
        load_qc(tmp_path / "m.qc")


def test_a_huge_included_file_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    touch(tmp_path, "ref.smd")
    with open(tmp_path / "huge.qci", "wb") as stream:
        stream.truncate(3 << 30)  # 3 GB, sparse: reading it whole was a MemoryError
    (tmp_path / "m.qc").write_text('$body "a" "ref"\n$include "huge"\n')
    with pytest.raises(FormatError, match=r"huge\.qci is 3,221,225,472 bytes, more than the 16,777,216") as raised:
        load_qc(tmp_path / "m.qc")
    assert "m.qc line 2 includes 'huge'" in str(raised.value)


def test_many_words_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(qc_module, "MAX_EXPANDED_TOKENS", 1000)
    touch(tmp_path, "ref.smd")
    (tmp_path / "words.qci").write_text("$upaxis Y\n" * 300)
    (tmp_path / "m.qc").write_text('$body "a" "ref"\n' + '$include "words"\n' * 3)
    with pytest.raises(FormatError, match="expand to more than 1,000 words"):
        load_qc(tmp_path / "m.qc")


def test_sequences_of_one_smd_and_an_animation_of_it(tmp_path: Path) -> None:
    """A later $sequence of an SMD is an action of its own (name, fps, loop), and so is a sequence of an $animation
    (with the animation's fps and loop unless it gives its own); an $animation's name is not a file's."""
    (tmp_path / "walk.smd").write_text("version 1\n")
    (tmp_path / "m.qc").write_text('$sequence walk "walk.smd" fps 24 loop\n$animation walk_anim "walk.smd" fps 12\n'
                                   '$sequence run walk_anim fps 40\n$sequence stroll "walk" fps 10\n')  # fmt: skip
    qc = load_qc(tmp_path / "m.qc")
    walk = str(tmp_path / "walk.smd")
    assert qc.animations == [walk] and qc.warnings == []
    assert (qc.sequence_names[walk], qc.frame_rates[walk], qc.loops[walk]) == ("walk", 24.0, True)
    assert qc.repeated_sequences == [(walk, "run", 40.0, False), (walk, "stroll", 10.0, False)]
    (tmp_path / "n.qc").write_text('$animation run_anim "walk.smd" fps 24 loop\n$sequence run1 "run_anim"\n'
                                   '$sequence run2 run_anim fps 12\n')  # fmt: skip
    qc = load_qc(tmp_path / "n.qc")
    assert qc.sequence_names[walk] == "run_anim" and qc.warnings == []
    assert qc.repeated_sequences == [(walk, "run1", 24.0, True), (walk, "run2", 12.0, True)]


def test_sequence_options_are_never_looked_up_as_files(tmp_path: Path) -> None:
    """Event options (sounds, sound scripts, a brace), attachments, pose parameters, bones, weight lists and
    activities are read by the grammar of each option, as studiomdl reads them: no "not found" for them."""
    touch(tmp_path, "ref.smd", "idle.smd", "attack1.smd", "walk_n.smd", "walk_s.smd", "fire.smd", "reload.smd",
          "anims/run.smd")  # fmt: skip
    (tmp_path / "m.qc").write_text("""
$body "body" "ref"
// GoldSrc
$sequence idle "idle" loop fps 15 ACT_IDLE 1
$sequence attack1 "attack1" fps 30 ACT_MELEE_ATTACK1 1 { event 5004 1 "bullchicken/bc_idle3.wav" }
$sequence "brace" "idle" { event 2 7 "{" } frames 0 10 looping
$sequence "deep" { { event 1004 3 "common/npc_step1.wav" } { event 2 7 } "idle" } rtransition 1 2
// Source
$poseparameter "move_x" -1 1
$attachment "muzzle" "ValveBiped.Bip01_R_Hand" 0 0 0 rotate 0 0 0
$animation a_run "anims/run" fps 30 loop weightlist "upper_body" subtract "a_idle" 0 {
    ikrule rfoot footstep range .5 1 2 3 }
$animation a_walk_n "walk_n" fps 24
$animation a_walk_s "walk_s" fps 24 alignto "a_walk_n"
$sequence run a_run activity ACT_RUN 1 node "Standing" blend "move_x" -1 1 calcblend "move_y" "muzzle" YR
$sequence walk { a_walk_n a_walk_s blendwidth 2 blend "move_y" -1 1 }
$sequence fire "fire" fps 30 { event AE_CL_PLAYSOUND 0 "Weapon_357.Spin" } { event 5001 0 "21" }
$sequence reload "reload" { ikrule lhand attachment "lhand_att" bone "ValveBiped.Bip01_L_Hand" usesequence }
    keyvalues { "a" { "b" "c" } } blendlayer "layer" 0 1 2 3 spline poseparameter "move_x" addlayer "fire"
$sequence aim "fire" { align "a_walk_n" X Y 0 0 } iklock "lfoot" 1 0 posecycle "move_x" exitphase 0.5
""")
    qc = load_qc(tmp_path / "m.qc")
    assert qc.warnings == []
    names = [Path(path).name for path in qc.animations]
    assert names == ["idle.smd", "attack1.smd", "run.smd", "walk_n.smd", "walk_s.smd", "fire.smd", "reload.smd"]
    rates = {Path(path).name: rate for path, rate in qc.frame_rates.items()}
    loops = {Path(path).name: loop for path, loop in qc.loops.items()}
    assert (rates["idle.smd"], loops["idle.smd"]) == (15.0, True)
    assert (rates["attack1.smd"], loops["attack1.smd"]) == (30.0, False)
    assert (rates["run.smd"], loops["run.smd"], rates["walk_n.smd"], rates["fire.smd"]) == (30.0, True, 24.0, 30.0)
    assert {name for _, name, _, _ in qc.repeated_sequences} >= {"brace", "deep", "run", "aim"}


def test_a_missing_sequence_file_is_still_named_once(tmp_path: Path) -> None:
    touch(tmp_path, "ref.smd")
    (tmp_path / "m.qc").write_text('$body "b" "ref"\n$sequence s "gone" fps 30 { event 5004 1 "x.wav" }\n'
                                   '$animation a "lost" fps 30\n')  # fmt: skip
    assert load_qc(tmp_path / "m.qc").warnings == ["m.qc line 2: 'gone' not found", "m.qc line 3: 'lost' not found"]


def test_macros_are_expanded_with_their_arguments(tmp_path: Path) -> None:
    touch(tmp_path, "ref.smd", "gesture_fire.smd", "run.smd")
    (tmp_path / "macros.qci").write_text(r"""
$definemacro makegesture gesturename filename LastFrame \\
$sequence $gesturename$_spine $filename$ fps 30 weightlist upper subtract $gesturename$_spine 0 delta hidden \\
$sequence $gesturename$ { \\
	$filename$ noanimation numframes $LastFrame$ \\
	blendlayer $gesturename$_spine 0 1 2 $LastFrame$ spline \\
} \\
$continue $gesturename$

$definemacro simple name \\
$sequence $name$ "$name$" fps 24
""")
    (tmp_path / "m.qc").write_text('$body "b" "ref"\n$include "macros.qci"\n$makegesture gesture_fire '
                                   '"gesture_fire" 20\n$simple run\n')  # fmt: skip
    qc = load_qc(tmp_path / "m.qc")
    assert qc.warnings == []
    assert [Path(path).name for path in qc.animations] == ["gesture_fire.smd", "run.smd"]
    assert {Path(path).name: rate for path, rate in qc.frame_rates.items()} == {"gesture_fire.smd": 30.0,
                                                                               "run.smd": 24.0}  # fmt: skip
    assert {name for _, name, _, _ in qc.repeated_sequences} == {"gesture_fire"}
    assert qc.sequence_names[next(p for p in qc.animations if p.endswith("run.smd"))] == "run"


def test_a_comment_in_a_macro_does_not_end_it_when_its_line_ends_in_backslashes(tmp_path: Path) -> None:
    # (the pattern of HL2's GenericAnimationMacros.qci: studiomdl goes on at any `\\`, in a comment too, and
    # blanks what follows it on the line)
    touch(tmp_path, "ref.smd", "shoot_smg1.smd", "idle_smg1.smd")
    (tmp_path / "macros.qci").write_text(r"""
$definemacro GenericShoot SeqName FileName ActName AimLayer \\
$sequence $SeqName$ { \\
	$FileName$ \\
	//{ event 3014 0 "" } \\ // { event 3014 1 "" }
	addlayer $AimLayer$ \\
	activity $ActName$ 1 \\ "not_a_file"
	cmdlist lockfeetandlefthand \\
} \\
$continue $SeqName$
// the macro ended on the line above
$sequence idle "idle_smg1" fps 24
""")
    (tmp_path / "m.qc").write_text('$body "b" "ref"\n$include "macros.qci"\n'
                                   '$GenericShoot shoot "shoot_smg1" ACT_RANGE_ATTACK_SMG1 aim_layer\n')  # fmt: skip
    qc = load_qc(tmp_path / "m.qc")
    assert qc.warnings == []
    assert [Path(path).name for path in qc.animations] == ["idle_smg1.smd", "shoot_smg1.smd"]
    assert {Path(path).name: name for path, name in qc.sequence_names.items()} == {"idle_smg1.smd": "idle",
                                                                                  "shoot_smg1.smd": "shoot"}
    assert qc.frame_rates[next(p for p in qc.animations if p.endswith("idle_smg1.smd"))] == 24.0


def test_a_macro_that_uses_itself_is_refused(tmp_path: Path) -> None:
    touch(tmp_path, "ref.smd")
    (tmp_path / "m.qc").write_text('$body "b" "ref"\n$definemacro loop x \\\\\n$loop $x$\n$loop 1\n')
    with pytest.raises(FormatError, match="macros and \\$include nested more than 64 deep"):
        load_qc(tmp_path / "m.qc")


def test_pushd_is_bounded_and_costs_linear_time(tmp_path: Path) -> None:
    from tests.time_guard import no_runaway

    touch(tmp_path, "ref.smd")
    (tmp_path / "m.qc").write_text('$body a "ref.smd"\n' + '$pushd "a"\n' * 30_000)  # (quadratic memory once)
    with no_runaway(), pytest.raises(FormatError, match="nested more than 64 folders deep") as raised:
        load_qc(tmp_path / "m.qc")
    assert raised.value.line == 2 + 64
    (tmp_path / "m.qc").write_text('$body a "ref.smd"\n' + '$pushd "a"\n$popd\n' * 30_000)  # (never deep)
    with no_runaway():
        assert [Path(m.path).name for m in load_qc(tmp_path / "m.qc").meshes] == ["ref.smd"]
    (tmp_path / "m.qc").write_text('$body a "ref.smd"\n$cd "' + "x/" * 3000 + '"\n')
    with pytest.raises(FormatError, match="makes a folder path of 6,000 characters"):
        load_qc(tmp_path / "m.qc")


def test_the_word_cap_refuses_a_huge_qc_while_reading_it(tmp_path: Path) -> None:
    from tests.time_guard import no_runaway

    touch(tmp_path, "ref.smd")
    (tmp_path / "m.qc").write_text('$body a "ref.smd"\n' + "{" * (qc_module.MAX_EXPANDED_TOKENS + 10))
    (tmp_path / "part.qci").write_text("{ }\n" * (qc_module.MAX_EXPANDED_TOKENS // 4))
    with no_runaway(), pytest.raises(FormatError, match="more than 1,000,000 words") as raised:
        load_qc(tmp_path / "m.qc")
    assert raised.value.line == 2
    (tmp_path / "m.qc").write_text('$body a "ref.smd"\n' + '$include "part.qci"\n' * 3)  # (the words of all files)
    with no_runaway(), pytest.raises(FormatError, match="more than 1,000,000 words"):
        load_qc(tmp_path / "m.qc")


def test_an_iqmtool_script_named_qc_is_read_for_its_scenes(tmp_path: Path) -> None:
    """FTE's iqmtool/vvmtool command files are .qc too (Nuclide's model sources): no `$`, one `scene` a line."""
    touch(tmp_path, "ref/gun.smd", "seq/idle.smd", "seq/fire.smd")
    (tmp_path / "v_gun.qc").write_text("""output ../v_gun.vvm
materialprefix textures/models/v_gun/

scene ref/gun.smd
rotate 0 -90 0

scene seq/idle.smd fps 13.0 loop
event 0 1004 "weapons/gun/draw.wav 1"
\tscene seq/fire.smd fps 30.0
event reset
""")
    qc = load_qc(tmp_path / "v_gun.qc")
    assert qc.warnings == [] and qc.notes == ["v_gun.qc line 5: rotate is not applied to the imported model"]
    assert [Path(m.path).name for m in qc.meshes] == ["gun.smd"]
    found = {Path(p).name: (qc.frame_rates[p], qc.loops[p]) for p in qc.animations}
    assert found == {"idle.smd": (13.0, True), "fire.smd": (30.0, False)}


def test_attachments_are_read_with_their_rotation_and_a_bad_one_is_named(tmp_path: Path) -> None:
    (tmp_path / "ref.smd").write_text("version 1\n")
    (tmp_path / "m.qc").write_text(
        '$body body "ref.smd"\n'
        '$attachment "muzzle" "ValveBiped.Anim_Attachment_RH" 1.5 -2 0.25 rotate 0 90 -45 rigid\n'
        "$attachment 0 \"Bip01 Head\" 0 0 3\n"
        '$attachment "eyes" "head" 0 0 x\n'
        '$attachment "world" "root" 10 0 0 absolute\n'
    )
    qc = load_qc(tmp_path / "m.qc")
    assert [(a.name, a.bone, a.offset, a.rotation, a.absolute) for a in qc.attachments] == [
        ("muzzle", "ValveBiped.Anim_Attachment_RH", (1.5, -2.0, 0.25), (0.0, 90.0, -45.0), False),
        ("0", "Bip01 Head", (0.0, 0.0, 3.0), (0.0, 0.0, 0.0), False),
        ("world", "root", (10.0, 0.0, 0.0), (0.0, 0.0, 0.0), True),
    ]
    said = [text for text in qc.warnings if "m.qc line 4" in text and "$attachment" in text and "left out" in text]
    assert said, qc.warnings
