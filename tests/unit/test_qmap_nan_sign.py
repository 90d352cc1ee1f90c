"""NaN sign bits as Tools.exe writes them (spec 13.1): an invalid operation makes the x87's 0xFFC00000, negation
flips a NaN's sign, and sin/cos of an infinite angle give 0x7FC00000. Checked against Tools.exe under Wine on
2026-11-25 for the inputs below."""

from __future__ import annotations

import numpy as np
import pytest

from qmap_compiler import compile_bytes, read_qmap

BASE = """QMAP TMP 10
objects {{
 mesh "Room" {{
 0,0,0
 {rotation}
 {size}
 30
 1
 materials 2 {{ "A" "B" }}
 vertices 4 {{ {vertices} }}
 faces 2 {{ 3 0 0 0 0,0 1 1,0 2 1,1 4 1 0 0 0,0 1 1,0 2 1,1 3 0,1 }}
 }}
}}
"""
POSITIVE_NAN, NEGATIVE_NAN = 0x7FC00000, 0xFFC00000
POSITION, NORMAL, TANGENT, BINORMAL = slice(0, 3), slice(3, 6), slice(8, 11), slice(11, 14)


def draw_bits(rotation: str, x: str, desc: str, size: str = "1,1,1", vertices: str = "") -> np.ndarray:
    tmp = BASE.format(rotation=rotation, size=size, vertices=vertices or f"0,0,0 {x},0,0 1,1,0 0,1,0").encode()
    model = read_qmap(compile_bytes(tmp, f"QMAP DESC 10\nmaterials {{\n {desc}\n}}\n".encode()))
    bits: np.ndarray = np.ascontiguousarray(model.draw_vertices, np.float32).view(np.uint32)
    return bits


@pytest.mark.parametrize("scale", ["1e39", "-1e39"])
def test_an_overflowing_texture_scale_gives_positive_nan_tangents(scale: str) -> None:
    bits = draw_bits("0,0,0", "1", f'"A" {{ tex scale {scale}; }}')
    first_face = bits[:3]  # material A's triangle
    assert (first_face[:, TANGENT] == POSITIVE_NAN).all() and (first_face[:, BINORMAL] == POSITIVE_NAN).all()
    assert not np.isnan(first_face[:, POSITION].view(np.float32)).any()


def test_an_infinite_rotation_gives_positive_nan_everywhere() -> None:
    bits = draw_bits("1e39,0,0", "1", '"A" { tex scale 2; }')
    for columns in (POSITION, NORMAL, TANGENT, BINORMAL):
        assert (bits[:, columns] == POSITIVE_NAN).all()


def test_a_degenerate_normal_is_the_x87_real_indefinite() -> None:
    bits = draw_bits("0,0,0", "1e39", '"A" { tex gen; }')
    assert (bits[:3, NORMAL] == NEGATIVE_NAN).all()


def test_texgen_from_an_overflowing_vertex_gives_positive_nan_tangents() -> None:
    bits = draw_bits("0,0,0", "1e39", '"A" { tex gen; }')
    assert (bits[:3, TANGENT] == POSITIVE_NAN).all()


# Where two NaNs meet, the x87 returns the positive one unless both are negative (numpy returns the first).
# Sign maps of Tools.exe's draw vertices under Wine (2026-11-25), one row per vertex, + 0x7FC00000,
# - 0xFFC00000, . a number; 103 of 300 such combinations differed before that rule, none after.
SIGN_MAPS = [
    ("0,0,0", "1,1,1", "0,0,0 1,0,0 1,1,0 0,1,1", '"A" { tex gen; tex scale -1e39; }',
     "........++++++ .......-++++++ ......--++++++ .............. .............. .............. .............."),
    ("0,0,0", "1e39,1,1", "0,0,0 1,0,0 1,1,0 0,1,1", '"A" { tex gen; tex scale -1e39; }',
     "--------++++++ --------++++++ --------++++++ ------..------ ------..------ ------..------ ------..------"),
    ("1e39,0,0", "1,-1e39,1", "0,0,0 1,0,0 1,1,0 0,1,1", '"B" { tex gen; }',
     "++++++..++++++ ++++++..++++++ ++++++..++++++ ++++++++++++++ ++++++++++++++ ++++++++++++++ ++++++++++++++"),
    ("0,0,1e39", "1e39,1,1", "0,0,0 -1e39,0,0 1,1e39,0 0,1,1", '"A" { tex gen; tex scale -1e39; }',
     "++++++++++++++ ++++++++++++++ ++++++++++++++ ++++++..++++++ ++++++..++++++ ++++++..++++++ ++++++..++++++"),
]


@pytest.mark.parametrize(("rotation", "size", "vertices", "desc", "expected"), SIGN_MAPS)
def test_nan_signs_where_nans_meet_match_tools_exe(rotation: str, size: str, vertices: str, desc: str,
                                                   expected: str) -> None:
    bits = draw_bits(rotation, "", desc, size=size, vertices=vertices)
    signs = np.where(bits == POSITIVE_NAN, "+", np.where(bits == NEGATIVE_NAN, "-", "."))
    assert " ".join("".join(row) for row in signs) == expected
