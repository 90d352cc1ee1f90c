"""Structure-aware fuzzing (tests/mutations.py): line-level edits of the text formats and count edits of JOE keep
the files well formed enough to reach the checks past the tokenizers. Whatever comes out, the readers and what the
importers run on their documents raise nothing but FormatError."""

from __future__ import annotations

import contextlib
import random
import struct
from collections.abc import Callable

import numpy as np
import pytest

from formats import iqe, joe
from formats.errors import FormatError
from formats.smd import dense_skeleton, read_smd, read_vta, write_smd
from qmap_compiler import QmapError, compile_bytes
from tests import joe_fixtures as fx
from tests.mutations import fuzz_count, mutate_counts, mutate_structure
from tests.sample_paths import sample_files

SMD_FIXTURE = b"""version 1
nodes
0 "root" -1
1 "arm" 0
end
skeleton
time 0
0 0.000000 0.000000 0.000000 0.000000 0.000000 0.000000
1 1.000000 0.000000 0.000000 0.000000 0.000000 1.570796
time 2
1 1.000000 2.000000 0.000000 0.000000 0.000000 0.000000
end
triangles
stone
0 0.000000 0.000000 0.000000 0.000000 0.000000 1.000000 0.000000 0.000000 2 0 0.5 1 0.5
0 1.000000 0.000000 0.000000 0.000000 0.000000 1.000000 1.000000 0.000000 1 1 1.0
1 0.000000 1.000000 0.000000 0.000000 0.000000 1.000000 0.000000 1.000000
wood
0 0.000000 0.000000 1.000000 0.000000 0.000000 1.000000 0.000000 0.000000
0 1.000000 0.000000 1.000000 0.000000 0.000000 1.000000 1.000000 0.000000
0 0.000000 1.000000 1.000000 0.000000 0.000000 1.000000 0.000000 1.000000
end
"""
VTA_FIXTURE = b"""version 1
nodes
0 "root" -1
end
skeleton
time 0
time 1
end
vertexanimation
time 0
0 0.000000 0.000000 0.000000 0.000000 0.000000 1.000000
1 1.000000 0.000000 0.000000 0.000000 0.000000 1.000000
time 1
1 1.000000 0.500000 0.000000 0.000000 0.000000 1.000000
end
"""
IQE_FIXTURE = b"""# Inter-Quake Export
joint "root" -1
pq 0 0 0 0 0 0 1
joint "tip" 0
pq 0 1 0 0 0 0 1
mesh "body"
material "skin"
vp 0 0 0
vt 0 0
vn 0 0 1
vb 0 1
vp 1 0 0
vt 1 0
vn 0 0 1
vb 1 0.5 0 0.5
vp 0 1 0
vt 0 1
vn 0 0 1
vb 1 1
fm 0 1 2
animation "wave"
framerate 30
frame
pq 0 0 0 0 0 0 1
pq 0 1 0 0 0 0.7071 0.7071
"""
QMAP_FIXTURE = b"""QMAP TMP 10
objects {
  mesh "Room" {
    0,0,0
    0,0,0
    1,1,1
    30
    1
    materials 2 { "stone" "wood" }
    vertices 4 {
      0,0,0
      1,0,0
      1,1,0
      0,1,0
    }
    faces 2 {
      3 0 1 0 0,0 1 1,0 2 1,1
      4 1 0 0 0,0 1 1,0 2 1,1 3 0,1
    }
  }
}
"""


def smd_steps(data: bytes) -> None:
    document = read_smd(data, "mutant.smd")
    if document.is_animation:
        dense_skeleton(document)
    with contextlib.suppress(FormatError):  # what was accepted is written, or refused cleanly
        write_smd(document)


def run(seeds: list[bytes], steps: Callable[[bytes], object], count: int, seed: int, errors: tuple[type, ...]) -> None:
    rng = random.Random(seed)
    accepted = rejected = 0
    with np.errstate(all="ignore"):
        for index in range(count):
            mutant = mutate_structure(seeds[index % len(seeds)], rng)
            try:
                steps(mutant)
                accepted += 1
            except errors:
                rejected += 1
    assert accepted and rejected  # both outcomes reached: the test exercises the checks and the happy path


SMD_SEEDS = [SMD_FIXTURE, SMD_FIXTURE.replace(b"\n", b"\r\n")] + [
    p.read_bytes() for p in sample_files("smd", ".smd") if p.stat().st_size < 200_000
]


def test_smd_structure_mutants_raise_only_format_error() -> None:
    run(SMD_SEEDS, smd_steps, fuzz_count(1500), 11, (FormatError,))


def test_vta_structure_mutants_raise_only_format_error() -> None:
    vta_seeds = [VTA_FIXTURE] + [p.read_bytes() for p in sample_files("smd", ".vta")]
    run(vta_seeds, lambda data: read_vta(data, "mutant.vta"), fuzz_count(800), 12, (FormatError,))


def test_iqe_structure_mutants_raise_only_format_error() -> None:
    def steps(data: bytes) -> None:
        document = iqe.read_iqe(data, "mutant.iqe")
        with contextlib.suppress(FormatError):
            iqe.write_iqe(document)

    run([IQE_FIXTURE], steps, fuzz_count(1500), 13, (FormatError,))


def test_qmap_tmp_structure_mutants_raise_only_qmap_error() -> None:
    run([QMAP_FIXTURE], lambda data: compile_bytes(data), fuzz_count(600), 14, (QmapError,))


def joe_count_offsets(data: bytes) -> list[int]:
    """Where the header's face and frame counts and frame 0's vertex, texcoord and normal counts are."""
    face_count = struct.unpack_from("<I", data, 8)[0]
    counts = joe.HEADER.size + face_count * joe.FACE_DTYPE.itemsize
    return [8, 12, counts, counts + 4, counts + 8]


@pytest.mark.parametrize("with_texcoords", [True, False])
def test_joe_count_mutants_raise_only_format_error(with_texcoords: bool) -> None:
    seed = fx.cube_bytes(with_texcoords=with_texcoords)
    rng = random.Random(15)
    outcomes = set()
    for _ in range(fuzz_count(1000)):
        mutant = mutate_counts(seed, joe_count_offsets(seed), rng)
        try:
            document = joe.read_joe(mutant)
            joe.importable_faces(document.first_frame, rewind_clockwise=True)
            outcomes.add("accepted")
        except FormatError:
            outcomes.add("rejected")
    assert outcomes == {"accepted", "rejected"}
