"""Weight-link helpers on CSR links (per-corner counts, then flat bone ids and weights in corner order).

`balance_links` reproduces Source studiomdl's SortAndBalanceBones: merge duplicate bones, sort by weight, drop
links below the cull threshold, keep the heaviest `max_links`, renormalise to 1 (equal shares when all are zero).
Exporters call it (and `dominant_bones` for the parent column); importers may call it to preview what studiomdl
will make of raw weights.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..rows import count_per_row

STUDIOMDL_CULL = 0.05
STUDIOMDL_MAX_LINKS = 3
_CHUNK = 32768  # corners handled at a time where that keeps temporaries small

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
AnyInts = npt.NDArray[np.integer[Any]]


def _corners(counts: AnyInts) -> Ints:
    return np.repeat(np.arange(counts.size, dtype=np.int64), counts.astype(np.int64))


def select_links(counts: AnyInts, corners: AnyInts, first: Ints | None = None) -> Ints:
    """Where the links of `corners` (in that order, repeats allowed) sit in the flat link arrays (`first`: where
    each corner's links start, when known)."""
    chosen = np.asarray(counts[corners], np.int64)
    if first is None and not chosen.any():  # (no links to find: no offsets of every corner's)
        return np.zeros(0, np.int64)
    counts = np.asarray(counts, np.int64)  # (no copy when it is already int64)
    first = np.cumsum(counts) - counts if first is None else first
    at = np.repeat(first[corners] - (np.cumsum(chosen) - chosen), chosen)
    at += np.arange(at.size)
    return at


def effective_links(counts: AnyInts, bones: AnyInts, weights: Floats, parents: AnyInts) -> tuple[Ints, Ints, Floats]:
    """What studiomdl skins with: a corner with no links is rigid on its parent bone (weight 1)."""
    counts = counts.reshape(-1).astype(np.int64)
    rigid = counts == 0
    if not rigid.any():
        return counts.astype(np.int64), bones.astype(np.int64), weights.astype(np.float64)
    if rigid.all() and not bones.size:  # (GoldSrc: no links anywhere, the parent column alone; no sort needed)
        return np.ones(counts.size, np.int64), parents.reshape(-1).astype(np.int64), np.ones(counts.size)
    corner = np.concatenate([_corners(counts), np.flatnonzero(rigid)])
    all_bones = np.concatenate([bones.astype(np.int64), parents.reshape(-1)[rigid].astype(np.int64)])
    all_weights = np.concatenate([weights.astype(np.float64), np.ones(int(rigid.sum()))])
    order = np.argsort(corner, kind="stable")
    return np.maximum(counts, 1), all_bones[order], all_weights[order]


def balance_links(
    counts: AnyInts,
    bones: AnyInts,
    weights: Floats,
    *,
    max_links: int = STUDIOMDL_MAX_LINKS,
    cull: float = STUDIOMDL_CULL,
    normalize: bool = True,
) -> tuple[Ints, Ints, Floats]:
    """Merge, sort (heaviest first), cull below `cull` (the heaviest link always stays), cap and renormalise."""
    counts = counts.reshape(-1).astype(np.int64)
    corner = _corners(counts)
    corner, merged_bones, merged_weights = _merge_duplicates(corner, bones.astype(np.int64), weights)
    order = np.lexsort((-merged_weights, corner))
    corner, merged_bones, merged_weights = corner[order], merged_bones[order], merged_weights[order]
    first_of_corner = np.searchsorted(corner, corner, side="left")
    rank = np.arange(corner.size) - first_of_corner
    keep = (rank < max_links) & ((merged_weights >= cull) | (rank == 0))
    corner, merged_bones, merged_weights = corner[keep], merged_bones[keep], merged_weights[keep]
    new_counts = np.bincount(corner, minlength=counts.size).astype(np.int64)
    if normalize:
        merged_weights = _normalized(corner, merged_weights, new_counts)
    return new_counts, merged_bones, merged_weights


def merge_duplicate_links(counts: AnyInts, bones: AnyInts, weights: Floats) -> tuple[Ints, Ints, Floats]:
    """Several links of one corner to the same bone become one with their summed weight, as studiomdl reads them
    (links otherwise keep their bone order within the corner)."""
    flat_counts = counts.reshape(-1).astype(np.int64)
    flat_bones = bones.astype(np.int64)
    if _increasing_within_corners(flat_counts, flat_bones):  # nothing to merge or reorder
        return flat_counts, flat_bones, weights.astype(np.float64)
    corner, merged_bones, merged_weights = _merge_duplicates(_corners(flat_counts), flat_bones, weights)
    return np.bincount(corner, minlength=flat_counts.size).astype(np.int64), merged_bones, merged_weights


def _increasing_within_corners(counts: Ints, bones: Ints) -> bool:
    """Whether each corner's links name strictly increasing bones (so no bone twice)."""
    if bones.size < 2:
        return True
    corner_start = np.zeros(bones.size, dtype=np.bool_)
    corner_start[(np.cumsum(counts) - counts)[counts > 0]] = True
    return bool(np.all((bones[1:] > bones[:-1]) | corner_start[1:]))


def normalize_links(counts: AnyInts, weights: Floats) -> Floats:
    """Weights scaled to sum 1 per corner (equal shares where they sum to 0)."""
    flat_counts = counts.reshape(-1).astype(np.int64)
    return _normalized(_corners(flat_counts), weights.astype(np.float64), flat_counts)


def _normalized(corner: Ints, weights: Floats, counts: Ints) -> Floats:
    sums = np.bincount(corner, weights=weights, minlength=counts.size)
    share = np.where(sums[corner] > 0, weights / np.where(sums[corner] > 0, sums[corner], 1), 0.0)
    equal = sums[corner] <= 0
    share[equal] = 1.0 / counts[corner[equal]]
    return share


def _merge_duplicates(corner: Ints, bones: Ints, weights: Floats) -> tuple[Ints, Ints, Floats]:
    order = np.lexsort((bones, corner))
    corner, bones, weights = corner[order], bones[order], weights.astype(np.float64)[order]
    if corner.size == 0:
        return corner, bones, weights
    new_group = np.ones(corner.size, dtype=np.bool_)
    new_group[1:] = (corner[1:] != corner[:-1]) | (bones[1:] != bones[:-1])
    starts = np.flatnonzero(new_group)
    return corner[starts], bones[starts], np.add.reduceat(weights, starts)


def dominant_bones(counts: AnyInts, bones: AnyInts, weights: Floats, fallback: AnyInts) -> Ints:
    """Per corner, the bone with the largest weight (first on ties); `fallback` where a corner has no link."""
    counts = counts.reshape(-1).astype(np.int64)
    result = fallback.reshape(-1).astype(np.int64).copy()
    if bones.size == 0:
        return result
    first = np.cumsum(counts) - counts
    widest = int(counts.max())
    for start in range(0, counts.size, _CHUNK):  # a block of corners at a time: small temporaries stay in cache
        part = slice(start, start + _CHUNK)
        linked = np.flatnonzero(counts[part])
        at = first[part][linked]
        best_at = at.copy()
        best = weights[at]
        best[np.isnan(best)] = -np.inf  # nan never wins
        last = counts[part][linked] - 1
        for rank in range(1, widest):  # a later link takes over only when strictly heavier
            candidate = np.minimum(last, rank)  # a corner with fewer links looks at its last one again
            candidate += at
            weight = weights[candidate]
            heavier = weight > best  # false for nan
            np.copyto(best_at, candidate, where=heavier)
            np.copyto(best, weight, where=heavier)
        result[start + linked] = bones[best_at]
    return result


def links_from_padded(bones: AnyInts, weights: Floats) -> tuple[Ints, Ints, Floats]:
    """(N, K) padded links (bone < 0 or weight <= 0 = unused) to CSR counts, bones, weights."""
    used = (bones >= 0) & (weights > 0)
    return count_per_row(used), bones[used].astype(np.int64), weights[used].astype(np.float64)
