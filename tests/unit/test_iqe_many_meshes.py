"""The IQE reader reads the numbers of every vertex, blend and face command in one pass over the text when the faces
are few enough (meshes alternate vertex and face lines): the document, and the first error of a bad file, must be
those of reading each command's numbers on its own (faces a chunk at a time)."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from formats.errors import FormatError
from formats.iqe import read_iqe, reader


def _many_meshes_text(rng: random.Random, meshes: int) -> str:
    """Meshes of varied arrays and faces (fa and fm, polygons, negative indices), some sharing names."""
    lines = ["# Inter-Quake Export", 'joint "root" -1', "pq 0 0 0 0 0 0 1", 'joint "arm" 0', "pq 0 1 0 0 0 0 1"]
    lines += ["vertexarray custom0 float 2 lightmap", "vertexarray custom1 float 3 extra"]
    skinned, coloured, customs = rng.random() < 0.5, rng.random() < 0.5, rng.random() < 0.5
    first_vertex = 0
    for index in range(meshes):
        lines.append(f'mesh "part{rng.randrange(max(meshes // 2, 1))}"')
        lines.append(f'material "m{rng.randrange(3)}"')
        count = rng.randint(3, 9)
        for _ in range(count):
            lines.append("vp " + " ".join(f"{rng.uniform(-9, 9):.4f}" for _ in range(rng.choice((2, 3, 4)))))
            lines.append(f"vt {rng.random():.3f} {rng.random():.3f}")
            lines.append("vn 0 0 1")
            if skinned:
                lines.append(f"vb 0 {rng.random():.3f} 1 {rng.random():.3f}")
            if coloured:
                lines.append(f"vc {rng.random():.2f} 0.5 0.25")
            if customs:
                lines.append(f"v0 {rng.random():.2f} 0.5")
                lines.append("v1 1 2 3")
        for _ in range(rng.randint(1, 5)):
            size = rng.choice((3, 3, 4, 5))
            corners = rng.sample(range(count), min(size, count))
            if rng.random() < 0.3:
                lines.append("fa " + " ".join(str(first_vertex + c) for c in corners))
            elif rng.random() < 0.2:
                lines.append("fm " + " ".join(str(c - count) for c in corners))  # (back from the last vertex)
            else:
                lines.append("fm " + " ".join(str(c) for c in corners))
        first_vertex += count
        if index % 7 == 3:
            lines.append("smoothgroup 2")
    return "\n".join(lines) + "\n"


def _spoiled(rng: random.Random, text: str) -> str:
    """The text with a line or two broken: a bad number, a lost line, a repeated one, an index out of range."""
    lines = text.split("\n")
    for _ in range(rng.randint(1, 2)):
        at = rng.randrange(5, len(lines) - 1)
        how = rng.randrange(5)
        if how == 0:
            lines[at] += " x"
        elif how == 1:
            del lines[at]
        elif how == 2:
            lines.insert(at, lines[rng.randrange(5, len(lines) - 1)])
        elif how == 3:
            lines[at] = lines[at].replace(" ", " 9999", 1)
        else:
            lines[at] = lines[at].replace("0", "O", 1)
    return "\n".join(lines)


def _outcome(text: str) -> object:
    """The document read from the text as plain values, or the error it raises."""
    try:
        document = read_iqe(text.encode(), "many.iqe")
    except FormatError as error:
        return ("error", str(error), error.line, error.column)
    return _plain(document)


def _plain(value: object) -> object:
    if isinstance(value, np.ndarray):
        return (str(value.dtype), value.shape, value.tobytes())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _plain(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


@pytest.mark.parametrize("seed", range(40))
def test_numbers_read_together_make_the_document_of_commands_read_apart(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:  # fmt: skip
    rng = random.Random(seed)
    text = _many_meshes_text(rng, rng.randint(1, 12))
    if seed % 2:
        text = _spoiled(rng, text)
    together = _outcome(text)
    monkeypatch.setattr(reader, "_FACE_LINES", 2)  # faces two lines at a time, each command's numbers on its own
    assert _outcome(text) == together


def test_bad_face_and_bad_vertex_report_the_vertex_first(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _many_meshes_text(random.Random(3), 4).replace("vn 0 0 1", "vn 0 0 x", 1).replace("fm 0", "fm O", 1)
    together = _outcome(text)
    monkeypatch.setattr(reader, "_FACE_LINES", 2)
    assert _outcome(text) == together
    assert isinstance(together, tuple) and "'vn'" in together[1]
