"""Leave bpy.data exactly as it was when an import fails half-way.

New datablocks are found and removed by comparing bpy.data with a snapshot. Changes to data that existed before
(shape keys added to a mesh, an action assigned to an armature, the scene's frame range, material settings) are
undone by the callbacks that importers register with `undo_on_failure` before making them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import bpy

from . import compat

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


_undo_stack: list[list[Callable[[], None]]] = []


def remember_values(owner: bpy.types.bpy_struct, *attributes: str) -> None:
    """Put these attributes of `owner` (which existed before the import) back if the running import fails; an
    owner gone with the import's new data is left alone."""
    saved = {name: getattr(owner, name) for name in attributes}
    path = compat.path_from_id(owner)
    holder = owner.id_data

    def restore() -> None:
        try:
            target = holder.path_resolve(path) if path else holder
            for name, value in saved.items():
                setattr(target, name, value)
        except (ReferenceError, ValueError, AttributeError):
            pass

    undo_on_failure(restore)


def undo_on_failure(undo: Callable[[], None]) -> None:
    """Register how to take back a change to existing data, should the running import fail."""
    if _undo_stack:
        _undo_stack[-1].append(undo)


@contextlib.contextmanager
def rollback_on_error() -> Iterator[None]:
    """Undo changes to existing data and remove every datablock created inside the block if it raises."""
    before = snapshot()
    active = bpy.context.view_layer.objects.active
    mode = active.mode if active is not None else "OBJECT"  # (an import leaves Edit or Pose Mode to build)
    _undo_stack.append([])
    try:
        yield
    except BaseException:
        for undo in reversed(_undo_stack[-1]):
            undo()
        created = [
            block
            for name, blocks in id_collections().items()
            if name not in OWNED_OR_UI
            for block in blocks
            if block.as_pointer() not in before.get(name, set())
        ]
        if created:
            bpy.data.batch_remove(created)
        _back_to_mode(active, mode)
        raise
    finally:
        _undo_stack.pop()


def _back_to_mode(active: bpy.types.Object | None, mode: str) -> None:
    """The active object and its mode as they were before a failed import (best effort: never hides the error)."""
    if active is None or mode == "OBJECT":
        return
    with contextlib.suppress(ReferenceError, RuntimeError):
        view_layer = bpy.context.view_layer
        if view_layer.objects.active != active:
            view_layer.objects.active = active
        if active.mode != mode:
            bpy.ops.object.mode_set(mode=mode)
