"""Load this repository into the `bpy` module exactly as Blender loads an installed extension.

The source tree is exposed as `bl_ext.<repo>.io_game_formats` through a temporary local repository (a folder
holding a link named after the extension id), so relative-import mistakes fail here as they would for users.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

REPO_ROOT = Path(__file__).resolve().parent.parent
EXTENSION_ID = "io_game_formats"


def isolate_user_config() -> None:
    """Must run before `import bpy`: never read or write the real user's Blender configuration."""
    if "BLENDER_USER_RESOURCES" not in os.environ:
        user_dir = tempfile.mkdtemp(prefix="iogf-user-")
        os.environ["BLENDER_USER_RESOURCES"] = user_dir
        atexit.register(shutil.rmtree, user_dir, ignore_errors=True)


@contextlib.contextmanager
def signals_held() -> Iterator[list[int]]:
    """SIGINT and SIGTERM noted, not acted on, while Blender starts: an interrupt raised inside `import bpy` or an
    add-on's registration leaves a half-started Blender (tracebacks, sometimes a crash, an exit status of 0) and
    its temporary folders behind. The caller acts on the list once the start is over. A SIGINT ignored (a
    background job of a script) stays ignored."""
    caught: list[int] = []
    previous = {}
    for number in (signal.SIGINT, signal.SIGTERM):
        if number == signal.SIGINT and signal.getsignal(number) is not signal.default_int_handler:
            continue
        previous[number] = signal.signal(number, lambda received, _frame: caught.append(received))
    try:
        yield caught
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


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
