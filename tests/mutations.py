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


# ---- structure-aware mutations: the file stays well formed line by line, so the mutants reach the checks past
# the tokenizer (counts, indices, block sizes, number ranges) that byte flips rarely get through.

EXTREME_NUMBERS = (b"0", b"-0", b"1", b"-1", b"255", b"256", b"65535", b"65536", b"2147483647", b"4294967296",
                   b"99999999999999999999", b"1e39", b"-1e39", b"1e-45", b"nan", b"inf", b"-inf", b"0.000001",
                   b"1.5", b"-7")  # fmt: skip


def _is_number(token: bytes) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def mutate_structure(data: bytes, rng: random.Random) -> bytes:
    """Whole-line and whole-token edits of a text file: numbers set to extremes, lines repeated, dropped or swapped,
    a line run repeated until its block grows past 256 KiB (the SMD reader's parsing segment), line endings
    switched, comments and blank lines added."""
    crlf = b"\r\n" in data
    lines = data.replace(b"\r\n", b"\n").split(b"\n")
    for _ in range(rng.choice((1, 1, 2, 3))):
        if not lines:
            break
        at = rng.randrange(len(lines))
        kind = rng.randrange(8)
        if kind <= 1:
            tokens = lines[at].split(b" ")
            numbers = [i for i, token in enumerate(tokens) if _is_number(token)]
            if numbers:
                tokens[rng.choice(numbers)] = rng.choice(EXTREME_NUMBERS)
                lines[at] = b" ".join(tokens)
        elif kind == 2:
            lines[at:at] = [lines[at]] * rng.randint(1, 3)
        elif kind == 3:
            del lines[at : at + rng.randint(1, 3)]
        elif kind == 4:
            other = rng.randrange(len(lines))
            lines[at], lines[other] = lines[other], lines[at]
        elif kind == 5 and rng.random() < 0.1:  # rare: a block past one parsing segment, its end at any byte
            run = lines[at : at + rng.randint(1, 2)]
            size = max(sum(len(line) + 1 for line in run), 1)
            lines[at:at] = run * ((1 << 18) // size + rng.randint(0, 3))
        elif kind == 6:
            lines.insert(at, rng.choice((b"", b"// comment", b"# note", b"; x", b"  \t ")))
        else:
            crlf = not crlf
    return (b"\r\n" if crlf else b"\n").join(lines)


def mutate_counts(data: bytes, offsets: list[int], rng: random.Random) -> bytes:
    """A binary file with one of its 32-bit counts or offsets (at the given byte offsets) set to a near or an
    extreme value: the reader must check it against the file's size before use."""
    buffer = bytearray(data)
    at = rng.choice(offsets)
    (value,) = struct.unpack_from("<I", buffer, at)
    choices = [value + 1, value - 1 if value else 1, value * 2, value // 2, *EXTREME_U32]
    struct.pack_into("<I", buffer, at, rng.choice(choices) & 0xFFFFFFFF)
    return bytes(buffer)
