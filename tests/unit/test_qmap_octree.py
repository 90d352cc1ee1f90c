"""The loose octree's face placement against a plain descent, face by face, through every level's boxes."""

from __future__ import annotations

import numpy as np
import pytest

from qmap_compiler import octree


def descent(face: np.ndarray, root: np.ndarray, k: float, max_depth: int) -> tuple[int, np.ndarray]:
    """(depth, box) of the deepest node holding the face: from the root, the first child (0..7) that contains it
    entirely, while one does (the original's rule, spec 7.5). A face outside the root stays in the root."""
    low, high = face.min(axis=0), face.max(axis=0)
    box, depth = root, 0
    while depth < max_depth:
        children = octree.child_boxes(box[None], k)
        inside = np.all((children[:, :3] <= low) & (high <= children[:, 3:]), axis=1)
        if not inside.any():
            break
        box, depth = children[int(np.argmax(inside))], depth + 1
    return depth, box


@pytest.mark.parametrize("seed", range(4))
def test_every_face_sits_in_the_deepest_box_that_holds_it(seed: int) -> None:
    # Every node splits, so each face goes as deep as its own size and place allow; the given root box is smaller
    # than the geometry, so some faces are outside it or straddle its sides; a NaN coordinate fits nothing.
    rng = np.random.default_rng(seed)
    count, max_depth, k = 400, 6, 0.25
    centres = rng.uniform(-1.6, 1.6, (count, 1, 3))
    sizes = 10.0 ** rng.uniform(-3, 0, (count, 1, 1))
    faces = (centres + sizes * rng.uniform(-1, 1, (count, 4, 3))).astype(np.float32)
    faces[7, 2, 1] = np.nan
    root = np.array([-1, -1, -1, 1, 1, 1], np.float32)
    planes = octree.split_planes(root[None], k)[0]  # x2 (end of the low children), x1 (start of the high ones)
    faces[8] = faces[9] = [[0.1, 0.1, 0.1]] * 4
    faces[8, 0, 0] = planes[0]  # its right side on the low children's end: in a low child
    faces[9, 1, 1], faces[9, 2, 1] = planes[4], 0.5  # too tall for a low child, its bottom on the high ones' start
    tree = octree.build_tree(faces, root, k, max_depth, lambda local, nodes, ids: np.ones(nodes, bool))
    for index, face in enumerate(faces):
        depth, box = descent(face, root, k, max_depth)
        node = tree.face_node[index]
        assert tree.level[node] == depth, index
        np.testing.assert_array_equal(tree.boxes[node], box)
    assert tree.level[tree.face_node[7]] == 0
    outside = np.any((faces.min(axis=1) < root[:3]) | (faces.max(axis=1) > root[3:]), axis=1)
    assert outside.any() and np.all(tree.level[tree.face_node[outside]] == 0)
    assert tree.depth == max_depth


def test_columns_of_a_run_are_a_view_and_others_a_gather() -> None:
    from qmap_compiler.octree import _columns

    table = np.arange(6 * 10, dtype=np.float32).reshape(6, 10)
    for ascending in ([3, 4, 5, 6], [0, 2, 3, 9], [7], []):
        columns = np.array(ascending, np.int64)
        assert np.array_equal(_columns(table, columns), table[:, columns])
    assert np.shares_memory(_columns(table, np.arange(2, 8)), table)


