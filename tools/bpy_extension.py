"""Load this repository into the `bpy` module exactly as Blender loads an installed extension.

The source tree is exposed as `bl_ext.<repo>.io_game_formats` through a temporary local repository (a folder
holding a link named after the extension id), so relative-import mistakes fail here as they would for users.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType

REPO_ROOT = Path(__file__).resolve().parent.parent
EXTENSION_ID = "io_game_formats"


def isolate_user_config() -> None:
    """Must run before `import bpy`: never read or write the real user's Blender configuration."""
    os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="iogf-user-"))


def enable_extension(repo_module: str = "dev") -> ModuleType:
    isolate_user_config()
    import importlib

    import bpy

    addon_utils = importlib.import_module("addon_utils")  # importable only once bpy has set up sys.path

    module_name = f"bl_ext.{repo_module}.{EXTENSION_ID}"
    if module_name in sys.modules and addon_utils.check(module_name)[1]:
        return sys.modules[module_name]
    repo_dir = Path(tempfile.mkdtemp(prefix="iogf-repo-"))
    (repo_dir / EXTENSION_ID).symlink_to(REPO_ROOT, target_is_directory=True)
    bpy.context.preferences.extensions.repos.new(
        name="Dev", module=repo_module, custom_directory=str(repo_dir), source="USER"
    )

    def fail(error: BaseException) -> None:
        raise error

    addon_utils.enable(module_name, default_set=True, handle_error=fail)
    return sys.modules[module_name]
