#!/usr/bin/env bash
# Create the project's virtual environments if missing or out of date (idempotent; one shared pip cache):
#   .venv               Python 3.11 + bpy 5.0.1 (Blender itself) + numpy, pytest, ruff, mypy: the example, the
#                       benchmarks, lint and the codec tests; also the Blender 5.0.1 tests; and distributed
#                       (Dask), for convert --scheduler and its test
#   .venv-bpy/<release> the bpy wheel of every other release in tools/releases.sh (4.2.23 ... 5.2.3) + pytest
#   .venv-typing        Python 3.11 + fake-bpy-module for type checking the bpy layer (never for running it)
# Usage: tools/setup.sh main             only .venv (enough for the example)
#        tools/setup.sh all              everything (the default)
#        tools/setup.sh RELEASE...       .venv, .venv-typing and these releases' environments
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/releases.sh

make_venv() {  # make_venv DIR PYTHON_MINOR PACKAGES...
  local dir=$1 minor=$2
  shift 2
  local stamp="$dir/.installed" python
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$*" ]; then
    return
  fi
  echo "setting up $dir: $*"
  python=$(find_python "$minor")
  [ -x "$dir/bin/python" ] || "$python" -m venv "$dir"
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
  echo "$*" >"$stamp"
}

make_release_venv() {  # the environment of one Blender release
  local release=$1
  if [ "$release" = "$MAIN_RELEASE" ]; then
    make_venv .venv 3.11 "bpy==$MAIN_RELEASE" numpy==1.26.4 pytest==9.2.0 ruff==0.17.6 mypy==2.4.1 \
      distributed==2026.8.0
  else
    make_venv "$(venv_for "$release")" "$(python_minor_for "$release")" "bpy==$release" "$(numpy_for "$release")" \
      pytest==9.2.0
  fi
}

known_release() { local r; for r in "${RELEASES[@]}"; do [ "$r" = "$1" ] && return 0; done; return 1; }

case "${1:-all}" in
  main) make_release_venv "$MAIN_RELEASE" ;;
  all) wanted=("${RELEASES[@]}") ;;
  *) wanted=("$@") ;;
esac
if [ "${1:-all}" != main ]; then
  for release in "${wanted[@]}"; do
    known_release "$release" || { echo "unknown Blender release '$release' (tested: ${RELEASES[*]})" >&2; exit 2; }
  done
  make_release_venv "$MAIN_RELEASE"
  make_venv .venv-typing 3.11 fake-bpy-module-5-0==20260730 numpy==1.26.4 mypy==2.4.1 pytest==9.2.0
  for release in "${wanted[@]}"; do make_release_venv "$release"; done
fi
