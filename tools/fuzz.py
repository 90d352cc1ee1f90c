"""A timed fuzz pass over every reader: mutated inputs (byte edits, line edits, and the shapes of hostile input
that broke readers before: long runs of digits, huge integers, deep braces, many `$pushd`) go to each reader with a
time limit per input. An input is a failure when anything but the format's own error escapes, or when it runs
over its limit (one second plus one more per 256 KB: a linear reader needs milliseconds for a few KB).

    .venv/bin/python tools/fuzz.py [--count 20000] [--seed 1] [--readers iqe,smd,...] [--keep out/fuzz]

Prints, per reader: inputs tried, refused (the format's error), accepted, failures, and the slowest input in
seconds per KB (with its size). With --keep, every failing input and each reader's slowest are written there, to
be replayed. The seeds are the tests' fixtures and the shared samples under 64 KB (../shared/samples or
$IOGF_SAMPLES). Exit 1 if anything failed. Figures only: no file outside --keep is written.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS.parent))

from formats import iqe, iqm, joe, jpk  # noqa: E402
from formats.errors import FormatError  # noqa: E402
from formats.smd import dense_skeleton, load_qc, read_smd, read_vta  # noqa: E402
from qmap_compiler import QmapError, compile_bytes, read_qmap  # noqa: E402
from tests import joe_fixtures  # noqa: E402
from tests.mutations import mutate, mutate_structure  # noqa: E402
from tests.sample_paths import sample_dir  # noqa: E402
from tests.unit.test_iqe_fuzz import FIXTURE as IQE_RIG  # noqa: E402
from tests.unit.test_structured_fuzz import IQE_FIXTURE, SMD_FIXTURE, VTA_FIXTURE  # noqa: E402

SECONDS_PER_INPUT = 1.0
EXTRA_SECONDS_PER_BYTE = 1.0 / (256 << 10)
QC_FIXTURE = b"""$modelname "m.mdl"
$cd "."
$pushd "sub"
$popd
$definevariable dir "anims"
$definemacro seq name file \\\\
$sequence $name$ $file$ fps 30 { event 5004 1 "sound.wav" } \\\\

