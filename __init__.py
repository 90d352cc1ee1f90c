"""io_game_formats: IQE, SMD/VTA, JOE/JPK import and export and the QMAP compiler, as a Blender extension.

Loaded by Blender as bl_ext.<repo>.io_game_formats, so every import inside the package is relative.
Each format module lists its `classes` and may define `menu_import` / `menu_export` for the File menus.
"""

from __future__ import annotations

import bpy

from . import cli
from .exporters import joe as export_joe
from .importers import joe as import_joe

FORMAT_MODULES = (import_joe, export_joe)

_cli_handle = None


def _menu_entries(kind: str) -> list:
    return [getattr(module, kind) for module in FORMAT_MODULES if hasattr(module, kind)]


def register() -> None:
    global _cli_handle
    for module in FORMAT_MODULES:
        for cls in module.classes:
            bpy.utils.register_class(cls)
    for entry in _menu_entries("menu_import"):
        bpy.types.TOPBAR_MT_file_import.append(entry)
    for entry in _menu_entries("menu_export"):
        bpy.types.TOPBAR_MT_file_export.append(entry)
    _cli_handle = bpy.utils.register_cli_command(cli.COMMAND_ID, cli.main)


def unregister() -> None:
    global _cli_handle
    if _cli_handle is not None:
        bpy.utils.unregister_cli_command(_cli_handle)
        _cli_handle = None
    for entry in _menu_entries("menu_export"):
        bpy.types.TOPBAR_MT_file_export.remove(entry)
    for entry in _menu_entries("menu_import"):
        bpy.types.TOPBAR_MT_file_import.remove(entry)
    for module in reversed(FORMAT_MODULES):
        for cls in reversed(module.classes):
            bpy.utils.unregister_class(cls)
