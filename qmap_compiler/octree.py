"""Root bounds and the two loose octrees (spec §7.4-§7.8), built one level at a time with numpy.

Nodes get ids in breadth-first order; the 8 children of a node have consecutive ids. A face sits in the
deepest node whose box holds it, found by the original's rule: the first child (0..7) that fully contains it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from .arrays import Array
from .f32math import FLT_MAX, FLT_MIN, f32
from .parallel import ordered_map, run_together, worker_count

DRAW_FACES_PER_BATCH = 500
DRAW_SPLIT_WEIGHT = 2
COLLISION_SPLIT_COUNT = 10
DENSE_TABLE_FACTOR = 4  # count (node, material) pairs in a table when it is at most this many times the faces


@dataclass
class Tree:
    """A built octree: node boxes (float32 min xyz, max xyz), levels, children, and each face's node."""

    boxes: Array  # (N, 6) float32
    level: Array  # (N,) int64
    first_child: Array  # (N,) int64, -1 for a leaf; children are first_child .. first_child+7
    face_node: Array  # (F,) int64

    @property
    def node_count(self) -> int:
        return len(self.level)

    @property
    def depth(self) -> int:
        return int(self.level.max()) if len(self.level) else 0


def root_bounds(positions: Array, fix_min_bug: bool = False, extents: Array | None = None) -> Array:
    """Min/max over every corner; max starts at FLT_MIN like the original unless `fix_min_bug`.

    Corners are visited in face order, so a zero minimum keeps the sign of the first zero met (`p < min`
    never replaces 0 by -0). NaN coordinates never win a comparison. `extents`: the faces' `face_extents`, when
    already computed: an axis without NaN among them is reduced over those contiguous rows (the same values as
    over the strided corners, several times quicker); one with NaN (a face's extent there is NaN, its other
    corners unseen) over the corners.
    """
    if len(positions) == 0:
        return np.zeros(6, dtype=np.float32)
    corners = positions.reshape(-1, 3)
    columns = [corners[:, axis] for axis in range(3)]  # (a column at a time: several times quicker than axis=0)
    lows, highs = [], []
    for axis, column in enumerate(columns):
        low_values, high_values = column, column
        if extents is not None and not np.isnan(extents[axis]).any() and not np.isnan(extents[3 + axis]).any():
            low_values, high_values = extents[axis], extents[3 + axis]
        lows.append(np.fmin.reduce(low_values, initial=FLT_MAX))
        highs.append(np.fmax.reduce(high_values, initial=-FLT_MAX if fix_min_bug else FLT_MIN))
    low_array, high_array = np.array(lows, corners.dtype), np.array(highs, corners.dtype)
    for axis in range(3):
        low_array[axis] = _first_of_equal(columns[axis], low_array[axis])
        high_array[axis] = _first_of_equal(columns[axis], high_array[axis])
    box: Array = np.concatenate([low_array, high_array]).astype(np.float32)
    return box


def _first_of_equal(values: Array, extreme: np.float32) -> np.float32:
    """The first value equal to `extreme` (matters only for the sign of zero)."""
    if extreme != 0:
        return extreme
    hits = np.flatnonzero(values == 0)
    return values[hits[0]] if len(hits) else extreme


def child_bounds(boxes: Array, k: float) -> tuple[Array, Array]:
    """Per axis: x1 (start of the high child) and x2 (end of the low child), each rounded once to float32."""
    lo = boxes[:, :3].astype(np.float64)
    hi = boxes[:, 3:].astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        centre = f32((lo + hi) * 0.5)
        x1 = f32(centre + k * (lo - centre))
        x2 = f32(centre + k * (hi - centre))
    return x1, x2


def child_boxes(boxes: Array, k: float) -> Array:
    """The 8 child boxes of each box, (P*8, 6), child i taking the high side on axis a when bit a of i is set."""
    x1, x2 = child_bounds(boxes, k)
    lo = boxes[:, :3].astype(np.float64)
    hi = boxes[:, 3:].astype(np.float64)
    bits = (np.arange(8)[:, None] >> np.arange(3)[None, :]) & 1  # (8, 3)
    child_lo = np.where(bits[None] == 1, x1[:, None, :], lo[:, None, :])
    child_hi = np.where(bits[None] == 1, hi[:, None, :], x2[:, None, :])
    children: Array = np.concatenate([child_lo, child_hi], axis=2).reshape(-1, 6).astype(np.float32)
    return children


