#!/usr/bin/env bash
# The whole check, from nothing: set up the environments, lint, type-check, run the codec tests once, then the
# Blender tests on every release in tools/releases.sh (4.2.23 ... 5.2.3), one after another. Prints one line per
# release and one line over all stages; exits 1 if anything failed. This is what CI's .ci/run calls.
#
#   bash tools/test.sh                       everything
#   bash tools/test.sh --blender 5.2.3       only the Blender tests, only on 5.2.3 (repeat --blender for more)
#   bash tools/test.sh -k joe -x             extra arguments go to every pytest run
#
# IOGF_FUZZ_COUNT sets the fuzz-test size; IOGF_SAMPLES the samples folder (default ../shared/samples).
set -uo pipefail
cd "$(dirname "$0")/.."
source tools/releases.sh

only=()
pytest_args=()
while [ $# -gt 0 ]; do
  case $1 in
    --blender) [ $# -ge 2 ] || { echo "--blender needs a release (${RELEASES[*]})" >&2; exit 2; }
      only+=("$2"); shift 2 ;;
    --blender=*) only+=("${1#--blender=}"); shift ;;
    *) pytest_args+=("$1"); shift ;;
  esac
done

bash tools/setup.sh "${only[@]:-all}" || exit 2
results=out/test-results
rm -rf "$results" && mkdir -p "$results"
failed_stages=()
lines=()

stage() {  # stage NAME COMMAND...: run a check that is not a test suite
  echo "== $1"
  "${@:2}" || failed_stages+=("$1")
}

tests() {  # tests NAME PYTHON FOLDER: a pytest run whose counts go into the total
  local name=$1 python=$2 folder=$3 started=$SECONDS line
  echo "== $name"
  "$python" -m pytest "$folder" -p no:cacheprovider --junit-xml="$results/$name.xml" ${pytest_args[@]+"${pytest_args[@]}"}
  local status=$?
  line=$(.venv/bin/python tools/test_summary.py "$results/$name.xml")
  lines+=("$(printf '%-24s %s (%d s)' "$name:" "$line" $((SECONDS - started)))")
  [ $status -eq 0 ] || failed_stages+=("$name")
}

if [ ${#only[@]} -eq 0 ]; then
  stage ruff .venv/bin/ruff check .
  stage "mypy (codecs and compiler, strict)" .venv/bin/mypy
  stage "mypy (Blender layer)" bash tools/typecheck_blender.sh
  tests codec .venv/bin/python tests/unit
fi
for release in "${only[@]:-${RELEASES[@]}}"; do
  tests "blender-$release" "$(venv_for "$release")/bin/python" tests/blender
done

echo
printf '%s\n' "${lines[@]}"
total=$(.venv/bin/python tools/test_summary.py "$results"/*.xml)
if [ ${#failed_stages[@]} -eq 0 ]; then
  echo "all stages: $total"
else
  echo "all stages: $total; failed: $(IFS=,; echo "${failed_stages[*]}" | sed 's/,/, /g')"
  exit 1
fi
