"""What an importer and its exporter agree on, so that exporters never import importers: the names of the
properties and attributes an import leaves for a faithful re-export, option lists, and the conversions both
directions use."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

# ---- JOE
JOE_STORED_NORMALS = "joe_normal"  # the file's own normal vectors, so an untouched mesh re-exports them exactly

# ---- SMD
SMD_STORED_NORMALS = "smd_normal"  # the file's own normals, so an untouched mesh re-exports them exactly
SMD_COLLISION_MODEL = "smd_collision_model"  # object property: a QC's $collisionmodel hull (its own physics SMD)
SMD_COLLISION_SUFFIX = "_collision"  # its object's name: its file's stem and this
SMD_BODYGROUP = "smd_bodygroup"  # collection property: its meshes are a QC $bodygroup's alternatives
SMD_BODYGROUP_BLANKS = "smd_bodygroup_blanks"  # collection property: the places of its `blank` choices
# Armature properties from an imported QC, written again by Write QC when its own options are empty
SMD_QC_MODEL_NAME = "qc_modelname"  # $modelname
SMD_QC_MATERIALS = "qc_cdmaterials"  # $cdmaterials folders, separated by `;` (as the qc_materials option)
SMD_QC_SURFACE_PROP = "qc_surfaceprop"  # $surfaceprop
SMD_QC_TEXTURE_FOLDER = "qc_cdtexture"  # GoldSrc $cdtexture, the absolute folder
SMD_QC_LEFT_OUT = "qc_left_out"  # what the QC has that Write QC does not write, separated by `, `
SMD_ACTIVITY = "smd_activity"  # action property: its $sequence's activity and weight, "ACT_WALK 1"
UP_AXES = (
    ("Z", "Z", "The file is Z-up, as Blender (studiomdl's default)"),
    ("Y", "Y", "The file is Y-up ($upaxis Y): turned +90 degrees about X"),
    ("X", "X", "The file is X-up ($upaxis X): turned so that +X becomes +Z"),
)


def up_axis_matrix(axis: str) -> np.ndarray:
    """File space to Blender space for a file whose up axis is `axis` (the exporter uses the inverse)."""
    out = np.identity(4)
    if axis == "Y":
        out[:3, :3] = [[1, 0, 0], [0, 0, -1], [0, 1, 0]]  # +90 degrees about X: +Y -> +Z
    elif axis == "X":
        out[:3, :3] = [[0, 0, -1], [0, 1, 0], [1, 0, 0]]  # -90 degrees about Y: +X -> +Z
    return out


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off meanwhile: bulk conversions (numpy to lists for Blender) make many
    objects at once, and each collection they set off would walk every Python object Blender holds."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# ---- IQE and IQM
IQE_STORED_NORMALS = "iqe_normal"  # the file normals (per vertex, or per corner when vertices were merged), so an
# untouched mesh re-exports them exactly
IQE_UV_COMPONENTS = frozenset({"float", "half", "double"})  # a custom array of 2 of these is a further UV map,
# its V flipped in the file like vt's
IQE_COLOR_COMPONENTS = frozenset({"ubyte"})  # a custom array of 4 of these is a further colour (0..1 in IQE text,
# normalised bytes in IQM), as IQE exporters write second colour layers
IQE_FILE_VERTEX = "iqe_vertex"  # per corner: its vertex in the file, once vertices are merged: export keeps that order
CUSTOM_TAG = "iqe_custom"  # mesh property: attribute name -> "slot component size" of IQE custom arrays
COLOR_SPACE = "iqe_color_space"  # mesh property: how `vc` was stored ("SRGB" or "LINEAR")
COMMENT = "iqe_comment"  # object property: the text block holding the file's `comment` section
IMPORT_COLORS = (
    ("SRGB", "sRGB", "Vertex colours in the file are sRGB values"),
    ("LINEAR", "Linear", "Vertex colours in the file are linear values"),
    ("NONE", "None", "Do not import vertex colours"),
)


def srgb_to_linear(values: np.ndarray) -> np.ndarray:
    v = values.astype(np.float64)
    return np.where(v <= 0.04045, v / 12.92, ((np.maximum(v, 0.04045) + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(values: np.ndarray) -> np.ndarray:
    v = values.astype(np.float64)
    return np.where(v <= 0.0031308, v * 12.92, 1.055 * np.maximum(v, 0.0031308) ** (1.0 / 2.4) - 0.055)