def split_planes(boxes: Array, k: float) -> Array:
    """(N, 6) float32 per node box: x2 (end of its low children) and x1 (start of its high ones) on each axis."""
    x1, x2 = child_bounds(boxes, k)
    planes: Array = np.concatenate((x2, x1), axis=1).astype(np.float32)
    return planes


def first_fitting_child(extents: Array, planes: Array, box: Array | None = None) -> Array:
    """Index 0..7 of the first child of its node that holds each face entirely, or -1. `extents`: the faces' (6, n)
    face_extents; `planes`: their nodes' (6, n) split planes (a column per face, or one (6, 1) column for all);
    `box`: their node's box, when faces may reach outside it (the root's: given bounds can leave faces out). Below
    the root every face is inside its node's box (it fitted it), so only the split planes decide.

    Children are numbered x = bit 0, y = bit 1, z = bit 2, so the first fitting child takes the low side on
    every axis where the low child holds the face.
    """
    count = extents.shape[1]
    child = np.zeros(count, np.int8)
    fits_all = np.ones(count, bool)
    for axis in range(3):  # (rows of (6, n) tables: each comparison runs over contiguous memory)
        face_min, face_max = extents[axis], extents[3 + axis]
        low_ok = face_max <= planes[axis]
        high_ok = planes[3 + axis] <= face_min
        if box is not None:
            low_ok &= box[axis] <= face_min
            high_ok &= face_max <= box[3 + axis]
        child += (~low_ok).view(np.int8) << axis
        fits_all &= low_ok | high_ok
    child[~fits_all] = -1
    return child


SplitRule = Callable[[Array, int, Array], Array]
"""(level-local node of each movable face, nodes in the level, face ids) -> per node: wants to split."""


