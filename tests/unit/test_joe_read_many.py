"""Files read together (joe.read_many, a track pack's members) give exactly the documents, warnings and errors
of each file read alone."""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest

from formats import joe
from formats.errors import FormatError
from tests import joe_fixtures as fx
from tests.mutations import mutate


def _valid_files() -> list[bytes]:
    cube = fx.cube_bytes()
    two_frames = joe.JoeDocument([fx.cube_frame(), fx.cube_frame()])
    return [
        cube,
        fx.cube_bytes(with_texcoords=False),
        joe.write_joe(fx.clockwise_cube()),
        joe.write_joe(fx.dof2joe_cube()),
        joe.write_joe(fx.perpendicular_normals_cube()),
        joe.write_joe(fx.cube(magic=0x12345678)),
        joe.write_joe(two_frames),
        cube + b"\0" * 7,  # (trailing bytes)
        cube[:4] + struct.pack("<I", 4) + cube[8:],  # (another version: an error)
        cube[:-5],  # (cut short: an error)
    ]


def _outcome(read: object) -> object:
    """The documents' every array (bytes, type, shape) and message, or the error's text and place."""
    try:
        documents = read() if callable(read) else read
    except FormatError as error:
        return ("error", error.message, error.path, error.offset)
    assert isinstance(documents, list)
    return [(document.magic, document.warnings, document.notes, [
        [(name, array.dtype.str, array.shape, array.tobytes()) for name, array in vars(frame).items()]
        for frame in document.frames]) for document in documents]  # fmt: skip


def _one_at_a_time(files: list[tuple[bytes, str]]) -> list[joe.JoeDocument]:
    return [joe.read_joe(data, path) for data, path in files]


def _readable(data: bytes) -> bool:
    try:
        joe.read_joe(data)
    except FormatError:
        return False
    return True


@pytest.mark.parametrize("seed", range(40))
def test_files_read_together_match_files_read_alone(seed: int) -> None:
    """Half the packs hold only files that read (mutants among them: other numbers, counts, trailing bytes), half
    any file (the first that cannot be read raises)."""
    rng = random.Random(seed)
    valid = _valid_files()
    with np.errstate(all="ignore"):
        mutants = [mutate(rng.choice(valid), rng) for _ in range(40)]
        pool = [data for data in valid + mutants if seed % 2 or _readable(data)]
        files = [(rng.choice(pool), f"pack.jpk:m{index}.joe") for index in range(rng.randrange(1, 40))]
        expected = _outcome(lambda: _one_at_a_time(files))
        assert _outcome(lambda: joe.read_many(files)) == expected
    assert isinstance(expected, list) or seed % 2


@pytest.mark.parametrize(("kind", "at"), [("vertex", 0), ("normal", 6), ("texcoord", 12)])
def test_out_of_range_indices_raise_for_the_first_file_that_has_them(kind: str, at: int) -> None:
    good = fx.cube_bytes()
    bad = bytearray(good)
    bad[16 + 18 + at : 18 + 18 + at] = struct.pack("<H", 999)  # (the second face's first index of the kind)
    files = [(good, "a"), (bytes(bad), "b"), (good, "c"), (bytes(bad), "d")]
    with pytest.raises(FormatError) as raised:
        joe.read_many(files)
    assert raised.value.path == "b" and f"{kind} index 999" in raised.value.message
    assert _outcome(joe.read_many([(good, "a"), (good, "c")])) == _outcome(_one_at_a_time([(good, "a"),
                                                                                          (good, "c")]))  # fmt: skip
