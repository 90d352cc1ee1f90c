# The Blender releases the extension is tested on, and where each one's Python lives. Sourced by setup.sh and
# test.sh. One line per minor release that PyPI has a `bpy` wheel for, newest patch of each.
# shellcheck shell=bash

RELEASES=(4.2.23 4.3.0 4.4.0 4.5.15 5.0.1 5.1.2 5.2.3)
MAIN_RELEASE=5.0.1  # .venv: the example, the benchmarks, lint and the codec tests

# The Python a release's wheel is built for, and the numpy it is tested with (Blender's own bundled major).
python_minor_for() { case $1 in 4.* | 5.0.*) echo 3.11 ;; *) echo 3.13 ;; esac; }
numpy_for() { case $(python_minor_for "$1") in 3.11) echo numpy==1.26.4 ;; *) echo numpy==2.3.5 ;; esac; }

# The virtual environment of a release: .venv for the main one, .venv-bpy/<release> for the others.
venv_for() { if [ "$1" = "$MAIN_RELEASE" ]; then echo .venv; else echo ".venv-bpy/$1"; fi; }

# A Python interpreter of the given minor version that really runs: on PATH, or in pyenv's versions folder (a pyenv
# shim on PATH may answer "command not found" when that version is not selected).
find_python() {
  local minor=$1 candidate
  local candidates=("python$minor")
  [ "$minor" = 3.11 ] && candidates+=(python3 python)
  local pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
  command -v pyenv >/dev/null 2>&1 && pyenv_root=$(pyenv root 2>/dev/null || echo "$pyenv_root")
  candidates+=("$pyenv_root"/versions/"$minor".*/bin/"python$minor" /usr/bin/"python$minor" /usr/local/bin/"python$minor")
  for candidate in "${candidates[@]}"; do
    if "$candidate" -c "import sys; sys.exit(sys.version_info[:2] != (${minor/./, }))" >/dev/null 2>&1; then
      command -v "$candidate" || echo "$candidate"
      return
    fi
  done
  echo "Python $minor is required for the bpy wheels of Blender $(releases_on "$minor") and was not found" \
    "(tried python$minor on PATH and $pyenv_root/versions/$minor.*/bin/python$minor); install it, e.g." \
    "'pyenv install $minor'" >&2
  return 1
}

releases_on() { local r out=(); for r in "${RELEASES[@]}"; do [ "$(python_minor_for "$r")" = "$1" ] && out+=("$r"); done; echo "${out[*]}"; }
