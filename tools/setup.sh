#!/usr/bin/env bash
# Create the project's virtual environments if missing (idempotent):
#   .venv         Python 3.11 + bpy 5.0.1 (Blender itself) + numpy, pytest, ruff, mypy
#   .venv-bpy42   Python 3.11 + bpy 4.2.23, the oldest Blender the extension supports
#   .venv-typing  Python 3.11 + fake-bpy-module for type checking the bpy layer (never for running it)
# Usage: tools/setup.sh [main|all]   (main: only .venv, enough for the example)
set -euo pipefail
cd "$(dirname "$0")/.."

find_python() {
  for candidate in python3.11 python3 python; do
    if command -v "$candidate" >/dev/null 2>&1 &&
      "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
      command -v "$candidate"
      return
    fi
  done
  echo "Python 3.11 is required (the bpy wheels 4.2-5.0 are built for it)" >&2
  exit 1
}

make_venv() {  # make_venv DIR PACKAGES...
  local dir=$1
  shift
  local stamp="$dir/.installed"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$*" ]; then
    return
  fi
  echo "setting up $dir: $*"
  [ -x "$dir/bin/python" ] || "$(find_python)" -m venv "$dir"
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
  echo "$*" >"$stamp"
}

make_venv .venv bpy==5.0.1 numpy==1.26.4 pytest==9.2.0 ruff==0.17.6 mypy==2.4.1
if [ "${1:-all}" = "all" ]; then
  make_venv .venv-bpy42 bpy==4.2.23 pytest==9.2.0
  make_venv .venv-typing fake-bpy-module-5-0==20260730 numpy==1.26.4 mypy==2.4.1 pytest==9.2.0
fi
