"""Mutation fuzz: seeded random byte edits of samples and fixtures; read_iqe may only raise FormatError.

The number of mutants comes from IOGF_FUZZ_COUNT (default 3000), spread over the seed files.
"""

from __future__ import annotations

import contextlib
import os
import random

import pytest

from formats.errors import FormatError
from formats.iqe import read_iqe, write_iqe
from tests.sample_paths import sample_files

FIXTURE = b"""# Inter-Quake Export
# fixture covering every command
vertexarray custom1 ubyte 2 "mask"
joint "root bone" -1
joint child 0
pq 0 0 1 0 0 0 -1
pm 0 1 0  1 0 0  0 1 0  0 0 1 1 1 1
smoothgroup 2
smoothangle 30
smoothuv 1
mesh "a mesh"
material "a material"
vp 0 0 0 1
vt 0 0
vn 0 0 1
vx 1 0 0 1
vb 0 1
vc 1 0 0 1
v1 0.5 0.5
vs 0
vp 1 0 0
vt 1 0
vn 0 0 1
vx 1 0 0 0 1 0
vb 0 0.5 1 0.5
vc 0 1 0
v1 1
vs 1
vp 1 1 0
vt 1 1
vn 0 0 1
vx 1 0 0 -1
vb 1 1
vc 0 0 1 1
v1 0 1
vs 2
vp 0 1 0
vt 0 1
vn 0 0 1
vx 1 0 0 1
vb 1 0.25 0 0.75
vc 1 1 1 1
v1 1 1
vs 3
fm 0 1 2 3
fs 1 1 0 1
fa -4 -2 -1
fs 0 0 0
animation "take one"
framerate 24
loop
frame
pq 0 0 1 0 0 0 -1
pa 0 1 0 0.1 0.2 0.3
frame
pq 0 0 1 0 0 0
animation
frame 0
pm 0 0 0 1 0 0 0 1 0 0 0 1
comment
free text
"""
SEEDS = [path.read_bytes() for path in sample_files("iqe", ".iqe")] + [FIXTURE, FIXTURE.replace(b"\n", b"\r\n")]
TOKENS = [b" ", b"\n", b"-", b"#", b'"', b"1e999", b"nan", b"999999", b"-7", b"frame\n", b"mesh x\n", b"\x00", b"\xff"]


def mutate(data: bytes, generator: random.Random) -> bytes:
    mutant = bytearray(data)
    for _ in range(generator.randint(1, 4)):
        position = generator.randrange(len(mutant) + 1)
        choice = generator.random()
        if choice < 0.3 and mutant:
            mutant[min(position, len(mutant) - 1)] = generator.randrange(256)
        elif choice < 0.5:
            del mutant[position : position + generator.randint(1, 40)]
        elif choice < 0.8:
            mutant[position:position] = generator.choice(TOKENS)
        else:
            start = generator.randrange(len(mutant) + 1)
            mutant[position:position] = mutant[start : start + generator.randint(1, 200)]
    return bytes(mutant)


def small_seed(data: bytes, generator: random.Random) -> bytes:
    """A window of a large sample (keeps the header) so that thousands of mutants stay fast."""
    if len(data) < 20000:
        return data
    lines = data.split(b"\n")
    start = generator.randrange(1, max(len(lines) - 200, 2))
    return b"\n".join([lines[0], *lines[start : start + 200]])


@pytest.mark.filterwarnings("error")  # numpy overflow warnings would mean a value escaped the checks
@pytest.mark.parametrize("seed_index", range(len(SEEDS)))
def test_mutants_raise_only_format_error(seed_index: int) -> None:
    total = int(os.environ.get("IOGF_FUZZ_COUNT", "3000"))
    generator = random.Random(1000 + seed_index)
    accepted = 0
    for _ in range(max(total // len(SEEDS), 1)):
        mutant = mutate(small_seed(SEEDS[seed_index], generator), generator)
        try:
            document = read_iqe(mutant, "mutant.iqe")
        except FormatError as error:
            assert error.line is None or error.line >= 1
            continue
        accepted += 1
        with contextlib.suppress(FormatError):  # what was accepted is written, or refused cleanly
            write_iqe(document)
    assert 0 < accepted < max(total // len(SEEDS), 1)  # the mutants exercise both outcomes
