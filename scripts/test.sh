#!/usr/bin/env bash
# Runs the whole test suite: ruff's lint of the Python, clang-format's check of the C++, C++ (GoogleTest, examples), bounded fuzz runs of expression
# strings, b2nd files, saved expressions, Zarr stores, .b2z zips and HDF5 files (atheris),
# Python (pytest + hypothesis), the documentation site (scripts/docs.sh), the Array API
# standard's test suite (scripts/test_array_api.sh),
# then the C++ engine again under AddressSanitizer + UndefinedBehaviorSanitizer
# (scripts/test_sanitizers.sh) and ThreadSanitizer (scripts/test_tsan.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
# Python lint and format first (seconds): pyproject.toml's [tool.ruff].
$PY -m ruff check --quiet .
$PY -m ruff format --check --quiet .
# C++ style (.clang-format, Debian 12's clang-format-14): checked, never rewritten here;
# `bash scripts/format.sh` rewrites both languages.
find cli examples include python/src src tests \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) -print0 |
  xargs -0 clang-format-14 --dry-run --Werror
# The C++ tests are built beside the installed module (scripts/install.sh asks its build for
# them too), so the engine is compiled once in Release, not twice; elsewhere in build/cpp.
BUILD=${B2LAZY_BUILD_DIR:-}
if [ -z "$BUILD" ]; then
  for d in build/cp3*; do
    if [ -x "$d/b2lazy_tests" ]; then BUILD=$d; fi
  done
  BUILD=${BUILD:-build/cpp}
fi
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DB2LAZY_WERROR=ON -DPython_EXECUTABLE="$(command -v $PY)" >/dev/null
cmake --build "$BUILD" -j 2
(cd "$BUILD" && ctest --output-on-failure)
# Bounded fuzz runs (atheris) of the expression parser (60 s) and of b2nd files opened
# through b2lazy.open (45 s); the commands and their flags are in tests/fuzz/. Each log is
# kept, and shown on failure.
fuzz() {  # fuzz NAME SECONDS
  echo "fuzzing for $2 s: $PY tests/fuzz/$1.py -max_total_time=$2"
  if ! $PY "tests/fuzz/$1.py" -max_total_time="$2" > "$BUILD/$1.log" 2>&1; then
    tail -n 80 "$BUILD/$1.log"
    echo "the fuzzer $1 failed (log: $BUILD/$1.log)"
    exit 1
  fi
  grep -E "^Done [0-9]+ runs" "$BUILD/$1.log" || true
}
fuzz fuzz_expressions 60
fuzz fuzz_b2nd_files 45
fuzz fuzz_saved_expressions 40  # saved expression files (structure-aware and raw)
fuzz fuzz_zarr_stores 45        # Zarr v2/v3 stores: metadata JSON and chunk bytes
fuzz fuzz_b2z_files 30          # .b2z zips, listed against python-blosc2
fuzz fuzz_hdf5_files 40         # HDF5 files (patched seeds), values checked against h5py
$PY -m pytest tests/python -q -p no:cacheprovider
# The documentation site, warnings as errors: its pages' code and the gallery run, and every
# public name must have a reference page (scripts/docs.sh).
PYTHON=$PY bash scripts/docs.sh
# The Array API standard's own test suite, when ../shared/outside/array-api-tests is there.
PYTHON=$PY bash scripts/test_array_api.sh 20
bash scripts/test_sanitizers.sh
bash scripts/test_tsan.sh  # ThreadSanitizer: the GoogleTest suite and the command at 2-4 threads
