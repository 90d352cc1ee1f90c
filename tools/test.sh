#!/usr/bin/env bash
# The whole check, from nothing: set up the venvs, lint, type-check, then the tests in Blender 5.0.1 and 4.2.23.
# Extra arguments go to every pytest run (e.g. -x, -k joe). IOGF_FUZZ_COUNT sets the fuzz-test size.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh all

echo "== ruff"
.venv/bin/ruff check .
echo "== mypy (codecs and compiler, strict)"
.venv/bin/mypy
echo "== mypy (Blender layer, against fake-bpy-module)"
bash tools/typecheck_blender.sh

echo "== unit tests (no Blender)"
.venv/bin/python -m pytest tests/unit "$@"
echo "== Blender 4.2.23 tests"
.venv-bpy42/bin/python -m pytest tests/blender "$@"
echo "== Blender 5.0.1 tests"
.venv/bin/python -m pytest tests/blender "$@"
