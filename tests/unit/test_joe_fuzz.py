"""Mutation fuzzing: whatever the bytes, the JOE and JPK readers (and what the importer runs on their
documents) raise nothing but FormatError."""

from __future__ import annotations

import numpy as np

from formats import joe, jpk
from formats.errors import FormatError
from tests import joe_fixtures as fx
from tests.mutations import fuzz_count, mutations
from tests.sample_paths import SAMPLES_ROOT

LARGEST_FUZZED_SAMPLE = 300_000  # bytes; the 1.6 MB sample would make each try slow without adding cases


def corpus() -> list[bytes]:
    inputs = [fx.cube_bytes(), fx.cube_bytes(with_texcoords=False), joe.write_joe(fx.clockwise_cube())]
    inputs.append(fx.pack_of({"a.joe": inputs[0], "b.joe": inputs[1]}))
    folder = SAMPLES_ROOT / "joe"
    if folder.is_dir():
        inputs += [p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix in {".joe", ".jpk"}
                   and p.stat().st_size <= LARGEST_FUZZED_SAMPLE]  # fmt: skip
    return inputs


def import_steps(data: bytes) -> None:
    """What the importer does with a file's bytes before touching Blender."""
    documents = [joe.read_joe(m.data) for m in jpk.read_jpk(data).members] if data[:3] == b"JPK" else [
        joe.read_joe(data)
    ]
    for document in documents:
        joe.normal_swap_would_fire(document)
        frame = document.first_frame
        joe.texcoord_index_warning(frame)
        faces = joe.importable_faces(frame, rewind_clockwise=True)
        _, _, texcoords = joe.corner_data(frame, faces)
        if texcoords is not None:
            joe.flip_v(texcoords)


def test_only_format_errors_escape_the_readers() -> None:
    accepted = rejected = 0
    with np.errstate(all="ignore"):
        for data in mutations(corpus(), fuzz_count(10_000), seed=20261123):
            try:
                import_steps(data)
                accepted += 1
            except FormatError:
                rejected += 1
    assert accepted and rejected  # the mutations reach both outcomes, so the test exercises both paths
