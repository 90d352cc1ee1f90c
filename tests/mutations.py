"""Seeded byte mutations for fuzzing readers: flips, extreme integers, truncation, insertion, deletion."""

from __future__ import annotations

import os
import random
import struct
from collections.abc import Iterator

EXTREME_U32 = (0, 1, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF)


def fuzz_count(default: int) -> int:
    """How many mutated inputs to try: IOGF_FUZZ_COUNT overrides (a longer run sets it higher)."""
    return int(os.environ.get("IOGF_FUZZ_COUNT", default))


def mutate(data: bytes, rng: random.Random) -> bytes:
    buffer = bytearray(data)
    for _ in range(rng.choice((1, 1, 1, 2, 3, 8))):
        kind = rng.randrange(6)
        position = rng.randrange(len(buffer)) if buffer else 0
        if kind == 0 and buffer:
            buffer[position] ^= 1 << rng.randrange(8)
        elif kind == 1 and len(buffer) >= 4:
            position = min(position, len(buffer) - 4) & ~3 if rng.random() < 0.7 else min(position, len(buffer) - 4)
            buffer[position : position + 4] = struct.pack("<I", rng.choice(EXTREME_U32))
        elif kind == 2:
            del buffer[position:]
        elif kind == 3:
            buffer[position:position] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
        elif kind == 4:
            del buffer[position : position + rng.randrange(1, 64)]
        elif buffer:
            buffer[position] = rng.choice(b"\0\xff \n\r\t\"-.0123456789eE#/;")
    return bytes(buffer)


def mutations(corpus: list[bytes], count: int, seed: int) -> Iterator[bytes]:
    rng = random.Random(seed)
    for index in range(count):
        yield mutate(corpus[index % len(corpus)], rng)
