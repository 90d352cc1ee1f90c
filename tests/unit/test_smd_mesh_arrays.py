"""The mesh arrays of many reference SMDs made together (formats/smd/mesh_arrays.py) are those made file by file."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pytest

from formats.smd import mesh_arrays as arrays_module
from formats.smd import read_smd
from formats.smd.mesh_arrays import MeshArrays, MeshSource, mesh_arrays, mesh_arrays_together


@dataclass
class Options:
    weight_mode: str = "RAW"
    use_custom_normals: bool = True
    up_axis: str = "Z"
    global_scale: float = 1.0

    def turn(self) -> np.ndarray:
        if self.up_axis == "Y":
            return np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])
        return np.identity(3)

    def points(self, values: np.ndarray) -> np.ndarray:
        return (values.reshape(-1, 3) @ self.turn().T) * self.global_scale

    def directions(self, values: np.ndarray) -> np.ndarray:
        return values.reshape(-1, 3) @ self.turn().T


def varied_smd(seed: int, goldsrc: bool, spoiled: bool, distinct: bool, side: int) -> str:
    """A grid of side x side quads (two triangles each) with its own bones (sparse ids), weight links of 1 to 3
    bones in any order (some to unknown ids, some twice to one bone), normals shared by a vertex's corners or not,
    and, when `spoiled`, a triangle using one vertex twice and one doubling another; `distinct`: every corner its
    own line (random normals), so that the reader groups no lines."""
    rng = np.random.default_rng(seed)
    ids = sorted(rng.choice(40, size=3 + seed % 4, replace=False).tolist())
    nodes = [f'{node_id} "bone{node_id}_{seed}" {-1 if row == 0 else ids[0]}' for row, node_id in enumerate(ids)]
    skeleton = [f"{node_id} {row} 0 0 0 0 0" for row, node_id in enumerate(ids)]
    grid = [(x, y) for x in range(side + 1) for y in range(side + 1)]
    heights = rng.integers(0, 5, len(grid))
    vertex_links = []
    for _ in grid:
        count = int(rng.integers(1, 4))
        bones = rng.choice([*ids, 99], size=count).tolist()  # (99: no such bone)
        weights = np.round(rng.random(count), 2).tolist()
        vertex_links.append(" ".join(f"{b} {w:.2f}" for b, w in zip(bones, weights, strict=True)))
    vertex_normal = [(0.0, 0.0, 1.0) if seed % 2 else tuple(np.round(rng.normal(size=3), 3)) for _ in grid]

    def line(vertex: int) -> str:
        x, y = grid[vertex]
        normal = tuple(np.round(rng.normal(size=3), 3)) if distinct else vertex_normal[vertex]
        parent = ids[vertex % len(ids)]
        text = (f"{parent} {x * 0.5:.6f} {y * 0.5:.6f} {heights[vertex] * 0.1:.6f} {normal[0]:.6f} {normal[1]:.6f} "
                f"{normal[2]:.6f} {x / side:.6f} {y / side:.6f}")  # fmt: skip
        if goldsrc:
            return text
        links = vertex_links[vertex]
        return f"{text} {len(links.split()) // 2} {links}"

    triangles = []
    for x in range(side):
        for y in range(side):
            a, d = x * (side + 1) + y, x * (side + 1) + y + 1
            b, c = a + side + 1, d + side + 1
            material = f"mat{(x + seed) % 3}" if seed % 3 else "shared"
            triangles += [(material, (a, b, c)), (material, (a, c, d))]
    if spoiled:
        triangles += [("shared", (0, 0, 1)), ("shared", triangles[0][1])]
    body = [f"{name}\n" + "\n".join(line(v) for v in corners) for name, corners in triangles]
    return "\n".join(["version 1", "nodes", *nodes, "end", "skeleton", "time 0", *skeleton, "end", "triangles",
                      *body, "end", ""])  # fmt: skip


def sources() -> list[MeshSource]:
    made = []
    cases = [(False, False, False, 3), (True, False, False, 4), (False, True, False, 5), (False, False, True, 3),
             (False, False, False, 18), (True, True, False, 2), (False, False, False, 1), (False, True, True, 4),
             (True, False, True, 19), (False, False, False, 6)]  # fmt: skip
    for seed, (goldsrc, spoiled, distinct, side) in enumerate(cases):
        document = read_smd(varied_smd(seed, goldsrc, spoiled, distinct, side).encode())
        assert document.triangles is not None
        made.append(MeshSource(document.triangles, document.node_rows(), len(document.nodes), f"file{seed}"))
    return made


def same_values(a: object, b: object) -> bool:
    """Equal arrays (dtype, shape and bits), dataclasses field by field, other values by ==."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        left, right = np.asarray(a), np.asarray(b)
        return (left.dtype, left.shape, left.tobytes()) == (right.dtype, right.shape, right.tobytes())
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(same_values(getattr(a, f.name), getattr(b, f.name))
                                          for f in dataclasses.fields(a))  # fmt: skip
    return a == b


