"""VMT reading: KeyValues text (quoted or bare tokens, `//` comments, keys ignoring case, nested blocks, PC
conditions), `patch` materials, numbers and flags, and FormatError with line and column."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from formats import textures, vmt
from formats.errors import FormatError
from formats.smd import load_qc
from tests.time_guard import no_runaway

CRATE = """// a comment line
"VertexLitGeneric"
{
    "$baseTexture" "models/props/Crate01"   // trailing comment
    $translucent 1
    "$BASETEXTURETRANSFORM" "center .5 .5 scale 2 2 rotate 0 translate 0 0"
    "$basetexture" "second/one/ignored"
    "$envmap" "env_cubemap" [$X360]
    "$envmaptint" "[.5 .5 .5]" [!$X360]
    "VertexLitGeneric_DX8"
    {
        "$translucent" "0"
    }
    Proxies { AnimatedTexture { animatedtexturevar $basetexture } }
}
"""


def test_keys_values_comments_and_blocks() -> None:
    document = vmt.read_vmt(CRATE)
    assert document.shader == "VertexLitGeneric"
    assert document.parameters["$basetexture"] == "models/props/Crate01"  # the first of a key
    assert document.flag("$translucent") and not document.flag("$alphatest")
    assert document.parameters["$basetexturetransform"].startswith("center .5 .5 scale 2 2")
    assert "$envmap" not in document.parameters  # an Xbox 360 line
    assert document.parameters["$envmaptint"] == "[.5 .5 .5]"
    assert document.blocks["vertexlitgeneric_dx8"] == {"$translucent": "0"}
    assert "$translucent" in document.parameters and "proxies" in document.blocks


def test_bare_tokens_and_numbers() -> None:
    document = vmt.read_vmt('UnlitGeneric{$basetexture models/x/y $alphatest "1" $alpha .5 $bad "x"}')
    assert document.shader == "UnlitGeneric" and document.parameters["$basetexture"] == "models/x/y"
    assert document.flag("$alphatest") and document.number("$alpha") == 0.5 and document.number("$bad", 3) == 3


def test_a_patch_extends_the_material_it_includes() -> None:
    patch = vmt.read_vmt('patch { include "materials/models/base.vmt" insert { $alphatest 1 $translucent 1 }'
                         ' replace { $basetexture models/other } }')  # fmt: skip
    assert patch.include == "materials/models/base.vmt"
    base = vmt.read_vmt('"VertexLitGeneric" { "$basetexture" "models/base" "$translucent" "0" }')
    merged = patch.merged_with(base)
    assert merged.shader == "VertexLitGeneric"
    assert merged.parameters == {"$basetexture": "models/other", "$translucent": "0", "$alphatest": "1"}
    assert base.include is None


@pytest.mark.parametrize(
    ("text", "line", "column", "words"),
    [
        ("", 1, 1, "no shader"),
        ('"VertexLitGeneric"\n  "$basetexture" "x"\n', 2, 3, "'{' expected"),
        ('"VertexLitGeneric"\n{\n  "$basetexture" "x\n}', 3, 18, "unterminated quote"),
        ('"VertexLitGeneric"\n{\n  "$basetexture" "x"\n', 2, 1, "never closed"),
        ('"VertexLitGeneric"\n{\n  "$basetexture"\n}', 3, 3, "has no value"),
        ('"VertexLitGeneric"\n{\n}\n}', 4, 1, "after the material"),
        ("{ }", 1, 1, "starts with its shader"),
        ("x {" + "a {" * 40 + "}" * 41, 1, 99, "nested"),
    ],
)
def test_errors_name_line_and_column(text: str, line: int, column: int, words: str) -> None:
    with pytest.raises(FormatError) as caught:
        vmt.read_vmt(text)
    assert (caught.value.line, caught.value.column) == (line, column) and words in caught.value.message


def test_load_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.vmt"
    path.write_bytes(b'"VertexLitGeneric" {')
    with pytest.raises(FormatError) as caught:
        vmt.load_vmt(str(path))
    assert caught.value.path == str(path)


# ------------------------------------------------------------------------------------------------ the search


@pytest.fixture
def game(tmp_path: Path) -> Path:
    """A game tree: `<game>/modelsrc/props/crate/crate.qc` and the compiled materials under `<game>/materials/`."""
    textures.clear_cache()
    root = tmp_path / "mygame"
    write(root / "modelsrc/props/crate/crate.qc", '$cdmaterials "models\\props\\"\n$body crate "crate.smd"\n')
    write(root / "materials/models/props/Crate.VMT",
          '"VertexLitGeneric" { "$basetexture" "models/props/crate_diffuse" }')  # fmt: skip
    write(root / "materials/models/props/crate_diffuse.vtf", "VTF")
    return root


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    textures.clear_cache()  # (folders are listed once per search)


def search_from(qc: Path, *folders: str, game_folder: str = "") -> textures.SourceSearch:
    return textures.SourceSearch(tuple(folders), (), game_folder, str(qc.parent))


def found(material: str, search: textures.SourceSearch, model: Path) -> str | None:
    texture = textures.find_texture(material, str(model), search)
    return None if texture is None else Path(texture.path).name


def test_the_qc_gives_its_material_folders(game: Path) -> None:
    qc = game / "modelsrc/props/crate/crate.qc"
    write(qc.parent / "crate.smd", "version 1\n")
    write(qc.parent / "more.qc", '$cdmaterials "models/a/" "models\\b" ""\n$cdmaterials models/a\n'
                                 '$cdtexture "../skins"\n$body x "crate.smd"\n')  # fmt: skip
    assert load_qc(qc).material_folders == ["models/props"]
    more = load_qc(qc.parent / "more.qc")
    assert more.material_folders == ["models/a", "models/b", ""]
    assert more.texture_folders == [str(qc.parent.parent / "skins")]
    write(qc.parent / "many.qc", "".join(f"$cdmaterials models/{n}\n" for n in range(40)) + '$body x "crate.smd"\n')
    many = load_qc(qc.parent / "many.qc")
    assert len(many.material_folders) == 32 and many.material_folders[-1] == "models/31"
    assert many.warnings == ["many.qc line 33: more than 32 $cdmaterials folders (Source's limit); the first 32 are "
                             "searched"]


def test_the_vmt_is_found_above_the_qc_and_its_base_texture_taken(game: Path) -> None:
    qc = game / "modelsrc/props/crate/crate.qc"
    search = search_from(qc, "models/props")
    texture = textures.find_texture("crate", str(qc.parent / "crate.smd"), search)
    assert texture is not None and texture.path == str(game / "materials/models/props/crate_diffuse.vtf")
    assert texture.material_file == str(game / "materials/models/props/Crate.VMT")
    assert not texture.use_alpha and texture.uv_mapping is None
    assert found("models\\props\\crate.vmt", search_from(qc, ""), qc) == "crate_diffuse.vtf"  # (a path in the name)


def test_material_folders_are_searched_in_order_and_not_below(game: Path) -> None:
    qc = game / "modelsrc/props/crate/crate.qc"
    write(game / "materials/models/other/crate.vmt", '"VertexLitGeneric" { "$basetexture" "models/other/wood" }')
    write(game / "materials/models/other/wood.vtf", "VTF")
    assert found("crate", search_from(qc, "models/nothing", "models/other", "models/props"), qc) == "wood.vtf"
    assert found("crate", search_from(qc, "models/props", "models/other"), qc) == "crate_diffuse.vtf"
    assert found("crate", search_from(qc, "models"), qc) is None  # (models/props/crate.vmt is below models/)


def test_the_walk_up_stops_after_8_levels(game: Path) -> None:
    deep = game / "a/b/c/d/e/f/g/h/model.qc"  # `materials` is 8 levels above its folder: found
    assert found("crate", search_from(deep, "models/props"), deep) == "crate_diffuse.vtf"
    deeper = game / "a/b/c/d/e/f/g/h/i/model.qc"
    assert found("crate", search_from(deeper, "models/props"), deeper) is None


def test_the_users_game_folder_and_an_sdk_content_tree(tmp_path: Path, game: Path) -> None:
    elsewhere = tmp_path / "work/crate.qc"
    assert found("crate", search_from(elsewhere, "models/props"), elsewhere) is None
    assert found("crate", search_from(elsewhere, "models/props", game_folder=str(game)), elsewhere) == \
        "crate_diffuse.vtf"  # fmt: skip
    assert found("crate", search_from(elsewhere, "models/props", game_folder=str(game / "materials")),
                 elsewhere) == "crate_diffuse.vtf"  # fmt: skip
    sdk = tmp_path / "sdk"
    (game.parent / "sdk/game").mkdir(parents=True)
    (game).rename(sdk / "game/mygame")
    textures.clear_cache()
    qc = sdk / "content/mygame/models/crate.qc"  # content/<game>/... beside game/<game>/materials
    assert found("crate", search_from(qc, "models/props"), qc) == "crate_diffuse.vtf"


def test_a_tga_or_png_of_the_texture_name_and_the_alpha_modes(game: Path) -> None:
    qc = game / "modelsrc/props/crate/crate.qc"
    write(game / "materials/models/props/glass.vmt",
          'VertexLitGeneric { $basetexture models/props/glass.vtf\n$translucent 1 $basetexturetransform "scale 2 2" }')
    write(game / "materials/models/props/Glass.tga", "TGA")
    write(game / "materials/models/props/leaves.vmt", '"VertexLitGeneric" { $basetexture models/props/leaves '
                                                       "$alphatest 1 }")  # fmt: skip
    write(game / "materials/models/props/leaves.png", "PNG")
    glass = textures.find_texture("glass", str(qc), search_from(qc, "models/props"))
    assert glass is not None and Path(glass.path).name == "Glass.tga" and glass.use_alpha and not glass.alpha_test
    assert glass.uv_mapping == textures.UvMapping((-0.5, -0.5), 0.0, (2.0, 2.0))
    leaves = textures.find_texture("leaves", str(qc), search_from(qc, "models/props"))
    assert leaves is not None and leaves.use_alpha and leaves.alpha_test


def test_a_patch_material_uses_the_texture_of_the_one_it_includes(game: Path) -> None:
    qc = game / "modelsrc/props/crate/crate.qc"
    write(game / "materials/models/props/crate_dirty.vmt",
          'patch { include "materials/models/props/crate.vmt" insert { $alphatest 1 } }')  # fmt: skip
    texture = textures.find_texture("crate_dirty", str(qc), search_from(qc, "models/props"))
    assert texture is not None and Path(texture.path).name == "crate_diffuse.vtf" and texture.alpha_test
    write(game / "materials/models/props/loop.vmt", 'patch { include "materials/models/props/loop.vmt" }')
    with pytest.raises(FormatError, match="loop"):
        textures.find_texture("loop", str(qc), search_from(qc, "models/props"))


def test_without_a_vmt_the_models_own_folder_is_searched(game: Path) -> None:
    qc = game / "modelsrc/props/crate/crate.qc"
    write(qc.parent / "barrel.png", "PNG")
    assert found("barrel", search_from(qc, "models/props"), qc) == "barrel.png"
    write(game / "materials/models/props/broken.vmt", '"VertexLitGeneric" { "$basetexture" ')
    with pytest.raises(FormatError) as caught:
        textures.find_texture("broken", str(qc), search_from(qc, "models/props"))
    assert caught.value.path == str(game / "materials/models/props/broken.vmt")


def test_goldsrc_cdtexture_folders_come_first(tmp_path: Path) -> None:
    textures.clear_cache()
    write(tmp_path / "skins/Face.bmp", "BMP")
    write(tmp_path / "model/face.bmp", "BMP")
    search = textures.SourceSearch((), (str(tmp_path / "skins"),), "", str(tmp_path / "model"))
    texture = textures.find_texture("face.bmp", str(tmp_path / "model/face.smd"), search)
    assert texture is not None and texture.path == str(tmp_path / "skins/Face.bmp")


def test_mutated_text_raises_only_format_errors() -> None:
    generator = np.random.default_rng(3)
    alphabet = '{}"/ \n$[]!ab1'
    with no_runaway(20.0):
        for _ in range(3000):
            text = list(CRATE)
            for _ in range(int(generator.integers(1, 6))):
                text[int(generator.integers(len(text)))] = alphabet[int(generator.integers(len(alphabet)))]
            try:
                document = vmt.read_vmt("".join(text))
            except FormatError as error:
                assert error.line is not None and error.column is not None
                continue
            assert document.shader and all(key == key.lower() for key in document.parameters)


def test_a_vmt_whose_texture_is_elsewhere_is_said(game: Path) -> None:
    qc = game / "modelsrc/props/crate/crate.qc"
    write(game / "materials/models/props/paint.vmt", 'VertexLitGeneric { $basetexture "paintblobs\\\\blob" }')
    write(game / "materials/models/props/tint.vmt", 'VertexLitGeneric { $color "{255 0 0}" }')
    notes: list[str] = []
    for name in ("paint", "tint"):
        assert textures.find_texture(name, str(qc), search_from(qc, "models/props"), notes) is None
    materials = game / "materials"
    assert notes == [f"paint: its VMT {materials / 'models/props/paint.vmt'} names the texture 'paintblobs/blob', "
                     f"which is not in {materials}",
                     f"tint: its VMT {materials / 'models/props/tint.vmt'} names no $basetexture"]  # fmt: skip
    write(qc.parent / "paint.png", "PNG")  # (found beside the model after all: nothing to say)
    notes.clear()
    assert found("paint", search_from(qc, "models/props"), qc) == "paint.png" and not notes
