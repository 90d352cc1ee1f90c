"""Blender tests: the add-on is enabled from this source tree as the extension bl_ext.dev.io_game_formats."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest

from tools.bpy_extension import enable_extension

EXTENSION = enable_extension()

import bpy  # noqa: E402  (after enable_extension, which isolates the user configuration first)


@pytest.fixture(autouse=True)
def empty_scene() -> Iterator[None]:
    bpy.ops.wm.read_homefile(use_empty=True)
    yield


@pytest.fixture
def extension() -> ModuleType:
    return EXTENSION


def data_state() -> dict[str, list[str]]:
    """Names of every datablock in every collection of bpy.data, to prove an operation changed nothing."""
    from bl_ext.dev.io_game_formats.common.rollback import id_collections  # type: ignore[import-not-found]

    return {name: sorted(block.name for block in blocks) for name, blocks in id_collections().items()}