$body "body" "ref.smd"
$model "head" "ref.smd" { flexfile "ref.vta" { defaultflex frame 0 flex "a" frame 1 } }
$sequence idle "ref" loop fps 15 ACT_IDLE 1 blend "move_x" -1 1
$animation a_walk "$dir$/walk" fps 24 { ikrule rfoot footstep range 0 1 2 3 }
$seq run "anims/walk"
$collisionmodel "ref.smd" { $mass 10 }
"""


class Overtime(Exception):
    pass


@dataclass
class Tally:
    tried: int = 0
    refused: int = 0
    failures: list[tuple[str, bytes]] = field(default_factory=list)
    slowest: tuple[float, int, bytes] = (0.0, 0, b"")  # seconds per KB, bytes, the input


def hostile(data: bytes, rng: random.Random) -> bytes:
    """One of the shapes that once made readers super-linear or escape: a long run of digits (with a letter after
    it) at a word, a huge integer, thousands of braces or `$pushd` lines."""
    words = data.split(b" ")
    at = rng.randrange(len(words))
    kind = rng.randrange(4)
    if kind == 0:
        words[at] = b"1" * rng.randint(2000, 16000) + rng.choice((b"x", b".", b"e", b""))
    elif kind == 1:
        words[at] = rng.choice((b"-99999999999999999999", b"4294967296", b"9223372036854775808", b"1" * 400))
    elif kind == 2:
        words[at] = b"{" * rng.randint(1000, 20000) + b"}" * rng.randint(0, 3)
    else:
        words[at] = b'\n$pushd "a"' * rng.randint(100, 2000) + b"\n"
    return b" ".join(words)


def edited(data: bytes, rng: random.Random, binary: bool) -> bytes:
    roll = rng.random()
    if roll < 0.1:
        return hostile(data, rng)
    if roll < 0.45 and not binary:
        return mutate_structure(data, rng)
    return mutate(data, rng)


def qc_reader(folder: Path) -> Callable[[bytes], object]:
    """load_qc on a file in a folder holding the files the fixture names (a QC reads the files it names)."""
    for name in ("ref.smd", "ref.vta", "anims/walk.smd"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(SMD_FIXTURE)
    path = folder / "m.qc"

    def read(data: bytes) -> object:
        path.write_bytes(data)
        return load_qc(path)

    return read


def smd_reader(data: bytes) -> object:
    document = read_smd(data)
    return dense_skeleton(document)


def joe_reader(data: bytes) -> object:
    """The reader and what the importer runs on its document."""
    document = joe.read_joe(data)
    frame = document.first_frame
    joe.zero_non_finite(frame)
    joe.corner_data(frame, joe.importable_faces(frame, True))
    return joe.normal_swap_would_fire(document)


def samples(folder: str, *suffixes: str) -> list[bytes]:
    try:
        root = sample_dir(folder)
    except Exception:  # (the samples are optional: the fixtures alone seed the pass)
        return []
    return [p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and p.name.lower().endswith(suffixes)
            and p.stat().st_size < (64 << 10)]  # fmt: skip


def readers(scratch: Path) -> dict[str, tuple[Callable[[bytes], object], list[bytes], bool]]:
    """name -> (reader, seeds, binary)."""
    iqe_seeds = [IQE_FIXTURE, IQE_RIG, *samples("iqe", ".iqe")]
    iqm_seeds = [iqm.write_iqm(iqe.read_iqe(seed)) for seed in iqe_seeds[:3]]
    joe_seeds = [joe_fixtures.cube_bytes(), joe.write_joe(joe_fixtures.dof2joe_cube()), *samples("joe", ".joe")]
    qmap_cases = "qmap/tools_exe/cases"
    return {
        "iqe": (iqe.read_iqe, iqe_seeds, False),
        "iqm": (iqm.read_iqm, iqm_seeds, True),
        "smd": (smd_reader, [SMD_FIXTURE, *samples("smd", ".smd")], False),
        "vta": (read_vta, [VTA_FIXTURE, *samples("smd", ".vta")], False),
        "qc": (qc_reader(scratch), [QC_FIXTURE], False),
        "joe": (joe_reader, joe_seeds, True),
        "jpk": (jpk.read_jpk, [joe_fixtures.pack_of({"a.joe": seed}) for seed in joe_seeds[:3]], True),
        "qmap_tmp": (compile_bytes, samples(qmap_cases, ".qmap.tmp")[:8], False),
        "qmap": (read_qmap, samples(qmap_cases, ".qmap")[:8], True),
    }


def run_one(reader: Callable[[bytes], object], data: bytes) -> tuple[str | None, float]:
    """(None, or what failed; seconds) for one input under its time limit."""
    limit = SECONDS_PER_INPUT + len(data) * EXTRA_SECONDS_PER_BYTE

    def stop(_signal: int, _frame: object) -> None:
        raise Overtime

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, limit)
    started = time.perf_counter()
    try:
        reader(data)
        outcome = None
    except (FormatError, QmapError):
        outcome = "refused"
    except Overtime:
        outcome = f"over its time limit of {limit:.2f} s"
    except Exception as error:  # (the failure this pass looks for)
        outcome = f"{type(error).__name__}: {str(error)[:200]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return outcome, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=2000, help="inputs per reader")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--readers", help="a comma-separated subset (default: all)")
    parser.add_argument("--keep", help="a folder for failing inputs and each reader's slowest")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="iogf-fuzz-") as scratch:
        table = readers(Path(scratch))
        chosen = args.readers.split(",") if args.readers else list(table)
        unknown = [name for name in chosen if name not in table]
        if unknown:
            parser.error(f"unknown readers {', '.join(unknown)}; known: {', '.join(table)}")
        tallies = {name: fuzz(name, *table[name], args.count, args.seed) for name in chosen}
    print(f"{'reader':9} {'tried':>7} {'refused':>8} {'failures':>8}  slowest (s per KB, at its size)")
    for name, tally in tallies.items():
        seconds, size, _ = tally.slowest
        print(f"{name:9} {tally.tried:7} {tally.refused:8} {len(tally.failures):8}  {seconds:.4f} s/KB ({size:,} B)")
        for text, _data in tally.failures[:5]:
            print(f"    {text}")
    if args.keep:
        keep(Path(args.keep), tallies)
    return 1 if any(tally.failures for tally in tallies.values()) else 0


def fuzz(name: str, reader: Callable[[bytes], object], seeds: list[bytes], binary: bool, count: int,
         seed: int) -> Tally:  # fmt: skip
    tally = Tally()
    if not seeds:
        return tally
    rng = random.Random(f"{seed}-{name}")
    for number in range(count):
        data = edited(seeds[number % len(seeds)], rng, binary)
        outcome, seconds = run_one(reader, data)
        tally.tried += 1
        tally.refused += outcome == "refused"
        if outcome not in (None, "refused"):
            tally.failures.append((f"input {number} ({len(data):,} B): {outcome}", data))
        per_kb = seconds / max(len(data) / 1024, 1.0)
        if per_kb > tally.slowest[0]:
            tally.slowest = (per_kb, len(data), data)
    return tally


def keep(folder: Path, tallies: dict[str, Tally]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, tally in tallies.items():
        (folder / f"{name}_slowest.bin").write_bytes(tally.slowest[2])
        for number, (_text, data) in enumerate(tally.failures):
            (folder / f"{name}_failure_{number}.bin").write_bytes(data)
    print(f"inputs kept in {os.fspath(folder)}")


if __name__ == "__main__":
    sys.exit(main())
