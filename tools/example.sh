#!/usr/bin/env bash
# The main job on a bundled example scene: export it to every implemented format, import the results back,
# write everything under out/ and print a summary. Creates .venv first if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh main
exec .venv/bin/python tools/example.py "$@"