@pytest.mark.parametrize("seed", range(6))
def test_the_root_box_from_the_face_extents_is_the_box_from_the_corners(seed: int) -> None:
    """Reduced over the faces' extents (an axis without NaN) or over the corners (one with NaN), the root box has
    the same values and the same signs of zero as over every corner in face order; infinities and FLT_MIN's
    floor included."""
    rng = np.random.default_rng(seed)
    faces = rng.uniform(-5, 5, (300, 4, 3)).astype(np.float32)
    faces[:, 3] = faces[:, 0]  # (a triangle repeats its first corner)
    if seed % 2:
        faces[rng.integers(0, 300, 5), rng.integers(0, 4, 5), rng.integers(0, 3, 5)] = np.nan
        lowest = int(np.nanargmin(faces[:, :3, 0]))  # a NaN beside the lowest x: its face's extent is NaN there
        faces[lowest // 3, (lowest % 3 + 1) % 3, 0] = np.nan
    if seed % 3 == 0:
        faces[..., 1] = np.abs(faces[..., 1])  # a minimum of zero, met first as -0 or +0
        faces[rng.integers(0, 300, 8), :, 1] = 0.0
        faces[int(rng.integers(0, 300)), 2, 1] = -0.0 if seed else 0.0
        faces[..., 2] = -np.abs(faces[..., 2])  # every z below FLT_MIN: the buggy maximum stays FLT_MIN
    if seed == 4:
        faces[17, 1, 0], faces[18, 2, 2] = np.inf, -np.inf
    if seed == 5:
        faces[:, :, 0] = np.nan  # a whole axis of NaN
    extents = octree.face_extents(faces)
    for fix in (False, True):
        expected = octree.root_bounds(faces, fix)
        assert octree.root_bounds(faces, fix, extents).tobytes() == expected.tobytes()


def _same_tree(one: octree.Tree, other: octree.Tree) -> None:
    for name in ("boxes", "level", "first_child", "face_node"):
        np.testing.assert_array_equal(getattr(one, name), getattr(other, name), err_msg=name)


@pytest.mark.parametrize("seed", range(6))
def test_trees_built_together_are_the_trees_built_alone(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """build_trees shares the levels where every rule splits the same nodes, then grows each tree on its own; the
    trees are build_tree's for each rule: rules that part at the root, deeper, or never; faces outside the given
    root, NaN corners, a depth reached before they part, parts of faces tested side by side."""
    monkeypatch.setattr(octree, "_FACES_AT_A_TIME", 97)  # (many parts, so that they run side by side)
    rng = np.random.default_rng(seed)
    count = 3000
    centres = rng.uniform(-1.2, 1.2, (count, 1, 3))
    sizes = 10.0 ** rng.uniform(-4, -0.5 if seed % 2 else -2, (count, 1, 1))
    faces = (centres + sizes * rng.uniform(-1, 1, (count, 4, 3))).astype(np.float32)
    faces[rng.integers(0, count, 3), 1, rng.integers(0, 3, 3)] = np.nan
    material = rng.integers(0, 1 + 4 * seed, count)
    root = np.array([-1, -1, -1, 1, 1, 1], np.float32) if seed % 3 == 0 else octree.root_bounds(faces)
    every_node = lambda local, nodes, ids: np.ones(nodes, bool)  # noqa: E731
    rules = [octree.draw_split_rule(material), octree.collision_split_rule, every_node]
    for max_depth in (0, 1, 3, 9):
        for chosen in (rules[:2], rules[1:], [rules[2], rules[2]], rules, rules[:1]):
            together = octree.build_trees(faces, root, 0.25, max_depth, chosen)
            assert len(together) == len(chosen)
            for rule, tree in zip(chosen, together, strict=True):
                _same_tree(tree, octree.build_tree(faces, root, 0.25, max_depth, rule))
            if len(chosen) > 1:
                assert not np.shares_memory(together[0].face_node, together[1].face_node)


@pytest.mark.parametrize("faces_at_a_time", [1, 7, 1 << 17])
def test_face_extents_in_parts_are_those_of_all_faces_at_once(faces_at_a_time: int,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The extents made a part of the faces per core are those made over all faces in one pass: NaN and infinite
    corners, signed zeros."""
    monkeypatch.setattr(octree, "_FACES_AT_A_TIME", faces_at_a_time)
    rng = np.random.default_rng(faces_at_a_time)
    faces = rng.uniform(-2, 2, (501, 4, 3)).astype(np.float32)
    faces[rng.integers(0, 501, 9), rng.integers(0, 4, 9), rng.integers(0, 3, 9)] = np.nan
    faces[rng.integers(0, 501, 4), 2, 0] = -np.inf
    faces[10:20, :, 1] = rng.choice(np.array([0.0, -0.0], np.float32), (10, 4))
    expected = np.empty((6, len(faces)), np.float32)
    for axis in range(3):
        expected[axis], expected[3 + axis] = faces[:, 0, axis], faces[:, 0, axis]
        for corner in range(1, 4):
            np.minimum(expected[axis], faces[:, corner, axis], out=expected[axis])
            np.maximum(expected[3 + axis], faces[:, corner, axis], out=expected[3 + axis])
    extents = octree.face_extents(faces)
    np.testing.assert_array_equal(extents.view(np.uint32), expected.view(np.uint32))  # (the bits: signs of zero)
