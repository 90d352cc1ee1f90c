"""Loaded by pytest before collection (pyproject's addopts): the repository root is the extension package (it has
an `__init__.py`), but tests must never import it as a package: under a folder name that is not a Python
identifier (a clone called `io-game-formats`) that import fails, and elsewhere it would run the add-on's
registration code outside Blender. The root is collected as a plain directory instead."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if path == REPO_ROOT:
        return pytest.Dir.from_parent(parent, path=path)
    return None
