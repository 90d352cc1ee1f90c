#!/usr/bin/env bash
# mypy over the extension as the package Blender loads (io_game_formats.*), so its relative imports resolve.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
base=$(mktemp -d)
trap 'rm -rf "$base"' EXIT
ln -s "$repo" "$base/io_game_formats"
cd "$base"
"$repo/.venv-typing/bin/mypy" --config-file "$repo/tools/mypy-blender.ini" --cache-dir "$repo/.mypy_cache" \
  -p io_game_formats.common -p io_game_formats.importers -p io_game_formats.exporters -m io_game_formats.cli \
  -m io_game_formats