def draw_split_rule(material: Array) -> SplitRule:
    """Split when the batch weight sum(ceil(count_m / 500)) over materials exceeds 2."""
    material_count = int(material.max()) + 1 if len(material) else 1

    def rule(local_node: Array, node_count: int, face_ids: Array) -> Array:
        keys = local_node * material_count + material[face_ids]
        if node_count * material_count <= DENSE_TABLE_FACTOR * len(keys) + 4096:  # dense table: linear time
            counts = np.bincount(keys, minlength=node_count * material_count).reshape(node_count, material_count)
            weight = ((counts + DRAW_FACES_PER_BATCH - 1) // DRAW_FACES_PER_BATCH).sum(axis=1)
        else:
            unique_keys, unique_counts = np.unique(keys, return_counts=True)
            batches = (unique_counts + DRAW_FACES_PER_BATCH - 1) // DRAW_FACES_PER_BATCH
            weight = np.bincount(unique_keys // material_count, weights=batches, minlength=node_count)
        wants: Array = weight > DRAW_SPLIT_WEIGHT
        return wants

    return rule


def collision_split_rule(local_node: Array, node_count: int, face_ids: Array) -> Array:
    """Split when a node holds more than 10 faces."""
    return np.bincount(local_node, minlength=node_count) > COLLISION_SPLIT_COUNT


def face_extents(positions: Array) -> Array:
    """(6, F) min x, y, z and max x, y, z of each face over its (padded) corners, a row each: the octree compares a
    row at a time over contiguous memory. A NaN coordinate makes the face fit no child."""
    extents = np.empty((6, len(positions)), positions.dtype)

    def fill(part: slice) -> None:  # (a part of the faces per core)
        for axis in range(3):
            corners = [positions[part, corner, axis] for corner in range(positions.shape[1])]
            low, high = extents[axis, part], extents[3 + axis, part]
            low[...], high[...] = corners[0], corners[0]
            for corner in corners[1:]:  # (pairwise: a reduce over the list would first copy every corner into one)
                np.minimum(low, corner, out=low)
                np.maximum(high, corner, out=high)

    ordered_map(fill, _parts(len(positions), worker_count()))
    return extents


_FACES_AT_A_TIME = 1 << 17  # faces tested against their node's children at a time (bounded temporaries)


def _level_moves(movable: Array, local: Array, wants: Array, level_boxes: Array, extents: Array,
                 k: float) -> tuple[Array, Array, Array]:
    """Faces of one level that move down: (face ids, their level-local node, child index 0..7). `wants`: per node of
    the level, whether its split rule asks it to split."""
    faces, nodes = movable, local
    if not wants.all():  # (near the root every node splits: no copy)
        candidates = wants[local]
        faces, nodes = movable[candidates], local[candidates]
    planes = np.ascontiguousarray(split_planes(level_boxes, k).T)
    children = np.empty(len(faces), np.int8)
    for begin in range(0, len(faces), _FACES_AT_A_TIME):
        part = slice(begin, begin + _FACES_AT_A_TIME)
        moving = _columns(extents, faces[part])
        if len(level_boxes) == 1:  # the root (every other level has 8 nodes or more): faces may be outside its box
            children[part] = first_fitting_child(moving, planes, level_boxes[0])
        else:
            children[part] = first_fitting_child(moving, np.take(planes, nodes[part], axis=1))
    moved = children >= 0
    if moved.all():
        return faces, nodes, children
    return faces[moved], nodes[moved], children[moved]


def _columns(table: Array, ascending: Array) -> Array:
    """table[:, ascending] for strictly ascending column numbers: a view when they are a run of consecutive ones
    (every face at the root), else a gather (np.take: quicker than indexing)."""
    if ascending.shape[0] and int(ascending[-1]) - int(ascending[0]) == ascending.shape[0] - 1:
        return table[:, int(ascending[0]) : int(ascending[-1]) + 1]
    return np.take(table, ascending, axis=1)


def _parts(count: int, pieces: int) -> list[slice]:
    """`count` items in up to `pieces` consecutive parts of nearly equal size (one part for few items)."""
    pieces = max(1, min(pieces, count // _FACES_AT_A_TIME))
    return [slice(count * piece // pieces, count * (piece + 1) // pieces) for piece in range(pieces)]


class _Growth:
    """A tree being built level by level: each face's node, and per level its nodes' boxes, levels and first
    children."""

    def __init__(self, face_count: int, root_box: Array) -> None:
        self.face_node = np.zeros(face_count, dtype=np.int64)
        self.boxes = [root_box.reshape(1, 6).astype(np.float32)]
        self.levels = [np.zeros(1, dtype=np.int64)]
        self.first_children = [np.full(1, -1, dtype=np.int64)]
        self.level_start, self.node_total, self.level = 0, 1, 0
        self.movable = np.arange(face_count)
        self._local: Array | None = np.zeros(face_count, dtype=np.int64)  # (known as a level is made)
        self.finished = False

    def copy(self) -> _Growth:
        """A growth of its own from here (the face nodes are written in place; the level lists only appended to
        or their entries replaced)."""
        twin = _Growth.__new__(_Growth)
        twin.__dict__.update(self.__dict__)
        twin.face_node = self.face_node.copy()
        twin.boxes, twin.levels, twin.first_children = list(self.boxes), list(self.levels), list(self.first_children)
        return twin

    def local(self) -> Array:
        """The level-local node of each face that may still move."""
        local = self._local if self._local is not None else self.face_node[self.movable] - self.level_start
        self._local = None  # (handed out once: the caller may keep it while this growth goes on)
        return local

    def wants(self, split_rule: SplitRule, local: Array) -> Array:
        return split_rule(local, len(self.levels[self.level]), self.movable)

    def advance(self, local: Array, wants: Array, extents: Array, k: float, side_by_side: bool = False) -> None:
        """One level down: every splitting node moves the faces that fit a child; finished when none moves.
        `side_by_side`: the level's faces in a part per core, each part's moves found and placed on a thread of its
        own (for a caller not on a thread itself)."""
        level, level_count = self.level, len(self.levels[self.level])
        parts = _parts(len(self.movable), worker_count() if side_by_side else 1)

        def moves(part: slice) -> tuple[Array, Array, Array, Array]:
            faces, nodes, child = _level_moves(self.movable[part], local[part], wants, self.boxes[level], extents, k)
            splitting = np.zeros(level_count, dtype=bool)
            splitting[nodes] = True
            return faces, nodes, child, splitting

        found = ordered_map(moves, parts)
        if all(len(faces) == 0 for faces, *_ in found):
            self.finished = True
            return
        splitting = found[0][3]
        for *_, more in found[1:]:
            splitting |= more
        parents = np.flatnonzero(splitting)
        first_child = np.full(level_count, -1, dtype=np.int64)
        first_child[parents] = self.node_total + 8 * np.arange(len(parents))
        self.first_children[level] = first_child
        self.boxes.append(child_boxes(self.boxes[level][parents], k))
        self.levels.append(np.full(8 * len(parents), level + 1, dtype=np.int64))
        self.first_children.append(np.full(8 * len(parents), -1, dtype=np.int64))
        self.level_start, self.node_total = self.node_total, self.node_total + 8 * len(parents)

        def place(move: tuple[Array, Array, Array, Array]) -> Array:
            faces, nodes, child, _ = move
            moved_to: Array = first_child[nodes] + child
            self.face_node[faces] = moved_to  # (the parts' faces are distinct)
            moved_to -= self.level_start  # the next level's local nodes of the faces that may move (no gather)
            return moved_to

        placed = ordered_map(place, found)
        self.movable = found[0][0] if len(found) == 1 else np.concatenate([faces for faces, *_ in found])
        self._local = placed[0] if len(placed) == 1 else np.concatenate(placed)
        self.level += 1

    def tree(self) -> Tree:
        return Tree(np.concatenate(self.boxes), np.concatenate(self.levels), np.concatenate(self.first_children),
                    self.face_node)


def build_tree(positions: Array, root_box: Array, k: float, max_depth: int, split_rule: SplitRule,
               extents: Array | None = None) -> Tree:
    """Level-synchronous loose octree: at each level, every splitting node moves the faces that fit a child.

    A node that wants to split but keeps all its faces stays a leaf; one that moves any face gets all 8
    children (empty ones included), with consecutive ids allocated in parent order. `extents`: the faces'
    `face_extents`, when already computed.
    """
    extents = face_extents(positions) if extents is None else extents
    growth = _Growth(len(positions), root_box)
    while growth.level < max_depth and not growth.finished:
        local = growth.local()
        growth.advance(local, growth.wants(split_rule, local), extents, k)
    return growth.tree()


def build_trees(positions: Array, root_box: Array, k: float, max_depth: int, split_rules: list[SplitRule],
                extents: Array | None = None) -> list[Tree]:
    """[build_tree(..., rule, extents) for rule in split_rules], the levels where every rule splits the same nodes
    built once (the trees are the same down to there: near the root every node of a large map splits under both
    the draw and the collision rule), the parts of their faces side by side; then each tree on a thread of its
    own."""
    extents = face_extents(positions) if extents is None else extents
    shared = _Growth(len(positions), root_box)
    local = shared.local()
    wants = run_together(*(partial(shared.wants, rule, local) for rule in split_rules))
    while shared.level < max_depth and not shared.finished and all(np.array_equal(wants[0], other)
                                                                   for other in wants[1:]):  # fmt: skip
        shared.advance(local, wants[0], extents, k, side_by_side=True)
        if shared.level < max_depth and not shared.finished:
            local = shared.local()
            wants = run_together(*(partial(shared.wants, rule, local) for rule in split_rules))
    if shared.level >= max_depth or shared.finished:
        return [shared.tree() if index == 0 else shared.copy().tree() for index in range(len(split_rules))]
    growths = [shared] + [shared.copy() for _ in split_rules[1:]]

    def grow(growth: _Growth, split_rule: SplitRule, wanted: Array) -> Tree:
        growth_local = local
        while True:
            growth.advance(growth_local, wanted, extents, k)
            if growth.level >= max_depth or growth.finished:
                return growth.tree()
            growth_local = growth.local()
            wanted = growth.wants(split_rule, growth_local)

    return run_together(*(partial(grow, growth, rule, wanted)
                          for growth, rule, wanted in zip(growths, split_rules, wants, strict=True)))  # fmt: skip


def preorder_ranks(tree: Tree) -> tuple[Array, Array]:
    """(pre-order rank, subtree node count) of every node, computed level by level."""
    count = tree.node_count
    size = np.ones(count, dtype=np.int64)
    parents = np.flatnonzero(tree.first_child >= 0)
    for level in range(tree.depth - 1, -1, -1):
        at_level = parents[tree.level[parents] == level]
        child_ids = tree.first_child[at_level][:, None] + np.arange(8)
        size[at_level] = 1 + size[child_ids].sum(axis=1)
    pre = np.zeros(count, dtype=np.int64)
    for level in range(tree.depth):
        at_level = parents[tree.level[parents] == level]
        child_ids = tree.first_child[at_level][:, None] + np.arange(8)
        sizes = size[child_ids]
        before = np.cumsum(sizes, axis=1) - sizes
        pre[child_ids] = pre[at_level][:, None] + 1 + before
    return pre, size


def postorder_ranks(tree: Tree, pre: Array, size: Array) -> Array:
    """Post-order rank: nodes finished before = earlier non-ancestors + own descendants."""
    return pre - tree.level + size - 1
