"""io_game_formats: IQE/IQM, SMD/VTA, JOE/JPK import and export and the QMAP compiler, as a Blender extension.

Loaded by Blender as bl_ext.<repo>.io_game_formats, so every import inside the package is relative.
Each format module lists its `classes` and may define `menu_import` / `menu_export` for the File menus, and
`after_register` / `before_unregister` for properties attached to Blender types.
"""

from __future__ import annotations

import bpy

from . import cli
from .common import preferences
from .exporters import iqe as export_iqe
from .exporters import iqm as export_iqm
from .exporters import joe as export_joe
from .exporters import qmap as export_qmap
from .exporters import smd as export_smd
from .exporters import vdrift_car as export_vdrift_car
from .importers import iqe as import_iqe
from .importers import iqm as import_iqm
from .importers import joe as import_joe
from .importers import qmap as import_qmap
from .importers import smd as import_smd
from .importers import vdrift_car as import_vdrift_car
from .ui import qmap_panel

FORMAT_MODULES = (preferences, import_joe, export_joe, import_iqe, export_iqe, import_iqm, export_iqm, import_smd,
                  export_smd, qmap_panel, import_qmap, export_qmap, import_vdrift_car, export_vdrift_car)  # fmt: skip

_cli_handle = None


def _menu_entries(kind: str) -> list:
    return [getattr(module, kind) for module in FORMAT_MODULES if hasattr(module, kind)]


def register() -> None:
    global _cli_handle
    for module in FORMAT_MODULES:
        for cls in module.classes:
            bpy.utils.register_class(cls)
        if hasattr(module, "after_register"):
            module.after_register()
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
        if hasattr(module, "before_unregister"):
            module.before_unregister()
        for cls in reversed(module.classes):
            bpy.utils.unregister_class(cls)
