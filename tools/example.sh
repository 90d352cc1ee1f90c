#!/usr/bin/env bash
# The example script: export a bundled scene to every implemented format, import the results back,
# write everything under out/ and print a summary. Creates .venv first if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh main
exec .venv/bin/python tools/example.py "$@"