def assert_same(a: MeshArrays, b: MeshArrays) -> None:
    for item in dataclasses.fields(MeshArrays):
        assert same_values(getattr(a, item.name), getattr(b, item.name)), item.name


@pytest.mark.parametrize(
    "options",
    [Options(), Options(weight_mode="STUDIOMDL"), Options(use_custom_normals=False),
     Options(up_axis="Y", global_scale=0.5)],
    ids=["defaults", "studiomdl weights", "no custom normals", "Y up, scaled"],
)  # fmt: skip
def test_arrays_made_together_are_those_made_file_by_file(options: Options, monkeypatch: pytest.MonkeyPatch) -> None:
    files = sources()
    assert any(f.triangles.corner_lines is None for f in files) and any(f.triangles.corner_lines is not None
                                                                        for f in files)  # fmt: skip
    assert any(3 * len(f.triangles) >= arrays_module.NORMALS_BY_LINE_FROM for f in files)
    one_by_one = [mesh_arrays(source, options) for source in files]
    assert any(arrays.warnings for arrays in one_by_one)  # (links to unknown bones: said for their file)
    assert len({len(arrays.used_bones) for arrays in one_by_one}) > 1
    assert any(arrays.vertex_count > len(np.unique(arrays.positions, axis=0)) for arrays in one_by_one)  # copies
    alone: list[str] = []

    def counted(source: MeshSource, own: Options) -> MeshArrays:
        alone.append(source.label)
        return mesh_arrays(source, own)

    monkeypatch.setattr(arrays_module, "mesh_arrays", counted)
    together = mesh_arrays_together(files, options)
    assert len(together) == len(files)
    for single, batched in zip(one_by_one, together, strict=True):
        assert_same(single, batched)
    # only the files with faces kept whole (copied vertices) were made on their own
    assert alone == ["file2", "file5", "file7"]


@pytest.mark.parametrize("batch_corners", [40, 300, 1 << 20], ids=["tiny batches", "small batches", "one batch"])
def test_batches_of_any_size_give_the_same(batch_corners: int, monkeypatch: pytest.MonkeyPatch) -> None:
    files = sources()
    monkeypatch.setattr(arrays_module, "BATCH_CORNERS", batch_corners)
    monkeypatch.setattr(arrays_module, "TOGETHER_UP_TO", 1000)  # (the 19- and 18-quad grids go alone)
    for single, batched in zip([mesh_arrays(s, Options()) for s in files], mesh_arrays_together(files, Options()),
                               strict=True):  # fmt: skip
        assert_same(single, batched)


def test_rows_held_per_line_or_per_corner_give_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch takes the positions and normals of the lines the reader holds per line (Triangles.line_rows), and
    those of each line's first corner for a file that holds none: every file held, none, or some, the same
    arrays as every file made at once gives."""
    from formats.smd import reader

    monkeypatch.setattr(reader, "_PER_LINE_FROM", 1 << 40)
    at_once = sources()
    assert all(f.triangles.line_rows("positions") is None for f in at_once)
    monkeypatch.setattr(reader, "_PER_LINE_FROM", 1)
    held = sources()
    assert sum(f.triangles.line_rows("positions") is not None for f in held) > 1
    mixed = [file if row % 2 else held[row] for row, file in enumerate(at_once)]
    for options in (Options(), Options(up_axis="Y", global_scale=0.5)):
        expected = mesh_arrays_together(at_once, options)
        for files in (held, mixed):
            for made, wanted in zip(mesh_arrays_together(files, options), expected, strict=True):
                assert_same(made, wanted)
