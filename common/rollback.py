"""Leave bpy.data exactly as it was when an import fails half-way."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import bpy

# Shape keys go with their mesh; the UI datablocks are never created by an import.
OWNED_OR_UI = {"shape_keys", "window_managers", "screens", "workspaces"}


def id_collections() -> dict[str, bpy.types.bpy_prop_collection]:
    """Every collection of datablocks in bpy.data (objects, meshes, materials, actions, ...)."""
    collections = {}
    for name in dir(bpy.data):
        value = getattr(bpy.data, name, None) if not name.startswith("_") else None
        if isinstance(value, bpy.types.bpy_prop_collection):
            collections[name] = value
    return collections


def snapshot() -> dict[str, set[int]]:
    return {name: {block.as_pointer() for block in blocks} for name, blocks in id_collections().items()}


@contextlib.contextmanager
def rollback_on_error() -> Iterator[None]:
    """Remove every datablock created inside the block if it raises, then re-raise."""
    before = snapshot()
    try:
        yield
    except BaseException:
        created = [
            block
            for name, blocks in id_collections().items()
            if name not in OWNED_OR_UI
            for block in blocks
            if block.as_pointer() not in before.get(name, set())
        ]
        if created:
            bpy.data.batch_remove(created)
        raise
