"""Mutation fuzzing: whatever bytes the parsers, the compiler and the `.qmap` reader get, only QmapError escapes.

Seeded, so a failure names the exact mutation. IOGF_FUZZ_COUNT sets the number of mutations per target.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from qmap_compiler import QmapError, compile_bytes, read_qmap
from tests.sample_paths import sample_dir

COUNT = int(os.environ.get("IOGF_FUZZ_COUNT", "1200"))
TOKENS = [b"{", b"}", b'"', b"\\", b"\\\n", b"/*", b"//", b",", b".", b"-", b"+", b"0x", b"0", b"08", b"1e39",
          b"4", b"3", b"99999999", b"4294967296", b"\xff", b"\r", b"\n", b" ", b";", b"skip", b"tex", b"gen",
          b"lattice", b"mesh", b"lamp", b"faces", b"\x00"]


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to three random edits: byte flips, insertions of random or grammar-relevant bytes, cuts, copies."""
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(buffer) + 1)
        action = rng.randrange(6)
        if action == 0 and buffer:
            buffer[min(at, len(buffer) - 1)] = rng.randrange(256)
        elif action == 1:
            buffer[at:at] = rng.choice(TOKENS)
        elif action == 2:
            del buffer[at : at + rng.randint(1, 16)]
        elif action == 3 and buffer:
            start = rng.randrange(len(buffer))
            buffer[at:at] = buffer[start : start + rng.randint(1, 64)]
        elif action == 4:
            del buffer[at:]
        else:
            buffer[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
    return bytes(buffer)


def _run(target: Callable[[bytes], object], seeds: list[bytes], label: str) -> None:
    rng = random.Random(f"qmap-fuzz-{label}")
    failures = []
    for number in range(COUNT):
        mutated = mutate(seeds[number % len(seeds)], rng)
        try:
            target(mutated)
        except QmapError:
            pass
        except Exception as error:
            failures.append(f"{label} mutation {number}: {type(error).__name__}: {error} input={mutated[:200]!r}")
    assert not failures, "\n".join(failures[:5])


def _files(suffix: str) -> list[bytes]:
    folder = sample_dir("qmap/tools_exe/cases")
    small = [p for p in sorted(folder.glob(f"*{suffix}")) if p.stat().st_size < 8000]
    return [p.read_bytes() for p in small]


def test_fuzz_tmp_parser_and_compiler() -> None:
    _run(compile_bytes, _files(".qmap.tmp"), "tmp")


def test_fuzz_desc_parser_with_compile() -> None:
    tmp = (sample_dir("qmap/tools_exe/cases") / "c04_desc.qmap.tmp").read_bytes()
    _run(lambda desc: compile_bytes(tmp, desc), _files(".qmap.desc"), "desc")


def test_fuzz_qmap_reader() -> None:
    seeds = _files(".qmap")
    _run(read_qmap, seeds, "qmap")


@pytest.mark.parametrize("name", ["Quad", "Example"])
def test_mutations_are_actually_detected(name: str, tmp_path: Path) -> None:
    """Sanity check of the harness: a cut in the middle of a file is always reported as QmapError."""
    folder = sample_dir("qmap/tools_exe/cases")
    with pytest.raises(QmapError):
        compile_bytes((folder / f"{name}.qmap.tmp").read_bytes()[:100])
    with pytest.raises(QmapError):
        read_qmap((folder / f"{name}.qmap").read_bytes()[:100])
