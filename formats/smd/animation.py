"""Dense per-frame skeleton arrays from sparse `time` blocks, holding values as Source studiomdl does."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import FormatError
from .document import SmdDocument

MAX_DENSE_FRAMES = 1_000_000
MAX_DENSE_CELLS = 50_000_000


@dataclass
class DenseAnimation:
    """F frames x B bones (B in `doc.nodes` order), for times first_time ... first_time + F - 1."""

    first_time: int
    positions: npt.NDArray[np.float64]  # (F, B, 3)
    rotations: npt.NDArray[np.float64]  # (F, B, 3) Euler XYZ radians
    keyed: npt.NDArray[np.bool_]  # (F, B) the file lists this bone at this time

    @property
    def frame_count(self) -> int:
        return int(self.keyed.shape[0])


def dense_skeleton(doc: SmdDocument, path: str | None = None) -> DenseAnimation:
    """Every time number from the smallest to the largest; a bone missing from a frame (or a whole missing frame)
    holds its previous value, and is 0 before its first key. Repeated time numbers merge, later lines winning."""
    rows = doc.node_rows()
    bone_count = len(doc.nodes)
    if not doc.skeleton:
        return DenseAnimation(
            0, np.zeros((0, bone_count, 3)), np.zeros((0, bone_count, 3)), np.zeros((0, bone_count), dtype=np.bool_)
        )
    first = min(frame.time for frame in doc.skeleton)
    frame_count = max(frame.time for frame in doc.skeleton) - first + 1
    if frame_count > MAX_DENSE_FRAMES or frame_count * max(bone_count, 1) > MAX_DENSE_CELLS:
        far = max(doc.skeleton, key=lambda frame: abs(frame.time - doc.skeleton[0].time))  # (the frame stretching it)
        last = first + frame_count - 1
        raise FormatError(f"skeleton time numbers span {frame_count:,} frames (time {first} to {last}): too many "
                          "to expand", path=path, line=far.line or None)  # fmt: skip
    values = np.zeros((frame_count, bone_count, 6))
    keyed = np.zeros((frame_count, bone_count), dtype=np.bool_)
    sorted_ids = np.array(sorted(rows), dtype=np.int64)
    row_of_sorted = np.array([rows[i] for i in sorted(rows)], dtype=np.int64)
    for frame in doc.skeleton:
        ids = frame.bone_ids.astype(np.int64)
        at = np.minimum(np.searchsorted(sorted_ids, ids), max(sorted_ids.size - 1, 0))
        valid = (sorted_ids[at] == ids) if sorted_ids.size else np.zeros(ids.size, dtype=np.bool_)
        bone_rows = row_of_sorted[at[valid]]
        index = frame.time - first
        values[index, bone_rows, :3] = frame.positions[valid]
        values[index, bone_rows, 3:] = frame.rotations[valid]
        keyed[index, bone_rows] = True
    # Hold: each cell takes the values of the last keyed frame at or before it.
    source = np.where(keyed, np.arange(frame_count)[:, None], -1)
    source = np.maximum.accumulate(source, axis=0)
    held = values[np.maximum(source, 0), np.arange(bone_count)[None, :]]
    held[source < 0] = 0.0
    return DenseAnimation(first, held[..., :3].copy(), held[..., 3:].copy(), keyed)
