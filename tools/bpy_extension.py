"""Load this repository into the `bpy` module exactly as Blender loads an installed extension.

The source tree is exposed as `bl_ext.<repo>.io_game_formats` through a temporary local repository (a folder
holding a link named after the extension id), so relative-import mistakes fail here as they would for users.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType

try:  # (re-exported; tools/iogf.py takes it before this module, to hold a stop from its first lines)
    from held_signals import signals_held as signals_held  # (the commands: tools/ on sys.path)
except ModuleNotFoundError:
    from tools.held_signals import signals_held as signals_held  # (the tests import tools.bpy_extension)

REPO_ROOT = Path(__file__).resolve().parent.parent
EXTENSION_ID = "io_game_formats"


def isolate_user_config() -> None:
    """Must run before `import bpy`: never read or write the real user's Blender configuration."""
    if "BLENDER_USER_RESOURCES" not in os.environ:
        user_dir = tempfile.mkdtemp(prefix="iogf-user-")
        os.environ["BLENDER_USER_RESOURCES"] = user_dir
        atexit.register(shutil.rmtree, user_dir, ignore_errors=True)


def _remove_repo_folder(link: Path) -> None:
    """Unlink the link first: the folder is removed without ever walking into the source tree."""
    try:
        link.unlink()
        link.parent.rmdir()
    except OSError:
        pass


def enable_extension(repo_module: str = "dev") -> ModuleType:
    isolate_user_config()
    import importlib

    import bpy

    addon_utils = importlib.import_module("addon_utils")  # importable only once bpy has set up sys.path

    module_name = f"bl_ext.{repo_module}.{EXTENSION_ID}"
    if module_name in sys.modules and addon_utils.check(module_name)[1]:
        return sys.modules[module_name]
    repo_dir = Path(tempfile.mkdtemp(prefix="iogf-repo-"))
    link = repo_dir / EXTENSION_ID
    link.symlink_to(REPO_ROOT, target_is_directory=True)
    atexit.register(_remove_repo_folder, link)
    bpy.context.preferences.extensions.repos.new(
        name="Dev", module=repo_module, custom_directory=str(repo_dir), source="USER"
    )

    def fail(error: BaseException) -> None:
        raise error

    addon_utils.enable(module_name, default_set=True, handle_error=fail)
    return sys.modules[module_name]
