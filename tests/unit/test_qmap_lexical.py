"""Tokenizer and grammar rules of the `.qmap.tmp` / `.qmap.desc` parsers (spec §4-§6)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from qmap_compiler import QmapError, compile_bytes, format_desc, format_tmp, parse_desc, parse_tmp
from qmap_compiler.tokenizer import Kind, Source, Tokenizer


def tokens(text: bytes) -> list[tuple[Kind, bytes]]:
    tokenizer = Tokenizer(Source(text, "t"))
    out = []
    while (token := tokenizer.next()).kind is not Kind.EOF:
        out.append((token.kind, token.value if token.kind is Kind.STRING else token.text))
    return out


def test_token_kinds_symbols_and_greedy_numbers() -> None:
    assert tokens(b"a_1 {1,2} .5 1-2 0x1F 1e5 -3 / x") == [
        (Kind.IDENT, b"a_1"), (Kind.SYMBOL, b"{"), (Kind.INTEGER, b"1"), (Kind.SYMBOL, b","),
        (Kind.INTEGER, b"2"), (Kind.SYMBOL, b"}"), (Kind.SYMBOL, b"."), (Kind.INTEGER, b"5"),
        (Kind.INTEGER, b"1-2"), (Kind.INTEGER, b"0x1F"), (Kind.FLOAT, b"1e5"), (Kind.INTEGER, b"-3"),
        (Kind.SYMBOL, b"/"), (Kind.IDENT, b"x"),
    ]


def test_comments_and_line_continuations() -> None:
    assert tokens(b"a // c \\\n b\n/* x\n y */ c") == [(Kind.IDENT, b"a"), (Kind.IDENT, b"c")]
    assert tokens(b'"ab\\\r\ncd" 1\\\n2') == [(Kind.STRING, b"abcd"), (Kind.INTEGER, b"12")]


def test_string_escapes_and_raw_high_bytes() -> None:
    assert tokens(b'"\\n\\t\\v\\b\\r\\f\\a\\0\\\\\\?\\"\\\'\\x4a\\x4B\xb9"') == [
        (Kind.STRING, b"\n\t\x0b\x08\r\x0c\x07\x00\\?\"'JK\xb9")]


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        (b'  "a\\q"', "escape", 3),
        (b'  "a\\x4"', "escape", 3),
        (b'  "ab\ncd"', "line break", 3),
        (b'  "abc', "unterminated", 3),
        (b"  /* abc", "unclosed comment", 3),
        (b"  \xef\xbb\xbf", "unrecognised", 3),
        (b"  \x0c", "unrecognised", 3),
        (b"  'ab'", "character constant", 3),
    ],
)
def test_lexical_errors_carry_position(text: bytes, message: str, column: int) -> None:
    with pytest.raises(QmapError) as caught:
        tokens(text)
    assert message in caught.value.message
    assert (caught.value.file, caught.value.line, caught.value.column) == ("t", 1, column)


def test_error_position_maps_back_through_continuations() -> None:
    with pytest.raises(QmapError) as caught:
        tokens(b"a\\\nb\\\r\nc $x\n  \xff")
    assert (caught.value.line, caught.value.column, caught.value.offset) == (4, 3, 14)


SQUARE = b"vertices 4 { 0,0,0 1,0,0 1,1,0 0,1,0 }"


def quad_map(faces: bytes = b"faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 }", header: bytes = b"QMAP TMP 10",
             has_uv: bytes = b"1", vertices: bytes = SQUARE, extra: bytes = b"") -> bytes:
    return (header + b"\nobjects {\n" + extra + b' mesh "P" { 0,0,0 0,0,0 1,1,1 30 ' + has_uv
            + b' materials 1 { "M" } ' + vertices + b" " + faces + b" }\n}\n")


@pytest.mark.parametrize(
    ("variant", "same_as_plain"),
    [
        (quad_map(faces=b"faces 01 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 }"), True),  # octal 01
        (quad_map(faces=b"faces 0x1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 }"), True),  # hex
        (quad_map(vertices=b"vertices 4 { 0,0,0 1.0e0,0,0 +1.,1,0 0,10d-1,0 }"), True),  # float forms
        (quad_map(vertices=b"vertices 4 { 0,0,0 01,0,0 1,1,0 0,1,0 }"), True),  # 01 as a float is decimal
        (quad_map(vertices=b"vertices 4 { 0,0,0 1,0,0 1,1,0 0,1 /* c */ ,0 }"), True),  # slow path
        (quad_map(vertices=b"vertices 4 { 0,0,0 010,0,0 1,1,0 0,1,0 }"), False),  # 010 as a float is 10
    ],
)
def test_number_forms_compile_like_plain_numbers(variant: bytes, same_as_plain: bool) -> None:
    assert (compile_bytes(variant) == compile_bytes(quad_map())) is same_as_plain


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (quad_map(header=b"QMAP TMP 11"), "version"),
        (quad_map(faces=b"faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1.5.5 }"), "cannot convert"),
        (quad_map(faces=b"faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 3 }"), "expected '}'"),
        (quad_map(faces=b"faces 1 { 4 -0 0 0 0,0 1 1,0 2 1,1 3 0,1 }"), "unsigned integer"),
        (quad_map(faces=b"faces 1 { 4 08 0 0 0,0 1 1,0 2 1,1 3 0,1 }"), "unsigned integer"),
        (quad_map(faces=b"faces 1 { 4 4294967296 0 0 0,0 1 1,0 2 1,1 3 0,1 }"), "out of range"),
        (quad_map(faces=b"faces 1 { 4 0 0 0 0;0 1 1,0 2 1,1 3 0,1 }"), "expected ','"),
        (quad_map(faces=b"faces 1 { 4 0 0 0 nan,0 1 1,0 2 1,1 3 0,1 }"), "integer or a float"),
        (quad_map(extra=b'spot "S" { }\n'), "expected an object"),
        (quad_map(extra=b'lamp "L" { 0,0,0 0,0,0 1,1,1 Sun 1 1,1,1 }\n'), "lamp type"),
        (quad_map(faces=b"faces 99999999 { }"), "more than the rest of the file"),
        (quad_map() + b"x", "end of file"),
    ],
)
def test_grammar_errors(document: bytes, message: str) -> None:
    with pytest.raises(QmapError) as caught:
        parse_tmp(document, "m.qmap.tmp")
    assert message in caught.value.message
    assert caught.value.line is not None and caught.value.column is not None


def test_lamps_and_lattice_are_parsed_but_produce_nothing() -> None:
    lamps = (b'lamp "L" { 1,2,3 0,0,0 1,1,1 Lamp 20 1, 0.9, 0.8 }\n'
             b'lamp "S" { 0,0,3 0.7,0,0 1,1,1 Spot 15 1,1,1 0.15 45 }\nlattice "X" { { nested } }\n')
    document = parse_tmp(quad_map(extra=lamps))
    assert [lamp.lamp_type for lamp in document.lamps] == ["Lamp", "Spot"]
    assert document.lamps[1].angle == 45 and len(document.warnings) == 1
    assert compile_bytes(quad_map(extra=lamps)) == compile_bytes(quad_map())


def test_unknown_objects_are_errors_unless_lenient() -> None:
    from qmap_compiler import CompileOptions

    document = quad_map(extra=b'curve "C" { 1 2 3 }\n')
    with pytest.raises(QmapError):
        compile_bytes(document)
    lenient = compile_bytes(document, options=CompileOptions(skip_unknown_objects=True))
    assert lenient == compile_bytes(quad_map())


def test_desc_grammar_first_entry_wins_and_options_repeat() -> None:
    desc = parse_desc(b'QMAP DESC 10 // c\nmaterials { "A" { tex scale 3; tex scale 2; name "X"; name "Y"; }\n'
                      b'"A" { skip; } "B" { drop; tex gen; } }')
    assert desc.entries[b"A"].tex_scale == 2 and desc.entries[b"A"].new_name == b"Y"
    assert not desc.entries[b"A"].skip
    assert desc.entries[b"B"].skip and desc.entries[b"B"].tex_gen


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b'QMAP DESC 10 materials { "A" { foo; } }', "unknown command"),
        (b'QMAP DESC 10 materials { "A" { tex big; } }', "unknown tex command"),
        (b'QMAP DESC 10 materials { "A" { skip } }', "expected ';'"),
        (b'QMAP DESC 11 materials { }', "version"),
        (b'QMAP TMP 10 materials { }', "expected 'DESC'"),
    ],
)
def test_desc_errors(text: bytes, message: str) -> None:
    with pytest.raises(QmapError) as caught:
        parse_desc(text, "d.qmap.desc")
    assert message in caught.value.message and caught.value.file == "d.qmap.desc"


def test_writers_round_trip_through_the_parsers() -> None:
    document = parse_tmp(quad_map(extra=b'lamp "S\\"1" { 0,0,3 0.7,0,0 1,1,1 Spot 15 1,1,1 0.15 45 }\n'))
    document.meshes[0].materials = [b'q"\\\t\xb9']
    again = parse_tmp(format_tmp(document, "%.9g"))
    assert again.meshes[0].materials == [b'q"\\\t\xb9'] and again.lamps[0].name == b'S"1'
    assert np.array_equal(again.meshes[0].face_uvs, document.meshes[0].face_uvs)  # type: ignore[arg-type]
    desc = parse_desc(b'QMAP DESC 10 materials { "A" { tex scale 0.5; name "B"; skip; tex gen; } }')
    options = [(e.skip, e.tex_gen, e.tex_scale, e.new_name) for e in desc.entries.values()]
    again_desc = parse_desc(format_desc(desc))
    assert [(e.skip, e.tex_gen, e.tex_scale, e.new_name) for e in again_desc.entries.values()] == options


def _number_spellings(rng: np.random.Generator, count: int) -> list[bytes]:
    """Random values written in every float spelling the tokenizer accepts."""
    spellings = []
    for value in rng.standard_normal(count) * 10.0 ** rng.integers(-8, 9, count):
        style = rng.integers(7)
        text = [f"{value:f}", f"{value:.9g}", f"{value:.3e}", f"{value:.17e}".replace("e", "d"),
                f"{value:.2E}".replace("E", "D"), f"{value:+.1f}", f"{value:.25f}"][style]
        spellings.append(text.encode())
    return spellings


def test_fast_block_scanner_matches_the_tokenizer_bit_for_bit() -> None:
    rng = np.random.default_rng(7)
    numbers = _number_spellings(rng, 3 * 300)
    rows = b"\n".join(b",".join(numbers[i : i + 3]) for i in range(0, len(numbers), 3))
    faces = b"faces 2 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 3 0 0 0 1e-3,08 1 1.,2d1 2 -0.5,+7 }"
    from qmap_compiler import fastblocks

    block = b"vertices 300 {\n" + rows + b"\n}"
    assert fastblocks.parse_vertex_block(block, block.index(b"{") + 1, 300) is not None  # really the fast path
    assert fastblocks.parse_face_block(faces, faces.index(b"{") + 1, 2, 4, True) is not None
    fast = parse_tmp(quad_map(vertices=block, faces=faces))
    slow = parse_tmp(quad_map(vertices=b"vertices 300 {\n" + rows + b"\n/* force the tokenizer */ }",
                              faces=faces.replace(b" }", b" // slow\n}")))
    for name in ("vertices", "face_uvs", "face_indices", "face_sizes"):
        a, b = getattr(fast.meshes[0], name), getattr(slow.meshes[0], name)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name


@pytest.mark.parametrize("with_uvs", [True, False])
def test_face_lines_keep_face_order_across_sizes(with_uvs: bool) -> None:
    from qmap_compiler.tmp_parser import MeshObject, TmpDocument

    indices = np.array([[0, 1, 2, 0], [0, 1, 2, 3], [3, 2, 1, 3], [1, 2, 3, 0]])
    uvs = np.arange(32, dtype=np.float32).reshape(4, 4, 2) / 4 if with_uvs else None
    mesh = MeshObject(b"m", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (1.0, 1.0, 1.0), 0.5, with_uvs, [b"a", b"b"], [0, 0],
                      np.zeros((4, 3), np.float32), np.array([3, 4, 3, 4], np.int8), np.array([1, 0, 1, 0]),
                      np.array([True, False, False, True]), indices, uvs)  # fmt: skip
    document = TmpDocument()
    document.meshes.append(mesh)
    text = format_tmp(document, "%g", b"\r\n").decode()
    faces = text.split("faces 4 {\r\n")[1].split("\r\n\t\t}")[0].split("\r\n")
    expected = []
    for face in range(4):
        size = 3 if face % 2 == 0 else 4
        corners = [f"{indices[face][c]}" + (f" {uvs[face][c][0]:g},{uvs[face][c][1]:g}" if uvs is not None else "")
                   for c in range(size)]  # fmt: skip
        expected.append(f"\t\t\t{size} {mesh.face_materials[face]} {int(mesh.face_smooth[face])} " + " ".join(corners))
    assert faces == expected
    assert parse_tmp(text.encode()).meshes[0].face_indices.tolist() == indices.tolist()


@pytest.mark.parametrize("piece_bytes", [1, 2, 3, 7, 64, 1 << 20])
def test_vectorised_blocks_match_the_tokenizer_bit_for_bit(monkeypatch: pytest.MonkeyPatch, piece_bytes: int) -> None:
    from qmap_compiler import blockscan

    monkeypatch.setattr(blockscan, "_BYTES_AT_A_TIME", piece_bytes)  # token boundaries across pieces

    rng = np.random.default_rng(11)
    numbers = [n for n in _number_spellings(rng, 3 * 600) if b"d" not in n.lower()][: 3 * 400]
    numbers += [b"0", b"-0", b"+0.0", b"1.", b"12345678901234567890", b"0.1234567890123456789012", b"3.4e38",
                b"1e39", b"-1e-50"]  # fmt: skip
    numbers = numbers[: len(numbers) // 3 * 3]
    count = len(numbers) // 3
    rows = b"\n".join(b" , ".join(numbers[i : i + 3]) if i % 2 else b",".join(numbers[i : i + 3])
                      for i in range(0, len(numbers), 3))  # fmt: skip
    block = b"vertices %d {\n" % count + rows + b"\n}"
    lines = [b"4 0 0 0 0,0 1 1,0 2 1,1 3 0,1", b"3 1 1 3 1e-3,0.5 1 1.,-0.5 2 -0.5,+7",
             b"3 4294967295 0 0 0,0 1 0,0 2 0,0"]
    faces = b"faces 3 {\n\t" + b"\r\n\t".join(lines) + b"\n}"
    assert blockscan.parse_vertex_block(block, block.index(b"{") + 1, count) is not None  # really this path
    assert blockscan.parse_face_block(faces, faces.index(b"{") + 1, 3, 4, True) is not None
    fast = parse_tmp(quad_map(vertices=block, faces=faces))
    slow = parse_tmp(quad_map(vertices=block.replace(b"\n}", b"\n/* force the tokenizer: } */ }"),
                              faces=faces.replace(b"\n}", b" // slow\n}")))  # fmt: skip
    for name in ("vertices", "face_uvs", "face_indices", "face_sizes", "face_materials", "face_smooth"):
        a, b = getattr(fast.meshes[0], name), getattr(slow.meshes[0], name)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name


@pytest.mark.parametrize(
    "faces",
    [
        b"faces 1 { 3 0 0 0 0,0 1 0,0 08 0,0 }",  # a leading 0 is octal for the tokenizer
        b"faces 2 { 3 0 0 0 0,0 1 0,0 2 0,0 3 0 0 0 0,0 1 0,0 2 0,0 }",  # two faces on one line
        b"faces 1 {\n3 0 0 0 0,0 1 0,0 9 0,0\n}",  # a vertex index out of range
        b"faces 1 {\n3 0 0 0 .5,0 1 0,0 2 0,0\n}",  # '.5' is the symbol '.' and 5 for the tokenizer
        b"faces 1 {\n3 0 0 0 0,0 1 0,0 2 0,0 // comment\n}",
        b"faces 1 {\n3 0 0 0 1d2,0 1 0,0 2 0,0\n}",
    ],
)
def test_vectorised_faces_leave_other_layouts_to_the_general_reader(faces: bytes) -> None:
    from qmap_compiler import blockscan

    count = int(faces.split()[1])
    assert blockscan.parse_face_block(faces, faces.index(b"{") + 1, count, 4, True) is None


def _mesh_block(index: int, vertices: bytes, faces: bytes, has_uv: bool) -> bytes:
    return (b'mesh "M%d" { 0,0,0 0,0,0 1,1,1 30 %d materials 1 { "A" }\n' % (index, has_uv) + vertices + b"\n"
            + faces + b"\n}\n")


def _many_meshes(rng: np.random.Generator, count: int) -> list[bytes]:
    """Meshes whose blocks are plain, or need the general reader (a comment, `d` exponents)."""
    meshes = []
    for index in range(count):
        vertex_count, has_uv = int(rng.integers(3, 9)), bool(index % 3)
        numbers = [n for n in _number_spellings(rng, 3 * vertex_count)]
        rows = b"\n".join(b",".join(numbers[i : i + 3]) for i in range(0, len(numbers), 3))
        lines = []
        for _ in range(int(rng.integers(1, 6))):
            size = int(rng.integers(3, 5))
            corners = [b"%d" % rng.integers(vertex_count) + (b" %g,%g" % tuple(rng.random(2)) if has_uv else b"")
                       for _ in range(size)]  # fmt: skip
            lines.append(b"%d %d 1 " % (size, rng.integers(2)) + b" ".join(corners))
        extra = [b"", b"", b"", b" /* general reader */ "][index % 4]
        vertices = b"vertices %d {\n" % vertex_count + rows + extra + b"\n}"
        faces = b"faces %d {\n" % len(lines) + b"\n".join(lines) + b"\n}"
        meshes.append(_mesh_block(index, vertices, faces, has_uv))
    return meshes


@pytest.mark.parametrize("group_bytes", [1, 300, 1 << 22])
def test_blocks_read_together_match_each_mesh_read_alone(monkeypatch: pytest.MonkeyPatch, group_bytes: int) -> None:
    from qmap_compiler import blockscan

    monkeypatch.setattr(blockscan, "_GROUP_BYTES", group_bytes)
    meshes = _many_meshes(np.random.default_rng(5), 40)
    together = parse_tmp(b"QMAP TMP 10\nobjects {\n" + b"".join(meshes) + b"}\n")
    for mesh, text in zip(together.meshes, meshes, strict=True):
        alone = parse_tmp(b"QMAP TMP 10\nobjects {\n" + text + b"}\n").meshes[0]
        for name in ("vertices", "face_uvs", "face_indices", "face_sizes", "face_materials", "face_smooth"):
            a, b = getattr(mesh, name), getattr(alone, name)
            assert (a is None and b is None) or (a.dtype == b.dtype and a.tobytes() == b.tobytes()), name


def test_an_error_in_a_block_read_later_is_still_the_first_error_reported() -> None:
    meshes = _many_meshes(np.random.default_rng(6), 6)
    bad_block = meshes[2].replace(b"\n}\n}", b" 77 0,0\n}\n}", 1)  # a face line too long, in mesh 2's faces
    later_error = b'mesh "X" { 0,0,0 0,0,0 1,1,1 30 1 materials 1 { oops } }\n'
    text = b"QMAP TMP 10\nobjects {\n" + b"".join([*meshes[:2], bad_block, *meshes[3:], later_error]) + b"}\n"
    with pytest.raises(QmapError) as caught:
        parse_tmp(text)
    line = text[: text.index(b" 77 0,0")].count(b"\n") + 1
    assert f":{line}:" in str(caught.value) and "'77'" in str(caught.value)


HEAD_VARIANTS = [
    b'"P" { 0,0,0 0,0,0 1,1,1 30 1 materials 1 { "M" }',
    b'"P"{0,0,0\n0,0,0\n1,1,1\n30\n1\nmaterials 1{"M"}',  # no blanks where none are needed
    b'"P" { 0,0,0 /* c */ 0,0,0 1,1,1 30 1 materials 1 { "M" }',  # a comment: the tokenizer's way
    b'"P\\x41" { 0,0,0 0,0,0 1,1,1 30 1 materials 1 { "M\\"" }',  # escapes
    b'"P" { +0.,1e0,2d0 0,0,0 1,1,1 30 0x1 materials 0x1 { "M" }',  # number spellings
    b'"P" { 0,0,0 0,0,0 1,1,1 30.0 materials 1 { "M" }',  # has_uv missing: no token may be split in two
    b'"P" { 0,0,0 0,0,0 1,1,1 30 1.5 materials 1 { "M" }',  # a float where an integer must be
    b'"P" { 0,0,0 0,0,0 1,1,1 30 1 materials 99999 { "M" }',  # a count the file cannot hold
    b'"P" { 0,0,0 0,0,0 1,1,1 3-0 1 materials 1 { "M" }',  # a number token the conversion refuses
]


@pytest.mark.parametrize("head", HEAD_VARIANTS)
def test_quick_mesh_heads_read_like_the_tokenizer(monkeypatch: pytest.MonkeyPatch, head: bytes) -> None:
    from qmap_compiler import tmp_parser

    text = (b"QMAP TMP 10\nobjects {\n mesh " + head + b" " + SQUARE + b" faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 }"
            b" }\n}\n")  # fmt: skip

    def outcome() -> object:
        try:
            mesh = parse_tmp(text).meshes[0]
        except QmapError as error:
            return str(error)
        return (mesh.name, mesh.position, mesh.orientation, mesh.size, mesh.auto_smooth_angle, mesh.has_uv,
                mesh.materials, mesh.material_pos)  # fmt: skip

    quick = outcome()
    monkeypatch.setattr(tmp_parser, "_quick_mesh_head", lambda tokens: None)
    assert quick == outcome()


MATERIAL_LISTS = [
    b'materials 3 { "A" "B"\n\t"C" }',
    b'materials 3 {"A""B""C"}',  # no blanks between the strings
    b'materials 3 { "A" "B\\"" "C" }',  # an escape: the tokenizer's way
    b'materials 3 { "A" /* c */ "B" "C" }',  # a comment
    b'materials 2 { "A" "B" "C" }',  # more strings than counted
    b'materials 3 { "A" "B" }',  # fewer
    b'materials 0 { }',
]


@pytest.mark.parametrize("materials", MATERIAL_LISTS)
def test_repeated_material_lists_read_like_one_string_at_a_time(monkeypatch: pytest.MonkeyPatch,
                                                                 materials: bytes) -> None:
    from qmap_compiler import tmp_parser

    def mesh(name: bytes) -> bytes:
        return (b"mesh \"" + name + b"\" { 0,0,0 0,0,0 1,1,1 30 1 " + materials + b" " + SQUARE
                + b" faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 } }\n")  # fmt: skip

    text = b"QMAP TMP 10\nobjects {\n" + mesh(b"P") + b"  " + mesh(b"Q") + mesh(b"R") + b"}\n"

    def outcome() -> object:
        try:
            return [(parsed.materials, parsed.material_pos) for parsed in parse_tmp(text).meshes]
        except QmapError as error:
            return str(error)

    run = outcome()
    monkeypatch.setattr(tmp_parser, "_quick_string_run", lambda count: re.compile(b"(?!)"))
    assert run == outcome()


TAIL_VARIANTS = [
    b'} vertices 4 { 0,0,0 1,0,0 1,1,0 0,1,0 } faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 } }',
    b'}vertices 4{0,0,0 1,0,0 1,1,0 0,1,0}faces 1{4 0 0 0 0,0 1 1,0 2 1,1 3 0,1}}',  # no blanks where none needed
    b'}\r\n\tvertices\t4\r\n{ 0,0,0 1,0,0 1,1,0 0,1,0 }\n\tfaces 1\n{ 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 }\n}',
    b'} /* c */ vertices 4 { 0,0,0 1,0,0 1,1,0 0,1,0 } faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 } // c\n}',
    b'} vertices 4 { 0,0,0 1,0,0 1,1,0 0,1,0 /* c */ } faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 // c\n} }',
    b'} vertices 0x4 { 0,0,0 1,0,0 1,1,0 0,1,0 } faces 01 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 } }',  # number spellings
    b'} vertices 4.0 { 0,0,0 1,0,0 1,1,0 0,1,0 } faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 } }',  # a float count
    b'} vertices 99999 { 0,0,0 1,0,0 1,1,0 0,1,0 } faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 } }',  # too many
    b'} vertices 4 { 0,0,0 1,0,0 1,1,0 0,1,0 } faces 1-1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 } }',  # refused number
    b'} vertices4 { 0,0,0 1,0,0 1,1,0 0,1,0 } faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 } }',  # one word
    b'} vertices 4 0,0,0 1,0,0 1,1,0 0,1,0 } faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 } }',  # no brace
    b'} vertices 4 { 0,0,0 1,0,0 1,1,0 0,1,0 } faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 } ',  # the mesh not closed
    b'} vertices 4 { 0,0,0 1,0,0 1,1,0 0,1,0 } faces 2 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 } }',  # fewer faces
    b'} faces 1 { 4 0 0 0 0,0 1 1,0 2 1,1 3 0,1 } }',  # no vertex block
]


@pytest.mark.parametrize("tail", TAIL_VARIANTS)
def test_quick_mesh_tails_read_like_the_tokenizer(monkeypatch: pytest.MonkeyPatch, tail: bytes) -> None:
    from qmap_compiler import tmp_parser

    mesh = b'mesh "P" { 0,0,0 0,0,0 1,1,1 30 1 materials 1 { "M" ' + tail + b"\n"
    text = b"QMAP TMP 10\nobjects {\n" + mesh + mesh.replace(b'"P"', b'"Q"') + b"}\n"

    def outcome() -> object:
        try:
            return [(parsed.vertices.tobytes(), parsed.face_indices.tobytes(), parsed.face_uvs.tobytes())
                    for parsed in parse_tmp(text).meshes]  # fmt: skip
        except QmapError as error:
            return str(error)

    quick = outcome()
    never = re.compile(b"(?!)")
    for pattern in ("_QUICK_VERTICES_HEAD", "_QUICK_FACES_HEAD", "_QUICK_MESH_END"):
        monkeypatch.setattr(tmp_parser, pattern, never)
    assert quick == outcome()


@pytest.mark.parametrize("blocks", [b"vertices 0 {} faces 0 {}", b"vertices 0 { } faces 0 {\n}"])
def test_empty_blocks_with_or_without_blanks_give_empty_meshes(blocks: bytes) -> None:
    mesh = b'mesh "E" { 0,0,0 0,0,0 1,1,1 30 1 materials 1 { "M" } ' + blocks + b" }\n"
    document = parse_tmp(b"QMAP TMP 10\nobjects {\n" + mesh + mesh.replace(b'"E"', b'"F"') + b"}\n")
    for parsed in document.meshes:
        assert parsed.vertices.shape == (0, 3) and parsed.face_indices.shape == (0, 4)


def _per_number_text(mesh: object, float_format: str) -> list[str]:
    """Vertex and face lines of a mesh, one Python formatting per number (the layout of spec section 5.4)."""
    vertices = [f"\t\t\t{float_format},{float_format},{float_format}" % tuple(map(float, row))
                for row in mesh.vertices]  # type: ignore[attr-defined]  # fmt: skip
    faces = []
    for face, size in enumerate(mesh.face_sizes):  # type: ignore[attr-defined]
        corners = []
        for corner in range(size):
            text = f" {mesh.face_indices[face][corner]}"  # type: ignore[attr-defined]
            if mesh.face_uvs is not None:  # type: ignore[attr-defined]
                u, v = (float(x) for x in mesh.face_uvs[face][corner])  # type: ignore[attr-defined]
                text += f" {float_format % u},{float_format % v}"
            corners.append(text)
        head = f"\t\t\t{size} {mesh.face_materials[face]} {int(mesh.face_smooth[face])}"  # type: ignore[attr-defined]
        faces.append(head + "".join(corners))
    return vertices + faces


@pytest.mark.parametrize("threads", [False, True], ids=["in turn", "on threads"])
@pytest.mark.parametrize("float_format", ["%.9g", "%f"])
def test_tables_are_written_as_one_formatting_per_number_would(monkeypatch: pytest.MonkeyPatch,
                                                               float_format: str, threads: bool) -> None:  # fmt: skip
    from qmap_compiler import parallel, text_writer
    from qmap_compiler.tmp_parser import MeshObject, TmpDocument

    monkeypatch.setattr(text_writer, "_ROWS_PER_PIECE", 7)  # tables cut into pieces mid-way
    if threads:  # (on any machine)
        monkeypatch.setattr(text_writer, "_PIECES_FOR_THREADS", 2)
        monkeypatch.setattr(parallel, "cores", lambda: 3)
    rng = np.random.default_rng(5)
    awkward = np.float32([0.0, -0.0, 1e-30, -1e-7, 3e38, 123456789, 0.1, -2.5, 1e-45])
    vertices = rng.choice(np.concatenate([awkward, rng.normal(size=20).astype(np.float32)]), (40, 3))
    sizes = rng.choice([3, 4], 30).astype(np.int8)
    indices = rng.integers(0, 40, (30, 4)) * rng.choice([1, 1000, 10**9], (30, 4))
    uvs = rng.choice(awkward, (30, 4, 2))
    materials = rng.integers(-12, 40, 30)  # negative slots are out of range, but written as they are
    mesh = MeshObject(b"m", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (1.0, 1.0, 1.0), 0.5, True, [b"a"], [0],
                      vertices, sizes, materials, rng.random(30) < 0.5, indices, uvs)  # fmt: skip
    document = TmpDocument()
    document.meshes.append(mesh)
    lines = format_tmp(document, float_format, b"\n").decode().split("\n")
    start = lines.index("\t\tvertices 40 {") + 1
    written = lines[start : start + 40] + lines[start + 42 : start + 72]
    assert written == _per_number_text(mesh, float_format)


def _large_mesh(rng: np.random.Generator, twist: str) -> bytes:
    """A mesh with blocks of a few hundred lines; `twist` breaks the one-row-per-line layout somewhere."""
    count, face_count = 300, 200
    numbers = [n for n in _number_spellings(rng, 3 * count) if b"d" not in n.lower()]
    numbers = (numbers * 3)[: 3 * count]
    rows = [b",".join(numbers[i : i + 3]) for i in range(0, len(numbers), 3)]
    lines = [b"%d %d 1 " % (size, rng.integers(2)) + b" ".join(b"%d %g,%g" % (rng.integers(count), *rng.random(2))
             for _ in range(size)) for size in rng.integers(3, 5, face_count)]  # fmt: skip
    if twist == "vertex over two lines":
        rows[150] = rows[150].replace(b",", b",\n", 1)
    elif twist == "two faces on one line":
        lines[100:102] = [lines[100] + b" " + lines[101]]
    elif twist == "one face too few":
        lines.pop()
    elif twist == "index out of range":
        lines[120] = lines[120].replace(b"1 ", b"1 %d " % count, 1)
    vertices = b"vertices %d {\n" % count + b"\n".join(rows) + b"\n}"
    faces = b"faces %d {\n" % face_count + b"\n".join(lines) + b"\n}"
    return b"QMAP TMP 10\nobjects {\n" + _mesh_block(0, vertices, faces, True) + b"}\n"


def _read(text: bytes) -> object:
    try:
        mesh = parse_tmp(text).meshes[0]
    except QmapError as error:
        return str(error)
    return [getattr(mesh, name).tobytes() for name in ("vertices", "face_uvs", "face_indices", "face_sizes",
                                                           "face_materials", "face_smooth")]  # fmt: skip


@pytest.mark.parametrize("twist", ["none", "vertex over two lines", "two faces on one line", "one face too few",
                                   "index out of range"])  # fmt: skip
def test_large_blocks_read_in_parts_match_blocks_read_whole(monkeypatch: pytest.MonkeyPatch, twist: str) -> None:
    from qmap_compiler import blockscan

    text = _large_mesh(np.random.default_rng(8), twist)
    whole = _read(text)
    for part_bytes in (1, 7, 40, 333):
        monkeypatch.setattr(blockscan, "_PART_BYTES", part_bytes)  # parts of a line each, or of many lines
        assert _read(text) == whole, part_bytes
    assert isinstance(whole, str) == (twist in ("one face too few", "index out of range"))


def test_plain_decimal_mesh_heads_read_as_token_by_token() -> None:
    """A head of plain decimals is converted all at once; with one exponent among them, token by token: the same
    float32 values either way."""
    from qmap_compiler import parse_tmp

    numbers = ["1.", "+3.25", "-0.000", "123456789.123456789", "0.1", "-7", "16777217", "0.30000001192092896",
               "340282346638528859811704183484516925440.0"[:30], "30"]  # fmt: skip

    def head(words: list[str]) -> bytes:
        return (f'QMAP TMP 10\nobjects {{\n mesh "M" {{ {words[0]},{words[1]},{words[2]} {words[3]},{words[4]},'
                f"{words[5]} {words[6]},{words[7]},{words[8]} {words[9]} 0 materials 0 {{ }}\n"
                "  vertices 0 { }\n  faces 0 { }\n }\n}\n").encode()

    quick = parse_tmp(head(numbers)).meshes[0]
    slow = parse_tmp(head([*numbers[:9], "3e1"])).meshes[0]
    for field in ("position", "orientation", "size"):
        assert [np.float32(v).tobytes() for v in getattr(quick, field)] == [
            np.float32(v).tobytes() for v in getattr(slow, field)]
    assert quick.auto_smooth_angle == slow.auto_smooth_angle == 30.0


def _token_spans(text: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    words = text.split(b" ")
    starts = np.cumsum([0] + [len(word) + 1 for word in words[:-1]])
    return np.frombuffer(text, np.uint8), starts, starts + np.array([len(word) for word in words])


def test_quick_number_columns_read_as_the_general_columns() -> None:
    """The %f and plain-integer shortcuts of the block scanner give what the column-by-column reading gives, and
    leave every other spelling to it."""
    from qmap_compiler import blockscan

    rng = np.random.default_rng(3)
    words = _number_spellings(rng, 3000) + [f"{v:f}".encode() for v in rng.standard_normal(2000) * 1e4]
    words += [b"1.000000", b"-0.000000", b"123456789012.123456", b"1234567890123.123456", b"1.2.3456",
              b"--1.000000", b"+1.000000", b".123456", b"1.", b"0", b"07", b"10", b"4294967295", b"4294967296",
              b"12345678901", b"-3", b"1e5", b"9", b"1,000000", b"123456"]  # fmt: skip
    block, starts, ends = _token_spans(b" ".join(words))
    mantissa, after_point, valid, negative = blockscan._digit_columns(block, starts, ends)
    quick, shaped, quick_negative = blockscan._six_decimal_columns(block, starts, ends)
    assert np.array_equal(quick_negative, negative)
    assert shaped.sum() > 2000 and not (shaped & ~valid).any()
    assert np.array_equal(quick[shaped], mantissa[shaped]) and (after_point[shaped] == 6).all()
    short, short_after_point, short_shaped, short_negative = blockscan._short_decimal_columns(block, starts, ends)
    assert np.array_equal(short_negative, negative) and short_shaped.sum() > 3000 and not (short_shaped & ~valid).any()
    assert np.array_equal(short[short_shaped], mantissa[short_shaped])
    assert np.array_equal(short_after_point[short_shaped], after_point[short_shaped])
    tokens = blockscan._Tokens(block, starts, ends, np.zeros(len(words), np.bool_))
    values, read = blockscan._doubles(tokens, starts, ends)
    assert [float(word) for word, ok in zip(words, read, strict=True) if ok] == values[read].tolist()
    assert not read[[w in (b"1.2.3456", b"--1.000000") for w in words]].any()
    uints, plain = blockscan._plain_uints(tokens, starts, ends)
    expected = [w.isdigit() and (w[:1] != b"0" or len(w) == 1) and int(w) <= 0xFFFFFFFF for w in words]
    assert plain.tolist() == expected
    assert uints[plain].tolist() == [int(w) for w, ok in zip(words, expected, strict=True) if ok]


def test_six_decimal_tokens_read_by_words_match_the_general_columns() -> None:
    """printf %f tokens, read with their units, point and decimals as one word: their shape is exactly
    `-?digits{1,12}.dddddd` and their digits those of the general digit columns; near misses (a byte off, a digit
    too many or too few, other number characters anywhere) are told apart."""
    from qmap_compiler import blockscan

    rng = np.random.default_rng(21)
    alphabet = np.frombuffer(b"0123456789+-.eE", np.uint8)
    words = [b"%.6f" % value for value in rng.standard_normal(3000) * 10.0 ** rng.integers(-3, 14, 3000)]
    words += [b"1.23456", b"1.2345678", b"12.3456.", b".1234567", b"-.123456", b"+1.000000", b"0.00000e",
              b"1234567890123.000000", b"123456789012.999999", b"-999999999999.999999", b"0.000000", b"9.99999",
              b"1:000000", b"1.12345?", b"/.123456", b"1.\xff23456", b"\xfa.123456"]  # fmt: skip
    for _ in range(3000):  # %f spellings with one byte changed, and random runs of number characters
        word = bytearray(words[int(rng.integers(0, 3000))])
        word[int(rng.integers(0, len(word)))] = int(rng.choice(alphabet))
        words += [bytes(word), bytes(rng.choice(alphabet, int(rng.integers(1, 22))))]
    text = b" ".join(words)
    block = np.frombuffer(text, np.uint8)
    starts = np.cumsum([0] + [len(word) + 1 for word in words[:-1]])
    ends = starts + np.array([len(word) for word in words])
    mantissa, shaped, negative = blockscan._six_decimal_columns(block, starts, ends)
    expected_shape = np.array([re.fullmatch(rb"-?[0-9]{1,12}\.[0-9]{6}", word) is not None for word in words])
    assert np.array_equal(shaped, expected_shape) and 3000 < shaped.sum() < len(words)
    general, after_point, valid, general_negative = blockscan._digit_columns(block, starts, ends)
    assert valid[shaped].all() and (after_point[shaped] == 6).all()
    assert np.array_equal(mantissa[shaped], general[shaped]) and np.array_equal(negative, general_negative)


def test_short_decimal_tokens_read_by_words_match_the_general_columns() -> None:
    """Tokens of at most 16 characters after the sign, read as two words (%.9g and %f spellings, as exporters
    write floats): their shape is exactly `[+-]?` then digits with at most one point, a digit at least, and their
    digits and decimals those of the general digit columns; near misses (a byte off, a point too many, a
    character too many, other number characters or other bytes anywhere, a token in the block's first 16 bytes)
    are told apart."""
    from qmap_compiler import blockscan

    rng = np.random.default_rng(21)
    alphabet = np.frombuffer(b"0123456789+-.eE", np.uint8)
    scales = 10.0 ** rng.integers(-9, 15, 3000)
    words = [b"%.9g" % value for value in (rng.standard_normal(3000) * scales).astype(np.float32)]
    words += [b"%.6f" % value for value in rng.standard_normal(3000) * scales]
    words += [b"0", b"1.", b".5", b"-.5", b"-.", b".", b"-", b"+", b"+1.5", b"1.2.3", b"--1", b"-+1", b"12.3456.",
              b"1234567890123456", b"12345678901234567", b"123456789012345.6", b"1234567890123456.",
              b"-.123456789012345", b"9007199254740993", b"0.000000000000001", b"1:000000", b"1.12345?", b"/.123456",
              b"1.\xff23456", b"\xfa.123456", b"9" * 16, b"9" * 17]  # fmt: skip
    for _ in range(4000):  # spellings with one byte changed, and random runs of number characters and of bytes
        word = bytearray(words[int(rng.integers(0, 6000))])
        word[int(rng.integers(0, len(word)))] = int(rng.choice(alphabet))
        words += [bytes(word), bytes(rng.choice(alphabet, int(rng.integers(1, 22))))]
        words.append(bytes(rng.integers(0, 256, int(rng.integers(1, 19)), dtype=np.uint8)).replace(b" ", b"0"))
    block, starts, ends = _token_spans(b" ".join(words))
    mantissa, after_point, shaped, negative = blockscan._short_decimal_columns(block, starts, ends)
    shapes = [re.fullmatch(rb"[+-]?(?=[0-9.]{1,16}$)[0-9]*\.?[0-9]*", word) and re.search(rb"[0-9]", word)
              for word in words]  # fmt: skip
    expected_shape = np.array([shape is not None for shape in shapes]) & (ends >= 16)
    assert np.array_equal(shaped, expected_shape) and 5000 < shaped.sum() < len(words)
    general, general_after_point, valid, general_negative = blockscan._digit_columns(block, starts, ends)
    assert valid[shaped].all() and np.array_equal(after_point[shaped], general_after_point[shaped])
    assert np.array_equal(mantissa[shaped], general[shaped]) and np.array_equal(negative, general_negative)
