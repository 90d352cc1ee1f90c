"""What the engines' studiomdl refuses or silently cuts, checked on an SMD before it is written (limits from the
Half-Life SDK's and the Source SDK 2013's studio.h; the 128 bones are checked where the bones are chosen, and
GoldSrc's name lengths by the writer, which refuses them):
warnings naming the limit and the engine."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..dedup import row_labels
from .document import Flavour, SmdDocument

GOLDSRC_MAX_TRIANGLES = 20000  # per SMD (MAXSTUDIOTRIANGLES of the Half-Life SDK's studio.h and studiomdl.h)
GOLDSRC_MAX_VERTICES = 2048  # per SMD, and as many normals (MAXSTUDIOVERTS: the SDK's and the engine's)
GOLDSRC_MAX_KEYFRAMES = 512  # per sequence (MAXSTUDIOANIMATIONS of the engine's headers; the 2013 SDK allows 2048)
SOURCE_MAX_WEIGHTS = 3  # bone weights per vertex (MAX_NUM_BONES_PER_VERT)


def limit_warnings(document: SmdDocument, flavour: Flavour, label: str) -> list[str]:
    """The engine's limits the document is over; `label` names the file (or mesh) in each warning."""
    warnings: list[str] = []
    triangles = document.triangles
    if triangles is not None and len(triangles):
        if flavour == "goldsrc":
            warnings += _goldsrc_mesh(triangles.positions, triangles.normals, label)
        else:
            over = int(np.count_nonzero(triangles.link_counts > SOURCE_MAX_WEIGHTS))
            if over:
                warnings.append(f"{label}: {over:,} vertex line(s) with more than {SOURCE_MAX_WEIGHTS} bone weights; "
                                f"Source's studiomdl keeps {SOURCE_MAX_WEIGHTS} per vertex (Limit Weights does it "
                                "now, as it will)")  # fmt: skip
    frames = len(document.skeleton)
    if flavour == "goldsrc" and triangles is None and frames > GOLDSRC_MAX_KEYFRAMES:
        warnings.append(f"{label}: {frames:,} frames; GoldSrc's studiomdl takes at most {GOLDSRC_MAX_KEYFRAMES} per "
                        "sequence (split the action, or lower its frame rate)")  # fmt: skip
    return warnings


def _goldsrc_mesh(
    positions: npt.NDArray[np.floating[Any]], normals: npt.NDArray[np.floating[Any]], label: str
) -> list[str]:
    warnings = []
    count = len(positions)
    if count > GOLDSRC_MAX_TRIANGLES:
        warnings.append(f"{label}: {count:,} triangles; GoldSrc's studiomdl takes at most {GOLDSRC_MAX_TRIANGLES:,} "
                        "per SMD (split the mesh into several)")  # fmt: skip
    for what, values in (("vertices", positions), ("normals", normals)):
        distinct = int(row_labels(np.asarray(values, np.float32).reshape(-1, 3)).max(initial=-1)) + 1
        if distinct > GOLDSRC_MAX_VERTICES:
            warnings.append(f"{label}: {distinct:,} distinct {what}; GoldSrc's studiomdl takes at most "
                            f"{GOLDSRC_MAX_VERTICES:,} per SMD (split the mesh into several)")  # fmt: skip
    return warnings
